"""The plan report's render as a job: a down broker, a lost worker, a failure, reopening."""

from datetime import timedelta

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from planner import jobs
from planner.sharing.models import RenderedDocument


def _report_urls(plan) -> tuple[str, str]:
    return (
        reverse("sharing:document", args=[plan.pk, 1, "report"]),
        reverse("sharing:document_status", args=[plan.pk, 1, "report"]),
    )


def test_opening_the_report_with_the_broker_down_saves_it_and_says_so(
    transactional_db, signed_in, plan, broker_down
):
    download, _ = _report_urls(plan)

    response = signed_in.get(download)

    body = response.content.decode()
    assert response.status_code == 200 and "Preparing the plan report" in body
    assert 'data-testid="document-queue-unavailable"' in body
    document = RenderedDocument.objects.get(revision__plan=plan, kind="report")
    assert document.status == "pending" and document.queue_unavailable


def test_a_lost_render_says_why_stops_polling_and_reopening_renders_it(
    signed_in, plan, django_capture_on_commit_callbacks
):
    download, status_url = _report_urls(plan)
    long_ago = timezone.now() - timedelta(seconds=settings.JOBS_LEASE_SECONDS + 10)
    document = RenderedDocument.objects.create(
        revision=plan.revisions.get(number=1), kind="report", status="running", attempts=1,
        started_at=long_ago, heartbeat_at=long_ago,
    )  # fmt: skip

    status = signed_in.get(status_url)

    html = status.content.decode()
    assert status.status_code == 286 and "hx-trigger" not in html
    assert "killed or ran out of memory" in html and 'data-testid="document-retry"' in html
    document.refresh_from_db()
    assert document.status == "failed" and document.error == jobs.LOST_WORKER

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        reopened = signed_in.get(download)
    assert reopened.status_code == 200 and len(callbacks) == 1  # queued again, rendered eagerly
    document.refresh_from_db()
    assert document.status == "succeeded" and document.file and document.attempts == 1
    assert signed_in.get(status_url).status_code == 286


def test_a_failed_render_shows_the_reason_and_offers_to_render_again(signed_in, plan):
    download, status_url = _report_urls(plan)
    RenderedDocument.objects.create(
        revision=plan.revisions.get(number=1), kind="report", status="failed", attempts=3,
        error="OSError: fonts missing", finished_at=timezone.now(),
    )  # fmt: skip

    status = signed_in.get(status_url)

    html = status.content.decode()
    assert status.status_code == 286
    assert "could not be rendered: OSError: fonts missing" in html
    assert f'href="{download}"' in html and "Render it again" in html


def test_a_quote_being_rendered_by_another_request_is_still_served(signed_in, plan):
    RenderedDocument.objects.create(
        revision=plan.revisions.get(number=1), kind="quote", status="running", attempts=1,
        started_at=timezone.now(), heartbeat_at=timezone.now(),
    )  # fmt: skip

    response = signed_in.get(reverse("sharing:document", args=[plan.pk, 1, "quote"]))

    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    document = RenderedDocument.objects.get(revision__plan=plan, kind="quote")
    assert document.status == "succeeded" and document.file
