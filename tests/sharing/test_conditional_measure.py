"""A conditional US duty (Section 232 on 8471.50, exempt for a U.S. data-center end use) on a
Taiwan-made server into Ashburn: shown as "confirm" with its exposure on the landed cost page,
the checklist and the internal cost sheet; never as 0 %."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from planner import freshness
from planner.money import format_money
from planner.sharing import checklist, services
from planner.sharing.snapshot import plan_snapshot
from sourcing import services as ssvc
from sourcing.models import BomLine
from tests.sharing.conftest import pdf_text

D = Decimal


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture
def taiwan_server_into_the_us(plan):
    """Ashburn's servers pinned to a Taiwan-made offer at 300,000 EUR, FCA: into the US the
    end-use-conditional Section 232 (25 %) may apply."""
    from tests.factories import OfferFactory, SupplierFactory

    line = BomLine.objects.get(plan=plan, category="server", site__country="US")
    supplier = SupplierFactory(organisation=plan.organisation, name="Formosa Servers", country="TW")
    offer = OfferFactory(supplier=supplier, server=line.server, unit_price=D(300000),
                         incoterm="FCA", origin_country="TW", ship_from_country="TW")  # fmt: skip
    line.pinned_offer = offer
    line.save()
    return line


def test_a_conditional_us_duty_is_confirm_with_its_exposure(
    plan, consultant, signed_in, taiwan_server_into_the_us
):
    line = taiwan_server_into_the_us
    # Transaction value = goods (FCA: freight not in the price) = n × 300,000 EUR; Section 232
    # at 25 %: 75,000 EUR a server if it applies. The US has no import VAT: nothing on top.
    exposure = D(75000) * line.quantity
    report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
    cost = next(c for c in report.lines if c.line.pk == line.pk)
    assert cost.landed.duty.amount == 0
    [measure] = cost.landed.measures_to_confirm
    assert measure.exposure.amount == exposure and measure.exposure.currency == "EUR"
    assert report.exposure_to_confirm.amount == exposure and report.measures_to_confirm == 1

    # The landed cost page: "confirm" beside the duty, with the exposure, never a bare 0 %.
    page = signed_in.get(reverse("sourcing:landed_cost", args=[plan.pk])).content.decode()
    assert 'data-testid="measure-confirm">confirm' in page
    money = format_money(exposure, "EUR")
    assert money in page and 'data-testid="exposure-to-confirm"' in page

    # The checklist: the logistics, customs and tariffs item fails on it.
    snapshot = plan_snapshot(plan=plan)
    item = next(i for i in checklist.evaluate(snapshot) if i.key == "logistics_owner")
    assert any("Confirm Section 232" in f and money in f for f in item.failing)

    # The internal cost sheet lists it with its exposure.
    revision = services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    sheet = _flat(pdf_text(services.document_render(revision=revision, kind="cost_sheet"))[0])
    assert "Duties to confirm" in sheet and "confirm Section 232" in sheet and money in sheet

    # Confirmed in the tariff table (a maintainer clears the condition: it applies to these
    # goods): the duty is in the landed cost, and nothing is left to confirm.
    from sourcing.models import TariffMeasure

    TariffMeasure.objects.filter(
        rule__destination="US", rule__hs_prefix="847150", name__startswith="Section 232"
    ).update(condition="")
    report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
    cost = next(c for c in report.lines if c.line.pk == line.pk)
    assert cost.landed.duty.amount == exposure and cost.landed.measures_to_confirm == ()
    assert report.measures_to_confirm == 0


def test_deciding_it_reprices_the_tco_capex_and_closes_the_open_item(
    plan, consultant, taiwan_server_into_the_us
):
    """The per-plan decision (not the tariff table): "applies" charges 25 % of the customs
    value in the landed cost, so the TCO's capex (the priced BOM) changes and its last run is
    stale; the open item is gone."""
    from planner.engine.tariff_defaults import SECTION_232
    from sourcing.forms import MeasureDecisionForm

    line = taiwan_server_into_the_us
    exposure = D(75000) * line.quantity
    hash_before = freshness.tco_inputs_hash(plan)
    assert [b.kind for b in freshness.measures_to_confirm(plan)] == ["measure"]

    row = ssvc.measure_decision_get(plan=plan, measure=SECTION_232)
    form = MeasureDecisionForm({"decision": "applies", "reason": ""}, instance=row)
    assert form.is_valid()
    ssvc.measure_decision_save(plan=plan, decision=form.save(commit=False), user=consultant)

    report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
    cost = next(c for c in report.lines if c.line.pk == line.pk)
    assert cost.landed.duty.amount == exposure and report.measures_to_confirm == 0
    assert freshness.measures_to_confirm(plan) == []
    assert freshness.tco_inputs_hash(plan) != hash_before
