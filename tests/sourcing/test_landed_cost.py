"""Landed cost: the cheapest valid offer by default, the alternative, FX with its rate and
date, duty on the right customs value, and unknown duty shown as unknown."""

import re
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


def test_price_breaks_domestic_supply_and_unpriced_lines(sourced_plan, org_a):
    report = landed_cost_report(plan=sourced_plan, organisation=org_a)

    optic = _cost(report, "optic:optic-400g")
    # 16 switch-end optics (the DGX end takes twin-port modules): below the 32-unit break
    assert optic.landed.quantity_ordered == 16
    assert optic.landed.unit_price.amount == D("780")
    # The Dutch distributor delivers to a Dutch site: a domestic supply, whatever the origin —
    # no customs duty, no import VAT, no brokerage; 21 % Dutch VAT charged, recoverable.
    rack = _cost(report, "rack:42u").landed
    assert rack.supply_rule == "domestic" and rack.ship_from == "NL"
    assert rack.duty.amount == 0 and rack.brokerage.amount == 0
    assert rack.vat.amount == rack.goods.amount * D("0.21")
    assert rack.landed_cost_net.amount == rack.goods.amount
    assert "Domestic supply (NL → NL)" in rack.supply_rule_note
    assert optic.landed.supply_rule == "domestic" and optic.landed.origin_country == "TW"
    # The US-shipped servers cross the border: import VAT on CIF.
    assert _cost(report, "server:nvidia-dgx-h100").landed.supply_rule == "import"
    # Lines without an offer are not priced and counted.
    assert _cost(report, "cable:cable-fiber-mpo").problem == "no offer"
    assert not report.complete
    assert report.unpriced_lines == sum(1 for c in report.lines if c.problem)


def test_landed_cost_page(client, consultant_a, sourced_plan):
    client.force_login(consultant_a)

    page = client.get(reverse("sourcing:landed_cost", args=[sourced_plan.pk])).content.decode()

    assert "US Dist" in page and "Dutch Dist" in page
    assert "Domestic supply (NL → NL)" in page
    assert 'data-rule="import"' in page and 'data-rule="domestic"' in page
    assert "1 USD = 0.9200 EUR on 2026-07-31" in page
    assert "expired on 2026-05-31; not used" in page
    assert re.search(r"incomplete: \d+ lines? not priced", page)
    assert 'data-testid="not-priced">not priced' in page
    assert "ready 2026-12-21" in page


def test_cn_switch_into_us_is_not_priced_until_coverage_confirmed(
    client, consultant_a, sourced_plan, org_a, offers_a
):
    """A China-origin switch shipped from China into the US: Section 301 coverage of 8517.62 is
    not confirmed, so the line is "not priced" (never 0 %) until a maintainer confirms it."""
    from catalog.models import Part
    from sourcing.models import TariffMeasure
    from tests.sourcing.conftest import make_offer

    settings = sourcing_settings_get(plan=sourced_plan)
    settings.destination_country = "US"
    settings.save()
    switch = Part.objects.get(slug="switch-ib-64x400g")
    us = offers_a["server_us"].supplier
    make_offer(us, part=switch, unit_price=D("30000"), currency="USD", origin_country="CN",
               ship_from_country="CN", incoterm="FCA")  # fmt: skip
    BomLine.objects.create(
        plan=sourced_plan, part_key="manual:switch", category="switch", description="Switch",
        quantity=1, part=switch, hs_code="8517.62.0090", origin="manual",
    )  # fmt: skip

    landed = _cost(landed_cost_report(plan=sourced_plan, organisation=org_a), "manual:switch")
    assert landed.landed.status == "duty unknown — confirm coverage"
    assert landed.landed.duty is None and landed.landed.landed_cost_net is None
    client.force_login(consultant_a)
    page = client.get(reverse("sourcing:landed_cost", args=[sourced_plan.pk])).content.decode()
    assert "duty unknown — confirm coverage" in page and "Section 301 List 3" in page

    # Confirmed in the admin: 25 % on the transaction value 30,000 USD (IEEPA ended 24 Feb 2026).
    TariffMeasure.objects.filter(
        rule__destination="US", rule__hs_prefix="851762", name__startswith="Section 301"
    ).update(coverage_confirmed=True)
    landed = _cost(landed_cost_report(plan=sourced_plan, organisation=org_a), "manual:switch")
    goods_eur = D(30000) / D("1.087")
    assert round_money(landed.landed.duty.amount, "EUR") == round_money(goods_eur / 4, "EUR")


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
               ship_from_country="CN", incoterm="FCA", freight_per_unit=D("100"))  # fmt: skip
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


def test_snapshot_lines_say_which_rule_applied_and_what_is_not_priced(sourced_plan):
    from planner.sharing.snapshot import plan_snapshot

    bom = plan_snapshot(plan=sourced_plan)["bom"]
    rows = {row["description"]: row for row in bom["lines"]}
    rack = next(r for r in bom["lines"] if r["category"] == "rack")
    assert rack["supply_rule"] == "domestic" and rack["ship_from"] == "NL" and rack["priced"]
    assert "Domestic supply (NL → NL)" in rack["supply_rule_note"]
    unpriced = [r for r in rows.values() if not r["priced"]]
    assert unpriced and all(r["landed_net"] is None for r in unpriced)
    assert bom["unpriced_lines"] == len(unpriced)


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
