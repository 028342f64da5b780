"""Property tests of the forms' cleaning (hypothesis): any typed value, in or out of range,
gives either field errors or a row that saves and that the engine accepts; never an
exception. Each example runs in a rolled-back transaction; example counts stay small."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import transaction
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

FORM_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# What people (and scripts) type into a number or date box.
HOSTILE = st.sampled_from(
    ["", "0", "-1", "1", "7", "42", "150", "１２３", "1e40", "-1e40", "nan", "inf", "-0",
     "9" * 40, "0.0001", "1,5", " 12 ", "\x00", "abc", "1e-300", "99999999999"]
)  # fmt: skip
NUMBER = st.one_of(
    HOSTILE,
    st.integers(min_value=0, max_value=100).map(str),
    st.floats(min_value=0.1, max_value=60).map(lambda v: f"{v:.2f}"),
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
DATE = st.one_of(
    st.sampled_from(["", "0001-01-01", "9999-12-31", "2027-02-30", "01/06/2027", "\x00"]),
    st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31)).map(date.isoformat),
)


def maybe(strategy):
    """The field left as stored (None, 3 in 4) or a typed value: a few fields change at once."""
    return st.integers(min_value=0, max_value=3).flatmap(
        lambda i: strategy if i == 0 else st.none()
    )


def typed_only(typed: dict) -> dict:
    return {k: v for k, v in typed.items() if v is not None}


class Rollback(Exception):
    pass


def _in_rollback(check):
    try:
        with transaction.atomic():
            check()
            raise Rollback
    except Rollback:
        pass


@pytest.fixture
def plan(demo):
    return demo[0]


@FORM_SETTINGS
@given(
    headroom_pct=maybe(NUMBER),
    peak_requests_per_s=maybe(NUMBER),
    peak_concurrency=maybe(NUMBER),
    input_tokens_mean=maybe(NUMBER),
    output_tokens_p95=maybe(NUMBER),
    ttft_ms=maybe(NUMBER),
    tpot_ms=maybe(NUMBER),
    e2e_s=maybe(NUMBER),
    daily_profile=maybe(
        st.one_of(HOSTILE, st.lists(NUMBER, min_size=24, max_size=24).map(", ".join))
    ),
    region_shares=maybe(
        st.sampled_from(["", "eu-west: 100", "eu-west: nan", "eu-west: 1e40", "x: 1"])
    ),
)
def test_workload_form_gives_errors_or_a_sizeable_workload(plan, **typed):
    from django.forms.models import model_to_dict

    from planner import sizing
    from planner.workload_forms import WorkloadForm

    workload = plan.workloads.get(kind="chat")
    data = {k: v for k, v in model_to_dict(workload).items() if v is not None}
    data["daily_profile"] = ", ".join(str(v) for v in workload.daily_profile)
    data["region_shares"] = ""
    data.update(typed_only(typed))

    def check():
        form = WorkloadForm(data, instance=plan.workloads.get(pk=workload.pk))
        event("valid" if form.is_valid() else "refused")
        if form.is_valid():
            saved = form.save()
            sizing.engine_workload(saved)  # the engine's entry accepts what the form accepts
        else:
            assert all(form.errors.values())

    _in_rollback(check)


@FORM_SETTINGS
@given(
    cooling_capacity_per_rack_kw=maybe(NUMBER),
    servers_per_rack=maybe(NUMBER),
    site_it_capacity_kw=maybe(NUMBER),
    voltage_v=maybe(NUMBER),
    amperage_a=maybe(NUMBER),
    pue=maybe(NUMBER),
    racks_available=maybe(NUMBER),
    power_ready_date=maybe(DATE),
    upgrades=st.one_of(
        st.sampled_from(["", "+400 kW on 0001-01-01", f"+{'9' * 40} kW on 2027-01-01"]),
        st.tuples(NUMBER, DATE).map(lambda t: f"+{t[0]} kW on {t[1]}"),
    ),
)
def test_site_form_gives_errors_or_a_site_the_checks_accept(plan, **typed):
    from django.forms.models import model_to_dict

    from planner.facility import services
    from planner.facility.forms import SiteForm

    site = plan.sites.order_by("pk").first()
    data = {k: v for k, v in model_to_dict(site).items() if v is not None} | typed_only(typed)

    def check():
        form = SiteForm(data, instance=plan.sites.get(pk=site.pk), plan=plan)
        event("valid" if form.is_valid() else "refused")
        if form.is_valid():
            saved = services.site_save(
                plan=plan, site=form.save(commit=False), upgrades=form.cleaned_data["upgrades"]
            )
            evaluation = services.site_evaluate(plan=plan, site=saved)
            assert not evaluation.error, evaluation.error
        else:
            assert all(form.errors.values())

    _in_rollback(check)


@FORM_SETTINGS
@given(target_go_live=DATE, currency=st.sampled_from(["EUR", "eur", "", "EURO", "\x00"]))
def test_plan_form_gives_errors_or_a_plan(plan, target_go_live, currency):
    from planner.forms import PlanForm

    data = {"name": plan.name, "client": plan.client_id, "currency": currency}
    data["target_go_live"] = target_go_live

    def check():
        form = PlanForm(data, instance=plan, organisation=plan.organisation)
        event("valid" if form.is_valid() else "refused")
        if form.is_valid():
            form.save()
        else:
            assert all(form.errors.values())

    _in_rollback(check)


@FORM_SETTINGS
@given(quantity=NUMBER, hs_code=st.sampled_from(["", "8471.50", "84", "\x00", "8" * 20]))
def test_bom_line_form_gives_errors_or_a_saved_line(plan, quantity, hs_code):
    from sourcing import services
    from sourcing.forms import BomLineForm

    line = plan.bom_lines.order_by("pk").first()

    def check():
        form = BomLineForm({"quantity": quantity, "hs_code": hs_code}, offers=[])
        event("valid" if form.is_valid() else "refused")
        if form.is_valid():
            services.bom_line_update(
                line=line, user=None, quantity=form.cleaned_data["quantity"],
                pinned_offer=None, hs_code=form.cleaned_data["hs_code"],
            )  # fmt: skip
        else:
            assert all(form.errors.values())

    _in_rollback(check)


@FORM_SETTINGS
@given(
    unit_price=maybe(NUMBER),
    minimum_order_qty=maybe(NUMBER),
    lead_time_days=maybe(NUMBER),
    quoted_on=maybe(DATE),
    valid_until=maybe(DATE),
    freight_per_unit=maybe(NUMBER),
    price_breaks_text=st.one_of(
        st.sampled_from(["", "10: 1200", "0: 1", f"{'9' * 40}: 1", "10: nan", "10: 1e40"]),
        st.tuples(NUMBER, NUMBER).map(lambda t: f"{t[0]}: {t[1]}"),
    ),
)
def test_offer_form_gives_errors_or_a_saved_offer(plan, **typed):
    from django.forms.models import model_to_dict

    from sourcing.forms import OfferForm
    from sourcing.models import Offer
    from sourcing.views import _save_offer  # what the edit view does with a valid form

    offer = Offer.objects.filter(supplier__organisation=plan.organisation).first()
    data = {k: v for k, v in model_to_dict(offer).items() if v is not None}
    data["item"] = f"part:{offer.part_id}" if offer.part_id else f"server:{offer.server_id}"
    data.update(typed_only(typed))

    def check():
        form = OfferForm(data, instance=Offer.objects.get(pk=offer.pk))
        event("valid" if form.is_valid() else "refused")
        if form.is_valid():
            _save_offer(form)
        else:
            assert all(form.errors.values())

    _in_rollback(check)


@FORM_SETTINGS
@given(
    order_date=maybe(DATE),
    power_ready_on=maybe(DATE),
    spares_pct=maybe(NUMBER),
    leaf_radix=maybe(NUMBER),
    servers_per_rack=maybe(NUMBER),
    installation_days=maybe(NUMBER),
    brokerage_per_shipment=maybe(NUMBER),
)
def test_sourcing_settings_form_gives_errors_or_saved_settings(plan, **typed):
    from django.forms.models import model_to_dict

    from sourcing import services
    from sourcing.forms import SourcingSettingsForm

    current = services.sourcing_settings_get(plan=plan)
    data = {k: v for k, v in model_to_dict(current).items() if v is not None} | typed_only(typed)

    def check():
        form = SourcingSettingsForm(data, instance=services.sourcing_settings_get(plan=plan))
        event("valid" if form.is_valid() else "refused")
        if form.is_valid():
            form.save()
        else:
            assert all(form.errors.values())

    _in_rollback(check)


@FORM_SETTINGS
@given(
    horizon_months=maybe(NUMBER),
    server_price_usd=maybe(NUMBER),
    network_usd=maybe(NUMBER),
    spares_pct=maybe(NUMBER),
    residual_pct=maybe(NUMBER),
    cost_of_capital_pct=maybe(NUMBER),
    on_demand_usd_per_gpu_h=maybe(NUMBER),
    annual_cloud_price_decline_pct=maybe(NUMBER),
    growth_pct_per_month=maybe(NUMBER),
)
def test_tco_settings_form_gives_errors_or_inputs_the_engine_takes(plan, **typed):
    from django.forms.models import model_to_dict

    from planner.facility import selectors, services
    from planner.facility.forms import TcoSettingsForm

    current = selectors.tco_settings_get(plan=plan)
    data = {k: v for k, v in model_to_dict(current).items() if v is not None} | typed_only(typed)

    def check():
        form = TcoSettingsForm(data, instance=selectors.tco_settings_get(plan=plan))
        event("valid" if form.is_valid() else "refused")
        if form.is_valid():
            services.tco_settings_save(
                plan=plan, settings=form.save(commit=False), changed=form.has_changed()
            )
            services.tco_state(plan=plan)  # builds the engine inputs; refusals are "not ready"
        else:
            assert all(form.errors.values())

    _in_rollback(check)


@FORM_SETTINGS
@given(
    freight=maybe(NUMBER),
    insurance=maybe(NUMBER),
    ordered_expected=maybe(DATE),
    shipped_actual=maybe(DATE),
    installed_expected=maybe(DATE),
    charges_currency=maybe(st.sampled_from(["EUR", "usd", "XXX", "", "\x00"])),
)
def test_purchase_order_form_gives_errors_or_a_saved_order(plan, **typed):
    from django.forms.models import model_to_dict

    from sourcing.forms import PurchaseOrderForm
    from sourcing.models import PurchaseOrder

    order = plan.purchase_orders.order_by("pk").first()
    data = {k: v for k, v in model_to_dict(order).items() if v is not None} | typed_only(typed)

    def check():
        form = PurchaseOrderForm(
            data, instance=PurchaseOrder.objects.get(pk=order.pk), cross_border=True
        )
        event("valid" if form.is_valid() else "refused")
        if form.is_valid():
            form.save()
        else:
            assert all(form.errors.values())

    _in_rollback(check)
