"""The plan's one deployment: chosen configurations split over sites and pooled per platform.

Rows in, ``planner.engine.pooling`` computes, every page reads the result: the facility
checks and rack drawings per site, the BOM per site, the TCO's servers and power, the
timeline's sites. Servers are placed at the plan's own data centres and colocation sites
(cloud regions host no servers of the plan); a plan without such a site pools everything at
one unplaced site so its counts are still pooled.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from catalog.models import ServerPlatform
from planner import selectors as plan_selectors
from planner import sizing
from planner.computed import computed
from planner.engine import pooling as po
from planner.engine.deployment import Deployment, estimate_server, servers_needed
from planner.engine.errors import CatalogGapError
from planner.engine.network import REGIONS
from planner.engine.placement import ResidencyRule
from planner.facility import selectors
from planner.facility.models import Site, SiteKind, WorkloadSiteSplit
from planner.models import Plan

UNPLACED_KEY = "unplaced"
UNPLACED_LABEL = "No site entered"
PHYSICAL_KINDS = (SiteKind.OWN_DC, SiteKind.COLOCATION)


def site_key(site: Site) -> str:
    """The key a site has in the deployment (the TCO's option key too)."""
    return f"site-{site.pk}"


@dataclass(frozen=True)
class PlanDeployment:
    """The pooled deployment with the rows it came from.

    Attributes:
        pooled: The engine's result.
        choices: The engine's inputs (each workload's configuration and split).
        per_workload: Each workload's chosen configuration (replicas incl. its own N+1, as
            sized); for demand and labels only, never for counting servers.
        sites: The physical sites in order (empty when the plan has none).
        labels: Site key → display name.
        split_source: Workload id → how its split was made ("set by hand", "by users'
            regions", "one site").
        notes: Sentences about the split (regions beyond the round-trip budget, ...).
    """

    pooled: po.PooledDeployment
    choices: tuple[po.WorkloadChoice, ...]
    per_workload: tuple[Deployment, ...]
    sites: tuple[Site, ...]
    labels: dict[str, str]
    split_source: dict[int, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    smaller_platforms: tuple[po.Platform, ...] = ()

    @property
    def empty_pool_rows(self) -> list[dict]:
        """Pools mostly empty (``engine.pooling.empty_pools``), said plainly, with each fix
        and the accelerators it would install."""
        rows = []
        for empty in po.empty_pools(self.pooled, self.smaller_platforms):
            pool = empty.pool
            site = self.labels.get(pool.site_key, pool.site_key)
            fixes = []
            for fix in empty.fixes:
                if fix.kind == "smaller_server":
                    text = (f"a smaller server of the same accelerator, {fix.platform.name}: "
                            f"{fix.servers} servers, {fix.accelerators_installed} accelerators "
                            f"instead of {fix.accelerators_before}")  # fmt: skip
                elif fix.kind == "one_site":
                    text = (f"one site for every {pool.platform.name} replica (one spare "
                            f"instead of one per site): {fix.servers} servers, "
                            f"{fix.accelerators_installed} accelerators instead of "
                            f"{fix.accelerators_before} over the sites")  # fmt: skip
                else:
                    text = (f"the cloud for this share: rent {fix.cloud_accelerators} "
                            f"accelerators, install none of the {fix.accelerators_before} "
                            f"at {site}")  # fmt: skip
                fixes.append({"kind": fix.kind, "text": text})
            has_smaller = any(f.kind == "smaller_server" for f in empty.fixes)
            rows.append(
                {
                    "site": site,
                    "platform": pool.platform.name,
                    "accelerators_used": pool.accelerators_used,
                    "accelerators_installed": pool.accelerators_installed,
                    "used_pct": f"{empty.used_fraction:.0%}",
                    "fixes": fixes,
                    "no_smaller_server": not has_smaller,
                    "accelerator": pool.platform.accelerator_name,
                }
            )
        return rows

    @property
    def servers(self) -> int:
        return self.pooled.servers

    @property
    def accelerators_used(self) -> int:
        return self.pooled.accelerators_used

    @property
    def accelerators_installed(self) -> int:
        return self.pooled.accelerators_installed

    @property
    def it_load_kw(self) -> float:
        return self.pooled.it_load_kw

    def site_pool(self, site: Site) -> po.SitePool | None:
        """What the deployment puts at ``site`` (``None``: nothing)."""
        return self.pooled.site(site_key(site)) if site.pk else None

    def as_one_site(self) -> po.SitePool | None:
        """The whole plan pooled at one site (to preview a site not saved yet)."""
        if not self.choices:
            return None
        one = [replace(c, site_shares=()) for c in self.choices]
        return po.plan_pooled(one, ["new"]).sites[0]

    @property
    def split_rows(self) -> list[dict]:
        """One row per workload: configuration, replicas at peak, split and where it came from."""
        return [
            {
                "workload_id": c.workload_id,
                "name": c.workload_name,
                "config": f"{c.platform.name}, TP {c.tensor_parallel}"
                + (
                    f" decode + {c.prefill_replicas} prefill at TP {c.prefill_tensor_parallel}"
                    if c.prefill_tensor_parallel
                    else ""
                )
                + (", N+1" if c.n_plus_one else ""),
                "replicas": c.replicas + c.prefill_replicas,
                "split": self.workload_split_text(c.workload_id) or "—",
                "source": self.split_source.get(c.workload_id, ""),
            }
            for c in self.choices
        ]

    @property
    def pool_rows(self) -> list[dict]:
        """One row per site and platform: who shares it and the servers it takes."""
        return [
            {
                "site": self.labels.get(p.site_key, p.site_key),
                "platform": p.platform.name,
                "workloads": ", ".join(f"{w.workload_name} ×{w.replicas}" for w in p.workloads),
                "accelerators_used": p.accelerators_used,
                "accelerators_installed": p.accelerators_installed,
                "servers_for_load": p.servers_for_load,
                "spare_servers": p.spare_servers,
                "servers": p.servers,
                "it_load_kw": p.it_load_kw,
            }
            for p in self.pooled.pools
        ]

    def workload_split_text(self, workload_id: int) -> str:
        """ "Frankfurt 6 · Ashburn 4" for a workload's replicas at peak."""
        parts = self.pooled.workload_sites.get(workload_id, ())
        return " · ".join(f"{self.labels.get(k, k)} {n}" for k, n in parts)


def platform_of(deployment: Deployment) -> po.Platform:
    """The engine platform of a workload's chosen configuration."""
    return po.Platform(
        key=deployment.server_slug
        or f"generic-{deployment.accelerator_slug}-{deployment.accelerators_per_server}",
        name=deployment.server_name,
        accelerator_slug=deployment.accelerator_slug,
        accelerator_name=deployment.accelerator_name,
        accelerators_per_server=deployment.accelerators_per_server,
        server_power_kw=deployment.server_power_kw,
        server_rack_units=deployment.server_rack_units,
        accelerator_tdp_w=deployment.accelerator_tdp_w,
        assumptions=deployment.assumptions,
    )


def workload_deployments(*, plan: Plan) -> list[Deployment]:
    """The hardware of every workload of the plan whose chosen configuration still serves it,
    each on its own: the pooling's input and each workload's demand, never a count of the
    plan's servers (the pooled :func:`plan_deployment` is).

    A choice that no longer meets the workload's inputs (``chosen_problem``) deploys nothing.

    Raises:
        CatalogGapError: A chosen configuration lacks a catalog figure its power needs; the
            message names the workload and what to do. Pages show it on the section.
    """
    return computed(("per_workload_deployments", plan.pk), lambda: _plan_deployments(plan))


def _plan_deployments(plan: Plan) -> list[Deployment]:
    deployments = []
    chosen = plan_selectors.workload_list(plan=plan).filter(
        chosen_accelerator__isnull=False, chosen_problem=""
    )
    for workload in chosen:
        accelerator = workload.chosen_accelerator
        server = workload.chosen_server
        per_server = (server.accelerators_per_server if server else None) or min(
            8, workload.chosen_accelerators or 8
        )
        try:
            power_kw, rack_units, assumptions = estimate_server(
                accelerators_per_server=per_server,
                accelerator_tdp_w=accelerator.tdp_w,
                platform_power_kw=server.max_power_kw if server else None,
                platform_rack_units=server.rack_units if server else None,
                accelerator_name=accelerator.name,
            )
        except CatalogGapError as gap:
            raise CatalogGapError(
                f"Workload '{workload.name}' uses {accelerator.name}: {gap} Choose a "
                "configuration with a published TDP or server platform on the workload's "
                "sizing page, or ask a catalog maintainer to add the figure.",
                item=gap.item,
                figure=gap.figure,
            ) from gap
        accelerators = workload.chosen_accelerators or 0
        deployments.append(
            Deployment(
                workload_id=workload.pk,
                workload_name=workload.name,
                accelerator_slug=accelerator.slug,
                accelerator_name=accelerator.name,
                precision=workload.chosen_precision or workload.precision,
                tensor_parallel=sizing.chosen_accelerators_per_replica(workload),
                replicas=workload.chosen_replicas or 0,
                accelerators=accelerators,
                accelerators_per_server=per_server,
                servers=workload.chosen_servers or servers_needed(accelerators, per_server),
                server_slug=server.slug if server else "",
                server_name=str(server) if server else f"{per_server}× {accelerator.name} server",
                server_power_kw=power_kw,
                server_rack_units=rack_units,
                accelerator_tdp_w=accelerator.tdp_w,
                assumptions=assumptions,
                prefill_tensor_parallel=workload.chosen_prefill_tensor_parallel
                if workload.chosen_serving == "disaggregated"
                else None,
                prefill_replicas=workload.chosen_prefill_replicas or 0
                if workload.chosen_serving == "disaggregated"
                else 0,
            )
        )
    return deployments


def physical_sites(*, plan: Plan) -> list[Site]:
    """The plan's sites that can hold its servers (own data centres and colocation)."""
    return [s for s in selectors.site_list(plan=plan) if s.kind in PHYSICAL_KINDS]


def plan_deployment(*, plan: Plan) -> PlanDeployment:
    """The plan's pooled deployment.

    Raises:
        CatalogGapError: A chosen configuration lacks a catalog figure its power needs.
        EngineInputError: A stored split names a figure the engine refuses.
    """
    return computed(("deployment", plan.pk), lambda: _plan_deployment(plan))


def _plan_deployment(plan: Plan) -> PlanDeployment:
    per_workload = tuple(d for d in workload_deployments(plan=plan) if d.replicas)
    sites = physical_sites(plan=plan)
    keys = [site_key(s) for s in sites] or [UNPLACED_KEY]
    labels = {site_key(s): s.name for s in sites} or {UNPLACED_KEY: UNPLACED_LABEL}
    workloads = {w.pk: w for w in plan_selectors.workload_list(plan=plan)}
    splits = {
        s.workload_id: s.shares
        for s in WorkloadSiteSplit.objects.filter(workload__plan=plan)
        if s.shares
    }
    decision = selectors.placement_decision_get(plan=plan)
    rules = selectors.residency_rules(plan=plan)
    locations = [
        po.SiteLocation(site_key(s), *(selectors.site_coordinates(s) or (None, None)))
        for s in sites
    ]
    coordinates = {k: (r.lat, r.lon) for k, r in REGIONS.items()}
    notes: list[str] = []
    sources: dict[int, str] = {}
    choices = []
    for d in per_workload:
        workload = workloads[d.workload_id]
        override = {
            f"site-{k}": float(v)
            for k, v in splits.get(d.workload_id, {}).items()
            if f"site-{k}" in labels
        }
        if len(keys) == 1:
            shares, sources[d.workload_id] = ((keys[0], 100.0),), "one site"
        elif override:
            shares = tuple((k, override[k]) for k in keys if k in override)
            sources[d.workload_id] = "set by hand"
        else:
            budget = (
                workload.ttft_ms * decision.network_share_pct / 100 if workload.ttft_ms else None
            )
            allowed = _allowed_locations(workload, rules.get(d.workload_id), sites, locations)
            if len(allowed) < len(locations) and allowed:
                notes.append(
                    f"{workload.name}: only sites its residency rule allows "
                    f"({rules[d.workload_id].allowed}) take its replicas."
                )
            elif not allowed:
                notes.append(
                    f"{workload.name}: no site meets its residency rule "
                    f"({rules[d.workload_id].allowed}); its users' nearest sites are used."
                )
            shares, region_notes = po.default_site_shares(
                workload.region_shares or {}, coordinates, allowed or locations, budget
            )
            notes.extend(f"{workload.name}: {n}" for n in region_notes)
            sources[d.workload_id] = "by users' regions"
        choices.append(
            po.WorkloadChoice(
                workload_id=d.workload_id,
                workload_name=d.workload_name,
                platform=platform_of(d),
                precision=d.precision,
                tensor_parallel=d.tensor_parallel,
                # Disaggregated: each pool carried its own N+1 spare (engine.disaggregated).
                replicas=po.replicas_before_spares(
                    d.replicas - d.prefill_replicas, workload.n_plus_one
                ),
                prefill_tensor_parallel=d.prefill_tensor_parallel,
                prefill_replicas=po.replicas_before_spares(d.prefill_replicas, workload.n_plus_one)
                if d.prefill_tensor_parallel
                else 0,
                n_plus_one=workload.n_plus_one,
                site_shares=shares,
            )
        )
    return PlanDeployment(
        pooled=po.plan_pooled(choices, keys),
        choices=tuple(choices),
        per_workload=per_workload,
        sites=tuple(sites),
        labels=labels,
        split_source=sources,
        notes=tuple(notes),
        smaller_platforms=smaller_platforms(per_workload),
    )


def smaller_platforms(per_workload) -> tuple[po.Platform, ...]:
    """Catalog servers of the chosen accelerators holding fewer of them than the chosen
    server (a 4-GPU or PCIe server for an 8-GPU one), for the mostly-empty-pool advice."""

    widest = {}
    for d in per_workload:
        widest[d.accelerator_slug] = max(
            widest.get(d.accelerator_slug, 0), d.accelerators_per_server
        )
    rows = ServerPlatform.objects.filter(
        accelerator__slug__in=list(widest), accelerators_per_server__isnull=False
    ).select_related("accelerator")
    out = []
    for server in rows:
        accelerator = server.accelerator
        if server.accelerators_per_server >= widest[accelerator.slug]:
            continue
        try:
            power_kw, rack_units, assumptions = estimate_server(
                accelerators_per_server=server.accelerators_per_server,
                accelerator_tdp_w=accelerator.tdp_w,
                platform_power_kw=server.max_power_kw,
                platform_rack_units=server.rack_units,
                accelerator_name=accelerator.name,
            )
        except CatalogGapError:
            continue  # a server without the figures its power needs is no advice
        out.append(
            po.Platform(
                key=server.slug, name=str(server), accelerator_slug=accelerator.slug,
                accelerator_name=accelerator.name,
                accelerators_per_server=server.accelerators_per_server,
                server_power_kw=power_kw, server_rack_units=rack_units,
                accelerator_tdp_w=accelerator.tdp_w, assumptions=assumptions,
            )
        )  # fmt: skip
    return tuple(sorted(out, key=lambda p: (p.accelerator_slug, -p.accelerators_per_server)))


def _allowed_locations(workload, rule, sites, locations) -> list[po.SiteLocation]:
    """The sites' locations a workload's residency rule allows (all without a rule)."""
    if rule is None or not rule.tokens:
        return list(locations)
    # facility.services imports this module at its top
    from planner.facility.services import site_location

    engine_rule = ResidencyRule(workload.name, frozenset(rule.tokens), frozenset(rule.tokens))
    return [
        loc
        for site, loc in zip(sites, locations, strict=True)
        if engine_rule.allows(site_location(site))
    ]


def rack_types(pool: po.SitePool) -> list[selectors.RackType]:
    """One rack type per server platform the deployment puts at a site."""
    return [
        selectors.RackType(
            server_name=p.platform.name,
            server_power_kw=p.platform.server_power_kw,
            server_ru=p.platform.server_rack_units,
            server_count=p.servers,
            workloads=tuple(w.workload_name for w in p.workloads),
            assumptions=p.platform.assumptions,
        )
        for p in pool.pools
    ]
