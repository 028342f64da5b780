"""One pooled deployment per plan: replicas split over sites, packed onto shared servers.

Each workload's chosen configuration gives replicas at peak (headroom included, N+1 spares
excluded). Its replicas are split over the sites by share (largest-remainder rounding, so the
parts always add up to the whole). At each site, the replicas of every workload that uses the
same server platform share servers:

* A replica of tensor-parallel degree ``t ≤ accelerators_per_server`` takes ``t`` accelerators
  of ONE server (a replica never straddles servers when it fits in one).
* Replicas are placed first-fit-decreasing: largest TP first, each into the first server with
  ``t`` free accelerators, else a new server. With TP degrees that are powers of two (the only
  degrees the sizing offers, ``capacity.valid_tp_degrees``) the item sizes divide one another,
  and first-fit-decreasing is then optimal (Coffman, Garey & Johnson, "Bin packing with
  divisible item sizes", J. Complexity 3, 1987): the pooled servers are never more than
  packing each workload on its own servers.
* A replica wider than one server (``t > accelerators_per_server``) takes
  ``ceil(t / accelerators_per_server)`` whole servers of its own and needs a scale-out fabric.

N+1: the failure domain is the server. When any workload on a platform at a site asks for
N+1, the platform gets ONE spare server at that site (not one per workload): it can take the
replicas of any one failed server. The free accelerators of the other servers cannot: after
first-fit-decreasing, a replica that fitted an earlier server's free room would have been
placed there. (A spare replica per workload, as ``capacity.plan_replicas`` counts it for one
workload, does not survive the loss of a server holding several replicas.)

No Django import: the plan's selector loads rows into these dataclasses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from planner.engine.errors import EngineInputError
from planner.engine.network import haversine_km, rtt_ms

__all__ = [
    "EmptyPool",
    "FleetFix",
    "PlacedWorkload",
    "Platform",
    "PlatformPool",
    "PooledDeployment",
    "SitePool",
    "SiteLocation",
    "WorkloadChoice",
    "default_site_shares",
    "empty_pools",
    "largest_remainder",
    "owned_base",
    "pack_replicas",
    "plan_pooled",
    "replicas_before_spares",
    "servers_per_workload",
]


@dataclass(frozen=True, slots=True)
class Platform:
    """One server platform as the pool counts it.

    Attributes:
        key: Stable key (catalog slug, or a generic key when no platform was chosen).
        name: Display name.
        accelerator_slug: Catalog slug of its accelerator.
        accelerator_name: Display name of the accelerator.
        accelerators_per_server: Accelerators in one server (≥ 1).
        server_power_kw: Maximum power of one server, kW.
        server_rack_units: Height of one server, RU.
        accelerator_tdp_w: One accelerator's power, W (``None`` when unpublished).
        assumptions: Sentences saying which figures were estimated.
    """

    key: str
    name: str
    accelerator_slug: str
    accelerator_name: str
    accelerators_per_server: int
    server_power_kw: float
    server_rack_units: int
    accelerator_tdp_w: float | None = None
    assumptions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.accelerators_per_server < 1:
            raise EngineInputError("A server holds at least one accelerator.")
        if not (math.isfinite(self.server_power_kw) and self.server_power_kw > 0):
            raise EngineInputError("A server's power must be a positive number of kW.")
        if self.server_rack_units < 1:
            raise EngineInputError("A server is at least 1U high.")


@dataclass(frozen=True, slots=True)
class WorkloadChoice:
    """One workload's chosen configuration and where its replicas go.

    Attributes:
        workload_id: The workload's id.
        workload_name: Its name, for labels.
        platform: The server platform it runs on.
        precision: Serving precision.
        tensor_parallel: Accelerators per replica (TP).
        replicas: Replicas at peak with headroom, before N+1 spares.
        n_plus_one: Whether a server failure must keep the target (one spare server per
            platform and site).
        site_shares: (site key, share) pairs; shares are weights (percent or fractions),
            normalised here. Empty puts everything on the first site of the plan.
        prefill_tensor_parallel: Disaggregated prefill/decode: TP of the prefill replicas
            (``tensor_parallel``/``replicas`` are then the decode pool's), else None. Both
            pools are split over the same sites and packed onto the same platform.
        prefill_replicas: Prefill replicas at peak with headroom, before N+1 spares.
    """

    workload_id: int
    workload_name: str
    platform: Platform
    precision: str
    tensor_parallel: int
    replicas: int
    n_plus_one: bool
    site_shares: tuple[tuple[str, float], ...] = ()
    prefill_tensor_parallel: int | None = None
    prefill_replicas: int = 0

    def __post_init__(self) -> None:
        if self.tensor_parallel < 1 or (
            self.prefill_tensor_parallel is not None and self.prefill_tensor_parallel < 1
        ):
            raise EngineInputError("A replica takes at least one accelerator (TP ≥ 1).")
        if self.replicas < 0 or self.prefill_replicas < 0:
            raise EngineInputError("Replicas cannot be negative.")
        for key, share in self.site_shares:
            if not (math.isfinite(share) and share >= 0):
                raise EngineInputError(f"Site share for {key} must be ≥ 0, not {share}.")


@dataclass(frozen=True, slots=True)
class PlacedWorkload:
    """A workload's replicas at one site on one platform."""

    workload_id: int
    workload_name: str
    precision: str
    tensor_parallel: int
    replicas: int

    @property
    def accelerators(self) -> int:
        return self.replicas * self.tensor_parallel


@dataclass(frozen=True, slots=True)
class PlatformPool:
    """Servers of one platform at one site, shared by the workloads placed there.

    Attributes:
        site_key: The site.
        platform: The platform.
        workloads: Each workload's replicas here.
        server_fill: Accelerators used in each server for load (packing result).
        servers_for_load: Servers holding the replicas.
        spare_servers: N+1 spares (0 or 1).
        spans_servers: Some replica is wider than one server (needs a scale-out fabric).
    """

    site_key: str
    platform: Platform
    workloads: tuple[PlacedWorkload, ...]
    server_fill: tuple[int, ...]
    servers_for_load: int
    spare_servers: int
    spans_servers: bool

    @property
    def replicas(self) -> int:
        return sum(w.replicas for w in self.workloads)

    @property
    def accelerators_used(self) -> int:
        """Accelerators the replicas use (spares and empty slots excluded)."""
        return sum(w.accelerators for w in self.workloads)

    @property
    def servers(self) -> int:
        """Servers installed: for the load plus spares."""
        return self.servers_for_load + self.spare_servers

    @property
    def accelerators_installed(self) -> int:
        return self.servers * self.platform.accelerators_per_server

    @property
    def it_load_kw(self) -> float:
        """Maximum IT power of every installed server (spares included), kW."""
        return self.servers * self.platform.server_power_kw


@dataclass(frozen=True, slots=True)
class SitePool:
    """Everything the plan puts at one site."""

    site_key: str
    pools: tuple[PlatformPool, ...]

    @property
    def servers(self) -> int:
        return sum(p.servers for p in self.pools)

    @property
    def accelerators_used(self) -> int:
        return sum(p.accelerators_used for p in self.pools)

    @property
    def accelerators_installed(self) -> int:
        return sum(p.accelerators_installed for p in self.pools)

    @property
    def replicas(self) -> int:
        return sum(p.replicas for p in self.pools)

    @property
    def it_load_kw(self) -> float:
        return sum(p.it_load_kw for p in self.pools)

    @property
    def spans_servers(self) -> bool:
        return any(p.spans_servers for p in self.pools)


@dataclass(frozen=True, slots=True)
class PooledDeployment:
    """The plan's deployment: per site, per platform, pooled.

    Attributes:
        sites: One entry per site with any replica, in the order of the sites given.
        workload_sites: Workload id → ((site key, replicas), ...) as split.
    """

    sites: tuple[SitePool, ...]
    workload_sites: Mapping[int, tuple[tuple[str, int], ...]] = field(default_factory=dict)

    def site(self, site_key: str) -> SitePool | None:
        return next((s for s in self.sites if s.site_key == site_key), None)

    @property
    def pools(self) -> tuple[PlatformPool, ...]:
        return tuple(p for s in self.sites for p in s.pools)

    @property
    def servers(self) -> int:
        return sum(s.servers for s in self.sites)

    @property
    def accelerators_used(self) -> int:
        return sum(s.accelerators_used for s in self.sites)

    @property
    def accelerators_installed(self) -> int:
        return sum(s.accelerators_installed for s in self.sites)

    @property
    def replicas(self) -> int:
        return sum(s.replicas for s in self.sites)

    @property
    def it_load_kw(self) -> float:
        return sum(s.it_load_kw for s in self.sites)


# --- Formulas ---------------------------------------------------------------------------------


def replicas_before_spares(total_replicas: int, n_plus_one: bool, failure_domains: int = 1) -> int:
    """Replicas at peak without the N+1 spares ``capacity.plan_replicas`` added (one per domain)."""
    spares = max(1, failure_domains) if n_plus_one else 0
    return max(0, total_replicas - spares)


def largest_remainder(total: int, weights: Sequence[float]) -> tuple[int, ...]:
    """Split ``total`` whole items by ``weights`` (Hamilton / largest-remainder method).

    Each part gets the floor of its quota; the items left go to the largest remainders (ties
    to the earlier part). The parts always sum to ``total``. All-zero weights give everything
    to the first part.
    """
    if total < 0:
        raise EngineInputError("Cannot split a negative count.")
    if not weights:
        raise EngineInputError("Nothing to split over.")
    weight_sum = float(sum(weights))
    if weight_sum <= 0:
        return (total,) + (0,) * (len(weights) - 1)
    quotas = [total * w / weight_sum for w in weights]
    parts = [math.floor(q + 1e-9) for q in quotas]
    left = total - sum(parts)
    order = sorted(range(len(weights)), key=lambda i: (-(quotas[i] - parts[i]), i))
    for i in order[:left]:
        parts[i] += 1
    return tuple(parts)


def _ffd(replica_sizes: Sequence[int], per_server: int, fill: list[int]) -> list[list[int]]:
    """First-fit-decreasing of replicas into servers with ``fill`` already used; returns the
    replicas placed in each server (new servers appended)."""
    placed: list[list[int]] = [[] for _ in fill]
    for size in sorted(replica_sizes, reverse=True):
        for i, used in enumerate(fill):
            if used + size <= per_server:
                fill[i] = used + size
                placed[i].append(size)
                break
        else:
            fill.append(size)
            placed.append([size])
    return placed


def pack_replicas(
    replica_sizes: Sequence[int], accelerators_per_server: int
) -> tuple[tuple[int, ...], int]:
    """First-fit-decreasing packing of replicas (their TP) into servers.

    Returns:
        (accelerators used in each shared server, servers taken by replicas wider than one
        server). A wide replica of TP ``t`` takes ``ceil(t / per_server)`` servers alone.
    """
    if accelerators_per_server < 1:
        raise EngineInputError("A server holds at least one accelerator.")
    if any(size < 1 for size in replica_sizes):
        raise EngineInputError("A replica takes at least one accelerator.")
    fitting = [s for s in replica_sizes if s <= accelerators_per_server]
    fill: list[int] = []
    _ffd(fitting, accelerators_per_server, fill)
    wide = sum(
        math.ceil(s / accelerators_per_server) for s in replica_sizes if s > accelerators_per_server
    )
    return tuple(fill), wide


def _pool(site_key: str, platform: Platform, placed: list[tuple[PlacedWorkload, bool]]):
    per_server = platform.accelerators_per_server
    sizes = [w.tensor_parallel for w, _ in placed for _ in range(w.replicas)]
    fill: list[int] = []
    _ffd([s for s in sizes if s <= per_server], per_server, fill)
    wide_sizes = sorted((s for s in sizes if s > per_server), reverse=True)
    # Wide replicas fill their servers (the last one partly): record them as used.
    wide_fill: list[int] = []
    for size in wide_sizes:
        whole, rest = divmod(size, per_server)
        wide_fill.extend([per_server] * whole + ([rest] if rest else []))
    servers_for_load = len(fill) + len(wide_fill)
    wants_spare = any(n_plus_one for w, n_plus_one in placed if w.replicas)
    return PlatformPool(
        site_key=site_key,
        platform=platform,
        workloads=tuple(w for w, _ in placed),
        server_fill=tuple(wide_fill) + tuple(fill),
        servers_for_load=servers_for_load,
        spare_servers=1 if wants_spare and servers_for_load else 0,
        spans_servers=bool(wide_sizes),
    )


def plan_pooled(choices: Sequence[WorkloadChoice], site_keys: Sequence[str]) -> PooledDeployment:
    """The pooled deployment of the plan's chosen configurations over its sites.

    Args:
        choices: Every workload with a chosen configuration.
        site_keys: The plan's sites in display order (the default site is the first).

    Raises:
        EngineInputError: No site to place on, or a share names a site not given.
    """
    if not site_keys:
        raise EngineInputError("The plan has no site to place its servers at.")
    known = set(site_keys)
    workload_sites: dict[int, tuple[tuple[str, int], ...]] = {}
    by_site: dict[str, dict[str, list[tuple[PlacedWorkload, bool]]]] = {}
    platforms: dict[str, Platform] = {}
    for choice in choices:
        shares = choice.site_shares or ((site_keys[0], 1.0),)
        for key, _ in shares:
            if key not in known:
                raise EngineInputError(
                    f"Workload '{choice.workload_name}' is split to a site the plan does not "
                    f"have ({key})."
                )
        weights = [share for _, share in shares]
        parts = largest_remainder(choice.replicas, weights)
        prefill_parts = (
            largest_remainder(choice.prefill_replicas, weights)
            if choice.prefill_tensor_parallel
            else (0,) * len(shares)
        )
        workload_sites[choice.workload_id] = tuple(
            (key, n + m)
            for (key, _), n, m in zip(shares, parts, prefill_parts, strict=True)
            if n + m
        )
        previous = platforms.setdefault(choice.platform.key, choice.platform)
        if previous != choice.platform:
            raise EngineInputError(
                f"Platform {choice.platform.key} is given with two different figures."
            )
        for (key, _), n, m in zip(shares, parts, prefill_parts, strict=True):
            if not n + m:
                continue
            site = by_site.setdefault(key, {}).setdefault(choice.platform.key, [])
            if n:
                placed = PlacedWorkload(
                    choice.workload_id,
                    choice.workload_name,
                    choice.precision,
                    choice.tensor_parallel,
                    n,
                )
                site.append((placed, choice.n_plus_one))
            if m:  # the prefill pool shares the platform's servers with the decode pool
                placed = PlacedWorkload(
                    choice.workload_id,
                    f"{choice.workload_name} (prefill)",
                    choice.precision,
                    choice.prefill_tensor_parallel,
                    m,
                )
                site.append((placed, choice.n_plus_one))
    sites = tuple(
        SitePool(
            key,
            tuple(_pool(key, platforms[p], placed) for p, placed in by_site[key].items()),
        )
        for key in site_keys
        if key in by_site
    )
    return PooledDeployment(sites=sites, workload_sites=workload_sites)


def owned_base(pooled: PooledDeployment, base_servers: Mapping[str, int]) -> PooledDeployment:
    """The deployment cut to a hybrid's owned base: ``base_servers[site key]`` servers at each
    site (the TCO's hybrid, ``engine.tco``), none at a site it does not name.

    A site whose base is its whole pool keeps it as it is. A smaller base is split over the
    site's platforms by their servers (largest remainder); each platform keeps its N+1 spare
    when it gets more servers than that spare, the rest serve load (the hybrid bursts the load
    above its base). Replicas stay as split: what the base does not hold runs in the cloud.
    """
    sites = []
    for site in pooled.sites:
        base = max(0, min(int(base_servers.get(site.site_key, 0)), site.servers))
        if base == site.servers:
            sites.append(site)
            continue
        if base == 0:
            continue
        parts = largest_remainder(base, [p.servers for p in site.pools])
        pools = []
        for pool, n in zip(site.pools, parts, strict=True):
            if not n:
                continue
            spare = pool.spare_servers if n > pool.spare_servers else 0
            pools.append(
                replace(
                    pool,
                    server_fill=pool.server_fill[: n - spare],
                    servers_for_load=n - spare,
                    spare_servers=spare,
                )
            )
        sites.append(SitePool(site.site_key, tuple(pools)))
    return PooledDeployment(sites=tuple(sites), workload_sites=pooled.workload_sites)


def servers_per_workload(choices: Sequence[WorkloadChoice], site_keys: Sequence[str]) -> int:
    """Servers if every workload had its own servers and spare (the unpooled comparison)."""
    return sum(plan_pooled([c], site_keys).servers for c in choices)


# --- Mostly empty pools and what would fill them ----------------------------------------------

EMPTY_POOL_THRESHOLD = 0.5  # a pool using less than half of its installed accelerators


@dataclass(frozen=True, slots=True)
class FleetFix:
    """One way to install fewer accelerators for the same replicas.

    Attributes:
        kind: ``smaller_server`` (the same accelerator in a server with fewer of them),
            ``one_site`` (the platform's replicas of every site pooled at this one, one spare
            instead of one per site) or ``cloud`` (this pool's replicas rented in the cloud).
        servers: Servers installed for the pool(s) the fix covers after it.
        accelerators_installed: Accelerators installed after it (owned).
        accelerators_before: Accelerators installed today for what the fix covers.
        cloud_accelerators: Accelerators rented instead (``cloud`` only).
        platform: The smaller server (``smaller_server`` only).
    """

    kind: str
    servers: int
    accelerators_installed: int
    accelerators_before: int
    cloud_accelerators: int = 0
    platform: Platform | None = None


@dataclass(frozen=True, slots=True)
class EmptyPool:
    """A pool using less than :data:`EMPTY_POOL_THRESHOLD` of its accelerators, with fixes."""

    pool: PlatformPool
    fixes: tuple[FleetFix, ...]

    @property
    def used_fraction(self) -> float:
        return self.pool.accelerators_used / self.pool.accelerators_installed


def _repack(site_key: str, platform: Platform, pools: Sequence[PlatformPool]) -> PlatformPool:
    """The workloads of ``pools`` packed together on ``platform`` (one spare when any had)."""
    placed = [(w, p.spare_servers > 0) for p in pools for w in p.workloads]
    return _pool(site_key, platform, placed)


def empty_pools(
    deployment: PooledDeployment,
    smaller_platforms: Sequence[Platform] = (),
    threshold: float = EMPTY_POOL_THRESHOLD,
) -> tuple[EmptyPool, ...]:
    """Pools (a platform at a site) whose replicas use less than ``threshold`` of the
    accelerators installed, each with the fixes that install fewer: a smaller server of the
    same accelerator (from ``smaller_platforms``, where every replica still fits one server),
    one site for the platform's replicas instead of several, or the cloud for this share.
    Counts use the same packing and N+1 rule as :func:`plan_pooled`."""
    out = []
    for pool in deployment.pools:
        installed = pool.accelerators_installed
        if not installed or pool.accelerators_used >= threshold * installed:
            continue
        fixes = []
        widest = max((w.tensor_parallel for w in pool.workloads), default=1)
        for alt in smaller_platforms:
            if (
                alt.accelerator_slug != pool.platform.accelerator_slug
                or alt.accelerators_per_server >= pool.platform.accelerators_per_server
                or alt.accelerators_per_server < widest
            ):
                continue
            repacked = _repack(pool.site_key, alt, [pool])
            if repacked.accelerators_installed < installed:
                fixes.append(FleetFix("smaller_server", repacked.servers,
                                      repacked.accelerators_installed, installed,
                                      platform=alt))  # fmt: skip
        same = [p for p in deployment.pools if p.platform.key == pool.platform.key]
        if len(same) > 1:
            merged = _repack(pool.site_key, pool.platform, same)
            before = sum(p.accelerators_installed for p in same)
            if merged.accelerators_installed < before:
                fixes.append(FleetFix("one_site", merged.servers,
                                      merged.accelerators_installed, before))  # fmt: skip
        fixes.append(FleetFix("cloud", 0, 0, installed, cloud_accelerators=pool.accelerators_used))
        out.append(EmptyPool(pool, tuple(fixes)))
    return tuple(out)


# --- Default split by the users' regions -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SiteLocation:
    """A site as the default split needs it: key and coordinates (``None`` when unknown)."""

    key: str
    lat: float | None
    lon: float | None


def default_site_shares(
    region_shares: Mapping[str, float],
    region_coordinates: Mapping[str, tuple[float, float]],
    sites: Sequence[SiteLocation],
    rtt_budget_ms: float | None,
) -> tuple[tuple[tuple[str, float], ...], tuple[str, ...]]:
    """Each user region's share goes to the nearest site whose round trip fits the budget.

    When no site meets the budget for a region, the nearest site takes it and a note says so.
    Regions without coordinates and sites without coordinates are skipped; with nothing to
    measure, everything goes to the first site.

    Returns:
        ((site key, share in percent), ...) in site order, and notes.
    """
    if not sites:
        return (), ()
    located = [s for s in sites if s.lat is not None and s.lon is not None]
    totals: dict[str, float] = {}
    notes: list[str] = []
    for region, share in region_shares.items():
        if share <= 0 or region not in region_coordinates or not located:
            continue
        lat, lon = region_coordinates[region]
        by_rtt = sorted(
            ((rtt_ms(haversine_km(lat, lon, s.lat, s.lon)), i, s) for i, s in enumerate(located)),
            key=lambda row: (row[0], row[1]),
        )
        fitting = [row for row in by_rtt if rtt_budget_ms is None or row[0] <= rtt_budget_ms]
        best = (fitting or by_rtt)[0]
        if not fitting:
            notes.append(
                f"No site is within the {rtt_budget_ms:.0f} ms round-trip budget of {region}'s "
                f"users; they go to the nearest ({best[0]:.0f} ms)."
            )
        totals[best[2].key] = totals.get(best[2].key, 0.0) + float(share)
    total = sum(totals.values())
    if not total:
        return ((sites[0].key, 100.0),), tuple(notes)
    return (
        tuple((s.key, 100.0 * totals[s.key] / total) for s in sites if s.key in totals),
        tuple(notes),
    )
