"""TCO runs as jobs: one run per inputs, a lost worker, a down broker, "Run again"."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from planner import jobs
from planner.facility import services, tasks
from planner.facility.models import TcoRun


def _lost(run: TcoRun) -> None:
    """The run's worker died mid-run: running, silent for longer than the lease."""
    long_ago = timezone.now() - timedelta(seconds=settings.JOBS_LEASE_SECONDS + 10)
    TcoRun.objects.filter(pk=run.pk).update(
        status="running", attempts=1, started_at=long_ago, heartbeat_at=long_ago, progress=0.4
    )


def test_two_requests_for_the_same_inputs_make_one_run(sized_plan, colo_site, consultant_a):
    first, created = services.tco_run_request(plan=sized_plan, user=consultant_a)
    second, again = services.tco_run_request(plan=sized_plan, user=consultant_a)

    assert created and not again and first.pk == second.pk
    assert TcoRun.objects.filter(plan=sized_plan).count() == 1
    # The database refuses a second run for the same inputs, whoever asks.
    with pytest.raises(IntegrityError), transaction.atomic():
        TcoRun.objects.create(plan=sized_plan, input_hash=first.input_hash, inputs={})


def test_a_lost_run_says_why_stops_polling_and_offers_run_again(
    client, consultant_a, sized_plan, colo_site
):
    run, _ = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    _lost(run)
    client.force_login(consultant_a)

    status = client.get(reverse("facility:tco_status", args=[sized_plan.pk, run.pk]))
    page = client.get(reverse("facility:tco", args=[sized_plan.pk])).content.decode()

    html = status.content.decode()
    assert status.status_code == 286  # htmx stops polling
    assert "The run failed" in html and "killed or ran out of memory" in html
    assert 'data-testid="tco-run-again"' in html and "hx-trigger" not in html
    assert "Run again" in page and "every 1s" not in page
    run.refresh_from_db()
    assert run.status == "failed" and run.error == jobs.LOST_WORKER


def test_run_again_requeues_the_lost_run_and_the_worker_finishes_it(
    client, consultant_a, sized_plan, colo_site, django_capture_on_commit_callbacks
):
    run, _ = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    _lost(run)
    client.force_login(consultant_a)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(reverse("facility:tco_run", args=[sized_plan.pk]))

    assert response.status_code == 302 and len(callbacks) == 1
    run.refresh_from_db()
    assert run.status == "succeeded" and run.attempts == 1 and run.results
    assert TcoRun.objects.filter(plan=sized_plan).count() == 1


def test_a_pending_run_that_never_reached_the_broker_is_queued_by_rerun(
    sized_plan, colo_site, consultant_a, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr(tasks.tco_run_task, "delay", sent.append)
    run, _ = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    TcoRun.objects.filter(pk=run.pk).update(progress_message=jobs.QUEUE_UNAVAILABLE)

    with django_capture_on_commit_callbacks(execute=True):
        again, queued = services.tco_run_request(plan=sized_plan, user=consultant_a)

    assert queued and again.pk == run.pk and sent == [run.pk]
    with django_capture_on_commit_callbacks(execute=True):
        _, queued_twice = services.tco_run_request(plan=sized_plan, user=consultant_a)
    assert not queued_twice and sent == [run.pk]  # on its way: not sent again


@pytest.mark.parametrize("fault", ["broker_down", "broker_hung"])
def test_run_click_with_the_broker_unavailable_saves_the_run_and_says_so(
    transactional_db, client, consultant_a, sized_plan, colo_site, fault, request
):
    request.getfixturevalue(fault)
    client.force_login(consultant_a)

    response = client.post(reverse("facility:tco_run", args=[sized_plan.pk]), follow=True)

    body = response.content.decode()
    assert response.status_code == 200
    assert "The job queue is unavailable; your request is saved" in body
    assert 'data-testid="tco-queue-unavailable"' in body
    run = TcoRun.objects.get(plan=sized_plan)
    assert run.status == "pending" and run.enqueued_at is None


def test_the_reaper_queues_a_run_saved_while_the_broker_was_down(
    sized_plan, colo_site, consultant_a
):
    run, _ = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    later = timezone.now() + timedelta(seconds=settings.JOBS_PUBLISH_GRACE_SECONDS + 1)

    counts = jobs.jobs_reap(now=later)  # eager: the task runs in-process

    run.refresh_from_db()
    assert counts["queued"] == 1 and run.status == "succeeded"
