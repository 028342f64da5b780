"""The client's share page shows the timeline (Gantt) without supplier names: who supplies
what, and at which buy price, is on the consultancy's internal cost sheet only."""

import re

from django.urls import reverse

from planner.sharing import services
from planner.sharing.models import PlanRevision
from sourcing.models import PurchaseOrder, Supplier


def _latest_revision(plan, consultant) -> PlanRevision:
    revision = PlanRevision.objects.filter(plan=plan).order_by("-number").first()
    return revision or services.revision_publish(plan=plan, user=consultant, with_open_items=True)


def test_share_page_timeline_names_no_supplier(client, plan, consultant):
    suppliers = [s.name for s in Supplier.objects.filter(organisation=plan.organisation)]
    ordered = PurchaseOrder.objects.filter(plan=plan).select_related("supplier")
    assert suppliers and ordered.exists()  # the demo orders from named suppliers
    revision = _latest_revision(plan, consultant)
    tasks = revision.snapshot["timeline"]["tasks"]
    assert any(t["key"].startswith("order-") for t in tasks)  # the orders are in the Gantt
    link = services.share_link_create(
        plan=plan, user=consultant, revision=revision, expires_at=None, note=""
    )
    page = client.get(reverse("sharing:public", args=[link.token])).content.decode()
    timeline = re.search(r'id="section-timeline".*?</section>', page, re.S).group(0)
    assert "<svg" in timeline  # the Gantt is drawn
    for name in suppliers:
        assert name.lower() not in timeline.lower(), name
    for task in tasks:
        assert not any(name.lower() in task["name"].lower() for name in suppliers), task
    order = ordered.first()
    assert any(
        t["name"].startswith((f"{order.reference}: ", f"{order.reference} to ")) for t in tasks
    )
