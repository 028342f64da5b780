"""The client's Gantt (the share page and the report PDF draw the same SVG) has one row per
purchase order, its stages as segments of that row, labels in full and no supplier name; the
parts not ordered yet take one row per site, not three per BOM line (issue 25: about 80 rows,
labels cut to "cust…")."""

import re
from html import unescape

from django.urls import reverse

from planner.pdf.context import report_charts
from planner.sharing import services
from planner.sharing.snapshot import plan_snapshot
from sourcing.models import PurchaseOrder, Supplier
from tests.sharing.test_timeline_no_suppliers import _latest_revision


def gantt_rows(svg: str) -> list[str]:
    """Each row's label as drawn (its wrapped lines joined)."""
    return [
        " ".join(unescape(line) for line in re.findall(r"<tspan[^>]*>([^<]*)</tspan>", text))
        for text in re.findall(r'<text class="row-label"[^>]*>(.*?)</text>', svg, re.S)
    ]


def assert_client_gantt(svg: str, *, references: list[str], suppliers: list[str], sites: int):
    rows = gantt_rows(svg)
    assert rows, "no Gantt rows drawn"
    for reference in references:  # at most one row per purchase order
        assert sum(row.startswith(f"{reference} ") for row in rows) <= 1, (reference, rows)
    others = [r for r in rows if not r.startswith(tuple(f"{ref} " for ref in references))]
    assert len(others) <= 2 * sites, rows  # per site: parts to order, installation and burn-in
    assert "…" not in svg and not any(row.endswith("...") for row in rows)
    tips = [unescape(t) for t in re.findall(r"<title>([^<]*)</title>", svg) if "→" in t]
    assert {t.split(" — ")[0] for t in tips} == set(rows)  # every label is its row's whole name
    for name in suppliers:
        assert name.lower() not in svg.lower(), name


def test_client_gantt_has_one_row_per_order_with_whole_labels(client, plan, consultant):
    from planner.facility.models import Site

    references = list(PurchaseOrder.objects.filter(plan=plan).values_list("reference", flat=True))
    suppliers = list(
        Supplier.objects.filter(organisation=plan.organisation).values_list("name", flat=True)
    )
    sites = Site.objects.filter(plan=plan).count()
    assert references and suppliers and sites == 2
    revision = _latest_revision(plan, consultant)
    link = services.share_link_create(
        plan=plan, user=consultant, revision=revision, expires_at=None, note=""
    )
    page = client.get(reverse("sharing:public", args=[link.token])).content.decode()
    timeline = re.search(r'id="section-timeline".*?</section>', page, re.S).group(0)
    svg = re.search(r"<svg.*?</svg>", timeline, re.S).group(0)
    assert_client_gantt(svg, references=references, suppliers=suppliers, sites=sites)
    rows = gantt_rows(svg)
    assert len(rows) == len(references) + 2  # the four orders, each site's installation
    assert re.findall(r'data-stage="([^"]+)"', svg)[:3] == [
        "Supplier lead time", "Air transit", "Customs",
    ]  # fmt: skip

    # The report PDF draws the revision's Gantt from the same snapshot.
    pdf_svg = report_charts(revision.snapshot)["gantt"].svg
    assert gantt_rows(pdf_svg) == rows

    # Before any order is placed, every BOM line is a delivery of its own: still one row per
    # site for the parts to order, not three rows per line.
    PurchaseOrder.objects.filter(plan=plan).delete()
    snapshot = plan_snapshot(plan=plan)
    tasks = snapshot["timeline"]["tasks"]
    lines = {t["key"].split(":")[0] for t in tasks if t["key"].startswith("line-")}
    assert len(lines) > 4  # the case seen: three bars for each of them
    unordered = report_charts(snapshot)["gantt"].svg
    assert_client_gantt(unordered, references=[], suppliers=suppliers, sites=sites)
    assert any(row.startswith("Parts not ordered yet") for row in gantt_rows(unordered))
