"""Reads of sites, placement and TCO rows, and their translation into engine dataclasses.

Every read takes a plan already fetched through ``planner.tenancy.org_object_or_404``
(which checked the organisation), so no query here can cross tenants. The ``*_spec`` / ``*_demand``
functions only translate rows into the engine's frozen dataclasses (unit conversions, no
modelling); the engine computes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db.models import QuerySet

from catalog.models import Accelerator, CloudOffering, PriceModel
from catalog.selectors import cheapest_on_demand_by_accelerator
from planner.engine import demand
from planner.engine import facility as fe
from planner.engine import tco as te
from planner.engine.deployment import Deployment
from planner.engine.network import REGIONS
from planner.facility.models import (
    PlacementDecision,
    PowerUpgrade,
    ResidencyRule,
    Site,
    SiteKind,
    TcoRun,
    TcoSettings,
    TcoStatus,
)
from planner.models import Plan, Workload

# --- Rows ---------------------------------------------------------------------------------------


def site_list(*, plan: Plan):
    """Sites of the plan, with their upgrades."""
    return Site.objects.filter(plan=plan).prefetch_related("upgrades")


def sites_with_upgrades() -> QuerySet[Site]:
    """Sites with their power upgrades loaded (a site's checks read them).

    Not scoped: for ``planner.tenancy.org_object_or_404``, which adds the organisation."""
    return Site.objects.prefetch_related("upgrades")


def site_get(*, plan: Plan, site_id: int) -> Site:
    """One site of the plan; raises Site.DoesNotExist for any other."""
    return sites_with_upgrades().get(plan=plan, pk=site_id)


def placement_decision_get(*, plan: Plan) -> PlacementDecision:
    """The plan's placement settings and choice (unsaved defaults when none is stored)."""
    return PlacementDecision.objects.filter(plan=plan).first() or PlacementDecision(plan=plan)


def residency_rules(*, plan: Plan) -> dict[int, ResidencyRule]:
    """Workload id → its residency rule, for the workloads of the plan that have one."""
    return {r.workload_id: r for r in ResidencyRule.objects.filter(workload__plan=plan)}


def tco_settings_get(*, plan: Plan) -> TcoSettings:
    """The plan's TCO settings (unsaved defaults when none is stored)."""
    return TcoSettings.objects.filter(plan=plan).first() or TcoSettings(plan=plan)


def tco_run_latest(*, plan: Plan) -> TcoRun | None:
    """The plan's most recently requested TCO run."""
    return TcoRun.objects.filter(plan=plan).order_by("-requested_at", "-pk").first()


# --- Sites into the facility engine ----------------------------------------------------------


def site_spec(site: Site, upgrades: Iterable[PowerUpgrade] | None = None) -> fe.SiteSpec:
    """The site as the facility engine takes it.

    Args:
        site: A saved or unsaved site.
        upgrades: Its upgrades; ``None`` reads the saved ones (an unsaved site has none).

    Raises:
        ValueError: When the engine rejects a value (the form prevents it).
    """
    if upgrades is None:
        upgrades = site.upgrades.all() if site.pk else ()
    return fe.SiteSpec(
        name=site.name or "New site",
        racks_available=site.racks_available,
        site_it_capacity_kw=float(site.site_it_capacity_kw),
        usable_ru_per_rack=site.usable_ru_per_rack,
        feeds_per_rack=site.feeds_per_rack,
        voltage_v=float(site.voltage_v),
        phase=int(site.phase),
        amperage_a=float(site.amperage_a),
        breaker_derating=float(site.breaker_derating_pct) / 100.0,
        power_factor=float(site.power_factor),
        cooling_method=site.cooling_method,
        cooling_capacity_per_rack_kw=_float_or_none(site.cooling_capacity_per_rack_kw),
        cooling_capacity_site_kw=_float_or_none(site.cooling_capacity_site_kw),
        ashrae_class=site.ashrae_class,
        pue=float(site.pue),
        power_usd_per_kwh=float(site.power_usd_per_kwh),
        planned_upgrades=tuple(
            fe.PowerUpgrade(u.ready_date, float(u.added_kw), u.note) for u in upgrades
        ),
        power_ready_date=site.power_ready_date,
        delta_t_f=float(site.delta_t_f),
    )


@dataclass(frozen=True, slots=True)
class RackType:
    """Servers of one kind (same name, power and height) across the plan's workloads.

    Attributes:
        server_name: Server label.
        server_power_kw: Design draw of one server, kW.
        server_ru: Height of one server.
        server_count: Servers of this kind in the plan.
        workloads: Names of the workloads they serve.
        assumptions: Sentences saying which figures were estimated.
    """

    server_name: str
    server_power_kw: float
    server_ru: int
    server_count: int
    workloads: tuple[str, ...]
    assumptions: tuple[str, ...]


def rack_types(deployments: Sequence[Deployment]) -> list[RackType]:
    """Group the plan's deployments by server kind, in the order first seen."""
    groups: dict[tuple[str, float, int], list[Deployment]] = {}
    for d in deployments:
        if d.servers > 0:
            groups.setdefault((d.server_name, d.server_power_kw, d.server_rack_units), []).append(d)
    return [
        RackType(
            server_name=name,
            server_power_kw=power_kw,
            server_ru=ru,
            server_count=sum(d.servers for d in group),
            workloads=tuple(d.workload_name for d in group),
            assumptions=tuple(dict.fromkeys(a for d in group for a in d.assumptions)),
        )
        for (name, power_kw, ru), group in groups.items()
    ]


def rack_load(site: Site, rack_type: RackType, server_count: int | None = None) -> fe.RackLoad:
    """One rack type placed in ``site`` with the site's per-rack gear."""
    return fe.RackLoad(
        server_name=rack_type.server_name,
        server_power_kw=rack_type.server_power_kw,
        server_ru=rack_type.server_ru,
        server_count=rack_type.server_count if server_count is None else server_count,
        servers_per_rack=site.servers_per_rack,
        switches_per_rack=site.switches_per_rack,
        switch_power_kw=float(site.switch_power_kw),
        pdus_per_rack=site.pdus_per_rack,
    )


def envelope_rack_type(types: Sequence[RackType]) -> RackType:
    """A single rack type that is at least as demanding as every type given.

    The facility engine checks one server kind per site; when a plan mixes kinds, every
    server is checked as the most power-hungry and tallest of them (a conservative bound).
    """
    if len(types) == 1:
        return types[0]
    return RackType(
        server_name="Mixed servers (checked as the most demanding)",
        server_power_kw=max(t.server_power_kw for t in types),
        server_ru=max(t.server_ru for t in types),
        server_count=sum(t.server_count for t in types),
        workloads=tuple(w for t in types for w in t.workloads),
        assumptions=tuple(dict.fromkeys(a for t in types for a in t.assumptions)),
    )


def site_coordinates(site: Site) -> tuple[float, float] | None:
    """(latitude, longitude) of the site: its own, else its region's city, else ``None``."""
    if site.latitude is not None and site.longitude is not None:
        return site.latitude, site.longitude
    if site.region_key in REGIONS:
        region = REGIONS[site.region_key]
        return region.lat, region.lon
    return None


# --- The plan into the TCO engine ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CloudBasis:
    """Cloud prices for the plan and where each came from.

    Attributes:
        on_demand_usd_per_gpu_h: On-demand price per accelerator-hour, or ``None`` when the
            catalog has no offering for a chosen accelerator.
        commit_1yr_discount: Fraction off on-demand for one year, or ``None`` (engine default).
        commit_3yr_discount: Fraction off on-demand for three years, or ``None``.
        sources: One sentence per figure.
    """

    on_demand_usd_per_gpu_h: float | None
    commit_1yr_discount: float | None
    commit_3yr_discount: float | None
    sources: tuple[str, ...]


def cloud_basis(deployments: Sequence[Deployment]) -> CloudBasis:
    """Cheapest catalog on-demand price per accelerator-hour for the chosen accelerators.

    Reads the shared catalog (not tenant data).

    With several accelerators the price is their accelerator-weighted mean. Committed
    discounts come from the 1-yr/3-yr offerings of the same provider, instance and region as
    the cheapest on-demand offering, when the catalog lists them.
    """
    slugs = {d.accelerator_slug for d in deployments}
    accelerators = {a.slug: a for a in Accelerator.objects.filter(slug__in=slugs)}
    cheapest = cheapest_on_demand_by_accelerator([a.pk for a in accelerators.values()])
    sources: list[str] = []
    weighted, weight = 0.0, 0
    discounts: dict[str, list[float]] = {PriceModel.ONE_YEAR: [], PriceModel.THREE_YEAR: []}
    for slug in sorted(slugs):
        accelerator = accelerators.get(slug)
        offering = cheapest.get(accelerator.pk) if accelerator else None
        count = sum(d.accelerators for d in deployments if d.accelerator_slug == slug)
        if offering is None:
            sources.append(f"No on-demand offering of {slug} in the catalog.")
            return CloudBasis(None, None, None, tuple(sources))
        per_gpu_h = float(offering.usd_per_accelerator_hour)
        weighted += per_gpu_h * count
        weight += count
        sources.append(
            f"{accelerator.name}: {per_gpu_h:.2f} USD per accelerator-hour on demand, "
            f"{offering.provider} {offering.instance_type}"
            + (f" ({offering.region})" if offering.region else "")
            + (f", as of {offering.as_of:%Y-%m-%d}" if offering.as_of else "")
            + " — the catalog's cheapest."
        )
        for model in discounts:
            committed = CloudOffering.objects.filter(
                provider=offering.provider,
                instance_type=offering.instance_type,
                region=offering.region,
                price_model=model,
            ).first()
            if committed is not None and offering.usd_per_hour > 0:
                discount = 1.0 - float(committed.usd_per_hour / offering.usd_per_hour)
                discounts[model].append(discount)
                sources.append(
                    f"{model} commitment {discount:.0%} off, from the catalog's "
                    f"{offering.provider} {offering.instance_type} {model} price."
                )
    price = weighted / weight if weight else None

    def one(model: str) -> float | None:
        # Only when every accelerator has one; otherwise the engine default (labelled).
        values = discounts[model]
        return min(values) if values and len(values) == len(slugs) else None

    return CloudBasis(price, one(PriceModel.ONE_YEAR), one(PriceModel.THREE_YEAR), tuple(sources))


def workload_demand(workload: Workload, deployment: Deployment) -> te.WorkloadDemand:
    """One workload's month-1 demand as the TCO engine takes it (planner.engine.demand).

    Peak requests/s are given, or follow from peak concurrency by Little's law on the chosen
    configuration's modelled request time (the basis its replicas were sized on); only a
    choice saved without those figures falls back to the time at the latency targets.
    """
    profile = [float(v) for v in (workload.daily_profile or [1.0] * 24)]
    if workload.peak_requests_per_s:
        peak_rps = float(workload.peak_requests_per_s)
    else:
        summary = workload.chosen_summary or {}
        request_s = demand.modelled_request_s(
            summary.get("batch_per_replica") or 0.0,
            summary.get("requests_per_s_per_replica") or 0.0,
        ) or demand.target_request_s(
            ttft_ms=workload.ttft_ms,
            tpot_ms=workload.tpot_ms,
            output_tokens_mean=workload.output_tokens_mean,
            e2e_s=workload.e2e_s,
        )
        peak_rps = demand.rate_from_concurrency(float(workload.peak_concurrency or 0), request_s)
    month = demand.monthly_demand(
        peak_accelerators=deployment.accelerators,
        daily_profile=profile,
        peak_requests_per_s=peak_rps,
        output_tokens_mean=workload.output_tokens_mean,
    )
    return te.WorkloadDemand(
        name=workload.name,
        gpu_hours_per_month=month.gpu_hours_per_month,
        daily_profile=tuple(profile),
        output_tokens_per_month=month.output_tokens_per_month,
        requests_per_month=month.requests_per_month,
    )


def _float_or_none(value) -> float | None:
    return None if value is None else float(value)


__all__ = [
    "CloudBasis",
    "RackType",
    "SiteKind",
    "cloud_basis",
    "envelope_rack_type",
    "placement_decision_get",
    "rack_load",
    "rack_types",
    "residency_rules",
    "site_coordinates",
    "site_get",
    "site_list",
    "site_spec",
    "tco_run_latest",
    "tco_settings_get",
    "workload_demand",
]


def tco_run_latest_finished(*, plan: Plan) -> TcoRun | None:
    """The plan's latest TCO run that finished with results (``None`` without one)."""
    return (
        TcoRun.objects.filter(plan=plan, status=TcoStatus.SUCCEEDED)
        .order_by("-finished_at", "-pk")
        .first()
    )
