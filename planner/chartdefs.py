"""Charts defined once, as data: the page draws them with Plotly (``planner.facility.charts``),
the documents with the SVG renderer (``planner.pdf.context`` → ``planner.pdf.svg``), so a
title, a label or a value can never differ between the two.

Each definition is built from stored results (a TCO run's ``results`` or a snapshot's typed
section: rows are read by key or by attribute alike).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from planner.labels import DRIVER_LABELS


def _field(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, Mapping) else getattr(row, name)


@dataclass(frozen=True)
class RangeBar:
    """One driver of a tornado: the metric at the driver's low and high input (amounts in the
    chart's currency)."""

    label: str
    low_amount: float
    high_amount: float
    low_input: float | None = None
    high_input: float | None = None
    unit: str = ""


@dataclass(frozen=True)
class Tornado:
    """A tornado chart: bars widest first, around the base case."""

    title: str
    x_label: str
    base_amount: float
    bars: tuple[RangeBar, ...]
    currency: str

    def value_text(self, amount: float) -> str:
        """How both renderings print a bar end (whole units, thousands separated)."""
        return f"{amount:,.0f} {self.currency}"


def tco_tornado(rows: Sequence[Any], currency: str) -> Tornado | None:
    """The TCO sensitivity tornado (``planner.engine.tco.sensitivity``), ``None`` without bars.

    The metric is the NPV saved by owning against cloud on-demand (positive: owning saves),
    in ``currency`` (the run's).
    """
    if not rows:
        return None
    base = float(_field(rows[0], "base_value_amount"))

    def optional(row: Any, name: str) -> Any:
        try:
            return _field(row, name)
        except (KeyError, AttributeError):
            return None

    bars = tuple(
        RangeBar(
            label=DRIVER_LABELS.get(_field(r, "driver"), _field(r, "driver")),
            low_amount=float(_field(r, "low_value_amount")),
            high_amount=float(_field(r, "high_value_amount")),
            low_input=optional(r, "low_input"),
            high_input=optional(r, "high_input"),
            unit=optional(r, "unit") or "",
        )
        for r in rows
    )
    return Tornado(
        title=f"Sensitivity: NPV saved by owning vs on-demand (base {base:,.0f} {currency})",
        x_label=f"NPV saved by owning ({currency})",
        base_amount=base,
        bars=bars,
        currency=currency,
    )


def _options(tco: Any) -> list[Any]:
    return list(_field(tco, "options") or [])


def _optional(row: Any, name: str) -> Any:
    try:
        return _field(row, name)
    except (KeyError, AttributeError):
        return None


# --- Cumulative cost per option ------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One option's cumulative cost by month (in the chart's currency), with its break-even
    month against on-demand."""

    key: str
    label: str
    kind: str
    values_amount: tuple[float, ...]
    break_even_month: int | None = None


@dataclass(frozen=True)
class LineChart:
    title: str
    x_label: str
    y_label: str
    x: tuple[int | str, ...]  # the months as stored (Plotly draws numbers; the SVG labels them)
    lines: tuple[Line, ...]


def tco_cumulative(tco: Any) -> LineChart | None:
    """The cumulative cash cost of every TCO option (``planner.engine.tco``), ``None`` without
    options. ``tco``: a run's ``results`` or a snapshot's TCO section."""
    options = _options(tco)
    if not options:
        return None
    lines = tuple(
        Line(
            key=_field(o, "key"),
            label=_field(o, "label"),
            kind=_optional(o, "kind") or "",
            values_amount=tuple(float(v) for v in _field(o, "cumulative_amount") or ()),
            break_even_month=_optional(o, "break_even_month"),
        )
        for o in options
    )
    currency = _optional(tco, "currency") or "USD"
    return LineChart(
        title=f"Cumulative cost by option ({currency})",
        x_label="Month",
        y_label=f"Cumulative cost ({currency})",
        x=tuple(_field(tco, "months") or ()),
        lines=lines,
    )


# --- Monte Carlo bands -------------------------------------------------------------------------


@dataclass(frozen=True)
class Band:
    """P10, P50 and P90 of one option's cumulative cost by month (in the chart's currency)."""

    label: str
    p10_amount: tuple[float, ...]
    p50_amount: tuple[float, ...]
    p90_amount: tuple[float, ...]


@dataclass(frozen=True)
class BandChart:
    title: str
    x_label: str
    y_label: str
    x: tuple[int | str, ...]
    bands: tuple[Band, ...]


def tco_monte_carlo(tco: Any) -> BandChart | None:
    """The Monte Carlo fan of cumulative cost, cloud on-demand against owning at the run's
    site (``planner.engine.tco.monte_carlo``); ``None`` without a Monte Carlo result."""
    mc = _optional(tco, "monte_carlo") or {}
    if not mc.get("owned_p50_amount"):
        return None
    site_key = mc.get("site_key")
    site = next((_field(o, "label") for o in _options(tco) if _field(o, "key") == site_key), "site")
    bands = tuple(
        Band(
            label=label,
            p10_amount=tuple(float(v) for v in mc[f"{prefix}_p10_amount"]),
            p50_amount=tuple(float(v) for v in mc[f"{prefix}_p50_amount"]),
            p90_amount=tuple(float(v) for v in mc[f"{prefix}_p90_amount"]),
        )
        for prefix, label in (("cloud", "Cloud on-demand"), ("owned", f"Owned at {site}"))
        if mc.get(f"{prefix}_p50_amount")
    )
    n = len(mc["owned_p50_amount"])
    currency = _optional(tco, "currency") or "USD"
    months = list(_optional(tco, "months") or ())
    if mc.get("paths") and mc.get("probability_owned_cheaper") is not None:
        title = (
            f"Monte Carlo, {mc['paths']:,} paths: owning is cheaper in "
            f"{mc['probability_owned_cheaper']:.0%} of them"
        )
    else:
        title = f"Cumulative cost, Monte Carlo P10/P50/P90 ({currency})"
    return BandChart(
        title=title,
        x_label="Month",
        y_label=f"Cumulative cost ({currency})",
        x=tuple(months if len(months) == n else range(1, n + 1)),
        bands=bands,
    )


# --- Timeline Gantt ----------------------------------------------------------------------------


# Each stage of a delivery: how both renderings name and colour its segment.
GANTT_STAGES = {
    "lead_time": ("Supplier lead time", "#1f5f8b"),
    "transit": ("Transit", "#d9822b"),
    "customs": ("Customs", "#8e5ea2"),
    "install": ("Installation", "#3a8f5c"),
    "burn_in": ("Burn-in", "#b7950b"),
}


@dataclass(frozen=True)
class GanttSegment:
    """One stage of a row: from the earliest start to the latest finish of its tasks (for a
    row of several items, from where the previous stage ended)."""

    kind: str
    stage: str  # e.g. "Supplier lead time"
    start: date
    finish: date
    critical: bool
    slack_days: int = 0
    task_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class GanttTask:
    """One row: a purchase order (or the parts not ordered yet, or a site's installation and
    burn-in) from its first stage's start to its last stage's finish, its stages as segments."""

    key: str
    label: str
    site: str
    start: date
    finish: date
    critical: bool
    slack_days: int = 0
    segments: tuple[GanttSegment, ...] = ()


@dataclass(frozen=True)
class Milestone:
    """A dated event drawn on the axis: go-live, a site's power ready, the target, a baseline."""

    kind: str  # go_live, power_ready, target, baseline
    label: str
    when: date


@dataclass(frozen=True)
class Gantt:
    title: str
    tasks: tuple[GanttTask, ...]
    milestones: tuple[Milestone, ...]
    go_live: date | None


def _day(value: Any) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


_STEP_ORDER = {"lead_time": 0, "transit": 1, "customs": 2, "install": 3, "burn_in": 4}
_SITE_RANK = {"lead_time": 0, "transit": 0, "customs": 0, "install": 1, "burn_in": 2}
_SITE_WORK = ("install", "burn_in")


def _row_key(key: str, kind: str, site: str) -> str:
    """The row a task is drawn on: its purchase order (or other delivered item), the parts
    not ordered yet at its site together, or its site's installation and burn-in."""
    item = key.split(":")[0]
    if kind in _SITE_WORK:
        return f"site-work@{site}"
    if item.startswith("line-"):
        return f"to-order@{site}"
    return item


def _row_label(row_key: str, names: list[str], site: str, items: int) -> str:
    """A row's label in full: the item's name without its stage ("PO-001 to Ashburn …")."""
    heads = list(dict.fromkeys(name.rpartition(": ")[0] for name in names))
    if row_key.startswith("site-work@"):
        label = (f"{heads[0]}: " if heads[0] else "") + "installation and burn-in"
        label = label[0].upper() + label[1:]
    elif row_key.startswith("to-order@"):
        label = f"Parts not ordered yet ({items} item{'s' if items != 1 else ''})"
        if site:
            label += f" for {site}"
    else:
        label = heads[0] or names[0]
    return f"[{site}] {label}" if site and site not in label else label


def _segments(rows: list[Any], keys: list[str], kinds: list[str], picks: list[int]):
    """The stages of one row, in order: each from the earliest start of its tasks (not before
    the previous stage's end) to their latest finish."""
    segments: list[GanttSegment] = []
    for kind in sorted({kinds[i] for i in picks}, key=lambda k: _STEP_ORDER.get(k, 9)):
        mine = [i for i in picks if kinds[i] == kind]
        start = min(_day(_field(rows[i], "start")) for i in mine)
        finish = max(_day(_field(rows[i], "finish")) for i in mine)
        if segments:
            start = min(max(start, segments[-1].finish), finish)
        label = GANTT_STAGES.get(kind, (kind.replace("_", " ").capitalize(), ""))[0]
        if len(mine) == 1 and kind == "transit":  # "air transit", "sea transit"
            label = str(_field(rows[mine[0]], "name")).rpartition(": ")[2].capitalize()
        segments.append(
            GanttSegment(
                kind=kind, stage=label, start=start, finish=finish,
                critical=any(bool(_field(rows[i], "critical")) for i in mine),
                slack_days=min(int(_optional(rows[i], "slack_days") or 0) for i in mine),
                task_keys=tuple(keys[i] for i in mine),
            )
        )  # fmt: skip
    return tuple(segments)


def timeline_gantt(timeline: Any) -> Gantt | None:
    """The delivery Gantt (``planner.engine.critical_path``) from a timeline section (the
    snapshot's ``timeline``, or ``TimelineReport.section()`` on the page); ``None`` without
    tasks. One row per purchase order (its lead time, transit and customs as segments), one for
    each site's parts not ordered yet, and one for each site's installation and burn-in; rows
    grouped by site; milestones are go-live, each site's power ready, the target go-live and,
    when it differs, the go-live before slips."""
    rows = list(_optional(timeline, "tasks") or ())
    if not rows:
        return None
    kinds = [_optional(r, "kind") or "" for r in rows]
    keys = [_optional(r, "key") or f"task-{i}" for i, r in enumerate(rows)]
    sites = [_optional(r, "site") or "" for r in rows]
    site_order = {name: i for i, name in enumerate(dict.fromkeys(s for s in sites if s))}
    bars = [i for i, kind in enumerate(kinds) if kind not in ("power_ready", "go_live")]
    members: dict[str, list[int]] = {}
    for i in bars:
        members.setdefault(_row_key(keys[i], kinds[i], sites[i]), []).append(i)
    first_seen = {row: n for n, row in enumerate(members)}
    order = sorted(
        members,
        key=lambda row: (
            site_order.get(sites[members[row][0]], -1),
            _SITE_RANK.get(kinds[members[row][0]], 0),
            row.startswith("to-order@"),  # the orders placed, then the parts still to order
            first_seen[row],
        ),
    )
    tasks = []
    for row in order:
        picks = members[row]
        site = sites[picks[0]]
        items = len({keys[i].split(":")[0] for i in picks})
        segments = _segments(rows, keys, kinds, picks)
        tasks.append(
            GanttTask(
                key=row, label=_row_label(row, [str(_field(rows[i], "name")) for i in picks],
                                          site, items),
                site=site, start=min(s.start for s in segments),
                finish=max(s.finish for s in segments),
                critical=any(s.critical for s in segments),
                slack_days=min(s.slack_days for s in segments), segments=segments,
            )
        )  # fmt: skip
    milestones = []
    for i, kind in enumerate(kinds):
        if kind == "power_ready":
            when = _day(_field(rows[i], "start"))
            label = f"Power ready: {sites[i]}" if sites[i] else "Facility power ready"
            milestones.append(Milestone("power_ready", label, when))
    go_live = _day(_optional(timeline, "go_live"))
    if go_live is None:
        go_live = next((_day(_field(r, "start")) for r, k in zip(rows, kinds, strict=True) if k == "go_live"),
                       None)  # fmt: skip
    if go_live:
        milestones.append(Milestone("go_live", "Go-live", go_live))
    baseline = _day(_optional(timeline, "baseline_go_live"))
    if baseline and baseline != go_live:
        milestones.append(Milestone("baseline", "Go-live before slips", baseline))
    target = _day(_optional(timeline, "target_go_live"))
    if target:
        milestones.append(Milestone("target", "Target", target))
    return Gantt(
        title="Timeline to go-live" + (f" ({go_live:%Y-%m-%d})" if go_live else ""),
        tasks=tuple(tasks),
        milestones=tuple(milestones),
        go_live=go_live,
    )
