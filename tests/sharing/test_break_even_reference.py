"""The client's page and the report name the cloud option every break-even month is counted
against (the TCO's reference: the cheapest cloud option compared), as the TCO page does; a
break-even month without its reference cannot be read."""

import html
import re

from django.urls import reverse

from planner.facility.models import TcoRun, TcoStatus
from planner.pdf.context import report_context
from planner.pdf.render import render_html
from planner.sharing import services
from planner.sharing.models import PlanRevision


def test_the_share_page_and_the_report_name_the_break_even_reference(client, plan, consultant):
    try:
        revision = services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    except services.NothingToPublish:
        revision = PlanRevision.objects.filter(plan=plan).order_by("-number").first()
    run = TcoRun.objects.filter(plan=plan, status=TcoStatus.SUCCEEDED).latest("requested_at")
    reference = next(o for o in run.results["options"] if o["key"] == run.results["reference"])
    assert revision.snapshot["tco"]["reference"] == reference["key"]

    link = services.share_link_create(
        plan=plan, user=consultant, revision=revision, expires_at=None, note=""
    )
    public = html.unescape(
        client.get(reverse("sharing:public", args=[link.token])).content.decode()
    )
    assert f"Break-even months are counted against {reference['label']}" in public

    head = {"revision_number": revision.number, "published_at": revision.published_at,
            "published_by": "consultant"}  # fmt: skip
    report = html.unescape(
        render_html("pdf/report.html", {"doc": report_context(revision.snapshot, **head)})
    )
    report = re.sub(r"\s+", " ", report)
    label = re.escape(reference["label"])
    assert re.search(rf"<td>{label}( \(cheapest\))? \(break-even reference\)</td>", report)
    assert f"Break-even months are counted against {reference['label']}" in report
