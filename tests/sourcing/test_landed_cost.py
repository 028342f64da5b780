"""Landed cost: the cheapest valid offer by default, the alternative, FX with its rate and
date, duty on the right customs value, and unknown duty shown as unknown."""

from datetime import date
from decimal import Decimal

from django.urls import reverse

from planner.engine.landed_cost import round_money
from sourcing.models import BomLine
from sourcing.services import landed_cost_report, sourcing_settings_get

D = Decimal


def _cost(report, part_key):
    return next(c for c in report.lines if c.line.part_key == part_key)


def test_cheapest_valid_offer_with_fx_freight_insurance_and_vat(sourced_plan, org_a, offers_a):
    report = landed_cost_report(plan=sourced_plan, organisation=org_a)

    server = _cost(report, "server:nvidia-dgx-h100")
    assert server.chosen == offers_a["server_us"]
    assert server.alternative == offers_a["server_nl"]
    landed = server.landed
    # 2 × 305,000 USD at 1 EUR = 1.0870 USD (2026-07-31).
    assert landed.goods.rate_date == date(2026, 7, 31)
    assert round_money(landed.goods.amount, "EUR") == round_money(D(610000) / D("1.087"), "EUR")
    goods, freight = D(610000) / D("1.087"), D(4800) / D("1.087")
    insurance = (goods + freight) * D("1.10") * D("0.3") / 100
    # NL values imports CIF: duty 0 % (ITA) and 21 % import VAT, recoverable.
    assert landed.customs_value_basis == "CIF"
    assert landed.duty.amount == 0
    # Freight and insurance are allocated in whole cents: compare within 2 cents.
    assert abs(landed.vat.amount - (goods + freight + insurance) * D("0.21")) <= D("0.02")
    assert landed.vat_recoverable
    assert abs(landed.landed_cost_net.amount - (goods + freight + insurance)) <= D("0.02")
    assert any("expired on 2026-05-31; not used" in w for w in server.warnings)
    # The alternative's cost and date: the Dutch offer at 596,000 EUR, ready 140 days later.
    alt = server.choice.alternative
    assert alt.net_cost.amount == D(596000) and alt.ready_on == date(2026, 12, 21)


def test_price_breaks_and_unknown_duty(sourced_plan, org_a):
    report = landed_cost_report(plan=sourced_plan, organisation=org_a)

    nic = _cost(report, "nic:scale-out")
    assert nic.landed.unit_price.amount == D("1090")  # break from 16 units
    rack = _cost(report, "rack:42u")
    assert rack.landed.status == "no rule — duty unknown"
    assert rack.landed.duty is None and rack.landed.landed_cost_net is None
    assert _cost(report, "cable:cable-fiber-mpo").problem == "no offer"
    assert not report.complete


def test_landed_cost_page(client, consultant_a, sourced_plan):
    client.force_login(consultant_a)

    page = client.get(reverse("sourcing:landed_cost", args=[sourced_plan.pk])).content.decode()

    assert "US Dist" in page and "Dutch Dist" in page
    assert "no rule — duty unknown" in page
    assert "1 USD = 0.9200 EUR on 2026-07-31" in page
    assert "expired on 2026-05-31; not used" in page
    assert "incomplete" in page
    assert "ready 2026-12-21" in page


def test_pinned_and_fastest_offers(client, consultant_a, sourced_plan, org_a, offers_a):
    line = BomLine.objects.get(plan=sourced_plan, part_key="server:nvidia-dgx-h100")
    client.force_login(consultant_a)
    client.post(
        reverse("sourcing:bom_line_edit", args=[sourced_plan.pk, line.pk]),
        {
            f"line{line.pk}-quantity": "2",
            f"line{line.pk}-hs_code": "8471.50",
            f"line{line.pk}-pinned_offer": offers_a["server_nl"].pk,
        },
    )
    assert _cost(landed_cost_report(plan=sourced_plan, organisation=org_a),
                 line.part_key).chosen == offers_a["server_nl"]  # fmt: skip

    line.refresh_from_db()
    line.pinned_offer = None
    line.save()
    offers_a["server_us"].lead_time_days = 200
    offers_a["server_us"].save()
    settings = sourcing_settings_get(plan=sourced_plan)
    settings.offer_strategy = "fastest"
    settings.save()
    assert _cost(landed_cost_report(plan=sourced_plan, organisation=org_a),
                 line.part_key).chosen == offers_a["server_nl"]  # fmt: skip


def test_missing_fx_rate_is_said_not_guessed(sourced_plan, org_a, fx):
    fx.delete()

    server = _cost(landed_cost_report(plan=sourced_plan, organisation=org_a),
                   "server:nvidia-dgx-h100")  # fmt: skip

    assert "No FX rate from USD to EUR" in server.problem


def test_us_destination_uses_transaction_value_and_section_301(sourced_plan, org_a, offers_a):
    """Into the US, a China-origin GPU board pays Section 301 List 3 on the goods only."""
    from catalog.models import Accelerator
    from tests.sourcing.conftest import make_offer

    settings = sourcing_settings_get(plan=sourced_plan)
    settings.destination_country = "US"
    settings.save()
    gpu = Accelerator.objects.get(slug="h100-sxm")
    _nl, us = offers_a["server_nl"].supplier, offers_a["server_us"].supplier
    make_offer(us, accelerator=gpu, unit_price=D("25000"), currency="USD", origin_country="CN",
               incoterm="FCA", freight_per_unit=D("100"))  # fmt: skip
    BomLine.objects.create(
        plan=sourced_plan, part_key="manual:gpu", category="accelerator", description="GPU",
        quantity=4, accelerator=gpu, hs_code="8473.30.1180", origin="manual",
    )  # fmt: skip

    gpu_cost = _cost(landed_cost_report(plan=sourced_plan, organisation=org_a), "manual:gpu")

    landed = gpu_cost.landed
    assert landed.customs_value_basis == "TRANSACTION_VALUE"
    goods_eur = D(100000) / D("1.087")
    assert round_money(landed.customs_value.amount, "EUR") == round_money(goods_eur, "EUR")
    assert round_money(landed.duty.amount, "EUR") == round_money(goods_eur * D("0.25"), "EUR")
    assert "Section 301 List 3 (9903.88.03)" in [c.name for c in landed.duty_components]


def test_an_expired_offer_is_named_in_a_row_under_its_own_line(client, consultant_a, sourced_plan,
                                                              offers_a):  # fmt: skip
    import re

    client.force_login(consultant_a)
    page = client.get(reverse("sourcing:landed_cost", args=[sourced_plan.pk])).content.decode()
    old = offers_a["server_nl_old"]
    rows = re.findall(r"<tr[^>]*>.*?</tr>", page, flags=re.S)
    notes = [i for i, row in enumerate(rows) if 'data-testid="line-warnings"' in row]
    assert notes
    expired = next(i for i in notes if "expired on 2026-05-31; not used" in rows[i])
    line = rows[expired - 1]  # the line's own row, right above its warnings
    assert 'data-testid="landed-line"' in line and "DGX" in line
    assert (
        f"The offer of {old.supplier.name} (250,000.00 EUR per unit, quoted 2026-03-01)"
        in (rows[expired])
    )
    assert f"Offer {old.pk} " not in page  # a row id says nothing to a reader
