"""BOM, landed cost, timeline, revisions, share links and documents over the API, on the demo
plan (which has a BOM, offers and a published revision)."""

import pytest

from planner.sharing.models import PlanRevision, ShareLink
from sourcing.models import BomLine
from tests.api.conftest import Api, _token
from tests.conftest import make_member


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def owner(client, demo):
    plan, user, organisation = demo
    return Api(client, _token(organisation, user))


@pytest.fixture
def viewer(client, demo):
    organisation = demo[2]
    return Api(client, _token(organisation, make_member(organisation, "vic", role="viewer")))


def test_bom_generate_keeps_manual_lines_and_lists_them(owner, demo):
    plan = demo[0]
    manual = BomLine.objects.filter(plan=plan, origin="manual").count()

    response = owner.post(f"/plans/{plan.pk}/bom/generate")

    assert response.status_code == 200, response.content
    body = response.json()
    assert len(body["lines"]) == BomLine.objects.filter(plan=plan).count() > 0
    assert sum(1 for line in body["lines"] if line["origin"] == "manual") == manual
    assert owner.get(f"/plans/{plan.pk}/bom").json() == body["lines"]


def test_bom_generate_without_a_choice_says_why(owner, demo):
    plan = demo[0]
    plan.workloads.update(chosen_accelerator=None)
    response = owner.post(f"/plans/{plan.pk}/bom/generate")
    assert response.status_code == 422
    assert "No workload has a chosen configuration" in response.json()["errors"]["__all__"][0]


def test_landed_cost_and_timeline_are_the_pages_reports(owner, demo):
    from sourcing import services

    plan, _, organisation = demo
    landed = owner.get(f"/plans/{plan.pk}/landed-cost")
    assert landed.status_code == 200, landed.content
    report = services.landed_cost_report(plan=plan, organisation=organisation)
    body = landed.json()
    assert body["currency"] == report.currency and body["complete"] == report.complete
    assert len(body["lines"]) == len(report.lines)
    assert [line["status"] for line in body["lines"]] == [line.status for line in report.lines]

    timeline = owner.get(f"/plans/{plan.pk}/timeline")
    assert timeline.status_code == 200, timeline.content
    expected = services.timeline_report(plan=plan, organisation=organisation)
    assert timeline.json()["go_live"] == (
        expected.go_live.isoformat() if expected.go_live else None
    )


def test_publish_list_read_and_nothing_new_to_publish(owner, demo):
    plan = demo[0]
    before = PlanRevision.objects.filter(plan=plan).count()
    plan.notes = "Changed for revision two"
    plan.save()

    # The demo fails its A/B feed check at both sites: a plain publish asks first.
    blocked = owner.post(f"/plans/{plan.pk}/revisions", {"note": "More racks"})
    assert blocked.status_code != 201 and "Facility check" in blocked.content.decode()
    response = owner.post(
        f"/plans/{plan.pk}/revisions", {"note": "More racks", "with_open_items": True}
    )

    assert response.status_code == 201, response.content
    published = response.json()
    assert published["published"] and published["number"] == before + 1
    again = owner.post(f"/plans/{plan.pk}/revisions", {"note": "again", "with_open_items": True})
    assert again.status_code == 200 and not again.json()["published"]
    assert again.json()["number"] == published["number"]
    listed = owner.get(f"/plans/{plan.pk}/revisions").json()
    assert published["number"] in [r["number"] for r in listed]
    detail = owner.get(published["url"].removeprefix("/api/v1")).json()
    stored = PlanRevision.objects.get(plan=plan, number=published["number"])
    assert detail["snapshot"] == stored.snapshot and detail["note"] == "More racks"
    assert owner.post(f"/plans/{plan.pk}/revisions", {"note": "x" * 301}).status_code == 400


def test_share_link_create_and_revoke(owner, demo, client):
    plan = demo[0]
    response = owner.post(f"/plans/{plan.pk}/share-links", {"note": "for the CFO"})

    assert response.status_code == 201, response.content
    link = response.json()
    assert link["url"].startswith("http://testserver/s/")
    assert client.get(link["url"]).status_code == 200
    assert owner.delete(f"/plans/{plan.pk}/share-links/{link['id']}").status_code == 204
    assert ShareLink.objects.get(pk=link["id"]).revoked_at is not None
    assert client.get(link["url"]).status_code == 404

    bad = owner.post(f"/plans/{plan.pk}/share-links", {"revision": 999})
    assert bad.json()["errors"]["revision"] == ["The plan has no revision 999."]
    past = owner.post(f"/plans/{plan.pk}/share-links", {"expires_at": "2001-01-01T00:00:00Z"})
    assert past.json()["errors"]["expires_at"] == ["The expiry must be in the future."]


def test_a_document_is_202_while_it_renders_then_the_pdf(
    owner, demo, django_capture_on_commit_callbacks
):
    plan = demo[0]
    number = PlanRevision.objects.filter(plan=plan).latest("number").number
    url = f"/plans/{plan.pk}/revisions/{number}/documents/quote.pdf"

    with django_capture_on_commit_callbacks(execute=True):
        waiting = owner.get(url)  # queued; the (eager) worker renders it after the request
    assert waiting.status_code == 202, waiting.content
    assert waiting.json()["status_url"] == "/api/v1" + url

    ready = owner.get(url)
    assert ready.status_code == 200
    assert ready["Content-Type"] == "application/pdf" and ready.content.startswith(b"%PDF")
    assert owner.get(url.replace("quote", "invoice")).status_code == 400


def _writes(plan):
    return [
        ("post", f"/plans/{plan.pk}/bom/generate", {}),
        ("post", f"/plans/{plan.pk}/revisions", {}),
        ("post", f"/plans/{plan.pk}/share-links", {}),
    ]


def _reads(plan):
    number = PlanRevision.objects.filter(plan=plan).latest("number").number
    return [
        f"/plans/{plan.pk}/bom",
        f"/plans/{plan.pk}/landed-cost",
        f"/plans/{plan.pk}/timeline",
        f"/plans/{plan.pk}/revisions",
        f"/plans/{plan.pk}/revisions/{number}",
    ]


def test_a_viewer_reads_but_may_not_generate_publish_or_share(viewer, demo):
    plan = demo[0]
    for url in _reads(plan):
        assert viewer.get(url).status_code == 200, url
    for method, url, body in _writes(plan):
        assert viewer.call(method, url, body).status_code == 403, url
    link = ShareLink.objects.filter(plan=plan).first() or ShareLink.objects.create(
        plan=plan, token="t" * 43
    )
    assert viewer.delete(f"/plans/{plan.pk}/share-links/{link.pk}").status_code == 403


def test_another_organisation_gets_404_and_no_token_401(client, demo, org_b, owner_b):
    plan = demo[0]
    other = Api(client, _token(org_b, owner_b))
    anonymous = Api(client, None)
    number = PlanRevision.objects.filter(plan=plan).latest("number").number
    document = f"/plans/{plan.pk}/revisions/{number}/documents/quote.pdf"
    link = ShareLink.objects.create(plan=plan, token="u" * 43)
    for url in [*_reads(plan), document]:
        assert other.get(url).status_code == 404, url
        assert anonymous.get(url).status_code == 401, url
    for method, url, body in _writes(plan):
        assert other.call(method, url, body).status_code == 404, url
        assert anonymous.call(method, url, body).status_code == 401, url
    assert other.delete(f"/plans/{plan.pk}/share-links/{link.pk}").status_code == 404
    assert ShareLink.objects.get(pk=link.pk).revoked_at is None
