"""Two people on the same workload page: one person's autosaves never conflict; the other's
stale change to the same field is refused in the page with both values, nothing is lost."""

import pytest

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser


def _autosave(page, selector: str, value: str) -> str:
    """Type a value and leave the field; returns the status line the htmx answer shows.

    The results section is marked before the change and the status is read from the section
    that replaces it: the previous answer's status line is still in the page when the response
    arrives, and reading it before htmx swaps would return the old status."""
    page.locator("#sizing-results").evaluate("section => section.dataset.answered = 'before'")
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.fill(selector, value)
        page.locator(selector).blur()
    assert answer.value.status == 200
    fresh = "#sizing-results:not([data-answered])"
    status = page.locator(f"{fresh} [data-testid=form-saved], {fresh} [data-testid=form-errors]")
    status.first.wait_for()
    return status.first.inner_text()


def test_autosave_keeps_its_version_and_a_stale_tab_sees_the_conflict(
    browser, live_server, demo_user
):
    from planner.models import Workload

    workload = Workload.objects.order_by("pk").first()
    url = f"{live_server.url}/plans/{workload.plan_id}/workloads/{workload.pk}/"
    first_context, second_context = browser.new_context(), browser.new_context()
    first, second = first_context.new_page(), second_context.new_page()
    for page in (first, second):
        page.set_default_timeout(20_000)
        sign_in(page, live_server.url, *demo_user)
        page.goto(url)
        page.locator("details.panel summary").first.click()  # open the form if folded

    # The first person changes the same field twice and then another: each autosave answers
    # with the new version, so none of them conflicts with the one before.
    assert "Saved" in _autosave(first, "#id_headroom_pct", "30")
    assert "Saved" in _autosave(first, "#id_headroom_pct", "35")
    assert "Saved" in _autosave(first, "#id_peak_concurrency", "450")
    workload.refresh_from_db()
    assert (workload.headroom_pct, workload.peak_concurrency) == (35, 450)
    assert first.locator("#id_loaded_version").input_value() == str(workload.version)

    # The second tab still holds the page as first loaded: its change to the same field is
    # refused, in the page, with both values; the first person's value stays stored.
    status = _autosave(second, "#id_headroom_pct", "25")
    assert "Headroom (%): now 35, yours 25" in status
    assert "Changed meanwhile to 35." in second.locator("#err-headroom_pct").inner_text()
    assert second.locator("#id_headroom_pct").input_value() == "25"
    workload.refresh_from_db()
    assert workload.headroom_pct == 35
    # The field only the first person changed now shows their value in the second tab, so
    # the second tab's next autosave cannot put the old one back.
    assert second.locator("#id_peak_concurrency").input_value() == "450"

    # Saving again (any change) keeps the second person's value, and the first's other change.
    assert "Saved" in _autosave(second, "#id_tpot_ms", "45")
    workload.refresh_from_db()
    assert (workload.headroom_pct, workload.peak_concurrency, workload.tpot_ms) == (25, 450, 45)

    first_context.close()
    second_context.close()
