"""Facility checks: rack power, A/B redundancy, cooling, heat, rack count and power readiness.

Given a site (racks, feeds, cooling, capacity and dated power upgrades) and the servers a plan
puts in it, :func:`check_facility` returns one :class:`Check` per rule, each ``pass``, ``warn``
or ``fail`` with the number, the limit and a one-sentence reason. :func:`rack_layout` places
servers, switches and PDUs in rack units (pure data) and :func:`rack_elevation_svg` draws the
layout as a NetBox-style SVG.

Electrical model. A feed's usable power follows NetBox's ``PowerFeed.save`` with the
continuous-load derating: single phase ``V × A × derating``, three phase (line-to-line volts)
``√3 × V × A × derating``, times an optional power factor (NetBox assumes 1.0, so VA = W).
With A+B feeds NetBox adds both sides together; here the redundancy test is the stricter
``rack load ≤ one side's usable capacity`` so that either side can carry the rack alone.

Sources: ``shared/reference/facility_tco_sourcing.md`` parts A and D (cited below by
section, e.g. "ref A5"). Cooling-method envelopes there are guidance bands from vendor and
secondary sources, not standards, so they produce warnings before they produce failures.

No Django import: the facility service loads rows into these dataclasses and stores results.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from html import escape
from typing import Literal

from planner.engine import limits
from planner.engine.errors import EngineInputError
from planner.engine.shown import USD_SHOWN, ShownIn
from planner.engine.units import BTU_PER_H_PER_TON, BTU_PER_H_PER_W, IMPERIAL, SiteUnits

__all__ = [
    "ASHRAE_CLASSES",
    "AIR_FRACTION_BY_COOLING",
    "BTU_PER_H_PER_W",
    "BTU_PER_H_PER_TON",
    "COOLING_ENVELOPES",
    "DEFAULT_BREAKER_DERATING",
    "DEFAULT_DELTA_T_F",
    "DEFAULT_POWER_FACTOR",
    "DEFAULT_POWER_READY_MARGIN_DAYS",
    "DEFAULT_PUE",
    "DEFAULT_POWER_USD_PER_KWH",
    "PUE_WARN_ABOVE",
    "WARN_FRACTION",
    "AshraeClass",
    "Check",
    "CoolingEnvelope",
    "FacilityReport",
    "PlacedDevice",
    "PowerUpgrade",
    "RackElevation",
    "RackLayout",
    "RackLoad",
    "RackCapacity",
    "SiteSpec",
    "airflow_cfm",
    "check_facility",
    "check_site",
    "feed_usable_kw",
    "heat_btu_per_h",
    "rack_capacity",
    "rack_elevation_svg",
    "rack_layout",
    "site_capacity_kw_on",
]

Status = Literal["pass", "warn", "fail"]
CoolingMethod = Literal["air", "rear_door", "direct_to_chip", "immersion"]

# --- Defaults (each editable in the UI; source in the trailing comment) -----------------------

DEFAULT_BREAKER_DERATING = (
    0.8  # NEC 80 % continuous load; NetBox POWERFEED_DEFAULT_MAX_UTILIZATION=80 (ref A5, D1)
)
DEFAULT_POWER_FACTOR = 1.0  # NetBox convention W = VA; expose 0.9-1.0 (ref A1, D3)
DEFAULT_PUE = 1.5  # enterprise/colocation 1.5-1.6, Uptime industry avg 1.58 in 2023 (ref A6, D9)
PUE_WARN_ABOVE = 1.6  # above the Uptime industry average band 1.55-1.59 (ref A6)
DEFAULT_POWER_USD_PER_KWH = 0.08  # US industrial 2023 avg 8.06 ¢/kWh, EIA via Epoch (ref B6, D10)
CFM_SENSIBLE_HEAT_FACTOR = 1.085  # CFM = 3412·kW / (1.085·ΔT°F), Dell via insideHPC (ref A6, D8)
DEFAULT_DELTA_T_F = 20.0  # typical server ΔT 20-30 °F (ref A6, D8)
WARN_FRACTION = 0.9  # planner convention: warn at ≥ 90 % of a limit
DEFAULT_POWER_READY_MARGIN_DAYS = 28  # planner convention: warn when power lands < 4 weeks before go-live (ref A7: power gear lead times slip)


@dataclass(frozen=True, slots=True)
class CoolingEnvelope:
    """Practical kW-per-rack envelope of a cooling method (ref A3, D6).

    Attributes:
        method: Cooling method key.
        comfortable_kw: Density up to which the method works without special measures.
        practical_limit_kw: Density beyond which the method is not credible; ``None`` if none
            is quoted (immersion is "effectively unlimited").
        source: Where the numbers come from.
    """

    method: CoolingMethod
    comfortable_kw: float
    practical_limit_kw: float | None
    source: str


# The public sources of the envelopes, by name (ref A3/D6 of the research notes).
_RACK_DENSITY_SOURCES = "Uptime Institute survey 2023, Schneider Electric 2024"
COOLING_ENVELOPES: dict[str, CoolingEnvelope] = {
    "air": CoolingEnvelope(
        "air",
        10.0,
        30.0,
        "perimeter CRAC ~8-10 kW; contained or in-row air up to ~25-30 kW; "
        + _RACK_DENSITY_SOURCES,
    ),
    "rear_door": CoolingEnvelope(
        "rear_door",
        50.0,
        80.0,
        "rear-door heat exchanger ~20-80 kW, passive ~40-60 kW; " + _RACK_DENSITY_SOURCES,
    ),
    "direct_to_chip": CoolingEnvelope(
        "direct_to_chip",
        140.0,
        150.0,
        "cold plate 50-150 kW; NVL72 racks 120-140 kW are the reference; " + _RACK_DENSITY_SOURCES,
    ),
    "immersion": CoolingEnvelope(
        "immersion",
        100.0,
        None,
        "100+ kW per tank, 'effectively unlimited'; " + _RACK_DENSITY_SOURCES,
    ),
}

# Share of the heat still carried by air, for the airflow figure (ref A3: DLC leaves 20-30 % to air).
AIR_FRACTION_BY_COOLING: dict[str, float] = {
    "air": 1.0,
    "rear_door": 1.0,  # server fans still move all the heat, the door cools the exhaust
    "direct_to_chip": 0.25,
    "immersion": 0.0,
}


@dataclass(frozen=True, slots=True)
class AshraeClass:
    """ASHRAE TC 9.9 allowable inlet dry-bulb range in °C (ref A4, 2021 reference card)."""

    name: str
    allowable_min_c: float
    allowable_max_c: float


ASHRAE_CLASSES: dict[str, AshraeClass] = {
    "A1": AshraeClass("A1", 15.0, 32.0),
    "A2": AshraeClass("A2", 10.0, 35.0),
    "A3": AshraeClass("A3", 5.0, 40.0),
    "A4": AshraeClass("A4", 5.0, 45.0),
    "H1": AshraeClass("H1", 5.0, 25.0),
}


# --- Inputs -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PowerUpgrade:
    """A dated increase of the site's IT power capacity.

    Attributes:
        ready_date: Date the added capacity is energised and usable.
        added_kw: IT capacity added, kW.
        note: Free text (e.g. "new 2 MVA transformer").
    """

    ready_date: date
    added_kw: float
    note: str = ""


@dataclass(frozen=True, slots=True)
class SiteSpec:
    """A data-centre site or colocation cage as the facility checks need it.

    Attributes:
        name: Site name.
        racks_available: Racks the plan may use.
        site_it_capacity_kw: IT power available to the plan today (before upgrades), kW.
        usable_ru_per_rack: Rack units usable for equipment in each rack.
        feeds_per_rack: Power feeds per rack; 2 means A+B, 4 means two per side.
        voltage_v: Feed voltage, V (line-to-line for three phase, as in NetBox).
        phase: 1 or 3.
        amperage_a: Breaker rating of one feed, A.
        breaker_derating: Continuous-load fraction of the breaker rating (0-1].
        power_factor: W per VA of the load; NetBox assumes 1.0.
        cooling_method: ``air``, ``rear_door``, ``direct_to_chip`` or ``immersion``.
        cooling_capacity_per_rack_kw: Heat one rack position can reject, kW; ``None`` if the
            site has not stated it (only the method envelope is then checked).
        cooling_capacity_site_kw: Heat the whole site can reject for the plan, kW; ``None`` if
            not stated.
        ashrae_class: Inlet class the room is operated to (``A1``-``A4``, ``H1``).
        pue: Power usage effectiveness, facility kW ÷ IT kW.
        power_usd_per_kwh: Electricity price, USD per kWh.
        planned_upgrades: Dated capacity upgrades.
        power_ready_date: Date the site's base capacity is energised for the plan; ``None``
            means already available.
        delta_t_f: Air temperature rise across the servers, °F, for the airflow figure.
    """

    name: str
    racks_available: int
    site_it_capacity_kw: float
    usable_ru_per_rack: int = 42
    feeds_per_rack: int = 2
    voltage_v: float = 415.0
    phase: Literal[1, 3] = 3
    amperage_a: float = 32.0
    breaker_derating: float = DEFAULT_BREAKER_DERATING
    power_factor: float = DEFAULT_POWER_FACTOR
    cooling_method: CoolingMethod = "air"
    cooling_capacity_per_rack_kw: float | None = None
    cooling_capacity_site_kw: float | None = None
    ashrae_class: str = "A2"
    pue: float = DEFAULT_PUE
    power_usd_per_kwh: float = DEFAULT_POWER_USD_PER_KWH
    planned_upgrades: tuple[PowerUpgrade, ...] = ()
    power_ready_date: date | None = None
    delta_t_f: float = DEFAULT_DELTA_T_F

    def __post_init__(self) -> None:
        if self.phase not in (1, 3):
            raise EngineInputError(f"phase must be 1 or 3, got {self.phase!r}")
        if not 0 < self.breaker_derating <= 1:
            raise EngineInputError("breaker_derating must be in (0, 1]")
        if not 0 < self.power_factor <= 1:
            raise EngineInputError("power_factor must be in (0, 1]")
        if self.cooling_method not in COOLING_ENVELOPES:
            raise EngineInputError(f"unknown cooling method {self.cooling_method!r}")
        if self.ashrae_class not in ASHRAE_CLASSES:
            raise EngineInputError(f"unknown ASHRAE class {self.ashrae_class!r}")
        if self.feeds_per_rack < 1 or self.racks_available < 0 or self.usable_ru_per_rack < 1:
            raise EngineInputError(
                "feeds_per_rack ≥ 1, racks_available ≥ 0, usable_ru_per_rack ≥ 1"
            )
        if not 1 <= self.pue <= 4:
            raise EngineInputError("pue must be between 1 and 4")
        limits.RACKS.check("racks_available", self.racks_available)
        limits.SITE_KW.check("site_it_capacity_kw", self.site_it_capacity_kw)
        limits.SITE_KW.check("cooling_capacity_site_kw", self.cooling_capacity_site_kw)
        limits.COOLING_PER_RACK_KW.check(
            "cooling_capacity_per_rack_kw", self.cooling_capacity_per_rack_kw
        )
        limits.VOLTAGE_V.check("voltage_v", self.voltage_v)
        limits.AMPERAGE_A.check("amperage_a", self.amperage_a)
        limits.DELTA_T_F.check("delta_t_f", self.delta_t_f)
        limits.POWER_USD_PER_KWH.check("power_usd_per_kwh", self.power_usd_per_kwh)
        limits.check_date("power_ready_date", self.power_ready_date)
        for upgrade in self.planned_upgrades:
            limits.check_date("upgrade ready_date", upgrade.ready_date)
            limits.SITE_KW.check("upgrade added_kw", upgrade.added_kw)


@dataclass(frozen=True, slots=True)
class RackLoad:
    """The servers a plan puts in a site, with the per-rack network and PDU gear.

    Attributes:
        server_name: Label of the server model (e.g. "DGX H100").
        server_power_kw: Design (nameplate maximum) draw of one server, kW (ref D5: size at max).
        server_ru: Rack units of one server.
        server_count: Servers to place in total.
        servers_per_rack: Density the consultant wants; ``None`` packs the densest that
            power, cooling and rack units allow.
        switches_per_rack: Top-of-rack switches per rack.
        switch_ru: Rack units of one switch.
        switch_power_kw: Draw of one switch, kW.
        pdus_per_rack: PDUs per rack (usually one per feed).
        pdu_ru: Rack units of one PDU; 0 for vertical (zero-U) PDUs.
        pdu_power_kw: Own draw of one PDU, kW (metering, usually ~0).
        server_ashrae_class: Inlet class the server is rated for.
        switch_name: Label of the switch.
        pdu_name: Label of the PDU.
        server_psus: Power supplies per server, None when unknown (then looked up in
            :data:`PLATFORM_PSUS` by server name).
        server_psu_kw: Rating of one power supply, kW.
        server_psu_redundancy: M of the server's N+M supply redundancy.
        rack_scale: The "server" is a whole rack (GB200 NVL72); None: when it is ≥ 48U.
    """

    server_name: str
    server_power_kw: float
    server_ru: int
    server_count: int
    servers_per_rack: int | None = None
    switches_per_rack: int = 1
    switch_ru: int = 1
    switch_power_kw: float = 0.0
    pdus_per_rack: int = 2
    pdu_ru: int = 0
    pdu_power_kw: float = 0.0
    server_ashrae_class: str = "A2"
    switch_name: str = "ToR switch"
    pdu_name: str = "PDU"
    server_psus: int | None = None
    server_psu_kw: float | None = None
    server_psu_redundancy: int | None = None
    rack_scale: bool | None = None

    @property
    def is_rack_scale(self) -> bool:
        """True when one system fills a rack (then it is one per rack whatever its RU)."""
        if self.rack_scale is not None:
            return self.rack_scale
        return self.server_ru >= RACK_SCALE_MIN_RU

    def power_supplies(self) -> tuple[int, float, int] | None:
        """(supplies, kW each, redundant M) of one server: given, or known for the platform."""
        if self.server_psus and self.server_psu_kw:
            return self.server_psus, self.server_psu_kw, self.server_psu_redundancy or 0
        name = self.server_name.upper()
        for key, supplies in PLATFORM_PSUS.items():
            if key in name:
                return supplies
        return None

    def __post_init__(self) -> None:
        if not 0 < self.server_power_kw < math.inf or self.server_ru < 1 or self.server_count < 0:
            raise EngineInputError(
                "server_power_kw > 0, server_ru ≥ 1 and server_count ≥ 0 required"
            )
        limits.SERVERS_PER_RACK.check("servers_per_rack", self.servers_per_rack)
        limits.DEVICES_PER_RACK.check("switches_per_rack", self.switches_per_rack)
        limits.DEVICES_PER_RACK.check("pdus_per_rack", self.pdus_per_rack)
        limits.SWITCH_POWER_KW.check("switch_power_kw", self.switch_power_kw)
        if self.server_ashrae_class not in ASHRAE_CLASSES:
            raise EngineInputError(f"unknown ASHRAE class {self.server_ashrae_class!r}")

    @property
    def overhead_kw_per_rack(self) -> float:
        """Switch and PDU draw per rack, kW."""
        return (
            self.switches_per_rack * self.switch_power_kw + self.pdus_per_rack * self.pdu_power_kw
        )

    @property
    def overhead_ru_per_rack(self) -> int:
        """Rack units taken by switches and PDUs in each rack."""
        return self.switches_per_rack * self.switch_ru + self.pdus_per_rack * self.pdu_ru


# Power supplies of known platforms: (supplies, kW each, redundant M of N+M), split evenly over
# the A and B feeds. DGX H100/H200: 6 × 3.3 kW, 4+2; DGX B200: 6 × 3.3 kW, 5+1
# (facility_tco_sourcing.md A2, NVIDIA DGX user guides).
PLATFORM_PSUS: dict[str, tuple[int, float, int]] = {
    "DGX H100": (6, 3.3, 2),
    "DGX H200": (6, 3.3, 2),
    "DGX B200": (6, 3.3, 1),
}
# A system this tall is a whole rack (rack-scale NVL72 class, deployment.RACK_SCALE_RACK_UNITS).
RACK_SCALE_MIN_RU = 48


# --- Outputs ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    """One facility rule applied to the plan.

    Attributes:
        key: Stable identifier (``ab_redundancy``, ``cooling_method``...).
        title: Short human title.
        status: ``pass``, ``warn`` or ``fail``.
        value: The plan's figure, in ``unit``.
        limit: The limit it was compared with, in ``unit``; ``None`` when informational.
        unit: Unit of value and limit (``kW``, ``BTU/h``, ``racks``, ``days``...).
        reason: One sentence a consultant can paste into a report.
    """

    key: str
    title: str
    status: Status
    value: float
    limit: float | None
    unit: str
    reason: str


@dataclass(frozen=True, slots=True)
class RackCapacity:
    """How many servers fit in one rack, and what binds.

    Attributes:
        by_power: Servers one feed side (or the single feed) can carry.
        by_cooling: Servers the rack's cooling (site figure or method limit) can take;
            ``None`` when unlimited.
        by_rack_units: Servers that fit in the usable rack units.
        max_servers: The smallest of the three.
        binding: Names of the limits equal to ``max_servers`` (``power``, ``cooling``,
            ``rack_units``).
        power_limit_kw: Power available to one rack under the redundancy rule, kW.
        cooling_limit_kw: Cooling available to one rack, kW (``inf`` when unlimited).
    """

    by_power: int
    by_cooling: int | None
    by_rack_units: int
    max_servers: int
    binding: tuple[str, ...]
    power_limit_kw: float
    cooling_limit_kw: float


@dataclass(frozen=True, slots=True)
class FacilityReport:
    """All checks plus the derived figures they were computed from.

    Attributes:
        checks: One :class:`Check` per rule, in display order.
        status: Worst status among the checks.
        feed_usable_kw: Usable power of one feed after derating, kW.
        side_usable_kw: Usable power of one A/B side, kW (= feed when single-fed).
        rack_capacity: Servers-per-rack limits.
        servers_per_rack: Density used for the per-rack checks.
        rack_load_kw: IT load of the fullest rack, kW.
        racks_needed: Racks needed at that density.
        it_load_kw: Total IT load of the plan, kW.
        facility_load_kw: IT load × PUE, kW.
        heat_btu_per_h: Total heat to reject, BTU/h.
        airflow_cfm_per_rack: Air the fullest rack needs, CFM.
        site_capacity_at_go_live_kw: Base capacity plus upgrades dated on or before go-live, kW.
        power_ready_on: First date the site can carry the whole IT load; ``None`` if never.
        energy_usd_per_month: Facility energy cost at full IT load, USD per month (730 h).
    """

    checks: tuple[Check, ...]
    status: Status
    feed_usable_kw: float
    side_usable_kw: float
    rack_capacity: RackCapacity
    servers_per_rack: int
    rack_load_kw: float
    racks_needed: int
    it_load_kw: float
    facility_load_kw: float
    heat_btu_per_h: float
    airflow_cfm_per_rack: float
    site_capacity_at_go_live_kw: float
    power_ready_on: date | None
    energy_usd_per_month: float

    def by_key(self, key: str) -> Check:
        """Return the check with ``key``.

        Raises:
            KeyError: If no such check exists.
        """
        for check in self.checks:
            if check.key == key:
                return check
        raise KeyError(key)


# --- Formulas ---------------------------------------------------------------------------------


def feed_usable_kw(
    voltage_v: float,
    amperage_a: float,
    phase: int,
    derating: float = DEFAULT_BREAKER_DERATING,
    power_factor: float = DEFAULT_POWER_FACTOR,
) -> float:
    """Usable continuous power of one feed, kW.

    Args:
        voltage_v: Volts (line-to-line for three phase).
        amperage_a: Breaker rating, A.
        phase: 1 or 3.
        derating: Continuous-load fraction of the rating.
        power_factor: W per VA.

    Returns:
        kW the feed may carry continuously.
    """
    # 1φ S = V·I; 3φ S = √3·V_LL·I; usable = S × derating (NetBox PowerFeed.save, ref A1/A5)
    phase_factor = math.sqrt(3.0) if phase == 3 else 1.0
    return phase_factor * voltage_v * amperage_a * derating * power_factor / 1000.0


def heat_btu_per_h(load_kw: float) -> float:
    """Heat released by an IT load, BTU/h (all electrical power becomes heat)."""
    return load_kw * 1000.0 * BTU_PER_H_PER_W  # 1 W = 3.412 BTU/h (ref A6)


def airflow_cfm(load_kw: float, delta_t_f: float = DEFAULT_DELTA_T_F) -> float:
    """Cooling air needed to carry ``load_kw`` away at a temperature rise of ``delta_t_f``, CFM."""
    # CFM = 3412·kW / (1.085·ΔT°F) ≈ 3.16·W/ΔT (Dell/insideHPC, ref A6)
    return BTU_PER_H_PER_W * 1000.0 * load_kw / (CFM_SENSIBLE_HEAT_FACTOR * delta_t_f)


def site_capacity_kw_on(site: SiteSpec, on: date) -> float:
    """Site IT capacity on a date: base capacity plus upgrades ready on or before it, kW."""
    return site.site_it_capacity_kw + sum(
        u.added_kw for u in site.planned_upgrades if u.ready_date <= on
    )


def _power_ready_on(site: SiteSpec, required_kw: float) -> date | None:
    """First date on which the site can carry ``required_kw``; ``None`` if never."""
    capacity = site.site_it_capacity_kw
    ready = date.min if capacity >= required_kw else None
    for upgrade in sorted(site.planned_upgrades, key=lambda u: u.ready_date):
        if ready is not None:
            break
        capacity += upgrade.added_kw
        ready = upgrade.ready_date if capacity >= required_kw else None
    if ready is None:
        return None
    if site.power_ready_date is not None:
        ready = max(ready, site.power_ready_date)
    return ready


def _side_usable_kw(site: SiteSpec, feed_kw: float) -> float:
    # A/B: either surviving side must carry 100 % of the rack (starlighttools, ref A5/D4)
    return feed_kw * max(1, site.feeds_per_rack // 2) if site.feeds_per_rack >= 2 else feed_kw


def _rack_cooling_limit_kw(site: SiteSpec) -> float:
    envelope = COOLING_ENVELOPES[site.cooling_method]
    limits = [
        x for x in (site.cooling_capacity_per_rack_kw, envelope.practical_limit_kw) if x is not None
    ]
    return min(limits) if limits else math.inf


def _fit(limit_kw: float, overhead_kw: float, server_kw: float) -> int:
    if math.isinf(limit_kw):
        return 10**9
    # small epsilon so that 18.4 kW / 9.2 kW is 2, not 1.9999999
    return max(0, math.floor((limit_kw - overhead_kw) / server_kw + 1e-9))


def rack_capacity(site: SiteSpec, load: RackLoad) -> RackCapacity:
    """Servers per rack allowed by power (one A/B side), cooling and rack units.

    Args:
        site: The site.
        load: Servers and per-rack gear.

    Returns:
        The three limits, the smallest, and which of them bind.
    """
    feed_kw = feed_usable_kw(
        site.voltage_v, site.amperage_a, site.phase, site.breaker_derating, site.power_factor
    )
    side_kw = _side_usable_kw(site, feed_kw)
    cooling_kw = _rack_cooling_limit_kw(site)
    by_power = _fit(side_kw, load.overhead_kw_per_rack, load.server_power_kw)
    by_cooling = _fit(cooling_kw, load.overhead_kw_per_rack, load.server_power_kw)
    by_ru = max(0, (site.usable_ru_per_rack - load.overhead_ru_per_rack) // load.server_ru)
    if load.is_rack_scale:
        by_ru = 1  # the system is the rack
    limits = {"power": by_power, "cooling": by_cooling, "rack_units": by_ru}
    best = min(limits.values())
    return RackCapacity(
        by_power=by_power,
        by_cooling=None if math.isinf(cooling_kw) else by_cooling,
        by_rack_units=by_ru,
        max_servers=best,
        binding=tuple(k for k, v in limits.items() if v == best),
        power_limit_kw=side_kw,
        cooling_limit_kw=cooling_kw,
    )


def _n(count: int, noun: str) -> str:
    """``1 rack``, ``3 racks``: a count with its noun in the right number."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _status(value: float, limit: float | None, warn_fraction: float = WARN_FRACTION) -> Status:
    if limit is None:
        return "pass"
    if value > limit + 1e-9:
        return "fail"
    if value >= warn_fraction * limit:
        return "warn"
    return "pass"


def _worst(statuses: list[Status]) -> Status:
    order = {"pass": 0, "warn": 1, "fail": 2}
    return max(statuses, key=order.__getitem__, default="pass")


def _planned_density(load: RackLoad, cap: RackCapacity) -> int:
    if load.servers_per_rack is not None:
        return load.servers_per_rack
    return max(1, min(cap.max_servers, max(load.server_count, 1)))


# --- Checks -----------------------------------------------------------------------------------


def _per_rack_tail_checks(
    site: SiteSpec, load: RackLoad, rack_kw: float, units: SiteUnits = IMPERIAL
) -> list[Check]:
    """Airflow and inlet class of the fullest rack (checks 10 and 11); the reasons in the
    site's ``units``."""
    checks: list[Check] = []
    # 10. Airflow per rack (air-cooled share of the heat).
    air_fraction = AIR_FRACTION_BY_COOLING[site.cooling_method]
    cfm = airflow_cfm(rack_kw * air_fraction, site.delta_t_f)
    checks.append(
        Check(
            "airflow",
            "Airflow per rack",
            "pass",
            cfm,
            None,
            "CFM",
            f"The fullest rack needs about {units.airflow(cfm)} of air at ΔT "
            f"{units.delta_t(site.delta_t_f)} "
            f"({air_fraction:.0%} of its heat carried by air).",
        )
    )

    # 11. Inlet temperature class: the room must not run warmer than the servers allow.
    room = ASHRAE_CLASSES[site.ashrae_class]
    server = ASHRAE_CLASSES[load.server_ashrae_class]
    ok = room.allowable_max_c <= server.allowable_max_c
    checks.append(
        Check(
            "inlet_class",
            "Inlet temperature class",
            "pass" if ok else "warn",
            room.allowable_max_c,
            server.allowable_max_c,
            "°C",
            f"The room is run to ASHRAE {room.name} (up to "
            f"{units.temperature(room.allowable_max_c)}) and the servers are rated "
            f"{server.name} (up to {units.temperature(server.allowable_max_c)})"
            + ("." if ok else ", so hot excursions can exceed the servers' rating."),
        )
    )

    return checks


def _site_checks(
    site: SiteSpec,
    it_kw: float,
    racks_needed: int,
    racks_text: str,
    go_live: date,
    power_ready_margin_days: int,
    shown: ShownIn = USD_SHOWN,
    units: SiteUnits = IMPERIAL,
) -> tuple[list[Check], tuple[float, float, float, float, date | None]]:
    """Checks of the whole site's load (6-9 and 12): racks, capacity, PUE, heat, power date.

    Returns:
        (checks, (facility kW, energy USD/month, heat BTU/h, capacity at go-live kW,
        power-ready date or None / date.min)).
    """
    checks: list[Check] = []
    # 6. Racks needed against racks available.
    status = _status(racks_needed, site.racks_available)
    checks.append(
        Check(
            "rack_count",
            "Rack count",
            status,
            float(racks_needed),
            float(site.racks_available),
            "racks",
            f"{racks_text}; {site.racks_available} available.",
        )
    )

    # 7. Total IT load against site capacity at go-live (upgrades dated on or before it count).
    cap_at_go_live = site_capacity_kw_on(site, go_live)
    upgrades_in = [u for u in site.planned_upgrades if u.ready_date <= go_live]
    extra = (
        f" including {_n(len(upgrades_in), 'upgrade')} of +{sum(u.added_kw for u in upgrades_in):g} kW"
        if upgrades_in
        else ""
    )
    checks.append(
        Check(
            "site_power",
            "IT load vs site capacity",
            _status(it_kw, cap_at_go_live),
            it_kw,
            cap_at_go_live,
            "kW",
            f"The plan's IT load is {it_kw:.1f} kW against {cap_at_go_live:g} kW available on "
            f"{go_live.isoformat()}{extra}.",
        )
    )

    # 8. Facility load at PUE.
    facility_kw = it_kw * site.pue  # facility power = IT × PUE (Uptime definition, ref A6)
    energy_usd_month = facility_kw * 730.0 * site.power_usd_per_kwh  # 730 h per month
    checks.append(
        Check(
            "facility_power",
            "Facility load at PUE",
            "warn" if site.pue > PUE_WARN_ABOVE else "pass",
            facility_kw,
            None,
            "kW",
            f"At PUE {site.pue:g} the site draws {facility_kw:.1f} kW for {it_kw:.1f} kW of IT, "
            f"about {shown.money(energy_usd_month)} a month at "
            f"{shown.per(site.power_usd_per_kwh, 'kWh', 3)}"
            + (
                " (PUE above the 1.55-1.59 industry average)." if site.pue > PUE_WARN_ABOVE else "."
            ),
        )
    )

    # 9. Heat load against site cooling.
    heat = heat_btu_per_h(it_kw)
    if site.cooling_capacity_site_kw is not None:
        limit_btu = heat_btu_per_h(site.cooling_capacity_site_kw)
        status = _status(heat, limit_btu)
        reason = (
            f"{it_kw:.1f} kW of IT releases {units.heat(heat)} of heat against "
            f"{units.heat(limit_btu)} of site cooling."
        )
    else:
        limit_btu, status = None, "warn"
        reason = (
            f"{it_kw:.1f} kW of IT releases {units.heat(heat)} of heat; the site has "
            "not stated its total cooling capacity."
        )
    checks.append(Check("heat_load", "Heat load", status, heat, limit_btu, "BTU/h", reason))

    # 12. Power ready before go-live.
    ready = _power_ready_on(site, it_kw)
    if ready is None:
        total = site.site_it_capacity_kw + sum(u.added_kw for u in site.planned_upgrades)
        check = Check(
            "power_ready",
            "Power ready before go-live",
            "fail",
            math.inf,
            float(power_ready_margin_days),
            "days of slack",  # the limit: the slack go-live needs (the value: never ready)
            f"Even with every planned upgrade the site reaches {total:g} kW, short of the "
            f"{it_kw:.1f} kW the plan needs.",
        )
    else:
        slack = (go_live - ready).days if ready != date.min else math.inf
        when = "already" if ready == date.min else f"on {ready.isoformat()}"
        if slack < 0:
            status = "fail"
            reason = (
                f"{it_kw:.1f} kW is available {when}, {_n(-slack, 'day')} after go-live "
                f"{go_live.isoformat()}."
            )
        elif slack < power_ready_margin_days:
            status = "warn"
            reason = (
                f"{it_kw:.1f} kW is available {when}, only {_n(slack, 'day')} before go-live; "
                "a slip in power works moves go-live."
            )
        else:
            status = "pass"
            reason = f"{it_kw:.1f} kW is available {when}, before go-live {go_live.isoformat()}."
        check = Check(
            "power_ready",
            "Power ready before go-live",
            status,
            float(slack),
            float(power_ready_margin_days),
            "days of slack",
            reason,
        )
    checks.append(check)

    return checks, (facility_kw, energy_usd_month, heat, cap_at_go_live, ready)


def check_facility(
    site: SiteSpec,
    load: RackLoad,
    go_live: date,
    *,
    power_ready_margin_days: int = DEFAULT_POWER_READY_MARGIN_DAYS,
    shown: ShownIn = USD_SHOWN,
    units: SiteUnits = IMPERIAL,
) -> FacilityReport:
    """Run every facility check for ``load`` placed in ``site`` with a target ``go_live``.

    Per-rack checks use the fullest rack at the planned density (``load.servers_per_rack``
    or, if ``None``, the densest that passes power, cooling and rack units).

    Args:
        site: The site.
        load: Servers and per-rack gear.
        go_live: Target go-live date.
        power_ready_margin_days: Slack below which a power date that is in time still warns.
        shown: The currency the reasons write amounts in (the energy cost; figures stay USD).
        units: The units the reasons write heat, airflow and temperatures in (figures stay
            in the engine's BTU/h, CFM and °C).

    Returns:
        A :class:`FacilityReport`.
    """
    checks: list[Check] = []
    feed_kw = feed_usable_kw(
        site.voltage_v, site.amperage_a, site.phase, site.breaker_derating, site.power_factor
    )
    side_kw = _side_usable_kw(site, feed_kw)
    cap = rack_capacity(site, load)
    per_rack = _planned_density(load, cap)
    racks_needed = math.ceil(load.server_count / per_rack) if load.server_count else 0
    servers_in_fullest = min(per_rack, load.server_count) if load.server_count else 0
    rack_kw = servers_in_fullest * load.server_power_kw + load.overhead_kw_per_rack
    it_kw = load.server_count * load.server_power_kw + racks_needed * load.overhead_kw_per_rack

    if site.phase == 3:
        formula = (
            f"√3 × {site.voltage_v:g} V × {site.amperage_a:g} A × {site.breaker_derating:g}"
            f" = {feed_kw:.2f} kW"
        )
    else:
        formula = (
            f"{site.voltage_v:g} V × {site.amperage_a:g} A × {site.breaker_derating:g}"
            f" = {feed_kw:.2f} kW"
        )
    if site.power_factor != 1.0:
        formula += f" at power factor {site.power_factor:g}"

    # 1. Normal operation: rack load against all its feeds together (NetBox's view).
    all_feeds_kw = feed_kw * site.feeds_per_rack
    checks.append(
        Check(
            "feed_capacity",
            "Rack load vs feed capacity",
            _status(rack_kw, all_feeds_kw),
            rack_kw,
            all_feeds_kw,
            "kW",
            f"The fullest rack draws {rack_kw:.2f} kW against {_n(site.feeds_per_rack, 'feed')} of "
            f"{formula} each.",
        )
    )

    # 2. A+B: one side alone must carry the whole rack.
    if site.feeds_per_rack >= 2:
        status = _status(rack_kw, side_kw)
        verdict = (
            "can carry it alone if the other side fails"
            if status != "fail"
            else "cannot carry it alone, so losing one side trips the rack"
        )
        reason = (
            f"The rack draws {rack_kw:.2f} kW and one side ({side_kw:.2f} kW usable) {verdict}."
        )
    else:
        status = "warn" if rack_kw <= side_kw + 1e-9 else "fail"
        reason = (
            f"The rack has a single feed ({side_kw:.2f} kW usable) for {rack_kw:.2f} kW, "
            "so there is no A/B redundancy."
        )
    supplies = load.power_supplies()
    if site.feeds_per_rack >= 2 and supplies and servers_in_fullest:
        # Losing one feed also takes half of each server's power supplies with it.
        count, psu_kw, spare = supplies
        left = count // 2
        left_kw = left * psu_kw
        needed = count - spare
        if left_kw + 1e-9 < load.server_power_kw:
            # Far short (B200: 9.9 of 14.3 kW) fails; a few percent short (H100: 9.9 of
            # 10.2 kW) warns: the server caps its draw at full load on one side.
            short = left_kw < WARN_FRACTION * load.server_power_kw
            status = "fail" if short else ("warn" if status == "pass" else status)
            reason += (
                f" On one feed each server keeps {left} of its {count} × {psu_kw:g} kW power "
                f"supplies ({left_kw:.1f} kW) for its {load.server_power_kw:.1f} kW maximum "
                f"({needed}+{spare} redundancy needs {needed} working), so it "
                + ("stops or throttles hard" if short else "throttles at full load")
                + " when a side fails."
            )
        else:
            reason += (
                f" Each server's {left} remaining power supplies ({left_kw:.1f} kW) carry its "
                f"{load.server_power_kw:.1f} kW."
            )
    checks.append(
        Check("ab_redundancy", "A/B feed redundancy", status, rack_kw, side_kw, "kW", reason)
    )

    # 3. Density against the cooling method's practical envelope.
    env = COOLING_ENVELOPES[site.cooling_method]
    method = site.cooling_method.replace("_", "-")
    if env.practical_limit_kw is not None and rack_kw > env.practical_limit_kw + 1e-9:
        status, reason = (
            "fail",
            f"{rack_kw:.1f} kW per rack exceeds the ~{env.practical_limit_kw:g} kW practical "
            f"limit of {method} cooling ({env.source}).",
        )
    elif rack_kw > env.comfortable_kw + 1e-9 or (
        env.practical_limit_kw is not None and rack_kw >= WARN_FRACTION * env.practical_limit_kw
    ):
        status, reason = (
            "warn",
            f"{rack_kw:.1f} kW per rack is above the ~{env.comfortable_kw:g} kW that {method} "
            f"cooling handles comfortably; confirm containment or the site's design ({env.source}).",
        )
    else:
        status, reason = (
            "pass",
            f"{rack_kw:.1f} kW per rack is within the ~{env.comfortable_kw:g} kW comfortable "
            f"range of {method} cooling.",
        )
    checks.append(
        Check(
            "cooling_method",
            "kW per rack vs cooling method",
            status,
            rack_kw,
            env.practical_limit_kw,
            "kW",
            reason,
        )
    )

    # 4. Density against the site's stated per-rack cooling capacity.
    if site.cooling_capacity_per_rack_kw is not None:
        limit = site.cooling_capacity_per_rack_kw
        status = _status(rack_kw, limit)
        reason = (
            f"The rack releases {rack_kw:.1f} kW of heat against {limit:g} kW of cooling per "
            f"rack position ({rack_kw / limit:.0%})."
        )
    else:
        limit, status = None, "warn"
        reason = "The site has not stated its cooling capacity per rack; ask for it in writing."
    checks.append(
        Check("rack_cooling", "Rack cooling capacity", status, rack_kw, limit, "kW", reason)
    )

    # 5. Servers per rack: planned density against power, cooling and rack units.
    binding = " and ".join(b.replace("_", " ") for b in cap.binding)
    by_cooling = "unlimited" if cap.by_cooling is None else str(cap.by_cooling)
    status = "fail" if per_rack > cap.max_servers else "pass"
    reason = (
        f"{_n(per_rack, 'server')} per rack planned; at most {cap.max_servers} fit "
        f"(power {cap.by_power}, cooling {by_cooling}, rack units {cap.by_rack_units}), "
        f"bound by {binding}."
    )
    checks.append(
        Check(
            "servers_per_rack",
            "Servers per rack",
            status,
            float(per_rack),
            float(cap.max_servers),
            "servers",
            reason,
        )
    )

    racks_text = (
        f"{_n(load.server_count, 'server')} at {per_rack} per rack need {_n(racks_needed, 'rack')}"
    )
    site_checks, totals = _site_checks(
        site, it_kw, racks_needed, racks_text, go_live, power_ready_margin_days, shown, units
    )
    tail = _per_rack_tail_checks(site, load, rack_kw, units)
    # Display order: per-rack 1-5, site 6-9, per-rack 10-11, site 12 (power ready).
    checks = checks + site_checks[:4] + tail + site_checks[4:]
    cfm = tail[0].value
    facility_kw, energy_usd_month, heat, cap_at_go_live, ready = totals

    return FacilityReport(
        checks=tuple(checks),
        status=_worst([c.status for c in checks]),
        feed_usable_kw=feed_kw,
        side_usable_kw=side_kw,
        rack_capacity=cap,
        servers_per_rack=per_rack,
        rack_load_kw=rack_kw,
        racks_needed=racks_needed,
        it_load_kw=it_kw,
        facility_load_kw=facility_kw,
        heat_btu_per_h=heat,
        airflow_cfm_per_rack=cfm,
        site_capacity_at_go_live_kw=cap_at_go_live,
        power_ready_on=None if ready in (None, date.min) else ready,
        energy_usd_per_month=energy_usd_month,
    )


_PER_RACK_KEYS = (
    "feed_capacity",
    "ab_redundancy",
    "cooling_method",
    "rack_cooling",
    "servers_per_rack",
    "airflow",
    "inlet_class",
)
_STATUS_ORDER = {"pass": 0, "warn": 1, "fail": 2}


def check_site(
    site: SiteSpec,
    loads: Sequence[RackLoad],
    go_live: date,
    *,
    power_ready_margin_days: int = DEFAULT_POWER_READY_MARGIN_DAYS,
    shown: ShownIn = USD_SHOWN,
    units: SiteUnits = IMPERIAL,
) -> FacilityReport:
    """Every facility check for several server kinds placed in one site as they are.

    Layout: each server kind fills racks of its own at its own density (a rack holds one
    kind, so each rack is checked with its real servers, not as the most demanding kind).
    Per-rack checks (feeds, A/B, cooling, density, airflow, inlet) are run per kind and the
    worst rack is reported; the site checks (rack count, IT load against capacity, PUE, heat,
    power-ready date) use the sum over the kinds.

    Args:
        site: The site.
        loads: One load per server kind (at least one).
        go_live: Target go-live date.
        power_ready_margin_days: Slack below which a power date that is in time still warns.
        shown: The currency the reasons write amounts in (the energy cost; figures stay USD).
        units: The units the reasons write heat, airflow and temperatures in (figures stay
            in the engine's BTU/h, CFM and °C).
    """
    if not loads:
        raise EngineInputError("Give at least one server kind to place in the site.")
    reports = [
        check_facility(
            site,
            load,
            go_live,
            power_ready_margin_days=power_ready_margin_days,
            shown=shown,
            units=units,
        )
        for load in loads
    ]
    if len(reports) == 1:
        return reports[0]
    racks_needed = sum(r.racks_needed for r in reports)
    it_kw = sum(r.it_load_kw for r in reports)
    racks_text = (
        "; ".join(
            f"{_n(load.server_count, load.server_name + ' server')} at {r.servers_per_rack} per "
            f"rack need {_n(r.racks_needed, 'rack')}"
            for load, r in zip(loads, reports, strict=True)
        )
        + f" — {_n(racks_needed, 'rack')} in all"
    )
    site_checks, totals = _site_checks(
        site, it_kw, racks_needed, racks_text, go_live, power_ready_margin_days, shown, units
    )
    facility_kw, energy_usd_month, heat, cap_at_go_live, ready = totals
    by_key = {c.key: c for c in site_checks}
    checks = []
    for key in (c.key for c in reports[0].checks):
        if key in by_key:
            checks.append(by_key[key])
            continue
        # The worst rack among the kinds (ties: the larger figure), named by its server.
        kind, worst = max(
            ((load, r.by_key(key)) for load, r in zip(loads, reports, strict=True)),
            key=lambda row: (_STATUS_ORDER[row[1].status], row[1].value),
        )
        checks.append(
            Check(
                worst.key,
                worst.title,
                worst.status,
                worst.value,
                worst.limit,
                worst.unit,
                f"{kind.server_name} racks: {worst.reason}",
            )
        )
    fullest = max(reports, key=lambda r: r.rack_load_kw)
    return FacilityReport(
        checks=tuple(checks),
        status=_worst([c.status for c in checks]),
        feed_usable_kw=fullest.feed_usable_kw,
        side_usable_kw=fullest.side_usable_kw,
        rack_capacity=fullest.rack_capacity,
        servers_per_rack=fullest.servers_per_rack,
        rack_load_kw=fullest.rack_load_kw,
        racks_needed=racks_needed,
        it_load_kw=it_kw,
        facility_load_kw=facility_kw,
        heat_btu_per_h=heat,
        airflow_cfm_per_rack=fullest.airflow_cfm_per_rack,
        site_capacity_at_go_live_kw=cap_at_go_live,
        power_ready_on=None if ready in (None, date.min) else ready,
        energy_usd_per_month=energy_usd_month,
    )


# --- Rack layout ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlacedDevice:
    """A device in a rack.

    Attributes:
        name: Label shown on the elevation.
        role: ``server``, ``switch`` or ``pdu``.
        position_u: Lowest rack unit occupied (1 = bottom, NetBox convention); 0 for zero-U.
        height_u: Rack units occupied; 0 for zero-U (vertical) PDUs.
        power_kw: Design draw, kW.
    """

    name: str
    role: Literal["server", "switch", "pdu"]
    position_u: int
    height_u: int
    power_kw: float


@dataclass(frozen=True, slots=True)
class RackElevation:
    """One rack's contents.

    Attributes:
        name: Rack label.
        u_height: Usable rack units.
        devices: Devices occupying rack units, bottom to top.
        zero_u_devices: Vertical PDUs mounted at the side.
        load_kw: Sum of the devices' design draw, kW.
    """

    name: str
    u_height: int
    devices: tuple[PlacedDevice, ...]
    zero_u_devices: tuple[PlacedDevice, ...] = ()
    load_kw: float = 0.0


@dataclass(frozen=True, slots=True)
class RackLayout:
    """Racks of a site as placed by :func:`rack_layout`.

    Attributes:
        site_name: Site label.
        racks: The racks, in order.
        unplaced_servers: Servers that did not fit in the racks available.
    """

    site_name: str
    racks: tuple[RackElevation, ...]
    unplaced_servers: int = 0


def rack_layout(site: SiteSpec, load: RackLoad, *, max_racks: int | None = None) -> RackLayout:
    """Place servers, switches and PDUs in rack units.

    Servers fill each rack from the bottom (heaviest low), rack-mounted PDUs sit at the very
    bottom, switches at the top (top-of-rack), zero-U PDUs at the side. Density is the same as
    in :func:`check_facility`. Racks beyond ``site.racks_available`` (or ``max_racks``) are
    not drawn; their servers are counted in ``unplaced_servers``.

    Args:
        site: The site (usable rack units, racks available).
        load: Servers and per-rack gear.
        max_racks: Optional cap on racks drawn.

    Returns:
        A :class:`RackLayout`.
    """
    cap = rack_capacity(site, load)
    per_rack = _planned_density(load, cap)
    usable_ru = site.usable_ru_per_rack
    fit_ru = max(0, (usable_ru - load.overhead_ru_per_rack) // load.server_ru)
    per_rack = min(per_rack, fit_ru) if fit_ru else 0
    limit = site.racks_available if max_racks is None else min(max_racks, site.racks_available)
    racks: list[RackElevation] = []
    remaining = load.server_count
    number = 0
    while remaining > 0 and len(racks) < limit and per_rack > 0:
        devices: list[PlacedDevice] = []
        zero_u: list[PlacedDevice] = []
        u = 1
        for i in range(load.pdus_per_rack):
            pdu = PlacedDevice(
                f"{load.pdu_name} {'AB'[i] if i < 2 else i + 1}",
                "pdu",
                u if load.pdu_ru else 0,
                load.pdu_ru,
                load.pdu_power_kw,
            )
            if load.pdu_ru:
                devices.append(pdu)
                u += load.pdu_ru
            else:
                zero_u.append(pdu)
        for _ in range(min(per_rack, remaining)):
            number += 1
            devices.append(
                PlacedDevice(
                    f"{load.server_name} #{number}",
                    "server",
                    u,
                    load.server_ru,
                    load.server_power_kw,
                )
            )
            u += load.server_ru
            remaining -= 1
        top = usable_ru + 1
        for i in range(load.switches_per_rack):
            top -= load.switch_ru
            devices.append(
                PlacedDevice(
                    f"{load.switch_name} {i + 1}",
                    "switch",
                    top,
                    load.switch_ru,
                    load.switch_power_kw,
                )
            )
        racks.append(
            RackElevation(
                name=f"Rack {len(racks) + 1:02d}",
                u_height=usable_ru,
                devices=tuple(sorted(devices, key=lambda d: d.position_u)),
                zero_u_devices=tuple(zero_u),
                load_kw=sum(d.power_kw for d in devices) + sum(d.power_kw for d in zero_u),
            )
        )
    return RackLayout(site_name=site.name, racks=tuple(racks), unplaced_servers=remaining)


# --- SVG elevation ----------------------------------------------------------------------------

_UNIT_HEIGHT_PX = 22  # NetBox RACK_ELEVATION_DEFAULT_UNIT_HEIGHT
_RACK_WIDTH_PX = 230
_LEGEND_WIDTH_PX = 30
_SIDE_STRIP_PX = 14
_GAP_PX = 40
_HEADER_PX = 28
_FILL = {"server": "#9fc5e8", "switch": "#b6d7a8", "pdu": "#f9cb9c"}


def rack_elevation_svg(layout: RackLayout) -> str:
    """Draw the racks of ``layout`` side by side as an SVG document (front view).

    Rack units are numbered on the left, U1 at the bottom as in NetBox; each device is a
    labelled box with a ``<title>`` tooltip giving its draw; zero-U PDUs are strips at the
    right-hand side. All text is XML-escaped.

    Args:
        layout: Result of :func:`rack_layout`.

    Returns:
        The SVG markup as a string.
    """
    col_w = _LEGEND_WIDTH_PX + _RACK_WIDTH_PX + 2 * _SIDE_STRIP_PX + _GAP_PX
    max_u = max((r.u_height for r in layout.racks), default=1)
    width = max(1, len(layout.racks)) * col_w
    height = _HEADER_PX + max_u * _UNIT_HEIGHT_PX + 10
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" class="rack-elevation" '
        f'font-family="sans-serif" font-size="11">',
        f"<title>{escape(layout.site_name)} rack elevation</title>",
    ]
    for index, rack in enumerate(layout.racks):
        x0 = index * col_w + _LEGEND_WIDTH_PX
        y0 = _HEADER_PX
        rack_h = rack.u_height * _UNIT_HEIGHT_PX
        out.append(
            f'<text x="{x0 + _RACK_WIDTH_PX / 2:.0f}" y="{y0 - 10}" text-anchor="middle" '
            f'font-weight="bold">{escape(rack.name)} ({rack.load_kw:.1f} kW)</text>'
        )
        out.append(
            f'<rect x="{x0}" y="{y0}" width="{_RACK_WIDTH_PX}" height="{rack_h}" '
            f'fill="#f5f5f5" stroke="#333" stroke-width="2"/>'
        )
        for unit in range(1, rack.u_height + 1):
            y = y0 + (rack.u_height - unit) * _UNIT_HEIGHT_PX
            out.append(
                f'<text x="{x0 - 4}" y="{y + _UNIT_HEIGHT_PX * 0.7:.1f}" text-anchor="end" '
                f'fill="#666" class="unit">{unit}</text>'
            )
            out.append(
                f'<line x1="{x0}" y1="{y}" x2="{x0 + _RACK_WIDTH_PX}" y2="{y}" stroke="#ddd"/>'
            )
        for dev in rack.devices:
            top_unit = dev.position_u + dev.height_u - 1
            y = y0 + (rack.u_height - top_unit) * _UNIT_HEIGHT_PX
            h = dev.height_u * _UNIT_HEIGHT_PX
            label = escape(dev.name)
            out.append(
                f'<g class="device {dev.role}"><title>{label} — {dev.height_u}U, '
                f"{dev.power_kw:.2f} kW</title>"
                f'<rect x="{x0 + 2}" y="{y + 1}" width="{_RACK_WIDTH_PX - 4}" height="{h - 2}" '
                f'rx="2" fill="{_FILL[dev.role]}" stroke="#555"/>'
                f'<text x="{x0 + _RACK_WIDTH_PX / 2:.0f}" y="{y + h / 2 + 4:.1f}" '
                f'text-anchor="middle">{label}</text></g>'
            )
        for j, dev in enumerate(rack.zero_u_devices):
            xs = x0 + _RACK_WIDTH_PX + 2 + j * _SIDE_STRIP_PX
            label = escape(dev.name)
            cx, cy = xs + _SIDE_STRIP_PX / 2, y0 + rack_h / 2
            out.append(
                f'<g class="device pdu zero-u"><title>{label} — 0U, {dev.power_kw:.2f} kW</title>'
                f'<rect x="{xs}" y="{y0}" width="{_SIDE_STRIP_PX - 2}" height="{rack_h}" '
                f'fill="{_FILL["pdu"]}" stroke="#555"/>'
                f'<text x="{cx:.1f}" y="{cy:.1f}" text-anchor="middle" font-size="9" '
                f'transform="rotate(-90 {cx:.1f} {cy:.1f})">{label}</text></g>'
            )
    out.append("</svg>")
    return "\n".join(out)
