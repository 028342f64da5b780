"""Every amount a client sees is in the plan's currency: the demo plan (EUR) shows no USD on
its share page, quote, checklist and report (the executive summary is the report's first
section), except where the exchange rate is cited ("1 USD = 0.92 EUR") or a USD list price is
named as a source."""

import html
import re

from django.urls import reverse

from planner.pdf.render import render_html
from planner.sharing import services
from planner.sharing.models import DocumentKind, PlanRevision

# Allowed: the dated rate the amounts were converted at, and a source citing a USD list price.
CITED = (
    re.compile(r"1 USD = [\d.,]+ [A-Z]{3}"),
    re.compile(r"USD list price", re.IGNORECASE),
)


def _usd_left(text: str) -> list[str]:
    plain = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", text)))
    for pattern in CITED:
        plain = pattern.sub("", plain)
    return [plain[max(0, m.start() - 80) : m.end() + 40] for m in re.finditer(r"USD|US\$", plain)]


def _revision(plan, consultant) -> PlanRevision:
    try:
        return services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    except services.NothingToPublish:
        return PlanRevision.objects.filter(plan=plan).order_by("-number").first()


def test_demo_client_documents_show_no_usd(client, plan, consultant):
    assert plan.currency == "EUR"
    revision = _revision(plan, consultant)
    link = services.share_link_create(
        plan=plan, user=consultant, revision=revision, expires_at=None, note=""
    )
    rendered = {"share page": client.get(reverse("sharing:public", args=[link.token]))}
    rendered["share page"] = rendered["share page"].content.decode()
    for kind in (DocumentKind.QUOTE, DocumentKind.CHECKLIST, DocumentKind.REPORT):
        context = services.document_context(revision=revision, kind=kind)
        rendered[kind] = render_html(services.DOCUMENT_TEMPLATES[kind], {"doc": context})
    assert "Executive summary" in rendered[DocumentKind.REPORT]
    left = {name: _usd_left(text) for name, text in rendered.items()}
    assert not any(left.values()), left


def test_the_check_finds_a_usd_amount():
    assert _usd_left("<td>1,234 USD</td>") and not _usd_left("at 1 USD = 0.92 EUR (2026)")
