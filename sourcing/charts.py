"""Plotly figures of sourcing: the delivery Gantt chart with the critical path highlighted."""

from __future__ import annotations

from datetime import timedelta

import plotly.graph_objects as go

from planner.chartdefs import Gantt
from planner.charts import FONT, figure_json

CRITICAL = "#dc2626"
NORMAL = "#2563eb"
SLACK = "rgba(37, 99, 235, 0.18)"
MS_PER_DAY = 24 * 60 * 60 * 1000


def gantt_figure(gantt: Gantt, *, slipped_keys: frozenset[str] = frozenset()) -> str:
    """Draw the timeline's one chart definition (``planner.chartdefs.timeline_gantt``, shared
    with the PDF): bars from earliest start to earliest finish, red on the critical path; slack
    drawn as a pale extension; milestones (each site's power ready) as diamonds; vertical lines
    for go-live, the go-live before slips and the target.

    Args:
        gantt: The chart definition.
        slipped_keys: Tasks whose actual dates slipped (marked "slipped" in the hover text).

    Returns:
        The figure as Plotly JSON.
    """
    tasks = gantt.tasks
    labels = [t.label for t in tasks]
    figure = go.Figure()
    figure.add_trace(
        go.Bar(
            y=labels,
            x=[max((t.finish - t.start).days, 0.3) * MS_PER_DAY for t in tasks],
            base=[t.start.isoformat() for t in tasks],
            orientation="h",
            marker={"color": [CRITICAL if t.critical else NORMAL for t in tasks]},
            customdata=[
                [
                    t.start.isoformat(),
                    t.finish.isoformat(),
                    (t.finish - t.start).days,
                    t.slack_days,
                    " ⚠ slipped" if t.key in slipped_keys else "",
                ]
                for t in tasks
            ],  # fmt: skip
            hovertemplate=(
                "<b>%{y}</b>%{customdata[4]}<br>%{customdata[0]} → %{customdata[1]} "
                "(%{customdata[2]} days)<br>slack %{customdata[3]} days<extra></extra>"
            ),
            name="Task (red = critical path)",
        )
    )
    slack = [t for t in tasks if t.slack_days > 0]
    if slack:
        figure.add_trace(
            go.Bar(
                y=[t.label for t in slack],
                x=[t.slack_days * MS_PER_DAY for t in slack],
                base=[t.finish.isoformat() for t in slack],
                orientation="h",
                marker={"color": SLACK},
                hovertemplate="slack %{customdata} days<extra></extra>",
                customdata=[t.slack_days for t in slack],
                name="Slack",
            )
        )
    points = [m for m in gantt.milestones if m.kind == "power_ready"]
    if points:
        figure.add_trace(
            go.Scatter(
                y=[m.label for m in points],
                x=[m.when.isoformat() for m in points],
                mode="markers+text",
                text=[m.when.isoformat() for m in points],
                textposition="middle right",
                marker={"symbol": "diamond", "size": 14, "color": "#111827"},
                hovertemplate="<b>%{y}</b>: %{x|%Y-%m-%d}<extra></extra>",
                name="Milestone",
            )
        )
    styles = {"go_live": ("#111827", "solid"), "baseline": ("#6b7280", "dash"),
              "target": ("#059669", "dot")}  # fmt: skip
    lines = [m for m in gantt.milestones if m.kind in styles]
    for m in lines:
        color, dash = styles[m.kind]
        figure.add_shape(
            type="line", x0=m.when.isoformat(), x1=m.when.isoformat(), y0=0, y1=1, yref="paper",
            line={"color": color, "dash": dash, "width": 1.5},
        )  # fmt: skip
        figure.add_annotation(
            x=m.when.isoformat(), y=1, yref="paper", text=f"{m.label} {m.when}", showarrow=False,
            yanchor="bottom", font={"size": 11, "color": color},
        )  # fmt: skip
    order = labels + [m.label for m in points]
    dates = [t.start for t in tasks] + [m.when for m in gantt.milestones]
    start = min(dates) - timedelta(days=3)
    end = max([t.finish for t in tasks] + [m.when for m in gantt.milestones]) + timedelta(days=10)
    figure.update_layout(
        title={"text": gantt.title},
        barmode="overlay",
        xaxis={"type": "date", "range": [start.isoformat(), end.isoformat()]},
        yaxis={"categoryorder": "array", "categoryarray": order[::-1], "automargin": True},
        font=FONT,
        margin={"l": 20, "r": 30, "t": 70, "b": 50},
        height=max(360, 26 * len(order) + 160),
        legend={"orientation": "h", "y": -0.12},
    )
    return figure_json(figure)
