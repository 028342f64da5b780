"""The plumbing every background job shares (TCO run, document render, catalog import).

One job row (``planner.models.Job``) is the truth about a job; the broker only carries its id.

- ``job_enqueue``: publish the job's task once the transaction commits. A broker that is
  down or hung (short socket timeouts, see ``CELERY_BROKER_TRANSPORT_OPTIONS``) leaves the
  row pending with ``enqueued_at`` empty and a message saying so, never an exception: the
  beat task ``jobs_reap`` (or the next click) queues it when the broker is back.
- ``job_run``: claim the row (running, attempt + 1, worker name, heartbeat), refresh the
  heartbeat while the job works, and call the job's ``execute(job=..., recorder=...)``.
  Safe to redeliver: a finished job is a no-op; a running job whose message came back
  (its worker died) restarts, up to ``settings.JOBS_MAX_ATTEMPTS`` attempts.
- Lease: a running job whose heartbeat is older than ``settings.JOBS_LEASE_SECONDS`` lost
  its worker; ``job_expire_if_lost`` (when its page is opened or polled) and ``jobs_reap``
  (every minute) mark it failed with ``LOST_WORKER``.
- ``job_retry``: "Run again" on a failed or stuck job resets and re-queues it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from functools import partial
from typing import Literal

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError, connections, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.module_loading import import_string
from kombu.exceptions import OperationalError as BrokerError

from planner.computed import neutral_writes, plan_state_scope
from planner.models import Job, JobStatus
from planner.models.jobs import QUEUE_UNAVAILABLE

logger = logging.getLogger(__name__)

LOST_WORKER = "The worker stopped reporting (it was killed or ran out of memory); run it again."
WAITING = "Waiting for a worker"

Execute = Callable[..., None]
Published = Literal["queued", "skipped", "unavailable"]


def job_models() -> list[type[Job]]:
    """Every concrete job model of the project."""
    return [model for model in apps.get_models() if issubclass(model, Job)]


# --- Queueing ---------------------------------------------------------------------------------


def job_enqueue(job: Job) -> None:
    """Publish the job's task once the current transaction commits (at once outside one)."""
    transaction.on_commit(partial(job_publish, job))


def job_publish(job: Job) -> Published:
    """Send the job's task to the broker, unless another caller is already sending it.

    Returns:
        "queued" when the broker accepted it; "skipped" when the job was not waiting to be
        queued (finished, running or queued by someone else); "unavailable" when the broker
        is down or hung (the row then says so and stays pending).
    """
    model = type(job)
    now = timezone.now()
    waiting = model.objects.filter(pk=job.pk, status=JobStatus.PENDING, enqueued_at=None)
    if not waiting.update(enqueued_at=now, progress_message=WAITING):
        return "skipped"
    task = import_string(model.job_task)
    try:
        task.delay(job.pk)
    except BrokerError as exc:
        logger.warning("could not queue %s %s: %s", model.__name__, job.pk, exc)
        model.objects.filter(pk=job.pk, status=JobStatus.PENDING, enqueued_at=now).update(
            enqueued_at=None, progress_message=QUEUE_UNAVAILABLE
        )
        job.enqueued_at, job.progress_message = None, QUEUE_UNAVAILABLE
        return "unavailable"
    job.enqueued_at = now
    return "queued"


# --- Running ----------------------------------------------------------------------------------


class JobRecorder:
    """Writes a job's ``(fraction, message)`` progress and heartbeat into its row.

    A write happens when the message changes or progress moves by at least 2 points; every
    write refreshes the heartbeat. Writes stop once the job is no longer this attempt's.
    """

    def __init__(self, job: Job) -> None:
        self.job = job
        self.last = -1.0
        self.message = ""

    def stage(self, start: float, end: float, label: str) -> Callable[[float, str], None]:
        """A callback mapping one engine stage's 0-1 onto ``[start, end]`` of the job."""

        def report(fraction: float, message: str) -> None:
            self(start + (end - start) * fraction, f"{label}: {message}")

        return report

    def __call__(self, progress: float, message: str) -> None:
        if message == self.message and progress - self.last < 0.02:
            return
        self.last, self.message = progress, message
        with neutral_writes():  # bookkeeping: the plan state built so far stays valid
            _this_attempt(self.job).update(
                progress=progress, progress_message=message[:200], heartbeat_at=timezone.now()
            )


def _this_attempt(job: Job):
    return type(job).objects.filter(pk=job.pk, status=JobStatus.RUNNING, attempts=job.attempts)


@contextmanager
def job_heartbeat(job: Job, interval_s: float) -> Iterator[None]:
    """Refresh the job's heartbeat every ``interval_s`` from a thread while the block runs.

    The thread dies with the process, which is the point: a killed worker stops beating.
    """
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(interval_s):
                try:
                    _this_attempt(job).update(heartbeat_at=timezone.now())
                except DatabaseError as exc:
                    logger.warning("heartbeat of %s %s: %s", type(job).__name__, job.pk, exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=beat, name=f"heartbeat-{job.pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=interval_s + 5)


def job_claim(model: type[Job], job_id: int, *, worker: str, redelivered: bool) -> Job | None:
    """Mark the job running for this attempt, or say why it must not run.

    Returns:
        The job, running for this attempt; or the job unchanged when it is finished, or
        running elsewhere with a fresh heartbeat (a duplicate message); None if deleted.
        A job whose earlier attempts all died is failed with ``LOST_WORKER``.
    """
    now = timezone.now()
    with transaction.atomic():
        job = model.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.is_finished:
            return job
        if job.status == JobStatus.RUNNING:
            if not redelivered and not job.lease_expired(now):
                return job
            if job.attempts >= settings.JOBS_MAX_ATTEMPTS:
                job_fail(job, LOST_WORKER)
                return job
        restarted = job.status == JobStatus.RUNNING
        job.status = JobStatus.RUNNING
        job.attempts += 1
        job.started_at = job.heartbeat_at = now
        job.finished_at = None
        job.worker = worker[:200]
        job.error = ""
        job.progress = 0.0
        job.progress_message = (
            f"Restarted (attempt {job.attempts}) after the worker stopped"
            if restarted
            else "Started"
        )
        job.save(
            update_fields=[
                "status", "attempts", "started_at", "heartbeat_at", "finished_at", "worker",
                "error", "progress", "progress_message",
            ]
        )  # fmt: skip
    job._claimed = True
    return job


def job_run(
    model: type[Job],
    job_id: int,
    execute: Execute,
    *,
    worker: str,
    redelivered: bool = False,
    heartbeat_s: float | None = None,
) -> Job | None:
    """Claim the job and, if this attempt owns it, run ``execute(job=..., recorder=...)``.

    ``execute`` stores the outcome with ``job_finish``. Whatever it raises propagates (the
    task base retries or fails the job).
    """
    job = job_claim(model, job_id, worker=worker, redelivered=redelivered)
    if job is None or not getattr(job, "_claimed", False):
        return job
    recorder = JobRecorder(job)
    with plan_state_scope():  # each plan part built once per job (planner.computed)
        if heartbeat_s:
            with job_heartbeat(job, heartbeat_s):
                execute(job=job, recorder=recorder)
        else:
            execute(job=job, recorder=recorder)
    return job


def job_run_inline(job: Job, execute: Execute) -> Job:
    """Run a job in this process now (demo builder, small documents); failures are stored.

    The caller needs the outcome now, so a job another process is running at this moment
    is taken over (both compute the same thing; the last one stored stays).
    """
    model = type(job)
    try:
        ran = job_run(model, job.pk, execute, worker="inline", redelivered=True)
    except Exception as exc:  # recorded on the row, then raised as before
        job_fail(job, f"{type(exc).__name__}: {exc}")
        raise
    return ran if ran is not None else job


def job_finish(job: Job, *, status: str = JobStatus.SUCCEEDED, message: str = "Done") -> None:
    """Store the outcome: the job's own fields as set by the caller, plus the final status.

    When it was requested and queued are left as they are in the database (a click
    while it ran may have moved them).
    """
    now = timezone.now()
    job.status = status
    job.progress = 1.0
    job.progress_message = message[:200]
    job.error = ""
    job.finished_at = job.heartbeat_at = now
    kept = {"requested_at", "enqueued_at"}
    fields = job._meta.concrete_fields
    job.save(update_fields=[f.name for f in fields if not f.primary_key and f.name not in kept])


def job_fail(job: Job | tuple[type[Job], int], reason: str) -> None:
    """Mark an unfinished job failed with the reason (a finished one is left as it is)."""
    model, pk = (type(job), job.pk) if isinstance(job, Job) else job
    model.objects.filter(pk=pk).exclude(status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED]).update(
        status=JobStatus.FAILED,
        error=reason[:2000],
        progress_message="Failed",
        finished_at=timezone.now(),
    )
    if isinstance(job, Job):
        job.refresh_from_db()


def job_note_retry(model: type[Job], job_id: int, reason: str) -> None:
    """Show that an attempt failed and that the task base queued another."""
    model.objects.filter(pk=job_id, status=JobStatus.RUNNING).update(
        status=JobStatus.PENDING,
        enqueued_at=timezone.now(),
        progress_message=f"Attempt failed ({reason[:120]}); retrying",
    )


# --- Lease, run again, reaper -----------------------------------------------------------------


def job_expire_if_lost(job: Job, *, now: datetime | None = None) -> bool:
    """Fail a running job whose worker stopped reporting; True if it did (``job`` refreshed)."""
    if not job.lease_expired(now):
        return False
    expired = (
        type(job)
        .objects.filter(pk=job.pk, status=JobStatus.RUNNING, heartbeat_at=job.heartbeat_at)
        .update(
            status=JobStatus.FAILED,
            error=LOST_WORKER,
            progress_message="Failed",
            finished_at=now or timezone.now(),
        )
    )
    job.refresh_from_db()
    return bool(expired)


def job_is_stuck(job: Job, *, now: datetime | None = None) -> bool:
    """Pending but not in the broker: refused by it, never queued (past the grace period
    its request has to queue it), or queued long ago and never started."""
    now = now or timezone.now()
    if job.status != JobStatus.PENDING:
        return False
    if job.enqueued_at is None:
        grace = timedelta(seconds=settings.JOBS_PUBLISH_GRACE_SECONDS)
        return job.queue_unavailable or job.requested_at < now - grace
    return job.enqueued_at < now - timedelta(seconds=settings.JOBS_REQUEUE_AFTER_SECONDS)


def job_retry(job: Job, *, enqueue: bool = True) -> bool:
    """Run a failed or stuck job again ("Run again"): reset it and queue it on commit.

    With ``enqueue`` false it is only reset (the caller runs it in-process).

    Returns:
        True if it was re-queued; False if it is finished successfully or still going.
    """
    job_expire_if_lost(job)
    if job.status != JobStatus.FAILED and not job_is_stuck(job):
        return False
    job.status = JobStatus.PENDING
    job.progress = 0.0
    job.progress_message = WAITING
    job.error = ""
    job.attempts = 0
    job.requested_at = timezone.now()
    job.enqueued_at = job.started_at = job.heartbeat_at = job.finished_at = None
    job.worker = ""
    job.save(
        update_fields=[
            "status", "progress", "progress_message", "error", "attempts", "requested_at",
            "enqueued_at", "started_at", "heartbeat_at", "finished_at", "worker",
        ]
    )  # fmt: skip
    if enqueue:
        job_enqueue(job)
    return True


def jobs_reap(*, now: datetime | None = None) -> dict[str, int]:
    """Fail lost running jobs and queue pending jobs the broker does not have (beat task).

    A pending job is queued again when the broker refused it, or it was never accepted and
    was asked for more than ``JOBS_PUBLISH_GRACE_SECONDS`` ago (younger ones are still
    being queued by their request), or it was accepted more than
    ``JOBS_REQUEUE_AFTER_SECONDS`` ago and never started. Stops queueing at the first
    broker error (it is down: the next round tries again).

    Returns:
        Counts: ``lost`` (failed), ``queued`` and ``unqueued`` (broker still unavailable).
    """
    now = now or timezone.now()
    lease_cutoff = now - timedelta(seconds=settings.JOBS_LEASE_SECONDS)
    grace_cutoff = now - timedelta(seconds=settings.JOBS_PUBLISH_GRACE_SECONDS)
    stale_cutoff = now - timedelta(seconds=settings.JOBS_REQUEUE_AFTER_SECONDS)
    counts = {"lost": 0, "queued": 0, "unqueued": 0}
    broker_up = True
    for model in job_models():
        for job in model.objects.filter(status=JobStatus.RUNNING, heartbeat_at__lt=lease_cutoff):
            counts["lost"] += job_expire_if_lost(job, now=now)
        never = model.objects.filter(status=JobStatus.PENDING, enqueued_at=None).filter(
            Q(requested_at__lt=grace_cutoff) | Q(progress_message=QUEUE_UNAVAILABLE)
        )
        forgotten = model.objects.filter(status=JobStatus.PENDING, enqueued_at__lt=stale_cutoff)
        oldest_first = ("requested_at", "pk")
        for job in [*never.order_by(*oldest_first), *forgotten.order_by(*oldest_first)]:
            if not broker_up:
                counts["unqueued"] += 1
                continue
            if job.enqueued_at is not None:
                model.objects.filter(pk=job.pk, enqueued_at=job.enqueued_at).update(
                    enqueued_at=None
                )
                job.enqueued_at = None
            published = job_publish(job)
            if published == "queued":
                counts["queued"] += 1
            elif published == "unavailable":
                broker_up = False
                counts["unqueued"] += 1
    if any(counts.values()):
        logger.info("jobs reaped: %s", counts)
    return counts
