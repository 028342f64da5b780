"""Celery tasks of the facility app. Thin: an id in, a service call, the outcome stored."""

from celery import shared_task

from planner.facility.services import tco_run_execute, tco_run_fail, tco_run_note_retry


@shared_task(bind=True, max_retries=2, default_retry_delay=3, acks_late=True)
def tco_run_task(self, run_id: int) -> str:
    """Compute one TCO run; after the last retry the run shows as failed with the reason."""
    try:
        return tco_run_execute(run_id=run_id).status
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        if self.request.retries >= self.max_retries:
            tco_run_fail(run_id=run_id, reason=f"The TCO run failed: {reason}")
            raise
        tco_run_note_retry(run_id=run_id, reason=reason)
        raise self.retry(exc=exc) from exc
