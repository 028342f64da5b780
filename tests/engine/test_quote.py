"""Quote engine: markups by line > category > global, rounded unit prices, fees, totals."""

from decimal import Decimal

import pytest

from planner.engine.quote import CostLine, Fee, Markups, QuoteError, quote_totals, sell_line

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
    assert (rack.unit_sell, rack.sell, rack.margin) == (D("2062.50"), D("4125.00"), D("825.00"))
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
