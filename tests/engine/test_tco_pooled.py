"""The TCO costs the plan's one deployment split over its sites as one owned option, and the
sensitivity and Monte Carlo rent whole cloud instances like the base case.

Hand calculation (rate 0, 12 months, no spares/maintenance/network, flat draw):
two 1-GPU servers at 1,000 USD, 1 kW each; site A at 0.10 USD/kWh, site B at 0.20 USD/kWh,
PUE 1, no space or staff. Demand: 2 GPUs all day, so nothing overflows.
  A: 1,000 + 1 kW × 730 h × 12 × 0.10 = 1,000 + 876 = 1,876
  B: 1,000 + 1 kW × 730 h × 12 × 0.20 = 1,000 + 1,752 = 2,752
  owned (one option) = 4,628; the residual and terminal value are 0 (12-month life).
Cloud: one provider, 8-GPU instances at 10 USD/instance-h, renting 1 GPU of load all day
  = one whole instance: 730 × 12 × 10 = 87,600 (a fractional GPU would be 10,950).
"""

import pytest

from planner.engine import tco as te


def _inputs(**extra):
    hw = te.OwnedHardware(
        server_count=2, gpus_per_server=1, server_price_usd=1000.0, server_power_kw=1.0,
        network_usd=0.0, spares_fraction=0.0, maintenance_fraction_per_year=0.0,
        lifetime_months=12, idle_power_fraction=1.0,
    )  # fmt: skip
    site = {"kind": "owned", "facility_usd_per_kw_month": 0.0, "pue": 1.0}
    return te.TcoInputs(
        workloads=(
            te.WorkloadDemand(
                "chat",
                gpu_hours_per_month=2 * 730.0,
                requests_per_month=1000.0,
                cloud_gpus_by_hour=(1.0,) * 24,
            ),
        ),  # fmt: skip
        cloud=te.CloudPricing(on_demand_usd_per_gpu_h=1.25, annual_price_decline=0.0),
        hardware=hw,
        sites=(
            te.SiteCost("site-a", "A", power_usd_per_kwh=0.10, servers=1, **site),
            te.SiteCost("site-b", "B", power_usd_per_kwh=0.20, servers=1, **site),
        ),
        horizon_months=12,
        cost_of_capital=0.0,
        providers=(te.CloudProvider("p", "P 8-GPU", 8, 10.0),),
        **extra,
    )


def test_one_owned_option_costs_both_sites_at_their_own_tariffs():
    result = te.run_tco(_inputs())
    owned = [o for o in result.options if o.kind in ("owned", "colocation")]
    assert [o.key for o in owned] == ["owned"]  # not one alternative per site
    option = owned[0]
    assert option.npv_usd == pytest.approx(4628.0)
    parts = {b.key: b for b in option.site_breakdown}
    assert parts["site-a"].npv_usd == pytest.approx(1876.0)
    assert parts["site-b"].npv_usd == pytest.approx(2752.0)
    assert parts["site-a"].lines_total_usd["power"] == pytest.approx(876.0)
    assert parts["site-b"].lines_total_usd["power"] == pytest.approx(1752.0)
    assert option.owned_gpus == 2
    cloud = result.by_key("cloud_on_demand:p")
    assert cloud.npv_usd == pytest.approx(87_600.0)  # one whole instance, not 1/8 of one


def test_sites_must_hold_the_whole_fleet():
    with pytest.raises(te.EngineInputError):
        te.TcoInputs(**{**_fields(_inputs()), "sites": (te.SiteCost("a", "A", servers=1),)})


def _fields(inputs):
    return {f: getattr(inputs, f) for f in inputs.__dataclass_fields__}


def test_sensitivity_compares_the_pooled_fleet_with_whole_instances():
    bars = te.sensitivity(_inputs(), drivers=("power_price",))
    assert bars[0].base_value_usd == pytest.approx(87_600.0 - 4628.0)
    # power ±20 % moves both sites' power: 2,628 × 0.2 either way
    assert bars[0].low_value_usd == pytest.approx(87_600.0 - 4628.0 + 0.2 * 2628.0)
    assert bars[0].high_value_usd == pytest.approx(87_600.0 - 4628.0 - 0.2 * 2628.0)
    # the fleet's mean power price, weighted by servers
    assert bars[0].low_input == pytest.approx(0.15 * 0.8)


def test_monte_carlo_rents_whole_instances_and_owns_the_pooled_fleet():
    fixed = te.UncertaintySpec(
        utilisation_factor=(1.0, 1.0, 1.0), power_price_factor=(1.0, 1.0, 1.0),
        hardware_price_factor=(1.0, 1.0, 1.0), annual_cloud_price_decline=(0.0, 0.0, 0.0),
        lifetime_months=(12.0, 12.0, 12.0),
    )  # fmt: skip
    bands = te.monte_carlo(_inputs(), paths=4, seed=1, uncertainty=fixed)
    assert bands.cloud_p50_usd[0] == pytest.approx(7300.0)  # 730 h × 1 instance × 10
    assert bands.owned_p50_usd[-1] == pytest.approx(4628.0)
    assert bands.site_key == "owned"
    assert bands.probability_owned_cheaper == 1.0
