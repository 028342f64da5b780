"""Services take typed keyword arguments (values, model instances, engine dataclasses), never a
form: a view or an API handler checks its input with its form and passes the cleaned values on,
so the same service serves the page, the API, the importer and a test without building a form
(HackSoft's Django styleguide, "Services")."""

import ast
from pathlib import Path

from django.conf import settings

SERVICE_MODULES = ("services.py", "sizing.py")


def _services_taking_a_form() -> list[str]:
    root = Path(settings.BASE_DIR)
    found = []
    for package in ("planner", "catalog", "sourcing"):
        for path in sorted((root / package).rglob("*.py")):
            if path.name not in SERVICE_MODULES and "services" not in path.parent.name:
                continue
            for node in ast.parse(path.read_text()).body:
                if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                    continue
                arguments = node.args.args + node.args.kwonlyargs
                for argument in arguments:
                    annotation = ast.unparse(argument.annotation) if argument.annotation else ""
                    if (
                        argument.arg == "form"
                        or argument.arg.endswith("_form")
                        or (annotation.endswith("Form"))
                    ):
                        where = path.relative_to(root)
                        found.append(f"{where}:{node.lineno}: {node.name}({argument.arg})")
    return found


def test_no_service_takes_a_form():
    assert _services_taking_a_form() == []
