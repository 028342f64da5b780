"""The shared job plumbing (planner/jobs.py, planner/tasks.py): lease, redelivery, the reaper,
a broker that is down or hung. Catalog imports stand in for every job kind (one model)."""

import time
from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone
from kombu.exceptions import OperationalError

from catalog import tasks as catalog_tasks
from catalog.models import CatalogImport
from catalog.services import catalog_import_create
from planner import jobs
from planner.celery import app
from planner.models import JobStatus

CSV = "slug,kind,vendor,name\n"


def _job(org, **fields) -> CatalogImport:
    return CatalogImport.objects.create(
        organisation=org, kind="parts", filename="x.csv", csv_text=CSV, **fields
    )


def _ago(seconds: float):
    return timezone.now() - timedelta(seconds=seconds)


@pytest.fixture
def published(monkeypatch):
    """The ids the catalog import task was sent with (the broker is not reached)."""
    sent = []
    monkeypatch.setattr(catalog_tasks.catalog_import_run, "delay", sent.append)
    return sent


# --- Lease ------------------------------------------------------------------------------------


def test_a_running_job_past_its_lease_is_failed_with_the_reason(org_a):
    lease = settings.JOBS_LEASE_SECONDS
    job = _job(org_a, status="running", attempts=1, heartbeat_at=_ago(lease + 1))

    assert job.lease_expired()
    assert jobs.job_expire_if_lost(job)

    assert job.status == "failed" and job.error == jobs.LOST_WORKER and job.finished_at
    assert "killed or ran out of memory" in job.error and job.status_label == "Failed"


def test_a_running_job_within_its_lease_is_left_alone(org_a):
    job = _job(org_a, status="running", attempts=1, heartbeat_at=_ago(5))

    assert not jobs.job_expire_if_lost(job)
    assert CatalogImport.objects.get(pk=job.pk).status == "running"


def test_the_heartbeat_thread_refreshes_the_lease(transactional_db, org_a):
    job = _job(org_a, status="running", attempts=1, heartbeat_at=_ago(1000))

    with jobs.job_heartbeat(job, interval_s=0.05):
        time.sleep(0.4)

    job.refresh_from_db()
    assert job.heartbeat_at > _ago(2) and not job.lease_expired()


def test_progress_writes_refresh_the_heartbeat(org_a):
    job = _job(org_a, status="running", attempts=1, heartbeat_at=_ago(1000))

    jobs.JobRecorder(job).stage(0.5, 1.0, "Rows")(0.5, "half")

    job.refresh_from_db()
    assert job.progress == 0.75 and job.progress_message == "Rows: half"
    assert job.heartbeat_at > _ago(5)


# --- Claiming: safe to redeliver --------------------------------------------------------------


def _never(**_):
    raise AssertionError("must not run")


def test_a_finished_job_is_a_no_op_when_its_message_comes_again(org_a):
    job = _job(org_a, status="succeeded", attempts=1, message="kept")

    assert catalog_tasks.catalog_import_run.apply(args=[job.pk]).get() == "succeeded"

    job.refresh_from_db()
    assert job.attempts == 1 and job.message == "kept"


def test_a_duplicate_message_leaves_a_job_another_worker_holds(org_a):
    job = _job(org_a, status="running", attempts=1, worker="w1", heartbeat_at=_ago(1))

    same = jobs.job_run(CatalogImport, job.pk, _never, worker="w2", redelivered=False)

    assert same.status == "running" and same.worker == "w1" and same.attempts == 1


def test_a_redelivered_running_job_restarts_cleanly(org_a):
    job = _job(org_a, status="running", attempts=1, worker="w1", heartbeat_at=_ago(1), progress=0.6)
    ran = []

    jobs.job_run(
        CatalogImport, job.pk, lambda **kw: ran.append(kw["job"].progress), worker="w1",
        redelivered=True,
    )  # fmt: skip

    job.refresh_from_db()
    assert ran == [0.0]
    assert job.attempts == 2 and job.status == "running" and "Restarted" in job.progress_message


def test_a_job_whose_workers_keep_dying_fails_after_the_last_attempt(org_a):
    job = _job(org_a, status="running", attempts=settings.JOBS_MAX_ATTEMPTS, heartbeat_at=_ago(1))

    jobs.job_run(CatalogImport, job.pk, _never, worker="w1", redelivered=True)

    job.refresh_from_db()
    assert job.status == "failed" and job.error == jobs.LOST_WORKER


def test_running_out_of_time_is_not_retried_and_says_so(org_a, monkeypatch):
    job = _job(org_a, progress_message=jobs.WAITING)
    calls = []

    def slow(**_):
        calls.append(1)
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(catalog_tasks, "catalog_import_execute", slow)
    catalog_tasks.catalog_import_run.apply(args=[job.pk])

    job.refresh_from_db()
    assert len(calls) == 1
    assert job.status == "failed" and "took longer than 10 minutes" in job.error


# --- Queueing with the broker down or hung -----------------------------------------------------


def test_queueing_with_the_broker_down_keeps_the_job_pending_and_says_so(
    org_a, staff_a, broker_down, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = catalog_import_create(
            organisation=org_a, user=staff_a, kind_key="parts", filename="x.csv", csv_text=CSV
        )

    job.refresh_from_db()
    assert job.status == "pending" and job.enqueued_at is None and job.queue_unavailable
    assert job.progress_message == jobs.QUEUE_UNAVAILABLE


def test_a_hung_broker_answers_within_three_seconds(org_a, broker_hung):
    job = _job(org_a)

    started = time.monotonic()
    outcome = jobs.job_publish(job)
    elapsed = time.monotonic() - started

    assert outcome == "unavailable" and elapsed < 3.0, elapsed
    assert CatalogImport.objects.get(pk=job.pk).queue_unavailable


def test_a_broker_error_on_publish_is_caught_and_recorded(org_a, monkeypatch):
    def refuse(job_id):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(catalog_tasks.catalog_import_run, "delay", refuse)
    job = _job(org_a)

    assert jobs.job_publish(job) == "unavailable"
    job.refresh_from_db()
    assert job.queue_unavailable and job.progress_message == jobs.QUEUE_UNAVAILABLE


def test_a_job_is_published_once_even_if_two_callers_queue_it(org_a, published):
    job = _job(org_a)

    assert [jobs.job_publish(job), jobs.job_publish(job)] == ["queued", "skipped"]
    assert published == [job.pk]
    assert CatalogImport.objects.get(pk=job.pk).enqueued_at is not None


# --- The reaper (beat) ------------------------------------------------------------------------


def test_the_reaper_fails_lost_jobs_and_queues_jobs_the_broker_never_had(org_a, published):
    grace, lease = settings.JOBS_PUBLISH_GRACE_SECONDS, settings.JOBS_LEASE_SECONDS
    lost = _job(org_a, status="running", attempts=1, heartbeat_at=_ago(lease + 5))
    alive = _job(org_a, status="running", attempts=1, heartbeat_at=_ago(1))
    unqueued = _job(org_a, requested_at=_ago(grace + 5))
    just_made = _job(org_a)  # its request is still queueing it
    forgotten = _job(
        org_a, enqueued_at=_ago(settings.JOBS_REQUEUE_AFTER_SECONDS + 5), requested_at=_ago(9999)
    )
    waiting = _job(org_a, enqueued_at=_ago(5), requested_at=_ago(9999))
    done = _job(org_a, status="succeeded", requested_at=_ago(9999))

    counts = jobs.jobs_reap()

    assert counts == {"lost": 1, "queued": 2, "unqueued": 0}
    assert sorted(published) == sorted([unqueued.pk, forgotten.pk])
    status = dict(CatalogImport.objects.values_list("pk", "status"))
    assert status[lost.pk] == "failed" and status[alive.pk] == "running"
    assert status[just_made.pk] == status[waiting.pk] == "pending"
    assert status[done.pk] == "succeeded"
    assert CatalogImport.objects.get(pk=lost.pk).error == jobs.LOST_WORKER


def test_the_reaper_stops_queueing_while_the_broker_is_down(org_a, broker_down):
    old = _ago(settings.JOBS_PUBLISH_GRACE_SECONDS + 5)
    first, second = _job(org_a, requested_at=old), _job(org_a, requested_at=old)

    counts = jobs.jobs_reap()

    assert counts == {"lost": 0, "queued": 0, "unqueued": 2}
    rows = CatalogImport.objects.filter(pk__in=[first.pk, second.pk])
    assert {(job.status, job.enqueued_at) for job in rows} == {("pending", None)}
    # The first refusal stops the round: the second is not tried (and not waited for).
    assert [job.queue_unavailable for job in rows.order_by("pk")] == [True, False]


def test_the_beat_schedule_runs_the_reaper_every_minute():
    entry = settings.CELERY_BEAT_SCHEDULE["jobs-reap"]
    assert entry == {"task": "planner.tasks.jobs_reap", "schedule": 60}
    assert "planner.tasks.jobs_reap" in app.tasks


# --- Run again --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "seconds_ago", "requeued"),
    [
        ({"status": "failed", "error": "boom", "attempts": 3}, {}, True),
        ({"status": "running", "attempts": 1}, {"heartbeat_at": 10_000}, True),  # lost
        ({"status": "pending", "progress_message": jobs.QUEUE_UNAVAILABLE}, {}, True),  # refused
        ({"status": "pending"}, {"requested_at": 10_000}, True),  # never queued
        ({"status": "pending"}, {}, False),  # its request is queueing it
        ({"status": "pending"}, {"enqueued_at": 10_000}, True),  # queued, never started
        ({"status": "pending"}, {"enqueued_at": 1}, False),  # on its way
        ({"status": "running", "attempts": 1}, {"heartbeat_at": 1}, False),  # working
        ({"status": "succeeded"}, {}, False),
    ],
)
def test_run_again_requeues_failed_and_stuck_jobs_only(
    org_a, published, fields, seconds_ago, requeued, django_capture_on_commit_callbacks
):
    job = _job(org_a, **fields, **{name: _ago(s) for name, s in seconds_ago.items()})

    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.job_retry(job) is requeued

    job.refresh_from_db()
    if requeued:
        assert (job.status, job.attempts, job.error) == ("pending", 0, "")
        assert published == [job.pk] and job.enqueued_at is not None
    else:
        assert published == [] and job.status == fields["status"]


# --- Settings ---------------------------------------------------------------------------------


def test_tasks_are_acknowledged_late_and_requeued_when_their_process_dies():
    assert settings.CELERY_TASK_ACKS_LATE and settings.CELERY_TASK_REJECT_ON_WORKER_LOST
    for task in (catalog_tasks.catalog_import_run,):
        assert task.acks_late and task.reject_on_worker_lost
    options = app.conf.broker_transport_options
    # Longer than the hard time limit: a running task is never handed to a second worker.
    assert options["visibility_timeout"] > settings.CELERY_TASK_TIME_LIMIT
    assert options["socket_timeout"] <= 2 and options["socket_connect_timeout"] <= 2
    assert app.conf.task_publish_retry_policy["max_retries"] <= 1
    assert settings.JOBS_LEASE_SECONDS > 5 * settings.JOBS_HEARTBEAT_SECONDS


def test_the_redis_cache_has_socket_timeouts(monkeypatch):
    import importlib

    from planner.settings import base

    monkeypatch.setenv("CACHE_URL", "redis://127.0.0.1:6379/1")
    options = importlib.reload(base).CACHES["default"]["OPTIONS"]
    monkeypatch.undo()
    importlib.reload(base)
    assert options == {"socket_connect_timeout": 1.0, "socket_timeout": 1.0}


def test_every_job_kind_uses_the_shared_task_base():
    from planner.facility.tasks import tco_run_task
    from planner.measured.tasks import load_test_import_task, traffic_log_import_task
    from planner.sharing.tasks import document_render_task, reply_email_task
    from planner.tasks import JobTask

    kinds = {model._meta.label: model for model in jobs.job_models()}
    assert set(kinds) == {
        "facility.TcoRun", "sharing.RenderedDocument", "catalog.CatalogImport",
        "measured.TrafficLogImport", "measured.LoadTestImport", "sharing.ReplyEmail",
    }  # fmt: skip
    tasks = (
        tco_run_task, document_render_task, catalog_tasks.catalog_import_run,
        traffic_log_import_task, load_test_import_task, reply_email_task,
    )  # fmt: skip
    for task in tasks:
        assert isinstance(task, JobTask) and task.job_model in kinds
        assert kinds[task.job_model].job_task == task.name
    assert JobStatus.PENDING == "pending"


def test_finishing_keeps_a_request_made_while_the_job_ran(org_a):
    job = _job(org_a, enqueued_at=_ago(60), requested_at=_ago(60))
    claimed = jobs.job_claim(CatalogImport, job.pk, worker="w1", redelivered=False)
    clicked_at = timezone.now()
    CatalogImport.objects.filter(pk=job.pk).update(requested_at=clicked_at)

    jobs.job_finish(claimed, message="Imported")

    job.refresh_from_db()
    assert job.status == "succeeded" and job.progress == 1.0 and job.requested_at == clicked_at
