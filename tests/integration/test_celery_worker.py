"""The catalog import task on a real Celery worker with Redis and PostgreSQL."""

import pytest
from django.urls import reverse

from catalog.kinds import KINDS
from catalog.models import CatalogImport, Part
from catalog.services import catalog_import_create
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.service

HEADER = ",".join(KINDS["parts"].csv_columns)


def _finished(job_id: int):
    job = CatalogImport.objects.get(pk=job_id)
    return job if job.is_finished else None


def test_the_database_is_postgresql(postgres):
    with postgres.cursor() as cursor:
        cursor.execute("select version()")
        assert cursor.fetchone()[0].startswith("PostgreSQL")


def test_worker_imports_an_uploaded_csv(celery_worker_process, org_a, staff_a, client):
    job = catalog_import_create(
        organisation=org_a,
        user=staff_a,
        kind_key="parts",
        filename="worker.csv",
        csv_text=f"{HEADER}\nworker-nic,nic,Acme,Worker NIC,8517.62,1,400,,,,,750,2026-11-01,,src\n",
    )
    # Outside a transaction (transactional_db) on_commit fires at once: the task is on Redis.
    assert CatalogImport.objects.get(pk=job.pk).status in ("pending", "running", "succeeded")

    done = wait_for(lambda: _finished(job.pk))

    assert done.status == "succeeded", done.message
    assert done.created == 1
    assert Part.objects.get(slug="worker-nic").unit_price_usd == 750
    client.force_login(staff_a)
    status = client.get(reverse("catalog:import_status", args=[job.pk]))
    assert status.status_code == 286 and "Imported" in status.content.decode()


def test_worker_rejects_a_bad_file_and_saves_nothing(celery_worker_process, org_a, staff_a):
    job = catalog_import_create(
        organisation=org_a,
        user=staff_a,
        kind_key="parts",
        filename="bad.csv",
        csv_text=f"{HEADER}\nfine,nic,,Fine,,,,,,,,,,,src\nbroken,nic,,Broken,,,,,,,,-1,,,src\n",
    )

    done = wait_for(lambda: _finished(job.pk))

    assert done.status == "failed"
    assert done.errors[0]["line"] == 3 and "unit_price_usd" in done.errors[0]["message"]
    assert not Part.objects.filter(slug__in=["fine", "broken"]).exists()
