"""A consultant creates a plan, adds a workload, sees candidates, picks one, and it stays."""

import re

import pytest

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser


def test_plan_workload_candidates_choice(page, live_server, demo_user):
    base = live_server.url
    sign_in(page, base, *demo_user)

    page.goto(f"{base}/plans/new/")
    page.fill("#id_name", "Browser plan")
    page.fill("#id_new_client", "Browser Client BV")
    page.fill("#id_currency", "EUR")
    page.click("button:has-text('Create plan')")
    page.wait_for_url(re.compile(r"/plans/\d+/$"))
    plan_url = page.url

    # The add form comes in through htmx; the RAG preset fills lengths and targets.
    page.click("a:has-text('Add workload')")
    page.click("button.chip:has-text('Retrieval-augmented generation')")
    page.wait_for_function("document.querySelector('#id_input_tokens_mean').value === '6000'")
    page.select_option("#id_model", label="Llama 3.1 8B")
    page.fill("#id_peak_concurrency", "50")
    page.click("button:has-text('Add workload and size it')")
    page.wait_for_url(re.compile(r"/plans/\d+/workloads/\d+/$"))

    count = page.get_by_test_id("candidate-count").inner_text()
    assert int(count.split(" of ")[0]) > 0
    rows = page.locator("[data-testid=candidates] tbody tr")
    first_name = rows.first.locator("td").first.locator("a").inner_text()

    # Explain a row: the detail panel swaps in with its latency chart.
    rows.nth(1).locator("td a").first.click()
    page.wait_for_selector("[data-testid=latency-chart][data-rendered=true]")
    assert "Weights per GPU" in page.locator("#detail").inner_text()

    # A change recomputes without a page load.
    page.fill("#id_peak_concurrency", "500")
    page.locator("#id_peak_concurrency").blur()
    page.wait_for_selector("[data-testid=form-saved]")

    rows.first.locator("button:has-text('Choose')").click()
    page.wait_for_load_state()
    page.reload()
    chosen_row = page.locator("[data-testid=candidates] tbody tr.chosen")
    assert chosen_row.count() == 1
    assert "chosen" in chosen_row.inner_text()

    page.goto(plan_url)
    table = page.get_by_test_id("workloads").inner_text()
    assert first_name.split(" ")[0] in table and "replicas" in table


def test_bad_value_shows_message_next_to_field_and_keeps_it(page, live_server, demo_user):
    base = live_server.url
    sign_in(page, base, *demo_user)
    page.goto(f"{base}/plans/")
    page.click("text=Customer assistant and nightly catalogue enrichment")
    # (the overview's fleet notice names the workload too: click its link)
    page.get_by_role("link", name="Customer chat assistant", exact=True).first.click()
    page.wait_for_url(re.compile(r"/workloads/\d+/$"))
    page.wait_for_load_state("load")  # htmx binds its listeners once the page has loaded
    page.click("details.panel > summary")  # the form is folded once a choice is made
    page.fill("#id_tpot_ms", "-3")
    page.locator("#id_tpot_ms").blur()
    page.wait_for_selector("[data-testid=form-errors]")
    assert page.locator("#err-tpot_ms").inner_text().strip() != ""
    assert page.input_value("#id_tpot_ms") == "-3"
