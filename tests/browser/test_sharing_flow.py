"""A consultant publishes a revision and shares it; the client opens the link in a fresh
browser, comments, approves and downloads the quote; the consultant sees it all."""

import re

import pytest

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser


def test_publish_share_comment_approve_and_download(browser, page, live_server, demo_user,
                                                    settings, tmp_path):  # fmt: skip
    from planner.models import Plan

    settings.MEDIA_ROOT = tmp_path  # rendered PDFs stay out of the project's var/media

    base = live_server.url
    plan = Plan.objects.get(name__startswith="Customer assistant")
    sign_in(page, base, *demo_user)
    page.goto(f"{base}/plans/{plan.pk}/")
    page.click("nav.plan-nav >> text=Client review")
    page.wait_for_url(re.compile(r"/review/$"))

    # The demo fails its A/B feed check at both sites: each publish ticks "with these open
    # items". Publishing what revision 1 already holds makes no new revision.
    page.get_by_label("Publish with these open items").check()
    page.get_by_test_id("publish").click()
    page.wait_for_url(re.compile(r"/review/revisions/1/$"))
    assert "Nothing changed since revision 1" in page.content()

    Plan.objects.filter(pk=plan.pk).update(notes="Board pack: the Frankfurt option is added.")
    page.goto(f"{base}/plans/{plan.pk}/review/")
    page.fill("#id_publish_note", "Second revision for the board")
    page.get_by_label("Publish with these open items").check()
    page.get_by_test_id("publish").click()
    page.wait_for_url(re.compile(r"/review/revisions/2/$"))
    assert "Revision 2" in page.locator("h2").first.inner_text()

    page.goto(f"{base}/plans/{plan.pk}/review/")
    page.select_option("#id_revision", "latest")
    page.fill("#id_note", "for the CFO")
    page.get_by_test_id("create-link").click()
    page.wait_for_selector("text=Share link created")
    row = page.locator("[data-testid=links] tr", has_text="for the CFO")
    link_url = row.get_by_test_id("link-url").input_value()
    assert re.search(r"/s/[A-Za-z0-9_-]{43}/$", link_url)

    # The client: a fresh browser context, no session, no cookies.
    client_context = browser.new_context(viewport={"width": 1280, "height": 900},
                                         accept_downloads=True)  # fmt: skip
    client = client_context.new_page()
    client.set_default_timeout(15_000)
    response = client.goto(link_url)
    assert response.status == 200
    assert response.headers["x-robots-tag"] == "noindex, nofollow"
    assert client.get_by_test_id("revision-number").inner_text() == "2"
    assert client.locator("a[href*='/plans/']").count() == 0

    section = client.locator("#section-bom")
    section.locator("summary", has_text="Comment on this section").click()
    section.locator("input[name=author_name]").fill("Sanne de Vries")
    section.locator("textarea[name=body]").fill("Please quote <b>two</b> spare NICs.")
    section.get_by_test_id("comment-submit-bom").click()
    client.wait_for_selector("text=your comment was sent")
    assert "Please quote <b>two</b> spare NICs." in client.locator("#section-bom").inner_text()

    form = client.get_by_test_id("decision-form")
    form.locator("input[value=approved]").check()
    form.locator("input[name=name]").fill("Sanne de Vries")
    client.get_by_test_id("decision-submit").click()
    client.wait_for_selector("text=Your decision was recorded")
    assert "Approved" in client.get_by_test_id("decisions").inner_text()

    with client.expect_download() as download_info:
        client.get_by_test_id("download-quote").click()
    download = download_info.value
    with open(download.path(), "rb") as handle:
        assert handle.read(5) == b"%PDF-"
    assert download.suggested_filename.endswith("-R2-quote.pdf")
    client_context.close()

    # Back on the consultant's side: the comment, the decision and the view log.
    page.goto(f"{base}/plans/{plan.pk}/review/")
    decisions = page.get_by_test_id("decisions").inner_text()
    assert "Approved revision 2 by Sanne de Vries" in decisions
    assert "Please quote <b>two</b> spare NICs." in page.get_by_test_id("all-comments").inner_text()
    page.locator("[data-testid=links] tr", has_text="for the CFO").locator("td.num a").click()
    page.wait_for_url(re.compile(r"/review/links/\d+/$"))
    log = page.get_by_test_id("view-log").inner_text()
    assert "Not opened yet" not in log and "/s/<token>/quote.pdf" in log
