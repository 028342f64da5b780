"""The buyer's VAT recovery and conditional tariff measures, by hand.

A VAT-exempt buyer (a bank: Directive 2006/112/EC Art. 135(1)(a-g), no deduction under Art. 168)
bears all the VAT it pays as a cost; a partly exempt buyer deducts its pro-rata (Art. 173); a
fully taxable buyer recovers it all (the figures are those of before the setting existed).

A conditional measure (Section 232 on 8471.50, "U.S. data-center end use is exempt") is left
out of the duty but reported with what it would cost if it applies; never a silent 0 %.
"""

from datetime import date
from decimal import Decimal as D

import pytest

from planner.engine.landed_cost import (
    FxTable,
    LandedCostError,
    Money,
    Offer,
    Shipment,
    ShipmentLine,
    choose_offer,
    landed_totals,
    plan_landed_totals,
    shipment_landed_cost,
)
from planner.engine.tariff_defaults import DEFAULT_TARIFF_RULES, SECTION_232

AS_OF = date(2026, 5, 1)
FX = FxTable()


def offer(price="250000", ccy="EUR", origin="TW", ship_from="TW", **kw) -> Offer:
    return Offer(
        **{
            "supplier": "Acme",
            "part_key": "server:hgx",
            "unit_price": D(price),
            "currency": ccy,
            "lead_time_days": 60,
            "quoted_on": date(2026, 4, 1),
            "valid_until": date(2026, 7, 31),
            "origin_country": origin,
            "ship_from": ship_from,
            **kw,
        }
    )


def land(o, dest, *, recovery, qty=1, hs="8471.50.0150", freight="2400", insurance="800",
         brokerage="350", ccy="EUR", **line_kw):  # fmt: skip
    return shipment_landed_cost(
        Shipment(
            "s1", dest, (ShipmentLine(o, qty, hs, **line_kw),), Money(D(freight), ccy),
            Money(D(brokerage), ccy), Money(D(insurance), ccy),
        ),
        tariffs=DEFAULT_TARIFF_RULES, fx=FX, plan_currency=ccy, as_of=AS_OF,
        vat_recovery_pct=D(recovery),
    )  # fmt: skip


# Taiwan server into Germany, FCA: CIF = 250,000 + 2,400 + 800 = 253,200; duty 0 % (ITA).
# Import VAT 19 % × 253,200 = 48,108. Paid = 253,200 + 350 = 253,550; gross = 301,658.


def test_fully_recoverable_buyer_unchanged():
    line = land(offer(), "DE", recovery="100").lines[0]
    assert line.vat.amount == D("48108.00")
    assert line.vat_recovered.amount == D("48108.00")
    assert line.vat_not_recovered.amount == 0
    assert line.landed_cost_gross.amount == D("301658.00")
    assert line.landed_cost_net.amount == D("253550.00")  # as before: gross − all the VAT


def test_vat_exempt_bank_bears_all_import_vat():
    result = land(offer(), "DE", recovery="0")
    line = result.lines[0]
    assert line.vat_recovered.amount == 0
    assert line.vat_not_recovered.amount == D("48108.00")
    # net = 253,550 + 48,108 = 301,658 = gross: the whole VAT is a cost.
    assert line.landed_cost_net.amount == D("301658.00")
    assert result.vat_recoverable.amount == 0
    assert result.vat_not_recoverable.amount == D("48108.00")
    assert "not recoverable by the buyer" in line.supply_rule_note


def test_partially_exempt_buyer_recovers_its_share():
    # 30 % recoverable: recovered 0.30 × 48,108 = 14,432.40; kept 33,675.60;
    # net = 253,550 + 33,675.60 = 287,225.60.
    result = land(offer(), "DE", recovery="30")
    line = result.lines[0]
    assert line.vat_recovered.amount == D("14432.40")
    assert line.vat_not_recovered.amount == D("33675.60")
    assert line.landed_cost_net.amount == D("287225.60")
    totals = landed_totals([result], "EUR")
    assert totals.vat_recoverable.amount == D("14432.40")
    assert totals.vat_not_recoverable.amount == D("33675.60")
    plan = plan_landed_totals([totals, totals], "EUR")
    assert plan.net.amount == D("574451.20")
    assert plan.vat_not_recoverable.amount == D("67351.20")


def test_bank_import_vat_of_the_issue():
    # The issue's bank: import VAT base 2,715,605 EUR at 19 % = 515,964.95, all a cost when
    # exempt. One line of goods 2,715,605 with no freight, insurance or brokerage.
    result = land(
        offer(price="2715605"), "DE", recovery="0", freight="0", insurance="0", brokerage="0"
    )
    assert result.vat.amount == D("515964.95")
    assert result.vat_recoverable.amount == 0
    assert result.landed_cost_net.amount == D("2715605") + D("515964.95")


def test_domestic_supply_vat_exempt_buyer():
    # German supplier to a German bank: 100,000 + 19 % VAT 19,000 charged by the supplier.
    # Freight (FCA, buyer pays) 1,000 + insurance 0: paid 101,000 (no brokerage, no border).
    result = land(offer("100000", origin="DE", ship_from="DE"), "DE", recovery="0",
                  freight="1000", insurance="0", brokerage="0")  # fmt: skip
    line = result.lines[0]
    assert line.supply_rule == "domestic"
    assert line.vat.amount == D("19000.00")
    assert line.vat_not_recovered.amount == D("19000.00")
    assert line.landed_cost_net.amount == D("120000.00")


def test_intra_eu_reverse_charge_is_a_cost_to_an_exempt_buyer():
    # Dutch supplier to a German buyer: zero-rated; the buyer self-accounts DE 19 % on 100,000 =
    # 19,000. Fully taxable: deducted, net cash 0. 30 % recoverable: 13,300 stays a cost.
    full = land(offer("100000", origin="NL", ship_from="NL"), "DE", recovery="100",
                freight="0", insurance="0", brokerage="0").lines[0]  # fmt: skip
    assert full.reverse_charge_vat.amount == D("19000.00")
    assert full.landed_cost_net.amount == D("100000")
    part = land(offer("100000", origin="NL", ship_from="NL"), "DE", recovery="30",
                freight="0", insurance="0", brokerage="0")  # fmt: skip
    line = part.lines[0]
    assert line.vat_not_recovered.amount == D("13300.00")
    assert line.landed_cost_net.amount == D("113300.00")
    assert part.vat_recoverable.amount == 0  # deducted in the same return: no cash to reclaim
    assert part.vat_not_recoverable.amount == D("13300.00")


def test_offer_choice_counts_vat_the_buyer_cannot_recover():
    # Exempt buyer; default insurance 0.3 % × 110 % = 0.33 % of the goods (no freight).
    # German offer: 100,000 + 330 + 19 % VAT on the price 19,000 = 119,330.
    # Dutch offer: 118,000 + 389.40 + reverse charge 19 % × 118,000 = 22,420 kept = 140,809.40.
    # Taiwanese offer: CIF 110,000 + 363 = 110,363; import VAT 19 % = 20,968.97 kept:
    # 131,331.97. Fully taxable, the same offers cost 100,330, 118,389.40 and 110,363.
    offers = [
        offer("100000", origin="DE", ship_from="DE", offer_id="de"),
        offer("118000", origin="NL", ship_from="NL", offer_id="nl"),
        offer("110000", offer_id="tw"),
    ]
    choice = choose_offer(offers, quantity=1, hs_code="847150", destination="DE",
                          tariffs=DEFAULT_TARIFF_RULES, fx=FX, plan_currency="EUR", as_of=AS_OF,
                          vat_recovery_pct=D(0))  # fmt: skip
    costs = {e.offer.offer_id: e.net_cost.amount for e in choice.evaluations}
    assert {k: round(v, 2) for k, v in costs.items()} == {
        "de": D("119330.00"),
        "nl": D("140809.40"),
        "tw": D("131331.97"),
    }
    assert choice.chosen.offer.offer_id == "de"
    taxable = choose_offer(offers, quantity=1, hs_code="847150", destination="DE",
                           tariffs=DEFAULT_TARIFF_RULES, fx=FX, plan_currency="EUR", as_of=AS_OF)  # fmt: skip
    costs = {e.offer.offer_id: round(e.net_cost.amount, 2) for e in taxable.evaluations}
    assert costs == {"de": D("100330.00"), "nl": D("118389.40"), "tw": D("110363.00")}


@pytest.mark.parametrize("bad", ["-1", "100.01", "NaN"])
def test_recovery_outside_0_to_100_is_refused(bad):
    with pytest.raises(LandedCostError, match="between 0 and 100"):
        land(offer(), "DE", recovery=bad)


# --- Conditional measures ------------------------------------------------------------------


def test_conditional_us_measure_is_reported_with_its_exposure():
    # Taiwan-made server into the US, 250,000 USD, FCA: transaction value = goods = 250,000
    # (19 U.S.C. §1401a: freight and insurance excluded). MFN 0 % (ITA). Section 232 (25 %,
    # in force from 15 Jan 2026) depends on the end use: left out, exposure 25 % × 250,000 =
    # 62,500 USD (US has no import VAT, so nothing on top).
    result = land(offer(ccy="USD"), "US", recovery="100", ccy="USD")
    line = result.lines[0]
    assert line.status == "ok"
    assert line.duty.amount == 0
    [measure] = line.measures_to_confirm
    assert measure.name == SECTION_232
    assert measure.pct == D(25)
    assert "end use" in measure.condition
    assert measure.exposure == Money(D("62500.00"), "USD")
    assert line.exposure_to_confirm == Money(D("62500.00"), "USD")
    assert result.exposure_to_confirm.amount == D("62500.00")
    assert result.measures_to_confirm == 1
    totals = landed_totals([result], "USD")
    assert (totals.measures_to_confirm, totals.exposure_to_confirm.amount) == (1, D("62500.00"))


def test_confirmed_conditional_measure_is_in_the_duty_not_to_confirm():
    result = land(offer(ccy="USD"), "US", recovery="100", ccy="USD",
                  confirmed_measures=frozenset({SECTION_232}))  # fmt: skip
    line = result.lines[0]
    assert line.duty.amount == D("62500.00")
    assert line.measures_to_confirm == ()
    assert result.exposure_to_confirm.amount == 0


def test_excluded_conditional_measure_is_not_to_confirm():
    result = land(offer(ccy="USD"), "US", recovery="100", ccy="USD",
                  excluded_measures=frozenset({SECTION_232}))  # fmt: skip
    assert result.lines[0].measures_to_confirm == ()
    assert result.measures_to_confirm == 0


def test_no_conditional_measure_before_it_is_in_force():
    early = offer(ccy="USD", quoted_on=date(2025, 12, 1), valid_until=date(2026, 3, 1))
    result = shipment_landed_cost(
        Shipment("s1", "US", (ShipmentLine(early, 1, "847150"),), Money(D(0), "USD"),
                 Money(D(0), "USD"), Money(D(0), "USD")),
        tariffs=DEFAULT_TARIFF_RULES, fx=FX, plan_currency="USD", as_of=date(2026, 1, 14),
    )  # fmt: skip
    assert result.lines[0].measures_to_confirm == ()
