"""Celery tasks of the facility app. Thin: an id in, a service call, the outcome stored."""

from celery import shared_task

from planner.facility.services import tco_run_execute
from planner.tasks import JobTask


@shared_task(base=JobTask, bind=True, job_model="facility.TcoRun")
def tco_run_task(self: JobTask, run_id: int) -> str:
    """Compute one TCO run (redelivery, retries and failure: ``JobTask``)."""
    return self.run_job(run_id, tco_run_execute)
