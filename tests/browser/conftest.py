"""Playwright driving Debian's chromium against the live test server.

Never downloads a browser: it uses /usr/bin/chromium (or $CHROMIUM_PATH) and skips with the
reason when it is missing (a failure in CI, where REQUIRE_SERVICES=1).
"""

import os
import shutil

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser():
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.skip(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    # The Playwright sync API runs an event loop in the test thread; the tests' own ORM calls
    # (fixtures, assertions) are safe there because nothing else uses the thread. Tests that
    # start subprocesses remove the variable from the child's environment.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def page(browser):
    # Playwright's wait_for_function polls by evaluating a string in the page, which the
    # Content-Security-Policy (no 'unsafe-eval') forbids: the flows bypass the policy, and
    # tests/browser/test_csp.py checks it with `strict_page`, which does not.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def strict_page(browser):
    """A page under the site's Content-Security-Policy, as a visitor's browser applies it."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture(scope="session")
def demo_user_rows(tmp_path_factory):
    """Where the first `demo_user` of the session leaves the rows it built (a fixture file)."""
    return tmp_path_factory.mktemp("demo-user") / "demo.xml"


@pytest.fixture
def demo_user(transactional_db, demo_user_rows):
    """The demo consultant exactly as `make run` creates it, and the catalog.

    The first test of the session builds them and saves the rows it built; the next ones
    (each starting from the empty database a committed test leaves) load those rows back,
    which is a tenth of the build. Content types and permissions, which every flush
    recreates with new keys, are saved by natural key; XML, because Django's JSON drops the
    microseconds of a time (a revision's content hash covers the times it holds)."""
    from django.core.cache import cache
    from django.core.management import call_command

    from planner.management.commands.load_demo import DEMO_PASSWORD, DEMO_USERNAME
    from planner.sharing.body import memo_clear

    if demo_user_rows.exists():
        call_command("loaddata", str(demo_user_rows), verbosity=0)
        # Memoised pages and rate-limit counters of the previous test's rows (same keys).
        cache.clear()
        memo_clear()
        return DEMO_USERNAME, DEMO_PASSWORD

    from catalog.services import catalog_load_reference
    from planner.demo import demo_plan_build
    from planner.services import demo_setup

    catalog_load_reference()
    user, organisation, _ = demo_setup(
        username=DEMO_USERNAME, password=DEMO_PASSWORD, organisation_name="Demo Co"
    )
    demo_plan_build(organisation=organisation, user=user)
    call_command(
        "dumpdata", exclude=["contenttypes", "auth.permission"], natural_foreign=True,
        use_base_manager=True, format="xml", output=str(demo_user_rows), verbosity=0,
    )  # fmt: skip
    return DEMO_USERNAME, DEMO_PASSWORD
