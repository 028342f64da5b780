"""The Celery task base every background job uses, and the beat task that reaps lost jobs.

A job task is one line: ``return self.run_job(job_id, execute)`` on a ``JobTask`` naming
its model (``@shared_task(base=JobTask, bind=True, job_model="app.Model")``).
"""

from __future__ import annotations

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.apps import apps
from django.conf import settings

from planner import jobs
from planner.models import Job


class JobTask(Task):
    """Runs one job row: safe to redeliver, retried, and failed with the reason at the end.

    - ``acks_late`` + ``reject_on_worker_lost``: the message is acknowledged only when the
      task returns, and goes back to the queue when the pool process running it dies (the
      OOM killer), so another attempt picks it up; ``jobs.job_claim`` caps the attempts.
    - An exception is retried until the job has had ``settings.JOBS_MAX_ATTEMPTS``
      attempts (counted on the row, across redeliveries); then ``on_failure`` marks the
      job failed with the exception as the reason. Running out of time is not retried.
    - While the job runs, a thread refreshes its heartbeat (the lease ``jobs_reap`` and
      the pages check); the engine's progress callbacks refresh it too.
    """

    acks_late = True
    reject_on_worker_lost = True
    max_retries = None  # bounded by the attempts on the job row instead
    default_retry_delay = 3
    job_model = ""  # "app_label.ModelName"

    def model(self) -> type[Job]:
        return apps.get_model(self.job_model)

    def run_job(self, job_id: int, execute: jobs.Execute) -> str:
        """Claim and run the job; returns its status ("missing" if it was deleted)."""
        model = self.model()
        request = self.request
        try:
            job = jobs.job_run(
                model,
                job_id,
                execute,
                worker=request.hostname or "worker",
                redelivered=bool((request.delivery_info or {}).get("redelivered")),
                heartbeat_s=None if request.is_eager else settings.JOBS_HEARTBEAT_SECONDS,
            )
        except SoftTimeLimitExceeded:
            raise
        except Exception as exc:  # the job's own failure: retried, then on_failure records it
            attempts = model.objects.filter(pk=job_id).values_list("attempts", flat=True).first()
            if (attempts or 0) >= settings.JOBS_MAX_ATTEMPTS:
                raise
            jobs.job_note_retry(model, job_id, f"{type(exc).__name__}: {exc}")
            raise self.retry(exc=exc, countdown=self.default_retry_delay) from exc
        return "missing" if job is None else job.status

    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        """Mark the job failed with the reason once no attempt is left."""
        job_id = args[0] if args else next(iter(kwargs.values()))
        if isinstance(exc, SoftTimeLimitExceeded):
            reason = (
                f"It took longer than {settings.CELERY_TASK_SOFT_TIME_LIMIT // 60} minutes "
                "and was stopped."
            )
        else:
            reason = f"{type(exc).__name__}: {exc}"
        jobs.job_fail((self.model(), job_id), reason)


@shared_task(acks_late=True, ignore_result=True)
def jobs_reap() -> dict[str, int]:
    """Fail jobs whose worker died and queue jobs the broker lost (beat, every minute)."""
    return jobs.jobs_reap()
