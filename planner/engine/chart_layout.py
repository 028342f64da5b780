"""Chart layout arithmetic: round axis steps (every chart's ticks fall on 1, 2, 2.5 or 5 × 10^k,
web and PDF alike), the rows a horizontal legend takes and a title's lines at a width."""

from __future__ import annotations

import math

ROUND_MANTISSAS = (1.0, 2.0, 2.5, 5.0, 10.0)


def round_step(at_least: float, *, whole: bool = False) -> float:
    """The smallest round step (1, 2, 2.5 or 5 × 10^k) that is at least ``at_least`` (> 0);
    ``whole``: a whole number (counts: no 2.5 steps, at least 1)."""
    if not math.isfinite(at_least) or at_least <= 0:
        return 1.0
    if whole:
        at_least = max(at_least, 1.0)
    magnitude = 10 ** math.floor(math.log10(at_least))
    mantissas = (1.0, 2.0, 5.0, 10.0) if whole and magnitude < 10 else ROUND_MANTISSAS
    return next(m * magnitude for m in mantissas if m * magnitude >= at_least * (1 - 1e-12))


def is_round_step(step: float) -> bool:
    """Whether ``step`` is 1, 2, 2.5 or 5 × 10^k."""
    if not math.isfinite(step) or step <= 0:
        return False
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-9)
    return any(math.isclose(mantissa, m, rel_tol=1e-6) for m in ROUND_MANTISSAS[:-1])


def aligned_round_ranges(
    highs: list[float], intervals: tuple[int, ...] = (4, 5, 3, 6)
) -> tuple[int, list[float]]:
    """Axes from 0 that share their gridlines: one count of intervals for all, and for each axis
    a round step covering its highest value, the count chosen to waste the least height
    (ties: the earlier count in ``intervals``).

    Returns:
        (intervals, the step of each axis).
    """

    tops = [h if math.isfinite(h) and h > 0 else 1.0 for h in highs]

    def waste(n: int) -> float:
        return sum((n * round_step(h / n) - h) / (n * round_step(h / n)) for h in tops)

    best = min(intervals, key=waste)
    return best, [round_step(h / best) for h in tops]


def legend_rows(label_widths_px: list[float], width_px: float) -> int:
    """Rows a horizontal legend takes in ``width_px``: one when its entries fit side by side,
    else plotly's grid of columns as wide as the widest entry."""
    if not label_widths_px:
        return 0
    if sum(label_widths_px) <= width_px:
        return 1
    per_row = max(1, int(width_px // max(label_widths_px)))
    return math.ceil(len(label_widths_px) / per_row)


def finite_numbers(values) -> list[float]:
    """The values that are finite numbers, as floats (gaps and text left out)."""
    return [
        float(v)
        for v in values
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    ]


def wrap_words(text: str, line_chars: int) -> str:
    """``text`` in lines of at most ``line_chars`` characters, broken at spaces with Plotly's
    ``<br>`` (a word longer than a line keeps its own line); lines already broken stay so."""
    lines: list[str] = []
    for given in text.split("<br>"):
        start = len(lines)
        for word in given.split():
            if len(lines) > start and len(lines[-1]) + 1 + len(word) <= line_chars:
                lines[-1] += " " + word
            else:
                lines.append(word)
    return "<br>".join(lines)
