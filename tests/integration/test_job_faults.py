"""Fault injection with a real worker, real Redis and PostgreSQL: a TCO run survives its pool
process or its whole worker being SIGKILLed mid-run, and a click while the broker is down or
hung saves the run, says so, and the run completes once the broker is back.

The TCO runs here go through ``tests/integration/slow_worker.py`` where a run must last long
enough to be killed; leases and heartbeats are shortened through the worker's environment.
"""

import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse

from planner import jobs
from planner.facility import services
from planner.facility.models import TcoRun
from tests.facility import conftest as facility_fixtures
from tests.integration.conftest import REDIS_URL, redis_reachable, wait_for

sized_plan = facility_fixtures.sized_plan
colo_site = facility_fixtures.colo_site

pytestmark = pytest.mark.service

FAST_LEASE = {"JOBS_HEARTBEAT_SECONDS": "0.5", "JOBS_LEASE_SECONDS": "3"}


@pytest.fixture
def shared_redis():
    if not redis_reachable(REDIS_URL):
        pytest.skip(f"needs Redis at {REDIS_URL}")


def _run(run_id: int) -> TcoRun:
    return TcoRun.objects.get(pk=run_id)


def _finished(run_id: int) -> TcoRun | None:
    run = _run(run_id)
    return run if run.is_finished else None


def _in_slow_stage(run_id: int) -> TcoRun | None:
    run = _run(run_id)
    return run if run.status == "running" and "slow test step" in run.progress_message else None


def _children(pid: int) -> list[int]:
    """The worker's child processes (its prefork pool), from /proc."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(child) for child in children]


def test_killing_the_pool_process_mid_run_redelivers_the_run_and_it_completes(
    celery_worker_factory, shared_redis, sized_plan, colo_site, consultant_a
):
    worker = celery_worker_factory(pool="prefork", slow_tco_s=3, env=FAST_LEASE)
    run, created = services.tco_run_request(plan=sized_plan, user=consultant_a)
    assert created  # outside a transaction on_commit fires at once: the task is on Redis

    running = wait_for(lambda: _in_slow_stage(run.pk), timeout_s=60, interval_s=0.1)
    (pool_process,) = _children(worker.pid)
    os.kill(pool_process, signal.SIGKILL)  # what the OOM killer does

    done = wait_for(lambda: _finished(run.pk), timeout_s=60)

    assert running.attempts == 1 and running.worker
    # The message went back to the queue (reject_on_worker_lost) and was run again.
    assert done.status == "succeeded", done.error
    assert done.attempts == 2 and done.results["monte_carlo"]["paths"] == 10_000
    assert worker.poll() is None  # the worker itself lives on with a new pool process


def test_killing_the_whole_worker_mid_run_fails_it_after_the_lease_then_it_runs_again(
    celery_worker_factory, shared_redis, sized_plan, colo_site, consultant_a, client, settings
):
    settings.JOBS_LEASE_SECONDS = 3  # the reaper and the pages here; the worker's env below
    worker = celery_worker_factory(pool="solo", slow_tco_s=60, env=FAST_LEASE)
    run, _ = services.tco_run_request(plan=sized_plan, user=consultant_a)
    wait_for(lambda: _in_slow_stage(run.pk), timeout_s=60, interval_s=0.1)

    worker.send_signal(signal.SIGKILL)  # the whole worker: nothing is left to report
    worker.wait(timeout=10)
    last_beat = _run(run.pk).heartbeat_at

    wait_for(lambda: jobs.jobs_reap()["lost"], timeout_s=20, interval_s=0.5)
    lost = _run(run.pk)
    client.force_login(consultant_a)
    status = client.get(reverse("facility:tco_status", args=[sized_plan.pk, run.pk]))

    # Failed by the lease: no sooner than 3 s after the last heartbeat of the dead worker.
    assert lost.finished_at - last_beat >= timedelta(seconds=3)
    assert lost.status == "failed" and lost.error == jobs.LOST_WORKER
    assert status.status_code == 286 and "killed or ran out of memory" in status.content.decode()

    celery_worker_factory(pool="solo")  # a new worker, at normal speed
    again = client.post(reverse("facility:tco_run", args=[sized_plan.pk]))
    done = wait_for(lambda: _finished(run.pk), timeout_s=60)

    assert again.status_code == 302
    assert done.status == "succeeded" and done.attempts == 1 and done.error == ""
    assert TcoRun.objects.filter(plan=sized_plan).count() == 1


def test_a_click_while_the_broker_is_hung_or_down_saves_the_run_until_it_is_back(
    celery_worker_factory, private_redis, sized_plan, colo_site, consultant_a, client, settings
):
    celery_worker_factory.point_app_at(private_redis.url)
    client.force_login(consultant_a)
    url = reverse("facility:tco_run", args=[sized_plan.pk])

    private_redis.freeze()  # hung: accepts connections, never answers
    started = time.monotonic()
    hung = client.post(url)
    hung_s = time.monotonic() - started
    private_redis.thaw()
    private_redis.stop()  # down: connections refused
    started = time.monotonic()
    down = client.post(url, follow=True)
    down_s = time.monotonic() - started
    print(f"click with the broker hung: {hung_s:.2f} s, down: {down_s:.2f} s")

    assert hung.status_code == 302 and hung_s < 3.5, hung_s
    assert down.status_code == 200
    assert "The job queue is unavailable; your request is saved" in down.content.decode()
    run = TcoRun.objects.get(plan=sized_plan)  # one run for both clicks
    assert run.status == "pending" and run.queue_unavailable
    assert jobs.jobs_reap() == {"lost": 0, "queued": 0, "unqueued": 1}

    private_redis.start()
    celery_worker_factory(broker_url=private_redis.url, pool="solo")
    assert jobs.jobs_reap()["queued"] == 1  # the beat task, once the broker is back
    done = wait_for(lambda: _finished(run.pk), timeout_s=60)

    assert done.status == "succeeded" and done.attempts == 1
    page = client.get(reverse("facility:tco", args=[sized_plan.pk])).content.decode()
    assert "up to date with the plan" in page and "queue is unavailable" not in page


def test_simultaneous_run_clicks_make_one_run(postgres, sized_plan, colo_site, consultant_a):
    """Eight requests at once for the same inputs (each its own PostgreSQL connection)."""
    import threading

    from django.db import connections

    barrier = threading.Barrier(8)
    results, errors = [], []

    def click() -> None:
        try:
            barrier.wait(timeout=30)
            results.append(
                services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
            )
        except Exception as exc:  # reported below with the thread's failure
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=click) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not errors, errors
    assert len({run.pk for run, _ in results}) == 1
    assert sum(created for _, created in results) == 1
    assert TcoRun.objects.filter(plan=sized_plan).count() == 1
