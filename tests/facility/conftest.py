"""A plan of organisation A whose workloads have a chosen configuration (as sizing leaves it)."""

from datetime import date
from decimal import Decimal

import pytest


@pytest.fixture
def sized_plan(org_a, consultant_a, catalog):
    """The demo plan of A with both workloads set to H100 SXM servers (DGX H100)."""
    from sourcing.models import FxRate
    from tests.factories import PlanFactory, WorkloadFactory

    # The TCO computes in USD and shows the plan's EUR at a dated rate (ECB-style figure).
    FxRate.objects.get_or_create(
        from_currency="EUR", to_currency="USD", as_of=date(2025, 1, 2),
        defaults={"rate": Decimal("1.0350"), "source": "test rate"},
    )  # fmt: skip
    plan = PlanFactory(
        organisation=org_a, client__name="Northwind", name="Chat", created_by=consultant_a
    )
    WorkloadFactory(plan=plan, chosen=True, region_shares={"eu-west": 60, "us-east": 40})
    WorkloadFactory(
        plan=plan, chosen=True, name="Batch", kind="batch", model_slug="llama-3.1-8b",
        input_tokens_mean=2500, output_tokens_mean=400, ttft_ms=None, tpot_ms=None,
        peak_concurrency=None, e2e_s=120, peak_requests_per_s=12,
        daily_profile=[1.0] * 5 + [0.0] * 19, region_shares={"eu-west": 100},
        chosen_tensor_parallel=1, chosen_accelerators=8, chosen_servers=1,
    )  # fmt: skip
    return plan


@pytest.fixture
def colo_site(sized_plan):
    from planner.facility.models import PowerUpgrade
    from tests.factories import SiteFactory

    site = SiteFactory(plan=sized_plan)
    PowerUpgrade.objects.create(
        site=site, ready_date=date(2027, 3, 1), added_kw=Decimal("200"), note="transformer"
    )
    return site


def site_post_data(**overrides) -> dict:
    """Valid SiteForm data (every field), with overrides."""
    data = {
        "name": "Frankfurt",
        "kind": "colocation",
        "region_key": "eu-central",
        "latitude": "",
        "longitude": "",
        "country": "de",
        "racks_available": "4",
        "usable_ru_per_rack": "42",
        "site_it_capacity_kw": "100",
        "upgrades": "",
        "power_ready_date": "",
        "feeds_per_rack": "2",
        "voltage_v": "415",
        "phase": "3",
        "amperage_a": "32",
        "breaker_derating_pct": "80",
        "power_factor": "1.0",
        "cooling_method": "rear_door",
        "cooling_capacity_per_rack_kw": "40",
        "cooling_capacity_site_kw": "200",
        "ashrae_class": "A2",
        "pue": "1.4",
        "delta_t_f": "20",
        "servers_per_rack": "",
        "switches_per_rack": "1",
        "switch_power_kw": "0.5",
        "pdus_per_rack": "2",
        "power_usd_per_kwh": "0.2",
        "facility_usd_per_kw_month": "200",
        "staff_usd_per_month": "0",
        "notes": "",
    }
    data.update(overrides)
    return data
