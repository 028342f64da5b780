"""The engine boundary: domain arithmetic lives in planner/engine, nowhere else.

Rule (grep-able): outside ``planner/engine/`` no module imports ``math`` or ``numpy`` (nor
``from math``/``from numpy``), except the formatting and charting modules allow-listed below,
each with its reason. Services fetch rows into engine inputs, call the engine and store the
result; they round and format numbers for display but compute no domain quantity.
To add to the list, state why the module only formats.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMERIC_MODULES = {"math", "numpy"}

ALLOWED = {
    "planner/pdf/svg.py": "SVG chart renderer: axis tick steps and label spacing, no domain maths.",
    "benchmarks/bench_tco_e2e.py": "Benchmark harness: rounds measured wall-clock seconds.",
}


def _numeric_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names} & NUMERIC_MODULES
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module.split(".")[0]} & NUMERIC_MODULES
    return found


def _application_modules() -> list[Path]:
    modules = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        parts = set(relative.parts[:-1])
        if relative.parts[0] == "tests" or parts & {"migrations", ".venv", "node_modules"}:
            continue
        if relative.parts[:2] == ("planner", "engine"):
            continue
        modules.append(path)
    return modules


def test_no_module_outside_the_engine_imports_math_or_numpy():
    offenders = {
        str(path.relative_to(ROOT)): sorted(found)
        for path in _application_modules()
        if (found := _numeric_imports(path)) and str(path.relative_to(ROOT)) not in ALLOWED
    }
    assert not offenders, (
        f"Domain arithmetic belongs in planner/engine (or allow-list a formatting module "
        f"with its reason): {offenders}"
    )


def test_the_allow_list_names_existing_modules_that_still_need_it():
    for name, reason in ALLOWED.items():
        assert reason.strip(), name
        path = ROOT / name
        assert path.exists(), f"{name} is allow-listed but does not exist"
        assert _numeric_imports(path), f"{name} no longer imports math/numpy: drop it"


def test_the_rule_sees_every_import_form(tmp_path):
    module = tmp_path / "m.py"
    for source in (
        "import math",
        "import numpy as np",
        "from math import ceil",
        "from numpy.linalg import norm",
    ):
        module.write_text(source + "\n")
        assert _numeric_imports(module), source
    module.write_text("import mathx\nfrom . import math\nimport json\n")
    assert not _numeric_imports(module)


def test_the_engine_and_the_services_are_both_scanned():
    scanned = {str(p.relative_to(ROOT)) for p in _application_modules()}
    assert "planner/sizing.py" in scanned and "sourcing/services.py" in scanned
    assert not any(name.startswith("planner/engine/") for name in scanned)
