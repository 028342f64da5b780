"""Go-live date by the critical path method over lead times, transit, customs, install, burn-in.

Contract. :func:`schedule` runs the forward and backward passes of CPM (Kelley & Walker 1959;
PMBOK "critical path method") over a task graph in **calendar days**:

* forward:  ``ES = max(project start, earliest_start, EF of every predecessor)``,
  ``EF = ES + duration``;
* backward: ``LF = min(LS of every successor)`` (the project finish for tasks without
  successors), ``LS = LF − duration``; ``slack = LS − ES``; critical ⇔ slack = 0.

Dates are ``datetime.date``; a task "finishes" on ``start + duration_days`` and a successor may
start that same day (finish-to-start, no lag). A zero-duration task is a milestone (power ready,
go-live). Actual dates override the plan: ``actual_start`` replaces ES, ``actual_finish``
replaces EF.

:func:`plan_timeline` builds the task graph of a hardware delivery (per item: lead time →
transit → customs; then installation, which also waits for facility power, → burn-in →
go-live). :func:`assess_slips` compares a baseline with actuals and says which slipped tasks
moved go-live and which were absorbed by slack. :func:`gantt_rows` gives chart-ready rows.

No Django import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Literal

from planner.engine.errors import EngineInputError

__all__ = [
    "CUSTOMS_CLEARANCE_DAYS",
    "COUNTRY_REGION",
    "LANE_TRANSIT_DAYS",
    "CriticalPathError",
    "GanttRow",
    "Schedule",
    "ScheduledTask",
    "SlipItem",
    "SlipReport",
    "Task",
    "TimelineItem",
    "TransitDefault",
    "assess_slips",
    "gantt_rows",
    "plan_timeline",
    "SiteReadiness",
    "site_task_key",
    "schedule",
]

TaskKind = Literal[
    "lead_time", "transit", "customs", "install", "burn_in", "power_ready", "go_live", "other"
]


class CriticalPathError(EngineInputError):
    """Invalid task graph or timeline input; the message is one clear sentence."""


@dataclass(frozen=True, slots=True)
class Task:
    """One activity of the delivery plan.

    Attributes:
        key: Unique key.
        name: Display name.
        duration_days: Planned duration in calendar days (0 = milestone).
        depends_on: Keys of finish-to-start predecessors.
        earliest_start: Date before which the task cannot start (order date, power-ready date).
        actual_start: Actual start, when known.
        actual_finish: Actual finish, when known.
        kind: lead_time, transit, customs, install, burn_in, power_ready, go_live or other.
    """

    key: str
    name: str
    duration_days: int
    depends_on: tuple[str, ...] = ()
    earliest_start: date | None = None
    actual_start: date | None = None
    actual_finish: date | None = None
    kind: TaskKind = "other"


@dataclass(frozen=True, slots=True)
class ScheduledTask:
    """A task with its CPM dates; slack in calendar days."""

    task: Task
    earliest_start: date
    earliest_finish: date
    latest_start: date
    latest_finish: date
    slack_days: int

    @property
    def critical(self) -> bool:
        """True when the task has no slack."""
        return self.slack_days == 0


@dataclass(frozen=True, slots=True)
class Schedule:
    """Result of :func:`schedule`.

    Attributes:
        tasks: Scheduled tasks in topological order.
        go_live: Project finish (latest earliest-finish).
        critical_path: Keys of one driving chain of critical tasks, first to last.
    """

    tasks: tuple[ScheduledTask, ...]
    go_live: date
    critical_path: tuple[str, ...]

    def get(self, key: str) -> ScheduledTask:
        """The scheduled task with ``key``."""
        for t in self.tasks:
            if t.task.key == key:
                return t
        raise KeyError(key)


def _topological(tasks: Sequence[Task]) -> list[Task]:
    by_key: dict[str, Task] = {}
    for t in tasks:
        if t.key in by_key:
            raise CriticalPathError(f"Task key {t.key!r} is used twice.")
        if t.duration_days < 0:
            raise CriticalPathError(f"Task {t.key!r} has a negative duration.")
        if t.actual_start and t.actual_finish and t.actual_finish < t.actual_start:
            raise CriticalPathError(f"Task {t.key!r} finishes before it starts.")
        by_key[t.key] = t
    for t in tasks:
        for dep in t.depends_on:
            if dep not in by_key:
                raise CriticalPathError(f"Task {t.key!r} depends on unknown task {dep!r}.")
    # Kahn's algorithm, keeping the input order among ready tasks (stable output).
    indegree = {t.key: len(set(t.depends_on)) for t in tasks}
    successors: dict[str, list[str]] = {t.key: [] for t in tasks}
    for t in tasks:
        for dep in set(t.depends_on):
            successors[dep].append(t.key)
    ready = [t.key for t in tasks if indegree[t.key] == 0]
    order: list[Task] = []
    while ready:
        key = ready.pop(0)
        order.append(by_key[key])
        for succ in successors[key]:
            indegree[succ] -= 1
            if indegree[succ] == 0:
                ready.append(succ)
    if len(order) != len(tasks):
        stuck = sorted(k for k, n in indegree.items() if n > 0)
        raise CriticalPathError(f"Task graph has a cycle through {', '.join(stuck)}.")
    return order


def schedule(tasks: Sequence[Task], project_start: date) -> Schedule:
    """Forward and backward CPM passes.

    Args:
        tasks: The task graph.
        project_start: No task starts before this date (the order date).

    Returns:
        Scheduled tasks, go-live and the critical path.

    Raises:
        CriticalPathError: Empty graph, duplicate keys, unknown predecessors, cycles, negative
            durations, or an actual finish before its actual start.
    """
    if not tasks:
        raise CriticalPathError("Cannot schedule an empty task list.")
    order = _topological(tasks)
    es: dict[str, date] = {}
    ef: dict[str, date] = {}
    for t in order:
        start = max([project_start, *(ef[d] for d in t.depends_on)])
        if t.earliest_start and t.earliest_start > start:
            start = t.earliest_start
        if t.actual_start:
            start = t.actual_start  # what happened beats what was planned
        finish = t.actual_finish or start + timedelta(days=t.duration_days)
        es[t.key], ef[t.key] = start, finish
    finish_date = max(ef.values())
    successors: dict[str, list[str]] = {t.key: [] for t in order}
    for t in order:
        for dep in set(t.depends_on):
            successors[dep].append(t.key)
    ls: dict[str, date] = {}
    lf: dict[str, date] = {}
    for t in reversed(order):
        late_finish = min((ls[s] for s in successors[t.key]), default=finish_date)
        lf[t.key] = late_finish
        ls[t.key] = late_finish - (ef[t.key] - es[t.key])
    scheduled = tuple(
        ScheduledTask(t, es[t.key], ef[t.key], ls[t.key], lf[t.key], (ls[t.key] - es[t.key]).days)
        for t in order
    )
    return Schedule(scheduled, finish_date, _critical_chain(order, es, ef, ls, finish_date))


def _critical_chain(order, es, ef, ls, finish_date) -> tuple[str, ...]:
    """Walk back from the last critical task through the predecessor that drives each start."""
    by_key = {t.key: t for t in order}
    ends = [t.key for t in order if ef[t.key] == finish_date and ls[t.key] == es[t.key]]
    if not ends:
        return ()
    chain = [ends[-1]]
    while True:
        t = by_key[chain[-1]]
        drivers = [d for d in t.depends_on if ef[d] == es[t.key] and ls[d] == es[d]]
        if not drivers:
            break
        chain.append(drivers[0])
    return tuple(reversed(chain))


# ---------------------------------------------------------------------------------------------
# Delivery timeline
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TransitDefault:
    """Door-to-door transit for a lane and mode, in calendar days, with its source."""

    days: int
    low: int
    high: int
    source: str


_SRC_CN_FREIGHT = (
    "chinatopfreight.com transit guide (Sep 2025): sea Qingdao→Rotterdam 28–36 d, "
    "Shanghai→Los Angeles 18–22 d, Shenzhen→New York 30–35 d; air SZX→FRA 4–6 d, PVG→LAX 3–5 d, "
    "PEK→JFK 5–7 d [tertiary]"
)
_SRC_56OK_SEA = (
    "56ok.com ocean transit (China→NW Europe door-to-door 35–45 d; →US West Coast 20–25 d; "
    "→Southeast Asia 7–12 d) [tertiary]"
)
_SRC_56OK_AIR = (
    "56ok.com air transit (China→Europe 7–9 d door-to-door; short-haul Asia 3–5 d) [tertiary]"
)
_SRC_TRANSATLANTIC = (
    "zhongzhentrading.com 2024 benchmarks: Europe↔US East Coast sea 12–16 d, air 1–3 d [tertiary]"
)

# Planner defaults by (origin region, destination region, mode); edit per forwarder quote.
LANE_TRANSIT_DAYS: dict[tuple[str, str, str], TransitDefault] = {
    ("ASIA", "EUROPE", "sea"): TransitDefault(35, 28, 45, f"{_SRC_CN_FREIGHT}; {_SRC_56OK_SEA}"),
    ("ASIA", "EUROPE", "air"): TransitDefault(6, 4, 9, f"{_SRC_CN_FREIGHT}; {_SRC_56OK_AIR}"),
    ("ASIA", "NORTH_AMERICA", "sea"): TransitDefault(28, 18, 40, f"{_SRC_CN_FREIGHT}; {_SRC_56OK_SEA}"),
    ("ASIA", "NORTH_AMERICA", "air"): TransitDefault(5, 3, 7, _SRC_CN_FREIGHT),
    ("ASIA", "ASIA", "sea"): TransitDefault(10, 5, 12, _SRC_56OK_SEA),
    ("ASIA", "ASIA", "air"): TransitDefault(4, 3, 5, _SRC_56OK_AIR),
    ("EUROPE", "NORTH_AMERICA", "sea"): TransitDefault(14, 12, 16, _SRC_TRANSATLANTIC),
    ("EUROPE", "NORTH_AMERICA", "air"): TransitDefault(3, 1, 3, _SRC_TRANSATLANTIC),
    ("NORTH_AMERICA", "EUROPE", "sea"): TransitDefault(14, 10, 16, _SRC_TRANSATLANTIC),
    ("NORTH_AMERICA", "EUROPE", "air"): TransitDefault(3, 1, 3, _SRC_TRANSATLANTIC),
}  # fmt: skip

COUNTRY_REGION: dict[str, str] = {
    **dict.fromkeys(["CN", "TW", "HK", "JP", "KR", "SG", "MY", "TH", "VN", "PH", "ID"], "ASIA"),
    **dict.fromkeys(
        (
            "DE",
            "FR",
            "NL",
            "IE",
            "BE",
            "LU",
            "AT",
            "IT",
            "ES",
            "PT",
            "DK",
            "SE",
            "FI",
            "PL",
            "CZ",
            "HU",
            "GB",
            "CH",
            "NO",
        ),
        "EUROPE",
    ),  # fmt: skip
    **dict.fromkeys(["US", "CA", "MX"], "NORTH_AMERICA"),
    "IN": "SOUTH_ASIA",
}

# Customs clearance at destination, calendar days. Planner assumption (no dated source in the
# reference store): 3 days for a prepared, broker-filed entry; replace with the broker's figure.
CUSTOMS_CLEARANCE_DAYS: dict[str, int] = {}
DEFAULT_CUSTOMS_CLEARANCE_DAYS = 3


@dataclass(frozen=True, slots=True)
class TimelineItem:
    """One purchased item's path to site.

    Attributes:
        key: Unique key (e.g. BOM part key).
        name: Display name.
        lead_time_days: Supplier lead time from order to ready for pickup (days).
        origin_country: ISO alpha-2 country it ships from.
        destination_country: ISO alpha-2 country of the site.
        mode: ``"air"`` or ``"sea"``.
        transit_days: Override of the lane default (days); required for lanes without one.
        customs_days: Override of the destination's clearance days; 0 for domestic goods.
        site: Key of the site the item is delivered to; ``""`` = needed by every site.
    """

    key: str
    name: str
    lead_time_days: int
    origin_country: str
    destination_country: str
    mode: Literal["air", "sea"] = "air"
    transit_days: int | None = None
    customs_days: int | None = None
    site: str = ""


@dataclass(frozen=True, slots=True)
class SiteReadiness:
    """A site of the plan in the timeline: its name and the day its power is ready."""

    key: str
    name: str
    power_ready_date: date


def site_task_key(kind: str, site: str) -> str:
    """Key of a site's install/burn-in/power-ready task (``kind`` alone for a one-site plan)."""
    return f"{kind}:{site}" if site else kind


def _transit_days(item: TimelineItem, lanes: Mapping[tuple[str, str, str], TransitDefault]) -> int:
    if item.transit_days is not None:
        return item.transit_days
    origin = COUNTRY_REGION.get(item.origin_country)
    dest = COUNTRY_REGION.get(item.destination_country)
    lane = lanes.get((origin or "", dest or "", item.mode))
    if lane is None:
        raise CriticalPathError(
            f"No {item.mode} transit default from {item.origin_country} to "
            f"{item.destination_country}; give transit_days for {item.key!r}."
        )
    return lane.days


def plan_timeline(
    order_date: date,
    items: Sequence[TimelineItem],
    *,
    installation_days: int,
    burn_in_days: int,
    power_ready_date: date,
    lanes: Mapping[tuple[str, str, str], TransitDefault] | None = None,
    customs_clearance_days: Mapping[str, int] | None = None,
    sites: Sequence[SiteReadiness] = (),
) -> tuple[Task, ...]:
    """Task graph from order to go-live.

    With two or more ``sites`` each site has its own shipment set, power-ready milestone,
    installation and burn-in (``install:<site>`` after that site's items, the items for every
    site and its power date); ``go_live`` waits for the last site's burn-in, so go-live is the
    latest site ready. With fewer sites the one graph below is used (``power_ready_date``).

    Per item: ``<key>:lead_time`` (from the order date) → ``<key>:transit`` →
    ``<key>:customs``. Then ``install`` after every item's customs and after ``power_ready``
    (a milestone on the facility's power-ready date), → ``burn_in`` → ``go_live`` (milestone).
    Domestic items (origin = destination) get no customs days unless told otherwise.

    Args:
        order_date: Date the purchase orders go out.
        items: Purchased items.
        installation_days: Racking and cabling, calendar days.
        burn_in_days: Acceptance burn-in, calendar days.
        power_ready_date: Date the facility's power (and cooling) is ready.
        lanes: Transit defaults (default :data:`LANE_TRANSIT_DAYS`).
        customs_clearance_days: Clearance days per destination (default 3 days).

    Returns:
        Tasks for :func:`schedule`.

    Raises:
        CriticalPathError: No items, negative durations, duplicate keys, or a lane without a
            default and no ``transit_days``.
    """
    if not items:
        raise CriticalPathError("A timeline needs at least one purchased item.")
    if installation_days < 0 or burn_in_days < 0:
        raise CriticalPathError("Installation and burn-in days cannot be negative.")
    lanes = LANE_TRANSIT_DAYS if lanes is None else lanes
    clearance = {**CUSTOMS_CLEARANCE_DAYS, **(customs_clearance_days or {})}
    tasks: list[Task] = []
    for item in items:
        if item.lead_time_days < 0:
            raise CriticalPathError(f"Item {item.key!r} has a negative lead time.")
        domestic = item.origin_country == item.destination_country
        transit = item.transit_days if domestic and item.transit_days is not None else None
        transit_days = (transit or 0) if domestic else _transit_days(item, lanes)
        if item.customs_days is not None:
            customs_days = item.customs_days
        elif domestic:
            customs_days = 0
        else:
            customs_days = clearance.get(item.destination_country, DEFAULT_CUSTOMS_CLEARANCE_DAYS)
        k = item.key
        tasks += [
            Task(f"{k}:lead_time", f"{item.name}: supplier lead time", item.lead_time_days,
                 earliest_start=order_date, kind="lead_time"),
            Task(f"{k}:transit", f"{item.name}: {item.mode} transit", transit_days,
                 (f"{k}:lead_time",), kind="transit"),
            Task(f"{k}:customs", f"{item.name}: customs clearance", customs_days,
                 (f"{k}:transit",), kind="customs"),
        ]  # fmt: skip
    if len(sites) >= 2:
        return (*tasks, *_site_tasks(items, sites, installation_days, burn_in_days))
    customs_keys = tuple(f"{i.key}:customs" for i in items)
    tasks += [
        Task("power_ready", "Facility power ready", 0, earliest_start=power_ready_date,
             kind="power_ready"),
        Task("install", "Installation", installation_days, (*customs_keys, "power_ready"),
             kind="install"),
        Task("burn_in", "Burn-in", burn_in_days, ("install",), kind="burn_in"),
        Task("go_live", "Go-live", 0, ("burn_in",), kind="go_live"),
    ]  # fmt: skip
    return tuple(tasks)


def _site_tasks(
    items: Sequence[TimelineItem],
    sites: Sequence[SiteReadiness],
    installation_days: int,
    burn_in_days: int,
) -> list[Task]:
    """Each site's power-ready → install → burn-in, and the go-live after the last site."""
    known = {s.key for s in sites}
    unknown = sorted({i.site for i in items if i.site and i.site not in known})
    if unknown:
        raise CriticalPathError(f"Items are delivered to sites not in the plan: {unknown}.")
    shared = tuple(f"{i.key}:customs" for i in items if not i.site)
    tasks: list[Task] = []
    for site in sites:
        own = tuple(f"{i.key}:customs" for i in items if i.site == site.key)
        ready, install, burn_in = (
            site_task_key("power_ready", site.key),
            site_task_key("install", site.key),
            site_task_key("burn_in", site.key),
        )
        tasks += [
            Task(ready, f"{site.name}: facility power ready", 0,
                 earliest_start=site.power_ready_date, kind="power_ready"),
            Task(install, f"{site.name}: installation", installation_days,
                 (*own, *shared, ready), kind="install"),
            Task(burn_in, f"{site.name}: burn-in", burn_in_days, (install,), kind="burn_in"),
        ]  # fmt: skip
    tasks.append(
        Task("go_live", "Go-live (last site ready)", 0,
             tuple(site_task_key("burn_in", s.key) for s in sites), kind="go_live")
    )  # fmt: skip
    return tasks


# ---------------------------------------------------------------------------------------------
# Slips
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SlipItem:
    """A task whose actual dates are later than the baseline.

    Attributes:
        key: Task key.
        name: Task name.
        slip_days: Days later than planned (the larger of start and finish slip).
        baseline_slack_days: Slack the task had in the baseline.
        go_live_delay_days: Days this slip alone moves go-live (0 = absorbed by slack).
        on_critical_path: True when the task is critical after the slips.
    """

    key: str
    name: str
    slip_days: int
    baseline_slack_days: int
    go_live_delay_days: int
    on_critical_path: bool


@dataclass(frozen=True, slots=True)
class SlipReport:
    """Baseline against actuals.

    Attributes:
        baseline_go_live: Go-live without actuals.
        new_go_live: Go-live with every actual applied.
        delay_days: ``new_go_live − baseline_go_live``.
        responsible: Slipped tasks that move go-live (on the critical path after the slips).
        absorbed: Slipped tasks whose slip the slack absorbs.
        schedule: The recomputed schedule.
    """

    baseline_go_live: date
    new_go_live: date
    delay_days: int
    responsible: tuple[SlipItem, ...]
    absorbed: tuple[SlipItem, ...]
    schedule: Schedule


def _without_actuals(t: Task) -> Task:
    return replace(t, actual_start=None, actual_finish=None)


def assess_slips(tasks: Sequence[Task], project_start: date) -> SlipReport:
    """Recompute go-live with actual dates and say which slips moved it.

    The baseline is the same graph without actuals. A task has slipped when its actual start or
    finish is later than its baseline early start or finish. Each slipped task is also scheduled
    alone (only its own actuals) to measure how far it alone moves go-live.

    Args:
        tasks: Tasks with whatever actual dates are known.
        project_start: Order date.

    Returns:
        Baseline and new go-live, the responsible slips and the absorbed ones.
    """
    plain = [_without_actuals(t) for t in tasks]
    baseline = schedule(plain, project_start)
    current = schedule(tasks, project_start)
    responsible: list[SlipItem] = []
    absorbed: list[SlipItem] = []
    for t in tasks:
        if t.actual_start is None and t.actual_finish is None:
            continue
        base = baseline.get(t.key)
        slip = 0
        if t.actual_start:
            slip = max(slip, (t.actual_start - base.earliest_start).days)
        if t.actual_finish:
            slip = max(slip, (t.actual_finish - base.earliest_finish).days)
        if slip <= 0:
            continue
        alone = schedule([t if p.key == t.key else p for p in plain], project_start)
        item = SlipItem(
            t.key,
            t.name,
            slip,
            base.slack_days,
            (alone.go_live - baseline.go_live).days,
            current.get(t.key).critical,
        )
        # Responsible: go-live moved and the slipped task is on the (new) critical path.
        moves = current.go_live > baseline.go_live and item.on_critical_path
        (responsible if moves else absorbed).append(item)
    return SlipReport(
        baseline.go_live,
        current.go_live,
        (current.go_live - baseline.go_live).days,
        tuple(responsible),
        tuple(absorbed),
        current,
    )


@dataclass(frozen=True, slots=True)
class GanttRow:
    """One bar of a Gantt chart (finish = start + duration; milestones have start = finish)."""

    key: str
    name: str
    kind: str
    start: date
    finish: date
    critical: bool
    slack_days: int


def gantt_rows(result: Schedule) -> tuple[GanttRow, ...]:
    """Chart-ready rows of a schedule, in topological order."""
    return tuple(
        GanttRow(
            s.task.key,
            s.task.name,
            s.task.kind,
            s.earliest_start,
            s.earliest_finish,
            s.critical,
            s.slack_days,
        )
        for s in result.tasks
    )
