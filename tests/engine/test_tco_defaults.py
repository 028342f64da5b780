"""TCO defaults: maintenance on servers only, BOM network capex, checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from planner.engine.tco import (
    DEFAULT_MAINTENANCE_FRACTION_PER_YEAR,
    CloudPricing,
    OwnedHardware,
    SiteCost,
    TcoInputs,
    WorkloadDemand,
    run_tco,
)


def _inputs(**hw) -> TcoInputs:
    base = {
        "server_count": 2,
        "gpus_per_server": 8,
        "server_price_usd": 300_000.0,
        "server_power_kw": 10.0,
        "network_usd": 100_000.0,
        "storage_usd": 50_000.0,
        "spares_fraction": 0.0,
        "maintenance_fraction_per_year": 0.12,
    }
    base.update(hw)
    return TcoInputs(
        workloads=(WorkloadDemand("chat", 16 * 730.0),),
        cloud=CloudPricing(2.0),
        hardware=OwnedHardware(**base),
        sites=(SiteCost("owned", "Own DC", "owned", 0.0, 1.0, 0.0, 0.0),),
        horizon_months=24,
        cost_of_capital=0.0,
    )


def test_default_maintenance_is_ten_percent_a_year():
    # librarytechnology.org/document/7428: "between 10 and 12 percent" a year
    assert DEFAULT_MAINTENANCE_FRACTION_PER_YEAR == 0.10


def test_maintenance_is_charged_on_servers_only():
    # 2 × 300,000 = 600,000 USD of servers × 12 % / 12 = 6,000 USD a month; the 100,000 USD
    # of network and 50,000 USD of storage carry none (it would be 7,500 on all hardware).
    owned = run_tco(_inputs()).by_key("owned")
    assert owned.lines_usd["maintenance"] == pytest.approx(np.full(24, 6_000.0))
    # capex is still everything: 600,000 + 100,000 + 50,000
    assert owned.lines_usd["capex"][0] == pytest.approx(750_000.0)


def test_hybrid_base_pays_maintenance_on_its_servers_only():
    # At 20 USD/GPU-h cloud (233,600 USD a month for 16 GPUs) the best base owns both servers:
    # maintenance 2 × 300,000 × 12 % / 12 = 6,000 USD a month, as in the owned option.
    inputs = _inputs()
    inputs = TcoInputs(
        workloads=inputs.workloads,
        cloud=CloudPricing(20.0),
        hardware=inputs.hardware,
        sites=inputs.sites,
        horizon_months=24,
        cost_of_capital=0.0,
    )
    hybrid = run_tco(inputs).by_key("hybrid")
    assert hybrid.owned_gpus == 16
    assert hybrid.lines_usd["maintenance"][0] == pytest.approx(6_000.0)


def test_bom_network_capex_replaces_the_19_percent_share():
    # Explicit network 100,000 USD is used as is; without it, 600,000 × 0.19 / 0.81.
    assert _inputs().hardware.network_capex_usd == 100_000.0
    fallback = _inputs(network_usd=None).hardware.network_capex_usd
    assert fallback == pytest.approx(600_000 * 0.19 / 0.81)


# --- Hybrid: owned base searched server by server -----------------------------------------------


def _two_level(price: float, servers: int = 2) -> TcoInputs:
    """16 GPUs busy 12 h a day and 8 GPUs the other 12 h (mean 12, 8,760 GPU-h a month).

    One 8-GPU server costs 73,000 USD, lives exactly the 12-month horizon (no book value
    left), and nothing else costs: no power, rent, staff, spares, maintenance or interest.
    """
    return TcoInputs(
        workloads=(WorkloadDemand("chat", 12 * 730.0, (2.0,) * 12 + (1.0,) * 12),),
        cloud=CloudPricing(price),
        hardware=OwnedHardware(
            server_count=servers,
            gpus_per_server=8,
            server_price_usd=73_000.0,
            server_power_kw=10.0,
            network_usd=0.0,
            spares_fraction=0.0,
            maintenance_fraction_per_year=0.0,
            lifetime_months=12,
        ),
        sites=(SiteCost("owned", "Own DC", "owned", 0.0, 1.0, 0.0, 0.0),),
        horizon_months=12,
        cost_of_capital=0.0,
    )


def test_hybrid_searches_every_base_and_keeps_the_cheapest():
    # At 2 USD/GPU-h over 12 months:
    #   0 servers: 8,760 GPU-h × 2 × 12                        = 210,240
    #   1 server : 73,000 + (8 GPUs × 12 h × 30.4167 d) 2,920 GPU-h × 2 × 12 = 143,080
    #   2 servers: 146,000 + nothing on cloud                   = 146,000
    hybrid = run_tco(_two_level(2.0)).by_key("hybrid")
    assert [n for n, _ in hybrid.base_curve] == [0, 1, 2]
    assert [v for _, v in hybrid.base_curve] == pytest.approx([210_240, 143_080, 146_000])
    assert hybrid.owned_gpus == 8
    assert hybrid.npv_usd == pytest.approx(143_080)
    assert not hybrid.collapses_to_cloud
    assert "Owned base of 1 server(s)" in hybrid.notes[0]


def test_hybrid_collapses_to_cloud_when_no_base_pays():
    # At 0.5 USD/GPU-h: cloud 52,560 against 73,000 + 17,520 = 90,520 for one server.
    hybrid = run_tco(_two_level(0.5)).by_key("hybrid")
    assert hybrid.base_curve[0] == (0, pytest.approx(52_560))
    assert hybrid.owned_gpus == 0 and hybrid.collapses_to_cloud
    assert hybrid.break_even_month is None
    assert "collapses to cloud on-demand" in hybrid.notes[0]


def test_hybrid_bases_spread_beyond_the_search_limit():
    from planner.engine.tco import MAX_HYBRID_BASES, hybrid_bases

    assert list(hybrid_bases(3, 10.0, 8)) == [0, 1, 2, 3]  # fleet of 3 covers the 2-server peak
    assert list(hybrid_bases(1, 20.0, 8)) == [0, 1, 2, 3]  # peak needs 3 servers
    wide = hybrid_bases(10_000, 8.0, 8)
    assert wide[0] == 0 and wide[-1] == 10_000 and wide.size == MAX_HYBRID_BASES + 1


# --- Cloud per provider: its own list, whole instances -----------------------------------------

TEN_THEN_THREE = (10.0,) * 12 + (3.0,) * 12  # GPUs serving the load, no spares or headroom


def _providers_case(**cloud) -> TcoInputs:
    from planner.engine.tco import CloudProvider

    return TcoInputs(
        workloads=(
            # The owned fleet runs 16 GPUs (spares and headroom included) around the clock.
            WorkloadDemand("chat", 16 * 730.0, cloud_gpus_by_hour=TEN_THEN_THREE),
        ),
        cloud=CloudPricing(10.0, **cloud),
        hardware=OwnedHardware(
            server_count=2, gpus_per_server=8, server_price_usd=1.0, server_power_kw=1.0
        ),
        sites=(SiteCost("owned", "Own DC", "owned", 0.0, 1.0, 0.0, 0.0),),
        horizon_months=12,
        cost_of_capital=0.0,
        providers=(
            CloudProvider("a", "A p8", 8, 80.0, 48.0, 32.0, 30.0),
            CloudProvider("b", "B per GPU", 1, 9.0),
        ),
    )


def test_provider_rents_whole_instances_hour_by_hour():
    # A: ⌈10/8⌉ = 2 instances for 12 h, ⌈3/8⌉ = 1 for 12 h: 36 instance-h a day
    #    × 730/24 days = 1,095 instance-h a month × 80 USD = 87,600 USD a month.
    result = run_tco(_providers_case())
    a = result.by_key("cloud_on_demand:a")
    assert a.monthly_usd == pytest.approx(np.full(12, 87_600.0))
    # B: 1-GPU instances, (10 + 3) × 12 = 156 GPU-h a day × 30.4167 × 9 USD = 42,705 a month.
    b = result.by_key("cloud_on_demand:b")
    assert b.monthly_usd == pytest.approx(np.full(12, 42_705.0))
    # B on-demand is the cheapest cloud option (A's best, its 1-year, is 64,240 a month), so
    # it is the break-even reference; A never gets down to it.
    assert result.reference_key == "cloud_on_demand:b"
    assert b.break_even_month is None
    assert a.break_even_month is None


def test_provider_commitment_uses_its_own_committed_price_in_whole_instances():
    # 1-year at 48 USD/instance-h: commit 0 → 87,600; 1 → 1 × 730 × 48 = 35,040 + the 2nd
    # instance's 12 h a day on demand 365 × 80 = 29,200 → 64,240; 2 → 70,080. Best: 1.
    one = run_tco(_providers_case()).by_key("cloud_committed_1yr:a")
    assert one.monthly_usd == pytest.approx(np.full(12, 64_240.0))
    assert "commit 1 instances" in one.notes[0] and "48.000 USD/instance-h" in one.notes[0]


def test_three_year_commitment_past_a_short_horizon_is_not_taken():
    # 3-year at 32: one instance owes 730 × 32 = 23,360 for 36 months (840,960) plus 29,200
    # × 12 on demand (350,400) = 1,191,360 against 87,600 × 12 = 1,051,200 on demand.
    three = run_tco(_providers_case()).by_key("cloud_committed_3yr:a")
    assert three.monthly_usd == pytest.approx(np.full(12, 87_600.0))
    assert "commit 0 instances" in three.notes[0]


def test_provider_spot_mix_uses_its_own_spot_price():
    # 1,095 instance-h × (0.7 × 80 + 0.3 × 1.15 × 30) = 1,095 × 66.35 = 72,653.25 a month
    spot = run_tco(_providers_case()).by_key("cloud_spot_mix:a")
    assert spot.monthly_usd == pytest.approx(np.full(12, 72_653.25))


def test_no_provider_option_borrows_another_providers_price():
    keys = {o.key for o in run_tco(_providers_case()).options if o.kind.startswith("cloud")}
    # B lists on-demand only: no commitment or spot option is made up for it.
    assert keys == {
        "cloud_on_demand:a",
        "cloud_committed_1yr:a",
        "cloud_committed_3yr:a",
        "cloud_spot_mix:a",
        "cloud_on_demand:b",
    }


def test_cloud_rents_the_load_not_the_owned_spares():
    from planner.engine.tco import hourly_cloud_gpus, hourly_demand_gpus

    inputs = _providers_case()
    assert hourly_cloud_gpus(inputs)[0] == pytest.approx(TEN_THEN_THREE)
    assert hourly_demand_gpus(inputs)[0] == pytest.approx(np.full(24, 16.0))
    grown = TcoInputs(
        workloads=(
            WorkloadDemand(
                "chat", 16 * 730.0, growth_pct_per_month=10.0, cloud_gpus_by_hour=TEN_THEN_THREE
            ),
        ),
        cloud=inputs.cloud,
        hardware=inputs.hardware,
        sites=inputs.sites,
        horizon_months=3,
    )
    assert hourly_cloud_gpus(grown)[2][0] == pytest.approx(10 * 1.1**2)


def test_collapsed_hybrid_equals_the_reference_providers_on_demand():
    import dataclasses

    from planner.engine.tco import CloudProvider

    inputs = dataclasses.replace(
        _providers_case(),
        cloud=CloudPricing(9.0),  # the reference's price per accelerator-hour
        hardware=OwnedHardware(
            server_count=2, gpus_per_server=8, server_price_usd=10_000_000.0, server_power_kw=1.0
        ),
        providers=(CloudProvider("b", "B per GPU", 1, 9.0),),
    )
    result = run_tco(inputs)
    hybrid = result.by_key("hybrid")
    assert hybrid.collapses_to_cloud
    # 156 GPU-h a day × 30.4167 × 9 USD = 42,705 a month, the same as B on-demand
    assert hybrid.monthly_usd == pytest.approx(np.full(12, 42_705.0))
    assert hybrid.npv_usd == pytest.approx(result.by_key("cloud_on_demand:b").npv_usd)


# --- Cost per million tokens, input and output apart ---------------------------------------------


def _token_case(prefill_s: float | None, decode_s: float | None = 0.4, **w) -> TcoInputs:
    """Cloud 10,000 GPU-h × 2 USD = 20,000 USD a month for 1e9 output and 3e9 input tokens."""
    return TcoInputs(
        workloads=(
            WorkloadDemand(
                "chat",
                10_000.0,
                output_tokens_per_month=1e9,
                input_tokens_per_month=3e9,
                requests_per_month=1e6,
                prefill_accelerator_s_per_request=prefill_s,
                decode_accelerator_s_per_request=decode_s,
                **w,
            ),
        ),
        cloud=CloudPricing(2.0),
        hardware=OwnedHardware(
            server_count=1, gpus_per_server=16, server_price_usd=1.0, server_power_kw=1.0
        ),
        sites=(SiteCost("owned", "Own DC", "owned", 0.0, 1.0, 0.0, 0.0),),
        horizon_months=12,
        cost_of_capital=0.0,
    )


def test_input_and_output_tokens_pay_their_own_share():
    # 240,000 USD over 12 months; prefill 0.1 of the request's 0.5 accelerator-seconds (20 %):
    #   input  240,000 × 0.2 / (3e9 × 12) × 1e6 = 1.3333 USD per million
    #   output 240,000 × 0.8 / (1e9 × 12) × 1e6 = 16.00 USD per million
    #   all-in per output token stays 20.00; per request 240,000 / 1.2e7 = 0.02 USD
    cloud = run_tco(_token_case(0.1)).by_key("cloud_on_demand")
    assert cloud.input_usd_per_million_tokens == pytest.approx(4 / 3)
    assert cloud.output_usd_per_million_tokens == pytest.approx(16.0)
    assert cloud.cost_per_million_output_tokens_usd == pytest.approx(20.0)
    assert cloud.cost_per_request_usd == pytest.approx(0.02)
    (chat,) = cloud.workloads
    assert chat.share == pytest.approx(1.0)
    assert chat.cost_per_request_usd == pytest.approx(0.02)
    assert chat.input_usd_per_million_tokens == pytest.approx(4 / 3)


def test_no_split_without_accelerator_seconds():
    cloud = run_tco(_token_case(None)).by_key("cloud_on_demand")
    assert cloud.input_usd_per_million_tokens is None
    assert cloud.output_usd_per_million_tokens is None
    # the one workload still carries the whole cost per request
    assert cloud.workloads[0].cost_per_request_usd == pytest.approx(0.02)
    assert cloud.workloads[0].input_usd_per_million_tokens is None
