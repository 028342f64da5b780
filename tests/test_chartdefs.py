"""One chart definition: the TCO tornado the page draws with Plotly and the one the report PDF
draws as SVG carry the same title, axis label, driver labels and values."""

import json
import re
from html import unescape

import pytest

from planner import chartdefs
from planner.facility.charts import tornado_figure
from planner.labels import DRIVER_LABELS
from planner.pdf import context as pdf_context
from planner.pdf.samples import sample_snapshot

ROWS = [
    {"driver": "server_price_usd", "low_input": 200000.0, "high_input": 300000.0,
     "low_value_usd": 412345.0, "high_value_usd": -98765.4, "base_value_usd": 156789.8,
     "span_usd": 511110.4, "unit": "USD"},
    {"driver": "utilisation", "low_input": 0.48, "high_input": 0.72,
     "low_value_usd": 20500.2, "high_value_usd": 293079.4, "base_value_usd": 156789.8,
     "span_usd": 272579.2, "unit": ""},
]  # fmt: skip


def _svg_facts(svg_text: str) -> tuple[str, list[str], list[str]]:
    """(title, driver labels, bar tooltips) of an SVG tornado."""
    title = unescape(re.search(r'aria-label="([^"]*)"', svg_text).group(1))
    tips = [unescape(t) for t in re.findall(r"<title>([^<]*)</title>", svg_text)]
    texts = [unescape(t) for t in re.findall(r">([^<>]+)</text>", svg_text)]
    return title, texts, tips


def test_web_and_pdf_tornado_share_title_labels_and_values():
    spec = chartdefs.tco_tornado(ROWS)
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
    base = spec.base_usd
    assert low["base"] == high["base"] == base
    ends = [(r["low_value_usd"], r["high_value_usd"]) for r in ROWS]
    web_ends = [(base + lo, base + hi) for lo, hi in zip(low["x"], high["x"], strict=True)]
    assert list(reversed(web_ends)) == [pytest.approx(e, abs=1e-6) for e in ends]
    hover = [(a[2], b[2]) for a, b in zip(low["customdata"], high["customdata"], strict=True)]
    assert list(reversed(hover)) == ends  # the exact values the hover prints
    assert pdf_tips == [
        f"{label}: {lo:,.0f} USD to {hi:,.0f} USD"
        for label, (lo, hi) in zip(
            labels, [(r["low_value_usd"], r["high_value_usd"]) for r in ROWS], strict=True
        )
    ]


def _snapshot_with(rows: list[dict]) -> dict:
    snapshot = sample_snapshot(bom_lines=2, months=24)
    snapshot["tco"]["tornado"] = rows
    return snapshot


def test_no_bars_no_tornado():
    assert chartdefs.tco_tornado([]) is None
    assert "tornado" not in pdf_context.report_charts(_snapshot_with([]))
