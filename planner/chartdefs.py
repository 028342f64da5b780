"""Charts defined once, as data: the page draws them with Plotly (``planner.facility.charts``),
the documents with the SVG renderer (``planner.pdf.context`` → ``planner.pdf.svg``), so a
title, a label or a value can never differ between the two.

Each definition is built from stored results (a TCO run's ``results`` or a snapshot's typed
section: rows are read by key or by attribute alike).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planner.labels import DRIVER_LABELS


def _field(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, Mapping) else getattr(row, name)


@dataclass(frozen=True)
class RangeBar:
    """One driver of a tornado: the metric at the driver's low and high input."""

    label: str
    low_usd: float
    high_usd: float
    low_input: float | None = None
    high_input: float | None = None
    unit: str = ""


@dataclass(frozen=True)
class Tornado:
    """A tornado chart: bars widest first, around the base case."""

    title: str
    x_label: str
    base_usd: float
    bars: tuple[RangeBar, ...]
    currency: str = "USD"

    def value_text(self, value_usd: float) -> str:
        """How both renderings print a bar end (whole units, thousands separated)."""
        return f"{value_usd:,.0f} {self.currency}"


def tco_tornado(rows: Sequence[Any], currency: str = "USD") -> Tornado | None:
    """The TCO sensitivity tornado (``planner.engine.tco.sensitivity``), ``None`` without bars.

    The metric is the NPV saved by owning against cloud on-demand (positive: owning saves).
    """
    if not rows:
        return None
    base = float(_field(rows[0], "base_value_usd"))

    def optional(row: Any, name: str) -> Any:
        try:
            return _field(row, name)
        except (KeyError, AttributeError):
            return None

    bars = tuple(
        RangeBar(
            label=DRIVER_LABELS.get(_field(r, "driver"), _field(r, "driver")),
            low_usd=float(_field(r, "low_value_usd")),
            high_usd=float(_field(r, "high_value_usd")),
            low_input=optional(r, "low_input"),
            high_input=optional(r, "high_input"),
            unit=optional(r, "unit") or "",
        )
        for r in rows
    )
    return Tornado(
        title=f"Sensitivity: NPV saved by owning vs on-demand (base {base:,.0f} {currency})",
        x_label=f"NPV saved by owning ({currency})",
        base_usd=base,
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
    """One option's cumulative cost by month, with its break-even month against on-demand."""

    key: str
    label: str
    kind: str
    values_usd: tuple[float, ...]
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
            values_usd=tuple(float(v) for v in _field(o, "cumulative_usd") or ()),
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
    """P10, P50 and P90 of one option's cumulative cost by month."""

    label: str
    p10_usd: tuple[float, ...]
    p50_usd: tuple[float, ...]
    p90_usd: tuple[float, ...]


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
    if not mc.get("owned_p50_usd"):
        return None
    site_key = mc.get("site_key")
    site = next((_field(o, "label") for o in _options(tco) if _field(o, "key") == site_key), "site")
    bands = tuple(
        Band(
            label=label,
            p10_usd=tuple(float(v) for v in mc[f"{prefix}_p10_usd"]),
            p50_usd=tuple(float(v) for v in mc[f"{prefix}_p50_usd"]),
            p90_usd=tuple(float(v) for v in mc[f"{prefix}_p90_usd"]),
        )
        for prefix, label in (("cloud", "Cloud on-demand"), ("owned", f"Owned at {site}"))
        if mc.get(f"{prefix}_p50_usd")
    )
    n = len(mc["owned_p50_usd"])
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
