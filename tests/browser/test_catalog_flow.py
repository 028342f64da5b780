"""A consultant signs in, filters the catalog as they type, and compares accelerators."""

import re

import pytest

pytestmark = pytest.mark.browser


def sign_in(page, base_url: str, username: str, password: str) -> None:
    page.goto(f"{base_url}/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/")


def test_sign_in_filter_and_compare(page, live_server, demo_user):
    sign_in(page, live_server.url, *demo_user)
    assert page.locator("h1").inner_text().startswith("Demo Co")

    page.click("text=Catalog")
    page.wait_for_url(re.compile(r"/catalog/accelerators/$"))
    count = page.get_by_test_id("row-count")
    assert count.inner_text() == "26 of 26"

    # Typing filters without a submit: htmx swaps the results and pushes the URL.
    page.fill("#id_q", "MI3")
    page.wait_for_function(
        "document.querySelector('[data-testid=row-count]').innerText.startsWith('3 of')"
    )
    assert "q=MI3" in page.url
    assert page.locator("#results tbody tr").count() == 3

    page.select_option("#id_vendor", "NVIDIA")
    page.fill("#id_q", "")
    page.wait_for_function(
        "document.querySelector('[data-testid=row-count]').innerText.startsWith('15 of')"
    )
    assert "vendor=NVIDIA" in page.url

    # The filtered URL is shareable: loading it fresh shows the same rows.
    page.goto(page.url)
    assert page.get_by_test_id("row-count").inner_text() == "15 of 26"

    page.goto(f"{live_server.url}/catalog/compare/")
    for slug in ("h100-sxm", "mi300x", "b200"):
        page.check(f"input[name=a][value={slug}]")
    page.click('button:has-text("Compare")')
    page.wait_for_selector("[data-rendered=true] .main-svg")
    table = page.get_by_test_id("compare-table").inner_text()
    assert "MI300X" in table and "B200" in table and "H100 SXM" in table
    assert page.locator(".plot .point").count() == 3


def test_filters_work_without_javascript(browser, live_server, demo_user):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    sign_in(page, live_server.url, *demo_user)
    page.goto(f"{live_server.url}/catalog/models/")
    page.fill("#id_q", "deepseek")
    page.click("text=Filter")
    assert "q=deepseek" in page.url
    assert page.get_by_test_id("row-count").inner_text().startswith("2 of")
    context.close()
