"""Plotly figures of a stored TCO run, as JSON for plotly.js (rendered by static/js/charts.js).

Built from the run's stored results (money as decimal strings, converted to float here only
for drawing): cumulative cost per option with break-even marked, the monthly cost stack of
one option by line item, the sensitivity tornado and the Monte Carlo fan (P10/P50/P90).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import plotly.graph_objects as go

from planner import chartdefs
from planner.charts import FONT, figure_json
from planner.computed import computed_across_requests
from planner.engine.tco import DRIVER_UNITS
from planner.labels import DRIVER_LABELS, LINE_LABELS, count

COLOURS = {
    "cloud_on_demand": "#dc2626",
    "cloud_committed": "#f97316",
    "cloud_spot_mix": "#eab308",
    "owned": "#2563eb",
    "colocation": "#059669",
    "hybrid": "#7c3aed",
}


def _cur(results: dict[str, Any]) -> str:
    """The currency the run's amounts are in (the plan's; older runs without one are USD and
    say so once read: :func:`planner.facility.tco_results.upgrade_tco_results`)."""
    return results.get("currency") or "USD"


def _floats(values) -> list[float]:
    return [float(v) for v in values]


def _layout(figure: go.Figure, title: str, **extra: Any) -> str:
    layout = {
        "title": {"text": title, "x": 0.02},
        "font": FONT,
        "height": 420,
        "margin": {"l": 70, "r": 20, "t": 60, "b": 50},
    }
    figure.update_layout(**(layout | extra))
    return figure_json(figure)


def cumulative_cost_figure(results: dict[str, Any]) -> str:
    """Cumulative cash cost per option, with each option's break-even month against on-demand.

    Drawn from :func:`planner.chartdefs.tco_cumulative`, the definition the PDF draws too.
    """
    spec = chartdefs.tco_cumulative(results)
    figure = go.Figure()
    for line in spec.lines if spec else ():
        cumulative = list(line.values_amount)
        colour = COLOURS.get(line.kind, "#6b7280")
        figure.add_trace(
            go.Scatter(
                x=list(spec.x),
                y=cumulative,
                name=line.label,
                mode="lines",
                line={"color": colour, "dash": "dot" if line.kind == "cloud_committed" else None},
                hovertemplate="%{fullData.name}<br>month %{x}: %{y:,.0f} "
                + _cur(results)
                + "<extra></extra>",
            )
        )
        month = line.break_even_month
        if month and month <= len(cumulative):
            figure.add_trace(
                go.Scatter(
                    x=[month],
                    y=[cumulative[month - 1]],
                    mode="markers" if line.kind.startswith("cloud") else "markers+text",
                    marker={"symbol": "diamond", "size": 11, "color": colour},
                    text=[f"break-even month {month}"],
                    textposition="top right",
                    showlegend=False,
                    name=f"{line.label} break-even",
                    hovertemplate=(
                        f"{line.label} breaks even with on-demand in month {month}<extra></extra>"
                    ),
                )
            )
    return _layout(
        figure,
        spec.title if spec else "Cumulative cost by option",
        xaxis={"title": spec.x_label if spec else "Month"},
        yaxis={"title": spec.y_label if spec else _cur(results), "tickformat": ",.0f"},
        height=480,
    )


def _label_side(x: float, low: float, high: float) -> str:
    """Where a point's label goes above it: right of a point in the left third of the axis,
    left of one in the right third, centred between."""
    where = (x - low) / (high - low) if high > low else 0.5
    return "top right" if where < 1 / 3 else "top left" if where > 2 / 3 else "top center"


def monthly_stack_figure(results: dict[str, Any], option_key: str | None = None) -> tuple[str, str]:
    """Monthly cost of one option stacked by line item.

    Args:
        results: Stored run results.
        option_key: Option to show; default the cheapest option that owns hardware.

    Returns:
        (figure JSON, key of the option shown).
    """
    options = {o["key"]: o for o in results["options"]}
    if option_key not in options:
        owned = [o for o in results["options"] if o.get("owned_gpus")]
        pool = owned or results["options"]
        option_key = min(pool, key=lambda o: float(o["npv_amount"]))["key"]
    option = options[option_key]
    figure = go.Figure()
    for line, values in option["lines_amount"].items():
        amounts = _floats(values)
        if not any(abs(v) > 0.005 for v in amounts):
            continue
        figure.add_trace(
            go.Bar(
                x=results["months"],
                y=amounts,
                name=LINE_LABELS.get(line, line.replace("_", " ")),
                hovertemplate="%{fullData.name}<br>month %{x}: %{y:,.0f} "
                + _cur(results)
                + "<extra></extra>",
            )
        )
    shown = _layout(
        figure,
        f"Monthly cost by line item — {option['label']}",
        barmode="relative",
        xaxis={"title": "Month"},
        yaxis={"title": f"Cost per month ({_cur(results)})", "tickformat": ",.0f"},
    )
    return shown, option_key


def tornado_figure(results: dict[str, Any]) -> str:
    """NPV saved by owning against on-demand, each driver swung ±20 %, widest bar on top.

    Drawn from :func:`planner.chartdefs.tco_tornado`, the definition the PDF draws too.
    """
    spec = chartdefs.tco_tornado(results["tornado"], _cur(results))
    if spec is None:
        return _layout(go.Figure(), "Sensitivity")
    bars = list(reversed(spec.bars))  # Plotly draws the first category at the bottom
    units = {b["driver"]: DRIVER_UNITS.get(b["driver"], b["unit"]) for b in results["tornado"]}
    unit_of = {DRIVER_LABELS.get(d, d): u for d, u in units.items()}
    base = spec.base_amount
    figure = go.Figure()
    for end, name, colour in (
        ("low", "Driver −20 %", "#93c5fd"),
        ("high", "Driver +20 %", "#2563eb"),
    ):
        figure.add_trace(
            go.Bar(
                y=[b.label for b in bars],
                x=[getattr(b, f"{end}_amount") - base for b in bars],
                base=base,
                orientation="h",
                name=name,
                marker={"color": colour},
                customdata=[
                    [
                        getattr(b, f"{end}_input"),
                        unit_of.get(b.label, b.unit),
                        getattr(b, f"{end}_amount"),
                    ]
                    for b in bars
                ],  # fmt: skip
                hovertemplate=(
                    "%{y}: %{customdata[0]:,.3g} %{customdata[1]}<br>NPV saved "
                    "%{customdata[2]:,.0f} " + _cur(results) + "<extra></extra>"
                ),
            )
        )
    figure.add_vline(x=base, line={"color": "#111827", "width": 1})
    return _layout(
        figure,
        spec.title,
        barmode="overlay",
        xaxis={"title": spec.x_label, "tickformat": ",.0f"},
        margin={"l": 170, "r": 20, "t": 60, "b": 50},
    )


def monte_carlo_figure(results: dict[str, Any]) -> str:
    """P10-P90 bands and P50 lines of cumulative cost, owned against cloud on-demand.

    Drawn from :func:`planner.chartdefs.tco_monte_carlo`, the definition the PDF draws too.
    """
    spec = chartdefs.tco_monte_carlo(results)
    if spec is None:
        return _layout(go.Figure(), "Monte Carlo")
    months = list(spec.x)
    figure = go.Figure()
    fills = {
        "Cloud": ("#dc2626", "rgba(220,38,38,0.15)"),
        "Owned": ("#2563eb", "rgba(37,99,235,0.18)"),
    }
    for band in spec.bands:
        colour, fill = fills["Cloud" if band.label.startswith("Cloud") else "Owned"]
        for values, name, hover, extra in (
            (band.p90_amount, f"{band.label} P90", "P90", {"showlegend": False}),
            (
                band.p10_amount,
                f"{band.label} P10-P90",
                "P10",
                {"fill": "tonexty", "fillcolor": fill},
            ),
        ):
            figure.add_trace(
                go.Scatter(
                    x=months,
                    y=list(values),
                    mode="lines",
                    line={"width": 0, "color": colour},
                    name=name,
                    hovertemplate=f"{hover} %{{y:,.0f}} {_cur(results)}<extra></extra>",
                    **extra,
                )
            )
        figure.add_trace(
            go.Scatter(
                x=months,
                y=list(band.p50_amount),
                mode="lines",
                line={"color": colour, "width": 2},
                name=f"{band.label} P50",
                hovertemplate="P50 %{y:,.0f} " + _cur(results) + "<extra></extra>",
            )
        )
    return _layout(
        figure,
        spec.title,
        xaxis={"title": spec.x_label},
        yaxis={"title": spec.y_label, "tickformat": ",.0f"},
    )


def hybrid_curve_figure(results: dict[str, Any]) -> str | None:
    """NPV of the hybrid option for every owned base searched, the chosen one marked.

    ``None`` for runs stored before the search kept its curve.
    """
    hybrid = next((o for o in results["options"] if o["kind"] == "hybrid"), None)
    curve = (hybrid or {}).get("base_curve") or []
    if not curve:
        return None
    servers = [int(n) for n, _ in curve]
    npvs = [float(v) for _, v in curve]
    best = min(range(len(npvs)), key=lambda i: (npvs[i], servers[i]))
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=servers,
            y=npvs,
            mode="lines+markers",
            line={"color": COLOURS["hybrid"]},
            name="NPV of the hybrid",
            hovertemplate="%{x} owned servers: NPV %{y:,.0f} " + _cur(results) + "<extra></extra>",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=[servers[best]],
            y=[npvs[best]],
            mode="markers+text",
            marker={"symbol": "diamond", "size": 13, "color": "#111827"},
            text=[
                "cheapest: cloud only"
                if servers[best] == 0
                else f"cheapest: {count(int(servers[best]), 'server')}"
            ],
            # The label on the side with room: it starts at a point near the left edge and
            # ends at one near the right edge (centred there, it would be cut on a phone).
            textposition=_label_side(servers[best], min(servers), max(servers)),
            name="Cheapest base",
            hovertemplate="%{x} owned servers: NPV %{y:,.0f} " + _cur(results) + "<extra></extra>",
        )
    )
    return _layout(
        figure,
        "Hybrid: NPV by owned base (the rest bursts to cloud on-demand)",
        xaxis={"title": "Owned servers in the base", "dtick": 1 if len(servers) <= 30 else None},
        yaxis={"title": f"NPV of cost ({_cur(results)})", "tickformat": ",.0f"},
        showlegend=False,
    )


def tco_run_figures(run, *, stack_option: str | None = None) -> Mapping[str, Any]:
    """``tco_figures`` of a finished run, kept by the process across requests until anything is
    written (``planner.computed.computed_across_requests``): building them costs more than the
    rest of the TCO page, and a run's results do not change once it has finished."""
    if stack_option not in {o["key"] for o in run.results.get("options", ())}:
        stack_option = None  # the stack's default option, as for any unknown key (one entry)
    return computed_across_requests(
        ("tco_figures", run.pk, stack_option),
        lambda: MappingProxyType(tco_figures(run.results, stack_option=stack_option)),
    )


def tco_figures(results: dict[str, Any], *, stack_option: str | None = None) -> dict[str, Any]:
    """Every TCO figure of a run, keyed for the template."""
    stack, shown = monthly_stack_figure(results, stack_option)
    return {
        "hybrid_curve": hybrid_curve_figure(results),
        "cumulative": cumulative_cost_figure(results),
        "stack": stack,
        "stack_option": shown,
        "tornado": tornado_figure(results),
        "monte_carlo": monte_carlo_figure(results),
    }
