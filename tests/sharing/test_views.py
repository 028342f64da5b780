"""The consultant's side: publish, links, feedback, checklist sign-offs, documents; viewers
read, editors change."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from planner.models import Membership
from planner.sharing.models import ChecklistSignOff, PlanRevision, ShareLink
from tests.conftest import make_member


@pytest.fixture
def viewer(demo):
    return make_member(demo[2], "viewer_demo", "viewer")


def test_review_page_lists_revisions_links_comments_and_decisions(signed_in, plan):
    response = signed_in.get(reverse("sharing:review", args=[plan.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert "Revision 1" in body and "Publish revision 2" in body
    assert "Frankfurt" in body  # the demo client's comment
    assert "Approved" in body
    assert "/s/" in body  # the active link's URL to copy


def test_publish_and_share(signed_in, plan):
    plan.notes = "Second pass."
    plan.save()
    response = signed_in.post(
        reverse("sharing:publish", args=[plan.pk]), {"note": "v2", "with_open_items": "on"}
    )
    assert response.status_code == 302
    assert response.url == reverse("sharing:revision", args=[plan.pk, 2])
    assert PlanRevision.objects.get(plan=plan, number=2).note == "v2"
    response = signed_in.post(reverse("sharing:link_create", args=[plan.pk]),
                              {"revision": "2", "expires_at": "", "note": "for CFO"})  # fmt: skip
    assert response.status_code == 302
    link = ShareLink.objects.get(note="for CFO")
    assert link.revision.number == 2 and link.expires_at is None


def test_link_with_a_past_expiry_is_refused_next_to_the_field(signed_in, plan):
    past = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    response = signed_in.post(reverse("sharing:link_create", args=[plan.pk]),
                              {"revision": "latest", "expires_at": past, "note": "typed note"})  # fmt: skip
    assert response.status_code == 400
    body = response.content.decode()
    assert "The expiry must be in the future." in body and 'value="typed note"' in body
    bad = signed_in.post(reverse("sharing:link_create", args=[plan.pk]),
                         {"revision": "7", "expires_at": "not a date", "note": ""})  # fmt: skip
    assert bad.status_code == 400


def test_viewers_read_but_cannot_publish_share_or_sign_off(client, viewer, plan):
    client.force_login(viewer)
    assert client.get(reverse("sharing:review", args=[plan.pk])).status_code == 200
    assert client.get(reverse("sharing:checklist", args=[plan.pk])).status_code == 200
    assert client.post(reverse("sharing:publish", args=[plan.pk])).status_code == 403
    assert client.post(reverse("sharing:link_create", args=[plan.pk]),
                       {"revision": "latest"}).status_code == 403  # fmt: skip
    link = ShareLink.objects.get(plan=plan)
    assert client.post(reverse("sharing:link_revoke", args=[plan.pk, link.pk])).status_code == 403
    client.post(reverse("sharing:checklist", args=[plan.pk]),
                {"item_key": "autoscaling", "name": "V", "signed_on": "2026-01-01"})  # fmt: skip
    assert not ChecklistSignOff.objects.filter(signed_by_name="V").exists()
    assert PlanRevision.objects.filter(plan=plan).count() == 1
    assert Membership.objects.get(user=viewer).role == "viewer"


def test_checklist_page_and_sign_off(signed_in, plan):
    page = signed_in.get(reverse("sharing:checklist", args=[plan.pk]))
    assert page.status_code == 200
    body = page.content.decode()
    assert "A written latency target per request type" in body
    assert "TTFT 1,000 ms and TPOT 50 ms" in body
    response = signed_in.post(reverse("sharing:checklist", args=[plan.pk]), {
        "item_key": "logistics_owner", "name": "Dana Demo",
        "signed_on": timezone.localdate().isoformat(), "note": "<b>owner</b> named",
    })  # fmt: skip
    assert response.status_code == 302
    body = signed_in.get(reverse("sharing:checklist", args=[plan.pk])).content.decode()
    assert "&lt;b&gt;owner&lt;/b&gt; named" in body


def test_a_future_sign_off_date_is_a_400_keeping_the_input(signed_in, plan):
    future = (timezone.localdate() + timedelta(days=3)).isoformat()
    response = signed_in.post(reverse("sharing:checklist", args=[plan.pk]), {
        "item_key": "autoscaling", "name": "Typed Name", "signed_on": future, "note": "kept",
    })  # fmt: skip
    assert response.status_code == 400
    body = response.content.decode()
    assert "cannot be in the future" in body and 'value="Typed Name"' in body and "kept" in body


def test_documents_downloads_preview_and_status(
    signed_in, plan, django_capture_on_commit_callbacks
):
    quote = signed_in.get(reverse("sharing:document", args=[plan.pk, 1, "quote"]))
    assert quote.status_code == 200 and quote["Content-Type"] == "application/pdf"
    assert "attachment" in quote["Content-Disposition"]
    checklist_pdf = signed_in.get(reverse("sharing:document", args=[plan.pk, 1, "checklist"]))
    assert checklist_pdf.status_code == 200
    for kind in ("quote", "checklist", "report"):
        preview = signed_in.get(reverse("sharing:document_preview", args=[plan.pk, 1, kind]))
        assert preview.status_code == 200 and "<html" in preview.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        wait = signed_in.get(reverse("sharing:document", args=[plan.pk, 1, "report"]))
        assert wait.status_code == 200 and "progress" in wait.content.decode()
    status = signed_in.get(reverse("sharing:document_status", args=[plan.pk, 1, "report"]))
    assert status.status_code == 286
    report = signed_in.get(reverse("sharing:document", args=[plan.pk, 1, "report"]))
    assert report["Content-Type"] == "application/pdf"
    assert signed_in.get(reverse("sharing:document", args=[plan.pk, 9, "quote"])).status_code == 404
    assert signed_in.get(reverse("sharing:document", args=[plan.pk, 1, "x"])).status_code == 404


def test_the_revision_page_shows_the_snapshot_with_charts(signed_in, plan):
    response = signed_in.get(reverse("sharing:revision", args=[plan.pk, 1]))
    assert response.status_code == 200
    body = response.content.decode()
    assert "<svg" in body and "Customer chat assistant" in body and "Pre-purchase checklist" in body
    assert "Quote Q-" in body


def test_the_plan_tabs_link_to_review_and_checklist(signed_in, plan):
    body = signed_in.get(reverse("plan_detail", args=[plan.pk])).content.decode()
    assert reverse("sharing:review", args=[plan.pk]) in body
    assert reverse("sharing:checklist", args=[plan.pk]) in body
