"""The sizing table on a 1280 x 800 screen: the cost column and the Choose buttons are on the
screen without sideways scrolling, and its three toggles combine, through an autosave of the
workload and a choice."""

import re

import pytest
from django.urls import reverse

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser

SCREEN = {"width": 1280, "height": 800}


@pytest.fixture
def laptop(browser):
    context = browser.new_context(viewport=SCREEN, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def assert_on_screen(page, locator, what: str) -> None:
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    assert box is not None, what
    assert box["x"] >= 0 and box["x"] + box["width"] <= SCREEN["width"], (what, box)
    assert box["y"] >= 0 and box["y"] + box["height"] <= SCREEN["height"], (what, box)


def assert_table_fits(page) -> None:
    table = page.get_by_test_id("candidates")
    box = table.locator("xpath=..")  # the .table-wrap that would scroll
    assert box.evaluate("e => e.scrollWidth <= e.clientWidth"), "the table scrolls sideways"
    assert page.evaluate("document.documentElement.scrollWidth") <= SCREEN["width"]
    assert_on_screen(
        page, table.locator("thead th", has_text="EUR / M output tokens"), "cost"
    )  # the demo is EUR
    first_cost = table.locator("tbody tr:not(.infeasible)").first.locator("td.num").nth(7)
    assert_on_screen(page, first_cost, "a cost figure")
    assert_on_screen(page, table.locator("button", has_text="Choose").first, "Choose")


def test_the_sizing_table_fits_1280_pixels_and_its_toggles_combine(laptop, live_server, demo_user):
    from planner.models import Plan

    page = laptop
    plan = Plan.objects.get(name__startswith="Customer assistant")
    workload = plan.workloads.get(kind="chat")
    sign_in(page, live_server.url, *demo_user)
    url = live_server.url + reverse("workload_sizing", args=[plan.pk, workload.pk])
    page.goto(url)
    assert_table_fits(page)
    rows = page.locator("[data-testid=candidates] tbody tr")
    assert page.locator("[data-testid=candidates] tbody tr.infeasible").count() == 0

    # The three chips, one after the other: each keeps what the others switched on.
    for chip, param in (
        ("Show infeasible too", "show=all"),
        ("All precisions", "precisions=all"),
        ("Every tensor-parallel degree", "tp=all"),
    ):
        before = rows.count()
        page.get_by_role("link", name=chip).click()
        page.wait_for_url(re.compile(param))
        page.wait_for_function(f"document.querySelectorAll('[data-testid=candidates] tbody tr').length > {before}")  # fmt: skip
    assert all(p in page.url for p in ("show=all", "precisions=all", "tp=all"))
    assert page.get_by_role("link", name="Only feasible").count() == 1
    assert page.get_by_role("link", name="Best tensor-parallel degree only").count() == 1
    infeasible = page.locator("[data-testid=candidates] tbody tr.infeasible").count()
    assert infeasible > 0
    precisions = set(page.locator("[data-testid=candidates] tbody tr td:nth-child(2)").all_inner_texts())  # fmt: skip
    assert len(precisions) > 1
    assert_table_fits(page)  # with every row and the long reasons of the infeasible ones
    everything = rows.count()

    # A change of the workload recomputes the table with the toggles still on.
    page.locator("summary", has_text="Workload:").click()
    page.fill("#id_peak_concurrency", "450")
    page.locator("#id_peak_concurrency").blur()
    page.wait_for_selector("[data-testid=form-saved]")
    assert rows.count() == everything
    assert page.get_by_role("link", name="Only feasible").count() == 1

    # Choosing a row comes back to the same table.
    page.locator("[data-testid=candidates] button", has_text="Choose").first.click()
    page.wait_for_load_state()
    assert all(p in page.url for p in ("show=all", "precisions=all", "tp=all"))
    assert rows.count() == everything
    assert page.locator("[data-testid=candidates] tbody tr.chosen").count() == 1
