"""A plan's pages show money in the plan's currency: one walk over every consultant page of the
demo plan (EUR), signed in as its consultant, and over its client surfaces (the share page of a
published revision, the quote, checklist and report as their PDFs are rendered), fails on "USD"
or "$" in the visible text unless an allowed pattern with its reason explains it: a dated
exchange rate, a price really quoted or listed in USD and labelled so, or a public source's
figure as it publishes it. The same walk runs over the demo turned into a JPY plan (rates to JPY
on file, its TCO run again and republished), which also fails on cents of a yen."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse

from planner import freshness
from planner.measured.models import LoadTestSweep
from planner.models import Plan
from planner.pdf.render import render_html
from planner.sharing import services as sharing
from planner.sharing.models import DocumentKind, PlanRevision
from planner.sizing import chosen_key
from sourcing.demo import _order_date
from sourcing.models import FxRate
from sourcing.selectors import missing_fx_rates
from tests.planner.test_internal_words import _consultant_pages
from tests.sharing.test_plain_words import visible_text

pytestmark = pytest.mark.django_db

AMOUNT = r"[\d,]+(?:\.\d+)?"
ALLOWED: dict[str, str] = {
    # The rate every converted figure was converted at, dated, so it can be checked.
    rf"1 USD = {AMOUNT} [A-Z]{{3}}|1 [A-Z]{{3}} = {AMOUNT} USD": "a dated exchange rate",
    r"the TCO computes in USD": "the TCO page says what it computes in before converting",
    # A cloud provider publishes its price list in USD; the TCO states the price it read.
    rf"{AMOUNT} USD/instance-hour|{AMOUNT} USD per accelerator-hour": "a cloud list price",
    rf"catalog list price {AMOUNT} USD": "a platform's dated catalog list price, in USD",
    # A supplier that quotes in USD: its offer, the order and the landed cost's source amount.
    rf"{AMOUNT} USD(?= · \d+ d| a unit)": "a supplier's offer in the currency it quoted",
    rf"at {AMOUNT} USD\b": "a supplier's offer (the BOM's offer list) in its currency",
    rf"{AMOUNT} USD(?= at 1 USD =)": "a USD offer's amount beside its conversion",
    # The public sources of the site's defaults, as they publish them, after the EUR default.
    r"from [\d.]+ USD/kWh: US industrial 2023 average": "EIA's figure, cited",
    r"from \d+ USD/kW-month: CBRE|\$184\.06|\$217 Q1 2025": "CBRE's figures, cited",
}
STRAY = re.compile(r"USD|\$")


def stray_usd(text: str) -> list[str]:
    """Each "USD" or "$" left once the allowed patterns are blanked, with its context."""
    spans = [m.span() for p in ALLOWED for m in re.finditer(p, text)]
    return [
        text[max(0, m.start() - 70) : m.end() + 30]
        for m in STRAY.finditer(text)
        if not any(start <= m.start() < end for start, end in spans)
    ]


def _pages(plan) -> dict[str, str]:
    pages = _consultant_pages(plan)
    for sweep in LoadTestSweep.objects.filter(workload__plan=plan):
        pages[f"load test {sweep.pk}"] = reverse(
            "measured:sweep_detail", args=[plan.pk, sweep.workload_id, sweep.pk]
        )
    return pages


def _consultant_texts(client, plan) -> dict[str, str]:
    """The visible text of every consultant page of ``plan`` (``client`` signed in as its
    consultant), by page name."""
    pages = _pages(plan)
    assert any(name.startswith("load test ") for name in pages)
    assert any(name.startswith("site ") for name in pages)
    texts = {}
    for name, url in pages.items():
        response = client.get(url)
        assert response.status_code == 200, (name, response.status_code)
        texts[name] = visible_text(response.content.decode())
    # The sizing table's detail panel (an htmx partial): its fleet price at cloud rates.
    for workload in plan.workloads.all():
        detail = client.get(
            reverse("candidate_detail", args=[plan.pk, workload.pk, chosen_key(workload)]),
            HTTP_HX_REQUEST="true",
        )
        text = visible_text(detail.content.decode())
        assert detail.status_code == 200 and "Fleet price at cloud rates" in text
        texts[f"candidate detail {workload.name}"] = text
    return texts


def _found(texts: dict[str, str], check) -> list[str]:
    """What ``check`` finds on each page, as "page: …context…"."""
    return [f"{name}: …{hit}…" for name, text in texts.items() for hit in check(text)]


def _client_surfaces(client, plan, consultant) -> dict[str, str]:
    """The visible text of what a client of ``plan`` sees: the share page of its newest
    revision (published now if the plan changed since) and each client document, rendered as
    the PDF renderer renders it."""
    try:
        revision = sharing.revision_publish(plan=plan, user=consultant, with_open_items=True)
    except sharing.NothingToPublish:
        revision = PlanRevision.objects.filter(plan=plan).order_by("-number").first()
    link = sharing.share_link_create(
        plan=plan, user=consultant, revision=revision, expires_at=None, note=""
    )
    client.logout()  # the client reads the link signed out
    share = client.get(reverse("sharing:public", args=[link.token]))
    assert share.status_code == 200
    texts = {"share page": visible_text(share.content.decode())}
    for kind in (DocumentKind.QUOTE, DocumentKind.CHECKLIST, DocumentKind.REPORT):
        context = sharing.document_context(revision=revision, kind=kind)
        html = render_html(sharing.DOCUMENT_TEMPLATES[kind], {"doc": context})
        texts[f"{kind.value} PDF"] = visible_text(html)
    assert "Executive summary" in texts["report PDF"]
    return texts


def test_a_eur_plans_consultant_pages_show_no_stray_usd(client, demo):
    plan, consultant, _ = demo  # the session's demo plan (tests/conftest.py), in EUR
    assert plan.currency == "EUR"
    client.force_login(consultant)
    found = _found(_consultant_texts(client, plan), stray_usd)
    assert not found, "\n".join(found)


def test_a_eur_plans_client_surfaces_show_no_stray_usd(client, demo):
    plan, consultant, _ = demo
    assert plan.currency == "EUR"
    found = _found(_client_surfaces(client, plan, consultant), stray_usd)
    assert not found, "\n".join(found)


# Rates to JPY on file (dated a year before the demo's order, so every valuation date of the
# demo finds one), as a consultant would enter them on the FX rates page.
YEN_PER = {"USD": Decimal("148.45"), "EUR": Decimal("161.37"), "GBP": Decimal("189.20")}
# A yen has no minor unit: an amount in JPY shows whole yen, grouped ("203,911,327 JPY"). A
# price per unit keeps its decimals (0.18886 JPY per request, 11.876 JPY/kWh, 185.80 JPY per
# million tokens; a table cell under such a heading shows the figure alone), so what fails
# is whole yen with cents (".00 JPY"), a grouped amount with decimals, or an ungrouped one.
RATE_AFTER = r"(?! ?(?:/|per\b))"
YEN_WRONG = re.compile(
    rf"\d\.00 JPY\b|\d,\d{{3}}\.\d+ JPY\b{RATE_AFTER}|(?<![\d.,])\d{{4,}}(?:\.\d+)? JPY\b"
)


def _demo_in_yen(plan, consultant) -> Plan:
    """The demo plan in JPY, in this test's transaction: the rates on file, the currency saved
    (the plan form's refusal of a rateless currency is tested in tests/sourcing/
    test_plan_currency.py) and the TCO run again, which the placement and the quote read; the
    BOM's quantities do not depend on the currency, the landed cost is priced when read."""
    for currency, rate in YEN_PER.items():
        FxRate.objects.create(
            from_currency=currency, to_currency="JPY", rate=rate,
            as_of=_order_date() - timedelta(days=365), source="test: a consultant's rate",
        )  # fmt: skip
    Plan.objects.filter(pk=plan.pk).update(currency="JPY")
    plan.refresh_from_db()
    assert missing_fx_rates(plan=plan, organisation=plan.organisation) == []
    freshness.recompute(plan=plan, kind=freshness.TCO, user=consultant, inline=True)
    return plan


def yen_wrong(text: str) -> list[str]:
    """Each JPY amount shown with cents of a yen or ungrouped, with its context."""
    return [text[max(0, m.start() - 60) : m.end() + 20] for m in YEN_WRONG.finditer(text)]


def test_a_jpy_plans_pages_show_whole_yen_and_no_stray_usd(client, demo):
    plan, consultant, _ = demo
    plan = _demo_in_yen(plan, consultant)
    client.force_login(consultant)
    texts = _consultant_texts(client, plan)
    texts |= {f"client {k}": v for k, v in _client_surfaces(client, plan, consultant).items()}
    assert "JPY" in texts["TCO"] and "JPY" in texts["client quote PDF"]
    found = _found(texts, stray_usd) + _found(texts, yen_wrong)
    assert not found, "\n".join(found)


def test_the_allow_list_lets_through_only_what_it_names():
    assert stray_usd("at 1 USD = 0.919963 EUR (2026-08-03)") == []
    assert stray_usd("Fleet price at cloud rates 60 USD/h") != []
    assert stray_usd("USD / M output tokens") != []
    assert stray_usd("$/h at peak") != []
    assert stray_usd("Facility energy 9,207 USD/mo") != []
    assert yen_wrong("landed cost, 1,234,567.00 JPY (servers …") != []
    assert yen_wrong("Default 27463.25 JPY per kW-month") != []
    assert yen_wrong("total 567.00 JPY") != []
    assert yen_wrong("1,234,567 JPY · 0.18886 JPY per request · 27,463.25 JPY per kW-month") == []
    assert yen_wrong("11.876 JPY/kWh at 1 USD = 148.450000 JPY (2025-08-06)") == []
