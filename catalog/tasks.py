"""Celery tasks of the catalog. Thin: ids in, a service call, the outcome stored."""

from celery import shared_task

from catalog.services import catalog_import_execute
from planner.tasks import JobTask


@shared_task(base=JobTask, bind=True, job_model="catalog.CatalogImport")
def catalog_import_run(self: JobTask, import_id: int) -> str:
    """Import one uploaded catalog CSV (redelivery, retries and failure: ``JobTask``)."""
    return self.run_job(import_id, catalog_import_execute)
