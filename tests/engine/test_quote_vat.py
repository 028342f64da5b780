"""The quote with VAT the client cannot recover: not marked up, added at cost, by hand."""

from decimal import Decimal as D

import pytest

from planner.engine.quote import CostLine, Fee, Markups, QuoteError, quote_totals, sell_line


def test_vat_the_client_cannot_recover_is_passed_on_at_cost():
    # Server: landed 2 × 1,000 + import VAT 19 % kept by an exempt client 380 = 2,380.
    # Markup 10 % on 2,000: unit sell 1,100.00, sell 2,200.00. The VAT 380 is added at cost.
    # Rack: 30 % recovered: landed 500 + 0.7 × 95 = 566.50; markup 10 % on 500: 550.00.
    markups = Markups(global_pct=D(10))
    server = sell_line(CostLine("s", "server", "Server", 2, D("2380"), D("380")), markups, "EUR")
    rack = sell_line(CostLine("r", "rack", "Rack", 1, D("566.50"), D("66.50")), markups, "EUR")
    assert (server.unit_sell, server.sell, server.margin_in("EUR")) == (
        D("1100.00"),
        D("2200.00"),
        D(200),
    )
    assert (rack.sell, rack.margin_in("EUR")) == (D("550.00"), D(50))
    totals = quote_totals([server, rack], [Fee("design", "Design", D(2), "days", D(1000))], "EUR")
    assert totals.goods_sell == D("2750.00")
    assert totals.total_sell == D("4750.00")  # + 2,000 of fees
    assert totals.vat_not_recoverable == D("446.50")
    assert totals.total_to_client == D("5196.50")
    assert totals.goods_cost == D("2500.00")  # the cost basis less the VAT …
    assert totals.goods_cost + totals.vat_not_recoverable == D("2946.50")  # … = the landed cost
    assert totals.margin == D("250.00")


def test_fully_recoverable_vat_leaves_the_quote_as_it_was():
    line = sell_line(CostLine("s", "server", "Server", 2, D("2000")), Markups(D(10)), "EUR")
    totals = quote_totals([line], [], "EUR")
    assert (totals.total_sell, totals.vat_not_recoverable, totals.total_to_client) == (
        D("2200.00"), D(0), D("2200.00"),
    )  # fmt: skip


def test_vat_above_the_cost_is_refused():
    with pytest.raises(QuoteError, match="between 0 and its cost"):
        sell_line(CostLine("s", "server", "Server", 1, D("100"), D("150")), Markups(), "EUR")
