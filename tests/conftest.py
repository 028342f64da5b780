"""Shared fixtures: organisations, users, the catalog, and the rule that CI may not skip
tests that need a real service or the browser."""

import os

import pytest

# Django imports stay inside the fixtures so that the engine tests (plain Python) can also
# run with `-p no:django`.

# CI sets REQUIRE_SERVICES=1: a test marked `service` or `browser` that skips is a failure
# there, so a green CI run proves PostgreSQL, Redis, the Celery worker and chromium were used.
REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"

# Property tests explore new examples on a developer's machine; CI replays a fixed set
# (derandomize), so its verdict depends on the commit, not on the draw. A failure found
# locally is pinned as an ordinary test.
try:
    from hypothesis import settings as hypothesis_settings

    hypothesis_settings.register_profile("ci", derandomize=True, database=None)
    if os.environ.get("CI") or REQUIRE_SERVICES:
        hypothesis_settings.load_profile("ci")
except ImportError:  # the engine tests can run without the test extra
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if (
        REQUIRE_SERVICES
        and report.skipped
        and (item.get_closest_marker("service") or item.get_closest_marker("browser"))
    ):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped but REQUIRE_SERVICES=1 forbids it: {reason}"


def make_member(organisation, username: str, role: str = "consultant"):
    from django.contrib.auth.models import User

    from planner.models import Membership

    user = User.objects.create_user(
        username=username, email=f"{username}@example.com", password="pw-for-tests-1"
    )
    Membership.objects.create(organisation=organisation, user=user, role=role)
    return user


@pytest.fixture
def org_a(db):
    from planner.models import Organisation

    return Organisation.objects.create(name="Alpha Advisory", slug="alpha")


@pytest.fixture
def org_b(db):
    from planner.models import Organisation

    return Organisation.objects.create(name="Beta Partners", slug="beta")


@pytest.fixture
def owner_a(org_a):
    return make_member(org_a, "owner_a", "owner")


@pytest.fixture
def consultant_a(org_a):
    return make_member(org_a, "consultant_a", "consultant")


@pytest.fixture
def owner_b(org_b):
    return make_member(org_b, "owner_b", "owner")


@pytest.fixture
def staff_a(org_a):
    user = make_member(org_a, "staff_a", "consultant")
    user.is_staff = True
    user.save()
    return user


@pytest.fixture
def staff_b(org_b):
    user = make_member(org_b, "staff_b", "consultant")
    user.is_staff = True
    user.save()
    return user


@pytest.fixture
def catalog(db):
    """The reference catalog, loaded from catalog/data (as `make run` does)."""
    from catalog.models import Accelerator
    from catalog.services import catalog_load_reference

    if not Accelerator.objects.exists():
        catalog_load_reference()


@pytest.fixture
def postgres(transactional_db):
    """The real PostgreSQL of DATABASE_URL (committed transactions, other connections see
    them), or a skip naming what is missing."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: set DATABASE_URL=postgres://... (make test does in CI)")
    return connection


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def broker_at(monkeypatch):
    """Point the Celery app at a broker URL for the test (eager mode off), then restore it.

    Used with a URL nobody listens on (the broker is down) or the ``hung_redis`` socket.
    """
    from planner.celery import app

    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url")}

    def point(url: str) -> None:
        # Celery's broker_url setting prefers the CELERY_BROKER_URL variable over its config.
        monkeypatch.setenv("CELERY_BROKER_URL", url)
        app.conf.update(task_always_eager=False, broker_url=url)
        # Connection and producer pools were built for another broker: start fresh ones.
        monkeypatch.setattr(app, "_pool", None)
        monkeypatch.setattr(app.amqp, "_producer_pool", None)

    yield point
    app.conf.update(saved)


@pytest.fixture
def broker_down(broker_at):
    """The broker refuses connections (Redis stopped): a port nobody listens on."""
    url = f"redis://127.0.0.1:{_free_port()}/0"
    broker_at(url)
    return url


@pytest.fixture
def broker_hung(broker_at):
    """A broker that accepts connections and never answers (Redis hung, e.g. SIGSTOPped)."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    url = f"redis://127.0.0.1:{server.getsockname()[1]}/0"
    broker_at(url)
    yield url
    server.close()
    for conn in held:
        conn.close()
