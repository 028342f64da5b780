"""The headline of every client document is the chosen option's, the option the quote prices;
with no option chosen the documents say so (never the cheapest option's figure) and a plain
publish lists it as an open item."""

from decimal import Decimal

import pytest
from django.urls import reverse

from planner.facility.models import PlacementDecision
from planner.pdf.render import render_html
from planner.sharing import services
from planner.sharing.models import DocumentKind, PlanRevision

pytestmark = pytest.mark.django_db


def _latest(plan) -> PlanRevision:
    return PlanRevision.objects.filter(plan=plan).order_by("-number").first()


def _share_page(client, plan, consultant, revision) -> str:
    link = services.share_link_create(
        plan=plan, user=consultant, revision=revision, expires_at=None, note=""
    )
    return client.get(reverse("sharing:public", args=[link.token])).content.decode()


def _quoted_servers(snapshot) -> int:
    return sum(
        line["quantity"] for line in snapshot["bom"]["lines"] if line["category"] == "server"
    )


def test_the_headline_is_the_chosen_option_and_says_so_when_none_is(client, plan, consultant):
    # The demo chose Frankfurt, a site of the one owned deployment: every figure is that option.
    revision = _latest(plan)
    snap = revision.snapshot
    owned = next(o for o in snap["tco"]["options"] if o["key"] == "owned")
    assert snap["placement"]["chosen_key"] in {part["key"] for part in owned["sites"]}
    summary = services.document_context(revision=revision, kind=DocumentKind.REPORT).summary
    per_workload = [str(w["cost_per_request_amount"]) for w in owned["workloads"]]
    assert [str(w["cost_per_request_amount"]) for w in summary["per_workload"]] == per_workload
    assert summary["headline_label"] == owned["label"]
    assert _quoted_servers(snap) == sum(part["servers"] for part in owned["sites"])
    page = _share_page(client, plan, consultant, revision)
    for amount in per_workload:
        assert f"{Decimal(amount):,.5f} EUR" in page

    # No option chosen: a plain publish is refused with the choice as an open item.
    PlacementDecision.objects.filter(plan=plan).update(
        chosen_key="", chosen_kind="", chosen_label=""
    )
    blockers = services.publish_blockers(plan=plan)
    assert [(b.kind, b.state_label) for b in blockers if b.kind != "facility_check"] == [
        ("option", "not chosen")
    ]
    with pytest.raises(services.PublishBlocked):
        services.revision_publish(plan=plan, user=consultant, note="undecided")
    undecided = services.revision_publish(
        plan=plan, user=consultant, note="undecided", with_open_items=True
    )
    # (the demo also fails its A/B feed check at both sites: published as open items too)
    kinds = [i["kind"] for i in undecided.snapshot["open_items"]]
    assert [k for k in kinds if k != "facility_check"] == ["option"]

    # The share page says no option is chosen and names the owned option the quote prices;
    # it never heads with the cheapest option's figure.
    cheapest = next(o for o in snap["tco"]["options"] if o["key"] == snap["tco"]["cheapest"])
    assert cheapest["key"] != "owned"
    page = _share_page(client, plan, consultant, undecided)
    headline = page.split("<dt>Cost per request</dt>", 1)[1].split("</dd>", 1)[0]
    assert "No option chosen" in headline
    assert f"the quote prices {owned['label']}" in headline
    for w, other in zip(owned["workloads"], cheapest["workloads"], strict=True):
        assert f"{w['name']} " in headline
        assert f"{Decimal(w['cost_per_request_amount']):,.5f} EUR" in headline
        assert f"{Decimal(other['cost_per_request_amount']):,.5f}" not in headline
    assert "no option chosen" in page  # the open item, as the client reads it

    # Every document says so too (the report's summary and every document's open items).
    for kind in (DocumentKind.REPORT, DocumentKind.QUOTE):
        context = services.document_context(revision=undecided, kind=kind)
        html = render_html(services.DOCUMENT_TEMPLATES[kind], {"doc": context})
        assert "no option chosen" in html.lower(), kind
    report = services.document_context(revision=undecided, kind=DocumentKind.REPORT)
    assert report.summary["no_option_chosen"] and report.summary["cost_per_request_amount"] is None

    # A chosen hybrid: the BOM (so the quote) buys its owned base, so the BOM of the owned
    # deployment is stale until regenerated; no open item says the quote is of another option.
    PlacementDecision.objects.filter(plan=plan).update(
        chosen_key="hybrid", chosen_kind="hybrid", chosen_label="Hybrid"
    )
    blockers = [b for b in services.publish_blockers(plan=plan) if b.kind != "facility_check"]
    assert "option" not in [b.kind for b in blockers]
    assert ("bom", "stale") in [(b.kind, b.state) for b in blockers]
    # The edge has no option of its own: the quote still prices the owned deployment.
    PlacementDecision.objects.filter(plan=plan).update(
        chosen_key="edge", chosen_kind="edge", chosen_label="Edge (next to the users)"
    )
    [item] = [b for b in services.publish_blockers(plan=plan) if b.kind == "option"]
    assert (item.state, item.label) == ("failed", "Quote of the chosen option")
    assert "not of the chosen option" in item.reason
