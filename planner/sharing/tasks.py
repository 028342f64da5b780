"""Celery tasks of the sharing app. Thin: an id in, a service call, the outcome stored."""

from celery import shared_task

from planner.sharing.services import document_execute, document_fail


@shared_task(bind=True, max_retries=2, default_retry_delay=3, acks_late=True)
def document_render_task(self, document_id: int) -> str:
    """Render one stored document (the plan report); after the last retry it shows as failed."""
    try:
        return document_execute(document_id=document_id).status
    except Exception as exc:
        if self.request.retries >= self.max_retries:
            document_fail(document_id=document_id, reason=f"{type(exc).__name__}: {exc}")
            raise
        raise self.retry(exc=exc) from exc
