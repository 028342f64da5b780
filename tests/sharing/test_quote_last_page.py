"""A quote's last page is never the signatures alone: rendered with WeasyPrint, the demo quote
and the same quote with as many more terms as push the signatures onto a new page keep the
last two terms on the signatures' page."""

import dataclasses
import re

from planner.pdf.render import render_pdf
from planner.sharing import services
from planner.sharing.models import PlanRevision
from tests.sharing.conftest import pdf_text

TERM = "Condition {i}: deliveries are inspected on arrival and damage is reported within five days."


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _render(doc, extra: int) -> list[str]:
    terms = doc.terms + tuple(TERM.format(i=i) for i in range(extra))
    content = render_pdf(services.DOCUMENT_TEMPLATES["quote"],
                         {"doc": dataclasses.replace(doc, terms=terms)}).content  # fmt: skip
    return [_flat(page) for page in pdf_text(content)[2]]


def assert_signed_with_terms(pages: list[str], terms: tuple[str, ...]) -> None:
    last = pages[-1]
    assert "Accepted for" in last and "For Demo Co" in last, last
    for term in terms[-2:]:
        assert _flat(term)[:60] in last, (term, last)
    for page in pages[:-1]:
        assert "Accepted for" not in page


def test_the_signatures_keep_the_last_terms_on_their_page(plan):
    revision = PlanRevision.objects.get(plan=plan, number=1)
    doc = services.document_context(revision=revision, kind="quote")
    assert len(doc.terms) >= 2
    base = _render(doc, 0)
    assert_signed_with_terms(base, doc.terms)

    # The fewest extra terms that need one more page: the page break falls just before the
    # signatures there, which is where they used to end up alone.
    low, high = 0, 64
    assert len(_render(doc, high)) > len(base)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if len(_render(doc, middle)) > len(base) else (middle, high)
    for extra in (high, high + 1):
        terms = doc.terms + tuple(TERM.format(i=i) for i in range(extra))
        assert_signed_with_terms(_render(doc, extra), terms)
