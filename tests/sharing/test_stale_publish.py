"""Nothing goes stale silently: a changed peak re-plans the chosen configuration, marks the
stored results computed from the old inputs stale on their pages, and keeps them out of a
plain publish; publishing anyway stores the open items and shows them to the client."""

import html

import pytest
from django.urls import reverse

from planner import freshness, sizing
from planner.facility.deployment import plan_deployment
from planner.models import Workload
from planner.sharing import services
from planner.sharing.models import DocumentKind, PlanRevision
from tests.html_forms import page_form
from tests.sharing.conftest import pdf_text

pytestmark = pytest.mark.django_db

STORED_AFTER_SIZING = {"tco", "bom", "landed_cost", "timeline"}


def _chat(plan) -> Workload:
    return plan.workloads.get(name="Customer chat assistant")


def _raise_peak(client, workload, peak: int):
    url = reverse("workload_sizing", args=[workload.plan_id, workload.pk])
    data = page_form(client.get(url).content.decode(), containing="ttft_ms")
    data["peak_concurrency"] = str(peak)
    return client.post(url, data)


def _banner_states(client, name: str, plan) -> dict[str, str]:
    """{kind: state} of the stale banners on one page."""
    body = client.get(reverse(name, args=[plan.pk])).content.decode()
    states = {}
    for chunk in body.split('data-testid="stale-banner"')[1:]:
        kind = chunk.split('data-kind="', 1)[1].split('"', 1)[0]
        states[kind] = chunk.split('data-state="', 1)[1].split('"', 1)[0]
    return states


def test_the_demo_plan_starts_current(plan):
    items = freshness.plan_freshness(plan)
    assert {i.kind for i in items} == {"chosen", *STORED_AFTER_SIZING}
    assert [i for i in items if not i.is_current] == []


def test_changed_peak_marks_stored_results_stale_and_blocks_a_plain_publish(signed_in, plan):
    chat = _chat(plan)
    before_replicas = chat.chosen_replicas
    revisions_before = PlanRevision.objects.filter(plan=plan).count()

    response = _raise_peak(signed_in, chat, chat.peak_concurrency * 3)

    assert response.status_code == 302
    chat.refresh_from_db()
    # The chosen configuration is re-planned at once (it is current, with more replicas).
    assert chat.chosen_replicas > before_replicas
    assert chat.chosen_inputs_hash == sizing.workload_inputs_hash(chat)
    assert freshness.chosen_freshness(chat).is_current
    # Every result stored from the old fleet is stale, on its own page.
    assert _banner_states(signed_in, "facility:tco", plan) == {"tco": "stale"}
    assert _banner_states(signed_in, "sourcing:bom", plan) == {"bom": "stale"}
    assert _banner_states(signed_in, "sourcing:landed_cost", plan) == {"landed_cost": "stale"}
    assert _banner_states(signed_in, "sourcing:timeline", plan) == {"timeline": "stale"}

    # A plain publish is refused and says what is not current; nothing is stored.
    review = signed_in.get(reverse("sharing:review", args=[plan.pk])).content.decode()
    assert 'data-testid="open-items"' in review and "Publish with these open items" in review
    refused = signed_in.post(reverse("sharing:publish", args=[plan.pk]), {"note": "Bigger"})
    assert refused.status_code == 400
    text = refused.content.decode()
    # The 4 stale results, and the demo's A/B feed check failing at its 2 sites.
    assert "Not published: 6 results are not current" in text
    for label in ("TCO (stale)", "Bill of materials (stale)", "Landed cost (stale)"):
        assert label in text
    assert "Timeline (stale)" in text
    assert PlanRevision.objects.filter(plan=plan).count() == revisions_before

    # Publishing anyway needs the box ticked; the revision stores the open items.
    published = signed_in.post(
        reverse("sharing:publish", args=[plan.pk]), {"note": "Bigger", "with_open_items": "on"}
    )
    assert published.status_code == 302
    revision = PlanRevision.objects.filter(plan=plan).order_by("-number").first()
    assert revision.number == revisions_before + 1
    items = [i for i in revision.snapshot["open_items"] if i["kind"] != "facility_check"]
    assert {i["kind"] for i in items} == STORED_AFTER_SIZING
    assert all(i["state"] == "stale" and i["reason"] for i in items)
    shown = {w["name"]: w["chosen"]["replicas"] for w in revision.snapshot["workloads"]}
    assert shown[chat.name] == chat.chosen_replicas  # the re-planned fleet, not the old one

    # The client sees them on the share page and in the PDFs.
    link = services.share_link_create(
        plan=plan, user=None, revision=revision, expires_at=None, note=""
    )
    page = signed_in.get(reverse("sharing:public", args=[link.token])).content.decode()
    assert 'id="section-open-items"' in page
    assert "Bill of materials — computed from inputs that have changed since" in page
    document = services.document_get_or_render(revision=revision, kind=DocumentKind.QUOTE)
    text, _, _ = pdf_text(services.document_bytes(document))
    assert "Open items" in text and "Hardware prices" in text  # the client's label


def test_recompute_buttons_bring_results_back_to_current(
    signed_in, plan, django_capture_on_commit_callbacks
):
    _raise_peak(signed_in, _chat(plan), _chat(plan).peak_concurrency * 3)
    stale = {i.kind: i for i in freshness.open_items(plan)}
    assert set(stale) == STORED_AFTER_SIZING

    # The BOM first: the TCO reads it (network capex, support line), so regenerating the BOM
    # after the TCO would leave the TCO stale again.
    response = signed_in.post(stale["landed_cost"].recompute_url, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and response.headers["HX-Redirect"]
    assert "tco" in {i.kind for i in freshness.open_items(plan)}
    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in.post(
            stale["tco"].recompute_url, {"next": reverse("facility:tco", args=[plan.pk])}
        )
    assert response.status_code == 302 and response.url == reverse("facility:tco", args=[plan.pk])

    assert freshness.open_items(plan) == []
    assert _banner_states(signed_in, "sourcing:bom", plan) == {}
    # What is left open is the demo's A/B feed check (a fact of the sites, not a result).
    blockers = services.publish_blockers(plan=plan)
    assert {i.kind for i in blockers} == {"facility_check"}
    published = signed_in.post(
        reverse("sharing:publish", args=[plan.pk]), {"note": "Bigger", "with_open_items": "on"}
    )
    assert published.status_code == 302
    latest = PlanRevision.objects.filter(plan=plan).order_by("-number").first()
    assert {i["kind"] for i in latest.snapshot["open_items"]} == {"facility_check"}


def test_a_viewer_cannot_recompute(client, plan, demo):
    from tests.conftest import make_member

    viewer = make_member(demo[2], "viewer_stale", "viewer")
    client.force_login(viewer)
    response = client.post(reverse("plan_recompute", args=[plan.pk, "bom"]))
    assert response.status_code == 403


def test_an_unexpected_error_fails_the_publish_and_stores_nothing(consultant, plan, monkeypatch):
    from sourcing import services as ssvc

    def broken(**kwargs):
        raise RuntimeError("database said no: secret detail")

    monkeypatch.setattr(ssvc, "landed_cost_report", broken)
    monkeypatch.setattr(services, "publish_blockers", lambda *, plan: [])
    count = PlanRevision.objects.filter(plan=plan).count()
    with pytest.raises(services.PublishFailed) as failed:
        services.revision_publish(plan=plan, user=consultant, note="x")
    assert "RuntimeError" in str(failed.value) and "secret detail" not in str(failed.value)
    assert PlanRevision.objects.filter(plan=plan).count() == count


def test_an_expected_domain_error_is_a_structured_unavailable_section(
    consultant, plan, monkeypatch
):
    from sourcing import services as ssvc

    def gap(**kwargs):
        raise ssvc.SourcingError("The catalog has no price for the switch.")

    monkeypatch.setattr(ssvc, "landed_cost_report", gap)
    revision = services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    bom = revision.snapshot["bom"]
    assert bom == {
        "available": False,
        "reason": "The bill of materials could not be priced.",
        "problem": "The catalog has no price for the switch.",
        "problem_kind": "SourcingError",
    }
    assert revision.snapshot["timeline"]["available"] is False


def test_a_chosen_configuration_planned_for_other_inputs_is_stale_on_its_page(signed_in, plan):
    chat = _chat(plan)
    # Saved past sizing (as a catalog change or an import would): the stored replicas no
    # longer come from the stored inputs.
    Workload.objects.filter(pk=chat.pk).update(peak_concurrency=chat.peak_concurrency * 3)
    url = reverse("workload_sizing", args=[plan.pk, chat.pk])
    body = signed_in.get(url).content.decode()
    assert 'data-testid="stale-banner" data-kind="chosen" data-state="stale"' in body
    assert "computed from inputs that have changed since" in body
    assert "chosen" in {i.kind for i in services.publish_blockers(plan=plan)}

    response = signed_in.post(reverse("plan_recompute", args=[plan.pk, "chosen"]), {"next": url})

    assert response.status_code == 302 and response.url == url
    chat.refresh_from_db()
    assert chat.chosen_inputs_hash == sizing.workload_inputs_hash(chat)
    assert (
        chat.chosen_replicas
        == sizing.candidate_find(sizing.workload_sweep(chat), sizing.chosen_key(chat)).replicas
    )
    # Its own banner goes (the re-planned fleet now makes the TCO shown here stale instead).
    assert 'data-kind="chosen"' not in signed_in.get(url).content.decode()


def _banner(client, name: str, plan, kind: str) -> str:
    """The text of the page's stale banner of ``kind`` ("" when it has none)."""
    body = client.get(reverse(name, args=[plan.pk])).content.decode()
    marker = f'data-testid="stale-banner" data-kind="{kind}"'
    if marker not in body:
        return ""
    return " ".join(body.split(marker, 1)[1].split("</div>", 1)[0].split())


def _bom_servers(plan, site_name: str) -> int:
    from sourcing.models import BomLine

    lines = BomLine.objects.filter(plan=plan, site__name=site_name, category="server")
    return sum(line.quantity for line in lines)


def test_quote_and_placement_say_they_are_stale_when_the_bom_and_tco_are(signed_in, plan):
    chat = _chat(plan)
    assert _banner_states(signed_in, "sourcing:quote", plan) == {}
    assert _banner_states(signed_in, "facility:placement", plan) == {}

    _raise_peak(signed_in, chat, chat.peak_concurrency * 3)  # the deployment needs more servers

    # The quote prices the BOM lines, which hold fewer servers than the deployment needs: it
    # says so, with what regenerating changes, and offers the BOM page's own regenerate.
    assert _banner_states(signed_in, "sourcing:quote", plan) == {"quote": "stale"}
    quote = _banner(signed_in, "sourcing:quote", plan, "quote")
    bom_url = reverse("plan_recompute", args=[plan.pk, "bom"])
    assert "bill of materials that is stale" in quote
    needed = {
        site.name: pool.servers
        for site in plan_deployment(plan=plan).sites
        if (pool := plan_deployment(plan=plan).site_pool(site)) is not None
    }
    held = {name: _bom_servers(plan, name) for name in needed}
    assert any(needed[name] > held[name] for name in needed)
    for name in needed:
        if needed[name] != held[name]:  # e.g. "3 servers at Frankfurt … (… holds 2)"
            said = f"{needed[name]} servers at {name} (the bill of materials holds {held[name]})"
            assert html.escape(said) in quote, said
    assert f'action="{bom_url}"' in quote
    # Placement ranks with the TCO run's costs, computed for the old deployment.
    assert _banner_states(signed_in, "facility:placement", plan) == {"placement": "stale"}
    placement = _banner(signed_in, "facility:placement", plan, "placement")
    assert "TCO run that is stale" in placement
    assert f'action="{reverse("plan_recompute", args=[plan.pk, "tco"])}"' in placement

    # The quote's button regenerates the BOM: the quote is current again.
    quote_url = reverse("sourcing:quote", args=[plan.pk])
    done = signed_in.post(bom_url, {"next": quote_url})
    assert done.status_code == 302 and done.url == quote_url
    assert _banner_states(signed_in, "sourcing:quote", plan) == {}


# Every consultant page that shows a result derived from the plan's inputs, and the kinds of
# stale banner it shows once a raised peak makes the deployment need more servers.
DERIVED_PAGES = {
    "sizing": {"tco"},  # the cost per request against the target is the TCO's
    "facility:site_list": {"tco", "bom"},
    "facility:placement": {"placement"},
    "facility:tco": {"tco"},
    "sourcing:bom": {"bom"},
    "sourcing:landed_cost": {"landed_cost"},
    "sourcing:timeline": {"timeline"},
    "sourcing:quote": {"quote"},
    "sourcing:orders": {"orders"},
    "plan_detail": {"tco", "bom"},
}


def test_every_page_with_a_derived_result_shows_the_stale_banner(signed_in, plan):
    chat = _chat(plan)
    sizing_url = reverse("workload_sizing", args=[plan.pk, chat.pk])

    def banners(name: str) -> dict[str, str]:
        if name == "sizing":
            body = signed_in.get(sizing_url).content.decode()
            return {
                c.split('data-kind="', 1)[1].split('"', 1)[0]: "shown"
                for c in body.split('data-testid="stale-banner"')[1:]
            }
        return _banner_states(signed_in, name, plan)

    assert {name: banners(name) for name in DERIVED_PAGES} == {n: {} for n in DERIVED_PAGES}

    _raise_peak(signed_in, chat, chat.peak_concurrency * 3)

    shown = {name: set(banners(name)) for name in DERIVED_PAGES}
    assert shown == DERIVED_PAGES
