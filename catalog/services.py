"""Writes to the catalog: loading the reference data and running uploaded imports."""

import logging
from pathlib import Path

from django.conf import settings

from catalog.csv_io import ImportResult, import_csv
from catalog.kinds import KINDS, kind_get
from catalog.models import CatalogImport, ImportStatus
from planner import jobs
from planner.models import Organisation

logger = logging.getLogger(__name__)


class CatalogDataError(RuntimeError):
    """A reference data file shipped with the project is missing or invalid."""


def catalog_load_reference(*, data_dir: Path | None = None) -> dict[str, ImportResult]:
    """Load every kind's CSV from the project's data folder; safe to run again.

    Raises:
        CatalogDataError: a file is missing or has rows that do not validate; nothing of
            that file is saved (files loaded before it stay).
    """
    folder = Path(data_dir or settings.CATALOG_DATA_DIR)
    results: dict[str, ImportResult] = {}
    for kind in KINDS.values():
        path = folder / kind.csv_file
        if not path.exists():
            raise CatalogDataError(f"{path} is missing.")
        result = import_csv(kind, path.read_text(encoding="utf-8-sig"))
        if not result.ok:
            first = "; ".join(f"line {e.line}: {e.message}" for e in result.errors[:5])
            raise CatalogDataError(f"{path.name} was not loaded: {first}")
        results[kind.key] = result
    return results


def catalog_import_create(
    *, organisation: Organisation, user, kind_key: str, filename: str, csv_text: str
) -> CatalogImport:
    """Record an uploaded file and queue its import once the record is committed."""
    kind_get(kind_key)  # KeyError for an unknown kind: the form prevents it
    job = CatalogImport.objects.create(
        organisation=organisation,
        created_by=user,
        kind=kind_key,
        filename=filename[:255],
        csv_text=csv_text,
        progress_message=jobs.WAITING,
    )
    jobs.job_enqueue(job)
    return job


def catalog_import_execute(*, job: CatalogImport, recorder: jobs.JobRecorder) -> None:
    """Import one claimed upload: validate every row, save all or nothing, store the outcome.

    A file with bad rows is a finished job with status failed, its ``errors`` and no
    ``error`` (nothing went wrong with the job itself).
    """
    recorder(0.1, "Checking every row")
    result = import_csv(kind_get(job.kind), job.csv_text)
    job.created, job.updated, job.unchanged = result.created, result.updated, result.unchanged
    job.errors = [{"line": e.line, "message": e.message} for e in result.errors]
    if result.ok:
        job.message = (
            f"{result.rows} rows: {result.created} created, {result.updated} updated, "
            f"{result.unchanged} unchanged; {result.prices_recorded} prices recorded."
        )
        jobs.job_finish(job, message="Imported")
    else:
        job.message = f"{len(result.errors)} problem(s) found; nothing was saved."
        jobs.job_finish(job, status=ImportStatus.FAILED, message="Rejected")
    logger.info("catalog import %s: %s", job.pk, job.message)
