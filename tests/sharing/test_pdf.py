"""PDFs read back with pypdf: every BOM line, the totals, page X of Y, repeated table heads,
the charts, escaping of user text, and a fetcher that loads nothing but our static files."""

import re
from decimal import Decimal

import pytest

from planner.pdf import context, svg
from planner.pdf.fetcher import BASE_URL, RefusedURL, StaticOnlyFetcher
from planner.pdf.render import html_to_pdf, render_html, render_pdf
from planner.pdf.samples import sample_snapshot
from tests.sharing.conftest import pdf_text

HEAD = {"revision_number": 1, "published_at": None, "published_by": "Dana Demo"}


@pytest.fixture(scope="module")
def quote_40():
    snapshot = sample_snapshot(bom_lines=40)
    # Suppliers and buy prices line by line: the internal cost sheet (the client's quote has
    # sell prices only, tests/sharing/test_quote_sell.py).
    doc = context.cost_sheet_context(snapshot, **HEAD)
    rendered = render_pdf("pdf/cost_sheet.html", {"doc": doc})
    return snapshot, doc, rendered


def test_the_quote_lists_every_bom_line_with_its_supplier(quote_40):
    snapshot, doc, rendered = quote_40
    text, pages, _ = pdf_text(rendered.content)
    flat = re.sub(r"\s+", " ", text)
    assert len(doc.lines) == 40
    for line in snapshot["bom"]["lines"]:
        assert line["description"] in flat, line["description"]
    assert "Lowlands Distributie B.V." in flat and "Prairie Supply Inc." in flat
    assert "Q-SAMPLE-0001-R1" in flat and "Valid until" in flat and "2026-09-02" in flat
    assert pages == rendered.pages and pages >= 2


def test_the_quote_totals_add_up_and_are_shown_per_currency_and_converted(quote_40):
    snapshot, doc, rendered = quote_40
    flat = re.sub(r"\s+", " ", pdf_text(rendered.content)[0])
    line_sum = sum(line.landed_net for line in doc.lines)
    assert line_sum == doc.total_net  # exact, before display rounding
    assert context.money_text(doc.total_net, "EUR") in flat
    assert context.money_text(doc.total_gross, "EUR") in flat
    for currency, amount in doc.totals_by_currency:
        expected = sum(
            Decimal(x["goods_original"]["amount"])
            for x in snapshot["bom"]["lines"]
            if x["goods_original"]["currency"] == currency
        )
        assert amount == expected
        assert context.money_text(amount, currency) in flat
    assert doc.total_duty > 0 and context.money_text(doc.total_duty, "EUR") in flat


def test_every_page_has_page_x_of_y_and_the_repeated_table_head(quote_40):
    _, _, rendered = quote_40
    _, pages, per_page = pdf_text(rendered.content)
    for number, page in enumerate(per_page, start=1):
        assert f"Page {number} of {pages}" in page
    flat = [re.sub(r"\s+", " ", p) for p in per_page]
    pages_with_lines = [p for p in flat if "Sample part" in p]
    assert len(pages_with_lines) >= 2
    for page in pages_with_lines:
        assert "Unit price" in page and "Landed (net)" in page  # <thead> repeated


def test_the_report_has_its_sections_and_six_charts():
    snapshot = sample_snapshot(bom_lines=40)
    doc = context.report_context(snapshot, **HEAD)
    assert set(doc.charts) >= {"cumulative", "yearly", "bands", "tornado", "gantt", "replicas"}
    html = render_html("pdf/report.html", {"doc": doc})
    assert html.count("<svg") >= 6
    rendered = render_pdf("pdf/report.html", {"doc": doc})
    text = re.sub(r"\s+", " ", pdf_text(rendered.content)[0])
    for heading in ("Executive summary", "Workloads and sizing", "Placement", "Facility checks",
                    "Total cost of ownership", "Bill of materials", "Timeline", "Risks"):  # fmt: skip
        assert heading in text, heading
    assert "Cumulative cost by option" in text  # SVG text is drawn as text
    assert rendered.refused_urls == ()


def test_the_checklist_pdf_lists_every_item():
    from planner.sharing import checklist

    snapshot = sample_snapshot(bom_lines=3)
    rendered = render_pdf("pdf/checklist.html",
                          {"doc": context.checklist_context(snapshot, **HEAD)})  # fmt: skip
    text = re.sub(r"\s+", " ", pdf_text(rendered.content)[0])
    for title in checklist.ITEM_TITLES.values():
        assert title in text, title


def test_user_text_is_escaped_in_pdfs_and_never_fetched():
    evil = '<img src="http://example.com/x.png"><script>alert(1)</script>'
    snapshot = sample_snapshot(bom_lines=2)
    snapshot["plan"]["client"]["name"] = evil
    snapshot["workloads"][0]["name"] = evil
    snapshot["bom"]["lines"][0]["description"] = evil
    snapshot["sign_offs"] = {"autoscaling": {"name": evil, "date": "2026-07-01", "note": evil}}
    snapshot.pop("checklist")
    for template, build in (("pdf/quote.html", context.quote_context),
                            ("pdf/cost_sheet.html", context.cost_sheet_context),
                            ("pdf/report.html", context.report_context),
                            ("pdf/checklist.html", context.checklist_context)):  # fmt: skip
        doc = build(snapshot, **HEAD)
        html = render_html(template, {"doc": doc})
        assert '<img src="http://example.com' not in html and "<script>alert" not in html
        rendered = render_pdf(template, {"doc": doc})
        assert rendered.refused_urls == ()  # escaped text, so nothing to fetch
        assert "<script>alert(1)</script>" in pdf_text(rendered.content)[0].replace("\n", "")


def test_the_fetcher_serves_only_our_static_files():
    fetcher = StaticOnlyFetcher()
    css = fetcher.fetch(BASE_URL + "static/css/pdf.css")
    assert b"@page" in css.read()
    for url in ("http://example.com/x.css", "https://example.com/static/css/pdf.css",
                "file:///etc/passwd", BASE_URL + "static/../../manage.py",
                BASE_URL + "etc/passwd", "data:text/css,body{}"):  # fmt: skip
        with pytest.raises(RefusedURL):
            fetcher.fetch(url)
    assert len(fetcher.refused) == 6


def test_html_pointing_outside_is_rendered_without_fetching():
    rendered = html_to_pdf(
        '<link rel="stylesheet" href="http://example.com/x.css">'
        '<img src="file:///etc/hostname"><p>hello</p>'
    )
    assert set(rendered.refused_urls) == {"http://example.com/x.css", "file:///etc/hostname"}
    assert "hello" in pdf_text(rendered.content)[0]


def test_svg_labels_are_escaped():
    chart = svg.line_chart(["a", "b"], [svg.Series('<script>"x"</script>', [1.0, 2.0])],
                           title="T & <b>")  # fmt: skip
    assert "<script>" not in chart and "&lt;script&gt;&quot;x&quot;" in chart
    assert "T &amp; &lt;b&gt;" in chart
    gantt = svg.gantt_chart([], title="empty")
    assert "No tasks." in gantt


def test_nice_ticks_cover_the_range():
    ticks = svg.nice_ticks(0, 1234)
    assert ticks[0] <= 0 and ticks[-1] >= 1234 and len(ticks) <= 8
    assert svg.short_number(1_250_000) == "1.25M" and svg.short_number(950) == "950"
