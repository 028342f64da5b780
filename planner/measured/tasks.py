"""Celery tasks of the measured app. Thin: an id in, a service call, the outcome stored."""

from celery import shared_task

from planner.measured.logs import log_import_execute
from planner.measured.services import sweep_import_execute
from planner.tasks import JobTask


@shared_task(base=JobTask, bind=True, job_model="measured.TrafficLogImport")
def traffic_log_import_task(self: JobTask, job_id: int) -> str:
    """Read one uploaded traffic log (redelivery, retries and failure: ``JobTask``)."""
    return self.run_job(job_id, log_import_execute)


@shared_task(base=JobTask, bind=True, job_model="measured.LoadTestImport")
def load_test_import_task(self: JobTask, job_id: int) -> str:
    """Read one sweep's large result files and attach it (redelivery, retries: ``JobTask``)."""
    return self.run_job(job_id, sweep_import_execute)
