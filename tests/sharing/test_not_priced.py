"""An unpriced line (no offer, no tariff rule) is "not priced" on every page and PDF, and a
total that leaves lines out says "incomplete: N lines not priced" — never 0.00."""

import re

import pytest
from django.template.loader import render_to_string

from planner.sharing import services
from tests.sharing.conftest import pdf_text

HEAD = {"revision_number": 2, "published_at": None, "published_by": "Dana Demo"}


@pytest.fixture
def unpriced_revision(plan, consultant):
    """The demo with no offer for its racks, storage drives and fibre (none left valid)."""
    from datetime import date

    from sourcing.models import BomLine, Offer

    parts = BomLine.objects.filter(plan=plan, category__in=["rack", "storage", "cable"])
    Offer.objects.filter(part__in=parts.values("part")).update(
        quoted_on=date(2020, 1, 1), valid_until=date(2020, 1, 31)
    )
    # The landed cost is then incomplete (and the TCO, which reads the offers, stale): the
    # consultant publishes with these open items, as the review page allows.
    return services.revision_publish(
        plan=plan, user=consultant, note="offers expired", with_open_items=True
    )


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_snapshot_counts_the_unpriced_lines(unpriced_revision):
    bom = unpriced_revision.snapshot["bom"]
    unpriced = [line for line in bom["lines"] if not line["priced"]]
    # racks, storage, fibre and the spare drive and spare fibre, at each of the demo's two
    # sites (each site has its own lines): 5 × 2.
    assert {line["category"] for line in unpriced} == {"rack", "storage", "cable", "spares"}
    assert {line["site"] for line in unpriced} == {s["site"] for s in bom["sites"] if s["servers"]}
    assert bom["unpriced_lines"] == len(unpriced) == 10 and not bom["complete"]


def test_the_plan_report_pdf_says_not_priced_never_zero(unpriced_revision):
    doc = services.document_context(revision=unpriced_revision, kind="report")
    by_category = {name: (amount, n) for name, _, amount, n in doc.bom_by_category}
    assert by_category["rack"] == (None, 2) and by_category["storage"] == (None, 2)

    text = _flat(pdf_text(services.document_render(revision=unpriced_revision, kind="report"))[0])

    assert re.search(r"rack \d+ not priced", text) and re.search(r"storage \d+ not priced", text)
    assert re.search(r"cable \d+ not priced", text)
    assert "incomplete: 10 lines not priced" in text
    assert not re.search(r"\b0\.00 EUR", text)


def test_the_quote_pdf_marks_each_unpriced_line_and_its_total(unpriced_revision):
    text = _flat(pdf_text(services.document_render(revision=unpriced_revision, kind="quote"))[0])

    for item in ("Rack", "Storage drive", "Fibre cable"):
        assert re.search(item + r"\b.{0,160}?not priced", text), item
    assert "Hardware, delivered (priced lines only)" in text
    assert "incomplete: 10 lines not priced" in text
    sheet = _flat(
        pdf_text(services.document_render(revision=unpriced_revision, kind="cost_sheet"))[0]
    )
    assert "Converted to EUR (priced lines only)" in sheet
    assert "incomplete: 10 lines not priced" in sheet


def test_the_share_page_body_says_incomplete(unpriced_revision):
    from planner.sharing.body import BODY_TEMPLATE, revision_view_context

    html = _flat(render_to_string(BODY_TEMPLATE, revision_view_context(unpriced_revision)))

    assert "incomplete: 10 lines not priced" in html
    assert html.count("not priced") >= 10
    assert not re.search(r"\b0\.00 EUR", html)


def test_the_landed_cost_page_headline_is_incomplete_not_a_sum(signed_in, plan, unpriced_revision):
    from django.urls import reverse

    page = _flat(signed_in.get(reverse("sourcing:landed_cost", args=[plan.pk])).content.decode())

    assert 'data-testid="landed-incomplete">incomplete: 10 lines not priced' in page
    assert "priced lines only:" in page
