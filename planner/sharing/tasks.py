"""Celery tasks of the sharing app. Thin: an id in, a service call, the outcome stored."""

from celery import shared_task

from planner.sharing.notify import reply_email_execute
from planner.sharing.services import document_execute
from planner.tasks import JobTask


@shared_task(base=JobTask, bind=True, job_model="sharing.RenderedDocument")
def document_render_task(self: JobTask, document_id: int) -> str:
    """Render one stored document, the plan report (redelivery, retries: ``JobTask``)."""
    return self.run_job(document_id, document_execute)


@shared_task(base=JobTask, bind=True, job_model="sharing.ReplyEmail")
def reply_email_task(self: JobTask, delivery_id: int) -> str:
    """E-mail a consultant's reply to the client (a refusing server: retried, then failed)."""
    return self.run_job(delivery_id, reply_email_execute)
