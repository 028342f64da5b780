"""An import inside a function hides a dependency from the module's head and from the import
contracts; one of the project's own modules is imported there only where a comment says why (an
import cycle, a crossing of floors that a planned move removes). The comment sits on the
import's line or above its block of imports."""

import ast
from pathlib import Path

from django.conf import settings

PROJECT_PACKAGES = ("planner", "catalog", "sourcing")
SKIPPED_PARTS = {"migrations", "management"}


def _local_imports_without_a_reason() -> list[str]:
    root = Path(settings.BASE_DIR)
    found = []
    for package in PROJECT_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if SKIPPED_PARTS & set(path.parts):
                continue
            source = path.read_text()
            lines = source.splitlines()
            for function in ast.walk(ast.parse(source)):
                if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(function):
                    if not isinstance(node, ast.Import | ast.ImportFrom):
                        continue
                    module = (
                        node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                    ) or ""
                    if module.split(".")[0] not in PROJECT_PACKAGES:
                        continue
                    line = node.lineno - 1
                    while line > 0 and lines[line - 1].strip().startswith(("from ", "import ")):
                        line -= 1  # the first import of the block
                    reason = "#" in lines[node.lineno - 1] or (
                        line > 0 and lines[line - 1].strip().startswith("#")
                    )
                    if not reason:
                        where = path.relative_to(root)
                        found.append(f"{where}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return found


def test_every_local_import_of_the_project_says_why():
    assert _local_imports_without_a_reason() == []
