"""The report's charts keep their bars inside the plot area and their labels inside the chart,
for long labels, negative values, large values, missing values and a go-live before the
first task. Reads the SVG coordinates; no PDF engine and no database."""

import xml.etree.ElementTree as ET
from datetime import date

import pytest

from planner.pdf import svg

NS = "{http://www.w3.org/2000/svg}"
LONG = "Colocation power, cooling and remote hands at the Frankfurt FRA-4 suite (2N feeds)"
EPS = 0.11  # coordinates are written with one decimal


def _root(chart: str) -> ET.Element:
    return ET.fromstring(chart)


def _plot_area(root: ET.Element) -> tuple[float, float, float, float]:
    left, top, right, bottom = map(float, root.get("data-plot-area").split())
    width, height = float(root.get("width")), float(root.get("height"))
    assert 0 <= left < right <= width and 20 <= top < bottom <= height, (left, top, right, bottom)
    return left, top, right, bottom


def _bars(root: ET.Element) -> list[tuple[float, float, float, float]]:
    return [
        (float(r.get("x")), float(r.get("y")), float(r.get("width")), float(r.get("height")))
        for r in root.iter(f"{NS}rect")
        if r.get("class") == "bar"
    ]


def assert_bars_inside(chart: str) -> list[tuple[float, float, float, float]]:
    root = _root(chart)
    left, top, right, bottom = _plot_area(root)
    bars = _bars(root)
    for x, y, w, h in bars:
        assert w > 0 and h > 0, (x, y, w, h)
        assert left - EPS <= x and x + w <= right + EPS, ("sideways", (x, w), (left, right))
        assert top - EPS <= y and y + h <= bottom + EPS, ("vertical", (y, h), (top, bottom))
    return bars


def assert_text_inside(chart: str) -> None:
    """Every label, at an upper-bound width estimate, is inside the chart's width."""
    root = _root(chart)
    width = float(root.get("width"))
    for text in root.iter(f"{NS}text"):
        if text.get("transform"):
            continue  # the rotated y-axis title
        size = float(text.get("font-size"))
        for piece in (text, *text.iter(f"{NS}tspan")):  # a wrapped label: one tspan a line
            span = svg.CHAR_W * size * len(piece.text or "")
            x = float(piece.get("x", text.get("x")))
            anchor = text.get("text-anchor", "start")
            start = {"start": x, "middle": x - span / 2, "end": x - span}[anchor]
            # A centred axis label may hang a little past the plot edge, never past the chart.
            assert start >= -0.5 and start + span <= width + 0.5, (piece.text, start, span, width)


def assert_numbers(chart: str) -> None:
    assert "nan" not in chart.lower() and "inf" not in chart.lower()


@pytest.mark.parametrize(
    ("low", "high"),
    [(0, 1100), (0, 1234), (-370, 80), (0, 0.3), (12, 12), (-5e9, -1e9), (0, 7.3e12), (0.1, 99)],
)
def test_ticks_cover_the_values(low, high):
    ticks = svg.nice_ticks(low, high)
    assert ticks[0] <= low and ticks[-1] >= high, ticks
    assert ticks == sorted(ticks) and len(ticks) <= 12


def test_stacked_bars_stay_inside_with_negative_large_and_missing_values():
    categories = ["Year 1", "Year 2", "Year 3", "Year 4", "Year 5"]
    stacks = [
        svg.Series("Hardware", [4.1e6, 0.0, 0.0, 0.0, 0.0]),
        svg.Series(LONG, [1.1e6, 1.15e6, 1.2e6, 1.26e6, 1.32e6]),
        svg.Series("Resale of the servers", [0.0, 0.0, 0.0, 0.0, -1.9e6]),
        svg.Series("Support", [None, float("nan"), 2e5, float("inf"), 2e5]),
    ]
    chart = svg.stacked_bar_chart(categories, stacks, title="Cost per year (USD)", y_label="USD")
    bars = assert_bars_inside(chart)
    assert_text_inside(chart)
    assert_numbers(chart)
    assert len(bars) == 1 + 5 + 1 + 2  # zero and missing parts draw nothing
    # The resale hangs below the zero line, the costs stand on it.
    root = _root(chart)
    left, top, right, bottom = _plot_area(root)
    zero = [float(line.get("y1")) for line in root.iter(f"{NS}line")
            if line.get("y1") == line.get("y2") and float(line.get("y1")) < bottom]  # fmt: skip
    resale = [b for b in bars if b[1] >= max(zero) - EPS]
    assert len(resale) == 1 and resale[0][3] > 0


def test_a_total_just_past_a_round_step_stays_below_the_top():
    # 1,100 once gave ticks up to 1,000: the bar rose through the title.
    chart = svg.stacked_bar_chart(["A", "B"], [svg.Series("x", [1100.0, 300.0])], title="t")
    assert_bars_inside(chart)


def test_long_category_names_are_cut_to_their_slot():
    names = [f"{LONG} {i}" for i in range(24)]
    chart = svg.stacked_bar_chart(names, [svg.Series("", [float(i) for i in range(24)])],
                                  title="Replicas by hour")  # fmt: skip
    assert_bars_inside(chart)
    assert_text_inside(chart)


@pytest.mark.parametrize("scale", [1.0, 1e4, 3.7e9])
def test_tornado_bars_stay_inside_with_long_labels_and_negative_values(scale):
    bars = [
        svg.RangeBar(LONG, -2.5 * scale, 4.0 * scale),
        svg.RangeBar("Electricity price", -0.4 * scale, 0.9 * scale),
        svg.RangeBar("Utilisation", 1.2 * scale, 1.3 * scale),
        svg.RangeBar("Missing", float("nan"), 1.0),
    ]
    chart = svg.range_bar_chart(bars, title="Sensitivity", base=0.5 * scale, x_label="NPV",
                                height=40)  # fmt: skip  # too small: the chart grows
    drawn = assert_bars_inside(chart)
    assert_text_inside(chart)
    assert_numbers(chart)
    assert len(drawn) == 3
    assert "…" in chart  # the long label is cut, not pushed off the page


def test_gantt_bars_stay_inside_with_a_go_live_before_the_first_task():
    bars = [
        svg.GanttBar(LONG, date(2027, 3, 1), date(2027, 5, 20), critical=True),
        svg.GanttBar("Power upgrade", date(2027, 2, 1), date(2027, 8, 1)),
        svg.GanttBar("Acceptance (one day)", date(2027, 8, 1), date(2027, 8, 1)),
        svg.GanttBar("Backwards", date(2027, 6, 1), date(2027, 4, 1)),
    ]
    chart = svg.gantt_chart(bars, title="Timeline", milestone=date(2027, 1, 15),
                            milestone_label="go-live")  # fmt: skip
    assert len(assert_bars_inside(chart)) == 4
    assert_text_inside(chart)
    root = _root(chart)
    left, _, right, _ = _plot_area(root)
    dashed = [line for line in root.iter(f"{NS}line") if line.get("stroke-dasharray")]
    assert len(dashed) == 1 and left - EPS <= float(dashed[0].get("x1")) <= right + EPS


def test_line_and_band_charts_leave_missing_values_out():
    line = svg.line_chart(["1", "2", "3"], [svg.Series(LONG, [1.0, float("nan"), 3e9])],
                          title="Cumulative")  # fmt: skip
    assert_numbers(line)
    assert_text_inside(line)
    band = svg.band_chart(["1", "2", "3"],
                          [svg.Band("Owned", [1.0, float("inf"), 2.0], [2.0, 3.0, 4.0],
                                    [3.0, 4.0, 5.0])], title="Fan")  # fmt: skip
    assert_numbers(band)


def row_labels(chart: str) -> list[str]:
    """Each Gantt row's label as drawn, its wrapped lines joined."""
    return [
        " ".join(span.text for span in text.iter(f"{NS}tspan"))
        for text in _root(chart).iter(f"{NS}text")
        if text.get("class") == "row-label"
    ]


def test_gantt_labels_are_whole_wrapped_in_the_label_column_and_stages_are_segments():
    item = "PO-001 to Ashburn colocation (IAD-3 cage), the long way round via Rotterdam"
    stages = (("Supplier lead time", date(2026, 8, 6), date(2026, 9, 17)),
              ("Air transit", date(2026, 9, 17), date(2026, 9, 20)),
              ("Customs", date(2026, 9, 20), date(2026, 9, 23)))  # fmt: skip
    segments = tuple(
        svg.GanttSegment(stage, start, finish, svg.PALETTE[i], critical=i == 2)
        for i, (stage, start, finish) in enumerate(stages)
    )
    bars = [
        svg.GanttBar(item, date(2026, 8, 6), date(2026, 9, 23), True, segments),
        svg.GanttBar(LONG, date(2026, 9, 23), date(2026, 10, 3)),
    ]
    chart = svg.gantt_chart(bars, title="Timeline")
    assert row_labels(chart) == [item, LONG]  # whole: nothing cut, no ellipsis
    assert "…" not in chart
    assert_text_inside(chart)
    drawn = assert_bars_inside(chart)
    assert len(drawn) == 4 and len({round(y) for _, y, _, _ in drawn[:3]}) == 1  # one row
    # 20 characters a line at 100 px: a word longer than a line is broken, never dropped.
    assert svg.wrap_text("a " + "x" * 60, 100, 8) == ["a " + "x" * 18, "x" * 20, "x" * 20, "xx"]
    assert svg.wrap_text("", 100, 8) == [""]


def test_a_long_legend_entry_wraps_whole_and_pushes_the_plot_down():
    long_option = "Hybrid: " + ", ".join(
        f"Frankfurt colocation (FRA-{n} suite) 2 servers" for n in range(4)
    )
    chart = svg.line_chart(["1", "2"], [svg.Series("Cloud", [1.0, 2.0]),
                                        svg.Series(long_option, [2.0, 3.0])], title="Cumulative")  # fmt: skip
    assert "…" not in chart
    root = _root(chart)
    spans = [s.text for s in root.iter(f"{NS}tspan")]
    assert " ".join(spans) == long_option and len(spans) >= 2
    _, top, _, _ = _plot_area(root)
    last_line_y = max(float(s.get("y")) for s in root.iter(f"{NS}tspan"))
    assert last_line_y < top  # the legend ends above the plot area
    assert_text_inside(chart)
    assert_bars_inside(chart)
