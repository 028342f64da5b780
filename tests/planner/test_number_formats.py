"""Numbers read as people write them (issue 25): grouped thousands, decimals by magnitude,
"1 server" but "3 servers", and a space before every unit ("90 d"). The filter is checked on
its own, and the demo's sizing, BOM and timeline pages are walked for raw figures."""

import html as html_lib
import math
import re

import pytest
from django.template import Context, Template
from django.urls import reverse

from planner.engine.shown import measure, quantity
from planner.labels import count, count_range

# Figures as code prints them and people do not write them, each with an example.
RAW_FIGURES = {
    "float noise (31.1111)": re.compile(r"(?<![\d.,])[1-9]\d*\.\d{3,}(?![\d])"),
    "ungrouped thousands (1200, 298000.00)": re.compile(
        r"(?<![\d.,/:#-])(?!(?:19|20)\d\d(?![\d.,]))\d{4,}(?:\.\d+)?(?![\d-])"
    ),
    "unit without a space (0d)": re.compile(r"(?<![\w.,])\d+(?:\.\d+)?(?:d|h|ms|kW)\b"),
    "one, plural (1 servers)": re.compile(r"(?<![\d.,])1 [a-z]+(?<!s)s\b(?! per| a | each)"),
    "a count with decimals (1.0 servers)": re.compile(r"(?<![\d.,])\d[\d,]*\.0+ [a-z]{3,}"),
}


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (1200, "", "1,200"),  # grouped
        (298000, "", "298,000"),
        (350, "token", "350 tokens"),
        (31.1111, "requests/s", "31.1 requests/s"),  # three significant figures
        (40.4444, "req/s", "40.4 req/s"),
        (0.5058, "req/s", "0.51 req/s"),  # two below 1
        (0.004213, "", "0.0042"),
        (1234.56, "", "1,235"),  # none from 100 up
        (12.0, "ms", "12 ms"),  # no ".0" on a whole number
        (2.5, "", "2.5"),  # no trailing zero
        (0, "d", "0 d"),  # a space before every unit
        (90, "d", "90 d"),
        (1, "server", "1 server"),  # nouns: singular for one
        (2, "server", "2 servers"),
        (61.8, "request", "61 requests"),  # whole things: a fraction is not one held
        (61.8, "#", "61"),
        (1, "batch", "1 batch"),
        (3, "batch", "3 batches"),
        (None, "d", "—"),
        ("", "", "—"),
        ("n/a", "", "—"),
    ],
)
def test_quantity_writes_a_number_as_people_do(value, unit, shown):
    assert quantity(value, unit) == shown


def test_the_template_filter_and_the_counts_follow_the_same_rules():
    template = Template(
        '{% load planner_numbers %}{{ x|quantity:"req/s" }}; {{ n|quantity:"server" }}'
    )
    assert template.render(Context({"x": 31.1111, "n": 1})) == "31.1 req/s; 1 server"
    assert count(1200, "line") == "1,200 lines"
    assert count_range(1, 1, "replica") == "1 replica"
    assert count_range(3, 5, "batch") == "3–5 batches"


@pytest.mark.parametrize(
    ("value", "unit", "status", "shown"),
    [
        (1.0, "servers", "pass", "1 server"),  # engine units are plural nouns: counted
        (2.0, "racks", "pass", "2 racks"),
        (28.0, "days of slack", "pass", "28 days of slack"),  # the phrase after the count
        (1.0, "days late", "fail", "1 day late"),
        (15.05, "kW", "pass", "15.1 kW"),  # symbols: quantity's decimals
        (102701.4, "BTU/h", "pass", "102,701 BTU/h"),
        (math.inf, "days of slack", "pass", "no limit"),  # words, no unit
        (math.inf, "days of slack", "fail", "never"),
        (None, "kW", "", "—"),
    ],
)
def test_a_checked_figure_carries_its_unit(value, unit, status, shown):
    assert measure(value, unit, status) == shown


def test_check_rows_stored_before_read_with_units():
    """A snapshot stored before the rows carried their shown figures ("1.0", "servers",
    limit "2.0") reads as a new one: the same rule, once, in the filter."""
    template = Template(
        '{% load planner_numbers %}{{ c|check_figure }} / {{ c|check_figure:"limit" }}'
    )
    old = {"value": "1.0", "limit": "2.0", "unit": "servers", "status": "pass"}
    assert template.render(Context({"c": old})) == "1 server / 2 servers"
    old = {"value": "no limit", "limit": "28.0", "unit": "", "status": "pass"}
    assert template.render(Context({"c": old})) == "no limit / 28"  # the unit was dropped
    old = {"value": "1,234", "limit": "—", "unit": "BTU/h", "status": "pass"}
    assert template.render(Context({"c": old})) == "1,234 BTU/h / —"
    new = {**old, "value_shown": "1 server", "limit_shown": "2 servers"}
    assert template.render(Context({"c": new})) == "1 server / 2 servers"


def test_the_walk_finds_each_kind_of_raw_figure():
    text = (
        "31.1111 requests/s; offer at 298000.00 EUR; 1200 → 350 tokens; lead time 0d; "
        "cheapest: 1 servers; 2.0 racks"
    )
    found = raw_figures(text, [])
    assert [f.split(":")[0] for f in found] == [
        "float noise (31.1111)", "ungrouped thousands (1200, 298000.00)",
        "ungrouped thousands (1200, 298000.00)", "unit without a space (0d)",
        "one, plural (1 servers)", "a count with decimals (1.0 servers)",
    ]  # fmt: skip
    clean = "31.1 requests/s; 298,000.00 EUR; 1,200 → 350 tokens; 0 d; 1 server; 2026-06-01; 1 s"
    assert raw_figures(clean, []) == []


def visible_text(page_html: str) -> str:
    """The page's text as a reader sees it: no scripts (chart JSON), styles or tags."""
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", page_html, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    return re.sub(r"\s+", " ", html_lib.unescape(text))


def catalog_names() -> list[str]:
    """Product names carry numbers that are names, not figures ("RTX PRO 6000", "96GB")."""
    from catalog.models import Accelerator, Part, ServerPlatform

    names = [*Accelerator.objects.values_list("name", flat=True)]
    names += [*ServerPlatform.objects.values_list("name", flat=True)]
    names += [*Part.objects.values_list("name", flat=True)]
    return sorted(set(names), key=len, reverse=True)


def raw_figures(text: str, names: list[str]) -> list[str]:
    for name in names:
        text = text.replace(name, "«product»")
    found = []
    for name, pattern in RAW_FIGURES.items():
        for m in pattern.finditer(text):
            found.append(f"{name}: …{text[max(m.start() - 40, 0) : m.end() + 20]}…")
    return found


@pytest.mark.django_db
def test_the_demo_pages_show_no_raw_figures(client, demo):
    plan, user, _ = demo
    client.force_login(user)
    urls = [reverse("workload_sizing", args=[plan.pk, w.pk]) for w in plan.workloads.all()]
    urls += [reverse("sourcing:bom", args=[plan.pk]), reverse("sourcing:timeline", args=[plan.pk])]
    found, names = {}, catalog_names()
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        if problems := raw_figures(visible_text(response.content.decode()), names):
            found[url] = problems
    assert found == {}, "\n".join(f"{u}:\n  " + "\n  ".join(p) for u, p in found.items())
