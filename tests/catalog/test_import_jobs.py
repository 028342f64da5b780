"""Catalog imports as jobs: a down broker, a lost worker, "Run again" (and not for bad rows)."""

from datetime import timedelta

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from catalog.models import CatalogImport, Part
from planner import jobs
from tests.catalog.test_views import PARTS_HEADER, _upload

GOOD_ROW = "\nretry-nic,nic,,Retry NIC,,,,,,,,99,,,src\n"


def _import(org, user, **fields) -> CatalogImport:
    return CatalogImport.objects.create(
        organisation=org, created_by=user, kind="parts", filename="parts.csv",
        csv_text=PARTS_HEADER + GOOD_ROW, **fields,
    )  # fmt: skip


def test_uploading_with_the_broker_down_saves_the_import_and_says_so(
    transactional_db, client, staff_a, catalog, broker_down
):
    client.force_login(staff_a)

    response = _upload(client, "parts", PARTS_HEADER + GOOD_ROW)
    page = client.get(response.url).content.decode()

    job = CatalogImport.objects.get()
    assert response.status_code == 302 and response.url.endswith(f"/import/{job.pk}/")
    assert job.status == "pending" and job.queue_unavailable
    assert "The job queue is unavailable; your request is saved" in page
    assert 'data-testid="import-queue-unavailable"' in page


def test_a_lost_import_stops_polling_with_the_reason_and_runs_again(
    client, staff_a, catalog, django_capture_on_commit_callbacks
):
    long_ago = timezone.now() - timedelta(seconds=settings.JOBS_LEASE_SECONDS + 10)
    job = _import(staff_a.memberships.get().organisation, staff_a, status="running",
                  attempts=1, heartbeat_at=long_ago)  # fmt: skip
    client.force_login(staff_a)

    status = client.get(reverse("catalog:import_status", args=[job.pk]))

    html = status.content.decode()
    assert status.status_code == 286 and "killed or ran out of memory" in html
    assert 'data-testid="import-retry"' in html
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(reverse("catalog:import_retry", args=[job.pk]))
    assert again.status_code == 302
    job.refresh_from_db()
    assert job.status == "succeeded" and job.error == "" and job.created == 1
    assert Part.objects.filter(slug="retry-nic").exists()


def test_an_import_rejected_for_its_rows_is_not_run_again(
    client, staff_a, catalog, django_capture_on_commit_callbacks
):
    job = _import(staff_a.memberships.get().organisation, staff_a, status="failed",
                  message="1 problem(s) found; nothing was saved.")  # fmt: skip
    client.force_login(staff_a)

    page = client.get(reverse("catalog:import_detail", args=[job.pk])).content.decode()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        client.post(reverse("catalog:import_retry", args=[job.pk]))

    assert "Rejected" in page and 'data-testid="import-retry"' not in page
    assert callbacks == [] and CatalogImport.objects.get(pk=job.pk).status == "failed"


def test_viewers_of_an_import_see_no_run_again_button(client, consultant_a, staff_a, catalog):
    job = _import(
        consultant_a.memberships.get().organisation, staff_a, status="failed", error="boom"
    )
    client.force_login(consultant_a)

    page = client.get(reverse("catalog:import_detail", args=[job.pk])).content.decode()

    assert "The import could not run: boom" in page and 'data-testid="import-retry"' not in page
    assert client.post(reverse("catalog:import_retry", args=[job.pk])).status_code == 403
    assert jobs.job_is_stuck(job) is False
