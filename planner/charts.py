"""Plotly figures built from catalog rows and engine results, as JSON for plotly.js.

The browser renders them with plotly.js served from static/; nothing is fetched from a CDN.
"""

import plotly.graph_objects as go

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
        template="plotly_white",
        showlegend=False,
    )
    return figure.to_json()
