"""Landed cost: customs value, duty, import VAT, FX, allocation and offer choice by hand.

Rates come from planner.engine.tariff_defaults (reference facility_tco_sourcing.md C2-C5).
Amounts are exact Decimals; assertions on rounded values use round_money (HALF_UP to cents).
"""

from datetime import date
from decimal import Decimal as D

import pytest

from planner.engine.landed_cost import (
    NO_RULE,
    ExtraMeasure,
    FxRate,
    FxTable,
    LandedCostError,
    Money,
    Offer,
    PriceBreak,
    Shipment,
    ShipmentLine,
    TariffRule,
    allocate,
    choose_offer,
    find_tariff_rule,
    price_for_quantity,
    round_money,
    shipment_landed_cost,
)
from planner.engine.tariff_defaults import DEFAULT_TARIFF_RULES, SECTION_122, SECTION_232

AS_OF = date(2025, 6, 1)
FX = FxTable(
    (
        FxRate("USD", "EUR", D("0.90"), date(2025, 4, 1)),
        FxRate("USD", "EUR", D("0.92"), date(2025, 5, 30)),
        FxRate("USD", "EUR", D("0.95"), date(2025, 6, 15)),  # after AS_OF: never used
        FxRate("EUR", "GBP", D("0.80"), date(2025, 5, 1)),
    )
)


def offer(part="server:dgx", price="10000", ccy="EUR", origin="US", **kw) -> Offer:
    defaults = dict(
        supplier="Acme",
        part_key=part,
        unit_price=D(price),
        currency=ccy,
        lead_time_days=60,
        quoted_on=date(2025, 5, 1),
        valid_until=date(2025, 7, 31),
        origin_country=origin,
    )
    return Offer(**{**defaults, **kw})


def cost(lines, dest, freight, insurance, ccy="EUR", plan="EUR", as_of=AS_OF, **kw):
    shipment = Shipment(
        key="s1",
        destination=dest,
        lines=tuple(lines),
        freight=Money(D(freight), ccy),
        insurance=None if insurance is None else Money(D(insurance), ccy),
        brokerage=kw.pop("brokerage", Money.zero(ccy)),
        **kw,
    )
    return shipment_landed_cost(
        shipment, tariffs=DEFAULT_TARIFF_RULES, fx=FX, plan_currency=plan, as_of=as_of
    )


# --- EU: CIF basis ------------------------------------------------------------------------------


def test_germany_server_cif_duty_free_vat_19():
    # goods 10,000 + freight 500 + insurance 50 = CIF 10,550 EUR.
    # 8471.50 duty 0 % (ITA); VAT 19 % × 10,550 = 2,004.50.
    # gross = 10,550 + 2,004.50 = 12,554.50; net (VAT recoverable) = 10,550.
    result = cost([ShipmentLine(offer(), 1, "8471.50.0150")], "DE", "500", "50")
    line = result.lines[0]
    assert line.customs_value == Money(D("10550"), "EUR")
    assert line.customs_value_basis == "CIF"
    assert line.duty == Money(D(0), "EUR")
    assert line.vat.rounded() == D("2004.50")
    assert line.vat_recoverable
    assert line.landed_cost_gross.rounded() == D("12554.50")
    assert line.landed_cost_net.rounded() == D("10550.00")
    assert result.complete
    assert "ITA" in line.rule_source


def test_germany_dutiable_cables_and_value_allocation():
    # Shipment: server 10,000 + cables 2,000 (8544.42.90, EU 3.3 %); freight 600, insurance 60.
    # By value: server 10,000/12,000 → freight 500, insurance 50; cables → freight 100, ins. 10.
    # Cables: CIF = 2,000 + 100 + 10 = 2,110; duty 3.3 % × 2,110 = 69.63;
    #         VAT 19 % × (2,110 + 69.63) = 19 % × 2,179.63 = 414.1297 → 414.13.
    lines = [
        ShipmentLine(offer(), 1, "847150"),
        ShipmentLine(offer("cable:aoc", "20"), 100, "8544.42.90"),
    ]
    result = cost(lines, "DE", "600", "60")
    server, cables = result.lines
    assert (server.freight.amount, server.insurance.amount) == (D("500.00"), D("50.00"))
    assert (cables.freight.amount, cables.insurance.amount) == (D("100.00"), D("10.00"))
    assert cables.customs_value.amount == D("2110.00")
    assert cables.duty.amount == D("69.63")
    assert round_money(cables.vat.amount, "EUR") == D("414.13")
    assert server.vat.rounded() == D("2004.50")
    # Totals: duty 69.63; VAT 2,004.50 + 414.1297 = 2,418.6297 → 2,418.63.
    assert result.duty.rounded() == D("69.63")
    assert result.vat.rounded() == D("2418.63")
    assert result.vat_recoverable == result.vat
    # net = goods 12,000 + freight 600 + insurance 60 + duty 69.63 = 12,729.63.
    assert result.landed_cost_net.rounded() == D("12729.63")


def test_eu_vat_base_includes_inland_freight_to_first_destination():
    # DE: VAT on customs value + duty + transport to first destination (reference C4).
    # 19 % × (10,550 + 0 + 100) = 19 % × 10,650 = 2,023.50.
    result = cost(
        [ShipmentLine(offer(), 1, "847150")],
        "DE",
        "500",
        "50",
        inland_freight=Money(D(100), "EUR"),
    )
    assert result.lines[0].vat.rounded() == D("2023.50")


def test_eu_vat_rates_by_member_state():
    # Same CIF 10,550 into FR 20 % = 2,110.00, NL 21 % = 2,215.50, IE 23 % = 2,426.50.
    expected = {"FR": "2110.00", "NL": "2215.50", "IE": "2426.50"}
    for country, vat in expected.items():
        result = cost([ShipmentLine(offer(), 1, "847150")], country, "500", "50")
        assert result.lines[0].vat.rounded() == D(vat), country


def test_uk_alias_and_cable_duty_2_pct():
    # GB 8544.42.90 2.0 %: CIF 2,000 + 100 + 10 = 2,110 → duty 42.20; VAT 20 % × 2,152.20 = 430.44.
    result = cost([ShipmentLine(offer("cable:aoc", "20"), 100, "85444290")], "UK", "100", "10")
    assert result.lines[0].duty.rounded() == D("42.20")
    assert result.lines[0].vat.rounded() == D("430.44")


# --- US: transaction value, Section 301 / 232 / 122 -------------------------------------------------


def us_board(origin: str, qty: int = 1) -> ShipmentLine:
    return ShipmentLine(
        offer("gpu:h100-sxm", "10000", ccy="USD", origin=origin), qty, "8473.30.1180"
    )


def us_cost(lines, as_of=AS_OF, **kw):
    return cost(lines, "US", "500", "50", ccy="USD", plan="USD", as_of=as_of, **kw)


def test_us_duty_on_transaction_value_excluding_freight():
    # Taiwan origin: customs value = 10,000 (freight 500 and insurance 50 excluded);
    # duty 0 % (ITA); no VAT. gross = 10,000 + 500 + 50 = 10,550.
    line = us_cost([us_board("TW")]).lines[0]
    assert line.customs_value == Money(D("10000"), "USD")
    assert line.customs_value_basis == "TRANSACTION_VALUE"
    assert line.duty.amount == 0
    assert line.vat.amount == 0
    assert line.landed_cost_gross.rounded() == D("10550.00")


def test_us_section_301_stacks_by_origin_and_date():
    # CN origin on 2025-06-01: MFN 0 % + 301 List 3 25 % = 25 % × 10,000 = 2,500
    # (on the transaction value, not on 10,550 which would give 2,637.50).
    cn = us_cost([us_board("CN")]).lines[0]
    assert cn.duty.rounded() == D("2500.00")
    assert [c.name for c in cn.duty_components] == ["MFN duty", "Section 301 List 3 (9903.88.03)"]
    assert "9903.88.03" in cn.duty_components[1].source
    # Non-CN origin: no 301.
    assert us_cost([us_board("MY")]).lines[0].duty.amount == 0
    # Before the 25 % step (10 May 2019): outside the window → not applied.
    early = us_cost(
        [
            ShipmentLine(
                offer(
                    "gpu:v100",
                    "10000",
                    ccy="USD",
                    origin="CN",
                    quoted_on=date(2019, 1, 1),
                    valid_until=date(2019, 12, 31),
                ),
                1,
                "8473301180",
            )
        ],
        as_of=date(2019, 3, 1),
    )
    early_fx = early.lines[0]
    assert early_fx.duty.amount == 0


def test_us_section_232_only_when_confirmed_and_122_not_on_232():
    as_of = date(2026, 3, 1)
    board = offer(
        "gpu:h200",
        "10000",
        ccy="USD",
        origin="CN",
        quoted_on=date(2026, 2, 1),
        valid_until=date(2026, 4, 30),
    )
    fx = FxTable()
    # Not confirmed: 232 listed as a warning, duty = 301 only = 2,500.
    plain = shipment_landed_cost(
        Shipment("s", "US", (ShipmentLine(board, 1, "847330"),), Money(D(0), "USD"),
                 Money(D(0), "USD"), Money(D(0), "USD")),
        tariffs=DEFAULT_TARIFF_RULES, fx=fx, plan_currency="USD", as_of=as_of,
    )  # fmt: skip
    assert plain.duty.rounded() == D("2500.00")
    assert any(SECTION_232 in w for w in plain.warnings)
    # Confirmed (covered chip, not a U.S. data-center end use): 25 % + 25 % = 5,000.
    confirmed = shipment_landed_cost(
        Shipment("s", "US", (ShipmentLine(board, 1, "847330", confirmed_measures=frozenset({SECTION_232})),),
                 Money(D(0), "USD"), Money(D(0), "USD"), Money(D(0), "USD")),
        tariffs=DEFAULT_TARIFF_RULES, fx=fx, plan_currency="USD", as_of=as_of,
    )  # fmt: skip
    assert confirmed.duty.rounded() == D("5000.00")
    # A rule carrying both: 122 does not stack on 232 (reference C3 item 6).
    rule = TariffRule(
        "9999",
        "US",
        D(0),
        D(0),
        extra_measures=(
            ExtraMeasure(SECTION_232, (), D(25), date(2026, 1, 15)),
            ExtraMeasure(
                SECTION_122,
                (),
                D(10),
                date(2026, 2, 24),
                date(2026, 7, 24),
                stacks=False,
                not_stacked_on=(SECTION_232,),
            ),
        ),
    )
    line = ShipmentLine(board, 1, "9999.00")
    both = shipment_landed_cost(
        Shipment("s", "US", (line,), Money(D(0), "USD"), Money(D(0), "USD"), Money(D(0), "USD")),
        tariffs=[rule], fx=fx, plan_currency="USD", as_of=as_of,
    )  # fmt: skip
    assert both.duty.rounded() == D("2500.00")  # 232 only, 122 dropped
    assert any("does not stack" in w for w in both.warnings)


def test_us_cables_mfn_plus_301_plus_122_window():
    def cable_duty(origin: str, on: date) -> D:
        o = offer(
            "cable:aoc",
            "10",
            ccy="USD",
            origin=origin,
            quoted_on=date(2026, 1, 1),
            valid_until=date(2026, 12, 31),
        )
        ship = Shipment(
            "s", "US", (ShipmentLine(o, 100, "8544.42.9090"),), Money(D(0), "USD"),
            Money(D(0), "USD"), Money(D(0), "USD"),
        )  # fmt: skip
        res = shipment_landed_cost(
            ship, tariffs=DEFAULT_TARIFF_RULES, fx=FxTable(), plan_currency="USD", as_of=on
        )
        return res.duty.rounded()

    # 100 × 10 = 1,000 USD. CN on 2026-03-01: 2.6 + 25 (301) + 10 (122) = 37.6 % → 376.00.
    assert cable_duty("CN", date(2026, 3, 1)) == D("376.00")
    # Mexico origin: 2.6 + 10 = 12.6 % → 126.00.
    assert cable_duty("MX", date(2026, 3, 1)) == D("126.00")
    # After 122 lapses (24 Jul 2026): CN 2.6 + 25 = 27.6 % → 276.00.
    assert cable_duty("CN", date(2026, 8, 1)) == D("276.00")


def test_incoterm_cif_price_into_us_deducts_included_freight():
    # CIF price 10,550 includes freight 500 and insurance 50 → transaction value 10,000.
    o = offer("gpu:h100-sxm", "10550", ccy="USD", origin="TW", incoterm="CIF")
    result = us_cost([ShipmentLine(o, 1, "847330")])
    line = result.lines[0]
    assert line.customs_value.amount == D("10000.00")
    # Buyer pays only the price (freight and insurance already in it): 10,550.
    assert line.landed_cost_gross.rounded() == D("10550.00")


def test_ddp_taxes_paid_by_seller():
    o = offer(incoterm="DDP")
    line = cost([ShipmentLine(o, 1, "847150")], "DE", "500", "50").lines[0]
    assert line.status == "DDP — taxes paid by seller"
    # The DDP price already includes carriage and insurance, so they are not added again:
    # customs value 10,000; VAT 19 % × 10,000 = 1,900 — shown, but not in the buyer's cost.
    assert line.customs_value.amount == D("10000")
    assert line.vat.rounded() == D("1900.00")
    # Seller pays carriage and insurance under DDP too: buyer's cost = price 10,000.
    assert line.landed_cost_gross.rounded() == D("10000.00")


# --- India, Singapore ---------------------------------------------------------------------------


def test_india_cif_plus_landing_charge_and_igst():
    # AV = (10,000 + 500 + 50) × 1.01 = 10,655.50; BCD 0 %, SWS 10 % × 0 = 0;
    # IGST 18 % × 10,655.50 = 1,917.99.
    line = cost(
        [ShipmentLine(offer(ccy="USD"), 1, "84715000")], "IN", "500", "50", ccy="USD", plan="USD"
    ).lines[0]
    assert line.customs_value.amount == D("10655.5000")
    assert line.vat.rounded() == D("1917.99")


def test_singapore_gst_rate_follows_the_date():
    # 2023: 8 % of 10,550 = 844.00; from 2024: 9 % = 949.50.
    early = offer(quoted_on=date(2023, 5, 1), valid_until=date(2023, 12, 31))
    r2023 = cost([ShipmentLine(early, 1, "847150")], "SG", "500", "50", as_of=date(2023, 6, 1))
    r2025 = cost([ShipmentLine(offer(), 1, "847150")], "SG", "500", "50")
    assert r2023.lines[0].vat.rounded() == D("844.00")
    assert r2025.lines[0].vat.rounded() == D("949.50")


def test_longest_hs_prefix_wins():
    rule = find_tariff_rule(DEFAULT_TARIFF_RULES, "8544.42.10", "DE", AS_OF)
    assert rule.duty_pct == 0
    assert find_tariff_rule(DEFAULT_TARIFF_RULES, "8544.42.90.00", "DE", AS_OF).duty_pct == D("3.3")


def test_every_seed_rule_has_a_source():
    assert DEFAULT_TARIFF_RULES
    assert all(rule.source for rule in DEFAULT_TARIFF_RULES)
    assert all(m.source for rule in DEFAULT_TARIFF_RULES for m in rule.extra_measures)


# --- Insurance default, allocation ---------------------------------------------------------------


def test_default_insurance_is_pct_of_110_pct_of_goods_plus_freight():
    # 0.3 % × 110 % × (10,000 + 500) = 0.003 × 11,550 = 34.65.
    line = cost([ShipmentLine(offer(), 1, "847150")], "DE", "500", None).lines[0]
    assert line.insurance.amount == D("34.65")
    assert line.customs_value.rounded() == D("10534.65")


def test_allocation_by_weight_sums_exactly_largest_remainder():
    # 333.33 by weights 7 / 2.5 / 0.5 kg: exact cents 23,333.1 / 8,333.25 / 1,666.65;
    # floors 23,333 + 8,333 + 1,666 = 33,332 → 1 cent left to the largest remainder (0.65).
    shares = allocate(Money(D("333.33"), "EUR"), [D(7), D("2.5"), D("0.5")])
    assert [s.amount for s in shares] == [D("233.33"), D("83.33"), D("16.67")]
    assert sum(s.amount for s in shares) == D("333.33")
    # Equal thirds of 100.00: 33.34 + 33.33 + 33.33 (ties go to the first line).
    thirds = allocate(Money(D("100"), "EUR"), [D(1), D(1), D(1)])
    assert [s.amount for s in thirds] == [D("33.34"), D("33.33"), D("33.33")]
    # JPY has no minor unit: 1,000 yen / 3 → 334 + 333 + 333.
    yen = allocate(Money(D(1000), "JPY"), [D(1), D(1), D(1)])
    assert [s.amount for s in yen] == [D(334), D(333), D(333)]


def test_shipment_allocation_by_weight_and_quantity():
    lines = [
        ShipmentLine(offer(), 2, "847150", unit_weight_kg=D(35)),  # 70 kg
        ShipmentLine(offer("switch:sn5600", "5000"), 1, "851762", unit_weight_kg=D(20)),  # 20 kg
        ShipmentLine(offer("cable:aoc", "20"), 100, "85444290", unit_weight_kg=D("0.1")),  # 10 kg
    ]
    # Freight 1,000 by weight (100 kg): 700 / 200 / 100.
    by_weight = cost(lines, "DE", "1000", "0", allocation="weight")
    assert [ln.freight.amount for ln in by_weight.lines] == [D("700.00"), D("200.00"), D("100.00")]
    # By quantity (2 + 1 + 100 = 103 units), in cents: 100,000 × 2/103 = 1,941.75,
    # × 1/103 = 970.87, × 100/103 = 97,087.38; floors sum to 99,998 → the 2 cents left go to
    # the largest remainders .87 (2nd line) and .75 (1st line) → 19.42 / 9.71 / 970.87.
    by_qty = cost(lines, "DE", "1000", "0", allocation="quantity")
    amounts = [ln.freight.amount for ln in by_qty.lines]
    assert amounts == [D("19.42"), D("9.71"), D("970.87")]
    assert sum(amounts) == D("1000.00")
    with pytest.raises(LandedCostError, match="unit_weight_kg"):
        cost([ShipmentLine(offer(), 1, "847150")], "DE", "10", "0", allocation="weight")


# --- Price breaks, minimum order -----------------------------------------------------------------


def test_price_breaks_and_minimum_order():
    o = offer(
        "nic:cx7",
        "100",
        price_breaks=(PriceBreak(10, D(90)), PriceBreak(50, D(80))),
        minimum_order_qty=5,
    )
    # 3 requested → raised to the minimum 5 at the base price 100 = 500.
    qty, unit, note = price_for_quantity(o, 3)
    assert (qty, unit) == (5, D(100))
    assert note == "minimum order 5 raised the quantity from 3 to 5"
    # 12 → break at 10: 90; 50 → break at 50: 80.
    assert price_for_quantity(o, 12)[:2] == (12, D(90))
    assert price_for_quantity(o, 50)[:2] == (50, D(80))
    line = cost([ShipmentLine(o, 3, "851762")], "DE", "0", "0").lines[0]
    assert (line.quantity_requested, line.quantity_ordered) == (3, 5)
    assert line.goods.amount == D(500)
    assert "minimum order" in line.notes[0]


# --- Currency conversion -------------------------------------------------------------------------


def test_conversion_carries_rate_and_date():
    # 10,000 USD at the latest rate on or before 2025-06-01: 0.92 of 2025-05-30 → 9,200 EUR.
    line = cost([ShipmentLine(offer(ccy="USD"), 1, "847150")], "DE", "500", "50", ccy="USD").lines[
        0
    ]
    assert line.goods.amount == D("9200.00")
    assert (line.goods.rate, line.goods.rate_date) == (D("0.92"), date(2025, 5, 30))
    assert line.goods.source == Money(D("10000"), "USD")
    # Freight 500 USD → 460 EUR, insurance 50 → 46; CIF 9,706; VAT 19 % = 1,844.14.
    assert line.customs_value.amount == D("9706.00")
    assert line.vat.rounded() == D("1844.14")


def test_inverse_rate_and_missing_rate():
    # EUR→GBP 0.80 → GBP→EUR 1.25.
    converted = FX.convert(Money(D(100), "GBP"), "EUR", AS_OF)
    assert (converted.amount, converted.rate, converted.rate_date) == (
        D("125.00"),
        D("1.25"),
        date(2025, 5, 1),
    )
    with pytest.raises(LandedCostError, match="No FX rate from JPY to EUR"):
        FX.convert(Money(D(100), "JPY"), "EUR", AS_OF)
    with pytest.raises(LandedCostError, match="No FX rate from USD to EUR on or before 2025-01-01"):
        FX.convert(Money(D(100), "USD"), "EUR", date(2025, 1, 1))


def test_unknown_currency_is_rejected():
    with pytest.raises(LandedCostError, match="Unknown currency 'XYZ'"):
        Money(D(1), "XYZ")
    with pytest.raises(LandedCostError, match="Unknown currency 'EURO'"):
        FX.convert(Money(D(1), "EUR"), "EURO", AS_OF)
    with pytest.raises(LandedCostError, match="Unknown currency"):
        cost([ShipmentLine(offer(ccy="EUR"), 1, "847150")], "DE", "0", "0", plan="ABC")


def test_rounding_rule_half_up_to_minor_unit():
    assert round_money(D("0.005"), "EUR") == D("0.01")
    assert round_money(D("414.1297"), "EUR") == D("414.13")
    assert round_money(D("2.5"), "JPY") == D("3")


# --- Bad input, unknown duty, expiry -------------------------------------------------------------


def test_negative_quantity_rejected():
    with pytest.raises(LandedCostError, match="cannot be negative"):
        cost([ShipmentLine(offer(), -1, "847150")], "DE", "0", "0")


def test_hs_without_rule_is_unknown_not_zero():
    # India has no seeded rule for 8517.62 (duties disputed, reference C2): duty None.
    lines = [
        ShipmentLine(offer(ccy="USD"), 1, "847150"),
        ShipmentLine(offer("switch:sn5600", "5000", ccy="USD"), 1, "8517.62.00"),
    ]
    result = cost(lines, "IN", "0", "0", ccy="USD", plan="USD")
    switch = result.lines[1]
    assert switch.status == NO_RULE == "no rule — duty unknown"
    assert switch.duty is None and switch.vat is None and switch.landed_cost_net is None
    assert not result.complete
    assert any("duty unknown" in w for w in result.warnings)
    # Totals cover only the known line: IGST 18 % × 10,000 × 1.01 = 1,818.00.
    assert result.vat.rounded() == D("1818.00")


def test_offer_quoted_in_the_future_rejected():
    future = offer(quoted_on=date(2025, 7, 1))
    with pytest.raises(LandedCostError, match="quoted on 2025-07-01, after the as-of date"):
        cost([ShipmentLine(future, 1, "847150")], "DE", "0", "0")


def test_expired_offer_flagged_in_shipment():
    stale = offer(quoted_on=date(2025, 1, 1), valid_until=date(2025, 3, 31))
    result = cost([ShipmentLine(stale, 1, "847150")], "DE", "0", "0")
    assert any("expired on 2025-03-31" in w for w in result.warnings)


def test_unknown_destination_and_mixed_incoterms_rejected():
    with pytest.raises(LandedCostError, match="No customs valuation rule for destination BR"):
        cost([ShipmentLine(offer(), 1, "847150")], "BR", "0", "0")
    lines = [ShipmentLine(offer(), 1, "847150"), ShipmentLine(offer(incoterm="DAP"), 1, "847150")]
    with pytest.raises(LandedCostError, match="mixes Incoterms"):
        cost(lines, "DE", "0", "0")


# --- Offer choice --------------------------------------------------------------------------------


def _offers():
    return [
        offer(supplier="Cheap", price="9000", lead_time_days=120, offer_id="cheap"),
        offer(supplier="Fast", price="11000", lead_time_days=30, offer_id="fast"),
        offer(
            supplier="Stale",
            price="8000",
            lead_time_days=10,
            offer_id="stale",
            quoted_on=date(2025, 1, 1),
            valid_until=date(2025, 2, 28),
        ),
    ]


def _choose(**kw):
    return choose_offer(
        _offers(),
        quantity=1,
        hs_code="847150",
        destination="DE",
        tariffs=DEFAULT_TARIFF_RULES,
        fx=FX,
        plan_currency="EUR",
        as_of=AS_OF,
        **kw,
    )


def test_choose_cheapest_valid_offer_with_fastest_as_alternative():
    choice = _choose()
    # Stale (8,000) is expired → skipped. Cheap: 9,000 + default insurance
    # 0.3 % × 110 % × 9,000 = 29.70 → net 9,029.70 (VAT recoverable) < Fast 11,036.30.
    assert choice.chosen.offer.offer_id == "cheap"
    assert choice.chosen.net_cost.rounded() == D("9029.70")
    assert choice.alternative.net_cost.rounded() == D("11036.30")
    assert choice.chosen.ready_on == date(2025, 9, 29)  # 1 Jun + 120 days
    assert choice.alternative.offer.offer_id == "fast"
    assert choice.alternative.ready_on == date(2025, 7, 1)  # 1 Jun + 30 days
    assert any("stale" in w and "not used" in w for w in choice.warnings)


def test_choose_fastest_offer():
    choice = _choose(strategy="fastest")
    assert choice.chosen.offer.offer_id == "fast"
    assert choice.alternative.offer.offer_id == "cheap"


def test_pinned_expired_offer_used_with_warning():
    choice = _choose(strategy="pinned", pinned_offer_id="stale")
    assert choice.chosen.offer.offer_id == "stale"
    assert choice.chosen.expired
    assert any("Pinned offer stale expired" in w for w in choice.warnings)
    with pytest.raises(LandedCostError, match="not among the offers"):
        _choose(strategy="pinned", pinned_offer_id="nope")


def test_no_valid_offer_raises():
    with pytest.raises(LandedCostError, match="every offer expired"):
        choose_offer(
            [_offers()[2]],
            quantity=1,
            hs_code="847150",
            destination="DE",
            tariffs=DEFAULT_TARIFF_RULES,
            fx=FX,
            plan_currency="EUR",
            as_of=AS_OF,
        )
