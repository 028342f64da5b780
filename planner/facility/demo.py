"""The demo plan's facility part: two colocation sites (EU and US), a placement, a TCO run.

Appended to ``planner.demo.DEMO_EXTENSIONS``. The TCO is computed by the engine through the
service (synchronously, no worker needed) when the plan's workloads have a chosen
configuration; otherwise only the sites and the placement settings are created.
"""

import contextlib
from datetime import date
from decimal import Decimal

from planner import freshness
from planner import selectors as plan_selectors
from planner.facility import services
from planner.facility.deployment import plan_deployment
from planner.facility.models import (
    CoolingMethod,
    PlacementDecision,
    PowerUpgrade,
    ResidencyRule,
    Site,
    SiteKind,
)

# Two sites, one per continent of the users: the chat assistant's European users are served
# from Frankfurt, its North American users from Ashburn (each region to its nearest site).
# Ashburn: US colocation at 208 V three-phase 60 A A+B feeds (√3 × 208 × 60 × 0.8 ≈ 17.3 kW
# usable per side, ref A5), rear-door cooling, PUE 1.4, Virginia commercial power ≈ 0.09 USD/kWh
# (EIA 2023), rent near CBRE's 2024 Northern Virginia asking rates. Its base power is energised
# on 2027-02-15 but carries only 20 kW: the plan's load needs the 2027-04-01 upgrade, so its
# power-ready date (the first day it carries the load, planner.engine.facility) is 2027-04-01.
# Frankfurt: 0.24 USD/kWh ≈ 0.22 EUR, above the EU non-household mean of about 0.20 EUR/kWh
# excluding VAT (Eurostat H2 2023), as German business power is; rent 230 USD per kW-month,
# above CBRE's global average of 217.30 (Q1 2025) for a tier-1 hub (both in
# ../shared/reference/facility_tco_sourcing.md §B2 and §B6). No date is stated for its power:
# the suite is energised already.
DEMO_SITES = [
    {
        "name": "Ashburn colocation (IAD-3 cage)",
        "kind": SiteKind.COLOCATION,
        "region_key": "us-east",
        "latitude": 39.04,
        "longitude": -77.49,
        "country": "US",
        "racks_available": 4,
        "usable_ru_per_rack": 42,
        "site_it_capacity_kw": Decimal("20"),
        "feeds_per_rack": 2,
        "voltage_v": Decimal("208"),
        "phase": 3,
        "amperage_a": Decimal("60"),
        "cooling_method": CoolingMethod.REAR_DOOR,
        "cooling_capacity_per_rack_kw": Decimal("35"),
        "cooling_capacity_site_kw": Decimal("150"),
        "ashrae_class": "A2",
        "pue": Decimal("1.40"),
        "power_usd_per_kwh": Decimal("0.09"),
        "facility_usd_per_kw_month": Decimal("180"),
        "power_ready_date": date(2027, 2, 15),
        "switch_power_kw": Decimal("0.75"),
        "notes": "Quote from the colocation provider; the cage's second feed upgrade is booked.",
        "upgrades": [(date(2027, 4, 1), Decimal("80"), "cage feed upgrade")],
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
        # The chat's American users may be served in the US; the catalogue data stays in the EU.
        allowed = "EU, US" if "us-east" in (workload.region_shares or {}) else "EU"
        ResidencyRule.objects.get_or_create(workload=workload, defaults={"allowed": allowed})
    PlacementDecision.objects.get_or_create(plan=plan)
    if plan_deployment(plan=plan).servers:
        # A server without a list price: the sourcing demo's offers price it, and
        # facility_costing_demo_build runs the TCO again once they exist.
        with contextlib.suppress(services.TcoNotReady):
            services.tco_run_sync(plan=plan, user=user)
    _placement_choose(plan=plan, user=user)


def facility_costing_demo_build(*, plan, user) -> None:
    """Cost the plan on the sourcing demo's BOM and offers, and record the placement on it.

    The TCO reads the BOM (network capex, support line) and the plan's own server offers, so
    it runs after the sourcing demo; the placement's scores read the TCO, so it is chosen
    again on the current run (same site, same reason).
    """
    if not plan_deployment(plan=plan).servers:
        return
    # Through the stale banner's recompute, so the plan's history shows the first run going
    # stale when the BOM was generated and being recomputed (same run as a direct call).
    freshness.recompute(plan=plan, kind=freshness.TCO, user=user, inline=True)
    _placement_choose(plan=plan, user=user)


def _power_words(plan, site) -> str:
    """When the site's power carries its servers, as its facility check and the timeline
    read it (the engine's power-ready date), so the reason never states another date."""
    report = services.site_evaluate(plan=plan, site=site).report
    if report is None:
        return "which holds none of the plan's servers"
    if report.power_ready_on is not None:
        return f"once its power is ready on {report.power_ready_on.isoformat()}"
    return "which has the power already"


def _placement_choose(*, plan, user) -> None:
    evaluation = services.placement_evaluate(plan=plan)
    ashburn, frankfurt = (Site.objects.get(plan=plan, name=spec["name"]) for spec in DEMO_SITES)
    services.placement_choice_save(
        plan=plan,
        user=user,
        option_key=f"site-{frankfurt.pk}",
        reason=(
            "Chat traffic is steady through the European and North American day: European "
            f"users are served from Frankfurt, {_power_words(plan, frankfurt)}, North American "
            f"users from Ashburn {_power_words(plan, ashburn)}; the catalogue data stays in "
            "the EU. Bursts above the owned base can go to a cloud region near each."
        ),
        evaluation=evaluation,
    )
