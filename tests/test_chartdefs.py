"""One chart definition: the TCO tornado the page draws with Plotly and the one the report PDF
draws as SVG carry the same title, axis label, driver labels and values."""

import json
import re
from html import unescape

import pytest

from planner import chartdefs
from planner.facility.charts import cumulative_cost_figure, monte_carlo_figure, tornado_figure
from planner.labels import DRIVER_LABELS
from planner.pdf import context as pdf_context
from planner.pdf.samples import sample_snapshot

ROWS = [
    {"driver": "server_price_usd", "low_input": 200000.0, "high_input": 300000.0,
     "low_value_amount": 412345.0, "high_value_amount": -98765.4, "base_value_amount": 156789.8,
     "span_amount": 511110.4, "unit": "USD"},
    {"driver": "utilisation", "low_input": 0.48, "high_input": 0.72,
     "low_value_amount": 20500.2, "high_value_amount": 293079.4, "base_value_amount": 156789.8,
     "span_amount": 272579.2, "unit": ""},
]  # fmt: skip


def _svg_facts(svg_text: str) -> tuple[str, list[str], list[str]]:
    """(title, driver labels, bar tooltips) of an SVG tornado."""
    title = unescape(re.search(r'aria-label="([^"]*)"', svg_text).group(1))
    tips = [unescape(t) for t in re.findall(r"<title>([^<]*)</title>", svg_text)]
    texts = [unescape(t) for t in re.findall(r">([^<>]+)</text>", svg_text)]
    return title, texts, tips


def test_web_and_pdf_tornado_share_title_labels_and_values():
    spec = chartdefs.tco_tornado(ROWS, "USD")
    web = json.loads(tornado_figure({"tornado": ROWS}))
    pdf_title, pdf_texts, pdf_tips = _svg_facts(
        pdf_context.report_charts({**_snapshot_with(ROWS)})["tornado"].svg
    )

    # Title and axis label: the same words on both.
    assert web["layout"]["title"]["text"] == pdf_title == spec.title
    assert spec.title == "Sensitivity: NPV saved by owning vs on-demand (base 156,790 USD)"
    assert web["layout"]["xaxis"]["title"]["text"] == spec.x_label
    assert spec.x_label in pdf_texts and spec.title in pdf_texts
    assert "Sensitivity of the owned cost" not in pdf_texts  # the old, wrong PDF title

    # Driver labels: the same, widest first (Plotly lists bottom-up).
    labels = [DRIVER_LABELS.get(r["driver"], r["driver"]) for r in ROWS]
    low, high = web["data"]
    assert list(reversed(low["y"])) == labels == [b.label for b in spec.bars]
    assert all(label in pdf_texts for label in labels)

    # Values: each bar's ends, base-relative in Plotly, exact in the SVG's tooltips.
    base = spec.base_amount
    assert low["base"] == high["base"] == base
    ends = [(r["low_value_amount"], r["high_value_amount"]) for r in ROWS]
    web_ends = [(base + lo, base + hi) for lo, hi in zip(low["x"], high["x"], strict=True)]
    assert list(reversed(web_ends)) == [pytest.approx(e, abs=1e-6) for e in ends]
    hover = [(a[2], b[2]) for a, b in zip(low["customdata"], high["customdata"], strict=True)]
    assert list(reversed(hover)) == ends  # the exact values the hover prints
    assert pdf_tips == [
        f"{label}: {lo:,.0f} USD to {hi:,.0f} USD"
        for label, (lo, hi) in zip(
            labels, [(r["low_value_amount"], r["high_value_amount"]) for r in ROWS], strict=True
        )
    ]


def _snapshot_with(rows: list[dict]) -> dict:
    snapshot = sample_snapshot(bom_lines=2, months=24)
    snapshot["tco"]["tornado"] = rows
    return snapshot


def test_no_bars_no_tornado():
    assert chartdefs.tco_tornado([], "USD") is None
    assert "tornado" not in pdf_context.report_charts(_snapshot_with([]))


# --- Cumulative cost and Monte Carlo: one definition, two renderings ---------------------------


def _polylines(svg_text: str) -> list[list[tuple[float, float]]]:
    """The points of each polyline of an SVG, in drawing order."""
    return [
        [tuple(float(c) for c in p.split(",")) for p in points.split()]
        for points in re.findall(r'<polyline [^>]*points="([^"]*)"', svg_text)
    ]


def _assert_same_values(traces: list[dict], series: list[tuple[float, ...]], svg_text: str):
    """Plotly's y are the definition's values, and the SVG's lines draw those values on one
    linear scale (fitted through the first series' smallest and largest value)."""
    polylines = _polylines(svg_text)
    assert len(traces) == len(series) == len(polylines)
    values, ys = list(series[0]), [y for _, y in polylines[0]]
    lo, hi = values.index(min(values)), values.index(max(values))
    b = (ys[hi] - ys[lo]) / (values[hi] - values[lo])
    a = ys[lo] - b * values[lo]
    for trace, values, points in zip(traces, series, polylines, strict=True):
        assert trace["y"] == pytest.approx(list(values))
        drawn = [a + b * v for v in values]
        assert [y for _, y in points] == pytest.approx(drawn, abs=0.2)  # drawn to 0.1 px


def _rendered(figure, chart: str):
    """(stored TCO section, Plotly figure, SVG, SVG title, SVG texts) of the sample snapshot."""
    snapshot = sample_snapshot(bom_lines=2, months=24)
    svg_text = pdf_context.report_charts(snapshot)[chart].svg
    title, texts, _ = _svg_facts(svg_text)
    return snapshot["tco"], json.loads(figure(snapshot["tco"])), svg_text, title, texts


def test_web_and_pdf_cumulative_cost_share_title_series_and_values():
    tco, web, svg_text, title, texts = _rendered(cumulative_cost_figure, "cumulative")
    spec = chartdefs.tco_cumulative(tco)
    assert web["layout"]["title"]["text"] == title == spec.title
    assert web["layout"]["yaxis"]["title"]["text"] == spec.y_label and spec.y_label in texts
    lines = [t for t in web["data"] if t["mode"] == "lines"]
    assert (
        [t["name"] for t in lines]
        == [x.label for x in spec.lines]
        == [o["label"] for o in tco["options"]]
    )
    assert all(x.label in texts for x in spec.lines)
    stored = [tuple(float(v) for v in o["cumulative_amount"]) for o in tco["options"]]
    assert [x.values_amount for x in spec.lines] == stored
    _assert_same_values(lines, stored, svg_text)


def test_web_and_pdf_monte_carlo_share_title_bands_and_values():
    tco, web, svg_text, title, texts = _rendered(monte_carlo_figure, "bands")
    spec = chartdefs.tco_monte_carlo(tco)
    assert web["layout"]["title"]["text"] == title == spec.title
    assert title.startswith("Monte Carlo, 10,000 paths: owning is cheaper in 41%")
    assert spec.bands[0].label == "Cloud on-demand" and spec.bands[1].label.startswith("Owned at ")
    medians = [t for t in web["data"] if t["name"].endswith(" P50")]
    assert [t["name"] for t in medians] == [f"{b.label} P50" for b in spec.bands]
    assert all(f"{b.label} P10–P90" in texts for b in spec.bands)
    mc = tco["monte_carlo"]
    stored = [tuple(float(v) for v in mc[f"{k}_p50_amount"]) for k in ("cloud", "owned")]
    assert [b.p50_amount for b in spec.bands] == stored
    _assert_same_values(medians, stored, svg_text)  # the SVG's polylines: one P50 per band


def test_no_options_no_cumulative_chart():
    assert chartdefs.tco_cumulative({"options": [], "months": []}) is None
    assert chartdefs.tco_monte_carlo({"options": [], "monte_carlo": {}}) is None


# --- Timeline Gantt: one definition, two renderings --------------------------------------------


def _two_site_timeline() -> dict:
    """A timeline section as ``TimelineReport.section()`` gives it (and the snapshot stores)."""

    def task(key, name, kind, start, finish, site="", critical=False, slack=0):
        return {"key": key, "name": name, "kind": kind, "start": start, "finish": finish,
                "critical": critical, "site": site, "slack_days": slack}  # fmt: skip

    return {
        "available": True,
        "go_live": "2027-06-20",
        "baseline_go_live": "2027-06-10",
        "target_go_live": "2027-07-01",
        "tasks": [
            task("power_ready@fra", "Facility power ready", "power_ready", "2027-03-01",
                 "2027-03-01", "Frankfurt"),
            task("power_ready@ash", "Facility power ready", "power_ready", "2027-04-15",
                 "2027-04-15", "Ashburn"),
            task("srv-ash:lead_time", "DGX B200: lead time", "lead_time", "2027-01-04",
                 "2027-04-04", "Ashburn", critical=True),
            task("srv-fra:lead_time", "DGX B200: lead time", "lead_time", "2027-01-04",
                 "2027-03-15", "Frankfurt", slack=20),
            task("srv-fra:transit", "DGX B200: transit", "transit", "2027-03-15", "2027-03-20",
                 "Frankfurt", slack=20),
            task("install@fra", "Installation", "install", "2027-03-20", "2027-04-01",
                 "Frankfurt", slack=20),
            task("install@ash", "Installation", "install", "2027-04-15", "2027-06-01",
                 "Ashburn", critical=True),
            task("go_live", "Go-live (last site ready)", "go_live", "2027-06-20", "2027-06-20"),
        ],
    }  # fmt: skip


def test_web_and_pdf_gantt_share_title_bars_dates_and_milestones():
    from datetime import date

    from sourcing.charts import gantt_figure

    section = _two_site_timeline()
    spec = chartdefs.timeline_gantt(section)
    # Grouped by site (Frankfurt first seen), one row per item with its stages as segments,
    # one row for each site's installation and burn-in; milestones not bars.
    assert [t.label for t in spec.tasks] == [
        "[Frankfurt] DGX B200", "[Frankfurt] Installation and burn-in", "[Ashburn] DGX B200",
        "[Ashburn] Installation and burn-in",
    ]  # fmt: skip
    assert [[(s.stage, s.start, s.finish) for s in t.segments] for t in spec.tasks][0] == [
        ("Supplier lead time", date(2027, 1, 4), date(2027, 3, 15)),
        ("Transit", date(2027, 3, 15), date(2027, 3, 20)),
    ]
    assert [(m.kind, m.label, m.when) for m in spec.milestones] == [
        ("power_ready", "Power ready: Frankfurt", date(2027, 3, 1)),
        ("power_ready", "Power ready: Ashburn", date(2027, 4, 15)),
        ("go_live", "Go-live", date(2027, 6, 20)),
        ("baseline", "Go-live before slips", date(2027, 6, 10)),
        ("target", "Target", date(2027, 7, 1)),
    ]

    web = json.loads(gantt_figure(spec))
    snapshot = sample_snapshot(bom_lines=2, months=24)
    snapshot["timeline"] = {**snapshot["timeline"], **section}
    pdf = pdf_context.report_charts(snapshot)["gantt"].svg
    pdf_title, pdf_texts, pdf_tips = _svg_facts(pdf)

    # Title: the same on both.
    assert web["layout"]["title"]["text"] == pdf_title == spec.title
    assert spec.title == "Timeline to go-live (2027-06-20)"

    # Segments: the same rows, stages, dates and critical flags on both.
    bars = [t for t in web["data"] if t.get("type") == "bar"]
    outline = next(t for t in bars if t["name"] == "Critical path (outlined)")
    outlined = set(zip(outline["y"], outline["base"], strict=True))

    def web_segments():
        for trace in bars:
            if trace["name"] in ("Slack", "Critical path (outlined)"):
                continue
            for y, c in zip(trace["y"], trace["customdata"], strict=True):
                yield (y.replace("<br>", " "), c[5], c[0], c[1], (y, c[0]) in outlined)

    expected = {
        (t.label, s.stage, s.start.isoformat(), s.finish.isoformat(), s.critical)
        for t in spec.tasks
        for s in t.segments
    }
    assert set(web_segments()) == expected
    bar_tips = {t for t in pdf_tips if "→" in t}
    assert bar_tips == {f"{r} — {s}: {a} → {b}" for r, s, a, b, _ in expected}
    outlined = ['stroke="#c0392b"' in r for r in re.findall(r'<rect class="bar"[^>]*>', pdf)]
    assert sorted(outlined) == sorted(c for *_, c in expected) and any(outlined)

    # Milestones: every one on both, with its date.
    web_marks = {a["text"] for a in web["layout"]["annotations"]}
    points = next(d for d in web["data"] if d.get("name") == "Milestone")
    web_marks |= {
        f"{y.replace('<br>', ' ')} {x}" for y, x in zip(points["y"], points["x"], strict=True)
    }
    pdf_marks = {" ".join(t.rsplit(": ", 1)) for t in pdf_tips if "→" not in t}
    expected = {f"{m.label} {m.when}" for m in spec.milestones}
    assert web_marks == expected
    assert expected <= pdf_marks and expected <= set(pdf_texts)


def test_no_tasks_no_gantt():
    assert chartdefs.timeline_gantt({"tasks": []}) is None
    snapshot = sample_snapshot(bom_lines=2, months=24)
    snapshot["timeline"] = {**snapshot["timeline"], "tasks": []}
    assert "gantt" not in pdf_context.report_charts(snapshot)
