"""Plotly figures of sourcing: the delivery Gantt chart with the critical path highlighted."""

from __future__ import annotations

from datetime import date, timedelta

import plotly.graph_objects as go

from planner.charts import FONT
from planner.engine.critical_path import Schedule, gantt_rows

CRITICAL = "#dc2626"
NORMAL = "#2563eb"
SLACK = "rgba(37, 99, 235, 0.18)"
MS_PER_DAY = 24 * 60 * 60 * 1000


def _label(name: str) -> str:
    """Short axis label that keeps the step ("…: air transit") so rows stay distinct."""
    head, sep, tail = name.rpartition(": ")
    if not sep:
        head, tail = name, ""
    head = head if len(head) <= 34 else head[:33] + "…"
    return f"{head}{sep}{tail}"


_STEP_ORDER = {"lead_time": 0, "transit": 1, "customs": 2}


def gantt_figure(
    schedule: Schedule,
    *,
    baseline_go_live: date | None = None,
    target_go_live: date | None = None,
    slipped_keys: frozenset[str] = frozenset(),
    task_sites: dict[str, str] | None = None,
) -> str:
    """Bars from earliest start to earliest finish, red on the critical path; slack drawn as a
    pale extension; milestones as diamonds; vertical lines for the baseline and target go-live.

    Args:
        schedule: The engine's schedule (with actual dates applied).
        baseline_go_live: Go-live before any slip, drawn dashed when it differs.
        target_go_live: The plan's target date.
        slipped_keys: Tasks whose actual dates slipped (marked "slipped" in the label).
        task_sites: Task key → site name of a plan with several sites: rows are grouped by
            site (each site's shipments, installation and burn-in together) and labelled
            with it.

    Returns:
        The figure as Plotly JSON.
    """
    rows = [r for r in gantt_rows(schedule) if r.kind not in ("power_ready", "go_live")]
    # One item's steps together (lead time, transit, customs), items in schedule order.
    first_seen: dict[str, int] = {}
    for i, r in enumerate(rows):
        first_seen.setdefault(r.key.split(":")[0], i)
    sites = task_sites or {}
    site_order = {name: i for i, name in enumerate(dict.fromkeys(sites.values()))}
    site_rank = {"lead_time": 0, "transit": 0, "customs": 0, "install": 1, "burn_in": 2}
    rows.sort(
        key=lambda r: (
            site_order.get(sites.get(r.key, ""), -1),
            site_rank.get(r.kind, 0) if sites else 0,
            first_seen[r.key.split(":")[0]],
            _STEP_ORDER.get(r.kind, 9),
        )
    )
    milestones = [r for r in gantt_rows(schedule) if r.kind in ("power_ready", "go_live")]
    labels = [
        (f"[{sites[r.key]}] " if r.key in sites and not r.name.startswith(sites[r.key]) else "")
        + _label(r.name)
        + (" ⚠ slipped" if r.key in slipped_keys else "")
        for r in rows
    ]
    figure = go.Figure()
    figure.add_trace(
        go.Bar(
            y=labels,
            x=[max((r.finish - r.start).days, 0.3) * MS_PER_DAY for r in rows],
            base=[r.start.isoformat() for r in rows],
            orientation="h",
            marker={"color": [CRITICAL if r.critical else NORMAL for r in rows]},
            customdata=[
                [r.start.isoformat(), r.finish.isoformat(), (r.finish - r.start).days, r.slack_days]
                for r in rows
            ],
            hovertemplate=(
                "<b>%{y}</b><br>%{customdata[0]} → %{customdata[1]} (%{customdata[2]} days)"
                "<br>slack %{customdata[3]} days<extra></extra>"
            ),
            name="Task (red = critical path)",
        )
    )
    slack_rows = [(label, r) for label, r in zip(labels, rows, strict=True) if r.slack_days > 0]
    if slack_rows:
        figure.add_trace(
            go.Bar(
                y=[label for label, _ in slack_rows],
                x=[r.slack_days * MS_PER_DAY for _, r in slack_rows],
                base=[r.finish.isoformat() for _, r in slack_rows],
                orientation="h",
                marker={"color": SLACK},
                hovertemplate="slack %{customdata} days<extra></extra>",
                customdata=[r.slack_days for _, r in slack_rows],
                name="Slack",
            )
        )
    figure.add_trace(
        go.Scatter(
            y=[_label(m.name) for m in milestones],
            x=[m.start.isoformat() for m in milestones],
            mode="markers+text",
            text=[m.start.isoformat() for m in milestones],
            textposition="middle right",
            marker={"symbol": "diamond", "size": 14, "color": "#111827"},
            hovertemplate="<b>%{y}</b>: %{x|%Y-%m-%d}<extra></extra>",
            name="Milestone",
        )
    )
    go_live = schedule.go_live
    lines = [(go_live, "Go-live", "#111827", "solid")]
    if baseline_go_live and baseline_go_live != go_live:
        lines.append((baseline_go_live, "Go-live before slips", "#6b7280", "dash"))
    if target_go_live:
        lines.append((target_go_live, "Target", "#059669", "dot"))
    for when, name, color, dash in lines:
        figure.add_shape(
            type="line", x0=when.isoformat(), x1=when.isoformat(), y0=0, y1=1, yref="paper",
            line={"color": color, "dash": dash, "width": 1.5},
        )  # fmt: skip
        figure.add_annotation(
            x=when.isoformat(), y=1, yref="paper", text=f"{name} {when}", showarrow=False,
            yanchor="bottom", font={"size": 11, "color": color},
        )  # fmt: skip
    order = [m for m in labels] + [_label(m.name) for m in milestones]
    start = min(r.earliest_start for r in schedule.tasks) - timedelta(days=3)
    end = max([go_live, *(d for d in (target_go_live, baseline_go_live) if d)]) + timedelta(days=10)
    figure.update_layout(
        barmode="overlay",
        xaxis={"type": "date", "range": [start.isoformat(), end.isoformat()]},
        yaxis={"categoryorder": "array", "categoryarray": order[::-1], "automargin": True},
        font=FONT,
        margin={"l": 20, "r": 30, "t": 50, "b": 50},
        height=max(360, 26 * len(order) + 140),
        template="plotly_white",
        legend={"orientation": "h", "y": -0.12},
    )
    return figure.to_json()
