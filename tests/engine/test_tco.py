"""TCO cash flows, break-even, NPV, hybrid split, sensitivity and Monte Carlo by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from planner.engine.tco import (
    CloudPricing,
    OwnedHardware,
    SiteCost,
    TcoInputs,
    UncertaintySpec,
    WorkloadDemand,
    break_even_month,
    break_even_utilisation,
    hourly_demand_gpus,
    monte_carlo,
    npv_usd,
    run_tco,
    sensitivity,
)

PEAKY = (0.2,) * 8 + (1.0,) * 10 + (0.5,) * 6


def simple_case(horizon: int = 60, **hw_kw) -> TcoInputs:
    """Capex 300,000 USD, opex 5,000 USD/month (staff only) vs cloud 20,000 USD/month.

    Cloud: 10,000 GPU-h/month × 2 USD/GPU-h = 20,000 USD/month, flat profile.
    Owned: one 16-GPU server (10,000 / 730 = 13.7 GPUs busy, no overflow), no power cost.
    """
    hw = {
        "server_count": 1,
        "gpus_per_server": 16,
        "server_price_usd": 300_000.0,
        "server_power_kw": 10.0,
        "network_usd": 0.0,
        "spares_fraction": 0.0,
        "maintenance_fraction_per_year": 0.0,
        "residual_fraction": 0.0,
        "lifetime_months": 60,
    }
    hw.update(hw_kw)
    return TcoInputs(
        workloads=(
            WorkloadDemand("chat", 10_000.0, output_tokens_per_month=1e9, requests_per_month=1e6),
        ),
        cloud=CloudPricing(2.0),
        hardware=OwnedHardware(**hw),
        sites=(SiteCost("owned", "Own DC", "owned", 0.0, 1.0, 0.0, 5_000.0),),
        horizon_months=horizon,
        cost_of_capital=0.0,
    )


# --- Break-even and NPV -----------------------------------------------------------------------


def test_break_even_month_of_simple_case_is_20():
    # owned cumulative 300,000 + 5,000 m; cloud 20,000 m; equal at m = 300,000 / 15,000 = 20.
    # No commitment or spot discount: on-demand is the cheapest cloud option, the reference.
    case = simple_case()
    case = dataclasses.replace(
        case,
        cloud=CloudPricing(
            2.0, commit_1yr_discount=0.0, commit_3yr_discount=0.0, spot_discount=0.0
        ),
    )
    result = run_tco(case)
    assert result.reference_key == "cloud_on_demand"
    owned, cloud = result.by_key("owned"), result.by_key("cloud_on_demand")
    assert cloud.monthly_usd[0] == pytest.approx(20_000.0)
    assert owned.monthly_usd[0] == pytest.approx(305_000.0)
    assert owned.monthly_usd[1] == pytest.approx(5_000.0)
    assert owned.break_even_month == 20
    assert cloud.break_even_month is None


def test_break_even_month_function_and_never():
    assert break_even_month([305, 310, 315], [20, 40, 60]) is None
    assert break_even_month([100, 100], [50, 100]) == 2


def test_net_cost_and_npv_at_zero_rate_equal_cash_totals():
    # 60 months: owned 300,000 + 60 × 5,000 = 600,000; cloud 60 × 20,000 = 1,200,000
    result = run_tco(simple_case())
    assert result.by_key("owned").net_cost_usd == pytest.approx(600_000.0)
    assert result.by_key("owned").npv_usd == pytest.approx(600_000.0)
    assert result.by_key("cloud_on_demand").npv_usd == pytest.approx(1_200_000.0)


def test_npv_by_hand():
    # 12 × 1,000 at 12 %/yr, flows at the start of each month:
    # v = 1.12^(−1/12) = e^(−0.1133287/12) = 0.9906005; Σ_{k=0..11} v^k = (1 − 1.12^−1) / (1 − v)
    #   = 0.1071429 / 0.0093995 = 11.39866 → 11,398.66
    assert npv_usd([1000.0] * 12, 0.12) == pytest.approx(11_398.66, abs=0.05)
    # a 1,120 credit after 12 months is worth 1,120 / 1.12 = 1,000 today
    assert npv_usd([0.0] * 12, 0.12, terminal_value_usd=1_120.0) == pytest.approx(-1_000.0)


def test_option_npv_uses_discount_rate():
    inputs = dataclasses.replace(simple_case(horizon=12), discount_rate=0.12)
    cloud = run_tco(inputs).by_key("cloud_on_demand")
    # 20,000 × 11.39866 = 227,973
    assert cloud.npv_usd == pytest.approx(227_973.0, abs=1.0)


# --- Owned details ----------------------------------------------------------------------------


def test_refresh_and_terminal_book_value():
    # life 24 months over 60: bought in months 1, 25, 49; at the horizon the last generation
    # is 12 months old → book value 300,000 × (1 − 12/24) = 150,000
    owned = run_tco(simple_case(lifetime_months=24)).by_key("owned")
    capex = owned.lines_usd["capex"]
    assert list(np.flatnonzero(capex) + 1) == [1, 25, 49]
    assert owned.terminal_value_usd == pytest.approx(150_000.0)
    # net = 3 × 300,000 + 60 × 5,000 − 150,000 = 1,050,000
    assert owned.net_cost_usd == pytest.approx(1_050_000.0)


def test_residual_value_credited_at_refresh():
    owned = run_tco(simple_case(lifetime_months=24, residual_fraction=0.1)).by_key("owned")
    # 10 % of 300,000 back when each generation retires (months 25 and 49)
    assert owned.lines_usd["residual_value"][24] == pytest.approx(-30_000.0)
    # book at 12 of 24 months: 300,000 × (1 − 0.9 × 12/24) = 165,000
    assert owned.terminal_value_usd == pytest.approx(165_000.0)


def test_power_line_by_hand():
    # 10 kW server, idle 0.3; busy 10,000 / (16 × 730) = 0.85616 of the time
    # draw = 0.3 + 0.7 × 0.85616 = 0.89932; × 10 kW × PUE 1.2 × 0.10 USD × 730 h = 787.80 USD
    inputs = dataclasses.replace(
        simple_case(), sites=(SiteCost("owned", "Own", "owned", 150.0, 1.2, 0.10, 0.0),)
    )
    owned = run_tco(inputs).by_key("owned")
    assert owned.lines_usd["power"][0] == pytest.approx(787.80, abs=0.01)
    assert owned.lines_usd["facility"][0] == pytest.approx(1_500.0)  # 10 kW × 150 USD
    assert owned.mean_utilisation == pytest.approx(10_000 / (16 * 730))


def test_default_network_share_is_19_percent_of_cluster():
    hw = OwnedHardware(
        server_count=10, gpus_per_server=8, server_price_usd=81_000.0, server_power_kw=10.2
    )
    # network = 810,000 × 0.19 / 0.81 = 190,000 → 19 % of 1,000,000
    assert hw.network_capex_usd == pytest.approx(190_000.0)


def test_overflow_goes_to_cloud_when_demand_exceeds_fleet():
    # 8-GPU fleet, 10,000 GPU-h flat = 13.7 GPUs: 5,840 owned, 4,160 GPU-h on cloud at 2 USD
    owned = run_tco(simple_case(gpus_per_server=8)).by_key("owned")
    assert owned.lines_usd["cloud_overflow"][0] == pytest.approx(8_320.0)
    assert owned.mean_utilisation == pytest.approx(1.0)


def test_break_even_utilisation_by_hand_without_power():
    # u* = capex / (GPUs × 730 h × months × price) = 300,000 / (8 × 730 × 60 × 2) = 0.42808
    inputs = dataclasses.replace(
        simple_case(gpus_per_server=8), sites=(SiteCost("owned", "Own", "owned", 0.0, 1.0, 0.0),)
    )
    assert break_even_utilisation(inputs) == pytest.approx(300_000 / 700_800)


def test_break_even_utilisation_with_power_and_cross_check():
    # idle 0.3 of 10 kW at 0.10 USD/kWh, PUE 1: idle power 10 × 0.3 × 0.1 × 730 × 60 = 13,140
    # load-dependent part B = 10 × 0.7 × 0.1 × 730 × 60 = 30,660; cloud C = 700,800
    # u* = (300,000 + 13,140) / (700,800 − 30,660) = 313,140 / 670,140 = 0.46727
    site = SiteCost("owned", "Own", "owned", 0.0, 1.0, 0.10)
    inputs = dataclasses.replace(simple_case(gpus_per_server=8), sites=(site,))
    u = break_even_utilisation(inputs)
    assert u == pytest.approx(313_140 / 670_140)
    # at that utilisation the full model gives equal net costs
    demand = WorkloadDemand("flat", u * 8 * 730)
    at_u = run_tco(dataclasses.replace(inputs, workloads=(demand,)))
    assert at_u.by_key("owned").net_cost_usd == pytest.approx(
        at_u.by_key("cloud_on_demand").net_cost_usd, rel=1e-9
    )


def test_break_even_utilisation_none_when_owning_never_wins():
    inputs = dataclasses.replace(simple_case(gpus_per_server=8), cloud=CloudPricing(0.2))
    assert break_even_utilisation(inputs) is None


# --- Cloud options ----------------------------------------------------------------------------


def test_flat_demand_commits_fully_at_the_discount():
    # flat 10,000 GPU-h: commit 100 % at 2 × (1 − 0.41) = 1.18 USD → 11,800 USD a month
    result = run_tco(simple_case(horizon=36))
    c1 = result.by_key("cloud_committed_1yr")
    assert c1.monthly_usd == pytest.approx(np.full(36, 11_800.0))
    assert c1.lines_usd["cloud_on_demand"].sum() == pytest.approx(0.0)
    c3 = result.by_key("cloud_committed_3yr")
    assert c3.monthly_usd[0] == pytest.approx(20_000 * 0.36)  # 64 % off
    assert c3.terminal_value_usd == 0.0


def test_commitment_is_paid_whether_used_or_not():
    inputs = dataclasses.replace(
        simple_case(horizon=24), workloads=(WorkloadDemand("chat", 10_000.0, PEAKY),)
    )
    result = run_tco(inputs)
    c1 = result.by_key("cloud_committed_1yr")
    fee = c1.lines_usd["cloud_committed"]
    assert np.ptp(fee[:12]) == 0.0 and fee[0] > 0  # constant within the term
    # the scan includes "commit nothing", so it never costs more than on-demand
    assert c1.net_cost_usd <= result.by_key("cloud_on_demand").net_cost_usd


def test_three_year_commitment_past_horizon_is_owed():
    # horizon 60: second term runs months 37-72. Committing a fraction f of the 13.7 GPUs costs
    # 7,200 f × 36 months = 259,200 f; on-demand for the rest 20,000 (1 − f) × 24 = 480,000 (1 − f)
    # → total 480,000 − 220,800 f: commit fully, and 12 × 7,200 = 86,400 is owed past month 60
    c3 = run_tco(simple_case(horizon=60)).by_key("cloud_committed_3yr")
    assert c3.terminal_value_usd == pytest.approx(-12 * 7_200.0)
    assert c3.net_cost_usd == pytest.approx(72 * 7_200.0)


def test_three_year_commitment_skipped_when_little_horizon_is_left():
    # horizon 48: the second term covers 12 needed months but bills 36:
    # 259,200 f + 240,000 (1 − f) = 240,000 + 19,200 f → commit nothing, owe nothing
    c3 = run_tco(simple_case(horizon=48)).by_key("cloud_committed_3yr")
    assert c3.terminal_value_usd == 0.0
    assert c3.lines_usd["cloud_committed"][36:].sum() == 0.0
    assert c3.lines_usd["cloud_on_demand"][36:] == pytest.approx(np.full(12, 20_000.0))


def test_spot_mix_by_hand():
    # 20,000 × (0.7 + 0.3 × 1.15 × 0.4) = 20,000 × 0.838 = 16,760 USD a month
    spot = run_tco(simple_case()).by_key("cloud_spot_mix")
    assert spot.monthly_usd[0] == pytest.approx(16_760.0)


def test_cloud_price_decline_and_demand_growth():
    inputs = dataclasses.replace(
        simple_case(horizon=24),
        workloads=(WorkloadDemand("chat", 10_000.0, growth_pct_per_month=1.0),),
        cloud=CloudPricing(2.0, annual_price_decline=0.10),
    )
    result = run_tco(inputs)
    # month 13: demand 10,000 × 1.01^12 = 11,268.25; price 2 × 0.9 = 1.8 → 20,282.85
    assert result.demand_gpu_hours[12] == pytest.approx(10_000 * 1.01**12)
    assert result.by_key("cloud_on_demand").monthly_usd[12] == pytest.approx(
        10_000 * 1.01**12 * 1.8
    )


def test_unit_costs_by_hand():
    result = run_tco(simple_case())
    cloud = result.by_key("cloud_on_demand")
    # 20,000 USD for 1e9 tokens = 20 USD per million; 1e6 requests → 0.02 USD per request
    assert cloud.cost_per_million_output_tokens_usd == pytest.approx(20.0)
    assert cloud.cost_per_request_usd == pytest.approx(0.02)
    owned = result.by_key("owned")
    # amortised: 300,000 / 60 + 5,000 = 10,000 USD a month → 10 USD per million tokens
    assert owned.cost_per_million_output_tokens_usd == pytest.approx(10.0)


def test_profiles_normalised_and_summed_over_workloads():
    inputs = dataclasses.replace(
        simple_case(horizon=2),
        workloads=(WorkloadDemand("a", 7_300.0, PEAKY), WorkloadDemand("b", 730.0)),
    )
    d = hourly_demand_gpus(inputs)
    # a: 10 GPUs on average shaped by PEAKY (mean (8 × 0.2 + 10 + 6 × 0.5) / 24 = 14.6 / 24,
    # so peak = 10 × 24 / 14.6 = 16.438); b: flat 1 GPU → peak 17.438
    assert d[0].mean() == pytest.approx(11.0)
    assert d[0].max() == pytest.approx(10 * 24 / 14.6 + 1)


# --- Hybrid -----------------------------------------------------------------------------------


@pytest.mark.parametrize("price", [0.5, 2.0, 6.0])
def test_hybrid_never_costs_more_than_the_better_pure_option(price):
    inputs = TcoInputs(
        workloads=(WorkloadDemand("chat", 50_000.0, PEAKY), WorkloadDemand("batch", 20_000.0)),
        cloud=CloudPricing(price),
        hardware=OwnedHardware(
            server_count=20, gpus_per_server=8, server_price_usd=250_000.0, server_power_kw=10.2
        ),
        sites=(SiteCost("colocation", "Colo", staff_usd_per_month=10_000.0),),
    )
    result = run_tco(inputs)
    hybrid = result.by_key("hybrid")
    best_pure = min(result.by_key("colocation").npv_usd, result.by_key("cloud_on_demand").npv_usd)
    assert hybrid.npv_usd <= best_pure + 1e-6
    # Either an owned base was worth having, or the note says hybrid collapses to cloud.
    if hybrid.owned_gpus:
        assert "Owned base of" in hybrid.notes[0]
    else:
        assert hybrid.collapses_to_cloud and "collapses to cloud" in hybrid.notes[0]


def test_hybrid_is_pure_cloud_when_cloud_is_very_cheap():
    inputs = dataclasses.replace(simple_case(), cloud=CloudPricing(0.01))
    result = run_tco(inputs)
    assert result.by_key("hybrid").owned_gpus == 0
    assert result.by_key("hybrid").collapses_to_cloud
    assert result.by_key("hybrid").break_even_month is None  # it is on-demand, not cheaper
    assert "collapses to cloud" in result.by_key("hybrid").label
    assert result.by_key("hybrid").npv_usd == pytest.approx(
        result.by_key("cloud_on_demand").npv_usd
    )


# --- Sensitivity ------------------------------------------------------------------------------


def test_sensitivity_directions_and_order():
    inputs = dataclasses.replace(
        simple_case(), sites=(SiteCost("owned", "Own", "owned", 100.0, 1.3, 0.1, 5_000.0),)
    )
    bars = sensitivity(inputs, swing=0.2)
    spans = [b.span_usd for b in bars]
    assert spans == sorted(spans, reverse=True)
    by = {b.driver: b for b in bars}
    assert set(by) == {
        "utilisation",
        "power_price",
        "hardware_price",
        "cloud_price",
        "lifetime",
        "discount_rate",
    }
    # savings of owning grow with cloud price and shrink with hardware and power price
    assert by["cloud_price"].high_value_usd > by["cloud_price"].low_value_usd
    assert by["hardware_price"].high_value_usd < by["hardware_price"].low_value_usd
    assert by["power_price"].high_value_usd < by["power_price"].low_value_usd
    # cloud price ±20 % moves cloud NPV by ±240,000 at a 0 % rate: span 480,000
    assert by["cloud_price"].span_usd == pytest.approx(480_000.0)
    assert by["cloud_price"].low_input == pytest.approx(1.6)


def test_sensitivity_rejects_bad_swing_and_driver():
    with pytest.raises(ValueError):
        sensitivity(simple_case(), swing=1.5)
    with pytest.raises(ValueError):
        sensitivity(simple_case(), drivers=("weather",))


# --- Monte Carlo ------------------------------------------------------------------------------


def three_workloads() -> TcoInputs:
    return TcoInputs(
        workloads=(
            WorkloadDemand("chat", 60_000.0, PEAKY, 1.0),
            WorkloadDemand("rag", 30_000.0, PEAKY[::-1], 0.5),
            WorkloadDemand("batch", 20_000.0),
        ),
        cloud=CloudPricing(3.0),
        hardware=OwnedHardware(
            server_count=30, gpus_per_server=8, server_price_usd=300_000.0, server_power_kw=10.2
        ),
    )


def test_monte_carlo_is_reproducible_and_ordered():
    calls: list[tuple[float, str]] = []
    a = monte_carlo(
        three_workloads(), paths=2_000, seed=7, progress=lambda f, m: calls.append((f, m))
    )
    b = monte_carlo(three_workloads(), paths=2_000, seed=7)
    c = monte_carlo(three_workloads(), paths=2_000, seed=8)
    assert np.array_equal(a.owned_p50_usd, b.owned_p50_usd)
    assert a.probability_owned_cheaper == b.probability_owned_cheaper
    assert not np.array_equal(a.owned_p50_usd, c.owned_p50_usd)
    for lo, mid, hi in (
        (a.owned_p10_usd, a.owned_p50_usd, a.owned_p90_usd),
        (a.cloud_p10_usd, a.cloud_p50_usd, a.cloud_p90_usd),
    ):
        assert np.all(lo <= mid) and np.all(mid <= hi)
    assert 0.0 <= a.probability_owned_cheaper <= 1.0
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


def test_monte_carlo_without_uncertainty_matches_deterministic_run():
    inputs = three_workloads()
    fixed = UncertaintySpec((1, 1, 1), (1, 1, 1), (1, 1, 1), (0, 0, 0), (60, 60, 60))
    mc = monte_carlo(inputs, paths=10, seed=1, uncertainty=fixed)
    det = run_tco(inputs)
    assert mc.owned_p10_usd == pytest.approx(det.by_key("colocation").cumulative_usd)
    assert mc.owned_p90_usd == pytest.approx(det.by_key("colocation").cumulative_usd)
    assert mc.cloud_p50_usd == pytest.approx(det.by_key("cloud_on_demand").cumulative_usd)
    owned_cheaper = (
        det.by_key("colocation").net_cost_usd < det.by_key("cloud_on_demand").net_cost_usd
    )
    assert mc.probability_owned_cheaper == float(owned_cheaper)


def test_run_tco_reports_progress():
    calls: list[float] = []
    run_tco(simple_case(), progress=lambda f, _m: calls.append(f))
    assert calls[0] == 0.0 and calls[-1] == 1.0
