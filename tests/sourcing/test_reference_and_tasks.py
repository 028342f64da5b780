"""Tariffs, FX rates, suppliers and offers, the daily check, and the demo."""

from datetime import date, timedelta
from decimal import Decimal

from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from planner.engine.tariff_defaults import DEFAULT_TARIFF_RULES
from sourcing.models import (
    BomLine,
    FxRate,
    Offer,
    PurchaseOrder,
    SourcingFlag,
    Supplier,
    TariffMeasure,
    TariffRule,
)
from sourcing.services import purchase_order_create, purchase_order_update
from sourcing.tasks import sourcing_daily_check


def test_load_tariffs_is_idempotent_and_keeps_sources(db):
    call_command("load_tariffs")
    call_command("load_tariffs")

    assert TariffRule.objects.count() == len(DEFAULT_TARIFF_RULES)
    rule = TariffRule.objects.get(hs_prefix="847330", destination="US")
    assert "CBP" in rule.source
    names = set(TariffMeasure.objects.filter(rule=rule).values_list("name", flat=True))
    assert "Section 301 List 3 (9903.88.03)" in names
    measure = TariffMeasure.objects.get(rule__hs_prefix="85444290", name__startswith="Section 122")
    assert not measure.stacks and measure.end == date(2026, 7, 24)
    # Section 301 coverage of switches is not confirmed: stored as such, with its source.
    switch_301 = TariffMeasure.objects.get(
        rule__hs_prefix="851762", rule__destination="US", name__startswith="Section 301"
    )
    assert not switch_301.coverage_confirmed and "NOT confirmed" in switch_301.source
    # The dated IEEPA fentanyl steps (10 %, 20 %, 10 %) stored for the same rule.
    steps = TariffMeasure.objects.filter(
        rule=switch_301.rule, name__startswith="IEEPA fentanyl"
    ).order_by("start")
    assert [(m.pct, m.start, m.end) for m in steps] == [
        (10, date(2025, 2, 4), date(2025, 3, 3)),
        (20, date(2025, 3, 4), date(2025, 11, 9)),
        (10, date(2025, 11, 10), date(2026, 2, 23)),
    ]


def test_tariff_page_flags_unconfirmed_coverage(client, staff_a):
    call_command("load_tariffs")
    client.force_login(staff_a)

    page = client.get(reverse("sourcing:tariffs")).content.decode()

    assert 'data-testid="coverage-unconfirmed"' in page
    assert "IEEPA reciprocal duty — excluded (9903.01.32)" in page


def test_fx_csv_import_reports_line_numbers_and_saves_nothing(client, staff_a):
    client.force_login(staff_a)
    bad = (
        "from_currency,to_currency,rate,as_of,source\n"
        "EUR,USD,1.08,2026-07-31,ECB\n"
        "EUR,XXX,1.2,2026-07-31,\n"
        "EUR,GBP,-1,2026-07-31,\n"
        "EUR,JPY,160,2099-01-01,\n"
    )

    response = client.post(
        reverse("sourcing:fx"),
        {"action": "import", "file": SimpleUploadedFile("fx.csv", bad.encode())},
    )

    content = response.content.decode()
    assert response.status_code == 400
    assert "unknown currency &#x27;XXX&#x27;" in content
    assert "rate must be a number above zero" in content and "is in the future" in content
    assert '<td class="num">3</td>' in content and '<td class="num">5</td>' in content
    assert not FxRate.objects.exists()

    good = "from_currency,to_currency,rate,as_of\nEUR,USD,1.08,2026-07-31\n"
    client.post(
        reverse("sourcing:fx"),
        {"action": "import", "file": SimpleUploadedFile("fx.csv", good.encode())},
    )
    assert FxRate.objects.get().rate == Decimal("1.08")


def test_only_staff_change_fx_rates(client, consultant_a):
    client.force_login(consultant_a)
    assert client.get(reverse("sourcing:fx")).status_code == 200
    data = {"from_currency": "EUR", "to_currency": "USD", "rate": "1.1", "as_of": "2026-07-01"}
    assert client.post(reverse("sourcing:fx"), data).status_code == 403


def test_fx_form_rejects_unknown_currency_and_bad_rate(client, staff_a):
    client.force_login(staff_a)

    response = client.post(
        reverse("sourcing:fx"),
        {"from_currency": "eur", "to_currency": "EURO", "rate": "0", "as_of": "2026-07-01"},
    )

    content = response.content.decode()
    assert response.status_code == 400
    assert "A rate must be above zero." in content
    assert 'value="EURO"' in content


def test_offer_form_rejects_future_quotes_unknown_currency_and_negatives(
    client, consultant_a, suppliers_a, catalog
):
    nl, _ = suppliers_a
    client.force_login(consultant_a)
    from catalog.models import Part

    nic = Part.objects.get(slug="nic-400g")
    data = {
        "item": f"part:{nic.pk}", "unit_price": "-1", "currency": "ABC",
        "minimum_order_qty": "1", "lead_time_days": "30",
        "quoted_on": (date.today() + timedelta(days=3)).isoformat(),
        "valid_until": "2027-12-31", "origin_country": "tw", "incoterm": "FCA",
        "freight_per_unit": "0", "price_breaks_text": "10: 1000, x",
    }  # fmt: skip

    response = client.post(reverse("sourcing:offer_create", args=[nl.pk]), data)

    content = response.content.decode()
    assert response.status_code == 400
    assert "An offer cannot be quoted in the future." in content
    assert "Unknown currency &#x27;ABC&#x27;" in content
    assert "Cannot be negative." in content
    assert "is not &#x27;quantity: unit price&#x27;" in content
    assert 'value="10: 1000, x"' in content
    assert not Offer.objects.exists()

    data.update(unit_price="1150", currency="eur", quoted_on="2026-07-20",
                price_breaks_text="32: 1090, 64: 1040")  # fmt: skip
    response = client.post(reverse("sourcing:offer_create", args=[nl.pk]), data)
    offer = Offer.objects.get()
    assert response.status_code == 302
    assert (offer.part, offer.currency, offer.origin_country) == (nic, "EUR", "TW")
    assert [(b.min_qty, b.unit_price) for b in offer.price_breaks.all()] == [
        (32, Decimal("1090")), (64, Decimal("1040")),
    ]  # fmt: skip
    page = client.get(reverse("sourcing:supplier_detail", args=[nl.pk])).content.decode()
    assert "64+: 1,040.00 EUR" in page


def test_expired_offers_are_flagged_on_the_supplier_page(client, consultant_a, offers_a):
    client.force_login(consultant_a)
    nl = offers_a["server_nl_old"].supplier

    page = client.get(reverse("sourcing:supplier_detail", args=[nl.pk])).content.decode()

    assert page.count('data-testid="expired"') == 1


def test_suppliers_are_organisation_data(client, owner_a, suppliers_a, org_b):
    Supplier.objects.create(organisation=org_b, name="Beta Supply", country="DE")
    client.force_login(owner_a)

    page = client.get(reverse("sourcing:suppliers")).content.decode()

    assert "Dutch Dist" in page and "Beta Supply" not in page


def test_beat_schedule_runs_the_daily_check():
    entry = django_settings.CELERY_BEAT_SCHEDULE["sourcing-daily-check"]
    assert entry["task"] == "sourcing.tasks.sourcing_daily_check"


def test_daily_check_flags_overdue_steps_slips_and_expiring_offers(
    sourced_plan, org_a, suppliers_a, consultant_a, offers_a
):
    nl, us = suppliers_a
    order = purchase_order_create(plan=sourced_plan, organisation=org_a, supplier=us,
                                  user=consultant_a, logistics_owner="Mila")  # fmt: skip
    purchase_order_update(
        order=order, user=consultant_a,
        changes={"ordered_actual": date(2026, 8, 3), "shipped_actual": date(2026, 11, 11)},
    )  # fmt: skip
    offers_a["optic"].valid_until = date.today() + timedelta(days=5)
    offers_a["optic"].save()

    assert sourcing_daily_check.delay().get() >= 1

    messages = list(
        SourcingFlag.objects.filter(plan=sourced_plan).values_list("message", flat=True)
    )
    text = "\n".join(messages)
    assert "shipped on 2026-11-11, 10 days later than expected 2026-11-01" in text
    assert "Go-live moved from 2026-11-24 to 2026-12-04 (+10 days)" in text
    assert "PO-001 from US Dist: supplier lead time" in text
    assert f"expires on {offers_a['optic'].valid_until}" in text
    # A fixed problem is resolved at the next check.
    offers_a["optic"].valid_until = date(2030, 1, 1)
    offers_a["optic"].save()
    sourcing_daily_check.delay()
    expiring = SourcingFlag.objects.get(plan=sourced_plan, kind="offer_expiring")
    assert expiring.resolved_at is not None


def test_demo_without_chosen_configurations_still_builds(plan_a, org_a, consultant_a):
    from planner.demo import DEMO_EXTENSIONS
    from sourcing.demo import sourcing_demo_build

    assert sourcing_demo_build in DEMO_EXTENSIONS
    plan_a.workloads.update(chosen_accelerator=None, chosen_server=None)

    sourcing_demo_build(plan=plan_a, user=consultant_a)

    assert Supplier.objects.filter(organisation=org_a).count() == 2
    assert set(Offer.objects.values_list("currency", flat=True)) == {"EUR", "USD"}
    assert FxRate.objects.exists() and TariffRule.objects.exists()
    assert not BomLine.objects.filter(plan=plan_a).exists()


def test_demo_plan_has_bom_orders_and_a_late_shipment(db, catalog, org_a, consultant_a):
    from planner.demo import demo_plan_build
    from planner.facility.deployment import workload_deployments
    from sourcing.demo import sourcing_demo_build

    plan, _ = demo_plan_build(organisation=org_a, user=consultant_a)
    if not workload_deployments(plan=plan):  # sizing chose nothing: choose by hand
        from catalog.models import Accelerator, ServerPlatform

        plan.workloads.filter(name__startswith="Customer").update(
            chosen_accelerator=Accelerator.objects.get(slug="h100-sxm"),
            chosen_server=ServerPlatform.objects.get(slug="nvidia-dgx-h100"),
            chosen_precision="fp8", chosen_tensor_parallel=4, chosen_replicas=6,
            chosen_accelerators=24, chosen_servers=3,
        )  # fmt: skip
    sourcing_demo_build(plan=plan, user=consultant_a)
    sourcing_demo_build(plan=plan, user=consultant_a)  # idempotent

    assert BomLine.objects.filter(plan=plan).count() > 10
    # One order per supplier and site (each site's goods ship and clear on their own).
    sites = {line.site_id for line in BomLine.objects.filter(plan=plan, site__isnull=False)}
    all_orders = list(PurchaseOrder.objects.filter(plan=plan).order_by("pk"))
    assert len(all_orders) == 2 * len(sites)
    for order in all_orders:
        assert len({line.bom_line.site_id for line in order.lines.all()}) == 1
        site = order.lines.first().bom_line.site
        assert order.destination_country == site.country
    orders = {o.supplier.country: o for o in reversed(all_orders)}  # each supplier's first
    # On time so far: the steps whose expected date has passed happened on it, none later.
    nl = orders["NL"]
    assert nl.ordered_actual == nl.ordered_expected
    assert all(
        actual is None or (actual == expected and actual <= date.today())
        for actual, expected in (
            (nl.shipped_actual, nl.shipped_expected),
            (nl.delivered_actual, nl.delivered_expected),
        )
    )
    assert all(s["late_days"] is None for s in orders["NL"].steps())
    assert orders["US"].status == "shipped"
    assert orders["US"].shipped_actual > orders["US"].shipped_expected
    assert SourcingFlag.objects.filter(plan=plan, kind="slip").exists()
