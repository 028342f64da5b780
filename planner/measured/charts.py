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
        legend={"orientation": "h", "y": -0.25},
        height=380,
        **axes,
    )
