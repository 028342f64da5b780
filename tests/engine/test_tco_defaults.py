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
