"""Plotly figures of sourcing: the delivery Gantt chart with the critical path highlighted."""

from __future__ import annotations

from datetime import timedelta

import plotly.graph_objects as go

from planner.chartdefs import GANTT_STAGES, Gantt
from planner.charts import FONT, figure_json
from planner.engine.chart_layout import wrap_words

CRITICAL = "#dc2626"
NORMAL = "#2563eb"
SLACK = "rgba(37, 99, 235, 0.18)"
MS_PER_DAY = 24 * 60 * 60 * 1000
LABEL_LINE_CHARS = 30  # a row label wraps here, so that a phone keeps room for the bars


def wrapped_label(label: str) -> str:
    """A row label in full, in lines of at most about ``LABEL_LINE_CHARS`` characters."""
    return wrap_words(label, LABEL_LINE_CHARS)


def gantt_figure(gantt: Gantt, *, slipped_keys: frozenset[str] = frozenset()) -> str:
    """Draw the timeline's one chart definition (``planner.chartdefs.timeline_gantt``, shared
    with the PDF): a row per purchase order (and per site's parts to order and its installation
    and burn-in), its stages as segments from earliest start to earliest finish, outlined in red
    on the critical path; a row's slack drawn as a pale extension; milestones (each site's power ready) as diamonds; vertical lines
    for go-live, the go-live before slips and the target.

    Args:
        gantt: The chart definition.
        slipped_keys: Tasks whose actual dates slipped (marked "slipped" in the hover text).

    Returns:
        The figure as Plotly JSON.
    """
    tasks = gantt.tasks
    labels = [wrapped_label(t.label) for t in tasks]
    figure = go.Figure()
    # One bar trace per stage (the legend names the stages); a row's stages side by side.
    for kind, (stage_name, color) in GANTT_STAGES.items():
        parts = [(label, t, s) for label, t in zip(labels, tasks, strict=True)
                 for s in t.segments if s.kind == kind]  # fmt: skip
        if not parts:
            continue
        figure.add_trace(
            go.Bar(
                y=[label for label, _, _ in parts],
                x=[max((s.finish - s.start).days, 0.3) * MS_PER_DAY for _, _, s in parts],
                base=[s.start.isoformat() for _, _, s in parts],
                orientation="h",
                marker={"color": color},
                customdata=[
                    [
                        s.start.isoformat(),
                        s.finish.isoformat(),
                        (s.finish - s.start).days,
                        s.slack_days,
                        " ⚠ slipped" if slipped_keys & set(s.task_keys) else "",
                        s.stage,
                        " (critical path)" if s.critical else "",
                        f" ({len(s.task_keys)} items)" if len(s.task_keys) > 1 else "",
                    ]
                    for _, _, s in parts
                ],
                hovertemplate=(
                    "<b>%{y}</b>%{customdata[4]}<br>%{customdata[5]}%{customdata[7]}: "
                    "%{customdata[0]} → %{customdata[1]} (%{customdata[2]} days)"
                    "%{customdata[6]}<br>slack %{customdata[3]} days<extra></extra>"
                ),
                name=stage_name,
            )
        )
    critical = [(label, s) for label, t in zip(labels, tasks, strict=True)
                for s in t.segments if s.critical]  # fmt: skip
    if critical:  # an outline over the stages on the critical path
        figure.add_trace(
            go.Bar(
                y=[label for label, _ in critical],
                x=[max((s.finish - s.start).days, 0.3) * MS_PER_DAY for _, s in critical],
                base=[s.start.isoformat() for _, s in critical],
                orientation="h",
                marker={"color": "rgba(0,0,0,0)", "line": {"color": CRITICAL, "width": 2.5}},
                hoverinfo="skip",
                name="Critical path (outlined)",
            )
        )
    slack = [(label, t) for label, t in zip(labels, tasks, strict=True) if t.slack_days > 0]
    if slack:
        figure.add_trace(
            go.Bar(
                y=[label for label, _ in slack],
                x=[t.slack_days * MS_PER_DAY for _, t in slack],
                base=[t.finish.isoformat() for _, t in slack],
                orientation="h",
                marker={"color": SLACK},
                hovertemplate="slack %{customdata} days<extra></extra>",
                customdata=[t.slack_days for _, t in slack],
                name="Slack",
            )
        )
    dates = [t.start for t in tasks] + [m.when for m in gantt.milestones]
    start = min(dates) - timedelta(days=3)
    end = max([t.finish for t in tasks] + [m.when for m in gantt.milestones]) + timedelta(days=10)
    middle = start + (end - start) / 2

    def right_half(when) -> bool:
        """A label of a date in the right half goes on the date's left: it stays in the plot."""
        return when > middle

    points = [m for m in gantt.milestones if m.kind == "power_ready"]
    if points:
        figure.add_trace(
            go.Scatter(
                y=[wrapped_label(m.label) for m in points],
                x=[m.when.isoformat() for m in points],
                mode="markers+text",
                text=[m.when.isoformat() for m in points],
                textposition=[
                    "middle left" if right_half(m.when) else "middle right" for m in points
                ],
                marker={"symbol": "diamond", "size": 14, "color": "#111827"},
                hovertemplate="<b>%{y}</b>: %{x|%Y-%m-%d}<extra></extra>",
                name="Milestone",
            )
        )
    styles = {"go_live": ("#111827", "solid"), "baseline": ("#6b7280", "dash"),
              "target": ("#059669", "dot")}  # fmt: skip
    lines = [m for m in gantt.milestones if m.kind in styles]
    for k, m in enumerate(lines):
        color, dash = styles[m.kind]
        figure.add_shape(
            type="line", x0=m.when.isoformat(), x1=m.when.isoformat(), y0=0, y1=1, yref="paper",
            line={"color": color, "dash": dash, "width": 1.5},
        )  # fmt: skip
        figure.add_annotation(
            x=m.when.isoformat(), y=1, yref="paper", text=f"{m.label} {m.when}", showarrow=False,
            yanchor="bottom", font={"size": 11, "color": color},
            xanchor="right" if right_half(m.when) else "left",
            yshift=14 * (k % 2),  # every other one a line up: close dates do not overprint

        )  # fmt: skip
    order = labels + [wrapped_label(m.label) for m in points]
    figure.update_layout(
        title={"text": gantt.title},
        barmode="overlay",
        xaxis={"type": "date", "range": [start.isoformat(), end.isoformat()]},
        yaxis={"categoryorder": "array", "categoryarray": order[::-1], "automargin": True},
        font=FONT,
        margin={"l": 20, "r": 30, "t": 84, "b": 50},
        # A row: its label's lines (18 px each) and a gap.
        height=max(300, sum(18 * (label.count("<br>") + 1) + 14 for label in order) + 140),
    )
    return figure_json(figure)
