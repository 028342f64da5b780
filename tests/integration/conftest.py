"""Real services for integration tests: PostgreSQL (through DATABASE_URL) and a Celery
worker process consuming from Redis. Skipped with the reason when they are not there
(CI sets REQUIRE_SERVICES=1, which turns such a skip into a failure)."""

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

PROJECT_DIR = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def redis_reachable(url: str) -> bool:
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, _, port = host_port.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port or 6379)), timeout=1):
            return True
    except OSError:
        return False


def _database_url() -> str:
    settings_dict = connection.settings_dict
    return (
        f"postgres://{settings_dict['USER']}@{settings_dict['HOST'] or '127.0.0.1'}:"
        f"{settings_dict['PORT'] or 5432}/{settings_dict['NAME']}"
    )


def _stop(worker: subprocess.Popen) -> str:
    if worker.poll() is None:
        worker.terminate()
    try:
        output, _ = worker.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        worker.kill()
        output, _ = worker.communicate()
    return output or ""


@pytest.fixture
def celery_worker_factory(postgres, monkeypatch):
    """Start `celery worker` subprocesses on a private queue, sharing the test database.

    ``start(broker_url=..., pool="solo", env={...}, slow_tco_s=None)`` returns the process.
    The test process sends tasks to that broker (eager mode off for the test); the worker
    reads and writes the same PostgreSQL test database, so what it stores is visible here.
    With ``slow_tco_s`` the worker runs through ``tests/integration/slow_worker.py``, whose
    TCO Monte Carlo first spends that many seconds reporting progress (long enough to kill).
    Every worker still running is stopped (SIGTERM, then SIGKILL) at the end of the test.
    """
    from planner.celery import app

    queue = f"test-{uuid.uuid4().hex[:8]}"
    saved = {
        key: app.conf[key] for key in ("task_always_eager", "broker_url", "task_default_queue")
    }
    started: list[subprocess.Popen] = []

    def point_app_at(broker_url: str) -> None:
        # Celery's broker_url setting prefers the CELERY_BROKER_URL variable over its config.
        monkeypatch.setenv("CELERY_BROKER_URL", broker_url)
        app.conf.update(task_always_eager=False, broker_url=broker_url, task_default_queue=queue)
        # Connection and producer pools were built for the eager default: start fresh ones.
        monkeypatch.setattr(app, "_pool", None)
        monkeypatch.setattr(app.amqp, "_producer_pool", None)

    def start(
        *,
        broker_url: str = REDIS_URL,
        pool: str = "solo",
        env: dict[str, str] | None = None,
        slow_tco_s: float | None = None,
    ) -> subprocess.Popen:
        point_app_at(broker_url)
        worker_env = {
            **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
            "DJANGO_SETTINGS_MODULE": "planner.settings.test",
            "DATABASE_URL": _database_url(),
            "CELERY_BROKER_URL": broker_url,
            **(env or {}),
        }
        program = ["-m", "celery"]
        if slow_tco_s is not None:
            program = ["-m", "tests.integration.slow_worker"]
            worker_env["SLOW_TCO_SECONDS"] = str(slow_tco_s)
        worker = subprocess.Popen(
            [
                sys.executable, *program, "-A", "planner", "worker", f"--pool={pool}",
                "--concurrency=1", "--without-gossip", "--without-mingle", "--without-heartbeat",
                "-Q", queue, "--loglevel=INFO",
            ],
            cwd=PROJECT_DIR,
            env=worker_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
        started.append(worker)
        return worker

    start.point_app_at = point_app_at
    yield start
    for worker in started:
        print(_stop(worker)[-4000:])
    app.conf.update(saved)


@pytest.fixture
def celery_worker_process(celery_worker_factory):
    """One `celery worker --pool=solo` on the shared test Redis (DB 15), private queue."""
    if not redis_reachable(REDIS_URL):
        pytest.skip(f"needs Redis at {REDIS_URL}")
    return celery_worker_factory()


@pytest.fixture
def private_redis():
    """A redis-server of this test alone on a free port, which the test may stop and start.

    The shared Redis on 6379 is never stopped. ``stop()`` kills it (the broker is down),
    ``freeze()``/``thaw()`` SIGSTOP/SIGCONT it (hung: it accepts and never answers),
    ``start()`` starts it again on the same port.
    """
    import shutil
    import signal

    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("needs redis-server on the PATH to start a private broker")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    class PrivateRedis:
        url = f"redis://127.0.0.1:{port}/0"
        process: subprocess.Popen | None = None

        def start(self) -> None:
            self.process = subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
            wait_for(lambda: redis_reachable(self.url), timeout_s=10, interval_s=0.05)

        def stop(self) -> None:
            self.process.kill()
            self.process.wait(timeout=10)

        def freeze(self) -> None:
            self.process.send_signal(signal.SIGSTOP)

        def thaw(self) -> None:
            self.process.send_signal(signal.SIGCONT)

    redis = PrivateRedis()
    redis.start()
    yield redis
    if redis.process.poll() is None:
        redis.thaw()
        redis.stop()


def wait_for(predicate, timeout_s: float = 60.0, interval_s: float = 0.25):
    """Poll until predicate() is truthy; returns its value or raises TimeoutError."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise TimeoutError(f"condition not met within {timeout_s} s")
