"""A changed peak marks the bill of materials stale: its page says so, and one click (htmx,
under the site's Content-Security-Policy) regenerates it and the banner goes."""

import pytest

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser


def test_stale_banner_and_one_click_recompute(strict_page, live_server, demo_user):
    from planner import freshness
    from planner.models import Plan

    page = strict_page
    violations = []
    page.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    base = live_server.url
    plan = Plan.objects.get(name__startswith="Customer assistant")
    workload = plan.workloads.get(name="Customer chat assistant")
    sign_in(page, base, *demo_user)

    page.goto(f"{base}/plans/{plan.pk}/sourcing/")
    assert page.get_by_test_id("stale-banner").count() == 0  # the demo starts current

    # The consultant triples the peak on the sizing page (autosaved, chosen fleet re-planned).
    page.goto(f"{base}/plans/{plan.pk}/workloads/{workload.pk}/")
    page.locator("details.panel > summary").first.click()  # the inputs fold once chosen
    page.fill("#id_peak_concurrency", str(workload.peak_concurrency * 3))
    page.locator("#id_peak_concurrency").blur()
    page.wait_for_selector("[data-testid=form-saved]")

    page.goto(f"{base}/plans/{plan.pk}/sourcing/")
    banner = page.get_by_test_id("stale-banner")
    assert banner.get_attribute("data-kind") == "bom"
    assert banner.get_attribute("data-state") == "stale"
    assert "computed from inputs that have changed since" in banner.inner_text()

    banner.get_by_test_id("recompute").click()
    page.wait_for_selector("text=Bill of materials regenerated")
    assert page.url.endswith(f"/plans/{plan.pk}/sourcing/")
    assert page.get_by_test_id("stale-banner").count() == 0
    assert freshness.bom_freshness(plan).is_current
    assert violations == []
