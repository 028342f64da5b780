"""catalog/data is the shared reference data plus the catalog's documented additions.

The shared copy (``../shared/data`` beside the project, as on CI) is the source: a cell that
differs from it means the catalog was not refreshed (tools/refresh_catalog_data.py).
"""

import csv
import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
CATALOG = ROOT / "catalog" / "data"

pytestmark = pytest.mark.skipif(
    not SHARED.is_dir() and not os.environ.get("REQUIRE_SERVICES"),
    reason=f"no shared reference data at {SHARED}",
)


def _tool():
    spec = importlib.util.spec_from_file_location(
        "refresh_catalog_data", ROOT / "tools" / "refresh_catalog_data.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("name", list(_tool().KEYS))
def test_every_shared_cell_is_in_the_catalog(name):
    tool = _tool()
    shared, ours = _rows(SHARED / name), _rows(CATALOG / name)
    assert len(shared) == len(ours), f"{name}: row count differs from the shared copy"
    key = tool.KEYS[name]
    by_key = {row[key]: row for row in ours} if key else None
    for i, row in enumerate(shared):
        our = by_key[row[key]] if key else ours[i]
        for column, value in row.items():
            if (name, column) in tool.KEEP_WHEN_SHARED_EMPTY and not value:
                continue
            if column == "notes" and name == "models.csv":
                assert our[column].startswith(value.rstrip()), (name, row.get(key), column)
                continue
            assert our[column] == value, (name, row.get(key) if key else i, column)


def test_no_stored_copy_ids_are_left_in_sources():
    """The shared data cites documents only; the catalog must not keep stored-copy ids."""
    for path in CATALOG.glob("*.csv"):
        assert "read_file id" not in path.read_text(encoding="utf-8"), path.name


def test_readme_is_the_shared_one_with_the_additions():
    readme = (CATALOG / "README.md").read_text(encoding="utf-8")
    assert readme.startswith((SHARED / "README.md").read_text(encoding="utf-8").rstrip("\n"))
    assert "Precision of Blackwell MLPerf rows" in readme
    assert "What this catalog copy adds" in readme
