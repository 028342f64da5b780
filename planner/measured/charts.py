"""Measured against modelled: throughput, TTFT and TPOT at the sweep's loads (Plotly JSON)."""

from __future__ import annotations

from collections.abc import Sequence

from planner.charts import _figure_json
from planner.engine.load_test import PointComparison

MEASURED, MODELLED = "#059669", "#2563eb"


def measured_vs_modelled_figure(rows: Sequence[PointComparison]) -> str:
    """Three panels against requests in flight: output tokens/s, mean TTFT and mean TPOT."""
    load = [r.concurrency for r in rows]
    traces = []
    for axis, (name, measured, modelled, unit) in enumerate(
        (
            ("Output tokens/s", [r.measured_output_tokens_per_s for r in rows],
             [r.model_output_tokens_per_s for r in rows], "tok/s"),
            ("TTFT (mean, ms)", [r.measured_ttft_ms for r in rows],
             [r.model_ttft_ms for r in rows], "ms"),
            ("TPOT (mean, ms)", [r.measured_tpot_ms for r in rows],
             [r.model_tpot_ms for r in rows], "ms"),
        ),
        start=1,
    ):  # fmt: skip
        suffix = "" if axis == 1 else str(axis)
        for label, values, color, mode in (
            ("measured", measured, MEASURED, "markers+lines"),
            ("model", modelled, MODELLED, "lines"),
        ):
            traces.append(
                {"type": "scatter", "x": load, "y": values, "xaxis": f"x{suffix}",
                 "yaxis": f"y{suffix}", "name": f"{name}: {label}", "mode": mode,
                 "legendgroup": label, "showlegend": axis == 1,
                 "line": {"color": color, "dash": "solid" if label == "measured" else "dash"},
                 "hovertemplate": f"%{{x:g}} in flight<br>{name} {label}: %{{y:,.1f}} {unit}"
                 "<extra></extra>"}
            )  # fmt: skip
    for trace in traces:
        trace["name"] = trace["name"].split(": ")[1]
    axes = {}
    for axis, title in enumerate(("Output tokens/s", "TTFT mean (ms)", "TPOT mean (ms)"), start=1):
        suffix = "" if axis == 1 else str(axis)
        left = (axis - 1) / 3
        axes[f"xaxis{suffix}"] = {
            "domain": [left + 0.04, left + 0.3], "anchor": f"y{suffix}",
            "title": {"text": "Requests in flight"}, "rangemode": "tozero",
        }  # fmt: skip
        axes[f"yaxis{suffix}"] = {
            "anchor": f"x{suffix}", "title": {"text": title}, "rangemode": "tozero",
        }  # fmt: skip
    return _figure_json(
        traces,
        "Measured (points) against the engine's model (dashed) at the same loads",
        height=380,
        **axes,
    )


def _bars(x, y, name: str, color: str, xtitle: str, ytitle: str, title: str, **layout) -> str:
    trace = {"type": "bar", "x": list(x), "y": list(y), "name": name, "marker": {"color": color}}
    return _figure_json(
        [trace],
        title,
        xaxis={"title": {"text": xtitle}},
        yaxis={"title": {"text": ytitle}, "rangemode": "tozero"},
        height=300,
        **layout,
    )


def length_histogram_figure(histogram, *, what: str) -> str:
    """Requests by prompt or output length (bins of the log's own range)."""
    edges, counts = histogram
    centres = [(a + b) / 2 for a, b in zip(edges[:-1], edges[1:], strict=True)]
    return _bars(
        centres, counts, what, MODELLED if what == "input" else MEASURED,
        f"{what.capitalize()} tokens", "Requests", f"{what.capitalize()} lengths",
    )  # fmt: skip


def daily_profile_figure(profile) -> str:
    """Mean requests in each UTC hour, the busiest hour = 1."""
    return _bars(
        list(range(24)), profile, "share of the peak hour", MODELLED, "Hour of day (UTC)",
        "Share of the peak hour", "24-hour profile", xaxis_dtick=2,
    )  # fmt: skip


def weekly_figure(weeks) -> str:
    """Requests per full week, oldest first."""
    return _bars(
        [f"week {i + 1}" for i in range(len(weeks))], weeks, "requests", MEASURED, "Week",
        "Requests", "Requests per week",
    )  # fmt: skip
