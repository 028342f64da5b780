"""Plotly figures built from catalog rows and engine results, as JSON for plotly.js.

The browser renders them with plotly.js served from static/; nothing is fetched from a CDN.
"""

import json

import plotly.graph_objects as go
from plotly.utils import PlotlyJSONEncoder

from planner.engine.chart_layout import (
    aligned_round_ranges,
    finite_numbers,
    legend_rows,
    round_step,
    wrap_words,
)

PRECISION_FIELDS = {
    "bf16": ("bf16_dense_tflops", "BF16 dense TFLOPS"),
    "fp8": ("fp8_dense_tflops", "FP8 dense TFLOPS"),
    "fp4": ("fp4_dense_tflops", "FP4 dense TFLOPS"),
}
FONT = {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 13}


def accelerator_compare_figure(accelerators, *, precision: str = "bf16") -> str:
    """Memory bandwidth against dense compute, bubble area proportional to memory.

    Args:
        accelerators: catalog Accelerator rows (or objects with the same attributes).
        precision: which dense figure goes on the x axis: bf16, fp8 or fp4.

    Returns:
        The figure as Plotly JSON. Accelerators without a figure at that precision are
        left out and named in the title.
    """
    field, axis_title = PRECISION_FIELDS[precision]
    shown = [a for a in accelerators if getattr(a, field) and a.memory_gb]
    missing = [a.name for a in accelerators if a not in shown]
    largest_memory_gb = max((a.memory_gb for a in shown), default=1.0)
    figure = go.Figure(
        go.Scatter(
            x=[getattr(a, field) for a in shown],
            y=[a.memory_bandwidth_tbps for a in shown],
            text=[a.name for a in shown],
            customdata=[[a.memory_gb] for a in shown],
            mode="markers+text",
            textposition="top center",
            marker={
                "size": [a.memory_gb for a in shown],
                "sizemode": "area",
                # Plotly's documented rule: sizeref = 2 * max(size) / (max_marker_px ** 2).
                "sizeref": 2.0 * largest_memory_gb / (60.0**2),
                "sizemin": 6,
                "color": ["#2563eb", "#dc2626", "#059669", "#d97706"][: len(shown)],
                "line": {"width": 1, "color": "#1f2937"},
                "opacity": 0.75,
            },
            hovertemplate=(
                "<b>%{text}</b><br>" + axis_title + ": %{x:,.0f}<br>Bandwidth: %{y:.2f} TB/s<br>"
                "Memory: %{customdata[0]:,.0f} GB<extra></extra>"
            ),
        )
    )
    title = f"Memory bandwidth against {axis_title} (bubble area: memory)"
    if missing:
        title += f"<br><sup>No {precision.upper()} figure: {', '.join(missing)}</sup>"
    # Leave room above and right of the largest bubble for its label.
    x_max = max((getattr(a, field) for a in shown), default=1.0) * 1.15
    y_max = max((a.memory_bandwidth_tbps for a in shown), default=1.0) * 1.25
    figure.update_layout(
        title={"text": title, "x": 0.02},
        xaxis={"title": axis_title, "range": [0, x_max]},
        yaxis={"title": "Memory bandwidth (TB/s)", "range": [0, y_max]},
        font=FONT,
        margin={"l": 60, "r": 20, "t": 70, "b": 50},
        height=440,
        showlegend=False,
    )
    return figure_json(figure)


# The few parts of plotly's "plotly_white" look these figures use; the full template is
# ~10 kB of JSON per figure, resent on every htmx recompute.
_AXIS = {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "zerolinecolor": "#EBF0F8",
         "ticks": "", "automargin": True}  # fmt: skip
LIGHT_TEMPLATE = {
    "layout": {
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"color": "#2a3f5f"},
        "colorway": ["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3"],
        "hoverlabel": {"align": "left"},
        "xaxis": _AXIS,
        "yaxis": _AXIS,
    }
}


def _template() -> dict:
    return LIGHT_TEMPLATE


# The legend's room: a row of a horizontal legend is about 22 px high; its entries are laid
# out in columns as wide as the widest (symbol and gap 40 px, about 0.6 em a character), on a
# phone's plot (390 px less the page's padding and the plot's margins) at the narrowest.
LEGEND_ROW_PX = 22
LEGEND_ENTRY_PX = 40
CHAR_PX = 0.6 * FONT["size"]
NARROWEST_PLOT_PX = 250
# A title on a phone: the figure is about 340 px wide on a 390 px screen (the page's padding
# off), the title starts 2% in; plotly draws it at 1.4 × the layout's font
# (plotly.js layout.title.font), a line of it about 1.3 × its size high.
NARROWEST_FIGURE_PX = 340
TITLE_FONT_SCALE = 1.4
TITLE_LINE_EM = 1.3


def _narrow_title(layout: dict) -> dict | None:
    """The title broken into lines that fit the narrowest figure, for ``static/js/charts.js``
    to draw on a figure narrower than the title in one line: the text, the top margin and the
    height that keep the plot's own height (``None`` when the title fits on a phone as it is)."""
    title = layout.get("title")
    title = {"text": title} if isinstance(title, str) else dict(title or {})
    text = title.get("text") or ""
    font_px = (title.get("font") or {}).get("size") or TITLE_FONT_SCALE * (
        (layout.get("font") or {}).get("size") or FONT["size"]
    )
    char_px = 0.6 * font_px
    line_chars = int(NARROWEST_FIGURE_PX * (1 - 2 * 0.02) // char_px)
    wrapped = wrap_words(text, line_chars)
    extra_lines = wrapped.count("<br>") - text.count("<br>")
    if extra_lines <= 0:
        return None
    extra_px = round(extra_lines * TITLE_LINE_EM * font_px)
    top = (layout.get("margin") or {}).get("t", 100)  # plotly's default top margin
    longest = max(len(line) for line in text.split("<br>"))
    return {
        "title": wrapped,
        "below_px": round(longest * char_px / (1 - 2 * 0.02)),  # narrower: the wrapped title
        "margin_t": top + extra_px,
        "height": (layout.get("height") or 450) + extra_px,
    }


def _legend_names(traces: list[dict], layout: dict) -> list[str]:
    """The names the legend lists (plotly shows a legend for two or more traces in it)."""
    if layout.get("showlegend") is False:
        return []
    names = [str(t.get("name") or "") for t in traces if t.get("showlegend", True) is not False]
    return names if len(names) >= 2 or layout.get("showlegend") else []


def _axis_values(traces: list[dict], layout: dict, axis: str) -> list[float]:
    """The y values drawn on y axis ``axis`` ("y", "y2", …): traces' points and lines."""
    values = []
    for trace in traces:
        if trace.get("yaxis", "y") == axis and trace.get("orientation") != "h":
            values += list(trace.get("y") or ())
    for shape in layout.get("shapes") or ():
        if shape.get("yref") == axis:
            values += [shape.get("y0", 0), shape.get("y1", 0)]
    return finite_numbers(values)


def _overlay_ticks(traces: list[dict], layout: dict) -> None:
    """An axis overlaying another gets round ticks on the gridlines of the other (both from
    0, the same count of intervals, each a round step), instead of plotly's default for it
    ("sync": the other's gridlines divided across its own range, 258 / 516 / 774 …)."""
    for key, axis in list(layout.items()):
        if not (key.startswith("yaxis") and isinstance(axis, dict) and axis.get("overlaying")):
            continue
        if axis.get("tickmode") or axis.get("dtick") or axis.get("tickvals"):
            continue
        base_key = "yaxis" + axis["overlaying"][1:]
        base = layout.get(base_key) or {}
        pair = ((base_key, base, axis["overlaying"]), (key, axis, "y" + key[5:]))
        values = [_axis_values(traces, layout, ref) for _, _, ref in pair]
        from_zero = all(a.get("rangemode") == "tozero" and not a.get("range") for _, a, _ in pair)
        if not (from_zero and all(values) and min(min(v) for v in values) >= 0):
            layout[key] = {**axis, "tickmode": "auto", "showgrid": False}
            continue
        intervals, steps = aligned_round_ranges([max(v) for v in values])
        for (name, ax, _), step in zip(pair, steps, strict=True):
            layout[name] = {**ax, "tickmode": "linear", "tick0": 0, "dtick": step,
                            "range": [0, intervals * step]}  # fmt: skip


def layout_rules(traces: list[dict], layout: dict) -> dict:
    """The rules every figure's layout follows, whoever built it:

    - a legend sits at the bottom of the figure (under the x axis' title, never over it: plotly
      makes room for both) and the figure grows by the rows it takes on a phone;
    - an axis that overlays another gets round ticks (:func:`_overlay_ticks`);
    - a title too long for a phone carries its lines for one (:func:`_narrow_title`), so that
      it is never cut at the figure's right edge.
    """
    layout = dict(layout)
    names = _legend_names(traces, layout)
    if names:
        layout["legend"] = {
            **(layout.get("legend") or {}), "orientation": "h", "x": 0, "xanchor": "left",
            "yref": "container", "y": 0, "yanchor": "bottom",
        }  # fmt: skip
        widths = [LEGEND_ENTRY_PX + CHAR_PX * len(name) for name in names]
        rows = legend_rows(widths, NARROWEST_PLOT_PX)
        layout["height"] = (layout.get("height") or 450) + LEGEND_ROW_PX * rows
    _overlay_ticks(traces, layout)
    if narrow := _narrow_title(layout):
        layout["meta"] = {**(layout.get("meta") or {}), "narrow": narrow}
    return layout


def figure_json(figure: go.Figure) -> str:
    """Plotly JSON of a figure built with plotly's objects, in the light template.

    The template is added to the JSON, not set on the figure: plotly validates a template
    set on a figure property by property (plotly_white: about 0.2 s per figure, five on the
    TCO page).
    """
    figure.layout.template = None  # so that plotly does not add its default one
    data = figure.to_plotly_json()
    layout = layout_rules(list(data.get("data") or []), data.get("layout", {}))
    data["layout"] = {**layout, "template": LIGHT_TEMPLATE}
    return json.dumps(data, cls=PlotlyJSONEncoder)


def _figure_json(traces: list[dict], title: str, **layout) -> str:
    """Plotly JSON from plain trace and layout dicts.

    Pages recompute these on every htmx change, so they skip plotly's validating object
    model (tens of ms per figure) and reuse the cached template.
    """
    full_layout = {
        "template": _template(),
        "title": {"text": title, "x": 0.02},
        "font": FONT,
        "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
        "height": 360,
        **layout,
    }
    full_layout = layout_rules(traces, full_layout)
    return json.dumps({"data": traces, "layout": full_layout}, cls=PlotlyJSONEncoder)


def _line(axis: str, value: float, color: str, dash: str) -> dict:
    """A horizontal line across the plot at ``value`` on y axis ``axis`` ("y" or "y2")."""
    return {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": axis, "y0": value,
            "y1": value, "line": {"color": color, "dash": dash, "width": 1.5}}  # fmt: skip


def _label(axis: str, value: float, text: str, color: str) -> dict:
    return {"xref": "paper", "x": 1, "yref": axis, "y": value, "xanchor": "right",
            "yanchor": "bottom", "text": text, "showarrow": False, "font": {"color": color}}  # fmt: skip


def latency_throughput_figure(
    detail, *, ttft_target_ms: float | None, tpot_target_ms: float | None
) -> str:
    """TTFT and TPOT against output tokens/s per replica across batch sizes, with targets.

    Args:
        detail: planner.sizing.CandidateDetail (batch, TTFT, TPOT and throughput curves).
        ttft_target_ms: Dotted line for the TTFT target, if any (right axis).
        tpot_target_ms: Dashed line for the TPOT target, if any (left axis).
    """
    throughput = list(detail.throughput_curve)
    batch_text = [f"batch {b:.0f}" for b in detail.batch_curve]
    traces = [
        {"type": "scatter", "x": throughput, "y": list(detail.tpot_curve_ms),
         "name": "TPOT (mean)", "mode": "lines+markers", "text": batch_text,
         "line": {"color": "#2563eb"}, "marker": {"size": 4},
         "hovertemplate": "%{text}<br>%{x:,.0f} tok/s<br>TPOT %{y:.1f} ms<extra></extra>"},
        {"type": "scatter", "x": throughput, "y": list(detail.ttft_curve_ms),
         "name": "TTFT (service, mean)", "mode": "lines+markers", "text": batch_text,
         "yaxis": "y2", "line": {"color": "#d97706"}, "marker": {"size": 4},
         "hovertemplate": "%{text}<br>%{x:,.0f} tok/s<br>TTFT %{y:,.0f} ms<extra></extra>"},
    ]  # fmt: skip
    shapes, annotations = [], []
    if tpot_target_ms:
        shapes.append(_line("y", tpot_target_ms, "#2563eb", "dash"))
        annotations.append(
            _label("y", tpot_target_ms, f"TPOT target {tpot_target_ms:.0f} ms", "#1d4ed8")
        )
    if ttft_target_ms:
        shapes.append(_line("y2", ttft_target_ms, "#d97706", "dot"))
        annotations.append(
            _label("y2", ttft_target_ms, f"TTFT target {ttft_target_ms:,.0f} ms", "#b45309")
        )
    chosen = detail.candidate
    if chosen.feasible:
        x = chosen.output_tokens_per_s_per_replica
        shapes.append({"type": "line", "xref": "x", "x0": x, "x1": x, "yref": "paper", "y0": 0,
                       "y1": 1, "line": {"color": "#059669", "width": 1.5}})  # fmt: skip
        # The label on the side of the line with room: right of it in the left half.
        right_half = x > max(throughput, default=0) / 2
        annotations.append({"xref": "x", "x": x, "yref": "paper", "y": 0, "yanchor": "bottom",
                            "xanchor": "right" if right_half else "left", "showarrow": False,
                            "text": f"operating point: batch {chosen.batch_per_replica:,.0f}",
                            "font": {"color": "#047857"}})  # fmt: skip
    return _figure_json(
        traces,
        "Latency against throughput per replica (batch sizes 1 to the memory limit)",
        xaxis={"title": {"text": "Output tokens/s per replica"}, "rangemode": "tozero"},
        yaxis={"title": {"text": "TPOT (ms)"}, "rangemode": "tozero"},
        yaxis2={"title": {"text": "TTFT (ms)"}, "overlaying": "y", "side": "right",
                "rangemode": "tozero"},
        shapes=shapes,
        annotations=annotations,
        height=400,
    )  # fmt: skip


def memory_breakdown_figure(detail) -> str:
    """One GPU's memory: weights, KV-cache budget, activations, reserve and what vLLM leaves."""
    parts = [
        ("Weights", detail.weights_gb_per_gpu, "#1d4ed8"),
        ("KV cache", detail.kv_budget_gb_per_gpu, "#059669"),
        ("Activations", detail.activation_gb_per_gpu, "#d97706"),
        ("Runtime reserve", detail.reserve_gb_per_gpu, "#7c3aed"),
        ("Left free (utilisation cap)", detail.unusable_gb_per_gpu, "#9ca3af"),
    ]
    traces = [
        {"type": "bar", "y": ["per GPU"], "x": [round(value, 2)], "name": name,
         "orientation": "h", "marker": {"color": color},
         "hovertemplate": f"{name}: %{{x:.1f}} GB<extra></extra>"}
        for name, value, color in parts
    ]  # fmt: skip
    return _figure_json(
        traces,
        f"Memory per GPU ({detail.capacity_gb_per_gpu:.0f} GB)",
        barmode="stack",
        xaxis={"title": {"text": "GB"}, "range": [0, max(detail.capacity_gb_per_gpu, 1) * 1.02]},
        height=180,
    )


def replicas_by_hour_figure(replicas: list[int]) -> str:
    """Replicas needed in each UTC hour of the daily profile."""
    traces = [
        {"type": "bar", "x": [f"{hour:02d}:00" for hour in range(24)], "y": replicas,
         "marker": {"color": "#2563eb"},
         "hovertemplate": "%{x} UTC: %{y} replicas<extra></extra>"}
    ]  # fmt: skip
    return _figure_json(
        traces,
        "Replicas across the day (UTC)",
        yaxis={"title": {"text": "Replicas"}, "rangemode": "tozero",
               "dtick": round_step(max(replicas, default=1) / 8, whole=True)},
        height=300,
    )  # fmt: skip


def _layout(figure: go.Figure, title: str, **extra) -> str:
    figure.update_layout(
        title={"text": title, "x": 0.02},
        font=FONT,
        margin={"l": 60, "r": 20, "t": 60, "b": 50},
        height=extra.pop("height", 360),
        **extra,
    )
    return figure_json(figure)


def calibration_figure(rows: list[dict]) -> str:
    """Estimated against measured output tokens/s, log-log, one colour per scenario,
    with the perfect line and the ±15 % and ±35 % bands."""
    colors = {"offline": "#2563eb", "server": "#dc2626", "interactive": "#7c3aed",
              "max_throughput": "#059669"}  # fmt: skip
    figure = go.Figure()
    for scenario, color in colors.items():
        subset = [r for r in rows if r["scenario"] == scenario]
        if not subset:
            continue
        figure.add_trace(
            go.Scatter(
                x=[r["measured_tokens_per_s"] for r in subset],
                y=[r["predicted_tokens_per_s"] for r in subset],
                mode="markers", name=scenario.replace("_", " "),
                marker={"color": color, "size": 7, "opacity": 0.7},
                text=[f"{r['ref_id']}<br>{r['error_pct']:+.1f} %" for r in subset],
                hovertemplate="%{text}<br>measured %{x:,.0f}, estimated %{y:,.0f} tok/s<extra></extra>",
            )
        )  # fmt: skip
    values = [r["measured_tokens_per_s"] for r in rows] + [
        r["predicted_tokens_per_s"] for r in rows
    ]
    low, high = max(min(values, default=1) * 0.7, 1), max(values, default=10) * 1.4
    for factor, dash, label in (
        (1.0, "solid", "estimate = measured"),
        (1.15, "dash", "±15 %"),
        (0.85, "dash", None),
        (1.35, "dot", "±35 %"),
        (0.65, "dot", None),
    ):
        figure.add_trace(
            go.Scatter(
                x=[low, high], y=[low * factor, high * factor], mode="lines",
                line={"color": "#6b7280", "dash": dash, "width": 1},
                name=label or "", showlegend=label is not None, hoverinfo="skip",
            )
        )  # fmt: skip
    return _layout(
        figure,
        "Estimated against measured output tokens/s (each reference run)",
        xaxis={"title": "Measured tokens/s", "type": "log"},
        yaxis={"title": "Estimated tokens/s", "type": "log"},
        height=520,
    )
