"""Celery tasks of the catalog. Thin: ids in, a service call, the outcome stored."""

from celery import shared_task

from catalog.services import catalog_import_execute, catalog_import_fail


@shared_task(bind=True, max_retries=3, default_retry_delay=5, acks_late=True)
def catalog_import_run(self, import_id: int) -> str:
    """Import one uploaded catalog CSV; after the last retry the import shows as failed."""
    try:
        return catalog_import_execute(import_id=import_id).status
    except Exception as exc:
        if self.request.retries >= self.max_retries:
            catalog_import_fail(import_id=import_id, reason=f"The import crashed: {exc}")
            raise
        raise self.retry(exc=exc) from exc
