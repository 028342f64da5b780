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
    """A user of the organisation with the role; password "pw-for-tests-1"."""
    from tests.factories import member

    return member(organisation, username, role)


@pytest.fixture
def org_a(db):
    from tests.factories import OrganisationFactory

    return OrganisationFactory(name="Alpha Advisory", slug="alpha")


@pytest.fixture
def org_b(db):
    from tests.factories import OrganisationFactory

    return OrganisationFactory(name="Beta Partners", slug="beta")


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
    """The reference catalog, loaded from catalog/data (as `make run` does).

    Loaded once per session, outside the tests' transactions (see `_shared_data`); a
    transactional test loads its own, which its teardown flushes.
    """
    from catalog.models import Accelerator
    from catalog.services import catalog_load_reference

    if not Accelerator.objects.exists():
        catalog_load_reference()


# -- The catalog and the demo plan, built once per session (per xdist worker) -------------
#
# Loading the catalog takes about a second and building the demo plan (sizing, sites, TCO,
# BOM, orders, a published revision) several seconds of CPU; hundreds of tests read them.
# Each is built on the first test that asks for it and committed, outside any test's
# transaction; every test then runs in a transaction rolled back at its end, so what a test
# changes never reaches the next one. Tests are ordered so that those that do not ask for the
# catalog run before it exists, and those that ask for the catalog but not the demo before
# the demo exists (`pytest_collection_modifyitems`): a test still sees the database it would
# see alone. Transactional tests (committed writes, flushed at teardown) run last and start
# from an empty database as before: the shared rows are flushed before the first of them, and
# built again if a later test asks for them.

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "pw-for-tests-1"


def _is_transactional(item_or_request) -> bool:
    """Whether the test commits (transactional_db, live_server, django_db(transaction=True))."""
    node = getattr(item_or_request, "node", item_or_request)
    names = getattr(item_or_request, "fixturenames", ())
    marker = node.get_closest_marker("django_db")
    if marker is not None and (
        marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")
    ):
        return True
    return "transactional_db" in names or "live_server" in names


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """After pytest-django's order (database tests, transactional ones, the rest): tests that
    need no shared data, then those that need the catalog, then the demo's, then the
    transactional tests, then those without a database. Stable: file order within each."""

    def rank(item) -> int:
        names = getattr(item, "fixturenames", ())
        if _is_transactional(item):
            return 3
        if "demo" in names:
            return 2
        if "catalog" in names:
            return 1
        if "db" in names or item.get_closest_marker("django_db") is not None:
            return 0
        return 4

    items.sort(key=rank)


class SharedData:
    """The session's committed catalog and demo plan, rebuilt when a flush removed them."""

    def __init__(self, django_db_blocker, media_root) -> None:
        self.blocker = django_db_blocker
        self.media_root = media_root
        from django.conf import settings

        self.project_media_root = str(settings.MEDIA_ROOT)  # unless a test overrides it
        self.demo_pks: tuple[int, int, int] | None = None  # plan, user, organisation
        self.committed = False  # rows this object built may be in the database

    @staticmethod
    def _catalog_present() -> bool:
        from catalog.models import Accelerator

        return Accelerator.objects.exists()

    def _demo_present(self) -> bool:
        from planner.models import Plan

        return self.demo_pks is not None and Plan.objects.filter(pk=self.demo_pks[0]).exists()

    @staticmethod
    def _build(build):
        """Run ``build`` in a transaction that commits without running on-commit hooks: jobs
        the builders queue stay queued, as they do inside a test's transaction."""
        from django.db import connection, transaction

        from planner.computed import state_generation_bump

        with transaction.atomic():
            result = build()
            connection.run_on_commit = []
        state_generation_bump()  # what the dropped hooks would have done for kept results
        return result

    def ensure(self, *, demo: bool) -> None:
        """Commit the catalog (and the demo plan) unless they are there. Does nothing when a
        test transaction is already open (the `demo` fixture then builds inside it)."""
        from django.db import connection
        from django.test.utils import override_settings

        with self.blocker.unblock():
            if connection.in_atomic_block:
                return
            if not self._catalog_present():
                from catalog.services import catalog_load_reference

                self._build(catalog_load_reference)
                self.committed = True
            if demo and not self._demo_present():
                with override_settings(MEDIA_ROOT=str(self.media_root)):
                    plan, user, organisation = self._build(demo_build)
                self.demo_pks = (plan.pk, user.pk, organisation.pk)
                self.committed = True

    def flush(self) -> None:
        """Empty the database as a transactional test's teardown does."""
        from django.core.management import call_command

        with self.blocker.unblock():
            call_command("flush", verbosity=0, interactive=False, database="default")
        self.committed = False
        self.demo_pks = None


def demo_build():
    """(plan, user, organisation) of the demo consultancy, as `make run` builds them."""
    from catalog.models import Accelerator
    from catalog.services import catalog_load_reference
    from planner.demo import demo_plan_build
    from planner.services import demo_setup

    if not Accelerator.objects.exists():
        catalog_load_reference()
    user, organisation, _ = demo_setup(
        username=DEMO_USERNAME, password=DEMO_PASSWORD, organisation_name="Demo Co"
    )
    plan, _ = demo_plan_build(organisation=organisation, user=user)
    return plan, user, organisation


@pytest.fixture(scope="session")
def shared_data(django_db_setup, django_db_blocker, tmp_path_factory):
    return SharedData(django_db_blocker, tmp_path_factory.mktemp("demo-media"))


@pytest.fixture(autouse=True)
def _shared_data(request):
    """Before each test: commit the catalog and the demo it asks for, or, before a
    transactional test, remove them (it expects the empty database such tests leave)."""
    names = request.fixturenames
    wants = "catalog" in names or "demo" in names
    transactional = _is_transactional(request)
    if not wants and not transactional:
        return
    shared = request.getfixturevalue("shared_data")
    if transactional:
        if shared.committed:
            shared.flush()
        return
    shared.ensure(demo="demo" in names)


@pytest.fixture
def demo(shared_data, db, settings, tmp_path):
    """(plan, user, organisation) of the demo consultancy, as `make run` builds them: the
    session's demo plan, fresh instances read for this test (which runs in a transaction
    rolled back at its end). The user's password is DEMO_PASSWORD."""
    import os
    import shutil

    from django.contrib.auth.models import User
    from django.core.cache import cache

    from planner.computed import across_requests_forget
    from planner.models import Organisation, Plan
    from planner.sharing.body import memo_clear

    if str(settings.MEDIA_ROOT) == shared_data.project_media_root:
        settings.MEDIA_ROOT = tmp_path / "media"  # files the test writes stay out of var/
    if shared_data.demo_pks is not None and shared_data._demo_present():
        plan_pk, user_pk, organisation_pk = shared_data.demo_pks
        # Files the build wrote (hard links: cheap, and a test deleting one keeps the others').
        if any(p.is_file() for p in shared_data.media_root.rglob("*")):
            shutil.copytree(
                shared_data.media_root, settings.MEDIA_ROOT, dirs_exist_ok=True,
                copy_function=os.link,
            )  # fmt: skip
    else:  # a test transaction was open before the shared build could run: build in it
        plan, user, organisation = demo_build()
        plan_pk, user_pk, organisation_pk = plan.pk, user.pk, organisation.pk
    # Memoised pages and rate-limit counters of another test's (rolled back) rows.
    cache.clear()
    memo_clear()
    across_requests_forget()
    yield (
        Plan.objects.get(pk=plan_pk),
        User.objects.get(pk=user_pk),
        Organisation.objects.get(pk=organisation_pk),
    )
    cache.clear()
    memo_clear()


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
