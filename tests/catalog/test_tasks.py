"""The import task's failure path: retried, then shown as failed with the reason."""

from catalog.models import CatalogImport
from catalog.tasks import catalog_import_run


def test_a_crashing_import_is_retried_then_marked_failed(db, org_a):
    job = CatalogImport.objects.create(
        organisation=org_a, kind="no-such-kind", filename="x.csv", csv_text="a\n1\n"
    )

    result = catalog_import_run.apply(args=[job.pk])

    assert result.failed()
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error.startswith("KeyError:") and "no-such-kind" in job.error
    assert job.attempts == 3 and job.finished_at is not None


def test_running_a_finished_import_again_changes_nothing(db, org_a, catalog):
    job = CatalogImport.objects.create(
        organisation=org_a, kind="parts", filename="x.csv", csv_text="slug\n", status="succeeded"
    )
    assert catalog_import_run.apply(args=[job.pk]).get() == "succeeded"
