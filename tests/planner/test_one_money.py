"""One plan, one set of money: the TCO's capex, the landed cost, each option's NPV, each
workload's cost per request and the quote's total read the same on every page, the API, the
client's page and the PDFs, because each comes from one computation (the TCO run, the landed
cost of the BOM, the quote) and the surfaces only copy it. Figures are compared surface
against surface, not against numbers written here, so a change of price or rule keeps the test
true only if every surface changes with it."""

import json
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


def _publish(plan, user) -> dict[str, str]:
    """A new revision of the plan as it is now: the client's page and both PDFs' HTML."""
    from planner.pdf.render import render_html
    from planner.sharing.body import revision_body_render
    from planner.sharing.models import PlanRevision
    from planner.sharing.services import (
        DOCUMENT_TEMPLATES,
        NothingToPublish,
        document_context,
        revision_publish,
    )

    try:
        revision = revision_publish(plan=plan, user=user, with_open_items=True)
    except NothingToPublish:  # the latest revision is of the plan as it is
        revision = PlanRevision.objects.filter(plan=plan).latest("number")
    documents = {
        kind: render_html(
            DOCUMENT_TEMPLATES[kind], {"doc": document_context(revision=revision, kind=kind)}
        )
        for kind in ("quote", "report")
    }
    return {"client page": revision_body_render(revision)[0]} | documents


# The option the plan chooses → the TCO option its documents head with.
CHOICES = {
    "as built (a site of the deployment)": (None, "owned"),
    "the hybrid": (("hybrid", "hybrid", "Hybrid: owned base + cloud bursts"), "hybrid"),
    "the public cloud": (("", "public_cloud", "Public cloud"), "cheapest cloud"),
}


@pytest.mark.parametrize("choice", CHOICES)
def test_the_demo_shows_one_set_of_money_everywhere(client, demo, choice):
    from planner.facility.models import PlacementDecision
    from tests.api.conftest import _token, bearer

    plan, user, organisation = demo
    client.force_login(user)
    chosen, expected_key = CHOICES[choice]
    if chosen is not None:
        key, kind, label = chosen
        PlacementDecision.objects.filter(plan=plan).update(
            chosen_key=key, chosen_kind=kind, chosen_label=label
        )
    run = _latest_run(plan)
    options = {o["key"]: o for o in run.results["options"]}
    assert run.results["currency"] == plan.currency
    report = landed_cost_report(plan=plan, organisation=organisation)
    assert report.complete  # the demo's BOM is fully priced

    # TCO capex is the BOM at landed cost: the landed-cost page's and the API's total.
    if run.results.get("capex_basis") == "priced BOM":
        capex = Decimal(options["owned"]["lines_amount"]["capex"][0])
        assert capex == CENTS(report.total_net.amount)
    landed_page = client.get(reverse("sourcing:landed_cost", args=[plan.pk])).content.decode()
    shown = re.search(r'data-testid="landed-total".*?card-count">([^<]+)<', landed_page, re.S)
    assert _number(shown.group(1)) == CENTS(report.total_net.amount)
    api = client.get(
        f"/api/v1/plans/{plan.pk}/landed-cost", headers=bearer(_token(organisation, user))
    ).json()
    assert CENTS(Decimal(str(api["total_net"]["amount"]))) == CENTS(report.total_net.amount)

    # Each option's NPV: the TCO page and the API's run, both in the plan's currency (EUR).
    tco_page = client.get(reverse("facility:tco", args=[plan.pk])).content.decode()
    assert f"Amounts in {plan.currency}" in tco_page
    page_npv = {}
    for key, option in options.items():
        row = re.search(rf'<tr data-option="{re.escape(key)}">(.*?)</tr>', tco_page, re.S)
        cells = re.findall(r'<td class="num">([^<]*)</td>', row.group(1))
        page_npv[key] = _number(cells[0])
        assert page_npv[key] == Decimal(option["npv_amount"]).quantize(Decimal(1)), key
    api_run = client.get(
        f"/api/v1/plans/{plan.pk}/tco-runs/{run.pk}", headers=bearer(_token(organisation, user))
    ).json()
    assert plan.currency == "EUR"
    assert api_run["currency"] == api_run["results"]["currency"] == plan.currency
    assert {o["key"]: o["npv_amount"] for o in api_run["results"]["options"]} == {
        k: o["npv_amount"] for k, o in options.items()
    }
    assert {
        o["key"]: Decimal(o["npv_amount"]).quantize(Decimal(1))
        for o in api_run["results"]["options"]
    } == page_npv
    # No key of the API's run names a USD that its EUR amount is not.
    assert not re.search(r'"(?:\w+_)?usd(?:_\w+)?":', json.dumps(api_run))

    # Each workload's cost per request: the TCO page's table is the run's, option by option.
    for key, option in options.items():
        row = re.search(rf'data-option-workloads="{re.escape(key)}">(.*?)</tr>', tco_page, re.S)
        shown = _testid(row.group(1), "tco-workload-per-request")
        assert shown == [str(w["cost_per_request_amount"]) for w in option["workloads"]], key

    # The quote: its page, the client's page and both PDFs give one total.
    quote_page = client.get(reverse("sourcing:quote", args=[plan.pk])).content.decode()
    quote_total = _number(_testid(quote_page, "quote-total")[0])
    published = _publish(plan, user)
    assert _number(_testid(published["client page"], "rev-quote-total")[0]) == quote_total
    for kind in ("quote", "report"):
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", published[kind]))
        assert f"{quote_total:,.2f}" in text, kind

    # The client's page heads with each workload's cost per request of the chosen option (or
    # says none is chosen), never one figure for all.
    body = published["client page"]
    per_request = [_number(t) for t in _testid(body, "headline-per-request")]
    if expected_key == "cheapest cloud":
        clouds = [o for o in options.values() if o["kind"].startswith("cloud")]
        expected_key = min(clouds, key=lambda o: Decimal(o["npv_amount"]))["key"]
    five = Decimal("0.00001")
    expected = [
        Decimal(str(w["cost_per_request_amount"])).quantize(five)
        for w in options[expected_key]["workloads"]
    ]
    assert per_request == expected
    assert len(per_request) == plan.workloads.count() == 2
