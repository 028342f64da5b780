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


@pytest.fixture
def postgres(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: set DATABASE_URL=postgres://... (make test does in CI)")
    return connection


@pytest.fixture
def celery_worker_process(postgres, monkeypatch):
    """A `celery worker` subprocess on a private Redis queue, sharing the test database.

    The test process sends tasks to Redis (eager mode off for the test); the worker reads
    and writes the same PostgreSQL test database, so what it stores is visible here.
    """
    if not redis_reachable(REDIS_URL):
        pytest.skip(f"needs Redis at {REDIS_URL}")
    from planner.celery import app

    queue = f"test-{uuid.uuid4().hex[:8]}"
    # Celery's broker_url setting prefers the CELERY_BROKER_URL variable over its config.
    monkeypatch.setenv("CELERY_BROKER_URL", REDIS_URL)
    overrides = {"task_always_eager": False, "broker_url": REDIS_URL, "task_default_queue": queue}
    saved = {key: app.conf[key] for key in overrides}
    app.conf.update(overrides)
    # Connection and producer pools were built for the eager default: start fresh ones.
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)

    settings_dict = connection.settings_dict
    database_url = (
        f"postgres://{settings_dict['USER']}@{settings_dict['HOST'] or '127.0.0.1'}:"
        f"{settings_dict['PORT'] or 5432}/{settings_dict['NAME']}"
    )
    env = {
        **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        "DJANGO_SETTINGS_MODULE": "planner.settings.test",
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": REDIS_URL,
        "CELERY_WORKER_QUEUE": queue,
    }
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "planner",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-Q",
            queue,
            "--loglevel=INFO",
        ],
        cwd=PROJECT_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    yield worker
    worker.terminate()
    try:
        output, _ = worker.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        worker.kill()
        output, _ = worker.communicate()
    print(output[-4000:])
    app.conf.update(saved)


def wait_for(predicate, timeout_s: float = 60.0, interval_s: float = 0.25):
    """Poll until predicate() is truthy; returns its value or raises TimeoutError."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise TimeoutError(f"condition not met within {timeout_s} s")
