"""The owned option's capex is the priced BOM at landed cost (the quote's cost basis), and
power and space are charged on each site's load with its network gear.

Hand calculation (plan currency EUR, 0.8 EUR per USD):
  server  2 × goods 600,000, landed 606,000      → servers 600,000, shipping 6,000
  switch  1 × goods  10,000, landed  10,100      → network  10,000, shipping   100
  storage 4 × goods   4,000, landed   4,000      → storage   4,000
  rack    1 × goods   3,000, landed   3,050      → other     3,000, shipping    50
  spares  1 × goods     500, landed     500      → other       500
  installation 2,000 and support 20,000 (services, no shipping)
  total landed 645,650 EUR = 600,000 + 10,000 + 4,000 + 3,500 + 22,000 + 6,150.
In USD: 645,650 / 0.8 = 807,062.50; one server 300,000 EUR / 0.8 = 375,000 USD.
Maintenance: the support contract, priced for a year (its offer names no longer term): the
first year is in the capex, then it renews each year, 20,000 / 0.8 = 25,000 USD at months 12
and 24 of a 36-month horizon. No spares fraction (the BOM's spare parts are bought).
Site load 30 kW (servers 2 × 14 = 28 kW and 2 kW of switches): space at 100 USD/kW-month is
3,000 USD a month; power at idle fraction 1, PUE 1.5, 0.1 USD/kWh is
30 × 1.5 × 0.1 × 730 = 3,285 USD a month.
"""

from dataclasses import replace

import numpy as np
import pytest

from planner.engine import tco as te
from planner.engine.errors import EngineInputError

LINES = (
    te.BomCostLine("server", 2, 600_000.0, 606_000.0),
    te.BomCostLine("switch", 1, 10_000.0, 10_100.0),
    te.BomCostLine("storage", 4, 4_000.0, 4_000.0),
    te.BomCostLine("rack", 1, 3_000.0, 3_050.0),
    te.BomCostLine("spares", 1, 500.0, 500.0),
    te.BomCostLine("service", 2, 2_000.0, 2_000.0),
    te.BomCostLine("service", 2, 20_000.0, 20_000.0, support=True),
)


def _fleet(server_count: int = 2) -> te.OwnedHardware:
    return te.OwnedHardware(
        server_count=server_count, gpus_per_server=8, server_price_usd=1.0, server_power_kw=14.0,
        spares_fraction=0.03, maintenance_fraction_per_year=0.10, lifetime_months=60,
        idle_power_fraction=1.0,
    )  # fmt: skip


def test_bom_capex_sums_by_kind_of_spend():
    capex = te.bom_capex(LINES)
    assert capex.servers == 2
    assert capex.server_amount == pytest.approx(600_000.0)
    assert capex.network_amount == pytest.approx(10_000.0)
    assert capex.storage_amount == pytest.approx(4_000.0)
    assert capex.other_hardware_amount == pytest.approx(3_500.0)
    assert capex.services_amount == pytest.approx(22_000.0)
    assert capex.support_amount == pytest.approx(20_000.0)
    assert capex.shipping_amount == pytest.approx(6_150.0)
    assert capex.total_amount == pytest.approx(645_650.0)


def test_hardware_from_bom_costs_the_bom_at_landed_cost():
    hw = te.hardware_from_bom(_fleet(), te.bom_capex(LINES), amount_per_usd=0.8)
    assert hw.server_price_usd == pytest.approx(375_000.0)
    assert hw.capex_usd == pytest.approx(807_062.50)
    assert hw.capex_usd * 0.8 == pytest.approx(645_650.0, abs=0.005)
    assert hw.spares_fraction == 0.0
    # The support contract is the maintenance: 20,000 EUR = 25,000 USD a year, renewed.
    assert hw.support_contracts == (pytest.approx((25_000.0, 12)),)
    assert hw.maintenance_fraction_per_year == 0.0
    # An entered maintenance rate stays, charged after the contract's term.
    kept = te.hardware_from_bom(
        _fleet(), te.bom_capex(LINES), amount_per_usd=0.8, maintenance_from_support=False
    )
    assert kept.maintenance_fraction_per_year == 0.10
    assert kept.maintenance_prepaid_months == 12 and kept.support_contracts == ()


def test_a_bom_for_another_fleet_is_refused():
    with pytest.raises(EngineInputError, match="BOM buys 2 servers but the deployment has 3"):
        te.hardware_from_bom(_fleet(server_count=3), te.bom_capex(LINES), amount_per_usd=0.8)


def test_owned_option_charges_the_bom_capex_and_the_site_load():
    hw = te.hardware_from_bom(_fleet(), te.bom_capex(LINES), amount_per_usd=0.8)
    inputs = te.TcoInputs(
        workloads=(te.WorkloadDemand("chat", gpu_hours_per_month=16 * 730.0),),
        cloud=te.CloudPricing(on_demand_usd_per_gpu_h=2.0, annual_price_decline=0.0),
        hardware=hw,
        sites=(
            te.SiteCost(
                "site-a",
                "A",
                facility_usd_per_kw_month=100.0,
                pue=1.5,
                power_usd_per_kwh=0.1,
                servers=2,
                it_load_kw=30.0,
            ),
        ),  # fmt: skip
        horizon_months=36,
        cost_of_capital=0.0,
    )
    owned = te.run_tco(inputs).by_key("owned")
    lines = owned.lines_usd
    assert lines["capex"][0] == pytest.approx(807_062.50)
    assert lines["capex"][1:].sum() == 0.0
    assert lines["spares"].sum() == 0.0
    assert lines["maintenance"][:12].sum() == 0.0
    assert lines["maintenance"][12] == pytest.approx(25_000.0)
    assert lines["maintenance"][24] == pytest.approx(25_000.0)
    assert lines["maintenance"].sum() == pytest.approx(50_000.0)
    assert lines["facility"][0] == pytest.approx(3_000.0)
    assert lines["power"][0] == pytest.approx(3_285.0)


def _support_run(term_months: int, *, lifetime_months: int = 60, horizon_months: int = 60):
    """4 servers (1 EUR = 1 USD for a plain hand count) with a support contract of
    4 × 11,500 = 46,000 EUR for ``term_months``, over ``horizon_months``."""
    lines = (
        te.BomCostLine("server", 4, 1_200_000.0, 1_200_000.0),
        te.BomCostLine("service", 4, 46_000.0, 46_000.0, support=True, term_months=term_months),
    )
    fleet = replace(_fleet(server_count=4), lifetime_months=lifetime_months, residual_fraction=0.0)
    hw = te.hardware_from_bom(fleet, te.bom_capex(lines), amount_per_usd=1.0)
    inputs = te.TcoInputs(
        workloads=(te.WorkloadDemand("chat", gpu_hours_per_month=32 * 730.0),),
        cloud=te.CloudPricing(on_demand_usd_per_gpu_h=2.0, annual_price_decline=0.0),
        hardware=hw,
        sites=(
            te.SiteCost(
                "site-a",
                "A",
                facility_usd_per_kw_month=0.0,
                power_usd_per_kwh=0.0,
                staff_usd_per_month=0.0,
                servers=4,
            ),
        ),  # fmt: skip
        horizon_months=horizon_months,
        cost_of_capital=0.0,
    )
    return hw, te.run_tco(inputs).by_key("owned").lines_usd


def test_support_bought_for_4_years_inside_a_5_year_tco_is_paid_once_and_renewed_pro_rata():
    # The quote sells 4 × 11,500 = 46,000 EUR of support for 4 years. The TCO pays it once,
    # at month 0 (in the capex, the quote's cost basis: 1,200,000 + 46,000), and renews it at
    # month 48 for the 12 months left of the 60: 46,000 × 12 / 48 = 11,500. Support over the
    # 5 years: 57,500, not the 5 × 46,000 = 230,000 of a yearly price.
    hw, lines = _support_run(48)
    assert hw.support_contracts == ((46_000.0, 48),)
    assert lines["capex"][0] == pytest.approx(1_246_000.0)
    maintenance = lines["maintenance"]
    assert maintenance[:48].sum() == 0.0
    assert maintenance[48] == pytest.approx(11_500.0)
    assert maintenance[49:].sum() == 0.0
    assert lines["capex"][0] - 1_200_000.0 + maintenance.sum() == pytest.approx(57_500.0)


def test_a_yearly_support_price_is_paid_every_year():
    # The same 46,000 as a yearly price: month 0 (capex) and months 12, 24, 36, 48.
    _, lines = _support_run(12)
    maintenance = lines["maintenance"]
    assert [m for m in range(60) if maintenance[m]] == [12, 24, 36, 48]
    assert maintenance.sum() + 46_000.0 == pytest.approx(230_000.0)


def test_support_renews_with_each_generation_and_stops_at_the_servers_life():
    # Servers live 36 months in a 60-month TCO, support bought for 2 years: generation 1 buys
    # it at month 0 and renews it at 24 for the 12 months it has left (46,000 × 12/24 =
    # 23,000); generation 2 buys it at 36 (capex) and renews at 60, beyond the horizon.
    _, lines = _support_run(24, lifetime_months=36)
    maintenance = lines["maintenance"]
    assert [m for m in range(60) if maintenance[m]] == [24]
    assert maintenance[24] == pytest.approx(23_000.0)
    assert lines["capex"][36] == pytest.approx(1_246_000.0)


def test_a_bom_of_the_hybrids_base_is_its_capex_and_prices_the_fleet_per_server():
    # The BOM buys the hybrid's base, 2 of a fleet of 6 servers. Its amounts per server
    # price the fleet: the network 10,000 EUR for 2 servers is 30,000 EUR for 6, and so on,
    # so the whole fleet costs 3 × 645,650 EUR and a 2-server base the BOM, to the cent.
    hw = te.hardware_from_bom(
        _fleet(server_count=6), te.bom_capex(LINES), amount_per_usd=0.8, base_servers=2
    )
    assert hw.server_price_usd == pytest.approx(375_000.0)
    assert hw.network_usd == pytest.approx(30_000.0 / 0.8)
    assert hw.capex_usd * 0.8 == pytest.approx(3 * 645_650.0, abs=0.01)
    assert hw.support_contracts == (pytest.approx((75_000.0, 12)),)
    inputs = te.TcoInputs(
        workloads=(te.WorkloadDemand("chat", gpu_hours_per_month=16 * 730.0),),
        cloud=te.CloudPricing(on_demand_usd_per_gpu_h=2.0, annual_price_decline=0.0),
        hardware=hw,
        sites=(te.SiteCost("site-a", "A"),),
        horizon_months=36,
    )
    base = te._base_paths(inputs, inputs.sites[0], np.array([2]))
    assert base.lines["capex"][0, 0] * 0.8 == pytest.approx(645_650.0, abs=0.005)
    # A BOM of another size than the base is refused, as one of another fleet is.
    with pytest.raises(EngineInputError, match="hybrid's owned base has 3; regenerate"):
        te.hardware_from_bom(
            _fleet(server_count=6), te.bom_capex(LINES), amount_per_usd=0.8, base_servers=3
        )
