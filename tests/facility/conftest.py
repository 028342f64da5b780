"""A plan of organisation A whose workloads have a chosen configuration (as sizing leaves it)."""

from datetime import date
from decimal import Decimal

import pytest


@pytest.fixture
def sized_plan(org_a, consultant_a, catalog):
    """The demo plan of A with both workloads set to H100 SXM servers (DGX H100)."""
    from catalog.models import Accelerator, ServerPlatform
    from planner.models import Client, Plan, Workload
    from sourcing.models import FxRate

    # The TCO computes in USD and shows the plan's EUR at a dated rate (ECB-style figure).
    FxRate.objects.get_or_create(
        from_currency="EUR", to_currency="USD", as_of=date(2025, 1, 2),
        defaults={"rate": Decimal("1.0350"), "source": "test rate"},
    )  # fmt: skip
    client = Client.objects.create(organisation=org_a, name="Northwind")
    plan = Plan.objects.create(
        organisation=org_a,
        client=client,
        name="Chat",
        currency="EUR",
        target_go_live=date(2027, 6, 1),
        created_by=consultant_a,
    )
    from catalog.models import ModelArchitecture

    h100 = Accelerator.objects.get(slug="h100-sxm")
    dgx = ServerPlatform.objects.filter(name="DGX H100").first()
    Workload.objects.create(
        plan=plan,
        name="Chat",
        model=ModelArchitecture.objects.get(slug="llama-3.1-70b"),
        input_tokens_mean=1200,
        output_tokens_mean=350,
        ttft_ms=1000,
        tpot_ms=50,
        peak_concurrency=400,
        region_shares={"eu-west": 60, "us-east": 40},
        chosen_accelerator=h100,
        chosen_server=dgx,
        chosen_precision="fp8",
        chosen_tensor_parallel=4,
        chosen_replicas=8,
        chosen_accelerators=32,
        chosen_servers=4,
    )
    Workload.objects.create(
        plan=plan,
        name="Batch",
        kind="batch",
        model=ModelArchitecture.objects.get(slug="llama-3.1-8b"),
        input_tokens_mean=2500,
        output_tokens_mean=400,
        e2e_s=120,
        peak_requests_per_s=12,
        daily_profile=[1.0] * 5 + [0.0] * 19,
        region_shares={"eu-west": 100},
        chosen_accelerator=h100,
        chosen_server=dgx,
        chosen_precision="fp8",
        chosen_tensor_parallel=1,
        chosen_replicas=8,
        chosen_accelerators=8,
        chosen_servers=1,
    )
    return plan


@pytest.fixture
def colo_site(sized_plan):
    from decimal import Decimal

    from planner.facility.models import PowerUpgrade, Site

    site = Site.objects.create(
        plan=sized_plan,
        name="Amsterdam",
        kind="colocation",
        latitude=52.3,
        longitude=4.94,
        country="NL",
        racks_available=4,
        site_it_capacity_kw=Decimal("40"),
        cooling_method="rear_door",
        cooling_capacity_per_rack_kw=Decimal("40"),
        cooling_capacity_site_kw=Decimal("200"),
        power_usd_per_kwh=Decimal("0.22"),
    )
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
