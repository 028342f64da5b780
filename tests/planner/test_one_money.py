"""One plan, one set of money: the TCO's capex, the landed cost, each option's NPV, each
workload's cost per request and the quote's total read the same on every page, the API, the
client's page and the PDFs, because each comes from one computation (the TCO run, the landed
cost of the BOM, the quote) and the surfaces only copy it. Figures are compared surface
against surface, not against numbers written here, so a change of price or rule keeps the test
true only if every surface changes with it."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from planner.facility.models import TcoRun, TcoStatus
from sourcing.services import landed_cost_report

pytestmark = pytest.mark.django_db


def CENTS(amount: Decimal) -> Decimal:
    return Decimal(amount).quantize(Decimal("0.01"))


NUMBER = re.compile(r"-?[\d,]+(?:\.\d+)?")


def _number(text: str) -> Decimal:
    """The first number in a shown figure ("1,273,946.42 EUR" → 1273946.42)."""
    match = NUMBER.search(text.replace("\u202f", "").replace("\xa0", ""))
    assert match, text
    return Decimal(match.group(0).replace(",", ""))


def _testid(html: str, testid: str) -> list[str]:
    """The text inside every element with the test id (tags stripped)."""
    found = re.findall(
        rf'data-testid="{testid}"[^>]*>(.*?)</(?:span|th|td|strong|dd|p)>', html, re.S
    )
    return [re.sub(r"<[^>]+>", " ", f).strip() for f in found]


def _latest_run(plan) -> TcoRun:
    return TcoRun.objects.filter(plan=plan, status=TcoStatus.SUCCEEDED).latest("pk")


def test_the_demo_shows_one_set_of_money_everywhere(client, demo):
    from tests.api.conftest import _token, bearer
    from tests.planner.test_one_deployment import _published

    plan, user, organisation = demo
    client.force_login(user)
    run = _latest_run(plan)
    options = {o["key"]: o for o in run.results["options"]}
    assert run.results["currency"] == plan.currency
    report = landed_cost_report(plan=plan, organisation=organisation)
    assert report.complete  # the demo's BOM is fully priced

    # TCO capex is the BOM at landed cost: the landed-cost page's and the API's total.
    if run.results.get("capex_basis") == "priced BOM":
        capex = Decimal(options["owned"]["lines_usd"]["capex"][0])
        assert capex == CENTS(report.total_net.amount)
    landed_page = client.get(reverse("sourcing:landed_cost", args=[plan.pk])).content.decode()
    shown = re.search(r'data-testid="landed-total".*?card-count">([^<]+)<', landed_page, re.S)
    assert _number(shown.group(1)) == CENTS(report.total_net.amount)
    api = client.get(
        f"/api/v1/plans/{plan.pk}/landed-cost", headers=bearer(_token(organisation, user))
    ).json()
    assert CENTS(Decimal(str(api["total_net"]["amount"]))) == CENTS(report.total_net.amount)

    # Each option's NPV: the TCO page and the API's run.
    tco_page = client.get(reverse("facility:tco", args=[plan.pk])).content.decode()
    for key, option in options.items():
        row = re.search(rf'<tr data-option="{re.escape(key)}">(.*?)</tr>', tco_page, re.S)
        cells = re.findall(r'<td class="num">([^<]*)</td>', row.group(1))
        assert _number(cells[0]) == Decimal(option["npv_usd"]).quantize(Decimal(1)), key
    api_run = client.get(
        f"/api/v1/plans/{plan.pk}/tco-runs/{run.pk}", headers=bearer(_token(organisation, user))
    ).json()
    assert {o["key"]: o["npv_usd"] for o in api_run["results"]["options"]} == {
        k: o["npv_usd"] for k, o in options.items()
    }

    # Each workload's cost per request: the TCO page's table is the run's, option by option.
    for key, option in options.items():
        row = re.search(rf'data-option-workloads="{re.escape(key)}">(.*?)</tr>', tco_page, re.S)
        shown = _testid(row.group(1), "tco-workload-per-request")
        assert shown == [str(w["cost_per_request_usd"]) for w in option["workloads"]], key

    # The quote: its page, the client's page and both PDFs give one total.
    quote_page = client.get(reverse("sourcing:quote", args=[plan.pk])).content.decode()
    quote_total = _number(_testid(quote_page, "quote-total")[0])
    published = _published(plan, user)
    assert _number(_testid(published["client page"], "rev-quote-total")[0]) == quote_total
    for kind in ("quote", "report"):
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", published[kind]))
        assert f"{quote_total:,.2f}" in text, kind

    # The client's page heads with each workload's cost per request of the chosen option (or
    # says none is chosen), never one figure for all.
    body = published["client page"]
    per_request = [_number(t) for t in _testid(body, "headline-per-request")]
    if per_request:
        five = Decimal("0.00001")
        shown_by = {
            key: [Decimal(str(w["cost_per_request_usd"])).quantize(five) for w in o["workloads"]]
            for key, o in options.items()
        }
        assert per_request in shown_by.values()  # one option's figures, one per workload
        assert len(per_request) == plan.workloads.count()
    else:
        assert _testid(body, "headline-no-option")
