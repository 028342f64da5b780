"""The abstract background job: what every long task (TCO run, document render, catalog
import) records about itself so a page can show it and a lost worker is noticed.

Lifecycle: ``pending`` (saved; ``enqueued_at`` is set once the broker accepted the message)
→ ``running`` (a worker claimed it: ``attempts`` + 1, ``worker``, ``started_at``; it refreshes
``heartbeat_at`` while it works) → ``succeeded`` or ``failed`` (``error`` says why). A running
job whose heartbeat is older than the lease (``settings.JOBS_LEASE_SECONDS``) lost its worker
(killed, out of memory) and is failed with that reason. The plumbing lives in
``planner/jobs.py``; the Celery task base in ``planner/tasks.py``.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


class JobStatus(models.TextChoices):
    PENDING = "pending", "Waiting for a worker"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Finished"
    FAILED = "failed", "Failed"


FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED)
QUEUE_UNAVAILABLE = (
    "The job queue is unavailable; your request is saved and will start when it is back."
)


class Job(models.Model):
    """Status, progress and lease of one background job (abstract).

    A concrete job names the Celery task that runs it in ``job_task`` (a dotted path, so
    models never import tasks).
    """

    job_task: str = ""
    #: Words of this kind of job for its statuses, e.g. {"succeeded": "Imported"}.
    status_labels: dict[str, str] = {}

    status = models.CharField(max_length=20, choices=JobStatus.choices, default=JobStatus.PENDING)
    progress = models.FloatField(default=0.0, help_text="0 to 1.")
    progress_message = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True, help_text="Why the job failed (not a domain outcome).")
    attempts = models.PositiveSmallIntegerField(default=0)
    requested_at = models.DateTimeField(
        default=timezone.now, help_text="When it was last asked for (created or run again)."
    )
    enqueued_at = models.DateTimeField(
        null=True, blank=True, help_text="When the broker accepted it; empty: not queued yet."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED

    @property
    def status_label(self) -> str:
        """The status in this job's words; "Failed" whenever the job itself broke."""
        if self.status == JobStatus.FAILED and self.error:
            return JobStatus.FAILED.label
        return self.status_labels.get(self.status) or self.get_status_display()

    @property
    def progress_pct(self) -> int:
        return round(self.progress * 100)

    @property
    def queue_unavailable(self) -> bool:
        """Saved, but the broker refused it (down or hung): the reaper queues it later."""
        return (
            self.status == JobStatus.PENDING
            and self.enqueued_at is None
            and self.progress_message == QUEUE_UNAVAILABLE
        )

    def lease_expired(self, now: datetime | None = None) -> bool:
        """Running, but its worker has not reported for longer than the lease."""
        if self.status != JobStatus.RUNNING:
            return False
        last = self.heartbeat_at or self.started_at or self.requested_at
        lease = timedelta(seconds=settings.JOBS_LEASE_SECONDS)
        return last < (now or timezone.now()) - lease
