"""Project-level guarantees: deploy checks, migrations in step, compose file valid,
and the eager-Celery default when no broker is configured."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_DIR = Path(__file__).resolve().parents[1]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment minus what tests set for themselves (never seen in deployment)."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    return {**env, **extra}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=PROJECT_DIR,
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_pass_check_deploy_with_no_warning():
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_SETTINGS_MODULE="planner.settings.production",
        SECRET_KEY="a-long-random-production-secret-4f8a9c2e7b1d6e3f0a5b8c9d2e7f1a4b6c8d",
        ALLOWED_HOSTS="planner.example.com",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=PROJECT_DIR,
        env={**env, "DJANGO_SETTINGS_MODULE": "planner.settings.production"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_migrations_are_in_step_with_models():
    result = manage(
        "makemigrations", "--check", "--dry-run", DJANGO_SETTINGS_MODULE="planner.settings.test"
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="docker-compose not installed")
def test_docker_compose_file_is_valid():
    result = subprocess.run(
        ["docker-compose", "-f", "docker-compose.yml", "config", "-q"],
        cwd=PROJECT_DIR,
        env={**os.environ, "SECRET_KEY": "compose-config-check"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    services = subprocess.run(
        ["docker-compose", "-f", "docker-compose.yml", "config", "--services"],
        cwd=PROJECT_DIR,
        env={**os.environ, "SECRET_KEY": "compose-config-check"},
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.split()
    assert set(services) == {"web", "worker", "beat", "db", "redis"}


def test_celery_runs_eagerly_without_a_broker():
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='planner.settings.local';"
        "django.setup(); from planner.celery import app; print(app.conf.task_always_eager)"
    )
    env = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}
    eager = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_DIR, env=env, capture_output=True, text=True
    )
    queued = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_DIR,
        env={**env, "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0"},
        capture_output=True,
        text=True,
    )
    assert eager.stdout.strip() == "True", eager.stderr
    assert queued.stdout.strip() == "False", queued.stderr


def test_load_catalog_and_demo_commands_are_idempotent(db):
    from django.core.management import call_command

    from catalog.models import Accelerator
    from planner.models import Membership

    call_command("load_catalog", verbosity=0)
    call_command("load_demo", verbosity=0)
    call_command("load_catalog", verbosity=0)
    call_command("load_demo", verbosity=0)

    assert Accelerator.objects.count() == 26
    assert Membership.objects.filter(user__username="demo", role="owner").count() == 1


def test_local_settings_serve_pages_and_static_files(tmp_path):
    """What `make run` serves: local settings, a fresh SQLite file, no collectstatic."""
    code = """
import os, django
os.environ["DJANGO_SETTINGS_MODULE"] = "planner.settings.local"
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
call_command("load_demo", verbosity=0)
from django.test import Client
client = Client(HTTP_HOST="127.0.0.1")
assert client.get("/accounts/login/").status_code == 200
# Through the sign-in page (django-axes throttles sign-ins and needs the request).
signed_in = client.post("/accounts/login/", {"username": "demo", "password": "demo-planner-2026"})
assert signed_in.status_code == 302, signed_in.status_code
assert client.get("/").status_code == 200
assert client.get("/catalog/compare/").status_code == 200
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'run.sqlite3'}"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.strip().endswith("ok"), result.stderr[-2000:]


def test_demo_plan_is_sized_by_the_engine(demo):
    """The plan load_demo builds (`demo_plan_build`; the session's `demo` fixture is built by
    the same builder, and the command's own run is the idempotency test's)."""
    from planner.models import Plan

    plan = Plan.objects.get(organisation=demo[2], name__startswith="Customer assistant")
    workloads = list(plan.workloads.all())
    assert [w.kind for w in workloads] == ["chat", "batch"]
    assert all(w.has_choice and w.chosen_replicas >= 1 for w in workloads)
    regions = set().union(*(w.region_shares for w in workloads))
    assert {"eu-west", "us-east"} <= regions  # users in Europe and North America
