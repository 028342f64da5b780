"""The TCO task on a real Celery worker with Redis and PostgreSQL: results and progress stored."""

import pytest
from django.urls import reverse

from planner.facility import services
from planner.facility.models import TcoRun
from tests.facility import conftest as facility_fixtures
from tests.integration.conftest import wait_for

# The facility tests' plan with chosen configurations, and its colocation site.
sized_plan = facility_fixtures.sized_plan
colo_site = facility_fixtures.colo_site

pytestmark = pytest.mark.service


def _finished(run_id: int):
    run = TcoRun.objects.get(pk=run_id)
    return run if run.is_finished else None


def test_worker_computes_and_stores_a_tco_run(
    celery_worker_process, sized_plan, colo_site, consultant_a, client
):
    run, created = services.tco_run_request(plan=sized_plan, user=consultant_a)
    assert created  # outside a transaction on_commit fires at once: the task is on Redis

    seen = set()

    def done():
        current = TcoRun.objects.get(pk=run.pk)
        seen.add((current.status, round(current.progress, 2)))
        return current if current.is_finished else None

    finished = wait_for(done, timeout_s=90, interval_s=0.05)

    assert finished.status == "succeeded", finished.error
    assert finished.progress == 1.0 and finished.progress_message == "Done"
    assert finished.attempts == 1 and finished.started_at and finished.finished_at
    assert finished.results["monte_carlo"]["paths"] == 10_000
    # Each cloud provider's own price list (the hyperscalers with their 1- and 3-year
    # commitments), the plan's site and the hybrid (tests/facility and tests/engine pin the
    # figures; here: the worker stored every option the engine made, as it makes them).
    kinds = {o["kind"] for o in finished.results["options"]}
    assert {"cloud_on_demand", "cloud_committed", "hybrid"} <= kinds
    assert len(finished.results["options"]) == 14, [o["key"] for o in finished.results["options"]]
    # One owned option for the plan's deployment (not one per site), in the plan's EUR.
    keys = [o["key"] for o in finished.results["options"]]
    assert keys.count("owned") == 1 and not any(k.startswith("site-") for k in keys)
    assert finished.results["currency"] == "EUR" and finished.results["fx"]["date"]
    assert finished.input_hash == services.tco_inputs_build(plan=sized_plan).input_hash
    assert any(status in ("pending", "running") for status, _ in seen) or len(seen) == 1
    client.force_login(consultant_a)
    status = client.get(reverse("facility:tco_status", args=[sized_plan.pk, run.pk]))
    assert status.status_code == 286 and "fig-monte-carlo" in status.content.decode()


def test_worker_marks_a_broken_run_failed_after_retries(
    celery_worker_process, sized_plan, consultant_a
):
    from planner.facility.tasks import tco_run_task

    run = TcoRun.objects.create(plan=sized_plan, input_hash="f" * 64, inputs={"broken": True})
    tco_run_task.delay(run.pk)

    failed = wait_for(lambda: _finished(run.pk), timeout_s=90)

    assert failed.status == "failed"
    assert "KeyError" in failed.error and failed.attempts == 3
