"""Publishing asks for "publish with these open items" on the plan's facts, not only on stale
results: a site failing its facility check, no chosen option, a conditional duty nobody
confirmed, a BOM line without a price. The conditional duty is shown as "confirm" with its
exposure on the landed cost page, the checklist and the internal cost sheet; never 0 %."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from planner import freshness
from planner.facility import services as fsvc
from planner.facility.models import Site
from planner.money import format_money
from planner.sharing import services
from sourcing import services as ssvc
from sourcing.models import BomLine
from tests.sharing.conftest import pdf_text

D = Decimal


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _new_blockers(plan) -> list:
    """The open items besides the demo's own (its A/B feed check fails at both sites)."""
    return [
        item for item in services.publish_blockers(plan=plan)
        if not (item.kind == "facility_check" and item.reason.startswith("A/B feed redundancy"))
    ]  # fmt: skip


def test_the_demos_failing_ab_feed_check_asks_before_publishing(plan, consultant):
    # A DGX B200 keeps 3 of its 6 power supplies on one feed (5 needed): losing a side stops
    # or throttles it. Both sites fail the check: a fact the published plan must carry.
    blockers = services.publish_blockers(plan=plan)
    assert sorted(b.label for b in blockers) == sorted(
        f"Facility check of {s.name}" for s in Site.objects.filter(plan=plan)
    )
    assert all(b.kind == "facility_check" and b.state_label == "failing" for b in blockers)
    assert all(b.reason.startswith("A/B feed redundancy: ") for b in blockers)
    plan.notes = "A change to publish."
    plan.save()
    with pytest.raises(services.PublishBlocked, match="Facility check"):
        services.revision_publish(plan=plan, user=consultant)


def test_a_failing_rack_check_needs_the_explicit_publish(plan, consultant):
    site = next(
        s for s in Site.objects.filter(plan=plan)
        if (r := fsvc.site_evaluate(plan=plan, site=s).report) and r.racks_needed > 1
    )  # fmt: skip
    needed = fsvc.site_evaluate(plan=plan, site=site).report.racks_needed
    site.racks_available = needed - 1  # e.g. 11 racks needed, 10 available
    site.save()

    item = next(b for b in services.publish_blockers(plan=plan) if b.label.endswith(site.name))
    assert (item.kind, item.state_label) == ("facility_check", "failing")
    assert "Rack count: " in item.reason and f"; {needed - 1} available." in item.reason
    with pytest.raises(services.PublishBlocked, match="Facility check"):
        services.revision_publish(plan=plan, user=consultant)
    revision = services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    stored = {i["label"]: i for i in revision.snapshot["open_items"]}
    assert "Rack count" in stored[f"Facility check of {site.name}"]["reason"]
    pdf = _flat(pdf_text(services.document_render(revision=revision, kind="quote"))[0])
    assert f"Facility check of {site.name} — fails its check" in pdf


def test_no_chosen_option_needs_the_explicit_publish(plan, consultant):
    from planner.facility.selectors import placement_decision_get

    decision = placement_decision_get(plan=plan)
    decision.chosen_kind = decision.chosen_key = decision.chosen_label = ""
    decision.save()

    assert [item.kind for item in _new_blockers(plan)] == ["option"]
    with pytest.raises(services.PublishBlocked, match="Option chosen"):
        services.revision_publish(plan=plan, user=consultant)


def test_an_unpriced_line_needs_the_explicit_publish_and_names_no_supplier(plan, consultant):
    line = BomLine.objects.filter(plan=plan, category="rack").first()
    line.hs_code = ""  # goods without an HS code cannot be tariffed: not priced
    line.save()

    # (the TCO, whose capex is the priced BOM, goes stale with it)
    blockers = {b.kind: b for b in _new_blockers(plan)}
    assert set(blockers) == {"landed_cost", "tco"}
    item = blockers["landed_cost"]
    assert item.state == "failed"
    site = f" ({line.site.name})" if line.site_id else ""
    assert f"{line.description}{site}: no HS code — duty unknown" in item.reason
    for supplier in ssvc.selectors.supplier_list(organisation=plan.organisation):
        assert supplier.name not in item.reason
    with pytest.raises(services.PublishBlocked):
        services.revision_publish(plan=plan, user=consultant)


def test_a_conditional_duty_nobody_confirmed_needs_the_explicit_publish(plan, consultant):
    from tests.factories import OfferFactory, SupplierFactory

    # Ashburn's servers pinned to a Taiwan-made offer, FCA: Section 232 (25 %, end use) is to
    # confirm; its exposure 25 % × n × 300,000 EUR.
    line = BomLine.objects.get(plan=plan, category="server", site__country="US")
    supplier = SupplierFactory(organisation=plan.organisation, name="Formosa Servers", country="TW")
    offer = OfferFactory(supplier=supplier, server=line.server, unit_price=D(300000),
                         incoterm="FCA", origin_country="TW", ship_from_country="TW")  # fmt: skip
    line.pinned_offer = offer
    line.save()

    [blocker] = [b for b in _new_blockers(plan) if b.kind == "measure"]
    assert blocker.state_label == "to confirm"
    assert blocker.label == f"Duty to confirm on {line.description} ({line.site.name})"
    assert format_money(D(75000) * line.quantity, "EUR") in blocker.reason
    assert "Formosa" not in blocker.reason + blocker.label  # shown to the client if published
    with pytest.raises(services.PublishBlocked, match="Duty to confirm"):
        services.revision_publish(plan=plan, user=consultant)
    revision = services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    assert "measure" in [i["kind"] for i in revision.snapshot["open_items"]]

    # Confirmed in the tariff table: nothing is left to confirm.
    from sourcing.models import TariffMeasure

    TariffMeasure.objects.filter(
        rule__destination="US", rule__hs_prefix="847150", name__startswith="Section 232"
    ).update(condition="")
    assert freshness.measures_to_confirm(plan) == []


def test_a_catalog_gap_leaves_the_review_page_and_the_gate_working(signed_in, plan, monkeypatch):
    from planner.engine.errors import CatalogGapError

    def gap(**_):
        raise CatalogGapError("The catalog publishes no power for this server.")

    monkeypatch.setattr(fsvc, "plan_deployment", gap)
    assert freshness.facility_failures(plan) == []
    page = signed_in.get(reverse("sharing:review", args=[plan.pk]))
    assert page.status_code == 200
