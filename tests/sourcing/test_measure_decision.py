"""The per-plan "confirm end use" control: a conditional duty (Section 232 on HS 8471.50, 25 %,
exempt for a U.S. data-center end use) on a Taiwan-made server into the US at 250,000 USD.

Hand calculation (US customs value = transaction value, 19 U.S.C. §1401a; FCA: freight is not
in the price, insurance is paid apart, so the customs value is the goods, 250,000 USD; no US
import VAT):

- unconfirmed: duty 0 in the landed cost, exposure 25 % × 250,000 = 62,500 USD shown, an open
  item;
- applies: duty 62,500 USD in the landed cost (the landed cost rises by exactly 62,500 USD);
- does not apply: duty 0, the consultant's reason printed on the cost sheet; no open item.
"""

from decimal import Decimal

import pytest
from django.urls import reverse

from planner import freshness
from planner.engine.tariff_defaults import SECTION_232
from planner.money import format_money
from planner.pdf.context import cost_sheet_context
from planner.pdf.render import render_html
from planner.sharing import checklist
from planner.sharing.snapshot import plan_snapshot
from sourcing import services as ssvc
from sourcing.forms import MeasureDecisionForm
from sourcing.models import BomLine, MeasureDecision

D = Decimal
REASON = "End-use certificate EUC-2026-0417: U.S. data-center use"


@pytest.fixture
def us_server(sourced_plan):
    """One Taiwan-made DGX at 250,000 USD, FCA, no freight, into the US; the plan in USD."""
    from tests.factories import OfferFactory, SupplierFactory

    sourced_plan.currency = "USD"
    sourced_plan.save()
    settings = ssvc.sourcing_settings_get(plan=sourced_plan)
    settings.destination_country = "US"
    settings.save()
    line = BomLine.objects.get(plan=sourced_plan, category="server")
    supplier = SupplierFactory(
        organisation=sourced_plan.organisation, name="Formosa Servers", country="TW"
    )
    offer = OfferFactory(
        supplier=supplier, server=line.server, unit_price=D(250000), currency="USD",
        incoterm="FCA", origin_country="TW", ship_from_country="TW", freight_per_unit=D(0),
    )  # fmt: skip
    line.pinned_offer, line.quantity, line.origin = offer, 1, "override"
    line.save()
    return line


def _server(plan):
    report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
    return report, next(c for c in report.lines if c.line.category == "server").landed


def _decide(plan, decision, reason="", user=None):
    row = ssvc.measure_decision_get(plan=plan, measure=SECTION_232)
    form = MeasureDecisionForm({"decision": decision, "reason": reason}, instance=row)
    assert form.is_valid(), form.errors
    return ssvc.measure_decision_save(plan=plan, decision=form.save(commit=False), user=user)


def test_unconfirmed_shows_the_exposure_outside_the_total(us_server):
    plan = us_server.plan
    report, landed = _server(plan)
    assert landed.customs_value.amount == D(250000) and landed.customs_value.currency == "USD"
    assert landed.duty.amount == 0
    [measure] = landed.measures_to_confirm
    assert measure.name == SECTION_232 and measure.exposure.amount == D(62500)
    assert report.exposure_to_confirm.amount == D(62500)
    assert [i.kind for i in freshness.measures_to_confirm(plan)] == ["measure"]


def test_applies_charges_it_in_the_landed_cost_and_quote(us_server, consultant_a):
    plan = us_server.plan
    before_report, before = _server(plan)

    _decide(plan, "applies", user=consultant_a)

    report, landed = _server(plan)
    assert landed.duty.amount == D(62500)
    assert [(c.name, c.amount.amount) for c in landed.duty_components if c.pct] == [
        (SECTION_232, D(62500))
    ]
    assert landed.landed_cost_net.amount - before.landed_cost_net.amount == D(62500)
    assert report.total_net.amount - before_report.total_net.amount == D(62500)
    assert landed.measures_to_confirm == () and report.measures_to_confirm == 0
    [decided] = landed.measures_decided
    assert decided.applies and decided.duty.amount == D(62500)
    # No longer open: the publish gate and the checklist stop asking.
    assert freshness.measures_to_confirm(plan) == []
    snapshot = plan_snapshot(plan=plan)
    assert checklist.measures_to_confirm(snapshot["bom"]) == []
    [said] = checklist.measures_decided(snapshot["bom"])
    assert (
        said.startswith(SECTION_232)
        and f"applies, {format_money(D(62500), 'USD')} in the landed cost" in said
    )
    # The quote prices the BOM at this landed cost (the TCO capex: tests/sharing).
    [row] = [r for r in snapshot["bom"]["lines"] if r["category"] == "server"]
    assert D(row["duty"]["amount"]) == D(62500)
    assert D(row["landed_net"]["amount"]) == before.landed_cost_net.amount + D(62500)


def test_does_not_apply_is_zero_with_the_reason_on_the_cost_sheet(us_server, consultant_a):
    plan = us_server.plan
    _, before = _server(plan)
    _decide(plan, "does_not_apply", REASON, user=consultant_a)

    report, landed = _server(plan)
    assert landed.duty.amount == 0
    assert landed.landed_cost_net.amount == before.landed_cost_net.amount
    assert landed.measures_to_confirm == () and report.exposure_to_confirm.amount == 0
    [decided] = landed.measures_decided
    assert not decided.applies and decided.reason == REASON and decided.duty.amount == 0
    assert freshness.measures_to_confirm(plan) == []

    head = {"revision_number": 1, "published_at": None, "published_by": "Dana Demo"}
    doc = cost_sheet_context(plan_snapshot(plan=plan), **head)
    [(line, measure)] = doc.measures_decided
    assert measure.reason == REASON and not measure.applies
    html = render_html("pdf/cost_sheet.html", {"doc": doc})
    assert "does not apply, 0 %" in html and REASON in html

    # Back to unconfirmed: today's behaviour, the exposure and the open item return.
    _decide(plan, "unconfirmed", user=consultant_a)
    _, landed = _server(plan)
    assert landed.measures_to_confirm[0].exposure.amount == D(62500)
    assert len(freshness.measures_to_confirm(plan)) == 1


def test_the_page_sets_it_for_editors_only_and_refuses_bad_input(
    client, us_server, consultant_a, org_a
):
    from tests.factories import MembershipFactory, UserFactory

    plan = us_server.plan
    url = reverse("sourcing:measure_decision", args=[plan.pk])
    client.force_login(consultant_a)
    page = client.get(reverse("sourcing:landed_cost", args=[plan.pk])).content.decode()
    assert 'data-testid="measure-decision-form"' in page and "62,500" in page

    # "does not apply" without a reason: the field says why, nothing is saved.
    answer = client.post(
        url,
        {"measure": SECTION_232, "measure-0-decision": "does_not_apply", "measure-0-reason": " "},
    )
    assert answer.status_code == 400
    form = next(f for m, f in answer.context["measure_forms"] if m.name == SECTION_232)
    assert "end-use certificate" in form.errors["reason"][0]
    assert not MeasureDecision.objects.filter(plan=plan).exists()
    # An unknown choice is a field error too, never a 500.
    answer = client.post(url, {"measure": SECTION_232, "measure-0-decision": "maybe"})
    assert answer.status_code == 400
    form = next(f for m, f in answer.context["measure_forms"] if m.name == SECTION_232)
    assert "decision" in form.errors
    # A measure not in force on the plan's lines.
    answer = client.post(url, {"measure": "Made-up duty", "measure-0-decision": "applies"})
    assert answer.status_code == 400 and not MeasureDecision.objects.exists()

    answer = client.post(
        url, {"measure": SECTION_232, "measure-0-decision": "does_not_apply",
              "measure-0-reason": REASON},
    )  # fmt: skip
    assert answer.status_code == 302
    row = MeasureDecision.objects.get(plan=plan)
    assert (row.decision, row.reason) == ("does_not_apply", REASON)
    page = client.get(reverse("sourcing:landed_cost", args=[plan.pk])).content.decode()
    assert REASON in page and 'data-testid="measure-decided"' in page

    # A viewer reads the page without the control and cannot post it.
    viewer = UserFactory()
    MembershipFactory(user=viewer, organisation=org_a, role="viewer")
    client.force_login(viewer)
    page = client.get(reverse("sourcing:landed_cost", args=[plan.pk])).content.decode()
    assert 'data-testid="measure-decision-form"' not in page and REASON in page
    answer = client.post(url, {"measure": SECTION_232, "measure-0-decision": "applies"})
    assert answer.status_code == 403
    assert MeasureDecision.objects.get(plan=plan).decision == "does_not_apply"


def test_a_stale_decision_form_is_refused(us_server, consultant_a):
    plan = us_server.plan
    row = _decide(plan, "applies", user=consultant_a)
    loaded = MeasureDecisionForm(instance=row)
    version = loaded.initial["loaded_version"]
    signed = loaded.initial["loaded_values"]()
    _decide(plan, "does_not_apply", REASON, user=consultant_a)
    stale = MeasureDecisionForm(
        {"decision": "unconfirmed", "reason": "", "loaded_version": version,
         "loaded_values": signed},
        instance=MeasureDecision.objects.get(plan=plan),
    )  # fmt: skip
    assert not stale.is_valid()
