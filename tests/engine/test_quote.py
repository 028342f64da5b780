"""Quote engine: markups by line > category > global, rounded unit prices, fees, totals."""

import re
from decimal import Decimal

import pytest

from planner.engine.quote import (
    CostLine,
    Fee,
    Markups,
    QuoteError,
    group_sells,
    quote_totals,
    sell_line,
)

D = Decimal
MARKUPS = Markups(global_pct=D(10), by_category=(("server", D(5)),), by_line=(("rack-42u", D(25)),))


def test_most_specific_markup_wins():
    assert MARKUPS.for_line("rack-42u", "rack") == (D(25), "line")
    assert MARKUPS.for_line("dgx-b200", "server") == (D(5), "category")
    assert MARKUPS.for_line("optic", "optic") == (D(10), "global")


def test_sell_price_by_hand():
    # 2 servers at 567,806.42 EUR landed: unit 283,903.21 × 1.05 = 298,098.3705 → 298,098.37
    server = sell_line(CostLine("dgx-b200", "server", "DGX", 2, D("567806.42")), MARKUPS, "EUR")
    assert server.unit_sell == D("298098.37") and server.sell == D("596196.74")
    # 2 racks at 3,300 landed: unit 1,650 × 1.25 = 2,062.50
    rack = sell_line(CostLine("rack-42u", "rack", "Rack", 2, D("3300")), MARKUPS, "EUR")
    assert (rack.unit_sell, rack.sell, rack.margin_in("EUR")) == (
        D("2062.50"),
        D("4125.00"),
        D("825.00"),
    )
    # JPY: whole yen. 3 at 1,000 landed, 10 %: 1,100 each
    yen = sell_line(CostLine("x", "optic", "Optic", 3, D("3000")), MARKUPS, "JPY")
    assert (yen.unit_sell, yen.sell) == (D("1100"), D("3300"))


def test_unpriced_line_has_no_sell_price_and_is_counted():
    unpriced = sell_line(CostLine("c", "cable", "Fibre", 16, None), MARKUPS, "EUR")
    rack = sell_line(CostLine("rack-42u", "rack", "Rack", 2, D("3300")), MARKUPS, "EUR")
    fees = [
        Fee("design", "Design", D(12), "days", D("1200")),
        Fee("support", "Support", D(3), "years", D("9500.005")),
    ]
    totals = quote_totals([unpriced, rack], fees, "EUR")
    assert unpriced.sell is None and totals.unpriced_lines == 1 and not totals.complete
    # 12 × 1,200 = 14,400; 3 × 9,500.005 = 28,500.015 → 28,500.02; goods 4,125.00
    assert totals.fees == D("42900.02")
    assert totals.total_sell == D("47025.02")
    assert (totals.goods_cost, totals.margin) == (D("3300"), D("825.00"))


def test_markup_limits():
    # A negative markup is an unstated discount: refused, with the range and its reason.
    with pytest.raises(QuoteError, match="Between 0 and 1,000 %"):
        Markups(global_pct=D(-1))
    assert Markups(global_pct=D(0)).for_line("x", "Network") == (D(0), "global")
    with pytest.raises(QuoteError):
        Markups(by_line=(("x", D(1001)),))


def test_a_zero_markup_is_a_margin_of_exactly_zero():
    # 3 units at 100.00 EUR landed: unit cost 33.333… → 33.33; at 0 % the unit sell is 33.33
    # and the amount 99.99. Margin = (33.33 − 33.33) × 3 = 0.00 (sell − landed would be −0.01).
    # 2 support years at 23,000.01: unit 11,500.005 → 11,500.01, amount 23,000.02; margin 0
    # (sell − landed would be +0.01, the "Margin on goods 0.01 EUR" seen at 0 %).
    lines = [
        sell_line(CostLine("x", "optic", "Optic", 3, D("100.00")), Markups(), "EUR"),
        sell_line(CostLine("s", "service", "Support", 2, D("23000.01")), Markups(), "EUR"),
    ]
    assert [x.sell for x in lines] == [D("99.99"), D("23000.02")]
    for line in lines:
        assert quote_totals([line], [], "EUR").margin == D("0.00")
    # At 10 %: unit 33.333… × 1.1 = 36.67 against a unit cost of 33.33: 3 × 3.34 = 10.02.
    ten = sell_line(CostLine("x", "optic", "Optic", 3, D("100.00")), Markups(D(10)), "EUR")
    assert quote_totals([ten], [], "EUR").margin == D("10.02")


def test_bom_services_are_grouped_with_the_fees_not_the_hardware():
    # Hardware: 2 racks at 3,300 landed, 25 % → 4,125.00. Services: installation 2 × 1,200
    # at 10 % → 2,640.00. Fee: 12 design days at 1,200 = 14,400.00.
    rack = sell_line(CostLine("rack-42u", "rack", "Rack", 2, D("3300")), MARKUPS, "EUR")
    install = sell_line(CostLine("i", "service", "Installation", 2, D("2400")), MARKUPS, "EUR")
    unpriced = sell_line(CostLine("b", "service", "Burn-in", 2, None), MARKUPS, "EUR")
    totals = quote_totals(
        [rack, install, unpriced], [Fee("design", "Design", D(12), "days", D("1200"))], "EUR"
    )
    assert (totals.hardware_sell, totals.services_sell) == (D("4125.00"), D("2640.00"))
    assert totals.services_and_fees == D("17040.00")
    assert totals.goods_sell == D("6765.00") and totals.total_sell == D("21165.00")
    assert group_sells([("service", D(5)), ("server", D(7)), ("service", None)]) == (D(7), D(5))


def test_payment_schedule_by_hand():
    from planner.engine.quote import milestone_words, parse_milestones, payment_schedule

    milestones = parse_milestones("40 % on order\n50% on delivery.\n10 % on acceptance")
    assert [milestone_words(m) for m in milestones] == [
        "40 % on order", "50 % on delivery", "10 % on acceptance",
    ]  # fmt: skip
    # 100,000.01 EUR: 40 % = 40,000.004 → 40,000.00; 50 % = 50,000.005 → 50,000.01; the last
    # takes the rest, 100,000.01 − 90,000.01 = 10,000.00: the amounts add up to the total.
    due = payment_schedule(milestones, D("100000.01"), "EUR")
    assert [d.amount for d in due] == [D("40000.00"), D("50000.01"), D("10000.00")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("30 % on order\n60 % on delivery", "add up to 90 %; they must add up to 100 %"),
        ("60 % on order\n50 % on delivery", "add up to 110 %; they must add up to 100 %"),
        ("Net 45.", "Line 1 ('Net 45.'): start each milestone with its percentage"),
        ("100 %", "Say when the 100 % falls due"),
        ("", "Give at least one payment milestone"),
    ],
)
def test_payment_milestones_are_refused_unless_they_add_up(text, message):
    from planner.engine.quote import parse_milestones

    with pytest.raises(QuoteError, match=re.escape(message)):
        parse_milestones(text)
