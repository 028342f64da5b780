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
