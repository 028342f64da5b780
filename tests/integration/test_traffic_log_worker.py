"""A 1,000,000-row gateway log imported by a real Celery worker (Redis, PostgreSQL).

The log is the benchmark's (tests/measured/big_logs.py, a 218 MB usage-export CSV), written
into the test's temporary directory; the upload is stored in a media folder the worker shares
and only the worker reads it. The figures are checked against NumPy on the same arrays.
"""

import pytest
from django.core.files import File

from planner.engine.traffic_log import COLUMN_PRESETS
from planner.measured import logs
from planner.measured.models import TrafficLogImport
from tests.factories import PlanFactory, WorkloadFactory
from tests.integration.conftest import REDIS_URL, redis_reachable, wait_for
from tests.measured import big_logs

pytestmark = pytest.mark.service

ROWS = 1_000_000


def test_worker_imports_a_million_row_log(
    celery_worker_factory, catalog, org_a, consultant_a, settings, tmp_path
):
    if not redis_reachable(REDIS_URL):
        pytest.skip(f"needs Redis at {REDIS_URL}")
    media = tmp_path / "media"
    settings.MEDIA_ROOT = media
    celery_worker_factory(env={"MEDIA_ROOT": str(media)})
    log = big_logs.draw(ROWS)
    path = tmp_path / "gateway.csv"
    size = big_logs.write_csv(path, log)
    assert size > 200_000_000
    workload = WorkloadFactory(plan=PlanFactory(organisation=org_a))
    preset = COLUMN_PRESETS["usage_export"]
    with path.open("rb") as handle:
        job = logs.log_import_request(
            workload=workload, upload=File(handle, name="gateway.csv"),
            log_format=preset["format"], columns=preset["columns"], user=consultant_a,
        )  # fmt: skip
    assert job.file_bytes == size and job.status in ("pending", "running")

    done = wait_for(
        lambda: (j := TrafficLogImport.objects.get(pk=job.pk)).is_finished and j,
        timeout_s=300,
        interval_s=0.5,
    )

    assert done.status == "succeeded", done.problem or done.error
    assert done.worker not in ("", "inline")
    assert done.progress_message == f"{ROWS:,} requests read"
    expected = big_logs.expected_figures(log)
    everything = done.result["all"]
    assert everything["requests"] == ROWS
    assert everything["input_tokens_mean"] == pytest.approx(expected["input_tokens_mean"])
    assert everything["input_tokens_p95"] == pytest.approx(expected["input_tokens_p95"])
    assert everything["output_tokens_mean"] == pytest.approx(expected["output_tokens_mean"])
    assert everything["busiest_minute_per_s"] == pytest.approx(expected["busiest_minute_per_s"])
    assert everything["concurrency_basis"] == "arrival and duration"
    assert dict(everything["region_users"]) == expected["users_by_region"]
    assert {k: done.result[k]["requests"] for k in expected["types"]} == expected["types"]
    assert not done.file and not any(media.rglob("*.csv"))  # retention 0: deleted once read
