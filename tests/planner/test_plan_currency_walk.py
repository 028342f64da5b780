"""A EUR plan's consultant pages show money in EUR: one walk over every consultant page of the
demo plan (EUR), signed in as its consultant, fails on "USD" or "$" in the visible text unless
an allowed pattern with its reason explains it: a dated exchange rate, a price really quoted or
listed in USD and labelled so, or a public source's figure as it publishes it."""

import re

import pytest
from django.urls import reverse

from planner.measured.models import LoadTestSweep
from planner.sizing import chosen_key
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


def test_a_eur_plans_consultant_pages_show_no_stray_usd(client, demo):
    plan, consultant, _ = demo  # the session's demo plan (tests/conftest.py), in EUR
    assert plan.currency == "EUR"
    client.force_login(consultant)
    pages = _pages(plan)
    assert any(name.startswith("load test ") for name in pages)
    assert any(name.startswith("site ") for name in pages)
    found = []
    for name, url in pages.items():
        response = client.get(url)
        assert response.status_code == 200, (name, response.status_code)
        found += [f"{name}: …{hit}…" for hit in stray_usd(visible_text(response.content.decode()))]
    # The sizing table's detail panel (an htmx partial): its fleet price at cloud rates.
    for workload in plan.workloads.all():
        detail = client.get(
            reverse("candidate_detail", args=[plan.pk, workload.pk, chosen_key(workload)]),
            HTTP_HX_REQUEST="true",
        )
        text = visible_text(detail.content.decode())
        assert detail.status_code == 200 and "Fleet price at cloud rates" in text
        found += [f"candidate detail {workload.name}: …{hit}…" for hit in stray_usd(text)]
    assert not found, "\n".join(found)


def test_the_allow_list_lets_through_only_what_it_names():
    assert stray_usd("at 1 USD = 0.919963 EUR (2026-08-03)") == []
    assert stray_usd("Fleet price at cloud rates 60 USD/h") != []
    assert stray_usd("USD / M output tokens") != []
    assert stray_usd("$/h at peak") != []
    assert stray_usd("Facility energy 9,207 USD/mo") != []
