"""Out-of-range numbers and dates are refused next to the field with the reason, never a 500.

Each case loads the real edit form of the demo plan, changes one value and posts it: the
answer is 400 with the range and its reason, the stored row is unchanged and the page that
reads it still renders.
"""

from __future__ import annotations

from datetime import date

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from planner.engine.errors import EngineInputError
from planner.engine.limits import DATE_MAX, DATE_MIN, check_date
from planner.engine.sweep import Workload as EngineWorkload
from tests.html_forms import post_forms

DATE_REFUSAL = "Give a date between 2000-01-01 and 2100-12-31"
FORTY_NINES = "9" * 40


def _own_form(form) -> bool:
    """The page's own form (posting to itself), not sign-out or delete buttons."""
    return not form.attrs.get("action")


def _form(client, url, pick=_own_form):
    page = client.get(url)
    assert page.status_code == 200
    forms = [f for f in post_forms(page.content.decode()) if pick(f)]
    return forms[0]


def _post_changed(client, url, changes: dict, pick=_own_form):
    form = _form(client, url, pick)
    data = form.data | changes
    return client.post(form.attrs.get("action") or url, data)


def _workload_url(plan):
    chat = plan.workloads.get(kind="chat")
    return chat, reverse("workload_sizing", args=[plan.pk, chat.pk])


def _is_workload_form(form):
    return form.attrs.get("id") == "workload-form"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("headroom_pct", "150", "Between 0 and 90 %"),
        ("headroom_pct", "１２３", "Between 0 and 90 %"),  # full-width digits read as 123
        ("peak_requests_per_s", "1e40", "Between 0.0001 and 1,000,000 requests/s"),
        ("peak_concurrency", FORTY_NINES, "Between 1 and 10,000,000 requests"),
        ("input_tokens_mean", FORTY_NINES, "Between 1 and 2,000,000 tokens"),
        ("ttft_ms", "0", "Between 1 and 600,000 ms"),
        ("daily_profile", "nan," * 23 + "1", "between 0 and 1"),
    ],
)
def test_workload_refuses_out_of_range(demo, signed_in, field, value, message):
    plan = demo[0]
    chat, url = _workload_url(plan)
    before = getattr(chat, field)
    response = _post_changed(signed_in, url, {field: value}, _is_workload_form)
    assert response.status_code == 400
    assert message in response.content.decode()
    chat.refresh_from_db()
    assert getattr(chat, field) == before
    assert signed_in.get(url).status_code == 200


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cooling_capacity_per_rack_kw", "0", "Between 0.1 and 500 kW"),
        ("servers_per_rack", "0", "Between 1 and 60 servers"),
        ("site_it_capacity_kw", "1e7", "Between 0 and 1,000,000 kW"),
        ("power_ready_date", "0001-01-01", DATE_REFUSAL),
        ("upgrades", "+400 kW on 0001-03-01", DATE_REFUSAL),
        ("upgrades", f"+{FORTY_NINES} kW on 2027-03-01", "Between 0 and 1,000,000 kW"),
    ],
)
def test_site_refuses_out_of_range(demo, signed_in, field, value, message):
    plan = demo[0]
    site = plan.sites.order_by("pk").first()
    url = reverse("facility:site_detail", args=[plan.pk, site.pk])
    response = _post_changed(
        signed_in, url, {field: value}, lambda f: f.attrs.get("data-testid") == "site-form"
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert signed_in.get(reverse("facility:site_list", args=[plan.pk])).status_code == 200


def test_bom_quantity_of_forty_nines_is_refused(demo, signed_in):
    plan = demo[0]
    line = plan.bom_lines.order_by("pk").first()
    edit = reverse("sourcing:bom_line_edit", args=[plan.pk, line.pk])
    response = _post_changed(
        signed_in,
        reverse("sourcing:bom", args=[plan.pk]),
        {f"line{line.pk}-quantity": FORTY_NINES},
        lambda f: f.attrs.get("action") == edit,
    )
    assert response.status_code == 400
    assert "Between 0 and 1,000,000 units" in response.content.decode()
    line.refresh_from_db()
    assert line.quantity < 10**6


@pytest.mark.parametrize(
    ("label", "url_name", "field", "pick"),
    [
        ("plan go-live", "plan_edit", "target_go_live", None),
        ("sourcing order date", "sourcing:settings", "order_date", None),
        ("power ready override", "sourcing:settings", "power_ready_on", None),
        ("PO date", "sourcing:order_detail", "ordered_expected", "order-form"),
        ("offer quoted", "sourcing:offer_edit", "quoted_on", "offer-form"),
        ("offer valid until", "sourcing:offer_edit", "valid_until", "offer-form"),
        ("sign-off", "sharing:checklist", "signed_on", "sign-off-form"),
    ],
)
@pytest.mark.parametrize("value", ["0001-01-01", "9999-12-31"])
def test_dates_outside_2000_to_2100_are_refused(
    demo, signed_in, label, url_name, field, pick, value
):
    plan = demo[0]
    if url_name == "sourcing:order_detail":
        url = reverse(url_name, args=[plan.pk, plan.purchase_orders.order_by("pk").first().pk])
    elif url_name == "sourcing:offer_edit":
        from sourcing.models import Offer

        offer = Offer.objects.filter(supplier__organisation=plan.organisation).first()
        url = reverse(url_name, args=[offer.pk])
    else:
        url = reverse(url_name, args=[plan.pk])
    response = _post_changed(
        signed_in,
        url,
        {field: value},
        (lambda f: f.attrs.get("data-testid") == pick) if pick else _own_form,
    )
    assert response.status_code == 400, label
    assert DATE_REFUSAL in response.content.decode(), label


def test_tariff_filter_with_a_nul_byte_is_a_400(demo, signed_in):
    response = signed_in.get("/sourcing/tariffs/?destination=%00")
    assert response.status_code == 400
    assert "Null characters are not allowed" in response.content.decode()
    response = signed_in.get("/sourcing/tariffs/?destination=nl")
    assert response.status_code == 200


def test_catalog_csv_with_a_nul_byte_is_refused(demo, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    user = demo[1]
    user.is_staff = True
    user.save()
    client.force_login(user)
    upload = SimpleUploadedFile("bad.csv", b"slug,name\nh100\x00,H100\n", "text/csv")
    response = client.post(reverse("catalog:import"), {"kind": "accelerators", "file": upload})
    assert response.status_code == 400
    assert "Line 2 holds a NUL character" in response.content.decode()


def test_fx_import_refuses_a_year_one_date(demo, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    user = demo[1]
    user.is_staff = True
    user.save()
    client.force_login(user)
    csv = b"from_currency,to_currency,rate,as_of\nEUR,USD,1.1,0001-01-01\nEUR,USD,1e30,2024-01-02\n"
    upload = SimpleUploadedFile("fx.csv", csv, "text/csv")
    response = client.post(reverse("sourcing:fx"), {"action": "import", "file": upload})
    assert response.status_code == 400
    body = response.content.decode()
    assert DATE_REFUSAL in body and "rate must be below" in body


@pytest.mark.parametrize(
    ("model_path", "field", "value"),
    [
        ("planner.models.Workload", "headroom_pct", 150),
        ("planner.models.Workload", "peak_requests_per_s", 1e40),
        ("planner.facility.models.Site", "servers_per_rack", 0),
        ("planner.facility.models.Site", "cooling_capacity_per_rack_kw", 0),
        ("planner.models.Plan", "target_go_live", date(1, 1, 1)),
        ("sourcing.models.BomLine", "quantity", 10**7),
    ],
)
def test_database_refuses_what_the_forms_refuse(demo, model_path, field, value):
    from django.utils.module_loading import import_string

    model = import_string(model_path)
    with pytest.raises(IntegrityError), transaction.atomic():
        model.objects.all().update(**{field: value})


@pytest.mark.parametrize(
    "changes",
    [
        {"headroom_pct": 150},
        {"peak_requests_per_s": 1e40},
        {"peak_requests_per_s": float("nan")},
        {"input_tokens": 0},
        {"ttft_ms": float("inf")},
        {"percentile": 50},
        {"precisions": ("fp3",)},
    ],
)
def test_engine_entry_refuses_what_the_forms_refuse(changes):
    base = {"input_tokens": 1000, "output_tokens": 200, "ttft_ms": 1000, "tpot_ms": 50}
    with pytest.raises(EngineInputError):
        EngineWorkload(**(base | {"peak_concurrency": 10} | changes))


def test_dates_at_the_bounds_are_accepted():
    assert check_date("d", DATE_MIN) == DATE_MIN
    assert check_date("d", DATE_MAX) == DATE_MAX
    with pytest.raises(EngineInputError, match="between 2000-01-01 and 2100-12-31"):
        check_date("d", date(1999, 12, 31))


def test_a_decimal_exactly_at_a_fractional_bound_is_accepted():
    """The float 0.1 is a shade above 0.1: compared as a float, a decimal field's 0.1 kW of
    cooling per rack (the lowest allowed) was refused; the bound is compared as a decimal."""
    from decimal import Decimal

    from django.core.exceptions import ValidationError

    from planner.engine.limits import COOLING_PER_RACK_KW, FEE_QUANTITY
    from planner.validation import in_range

    for limit, lowest, below in [
        (COOLING_PER_RACK_KW, Decimal("0.1"), Decimal("0.09")),
        (FEE_QUANTITY, Decimal("0.01"), Decimal("0.009")),
    ]:
        for validator in in_range(limit):
            validator(lowest)  # no error
        with pytest.raises(ValidationError):
            in_range(limit)[0](below)


@pytest.mark.parametrize("field", ["commit_1yr_discount_pct", "spot_discount_pct"])
@pytest.mark.parametrize("value", ["-5", "101"])
def test_a_cloud_discount_outside_0_to_100_is_refused_with_its_reason(
    demo, signed_in, field, value
):
    plan = demo[0]
    url = reverse("facility:tco", args=[plan.pk])
    assert signed_in.get(url).status_code == 200  # the page makes the plan's TCO settings
    plan.refresh_from_db()
    before = getattr(plan.tco_settings, field)
    response = _post_changed(
        signed_in, url, {field: value}, lambda f: f.attrs.get("data-testid") == "tco-settings"
    )
    assert response.status_code == 400
    assert "Between 0 and 100 %: a discount takes off part of the on-demand price" in (
        response.content.decode()
    )
    plan.tco_settings.refresh_from_db()
    assert getattr(plan.tco_settings, field) == before
