"""Go-live by the critical path, purchase orders with dated steps, slips and the history."""

from datetime import date, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from sourcing.forms import PurchaseOrderForm
from sourcing.models import PlanEvent, PurchaseOrder
from sourcing.services import (
    purchase_order_create,
    purchase_order_update,
    sourcing_settings_get,
    timeline_report,
)


def test_go_live_is_the_critical_path_over_lead_times(sourced_plan, org_a):
    timeline = timeline_report(plan=sourced_plan, organisation=org_a)

    # Servers: ordered 2026-08-03 + 90 days lead + 3 days air (North America → Europe)
    # + 3 days customs = 2026-11-07; + 10 days installation + 7 days burn-in.
    assert timeline.go_live == date(2026, 11, 24)
    line = sourced_plan.bom_lines.get(part_key="server:nvidia-dgx-h100")
    assert timeline.schedule.critical_path[:3] == (
        f"line-{line.pk}:lead_time", f"line-{line.pk}:transit", f"line-{line.pk}:customs",
    )  # fmt: skip
    assert "power-ready" in timeline.power_ready_note or "unknown" in timeline.power_ready_note
    assert any("Fibre" in n or "cable" in n.lower() for n in timeline.notes)


def test_power_ready_date_holds_installation(sourced_plan, org_a):
    settings = sourcing_settings_get(plan=sourced_plan)
    settings.power_ready_on = date(2027, 2, 1)
    settings.save()

    timeline = timeline_report(plan=sourced_plan, organisation=org_a)

    assert timeline.go_live == date(2027, 2, 18)
    assert timeline.schedule.critical_path[0] == "power_ready"


def test_facility_sites_power_ready_date_is_used(sourced_plan, org_a):
    facility = pytest.importorskip("planner.facility.models")
    from planner.facility.demo import DEMO_SITES

    values = {k: v for k, v in DEMO_SITES[1].items() if k != "upgrades"}  # Frankfurt
    values["power_ready_date"] = date(2027, 1, 10)
    facility.Site.objects.create(plan=sourced_plan, **values)

    timeline = timeline_report(plan=sourced_plan, organisation=org_a)

    assert timeline.power_ready == date(2027, 1, 10)
    assert "facility" in timeline.power_ready_note


def _post_data(order: PurchaseOrder, **changes) -> dict:
    form = PurchaseOrderForm(instance=order, cross_border=True)
    data = {}
    for name, _field in form.fields.items():
        value = form.initial.get(name)
        data[name] = "" if value is None else value
    data.update(changes)
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in data.items()}


def test_a_late_shipment_moves_go_live_and_names_the_item(
    client, consultant_a, sourced_plan, org_a, suppliers_a
):
    _, us = suppliers_a
    order = purchase_order_create(
        plan=sourced_plan, organisation=org_a, supplier=us, user=consultant_a,
        logistics_owner="Mila (forwarder: Fast Air BV)",
    )  # fmt: skip
    assert order.shipped_expected == date(2026, 11, 1)
    assert [line.description for line in order.lines.all()] == ["NVIDIA DGX H100"]
    client.force_login(consultant_a)

    response = client.post(
        reverse("sourcing:order_detail", args=[sourced_plan.pk, order.pk]),
        _post_data(order, ordered_actual=date(2026, 8, 3), shipped_actual=date(2026, 11, 11)),
    )

    assert response.status_code == 302
    order.refresh_from_db()
    assert order.status == "shipped"
    timeline = timeline_report(plan=sourced_plan, organisation=org_a)
    assert timeline.slips.baseline_go_live == date(2026, 11, 24)
    assert timeline.go_live == date(2026, 12, 4)
    assert [s.name for s in timeline.slips.responsible] == [
        "PO-001 from US Dist: supplier lead time"
    ]
    page = client.get(reverse("sourcing:timeline", args=[sourced_plan.pk])).content.decode()
    assert "moved +10 days from 2026-11-24" in page
    assert "PO-001 from US Dist: supplier lead time — slipped 10 days" in page
    history = PlanEvent.objects.filter(plan=sourced_plan, kind="order").first().message
    assert "10 days later than expected 2026-11-01" in history


def test_cross_border_order_needs_a_logistics_owner(
    client, consultant_a, sourced_plan, org_a, suppliers_a
):
    _, us = suppliers_a
    order = purchase_order_create(plan=sourced_plan, organisation=org_a, supplier=us,
                                  user=consultant_a)  # fmt: skip
    client.force_login(consultant_a)
    list_page = client.get(reverse("sourcing:orders", args=[sourced_plan.pk])).content.decode()
    assert "missing — cross-border" in list_page

    response = client.post(
        reverse("sourcing:order_detail", args=[sourced_plan.pk, order.pk]),
        _post_data(order, shipped_actual="2026-13-01", freight="-5"),
    )

    content = response.content.decode()
    assert response.status_code == 400
    assert "needs a named owner for logistics, customs and tariffs" in content
    assert "Enter a valid date." in content and "Cannot be negative." in content
    assert 'value="2026-13-01"' in content


def test_actual_dates_cannot_be_in_the_future_or_out_of_order(sourced_plan, org_a, suppliers_a,
                                                             consultant_a):  # fmt: skip
    _, us = suppliers_a
    order = purchase_order_create(plan=sourced_plan, organisation=org_a, supplier=us,
                                  user=consultant_a, logistics_owner="Mila")  # fmt: skip
    tomorrow = date.today() + timedelta(days=1)
    form = PurchaseOrderForm(
        _post_data(order, ordered_actual="2026-09-01", shipped_actual="2026-08-20",
                   delivered_actual=tomorrow),
        instance=order, cross_border=True,
    )  # fmt: skip

    assert not form.is_valid()
    assert "Cannot be before the ordered date 2026-09-01." in form.errors["shipped_actual"]
    assert "An actual date cannot be in the future." in form.errors["delivered_actual"]


def test_create_an_order_from_the_page(client, consultant_a, sourced_plan, suppliers_a):
    nl, us = suppliers_a
    client.force_login(consultant_a)

    response = client.post(
        reverse("sourcing:orders", args=[sourced_plan.pk]),
        {"supplier": nl.pk, "logistics_owner": "Joris"},
    )

    order = PurchaseOrder.objects.get(plan=sourced_plan)
    assert response.status_code == 302
    assert {line.description for line in order.lines.all()} >= {"Optical transceiver", "Rack"}
    assert order.reference == "PO-001" and order.logistics_owner == "Joris"
    again = client.post(reverse("sourcing:orders", args=[sourced_plan.pk]), {"supplier": nl.pk})
    assert again.status_code == 400 and "No BOM line left to order" in again.content.decode()


def test_history_is_append_only(sourced_plan, consultant_a, org_a, suppliers_a):
    _, us = suppliers_a
    order = purchase_order_create(plan=sourced_plan, organisation=org_a, supplier=us,
                                  user=consultant_a, logistics_owner="Mila")  # fmt: skip
    purchase_order_update(order=order, changes={"notes": "call Friday"}, user=consultant_a)
    event = PlanEvent.objects.filter(plan=sourced_plan).first()

    event.message = "rewritten"
    with pytest.raises(ValidationError):
        event.save()
    with pytest.raises(ValidationError):
        event.delete()
    assert PlanEvent.objects.filter(plan=sourced_plan).count() == 3
