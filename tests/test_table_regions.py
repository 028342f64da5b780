"""Every table of a page scrolls sideways inside its own named, keyboard-reachable box.

The browser walk (tests/browser/test_every_page_fits.py) measures the demo plan's pages; this
checks the templates of every page, the ones the demo does not reach included: each
``<table`` follows a ``<div class="table-wrap" tabindex="0" role="region" aria-label="…">``
(PDF templates excepted: paper does not scroll).
"""

import re
from pathlib import Path

from django.conf import settings

TEMPLATES = Path(settings.BASE_DIR) / "templates"
REGION = re.compile(r'<div class="table-wrap" tabindex="0" role="region" aria-label="[^"]+">\s*$')


def unboxed_tables(text: str) -> list[int]:
    """Line numbers of the tables in ``text`` not directly inside a table region."""
    lines = []
    for match in re.finditer(r"<table\b", text):
        before = re.sub(r"\{#.*?#\}", "", text[: match.start()], flags=re.S)
        if not REGION.search(before):
            lines.append(text.count("\n", 0, match.start()) + 1)
    return lines


def test_every_table_of_a_page_is_in_a_named_scrolling_region():
    found = {
        str(path.relative_to(TEMPLATES)): lines
        for path in sorted(TEMPLATES.rglob("*.html"))
        if "pdf" not in path.relative_to(TEMPLATES).parts
        and (lines := unboxed_tables(path.read_text()))
    }
    assert found == {}, f"tables outside a .table-wrap region (file: lines): {found}"


def test_the_rule_sees_a_bare_table_and_a_wrapped_one():
    wrapped = '<div class="table-wrap" tabindex="0" role="region" aria-label="Sites">\n<table>'
    assert unboxed_tables(wrapped) == []
    assert unboxed_tables('<div class="table-wrap">\n<table>') == [2]  # no keyboard stop
    assert unboxed_tables("<h2>Sites</h2>\n<table>") == [2]
