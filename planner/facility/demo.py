"""The demo plan's facility part: two colocation sites, a recorded placement, a TCO run.

Appended to ``planner.demo.DEMO_EXTENSIONS``. The TCO is computed by the engine through the
service (synchronously, no worker needed) when the plan's workloads have a chosen
configuration; otherwise only the sites and the placement settings are created.
"""

import contextlib
from datetime import date
from decimal import Decimal

from planner import selectors as plan_selectors
from planner.facility import services
from planner.facility.models import (
    CoolingMethod,
    PlacementDecision,
    PowerUpgrade,
    ResidencyRule,
    Site,
    SiteKind,
)

# Realistic European colocation figures: 415 V three-phase 32 A A+B feeds (≈ 18.4 kW usable per
# side at 80 %), rear-door cooling, PUE 1.35 (modern colo), EU non-household power ≈ 0.20 EUR/kWh
# ≈ 0.22 USD/kWh (Eurostat H2 2023), rent near CBRE's global average of 217 USD/kW-month.
DEMO_SITES = [
    {
        "name": "Amsterdam colocation (AMS-2 cage)",
        "kind": SiteKind.COLOCATION,
        "region_key": "",
        "latitude": 52.30,
        "longitude": 4.94,
        "country": "NL",
        "racks_available": 6,
        "usable_ru_per_rack": 42,
        "site_it_capacity_kw": Decimal("120"),
        "feeds_per_rack": 2,
        "voltage_v": Decimal("415"),
        "phase": 3,
        "amperage_a": Decimal("32"),
        "cooling_method": CoolingMethod.REAR_DOOR,
        "cooling_capacity_per_rack_kw": Decimal("40"),
        "cooling_capacity_site_kw": Decimal("200"),
        "ashrae_class": "A2",
        "pue": Decimal("1.35"),
        "power_usd_per_kwh": Decimal("0.22"),
        "facility_usd_per_kw_month": Decimal("210"),
        "power_ready_date": date(2027, 2, 1),
        "switch_power_kw": Decimal("0.75"),
        "notes": "Quote from the colocation provider, valid until the end of 2026.",
        "upgrades": [(date(2027, 3, 1), Decimal("200"), "second transformer energised")],
    },
    {
        "name": "Frankfurt colocation (FRA-4 suite)",
        "kind": SiteKind.COLOCATION,
        "region_key": "eu-central",
        "latitude": None,
        "longitude": None,
        "country": "DE",
        "racks_available": 4,
        "usable_ru_per_rack": 42,
        "site_it_capacity_kw": Decimal("80"),
        "feeds_per_rack": 2,
        "voltage_v": Decimal("400"),
        "phase": 3,
        "amperage_a": Decimal("32"),
        "cooling_method": CoolingMethod.AIR,
        "cooling_capacity_per_rack_kw": Decimal("20"),
        "cooling_capacity_site_kw": Decimal("90"),
        "ashrae_class": "A2",
        "pue": Decimal("1.45"),
        "power_usd_per_kwh": Decimal("0.24"),
        "facility_usd_per_kw_month": Decimal("230"),
        "power_ready_date": None,
        "switch_power_kw": Decimal("0.75"),
        "notes": "Fallback offer; contained-aisle air cooling only.",
        "upgrades": [],
    },
]


def facility_demo_build(*, plan, user) -> None:
    """Add the demo sites, residency rules, placement choice and (when sized) a TCO run."""
    for spec in DEMO_SITES:
        values = dict(spec)
        upgrades = values.pop("upgrades")
        site, created = Site.objects.get_or_create(
            plan=plan, name=values.pop("name"), defaults=values
        )
        if created:
            for ready, added, note in upgrades:
                PowerUpgrade.objects.create(site=site, ready_date=ready, added_kw=added, note=note)
    for workload in plan_selectors.workload_list(plan=plan):
        ResidencyRule.objects.get_or_create(workload=workload, defaults={"allowed": "EU"})
    PlacementDecision.objects.get_or_create(plan=plan)
    if plan_selectors.plan_deployments(plan=plan):
        # A server without a list price: the sourcing demo's offers price it, then it runs.
        with contextlib.suppress(services.TcoNotReady):
            services.tco_run_sync(plan=plan, user=user)
    evaluation = services.placement_evaluate(plan=plan)
    amsterdam = Site.objects.get(plan=plan, name=DEMO_SITES[0]["name"])
    services.placement_choice_save(
        plan=plan,
        user=user,
        option_key=f"site-{amsterdam.pk}",
        reason=(
            "Chat traffic is steady through the European and North American day, customer data "
            "must stay in the EU, and the Amsterdam cage has power for go-live with a second "
            "transformer in March 2027. Bursts above the owned base can go to an EU cloud region."
        ),
        evaluation=evaluation,
    )
