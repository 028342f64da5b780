"""A small static-SVG chart renderer for PDFs: line, stacked bar, fan (band), range bars, Gantt.

Plain Python, no Django and no network: each function takes numbers and labels and returns
an ``<svg>`` string that WeasyPrint draws inline. Every label passes through :func:`esc`, so
text from users (workload names, supplier names) can never become markup. Fonts are left to
the document (DejaVu Sans through fontconfig).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from xml.sax.saxutils import escape

from planner.engine.chart_layout import round_step

PALETTE = ("#1f5f8b", "#d9822b", "#3a8f5c", "#8e5ea2", "#c0392b", "#5d6d7e", "#b7950b")
AXIS = "#555"
GRID = "#ddd"
FONT = 'font-family="DejaVu Sans, sans-serif"'


def esc(text: object) -> str:
    """Text safe inside SVG elements and attributes."""
    return escape(str(text), {'"': "&quot;", "'": "&#39;"})


@dataclass(frozen=True, slots=True)
class Series:
    """One named line or bar series (``None`` values are gaps)."""

    label: str
    values: Sequence[float | None]


@dataclass(frozen=True, slots=True)
class Band:
    """A fan: low and high bounds and a middle line (e.g. P10, P90 and P50)."""

    label: str
    low: Sequence[float]
    mid: Sequence[float]
    high: Sequence[float]


@dataclass(frozen=True, slots=True)
class RangeBar:
    """A horizontal bar from ``low`` to ``high`` (a tornado bar)."""

    label: str
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class GanttSegment:
    """One stage of a Gantt row, in its stage's colour (outlined in red on the critical path)."""

    stage: str
    start: date
    finish: date
    color: str
    critical: bool = False


@dataclass(frozen=True, slots=True)
class GanttBar:
    """One row from ``start`` to ``finish``; critical rows are drawn in the accent colour, or
    the row's stages as segments when it has them."""

    label: str
    start: date
    finish: date
    critical: bool = False
    segments: tuple[GanttSegment, ...] = ()


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering ``[low, high]`` (1-2-5 steps): the first tick is at or below
    ``low`` and the last at or above ``high``, so nothing drawn on the scale leaves the axis."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    step = round_step((high - low) / max(count, 1))
    first = math.floor(low / step)
    last = math.ceil(high / step)
    return [round(k * step, 10) for k in range(first, last + 1)]


def finite(value: float | None) -> float | None:
    """The value, or ``None`` when it is missing or not a finite number (a gap, never drawn)."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


CHAR_W = 0.6  # DejaVu Sans' widest common glyphs are about 0.6 em: a safe width estimate


def _centred(x: float, text: str, font_size: float, width: float) -> str:
    """``x`` and ``text-anchor`` of a label centred on ``x``, moved in from the chart's edges
    when half of it would hang outside (the last month of a time axis)."""
    half = CHAR_W * font_size * len(text) / 2
    if x + half > width - 1:
        return f'x="{width - 1:.1f}" text-anchor="end"'
    if x - half < 1:
        return 'x="1.0" text-anchor="start"'
    return f'x="{x:.1f}" text-anchor="middle"'


def _room(width_px: float, font_size: float) -> int:
    """How many characters fit in ``width_px`` at ``font_size`` (at least one)."""
    return max(int(width_px / (CHAR_W * font_size)), 1)


def fit_text(text: object, width_px: float, font_size: float) -> str:
    """The text, cut with an ellipsis so that it is at most ``width_px`` wide."""
    text = str(text)
    room = _room(width_px, font_size)
    return text if len(text) <= room else text[: max(room - 1, 0)] + "…"


def wrap_text(text: object, width_px: float, font_size: float) -> list[str]:
    """The text in lines at most ``width_px`` wide, broken between words (a word longer than
    a line is broken inside): nothing is left out."""
    room = _room(width_px, font_size)
    lines: list[str] = []
    for word in str(text).split():
        while len(word) > room:
            if lines and len(lines[-1]) + 1 < room:
                cut = room - len(lines[-1]) - 1
                lines[-1], word = f"{lines[-1]} {word[:cut]}", word[cut:]
            else:
                lines.append(word[:room])
                word = word[room:]
        if lines and len(lines[-1]) + 1 + len(word) <= room:
            lines[-1] += " " + word
        elif word:
            lines.append(word)
    return lines or [""]


def short_number(value: float) -> str:
    """1 234 567 → "1.2M"; for axis labels."""
    size = abs(value)
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if size >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


class _Frame:
    """Plot area and scales of one chart."""

    def __init__(self, width: int, height: int, left: int = 64, right: int = 16,
                 top: int = 34, bottom: int = 42) -> None:  # fmt: skip
        self.width, self.height = width, height
        self.x0, self.x1 = left, width - right
        self.y0, self.y1 = height - bottom, top  # y0 is the bottom (screen y grows down)

    def sx(self, value: float, low: float, high: float) -> float:
        span = (high - low) or 1.0
        return self.x0 + (value - low) / span * (self.x1 - self.x0)

    def sy(self, value: float, low: float, high: float) -> float:
        span = (high - low) or 1.0
        return self.y0 - (value - low) / span * (self.y0 - self.y1)


def _open(width: int, height: int, title: str, frame: _Frame | None = None) -> list[str]:
    # data-plot-area (left top right bottom) lets a test hold every bar to its plot area.
    area = f' data-plot-area="{frame.x0} {frame.y1} {frame.x1} {frame.y0}"' if frame else ""
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{esc(title)}"{area}>',
        f'<text x="8" y="18" font-size="13" font-weight="bold" {FONT}>{esc(title)}</text>',
    ]


def _y_axis(out: list[str], frame: _Frame, ticks: list[float], label: str) -> None:
    low, high = ticks[0], ticks[-1]
    for t in ticks:
        y = frame.sy(t, low, high)
        out.append(f'<line x1="{frame.x0}" y1="{y:.1f}" x2="{frame.x1}" y2="{y:.1f}" '
                   f'stroke="{GRID}" stroke-width="0.6"/>')  # fmt: skip
        out.append(f'<text x="{frame.x0 - 4}" y="{y + 3:.1f}" font-size="9" text-anchor="end" '
                   f'{FONT}>{esc(short_number(t))}</text>')  # fmt: skip
    out.append(f'<line x1="{frame.x0}" y1="{frame.y0}" x2="{frame.x0}" y2="{frame.y1}" '
               f'stroke="{AXIS}" stroke-width="0.8"/>')  # fmt: skip
    if label:
        mid = (frame.y0 + frame.y1) / 2
        out.append(f'<text x="12" y="{mid:.1f}" font-size="9" text-anchor="middle" '
                   f'transform="rotate(-90 12 {mid:.1f})" {FONT}>{esc(label)}</text>')  # fmt: skip


def _x_labels(out: list[str], frame: _Frame, positions: list[tuple[float, str]], label: str):
    out.append(f'<line x1="{frame.x0}" y1="{frame.y0}" x2="{frame.x1}" y2="{frame.y0}" '
               f'stroke="{AXIS}" stroke-width="0.8"/>')  # fmt: skip
    for x, text in positions:
        out.append(f'<text {_centred(x, str(text), 9, frame.width)} y="{frame.y0 + 12}" '
                   f'font-size="9" {FONT}>{esc(text)}</text>')  # fmt: skip
    if label:
        out.append(f'<text x="{(frame.x0 + frame.x1) / 2:.1f}" y="{frame.height - 6}" '
                   f'font-size="9" text-anchor="middle" {FONT}>{esc(label)}</text>')  # fmt: skip


LEGEND_ROW = 13


def _legend_lines(label: object, width: int, left: int = 64) -> list[str]:
    """A legend entry in lines as wide as the chart allows (the swatch and a margin take
    20 px): a long one wraps, whole, instead of being cut."""
    return wrap_text(label, width - left - 20 - 8, 9)


def _legend_layout(labels: Sequence[str], width: int, left: int = 64) -> list[tuple[float, int]]:
    """(x, row) of each legend entry, wrapping onto new rows within ``width``; an entry of
    several lines has its rows to itself."""
    positions, x, row = [], float(left), 0
    for label in labels:
        lines = _legend_lines(label, width, left)
        span = 22 + CHAR_W * 9 * max(len(line) for line in lines)
        if (x + span > width - 8 or len(lines) > 1) and x > left:
            x, row = float(left), row + 1
        positions.append((x, row))
        x += span
        if len(lines) > 1:
            x, row = width, row + len(lines) - 1  # the next entry starts a new row
    return positions


def _legend_rows(labels: Sequence[str], width: int) -> int:
    layout = _legend_layout(labels, width)
    if not layout or not any(labels):
        return 0
    return layout[-1][1] + len(_legend_lines(labels[-1], width))


def _legend(out: list[str], frame: _Frame, labels: Sequence[str]) -> None:
    """Legend entries in rows between the title and the plot area."""
    for i, ((x, row), label) in enumerate(zip(_legend_layout(labels, frame.width), labels,
                                              strict=True)):  # fmt: skip
        color = PALETTE[i % len(PALETTE)]
        y = 24 + row * LEGEND_ROW
        lines = _legend_lines(label, frame.width)
        spans = esc(lines[0]) if len(lines) == 1 else "".join(
            f'<tspan x="{x + 12:.1f}" y="{y + 8 + LEGEND_ROW * k}">{esc(line)}</tspan>'
            for k, line in enumerate(lines)
        )  # fmt: skip
        out.append(f'<rect x="{x:.1f}" y="{y}" width="9" height="9" fill="{color}"/>')
        out.append(f'<text x="{x + 12:.1f}" y="{y + 8}" font-size="9" {FONT}>{spans}</text>')


def _top(labels: Sequence[str], width: int) -> int:
    return 34 + LEGEND_ROW * max(_legend_rows(labels, width) - 1, 0) + (
        6 if _legend_rows(labels, width) else 0)  # fmt: skip


def _x_tick_positions(count: int, frame: _Frame, names: Sequence[str], every: int | None):
    if count == 0:
        return []
    step = every or max(1, math.ceil(count / 10))
    return [(frame.sx(i, 0, max(count - 1, 1)), str(names[i])) for i in range(0, count, step)]


def line_chart(x_labels: Sequence[str], series: Sequence[Series], *, title: str,
               y_label: str = "", x_label: str = "", width: int = 640, height: int = 280,
               label_every: int | None = None) -> str:  # fmt: skip
    """Lines over shared x positions (one point per label)."""
    labels = [x.label for x in series]
    height += _top(labels, width) - 34
    frame = _Frame(width, height, top=_top(labels, width))
    values = [v for s in series for v in map(finite, s.values) if v is not None]
    ticks = nice_ticks(min(values + [0.0]), max(values + [1.0]))
    low, high = ticks[0], ticks[-1]
    out = _open(width, height, title, frame)
    _y_axis(out, frame, ticks, y_label)
    count = len(x_labels)
    _x_labels(out, frame, _x_tick_positions(count, frame, x_labels, label_every), x_label)
    for i, s in enumerate(series):
        points, path = [], []
        for j, v in enumerate(map(finite, s.values)):
            if v is None:
                if points:
                    path.append(points)
                points = []
                continue
            points.append(f"{frame.sx(j, 0, max(count - 1, 1)):.1f},{frame.sy(v, low, high):.1f}")
        if points:
            path.append(points)
        for segment in path:
            out.append(f'<polyline fill="none" stroke="{PALETTE[i % len(PALETTE)]}" '
                       f'stroke-width="1.6" points="{" ".join(segment)}"/>')  # fmt: skip
    _legend(out, frame, [s.label for s in series])
    out.append("</svg>")
    return "".join(out)


def stacked_bar_chart(categories: Sequence[str], stacks: Sequence[Series], *, title: str,
                      y_label: str = "", x_label: str = "", width: int = 640,
                      height: int = 280) -> str:  # fmt: skip
    """Bars per category, each stacked from the series: positive parts upwards from zero,
    negative parts (a credit, a resale) downwards from it; missing values draw nothing."""
    labels = [x.label for x in stacks] if any(x.label for x in stacks) else []
    height += _top(labels, width) - 34
    frame = _Frame(width, height, top=_top(labels, width))

    def part(s: Series, i: int) -> float:
        return (finite(s.values[i]) if i < len(s.values) else None) or 0.0

    ups = [sum(max(part(s, i), 0.0) for s in stacks) for i in range(len(categories))]
    downs = [sum(min(part(s, i), 0.0) for s in stacks) for i in range(len(categories))]
    ticks = nice_ticks(min(downs + [0.0]), max(ups + [1.0]))
    low, high = ticks[0], ticks[-1]
    out = _open(width, height, title, frame)
    _y_axis(out, frame, ticks, y_label)
    n = max(len(categories), 1)
    slot = (frame.x1 - frame.x0) / n
    bar = slot * 0.7
    positions = []
    for i, name in enumerate(categories):
        x = frame.x0 + slot * i + (slot - bar) / 2
        above = below = 0.0
        for k, s in enumerate(stacks):
            value = part(s, i)
            if value == 0:
                continue
            if value > 0:
                start, above = above, above + value
                y_top, y_bottom = frame.sy(above, low, high), frame.sy(start, low, high)
            else:
                start, below = below, below + value
                y_top, y_bottom = frame.sy(start, low, high), frame.sy(below, low, high)
            out.append(f'<rect class="bar" x="{x:.1f}" y="{y_top:.1f}" width="{bar:.1f}" '
                       f'height="{max(y_bottom - y_top, 0.3):.1f}" '
                       f'fill="{PALETTE[k % len(PALETTE)]}"/>')  # fmt: skip
        positions.append((x + bar / 2, name))
    step = max(1, math.ceil(len(categories) / 12))
    shown = positions[::step]
    room = slot * step - 4  # a label may use its own slot and the skipped ones beside it
    _x_labels(out, frame, [(x, fit_text(name, room, 9)) for x, name in shown], x_label)
    if low < 0:  # the zero line the negative parts hang from
        y = frame.sy(0.0, low, high)
        out.append(f'<line x1="{frame.x0}" y1="{y:.1f}" x2="{frame.x1}" y2="{y:.1f}" '
                   f'stroke="{AXIS}" stroke-width="0.8"/>')  # fmt: skip
    if labels:
        _legend(out, frame, labels)
    out.append("</svg>")
    return "".join(out)


def band_chart(x_labels: Sequence[str], bands: Sequence[Band], *, title: str, y_label: str = "",
               x_label: str = "", width: int = 640, height: int = 280,
               label_every: int | None = None) -> str:  # fmt: skip
    """Fans: a translucent area between low and high and a solid middle line per band."""
    labels = [x.label for x in bands]
    height += _top(labels, width) - 34
    frame = _Frame(width, height, top=_top(labels, width))
    values = [v for b in bands for v in map(finite, (*b.low, *b.high)) if v is not None]
    ticks = nice_ticks(min(values + [0.0]), max(values + [1.0]))
    low, high = ticks[0], ticks[-1]
    out = _open(width, height, title, frame)
    _y_axis(out, frame, ticks, y_label)
    count = len(x_labels)
    _x_labels(out, frame, _x_tick_positions(count, frame, x_labels, label_every), x_label)
    last = max(count - 1, 1)
    for i, b in enumerate(bands):
        color = PALETTE[i % len(PALETTE)]
        # Months whose three figures are all numbers; a missing one leaves the fan out there.
        triples = enumerate(zip(b.low, b.mid, b.high, strict=False))
        kept = [(j, lo, mi, hi) for j, (lo, mi, hi) in triples
                if None not in (finite(lo), finite(mi), finite(hi))]  # fmt: skip
        upper = [f"{frame.sx(j, 0, last):.1f},{frame.sy(hi, low, high):.1f}"
                 for j, _, _, hi in kept]  # fmt: skip
        lower = [f"{frame.sx(j, 0, last):.1f},{frame.sy(lo, low, high):.1f}"
                 for j, lo, _, _ in kept]  # fmt: skip
        out.append(f'<polygon points="{" ".join(upper + lower[::-1])}" fill="{color}" '
                   f'fill-opacity="0.22" stroke="none"/>')  # fmt: skip
        mid = [f"{frame.sx(j, 0, last):.1f},{frame.sy(mi, low, high):.1f}"
               for j, _, mi, _ in kept]  # fmt: skip
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6" '
                   f'points="{" ".join(mid)}"/>')  # fmt: skip
    _legend(out, frame, [b.label for b in bands])
    out.append("</svg>")
    return "".join(out)


def range_bar_chart(bars: Sequence[RangeBar], *, title: str, base: float | None = None,
                    x_label: str = "", width: int = 640, height: int | None = None,
                    tips: Sequence[str] = ()) -> str:  # fmt: skip
    """Horizontal bars from low to high, widest first as given (a tornado chart). The label
    column is as wide as the longest label needs, up to 40 % of the chart (longer ones are cut
    with an ellipsis); a bar with a missing end is left out."""
    row = 22
    height = max(height or 0, 60 + row * max(len(bars), 1))  # room for every bar
    longest = max((len(str(b.label)) for b in bars), default=0)
    left = int(min(max(CHAR_W * 9 * longest + 12, 80), width * 0.4))
    frame = _Frame(width, height, left=left, top=30, bottom=34)
    bars = [b if finite(b.low) is not None and finite(b.high) is not None else None for b in bars]
    values = [v for b in bars if b for v in (b.low, b.high)]
    values += [base] if finite(base) is not None else []
    ticks = nice_ticks(min(values + [0.0]), max(values + [1.0]))
    low, high = ticks[0], ticks[-1]
    out = _open(width, height, title, frame)
    for t in ticks:
        x = frame.sx(t, low, high)
        out.append(f'<line x1="{x:.1f}" y1="{frame.y1}" x2="{x:.1f}" y2="{frame.y0}" '
                   f'stroke="{GRID}" stroke-width="0.6"/>')  # fmt: skip
        out.append(f'<text {_centred(x, short_number(t), 9, width)} y="{frame.y0 + 12}" '
                   f'font-size="9" {FONT}>{esc(short_number(t))}</text>')  # fmt: skip
    for i, b in enumerate(bars):
        if b is None:
            continue
        y = frame.y1 + 4 + i * row
        x_lo, x_hi = sorted((frame.sx(b.low, low, high), frame.sx(b.high, low, high)))
        x_lo = min(x_lo, frame.x1 - 0.5)  # an empty bar at the right end stays inside
        tip = f"<title>{esc(tips[i])}</title>" if i < len(tips) else ""
        out.append(f'<rect class="bar" x="{x_lo:.1f}" y="{y:.1f}" '
                   f'width="{max(x_hi - x_lo, 0.5):.1f}" height="{row - 8}" '
                   f'fill="{PALETTE[0]}">{tip}</rect>')  # fmt: skip
        out.append(f'<text x="{frame.x0 - 6}" y="{y + row / 2:.1f}" font-size="9" '
                   f'text-anchor="end" {FONT}>{esc(fit_text(b.label, frame.x0 - 10, 9))}'
                   "</text>")  # fmt: skip
    if finite(base) is not None:
        x = frame.sx(base, low, high)
        out.append(f'<line x1="{x:.1f}" y1="{frame.y1}" x2="{x:.1f}" y2="{frame.y0}" '
                   f'stroke="{PALETTE[4]}" stroke-width="1.2"/>')  # fmt: skip
    if x_label:
        out.append(f'<text x="{(frame.x0 + frame.x1) / 2:.1f}" y="{height - 6}" font-size="9" '
                   f'text-anchor="middle" {FONT}>{esc(x_label)}</text>')  # fmt: skip
    out.append("</svg>")
    return "".join(out)


def tornado_chart(spec, *, width: int = 640) -> str:
    """A tornado defined once in :mod:`planner.chartdefs` (the page draws it with Plotly): its
    title, axis label and bars; each bar's exact ends in its tooltip (``<title>``)."""
    bars = [RangeBar(b.label, b.low_amount, b.high_amount) for b in spec.bars]
    tips = [f"{b.label}: {spec.value_text(b.low_amount)} to {spec.value_text(b.high_amount)}"
            for b in spec.bars]  # fmt: skip
    return range_bar_chart(bars, title=spec.title, base=spec.base_amount, x_label=spec.x_label,
                           width=width, tips=tips)  # fmt: skip


MILESTONE_COLORS = {"go_live": PALETTE[2], "power_ready": "#111827", "baseline": "#6b7280",
                    "target": "#059669"}  # fmt: skip


GANTT_LABEL_LINE = 10  # px between the lines of a wrapped row label (font 8)


def gantt_chart(bars: Sequence[GanttBar], *, title: str, milestone: date | None = None,
                milestone_label: str = "", width: int = 640,
                milestones: Sequence[tuple[date, str, str]] = ()) -> str:  # fmt: skip
    """Rows as bars on a date axis, each row's stages as segments when it has them (named in a
    key under the chart, the critical path outlined in red); row labels in full, wrapped in
    the label column; milestones (``(date, label, kind)``: go-live, a site's power ready, the
    target) as dashed lines, named in the key (``milestone``: one go-live line labelled on
    the chart, as before)."""
    marks = list(milestones)
    if milestone:
        marks.append((milestone, milestone_label, "go_live"))
    label_width = 220 - 10
    wrapped = [wrap_text(b.label, label_width, 8) for b in bars]
    heights = [max(16, GANTT_LABEL_LINE * len(lines) + 6) for lines in wrapped]
    stages = list(dict.fromkeys((s.stage, s.color) for b in bars for s in b.segments))
    key_rows = (len(marks) if milestones else 0) + (1 if stages else 0)
    height = 54 + sum(heights or [16]) + 12 * key_rows + 16
    frame = _Frame(width, height, left=220, top=30, bottom=34 + 12 * key_rows)
    if not bars:
        out = _open(width, 60, title)
        out.append(f'<text x="8" y="40" font-size="10" {FONT}>No tasks.</text></svg>')
        return "".join(out)
    days = [m[0] for m in marks]
    start = min([b.start for b in bars] + days)
    finish = max([b.finish for b in bars] + days)
    low, high = start.toordinal(), max(finish.toordinal(), start.toordinal() + 1)
    out = _open(width, height, title, frame)
    months = []
    cursor = date(start.year, start.month, 1)
    while cursor.toordinal() <= high:
        months.append(cursor)
        cursor = date(cursor.year + (cursor.month == 12), cursor.month % 12 + 1, 1)
    step = max(1, math.ceil(len(months) / 10))
    for m in months[::step]:
        if m.toordinal() < low:
            continue
        x = frame.sx(m.toordinal(), low, high)
        out.append(f'<line x1="{x:.1f}" y1="{frame.y1}" x2="{x:.1f}" y2="{frame.y0}" '
                   f'stroke="{GRID}" stroke-width="0.6"/>')  # fmt: skip
        out.append(f'<text {_centred(x, f"{m:%Y-%m}", 8, width)} y="{frame.y0 + 12}" '
                   f'font-size="8" {FONT}>{m:%Y-%m}</text>')  # fmt: skip

    def rect(x_start: date, x_finish: date, y: float, fill: str, tip: str, extra: str = ""):
        x0 = frame.sx(x_start.toordinal(), low, high)
        x1 = frame.sx(max(x_finish.toordinal(), x_start.toordinal()), low, high)
        x0 = min(x0, frame.x1 - 1.5)  # a one-day task at the end keeps its width inside
        out.append(f'<rect class="bar" x="{x0:.1f}" y="{y:.1f}" '
                   f'width="{max(x1 - x0, 1.5):.1f}" height="11" fill="{fill}"{extra}>'
                   f"<title>{esc(tip)}</title></rect>")  # fmt: skip

    y_top = frame.y1 + 2
    for b, lines, row_height in zip(bars, wrapped, heights, strict=True):
        y = y_top + (row_height - 11) / 2
        if b.segments:
            for seg in b.segments:
                outline = ' stroke="#c0392b" stroke-width="1.2"' if seg.critical else ""
                rect(seg.start, seg.finish, y, seg.color,
                     f"{b.label} — {seg.stage}: {seg.start.isoformat()} → {seg.finish.isoformat()}",
                     f' data-stage="{esc(seg.stage)}"{outline}')  # fmt: skip
        else:
            rect(b.start, b.finish, y, PALETTE[4] if b.critical else PALETTE[0],
                 f"{b.label}: {b.start.isoformat()} → {b.finish.isoformat()}")  # fmt: skip
        first = y_top + row_height / 2 + 3 - GANTT_LABEL_LINE * (len(lines) - 1) / 2
        spans = "".join(
            f'<tspan x="{frame.x0 - 6}" y="{first + GANTT_LABEL_LINE * k:.1f}">{esc(line)}</tspan>'
            for k, line in enumerate(lines)
        )
        out.append(f'<text class="row-label" x="{frame.x0 - 6}" y="{first:.1f}" font-size="8" '
                   f'text-anchor="end" {FONT}>{spans}</text>')  # fmt: skip
        y_top += row_height
    ky = frame.y0 + 24
    if stages:
        x = frame.x0
        for stage, color in stages:
            out.append(f'<rect x="{x:.1f}" y="{ky - 8}" width="9" height="9" fill="{color}"/>'
                       f'<text x="{x + 12:.1f}" y="{ky}" font-size="8" {FONT}>{esc(stage)}</text>')  # fmt: skip
            x += 18 + CHAR_W * 8 * len(stage)
        ky += 12
    for when, label, kind in marks:
        x = frame.sx(when.toordinal(), low, high)
        color = MILESTONE_COLORS.get(kind, PALETTE[2])
        out.append(f'<line class="milestone" x1="{x:.1f}" y1="{frame.y1 - 4}" x2="{x:.1f}" '
                   f'y2="{frame.y0}" stroke="{color}" stroke-width="1.4" '
                   f'stroke-dasharray="4 2"><title>{esc(label)}: {when.isoformat()}</title>'
                   "</line>")  # fmt: skip
        if kind == "go_live":
            out.append(f'<text x="{x - 3:.1f}" y="{frame.y1 - 6}" font-size="9" '
                       f'text-anchor="end" {FONT}>{esc(label)}</text>')  # fmt: skip
        if milestones:
            out.append(f'<line x1="{frame.x0}" y1="{ky - 3}" x2="{frame.x0 + 9}" y2="{ky - 3}" '
                       f'stroke="{color}" stroke-width="1.4"/>'
                       f'<text x="{frame.x0 + 12}" y="{ky}" font-size="8" {FONT}>'
                       f"{esc(label)} {when.isoformat()}</text>")  # fmt: skip
            ky += 12
    if stages:
        out.append(f'<rect x="{frame.x0}" y="{height - 14}" width="9" height="9" fill="white" '
                   f'stroke="#c0392b" stroke-width="1.2"/><text x="{frame.x0 + 12}" '
                   f'y="{height - 6}" font-size="9" {FONT}>critical path (outlined)</text>')  # fmt: skip
    else:
        out.append(f'<rect x="{frame.x0}" y="{height - 14}" width="9" height="9" '
                   f'fill="{PALETTE[4]}"/><text x="{frame.x0 + 12}" y="{height - 6}" '
                   f'font-size="9" {FONT}>critical path</text>')  # fmt: skip
    out.append("</svg>")
    return "".join(out)
