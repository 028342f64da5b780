"""Facility, placement and TCO: fetch rows, compute with the engine, store.

Evaluations (``site_evaluate``, ``placement_evaluate``, ``tco_inputs_build``) read through
the selectors and call the engine; writes (``site_save``, ``placement_*_save``,
``tco_run_*``) store. The TCO runs in Celery: :func:`tco_run_request` stores the canonical
inputs with their SHA-256 hash and enqueues on commit; :func:`tco_run_execute` (called by
the task) rebuilds the engine dataclasses from that snapshot, runs the engine with a progress
recorder writing into the row, and stores the results with money as decimal strings.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from planner import jobs, sizing
from planner import selectors as plan_selectors
from planner.computed import computed, computed_across_requests
from planner.engine import cloud_regions as cr
from planner.engine import demand as de
from planner.engine import facility as fe
from planner.engine import placement as pe
from planner.engine import tco as te
from planner.engine.deployment import Deployment
from planner.engine.errors import CatalogGapError, EngineInputError
from planner.engine.landed_cost import LandedCostError
from planner.engine.limits import finite_or_none
from planner.engine.network import REGIONS, flag_regions, haversine_km, rtt_ms
from planner.engine.shown import USD_SHOWN, ShownIn, measure
from planner.engine.units import SiteUnits, site_units
from planner.facility import selectors, tco_prices
from planner.facility.deployment import PlanDeployment, plan_deployment, workload_deployments
from planner.facility.deployment import rack_types as deployment_rack_types
from planner.facility.models import (
    PlacementDecision,
    PowerUpgrade,
    ResidencyRule,
    Site,
    SiteKind,
    TcoRun,
    TcoSettings,
    TcoStatus,
    WorkloadSiteSplit,
)
from planner.models import Plan
from planner.money import UsdRate, format_money

# A planned power upgrade as the site form and the API read it: (ready date, added kW, note).
UpgradeIn = tuple[date, Decimal, str]

logger = logging.getLogger(__name__)

CENT = Decimal("0.01")
MONTE_CARLO_PATHS = 10_000
MONTE_CARLO_SEED = 0
SENSITIVITY_SWING = 0.2
TCO_INPUTS_VERSION = 6  # bump when the canonical form changes, so old hashes go stale
MAX_RACKS_DRAWN = 6
CAPEX_FROM_BOM = "priced BOM"
CAPEX_FROM_HYBRID_BOM = "priced BOM of the hybrid's owned base"
CAPEX_ESTIMATED = "estimate: servers + network share"

# Country and legal region of each REGIONS key (data, for residency rules).
REGION_LOCATIONS: dict[str, pe.Location] = {
    "us-east": pe.Location("US"),
    "us-central": pe.Location("US"),
    "us-west": pe.Location("US"),
    "ca-central": pe.Location("CA"),
    "sa-east": pe.Location("BR"),
    "eu-west": pe.Location("IE", "EU"),
    "eu-west-2": pe.Location("GB"),
    "eu-central": pe.Location("DE", "EU"),
    "eu-north": pe.Location("SE", "EU"),
    "eu-south": pe.Location("IT", "EU"),
    "me-central": pe.Location("AE"),
    "af-south": pe.Location("ZA"),
    "ap-south": pe.Location("IN"),
    "ap-southeast": pe.Location("SG"),
    "ap-northeast": pe.Location("JP"),
    "ap-east": pe.Location("HK"),
    "ap-southeast-2": pe.Location("AU"),
}
# The area a region key stands for (its legal region, else its country): users there are
# served from a cloud listing in the same area (planner.engine.cloud_regions).
AREA_OF_REGION: dict[str, str] = {k: v.region or v.country for k, v in REGION_LOCATIONS.items()}
# fmt: off
EU_COUNTRIES = frozenset({
    "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE",
    "IT", "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE",
})
# fmt: on


class TcoNotReady(Exception):
    """The plan cannot be costed yet; the message says what is missing."""


# --- Facility ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RackTypeView:
    """One server kind of the plan in a site: its rack layout and elevation picture."""

    rack_type: selectors.RackType
    layout: fe.RackLayout
    svg: str
    racks_needed: int


@dataclass(frozen=True)
class SiteEvaluation:
    """Everything the site page shows about a site.

    Attributes:
        spec: The site as the engine took it (``None`` when the engine rejected a value).
        report: Facility checks for the plan's servers (``None`` without deployments).
        rack_views: Elevation per server kind.
        checked_as: The servers the checks ran on, as laid out ("2 × DGX B200 (14.3 kW,
            10U) + ..."); ``None`` when the site holds none.
        go_live: Date power readiness is checked against.
        go_live_assumed: True when the plan has no target go-live (today is used).
        feed_usable_kw: Usable power of one feed, kW.
        capacity_at_go_live_kw: Base capacity plus upgrades ready by go-live, kW.
        cooling_envelope: The cooling method's kW-per-rack envelope with its source.
        notes: Sentences about estimates and assumptions.
        error: Why the engine rejected the site, if it did.
        catalog_gap: Why the plan's servers cannot be checked (a figure missing from the
            catalog), if so; the site's own figures are still summarised.
        servers_elsewhere: The plan has servers, but its split places none at this site.
        units: How the site's heat, airflow and temperatures read (by its country).
        shown: The plan's currency at the TCO's rate, for the energy cost.
    """

    spec: fe.SiteSpec | None
    report: fe.FacilityReport | None
    rack_views: list[RackTypeView]
    checked_as: str | None
    go_live: date
    go_live_assumed: bool
    feed_usable_kw: float | None
    capacity_at_go_live_kw: float | None
    cooling_envelope: fe.CoolingEnvelope | None
    notes: list[str] = field(default_factory=list)
    error: str = ""
    catalog_gap: str = ""
    servers_elsewhere: bool = False
    units: SiteUnits = field(default_factory=SiteUnits)
    shown: ShownIn = USD_SHOWN

    @property
    def status(self) -> str:
        return self.report.status if self.report else ""

    @property
    def energy_per_month(self) -> str:
        """The facility's energy cost a month in the plan's currency: the figure the facility
        check's reason states (one conversion, :class:`ShownIn`)."""
        if self.report is None:
            return ""
        return self.shown.money(self.report.energy_usd_per_month)

    @property
    def check_rows(self) -> list[dict[str, str]]:
        """The checks with their figures formatted for display, in the site's units (``inf``
        reads "never" when the check fails, "no limit" when it passes, without a unit)."""
        if self.report is None:
            return []
        rows = []
        for c in self.report.checks:
            value, unit = self.units.quantity(c.value, c.unit)
            limit = None if c.limit is None else self.units.quantity(c.limit, c.unit)[0]
            rows.append(
                {
                    "key": c.key,
                    "title": c.title,
                    "status": c.status,
                    "value": _figure(value, c.status),
                    "limit": "—" if limit is None else _figure(limit),
                    # "never days late" and "already days of slack" read badly: the word alone.
                    "unit": "" if finite_or_none(c.value) is None else unit,
                    "reason": c.reason,
                    # The figures as every page shows them, each with its unit (shown.measure).
                    "value_shown": measure(value, unit, c.status),
                    "limit_shown": "—" if limit is None else measure(limit, unit),
                }
            )
        return rows


def _figure(value: float, status: str = "") -> str:
    # Infinite: unreachable (a failing check) or unbounded (power already there).
    if finite_or_none(value) is None:
        return "never" if status == "fail" else "no limit"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}"


def site_evaluate(
    *,
    plan: Plan,
    site: Site,
    upgrades: list[PowerUpgrade] | None = None,
    deployment: PlanDeployment | None = None,
) -> SiteEvaluation:
    """Facility checks, summary and rack elevations of ``site`` for the servers the plan's
    pooled deployment puts there.

    Args:
        plan: The plan (fetched through the tenant selector).
        site: A saved site, or an unsaved one being previewed.
        upgrades: Its upgrades when previewing unsaved ones; ``None`` reads the saved ones.
        deployment: The plan's pooled deployment if already loaded.
    """
    go_live = plan.target_go_live or timezone.localdate()
    assumed = plan.target_go_live is None
    try:
        return _site_evaluate(plan, site, upgrades, deployment, go_live, assumed)
    except EngineInputError as exc:
        # A stored value the engine refuses (saved before today's ranges): say which.
        return SiteEvaluation(
            None, None, [], None, go_live, assumed, None, None, None, [], str(exc),
            units=site_units_of(site),
        )  # fmt: skip


def plan_usd_rate(plan: Plan) -> UsdRate | None:
    """1 USD in the plan's currency at the TCO's dated rate (:func:`tco_fx`); ``None`` when
    the FX table has no such rate (the TCO page then says which rate is missing).

    Built once per request (``planner.computed``): a page's sections each show amounts in it.
    """
    if plan.pk is None:
        return _plan_usd_rate(plan)
    return computed(("usd_rate", plan.pk, plan.currency), lambda: _plan_usd_rate(plan))


def _plan_usd_rate(plan: Plan) -> UsdRate | None:
    try:
        fx = tco_fx(plan)
    except TcoNotReady:
        return None
    return UsdRate(fx["currency"], Decimal(fx["rate"]), fx["rate_date"])


def plan_shown_in(plan: Plan) -> ShownIn:
    """The plan's currency at the TCO's dated rate, for amounts the pages and the engine's
    sentences write (USD when the plan has no such rate)."""
    rate = plan_usd_rate(plan)
    return rate.shown_in if rate is not None else USD_SHOWN


def site_units_of(site: Site) -> SiteUnits:
    """The units a site reads in: by its country, else by its region's country."""
    country = site.country
    if not country and site.region_key in REGION_LOCATIONS:
        country = REGION_LOCATIONS[site.region_key].country
    return site_units(country)


def _site_pool(deployment: PlanDeployment, site: Site, notes: list[str]):
    """What the deployment puts at ``site``; a new site is previewed with the whole plan."""
    if site.pk is None:
        whole = deployment.as_one_site()
        if whole is not None:
            notes.append(
                f"A new site is previewed as if it held the whole plan ({whole.servers} "
                "servers); once saved, the plan's split decides what goes here."
            )
        return whole
    return deployment.site_pool(site)


def _site_evaluate(plan, site, upgrades, deployment, go_live, assumed) -> SiteEvaluation:
    spec = selectors.site_spec(site, upgrades)
    catalog_gap = ""
    if deployment is None:
        try:
            deployment = plan_deployment(plan=plan)
        except CatalogGapError as gap:
            deployment, catalog_gap = None, str(gap)
    feed_kw = fe.feed_usable_kw(
        spec.voltage_v, spec.amperage_a, spec.phase, spec.breaker_derating, spec.power_factor
    )
    notes = []
    if assumed:
        notes.append(
            "The plan has no target go-live date; power readiness is checked against today."
        )
    shown, units = plan_shown_in(plan), site_units_of(site)
    pool = _site_pool(deployment, site, notes) if deployment is not None else None
    types = deployment_rack_types(pool) if pool is not None else []
    report, servers, views = None, None, []
    if types:
        servers = " + ".join(
            f"{t.server_count} × {t.server_name} ({t.server_power_kw:.1f} kW, {t.server_ru}U)"
            for t in types
        )
        notes.extend(dict.fromkeys(a for t in types for a in t.assumptions))
        loads = [selectors.rack_load(site, t) for t in types]
        report = fe.check_site(spec, loads, go_live, shown=shown, units=units)
        for rack_type, load in zip(types, loads, strict=True):
            layout = fe.rack_layout(spec, load, max_racks=MAX_RACKS_DRAWN)
            needed = fe.check_facility(spec, load, go_live).racks_needed
            views.append(RackTypeView(rack_type, layout, fe.rack_elevation_svg(layout), needed))
    return SiteEvaluation(
        spec=spec,
        report=report,
        rack_views=views,
        checked_as=servers,
        go_live=go_live,
        go_live_assumed=assumed,
        feed_usable_kw=feed_kw,
        capacity_at_go_live_kw=fe.site_capacity_kw_on(spec, go_live),
        cooling_envelope=fe.COOLING_ENVELOPES[spec.cooling_method],
        notes=notes,
        catalog_gap=catalog_gap,
        servers_elsewhere=pool is None and deployment is not None and deployment.servers > 0,
        units=units,
        shown=shown,
    )


@transaction.atomic
def site_save(*, plan: Plan, site: Site, upgrades: Sequence[UpgradeIn] = ()) -> Site:
    """Save the site for the plan (its stored version is checked), replacing its planned
    power upgrades with ``upgrades``."""
    site.plan = plan
    site.save()
    site.upgrades.all().delete()
    PowerUpgrade.objects.bulk_create(
        PowerUpgrade(site=site, ready_date=d, added_kw=kw, note=note) for d, kw, note in upgrades
    )
    return site


def site_preview(
    *, plan: Plan, site: Site, upgrades: Sequence[UpgradeIn] = ()
) -> tuple[Site, list[PowerUpgrade]]:
    """The unsaved site and its upgrades as rows, for checks before saving."""
    site.plan = plan
    return site, [PowerUpgrade(ready_date=d, added_kw=kw, note=note) for d, kw, note in upgrades]


def site_delete(*, site: Site) -> None:
    site.delete()


# --- Placement --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlacementEvaluation:
    """The scored comparison and what it was built from.

    Attributes:
        result: Engine result, ``None`` when the plan has no workloads.
        rtt_budget_ms: Network budget used.
        ttft_target_ms: Tightest TTFT target, if any.
        user_regions: Region key → share of users (0-1), all workloads together.
        latency_notes: Option key → one sentence per user region.
        notes: Assumptions (generic options, missing sites, stale costs).
        cost_source: Where costs came from ("" when no TCO has finished).
        catalog_gap: Why the plan cannot be scored (a figure missing from the catalog).
        deployment_parts: Site key → the sentence saying it is part of one owned deployment.
        cost_currency: The currency of the costs scored (the TCO run's; "" without a run).
    """

    result: pe.PlacementResult | None
    rtt_budget_ms: float
    ttft_target_ms: float | None
    user_regions: dict[str, float]
    latency_notes: dict[str, list[str]]
    notes: list[str]
    cost_source: str = ""
    catalog_gap: str = ""
    deployment_parts: dict[str, str] = field(default_factory=dict)
    cost_currency: str = ""


def deployment_parts(results: dict | None) -> dict[str, str]:
    """Site key → one sentence saying that the site is part of the TCO's one owned option for
    the pooled deployment, with the site's share (its servers and NPV) named: the placement
    page and the checklist show it, so a site never reads as an alternative of its own.
    Empty when the run has no option split over several sites."""
    parts: dict[str, str] = {}
    currency = (results or {}).get("currency") or "USD"
    for option in (results or {}).get("options") or ():
        sites = option.get("sites") or ()
        if len(sites) < 2 or option.get("kind") == "hybrid":
            continue
        for p in sites:
            npv = p.get("npv_amount")
            share = f"{p.get('servers', 0)} servers" + (
                f", NPV {float(npv):,.0f} {currency}" if npv is not None else ""
            )
            parts[p["key"]] = (
                f"Part of one owned deployment, {option['label']}: its cost is the whole "
                f"deployment's; this site's share is {share}."
            )
    return parts


def site_location(site: Site) -> pe.Location:
    """Where a site processes data (its country, else its cloud region's), for residency."""
    country = site.country or (
        REGION_LOCATIONS[site.region_key].country if site.region_key in REGION_LOCATIONS else ""
    )
    return pe.Location(country or "??", "EU" if country in EU_COUNTRIES else "")


def _worst_rtt(coords, user_regions: dict[str, float], ttft_ms: float | None):
    if coords is None or not user_regions:
        return None, []
    rows = flag_regions(coords[0], coords[1], user_regions, ttft_ms or 1e9)
    return max(r.rtt_ms for r in rows), [
        r.note if ttft_ms else r.note.split(" leaves")[0] for r in rows
    ]


def placement_evaluate(
    *, plan: Plan, decision: PlacementDecision | None = None
) -> PlacementEvaluation:
    """Score cloud, owned DC, colocation, edge and hybrid for the plan.

    Options come from the plan's sites (one per site; a cloud region when none is entered is
    the region with the lowest worst round trip among those the residency rules allow).
    Latency is the worst round trip from the workloads' user regions; cost is the cost per
    million output tokens of the latest finished TCO run.
    """
    decision = decision or selectors.placement_decision_get(plan=plan)
    workloads = list(plan_selectors.workload_list(plan=plan))
    notes: list[str] = []
    if not workloads:
        return PlacementEvaluation(None, 0.0, None, {}, {}, ["The plan has no workloads yet."])
    try:
        deployments = {d.workload_id: d for d in workload_deployments(plan=plan)}
    except CatalogGapError as gap:
        return PlacementEvaluation(None, 0.0, None, {}, {}, [], catalog_gap=str(gap))

    # Users: every workload's region shares, weighted by its peak accelerators.
    user_regions = _user_region_shares(
        workloads, {pk: d.accelerators for pk, d in deployments.items()}
    )
    profile = [0.0] * 24
    for w in workloads:
        weight = deployments[w.pk].accelerators if w.pk in deployments else 1
        shares = de.profile_shares(w.daily_profile or [1.0] * 24)
        profile = [p + weight * v for p, v in zip(profile, shares, strict=True)]
    if not user_regions:
        notes.append("No workload names its users' regions, so latency is not scored.")

    ttfts = [w.ttft_ms for w in workloads if w.ttft_ms]
    ttft = float(min(ttfts)) if ttfts else None
    budget = ttft * decision.network_share_pct / 100 if ttft else 200.0
    rules = selectors.residency_rules(plan=plan)
    engine_rules = tuple(
        pe.ResidencyRule(w.name, frozenset(rules[w.pk].tokens), frozenset(rules[w.pk].tokens))
        for w in workloads
        if w.pk in rules and rules[w.pk].tokens
    )

    costs, cost_source, cost_currency, cloud_basis = _tco_costs(plan)
    notes.extend(cloud_basis)
    options: list[pe.PlacementOption] = []
    latency: dict[str, list[str]] = {}

    def add(key, kind, label, locations, coords, cost=None, rtt=None):
        worst, rows = (rtt, []) if rtt is not None else _worst_rtt(coords, user_regions, ttft)
        latency[key] = rows
        options.append(pe.PlacementOption(key, kind, label, tuple(locations), worst, cost))

    sites = list(selectors.site_list(plan=plan))
    cloud_sites = [s for s in sites if s.kind == SiteKind.CLOUD_REGION]
    owned_sites = [s for s in sites if s.kind == SiteKind.OWN_DC]
    colo_sites = [s for s in sites if s.kind == SiteKind.COLOCATION]
    cloud_cost = costs.get("cloud")

    best_region = _best_cloud_region(user_regions, ttft, engine_rules)
    region = REGIONS[best_region]
    if cloud_sites:
        for s in cloud_sites:
            add(
                f"site-{s.pk}",
                "public_cloud",
                f"Cloud: {s.name}",
                [site_location(s)],
                selectors.site_coordinates(s),
                cloud_cost,
            )
    else:
        # Every option must meet every workload's residency rule (the engine scores the
        # option's locations against all of them), so the regions come from their intersection.
        allowed = _allowed_cloud_regions(engine_rules)
        served = pe.cloud_region_per_user_region(
            list(user_regions),
            {k: (r.lat, r.lon) for k, r in REGIONS.items()},
            allowed,
        ) or (pe.RegionAssignment("", best_region, 0.0),)
        chosen = list(dict.fromkeys(a.cloud_region for a in served))
        by_region = {
            c: [a.user_region for a in served if a.cloud_region == c and a.user_region]
            for c in chosen
        }
        label = ", ".join(
            f"{c} ({REGIONS[c].city})"
            + (f" for {'/'.join(by_region[c])} users" if by_region[c] and len(chosen) > 1 else "")
            for c in chosen
        )
        add(
            "public_cloud",
            "public_cloud",
            f"Public cloud: {label}",
            [REGION_LOCATIONS[c] for c in chosen],
            None,
            cloud_cost,
            rtt=max(a.rtt_ms for a in served) if user_regions else None,
        )
        latency["public_cloud"] = [
            f"{a.user_region} users served from {a.cloud_region} ({REGIONS[a.cloud_region].city}): "
            f"{a.rtt_ms:.0f} ms round trip"
            for a in served
            if a.user_region
        ]
        notes.append(
            "No cloud region entered as a site: each user region is served from the allowed "
            f"cloud region with the shortest round trip ({label})."
        )
    # The plan's physical sites are the ones the consultant weighs: an assumed site (no cost, a
    # city the planner picked) is only offered when none is entered at all, so a plan with a
    # colocation site is not also shown an own data centre nobody proposed, nor the reverse.
    physical_entered = bool(owned_sites or colo_sites)
    for kind, group, title in (
        ("owned_dc", owned_sites, "Own data centre"),
        ("colocation", colo_sites, "Colocation"),
    ):
        for s in group:
            add(
                f"site-{s.pk}",
                kind,
                f"{title}: {s.name}",
                [site_location(s)],
                selectors.site_coordinates(s),
                costs.get(f"site-{s.pk}"),
            )
        if not physical_entered:
            add(
                kind,
                kind,
                f"{title} (no site entered, assumed near {region.city})",
                [REGION_LOCATIONS[best_region]],
                (region.lat, region.lon),
            )
            notes.append(f"No {title.lower()} site entered: assumed near {region.city}, no cost.")
    edge_locations = [REGION_LOCATIONS[k] for k in user_regions] or [pe.Location("??")]
    add("edge", "edge", "Edge (next to the users)", edge_locations, None, None, rtt_ms(0.0))
    base = (owned_sites + colo_sites)[:1]
    base_key = f"site-{base[0].pk}" if base else "owned_dc"
    base_option = next(o for o in options if o.key == base_key)
    cloud_option = options[0]
    rtts = [o.worst_rtt_ms for o in (base_option, cloud_option) if o.worst_rtt_ms is not None]
    tco_hybrid = _latest_tco_hybrid(plan)
    physical_keys = {f"site-{s.pk}" for s in owned_sites + colo_sites}
    based = [
        p
        for p in (tco_hybrid or {}).get("sites") or ()
        if p.get("servers") and p["key"] in physical_keys
    ]
    if based and not tco_hybrid.get("collapses_to_cloud"):
        # The TCO's hybrid (one computation): its base sites and their burst regions, each
        # workload's data where its own replicas and bursts run.
        options.append(
            _hybrid_placement(plan, tco_hybrid, based, sites, user_regions, costs.get("hybrid"))
        )
        latency["hybrid"] = [row for p in based for row in latency.get(p["key"], [])]
    elif _hybrid_collapsed(plan):
        # The TCO found no owned base worth having: the hybrid is the cloud, scored as such.
        add(
            "hybrid",
            "public_cloud",
            (tco_hybrid or {}).get("label")
            or "Hybrid (collapses to cloud: the TCO's best owned base is 0 servers)",
            list(cloud_option.locations),
            None,
            costs.get("hybrid"),
            cloud_option.worst_rtt_ms,
        )
        latency["hybrid"] = latency.get(cloud_option.key, [])
        notes.append(
            "Hybrid collapses to cloud: in the latest TCO no owned base lowers the cost, so it "
            "is scored as public cloud (its control, steadiness and locations)."
        )
    else:
        add(
            "hybrid",
            "hybrid",
            f"Hybrid ({base[0].name if base else 'owned base'} + cloud bursts)",
            list(base_option.locations) + list(cloud_option.locations),
            None,
            costs.get("hybrid"),
            max(rtts) if rtts else None,
        )
        latency["hybrid"] = latency.get(base_option.key, [])

    result = pe.score_placement(
        pe.PlacementInputs(
            options=tuple(options),
            daily_profile=tuple(profile) if max(profile) > 0 else (1.0,) * 24,
            residency_rules=engine_rules,
            rtt_budget_ms=budget,
            control_requirement=decision.control_requirement,
            cost_currency=cost_currency,
            **_edge_need(workloads),
        )
    )
    return PlacementEvaluation(
        result, budget, ttft, user_regions, latency, notes, cost_source,
        deployment_parts=deployment_parts(_latest_tco_results(plan)),
        cost_currency=cost_currency,
    )  # fmt: skip


def _latest_tco_hybrid(plan: Plan) -> dict | None:
    """The latest finished TCO run's hybrid option (``None`` without one)."""
    results = _latest_tco_results(plan) or {}
    return next((o for o in results.get("options") or () if o.get("kind") == "hybrid"), None)


def _hybrid_placement(plan, hybrid, based, sites, user_regions, cost) -> pe.PlacementOption:
    """The placement row of the TCO's hybrid: its label, its base sites and burst regions as
    locations, each workload's data where its replicas and their bursts run, and the worst
    round trip of a user region to the nearest of those places."""
    by_key = {f"site-{s.pk}": s for s in sites}
    regions = {p["key"]: p.get("burst_region") or "" for p in based}
    places: dict[str, tuple[pe.Location, tuple[float, float] | None]] = {}
    for p in based:
        site = by_key[p["key"]]
        places[p["key"]] = (site_location(site), selectors.site_coordinates(site))
        if regions[p["key"]] in REGIONS:
            r = REGIONS[regions[p["key"]]]
            places[regions[p["key"]]] = (REGION_LOCATIONS[regions[p["key"]]], (r.lat, r.lon))
    per_workload: dict[str, tuple[pe.Location, ...]] = {}
    try:
        deployment = plan_deployment(plan=plan)
    except (CatalogGapError, EngineInputError):
        deployment = None
    if deployment is not None:
        names = {w.pk: w.name for w in plan_selectors.workload_list(plan=plan)}
        for workload_id, parts in deployment.pooled.workload_sites.items():
            keys = [k for k, n in parts if n]
            per_workload[names.get(workload_id, "")] = tuple(
                places[x][0] for k in keys for x in (k, regions.get(k, "")) if x in places
            )
    worst = None
    located = [c for _, c in places.values() if c is not None]
    if user_regions and located:
        worst = max(
            min(rtt_ms(haversine_km(REGIONS[u].lat, REGIONS[u].lon, *c)) for c in located)
            for u in user_regions
        )
    return pe.PlacementOption(
        "hybrid",
        "hybrid",
        hybrid["label"],
        tuple(loc for loc, _ in places.values()),
        worst,
        cost,
        workload_locations=per_workload,
    )


def _latest_tco_results(plan: Plan) -> dict | None:
    run = (
        TcoRun.objects.filter(plan=plan, status=TcoStatus.SUCCEEDED)
        .order_by("-finished_at")
        .first()
    )
    return run.results if run else None


def _edge_need(workloads) -> dict:
    """The largest model's weights (GB) and the widest chosen replica, for the edge fit rule."""
    weights = [sizing.model_weights_gb(w) for w in workloads]
    wide = [sizing.chosen_accelerators_per_replica(w) for w in workloads if w.has_choice]
    return {
        "model_weights_gb": max(weights) if weights else None,
        "accelerators_per_replica": max(wide) if wide else None,
    }


def _allowed_cloud_regions(rules) -> list[str]:
    """Cloud regions every residency rule allows (all of them when none allows any)."""
    return [k for k, loc in REGION_LOCATIONS.items() if all(r.allows(loc) for r in rules)] or list(
        REGION_LOCATIONS
    )


def _best_cloud_region(user_regions, ttft, rules) -> str:
    allowed = _allowed_cloud_regions(rules)
    if not user_regions:
        return allowed[0]
    return min(
        allowed,
        key=lambda k: _worst_rtt((REGIONS[k].lat, REGIONS[k].lon), user_regions, ttft)[0],
    )


def _hybrid_collapsed(plan: Plan) -> bool:
    """Whether the latest finished TCO run's cheapest hybrid owns no servers."""
    run = (
        TcoRun.objects.filter(plan=plan, status=TcoStatus.SUCCEEDED)
        .order_by("-finished_at")
        .first()
    )
    options = (run.results or {}).get("options", []) if run else []
    return any(o["kind"] == "hybrid" and o.get("collapses_to_cloud") for o in options)


def _tco_costs(plan: Plan) -> tuple[dict[str, float], str, str, list[str]]:
    """Cost per million output tokens per placement key from the latest finished TCO run,
    where they come from, their currency (the run's: the plan's), and what the cloud's cost
    is (the TCO's break-even reference, with its region flags)."""
    run = (
        TcoRun.objects.filter(plan=plan, status=TcoStatus.SUCCEEDED)
        .order_by("-finished_at")
        .first()
    )
    if run is None or not run.results:
        return {}, "", "", []
    costs: dict[str, float] = {}
    cloud_basis: list[str] = []
    cloud: list[tuple[float, str]] = []
    for o in run.results["options"]:
        value = o.get("cost_per_million_output_tokens_amount")
        if value is None:
            continue
        if o["kind"].startswith("cloud"):
            cloud.append((float(value), o["label"]))
        else:
            costs[o["key"]] = float(value)
            if o["kind"] == "hybrid":
                continue  # its base sites are the hybrid's, not the owned deployment's
            for part in o.get("sites") or ():  # every site of the one deployment: its cost
                costs[part["key"]] = float(value)
    reference = next(
        (o for o in run.results["options"] if o["key"] == run.results.get("reference")), None
    )
    if reference is not None and reference.get("cost_per_million_output_tokens_amount"):
        # the cheapest cloud option the consultant allowed, as the TCO's break-even
        costs["cloud"] = float(reference["cost_per_million_output_tokens_amount"])
        cloud_basis.append(
            f"Public cloud cost: {reference['label']}, the TCO's break-even reference (the "
            "cheapest cloud option allowed)."
        )
        cloud_basis.extend(reference.get("flags") or ())
    elif cloud:
        costs["cloud"] = min(cloud)[0]
    fresh = _current_hash(plan) == run.input_hash
    source = f"TCO run of {run.finished_at:%Y-%m-%d %H:%M}" + (
        "" if fresh else " (stale: the plan has changed since)"
    )
    return costs, source, run.results["currency"], cloud_basis


@transaction.atomic
def placement_settings_save(
    *,
    plan: Plan,
    network_share_pct: Decimal,
    control_requirement: str,
    residency: Mapping[int, str],
    decision: PlacementDecision | None = None,
) -> PlacementDecision:
    """Save the network share, control need and per-workload residency rules (workload id →
    the regions its data may be served from, as the placement form writes them).

    ``decision`` is the row the form was checked against (its version is checked on save);
    without one, or when it is not stored yet, the plan's decision is fetched or created.

    Raises:
        StaleEditError: The decision was saved by someone else since the form's check.
    """
    if decision is None or decision.pk is None:
        decision, _ = PlacementDecision.objects.get_or_create(plan=plan)
    decision.network_share_pct = network_share_pct
    decision.control_requirement = control_requirement
    decision.save(update_fields=["network_share_pct", "control_requirement"])
    for workload_id, allowed in residency.items():
        ResidencyRule.objects.update_or_create(
            workload_id=workload_id, defaults={"allowed": allowed}
        )
    return decision


def placement_choice_save(
    *,
    plan: Plan,
    user,
    option_key: str,
    reason: str,
    evaluation: PlacementEvaluation,
    decision: PlacementDecision | None = None,
) -> PlacementDecision:
    """Record the consultant's choice and reason with the comparison as it stood.

    ``decision`` as for :func:`placement_settings_save`. Submitting the recorded choice
    again, with the same reason and scores, changes nothing.

    Raises:
        StaleEditError: The decision was saved by someone else since the form's check.
    """
    row = evaluation.result.by_key(option_key)
    if decision is None or decision.pk is None:
        decision, _ = PlacementDecision.objects.get_or_create(plan=plan)
    scores = {
        "options": [
            {
                "key": o.key,
                "label": o.label,
                "rank": o.rank,
                "total": round(o.weighted_total, 2),
                "eligible": o.eligible,
            }
            for o in evaluation.result.options
        ],
        "rtt_budget_ms": round(evaluation.rtt_budget_ms, 1),
    }
    if (decision.chosen_key, decision.reason, decision.scores) == (row.key, reason, scores):
        return decision  # the same choice resubmitted: keep who decided it and when
    decision.chosen_key = row.key
    decision.chosen_kind = row.kind
    decision.chosen_label = row.label
    decision.reason = reason
    decision.scores = scores
    decision.decided_by = user
    decision.decided_at = timezone.now()
    decision.save()
    return decision


# --- TCO inputs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TcoBuild:
    """The engine inputs for a plan, their canonical JSON and hash, and where each came from."""

    inputs: te.TcoInputs
    canonical: dict[str, Any]
    input_hash: str
    basis: list[str]
    capex_basis: str = ""


def tco_inputs_build(*, plan: Plan, settings: TcoSettings | None = None) -> TcoBuild:
    """Translate the plan (deployments, sites, TCO settings, catalog prices) into TcoInputs.

    Raises:
        TcoNotReady: No workload has a chosen configuration, a chosen configuration lacks a
            catalog figure, no cloud price is known, or the engine refuses a value (the
            message names it).
    """
    if settings is not None:  # settings not saved yet (a preview): never kept
        return _tco_inputs_build_checked(plan=plan, settings=settings)
    return computed(
        ("tco_inputs", plan.pk), lambda: _tco_inputs_build_checked(plan=plan, settings=None)
    )


def _tco_inputs_build_checked(*, plan: Plan, settings: TcoSettings | None) -> TcoBuild:
    try:
        return _tco_inputs_build(plan=plan, settings=settings)
    except CatalogGapError as gap:
        raise TcoNotReady(str(gap)) from gap
    except EngineInputError as exc:
        raise TcoNotReady(f"The TCO cannot be computed from these inputs: {exc}.") from exc


def _tco_inputs_build(*, plan: Plan, settings: TcoSettings | None) -> TcoBuild:
    settings = settings or selectors.tco_settings_get(plan=plan)
    deployment = plan_deployment(plan=plan)
    deployments = [d for d in deployment.per_workload if d.accelerators > 0]
    if not deployments or not deployment.servers:
        raise TcoNotReady("No workload has a chosen configuration yet.")
    workloads = {w.pk: w for w in plan_selectors.workload_list(plan=plan)}
    basis: list[str] = []
    # Amounts in the basis read in the plan's currency, at the rate the results are shown at.
    fx = tco_fx(plan)
    shown = ShownIn(fx["currency"], float(fx["rate"]))
    users = _user_region_shares(
        workloads.values(), {d.workload_id: d.accelerators for d in deployments}
    )
    pricing, providers, burst_listings = _tco_cloud(settings, deployments, basis, shown, users)
    growth = float(settings.growth_pct_per_month)
    demands = []
    for d in deployments:
        demand = selectors.workload_demand(workloads[d.workload_id], d)
        rented = (
            None
            if settings.cloud_keeps_spares
            else tco_prices.cloud_gpus_by_hour(workloads[d.workload_id], d)
        )
        workload = workloads[d.workload_id]
        prefill_s, decode_s = tco_prices.accelerator_seconds_per_request(workload)
        demands.append(
            te.WorkloadDemand(
                **{
                    **asdict(demand),
                    "growth_pct_per_month": growth,
                    "cloud_gpus_by_hour": rented,
                    "input_tokens_per_month": demand.requests_per_month
                    * float(workload.input_tokens_mean or 0),
                    "prefill_accelerator_s_per_request": prefill_s,
                    "decode_accelerator_s_per_request": decode_s,
                    "key": str(workload.pk),
                    "site_shares": _workload_site_shares(deployment, d.workload_id),
                }
            )
        )
    unsplit = [d.workload_name for d, w in zip(deployments, demands, strict=True)
               if w.prefill_accelerator_s_per_request is None]  # fmt: skip
    basis.append(
        "Each workload's cost per request: the option's cost split by the workloads' "
        "accelerator-seconds (each request's prompt and output on its chosen configuration); "
        "input and output tokens pay for their own compute."
        if not unsplit
        else "Each workload's cost per request: the option's cost split by the workloads' "
        f"GPU-hours, since {', '.join(unsplit)} was chosen before the sizing modelled a "
        "request's accelerator-seconds (choose it again to split by compute); input and "
        "output tokens are not priced apart."
    )
    if providers and not settings.cloud_keeps_spares:
        basis.extend(
            f"{d.workload_name}: saved without its operating point, so the cloud rents what "
            "the owned fleet runs (N+1 spare and headroom included)."
            for d, w in zip(deployments, demands, strict=True)
            if w.cloud_gpus_by_hour is None
        )
    if providers:
        basis.append(
            "Cloud options rent the N+1 spares and headroom as well, as asked."
            if settings.cloud_keeps_spares
            else "Cloud options rent the replicas the load needs each hour, without the owned "
            "fleet's N+1 spares and headroom (the provider's SLA replaces them)."
        )
    # Servers and power of the pooled deployment (every site, N+1 spares included).
    servers = deployment.servers
    per_server = deployment.accelerators_installed // servers
    power_kw = deployment.it_load_kw / servers
    basis.append(
        f"Owned hardware: {servers} servers with {deployment.accelerators_installed} "
        f"accelerators ({deployment.accelerators_used} used at peak) and "
        f"{deployment.it_load_kw:.1f} kW, from the plan's pooled deployment."
    )
    kinds = {
        (p.platform.accelerators_per_server, p.platform.server_power_kw)
        for p in deployment.pooled.pools
    }
    if len(kinds) > 1:
        basis.append(
            f"Mixed servers costed at their mean: {per_server} accelerators and "
            f"{power_kw:.2f} kW per server (the same total power)."
        )
    prices = tco_prices.hardware_prices(plan=plan, deployments=deployments, shown=shown)
    server_price, maintenance, network = _tco_hardware_basis(
        settings, deployments, prices, basis, shown
    )
    hardware = te.OwnedHardware(
        server_count=servers,
        gpus_per_server=per_server,
        server_price_usd=server_price,
        server_power_kw=power_kw,
        network_usd=network,
        storage_usd=float(settings.storage_usd),
        install_usd=float(settings.install_usd),
        shipping_and_duties_usd=float(settings.shipping_and_duties_usd),
        spares_fraction=float(settings.spares_pct) / 100,
        maintenance_fraction_per_year=maintenance,
        residual_fraction=float(settings.residual_pct) / 100,
        lifetime_months=settings.lifetime_months,
        idle_power_fraction=float(settings.idle_power_pct) / 100,
    )
    physical = [
        s
        for s in selectors.site_list(plan=plan)
        if s.kind in (SiteKind.OWN_DC, SiteKind.COLOCATION)
    ]
    placed = {
        s.pk: (deployment.site_pool(s).servers if deployment.site_pool(s) else 0) for s in physical
    }
    pooled = sum(placed.values()) == servers
    # Each site's load as its facility check has it (servers and network gear), when every
    # site holding servers has one: power and space are charged on it.
    loads = site_loads_kw(plan=plan, deployment=deployment) if pooled else {}
    if not all(loads.get(pk) is not None for pk, n in placed.items() if n):
        loads = {}
    sites = tuple(
        te.SiteCost(
            key=f"site-{s.pk}",
            label=s.name,
            kind="owned" if s.kind == SiteKind.OWN_DC else "colocation",
            facility_usd_per_kw_month=float(s.facility_usd_per_kw_month),
            pue=float(s.pue),
            power_usd_per_kwh=float(s.power_usd_per_kwh),
            staff_usd_per_month=float(s.staff_usd_per_month),
            servers=placed[s.pk] if pooled else 0,
            **(_hybrid_site_fields(plan, deployment, s) if pooled else {}),
            it_load_kw=loads.get(s.pk) if placed[s.pk] else None,
        )
        for s in physical
        if placed[s.pk] or not pooled
    )
    if providers and settings.on_demand_usd_per_gpu_h is None:
        sites = tuple(_site_burst(s, providers[0], burst_listings, basis, shown) for s in sites)
    if loads:
        site_kw = sum(s.it_load_kw or 0.0 for s in sites)
        hardware = replace(hardware, network_power_kw=max(site_kw - deployment.it_load_kw, 0.0))
        basis.append(
            f"Power and space on {site_kw:.1f} kW, the sites' facility checks: "
            + ", ".join(f"{s.label} {s.it_load_kw:.1f} kW" for s in sites if s.servers)
            + f" (the servers' {deployment.it_load_kw:.1f} kW and the network gear's "
            f"{hardware.network_power_kw:.1f} kW)."
        )
    if pooled and sites:
        basis.append(
            "One owned option for the plan's deployment: "
            + ", ".join(f"{s.label} {s.servers} servers" for s in sites)
            + ", each site at its own power price, PUE and space (the demand split by the "
            "sites' server shares)."
        )
    if not sites:
        sites = (te.SiteCost("colocation", "Colocation (engine defaults)"),)
        basis.append(
            "No own or colocation site entered: a colocation site at the engine defaults "
            f"({te.DEFAULT_COLOCATION_USD_PER_KW_MONTH:g} USD/kW-month CBRE H2 2024, PUE "
            f"{fe.DEFAULT_PUE:g}, {fe.DEFAULT_POWER_USD_PER_KWH:g} USD/kWh EIA 2023)."
        )
    hardware, capex_basis = _tco_capex(plan, settings, hardware, fx, basis)
    inputs = te.TcoInputs(
        workloads=tuple(demands),
        cloud=pricing,
        hardware=hardware,
        sites=sites,
        # the hybrid's owned base sits where the deployment puts most servers
        hybrid_site=max(sites, key=lambda s: s.servers).key,
        horizon_months=settings.horizon_months,
        cost_of_capital=float(settings.cost_of_capital_pct) / 100,
        providers=providers,
    )
    if fx["currency"] != "USD":
        basis.append(
            f"Amounts shown in {fx['currency']}: the TCO computes in USD (catalog and cloud "
            f"prices) and converts at 1 USD = {fx['rate']} {fx['currency']} (rate of "
            f"{fx['rate_date']})."
        )
    canonical = {
        "version": TCO_INPUTS_VERSION,
        "fx": fx,
        "inputs": asdict(inputs),
        "capex_basis": capex_basis,
        "monte_carlo": {"paths": MONTE_CARLO_PATHS, "seed": MONTE_CARLO_SEED},
        "sensitivity": {"swing": SENSITIVITY_SWING},
    }
    return TcoBuild(inputs, canonical, canonical_hash(canonical), basis, capex_basis)


def _support_words(capex: te.BomCapex, currency: str) -> str:
    """How the TCO counts the BOM's support contracts (engine: ``support_renewals``)."""
    terms = "; ".join(
        f"{amount:,.0f} {currency} "
        + ("a year" if term == 12 else f"for {term // 12} years" if term % 12 == 0 else
           f"for {term} months")
        for term, amount in capex.support_terms
    )  # fmt: skip
    return (
        f"its support contract ({terms}) is paid once with the servers, for its term, and "
        "renewed at the term's end, pro rata to the months the servers and the horizon have "
        "left; it is the maintenance"
    )


def _tco_capex(
    plan: Plan,
    settings: TcoSettings,
    hardware: te.OwnedHardware,
    fx: dict[str, Any],
    basis: list[str],
) -> tuple[te.OwnedHardware, str]:
    """The fleet with the priced BOM as its capex (the quote's cost basis), and the capex
    basis; without a fully priced BOM of this deployment, the estimate as it is, said so."""
    # sourcing sits above facility (.importlinter) until the TCO moves above it
    from sourcing.services import HYBRID, SourcingError, bom_option, landed_cost_report

    try:
        option = bom_option(plan=plan)
        report = landed_cost_report(plan=plan, organisation=plan.organisation)
    except (SourcingError, LandedCostError) as exc:
        basis.append(f"Capex basis: {CAPEX_ESTIMATED}, as the BOM could not be priced ({exc}).")
        return hardware, CAPEX_ESTIMATED
    lines = [
        te.BomCostLine(
            category=cost.line.category,
            quantity=cost.line.quantity,
            goods_amount=float(
                cost.landed.goods.amount if cost.landed else cost.service_cost.amount
            ),
            landed_amount=float(
                cost.landed.landed_cost_net.amount if cost.landed else cost.service_cost.amount
            ),
            support=cost.line.service == "support",
            # the months the support offer's price buys, paid once (12: a yearly price)
            term_months=(cost.chosen.term_months if cost.chosen else None)
            or te.BOM_SUPPORT_PREPAID_MONTHS,
        )
        for cost in report.lines
        if cost.landed is not None or cost.service_cost is not None
    ]
    why = ""
    # the BOM buys the chosen option's hardware: the hybrid's base, or none for the cloud
    base = option.base_servers or None if option.kind == HYBRID else None
    if not option.buys_hardware:
        why = f"the BOM buys no hardware ({option.text})"
    elif not report.lines:
        why = "no BOM yet (generate it under Sourcing to cost the plan's own parts)"
    elif report.unpriced_lines or not report.complete or len(lines) != len(report.lines):
        why = (
            "the BOM is not fully priced yet "
            f"({max(report.unpriced_lines, len(report.lines) - len(lines))} lines without a "
            "landed cost)"
        )
    if not why:
        capex = te.bom_capex(lines)
        try:
            bought = te.hardware_from_bom(
                hardware,
                capex,
                amount_per_usd=float(fx["rate"]),
                maintenance_from_support=settings.maintenance_pct_per_year is None,
                base_servers=base,
            )
        except EngineInputError as exc:
            why = str(exc)
    if why:
        basis.append(
            f"Capex basis: {CAPEX_ESTIMATED} (the servers' price, the network as above, storage, "
            f"installation and shipping as entered), as {why}."
        )
        return hardware, CAPEX_ESTIMATED
    ccy = fx["currency"]
    vat_kept = report.vat_not_recoverable
    vat_words = (
        f", the VAT the client cannot recover ({format_money(vat_kept.amount, ccy)})"
        if vat_kept is not None and vat_kept.amount
        else ""
    )
    if base is not None:
        basis.append(
            f"Capex basis: {CAPEX_FROM_HYBRID_BOM}. The chosen hybrid buys the BOM, its owned "
            f"base of {base} of the deployment's {hardware.server_count} servers, at landed "
            f"cost, {format_money(capex.total_amount, ccy)}: the quote's cost basis before "
            "markup. The owned option and the other bases are costed from it per server."
        )
        return bought, CAPEX_FROM_HYBRID_BOM
    basis.append(
        f"Capex basis: {CAPEX_FROM_BOM}. The owned option buys the BOM at landed cost, "
        f"{format_money(capex.total_amount, ccy)} (servers {capex.server_amount:,.0f}, network "
        f"{capex.network_amount:,.0f}, storage {capex.storage_amount:,.0f}, racks, PDUs and "
        f"spare parts {capex.other_hardware_amount:,.0f}, services "
        f"{capex.services_amount:,.0f}, freight, insurance, brokerage{vat_words} and duty "
        f"{capex.shipping_amount:,.0f} {ccy}): the quote's cost basis before markup. Its spare "
        "parts replace the spares percentage"
        + (f"; {_support_words(capex, ccy)}." if capex.support_amount else ".")
    )
    entered = [
        label
        for label, value in (
            ("server price", settings.server_price_usd),
            ("network", settings.network_usd),
            ("storage", settings.storage_usd or None),
            ("installation", settings.install_usd or None),
            ("shipping and duties", settings.shipping_and_duties_usd or None),
        )
        if value is not None
    ]
    if entered:
        basis.append(f"Not used while the BOM is priced: the {', '.join(entered)} entered by hand.")
    return bought, CAPEX_FROM_BOM


def _workload_site_shares(
    deployment: PlanDeployment, workload_id: int
) -> tuple[tuple[str, float], ...]:
    """(site key, fraction) of a workload's replicas at each site of the pooled deployment
    (split by where its users are); its load is served there in the owned and hybrid options."""
    placed = deployment.pooled.workload_sites.get(workload_id, ())
    total = sum(n for _, n in placed)
    return tuple((key, n / total) for key, n in placed if n) if total else ()


def _hybrid_site_fields(plan: Plan, deployment: PlanDeployment, site: Site) -> dict[str, Any]:
    """A deployment site's N+1 spares and the cloud region its hybrid bursts run in: the
    region nearest the site (which serves its workloads' users within their budget) among
    those the residency rules of the workloads placed there allow."""
    pool = deployment.site_pool(site)
    key = f"site-{site.pk}"
    here = {w for w, parts in deployment.pooled.workload_sites.items() if dict(parts).get(key)}
    rules = selectors.residency_rules(plan=plan)
    names = {w.pk: w.name for w in plan_selectors.workload_list(plan=plan)}
    engine_rules = tuple(
        pe.ResidencyRule(names.get(w, ""), frozenset(rules[w].tokens), frozenset(rules[w].tokens))
        for w in here
        if w in rules and rules[w].tokens
    )
    coords = selectors.site_coordinates(site)
    region = ""
    if coords is not None:
        allowed = _allowed_cloud_regions(engine_rules)
        region = pe.cloud_region_per_user_region(
            ["site"], {"site": coords, **{k: (r.lat, r.lon) for k, r in REGIONS.items()}}, allowed
        )[0].cloud_region
    return {
        "spare_servers": sum(p.spare_servers for p in pool.pools) if pool else 0,
        "burst_region": region,
    }


def tco_fx(plan: Plan) -> dict[str, Any]:
    """The dated USD → plan currency rate the TCO's amounts are shown at.

    The engine computes in USD (catalog and cloud prices are USD); every amount a client sees
    is converted once, when the results are stored (:func:`tco_results_serialise`), at the
    latest rate on or before the plan's valuation date (the order date, else today).

    Raises:
        TcoNotReady: The FX table has no such rate (the message names the pair and date).
    """
    # sourcing sits above facility (.importlinter) until the TCO moves above it
    from sourcing import selectors as ss
    from sourcing.services import sourcing_settings_get, valuation_date

    currency = plan.currency
    if currency == "USD":
        return {"currency": "USD", "rate": "1", "rate_date": None}
    on = valuation_date(sourcing_settings_get(plan=plan))
    try:
        rate, rate_date = ss.fx_table().rate("USD", currency, on)
    except LandedCostError as exc:
        raise TcoNotReady(
            f"No USD → {currency} exchange rate on or before {on:%Y-%m-%d}: the TCO computes "
            f"in USD and shows the plan's {currency}; add the rate under FX rates."
        ) from exc
    # The rate as shown (6 decimals) is the rate applied, so every figure can be checked.
    shown = rate.quantize(Decimal("0.000001"))
    return {"currency": currency, "rate": str(shown), "rate_date": f"{rate_date:%Y-%m-%d}"}


def _tco_cloud(
    settings: TcoSettings,
    deployments: list[Deployment],
    basis: list[str],
    shown: ShownIn = USD_SHOWN,
    user_regions: Mapping[str, float] | None = None,
) -> tuple[te.CloudPricing, tuple[te.CloudProvider, ...], tuple[cr.Listing, ...]]:
    """The cloud side: each allowed provider's own price list, or one per-GPU-hour price;
    and the first provider's listings region by region (for the sites' bursts).

    A per-GPU-hour price entered by hand, or a plan mixing accelerators, is compared as one
    price per GPU-hour (with the discounts entered, listed or defaulted, as labelled).
    Otherwise every provider is compared on its own list, priced in the region serving each
    user region (``user_regions``), and the first provider's on-demand price per
    accelerator-hour prices the owned fleet's bursts.
    """
    choice = tco_prices.cloud_providers(
        deployments=deployments,
        chosen=list(settings.cloud_providers or []),
        user_regions=user_regions,
        area_of=AREA_OF_REGION,
        commit_pct=(
            None if settings.commit_1yr_discount_pct is None
            else float(settings.commit_1yr_discount_pct),
            None if settings.commit_3yr_discount_pct is None
            else float(settings.commit_3yr_discount_pct),
        ),
    )  # fmt: skip
    if settings.on_demand_usd_per_gpu_h is None and choice.providers:
        first = choice.providers[0]
        basis.extend(choice.sources)
        on_demand = first.on_demand_usd_per_instance_h / first.gpus_per_instance
        basis.append(
            "Break-even is counted against the cheapest cloud option compared (every price "
            "model of every provider allowed; a provider flagged for its region only when all "
            "are), named with the results."
            + (
                ""
                if settings.cloud_providers
                else " No providers picked: every provider listing the accelerator is allowed."
            )
        )
        basis.append(
            f"The owned fleet's cloud bursts: {first.label} on-demand, "
            f"{on_demand:.2f} USD per accelerator-hour, in the region serving each site's "
            "users where listed."
        )
        pricing = te.CloudPricing(
            on_demand_usd_per_gpu_h=on_demand,
            spot_share=float(settings.spot_share_pct) / 100,
            annual_price_decline=float(settings.annual_cloud_price_decline_pct) / 100,
        )
        return pricing, choice.providers, choice.listings.get(first.key, ())
    if settings.on_demand_usd_per_gpu_h is None:
        basis.extend(s for s in choice.sources if "mixes accelerators" in s)
    cloud = selectors.cloud_basis(deployments)
    on_demand = (
        float(settings.on_demand_usd_per_gpu_h)
        if settings.on_demand_usd_per_gpu_h is not None
        else cloud.on_demand_usd_per_gpu_h
    )
    if on_demand is None:
        raise TcoNotReady(
            "The catalog has no on-demand price for the chosen accelerator; enter one below."
        )
    if settings.on_demand_usd_per_gpu_h is not None:
        basis.append(  # typed in the plan's currency: said in it
            f"On-demand {shown.per(on_demand, 'accelerator-hour')}, entered by hand."
        )
    else:
        basis.extend(s for s in cloud.sources if "on demand" in s or "No on-demand" in s)

    def discount(entered, catalog, default, label):
        if entered is not None:
            basis.append(f"{label} discount {float(entered):g} %, entered by hand.")
            return float(entered) / 100
        if catalog is not None:
            basis.append(f"{label} discount {catalog:.0%} from the catalog's committed price.")
            return catalog
        basis.append(
            f"{label} discount {default:.0%}: engine default (AWS Savings Plans, via Epoch AI)."
        )
        return default

    pricing = te.CloudPricing(
        on_demand_usd_per_gpu_h=on_demand,
        commit_1yr_discount=discount(
            settings.commit_1yr_discount_pct,
            cloud.commit_1yr_discount,
            te.DEFAULT_COMMIT_1YR_DISCOUNT,
            "1-year",
        ),
        commit_3yr_discount=discount(
            settings.commit_3yr_discount_pct,
            cloud.commit_3yr_discount,
            te.DEFAULT_COMMIT_3YR_DISCOUNT,
            "3-year",
        ),
        spot_discount=float(settings.spot_discount_pct) / 100,
        spot_share=float(settings.spot_share_pct) / 100,
        annual_price_decline=float(settings.annual_cloud_price_decline_pct) / 100,
    )
    return pricing, (), ()


def _site_burst(
    site: te.SiteCost,
    provider: te.CloudProvider,
    listings: tuple[cr.Listing, ...],
    basis: list[str],
    shown: ShownIn,
) -> te.SiteCost:
    """The site with its bursts priced at the provider's listing in the region serving its
    users (``burst_region``), flagged in the basis when that area has no listing."""
    if not site.burst_region or not listings:
        return site
    served = cr.listing_per_user_region(listings, {site.burst_region: 1.0}, AREA_OF_REGION)[0]
    price = served.listing.on_demand / provider.gpus_per_instance
    name = provider.label.split(" (")[0]
    area = AREA_OF_REGION.get(site.burst_region, site.burst_region)
    basis.append(
        f"{site.label}: bursts above its servers run in {site.burst_region}, priced at "
        f"{name} {served.listing.region or '(region not stated)'} on-demand, "
        f"{shown.per(price, 'accelerator-hour')}"
        + (
            f"; no {area}-region listing in the catalog, so data residency and latency for "
            f"{area} users are not met."
            if served.in_area is False
            else "."
        )
    )
    return replace(site, burst_usd_per_gpu_h=price)


def _user_region_shares(workloads, accelerators: Mapping[int, int]) -> dict[str, float]:
    """Share of users per region key, every workload's region shares weighted by its peak
    accelerators (``accelerators``: workload id → accelerators; 1 when unknown)."""
    shares: dict[str, float] = {}
    for w in workloads:
        weight = accelerators.get(w.pk, 1)
        for key, share in (w.region_shares or {}).items():
            if key in REGIONS:
                shares[key] = shares.get(key, 0.0) + weight * float(share) / 100
    total = sum(shares.values())
    return {k: v / total for k, v in shares.items()} if total else {}


def _server_key(d: Deployment) -> str:
    return d.server_slug or d.server_name


def _tco_hardware_basis(
    settings: TcoSettings,
    deployments: list[Deployment],
    prices: tco_prices.HardwarePrices,
    basis: list[str],
    shown: ShownIn = USD_SHOWN,
) -> tuple[float, float, float | None]:
    """(server price, maintenance fraction a year, network capex or None, all USD) and their
    basis, whose amounts read in ``shown`` (the plan's currency, as the form takes them).

    Raises:
        TcoNotReady: A platform has neither a supplier offer nor a sourced list price and no
            price was entered.
    """
    servers = sum(d.servers for d in deployments)
    if settings.server_price_usd is not None:
        price = float(settings.server_price_usd)
        basis.append(f"Server price {shown.money(price)} per server, entered by hand.")
    else:
        missing = sorted(
            {d.server_name for d in deployments if prices.servers[_server_key(d)] is None}
        )
        if missing:
            raise TcoNotReady(
                f"No supplier offer and no sourced list price for {', '.join(missing)}: enter "
                "the quoted price per server under TCO settings (another platform's price is "
                "not borrowed)."
            )
        total = sum(prices.servers[_server_key(d)].usd * d.servers for d in deployments)
        price = total / servers
        basis.extend(dict.fromkeys(p.words for p in prices.servers.values() if p is not None))
        if len(prices.servers) > 1:
            basis.append(f"Mean server price over the fleet {shown.money(price)}.")
    if settings.maintenance_pct_per_year is not None:
        maintenance = float(settings.maintenance_pct_per_year) / 100
        basis.append(f"Maintenance {maintenance:.1%} of server capex a year, entered by hand.")
    elif prices.support_per_server_year is not None and price > 0:
        maintenance = min(prices.support_per_server_year.usd / price, 1.0)
        basis.append(
            f"Maintenance {maintenance:.1%} of server capex a year from the BOM's "
            f"{prices.support_per_server_year.words}."
        )
    else:
        maintenance = te.DEFAULT_MAINTENANCE_FRACTION_PER_YEAR
        basis.append(
            f"Maintenance {maintenance:.0%} of server capex a year: no support line in the BOM; "
            "hardware maintenance runs 10-12 % of the purchase price a year "
            "(librarytechnology.org/document/7428)."
        )
    network = None
    if settings.network_usd is not None:
        network = float(settings.network_usd)
        basis.append(f"Network capex {shown.money(network)}, entered by hand.")
    elif prices.network is not None:
        network = prices.network.usd
        basis.append(f"Network capex {shown.money(network)} from the BOM: {prices.network.words}.")
        if prices.network_unpriced:
            basis.append(
                "Not priced (no valid offer), so left out of the network capex: "
                f"{', '.join(prices.network_unpriced)}."
            )
    else:
        basis.append(
            f"Network capex: no BOM yet, so the fallback {te.DEFAULT_NETWORK_SHARE_OF_CAPEX:.0%} "
            "of cluster cost (a training-cluster ratio from Epoch AI's cost model); generate the BOM "
            "under Sourcing to price the plan's own network."
        )
    basis.extend(prices.fx)
    return price, maintenance, network


def canonical_hash(canonical: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces, floats as Python writes them)."""
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def tco_inputs_from_canonical(canonical: dict[str, Any]) -> te.TcoInputs:
    """Rebuild the engine dataclasses from a stored canonical snapshot."""
    raw = canonical["inputs"]
    return te.TcoInputs(
        workloads=tuple(
            te.WorkloadDemand(
                **{
                    **w,
                    "daily_profile": tuple(w["daily_profile"]),
                    "cloud_gpus_by_hour": (
                        None
                        if w.get("cloud_gpus_by_hour") is None
                        else tuple(w["cloud_gpus_by_hour"])
                    ),
                    "site_shares": tuple(tuple(p) for p in w.get("site_shares", ())),
                }
            )
            # inputs stored before version 5 carry a TTFT share, no longer an input
            for w in (
                {k: v for k, v in w.items() if k != "prefill_time_share"} for w in raw["workloads"]
            )  # fmt: skip
        ),
        cloud=te.CloudPricing(**raw["cloud"]),
        hardware=te.OwnedHardware(**raw["hardware"]),
        sites=tuple(te.SiteCost(**s) for s in raw["sites"]),
        horizon_months=raw["horizon_months"],
        cost_of_capital=raw["cost_of_capital"],
        discount_rate=raw["discount_rate"],
        hybrid_site=raw["hybrid_site"],
        providers=tuple(
            te.CloudProvider(**{**p, "flags": tuple(p.get("flags", ()))})
            for p in raw.get("providers", ())
        ),
    )


@dataclass(frozen=True)
class TcoInputsDigest:
    """What pages read of the plan's current TCO inputs: their hash (a run of other inputs is
    stale) and the price basis the next run would have, or why there can be no run now.

    Attributes:
        input_hash: ``TcoBuild.input_hash`` of the inputs as they are now; None when they
            cannot be built (``not_ready`` says why).
        basis: ``TcoBuild.basis`` (empty when not ready).
        not_ready: The ``TcoNotReady`` message ("" when ready).
    """

    input_hash: str | None
    basis: tuple[str, ...] = ()
    not_ready: str = ""


def tco_inputs_digest(*, plan: Plan) -> TcoInputsDigest:
    """The hash and basis of ``tco_inputs_build(plan=plan)``, or why it refuses.

    Kept by the process across requests until anything is written to the database or the day
    changes (``planner.computed.computed_across_requests``): building the inputs prices the
    whole BOM, and every page that says whether the TCO is stale reads this.
    """

    def build() -> TcoInputsDigest:
        try:
            inputs = tco_inputs_build(plan=plan)
        except TcoNotReady as exc:
            return TcoInputsDigest(None, (), str(exc))
        return TcoInputsDigest(inputs.input_hash, tuple(inputs.basis))

    return computed_across_requests(("tco_inputs_digest", plan.pk), build)


def _current_hash(plan: Plan) -> str | None:
    return tco_inputs_digest(plan=plan).input_hash


@dataclass(frozen=True)
class TcoState:
    """What the TCO page shows: the latest run and whether it matches the plan today.

    Attributes:
        run: The plan's latest run (None before the first).
        inputs: The plan's current TCO inputs (``inputs.input_hash`` None when not ready).
        stale: The run was computed from other inputs, or none can be built now.
    """

    run: TcoRun | None
    inputs: TcoInputsDigest
    stale: bool

    @property
    def ready(self) -> bool:
        """Whether the TCO can be run from the plan's current inputs."""
        return self.inputs.input_hash is not None

    @property
    def not_ready(self) -> str:
        return self.inputs.not_ready

    def of_run(self, run: TcoRun) -> TcoState:
        """The same current inputs against another run of the plan (a polled one)."""
        return TcoState(run, self.inputs, run.input_hash != self.inputs.input_hash)


def tco_state(*, plan: Plan) -> TcoState:
    """The latest run and whether the plan's current inputs still hash to its inputs.

    A running run whose worker stopped reporting is failed here (the lease), so the page
    says so instead of polling for ever.
    """
    run = selectors.tco_run_latest(plan=plan)
    if run is not None:
        jobs.job_expire_if_lost(run)
    inputs = tco_inputs_digest(plan=plan)
    stale = run is not None and inputs.input_hash != run.input_hash
    return TcoState(run, inputs, stale)


# --- TCO runs ---------------------------------------------------------------------------------


def tco_settings_for_edit(*, plan: Plan) -> TcoSettings:
    """The plan's stored TCO settings, created with the defaults when there are none yet.

    An edit form needs a stored row: its version is what two people's forms are checked
    against (two first saves of an unsaved default would otherwise collide).
    """
    settings, _ = TcoSettings.objects.get_or_create(plan=plan)
    return settings


def placement_decision_for_edit(*, plan: Plan) -> PlacementDecision:
    """The plan's stored placement decision, created with the defaults (as above)."""
    decision, _ = PlacementDecision.objects.get_or_create(plan=plan)
    return decision


def tco_settings_save(*, plan: Plan, settings: TcoSettings, changed: bool) -> TcoSettings:
    """Save the edited TCO inputs; unchanged ones store nothing (defaults stay unsaved)."""
    if not changed:
        return settings
    settings.plan = plan
    settings.save()
    return settings


def tco_run_request(*, plan: Plan, user, enqueue: bool = True) -> tuple[TcoRun, bool]:
    """The run for the plan's current inputs: the existing one, else a new one, queued.

    One run per (plan, input hash), made atomically (a unique constraint behind
    ``get_or_create``), so simultaneous clicks share one run. A failed or stuck run with the
    same inputs is reset and queued again; any other is only made the latest again. Queued
    once committed (unless ``enqueue`` is false: the caller then computes it in-process).

    Returns:
        (run, created): ``created`` is true when the run is new or queued again.

    Raises:
        TcoNotReady: When the plan cannot be costed yet.
    """
    build = tco_inputs_build(plan=plan)
    run, created = TcoRun.objects.get_or_create(
        plan=plan,
        input_hash=build.input_hash,
        defaults={
            "inputs": build.canonical,
            "basis": build.basis,
            "created_by": user,
            "progress_message": jobs.WAITING,
        },
    )
    if created:
        if enqueue:
            jobs.job_enqueue(run)
        return run, True
    if enqueue and jobs.job_retry(run):
        return run, True
    TcoRun.objects.filter(pk=run.pk).update(requested_at=timezone.now())
    return run, False


def tco_run_execute(*, job: TcoRun, recorder: jobs.JobRecorder) -> None:
    """Compute one claimed run from its stored inputs and store the results.

    Raises:
        Exception: Whatever the engine raises; the task retries and finally marks it failed.
    """
    run = job
    inputs = tco_inputs_from_canonical(run.inputs)
    mc = run.inputs["monte_carlo"]
    fx = run.inputs.get("fx") or {"currency": "USD", "rate": "1"}
    result = te.run_tco(
        inputs,
        progress=recorder.stage(0.0, 0.25, "Cash flows"),
        shown=te.ShownIn(fx["currency"], float(fx["rate"])),  # the notes in the plan currency
    )
    recorder(0.25, "Sensitivity: swinging each driver ±20 %")
    bars = te.sensitivity(inputs, swing=run.inputs["sensitivity"]["swing"])
    recorder(0.35, "Monte Carlo: starting")
    bands = te.monte_carlo(
        inputs,
        paths=mc["paths"],
        seed=mc["seed"],
        progress=recorder.stage(0.35, 0.95, "Monte Carlo"),
    )
    recorder(0.97, "Storing results")
    run.results = {
        **tco_results_serialise(result, bars, bands, fx=run.inputs.get("fx")),
        # what the owned capex is: the priced BOM (the quote's cost basis) or the estimate
        "capex_basis": run.inputs.get("capex_basis", CAPEX_ESTIMATED),
    }
    jobs.job_finish(run)
    logger.info("TCO run %s of plan %s finished", run.pk, run.plan_id)


def tco_run_sync(*, plan: Plan, user) -> TcoRun:
    """Request and compute a run in this process (the demo builder; no worker needed)."""
    run, created = tco_run_request(plan=plan, user=user, enqueue=False)
    if run.status == TcoStatus.SUCCEEDED:
        return run
    if run.status == TcoStatus.FAILED:
        jobs.job_retry(run, enqueue=False)
    return jobs.job_run_inline(run, tco_run_execute)


# --- Serialising results ----------------------------------------------------------------------


def _money(value: float, rate: Decimal = Decimal(1), places: Decimal = CENT) -> str:
    """One amount of the engine (USD) in the results' currency: × the dated rate, rounded.

    The one place TCO amounts change currency (rate from :func:`tco_fx`)."""
    return str((Decimal(float(value)) * rate).quantize(places))


def _opt(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(float(value), digits)


def _is_usd(driver_unit: str) -> bool:
    return driver_unit.startswith("USD")


def tco_results_serialise(
    result: te.TcoResult,
    bars: tuple[te.TornadoBar, ...],
    bands: te.MonteCarloResult,
    fx: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Engine results as JSON, money as decimal strings in the plan's currency.

    The engine computes in USD; ``fx`` (from :func:`tco_fx`, stored with the run's inputs)
    converts every amount once, here, and is stored with the results so every document
    shows the rate and its date. Amounts are named ``…_amount`` and are in ``currency``
    (runs stored with ``…_usd`` keys are renamed on read: :mod:`planner.facility.tco_results`).
    """
    fx = fx or {"currency": "USD", "rate": "1", "rate_date": None}
    rate = Decimal(fx["rate"])

    def money(value: float) -> str:
        return _money(value, rate)

    def money_list(values) -> list[str]:
        return [_money(v, rate) for v in values]

    def unit(value: float | None, places: str) -> str | None:
        return None if value is None else _money(value, rate, Decimal(places))

    def driver_input(value: float, driver_unit: str) -> float:
        """A money driver's value (server price, kWh price, GPU-hour price) in the plan's
        currency; other drivers (PUE, utilisation...) as they are."""
        return float(_money(value, rate, Decimal("0.0001"))) if _is_usd(driver_unit) else value

    return {
        "currency": fx["currency"],
        "fx": {"from": "USD", "to": fx["currency"], "rate": fx["rate"], "date": fx["rate_date"]},
        "months": [int(m) for m in result.months],
        "demand_gpu_hours": [round(float(v), 2) for v in result.demand_gpu_hours],
        "discount_rate": result.discount_rate,
        "cheapest": result.cheapest.key,
        "reference": result.reference_key,
        "options": [
            {
                "key": o.key,
                "label": o.label,
                "kind": o.kind,
                "lines_amount": {k: money_list(v) for k, v in o.lines_usd.items()},
                "monthly_amount": money_list(o.monthly_usd),
                "cumulative_amount": money_list(o.cumulative_usd),
                "terminal_value_amount": money(o.terminal_value_usd),
                "net_cost_amount": money(o.net_cost_usd),
                "npv_amount": money(o.npv_usd),
                "break_even_month": o.break_even_month,
                "cost_per_million_output_tokens_amount": unit(
                    o.cost_per_million_output_tokens_usd, "0.01"
                ),
                "cost_per_request_amount": unit(o.cost_per_request_usd, "0.000001"),
                "owned_gpus": o.owned_gpus,
                "mean_utilisation": _opt(o.mean_utilisation),
                "break_even_utilisation": _opt(o.break_even_utilisation),
                "notes": list(o.notes),
                "flags": list(o.flags),
                "base_curve": [[n, money(v)] for n, v in o.base_curve],
                "input_amount_per_million_tokens": unit(o.input_usd_per_million_tokens, "0.0001"),
                "output_amount_per_million_tokens": unit(o.output_usd_per_million_tokens, "0.0001"),
                "collapses_to_cloud": o.collapses_to_cloud,
                "workloads": [
                    {
                        "key": w.key,
                        "name": w.name,
                        "share": round(w.share, 6),
                        "cost_per_request_amount": unit(w.cost_per_request_usd, "0.000001"),
                        "cost_per_million_output_tokens_amount": unit(
                            w.cost_per_million_output_tokens_usd, "0.01"
                        ),
                        "input_amount_per_million_tokens": unit(
                            w.input_usd_per_million_tokens, "0.0001"
                        ),
                        "output_amount_per_million_tokens": unit(
                            w.output_usd_per_million_tokens, "0.0001"
                        ),
                    }
                    for w in o.workloads
                ],
                "sites": [
                    {
                        "key": b.key,
                        "label": b.label,
                        "servers": b.servers,
                        "lines_amount": {k: money(v) for k, v in b.lines_total_usd.items()},
                        "net_cost_amount": money(b.net_cost_usd),
                        "npv_amount": money(b.npv_usd),
                        "spare_servers": b.spare_servers,
                        "burst_region": b.burst_region,
                    }
                    for b in o.site_breakdown
                ],
            }
            for o in result.options
        ],
        "tornado": [
            {
                "driver": b.driver,
                "unit": fx["currency"] + b.unit[3:] if _is_usd(b.unit) else b.unit,
                "low_input": driver_input(b.low_input, b.unit),
                "high_input": driver_input(b.high_input, b.unit),
                "low_value_amount": money(b.low_value_usd),
                "high_value_amount": money(b.high_value_usd),
                "base_value_amount": money(b.base_value_usd),
                "span_amount": money(b.span_usd),
            }
            for b in bars
        ],
        "monte_carlo": {
            "site_key": bands.site_key,
            "paths": bands.paths,
            "seed": bands.seed,
            "probability_owned_cheaper": round(bands.probability_owned_cheaper, 4),
            **{
                f"{side}_{band}_amount": money_list(getattr(bands, f"{side}_{band}_usd"))
                for side in ("owned", "cloud")
                for band in ("p10", "p50", "p90")
            },
        },
    }


# --- The deployment in one line (overview, BOM, TCO and timeline pages) ----------------------


@dataclass(frozen=True)
class DeploymentSummary:
    """The pooled deployment's totals as every page shows them.

    Attributes:
        deployment: The pooled deployment (``None`` when a catalog figure is missing).
        racks: Racks over the sites, from each site's facility checks (``None`` without a site).
        sites: (site name, servers, racks, IT kW) per site holding servers.
        catalog_gap: Why there is no deployment, if a catalog figure is missing.
    """

    deployment: PlanDeployment | None
    racks: int | None
    sites: tuple[tuple[str, int, int | None, float], ...]
    catalog_gap: str = ""

    @property
    def servers(self) -> int:
        return self.deployment.servers if self.deployment else 0

    @property
    def it_load_kw(self) -> float:
        """The headline kW: the sites' loads (servers and network gear, as their facility
        checks have them); without a site, the servers' draw alone."""
        if self.sites:
            return sum(kw for _, _, _, kw in self.sites)
        return self.deployment.it_load_kw if self.deployment else 0.0


def _site_reports(plan: Plan, deployment: PlanDeployment):
    """(site, its pool, its facility report or ``None``) for each site holding servers."""
    for site in deployment.sites:
        pool = deployment.site_pool(site)
        if pool is None:
            continue
        yield site, pool, site_evaluate(plan=plan, site=site, deployment=deployment).report


def site_loads_kw(*, plan: Plan, deployment: PlanDeployment) -> dict[int, float | None]:
    """Site id → IT load of what the deployment puts there, servers and network gear (the
    site's facility check), kW; ``None`` when the site cannot be checked."""
    return {
        site.pk: report.it_load_kw if report else None
        for site, _, report in _site_reports(plan, deployment)
    }


def deployment_summary(*, plan: Plan) -> DeploymentSummary:
    """Servers, accelerators, power and racks of the plan's pooled deployment."""
    try:
        deployment = plan_deployment(plan=plan)
    except CatalogGapError as gap:
        return DeploymentSummary(None, None, (), str(gap))
    except EngineInputError as exc:
        return DeploymentSummary(None, None, (), str(exc))
    rows, racks = [], None
    for site, pool, report in _site_reports(plan, deployment):
        site_racks = report.racks_needed if report else None
        if site_racks is not None:
            racks = (racks or 0) + site_racks
        # The site's load as its facility check has it (network gear included).
        kw = report.it_load_kw if report else pool.it_load_kw
        rows.append((site.name, pool.servers, site_racks, kw))
    return DeploymentSummary(deployment, racks, tuple(rows))


def site_split_for_edit(*, workload) -> WorkloadSiteSplit:
    """The workload's stored split, or an unsaved empty one (the users' regions decide)."""
    return WorkloadSiteSplit.objects.filter(workload=workload).first() or WorkloadSiteSplit(
        workload=workload
    )


@transaction.atomic
def site_split_save(*, split: WorkloadSiteSplit, shares: Mapping[str, int]) -> WorkloadSiteSplit:
    """Store the split's shares, site key → share (empty: back to the users' regions).

    Raises:
        StaleEditError: The split was saved by someone else since the form was loaded.
    """
    split.shares = dict(shares)
    split.full_clean(exclude=["workload"])
    split.save()
    return split
