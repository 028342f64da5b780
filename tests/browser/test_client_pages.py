"""Pages for everyone. Clients open shared links on their phones: at 390 CSS pixels the share
page, the client's comment form and the consultant's plan overview fit the screen (wide
tables scroll inside their own box), and the PDF links are big enough to tap. Every page has
a favicon, and revoking a share link asks first (under the Content-Security-Policy)."""

import pytest
from django.urls import reverse

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
MIN_TAP_PX = 44  # WCAG 2.5.5 / Apple HIG target size

# Elements wider than the screen that are not inside a box that scrolls on its own.
OVERFLOWING = """
() => {
  const limit = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.right <= limit + 0.5) continue;
    let scroller = el.parentElement, boxed = false;
    while (scroller && scroller !== document.body) {
      const o = getComputedStyle(scroller).overflowX;
      if (o === "auto" || o === "scroll" || o === "hidden") { boxed = true; break; }
      scroller = scroller.parentElement;
    }
    if (!boxed) out.push(`${el.tagName.toLowerCase()}.${el.className} right=${Math.round(r.right)}`);
  }
  return out.slice(0, 10);
}
"""


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True,
                                  has_touch=True)  # fmt: skip
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def assert_fits(page, what: str) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    offenders = page.evaluate(OVERFLOWING)
    assert width <= PHONE["width"] and offenders == [], f"{what}: {width} px wide, {offenders}"


# The smallest text of a chart's SVG as drawn, in CSS px: its font size × the SVG's scale.
SMALLEST_TEXT_PX = """
figure => {
  const svg = figure.querySelector("svg");
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const sizes = [...svg.querySelectorAll("text")].map(t => parseFloat(getComputedStyle(t).fontSize));
  return Math.min(...sizes) * scale;
}
"""


@pytest.fixture
def shared(demo_user, settings, tmp_path):
    from django.contrib.auth import get_user_model

    from planner.models import Plan
    from planner.sharing import services

    settings.MEDIA_ROOT = tmp_path
    plan = Plan.objects.get(name__startswith="Customer assistant")
    user = get_user_model().objects.get(username=demo_user[0])
    link = services.share_link_create(
        plan=plan, user=user, revision=None, expires_at=None, note="phone"
    )
    return plan, link


def test_the_share_page_fits_a_phone_and_its_tables_scroll_in_their_box(phone, live_server,
                                                                         shared):  # fmt: skip
    plan, link = shared
    page = phone
    page.goto(live_server.url + reverse("sharing:public", args=[link.token]))
    assert plan.name in page.content()
    assert_fits(page, "share page")
    # The wide tables are still whole: they scroll sideways inside their own box.
    wide = page.locator("[data-testid=rev-bom]")
    box = wide.locator("xpath=..")
    assert box.evaluate("e => e.scrollWidth > e.clientWidth")
    assert box.evaluate("e => getComputedStyle(e).overflowX") == "auto"
    # The report's charts keep their text readable (drawn 8-9 px for the PDF, they shrank to
    # about 4.4 px): at least 10 px on the phone, the chart scrolling in its labelled box.
    charts = page.locator(".svg-chart").all()
    assert len(charts) >= 3
    for chart in charts:
        assert chart.bounding_box()["width"] <= PHONE["width"]
        assert chart.get_attribute("role") == "region" and chart.get_attribute("aria-label")
        assert chart.get_attribute("tabindex") == "0"
        smallest = chart.evaluate(SMALLEST_TEXT_PX)
        assert smallest >= 10, (chart.get_attribute("aria-label"), smallest)
    # The documents are easy to tap.
    links = page.locator("[data-testid=documents] a")
    assert links.count() == 3
    for pdf in links.all():
        size = pdf.bounding_box()
        assert size["height"] >= MIN_TAP_PX and size["width"] >= MIN_TAP_PX, size


def test_the_clients_comment_form_fits_a_phone(phone, live_server, shared):
    _, link = shared
    page = phone
    page.goto(live_server.url + reverse("sharing:public", args=[link.token]))
    section = page.locator("#section-timeline")
    section.locator("summary", has_text="Comment on this section").click()
    assert_fits(page, "comment form open")
    section.locator("input[name=author_name]").fill("Sanne de Vries")
    section.locator("textarea[name=body]").fill("Could the Frankfurt suite be ready sooner?")
    section.get_by_test_id("comment-submit-timeline").click()
    page.wait_for_load_state()
    assert "your comment was sent" in page.content()
    assert_fits(page, "share page after a comment")


def test_the_consultants_plan_overview_fits_a_phone(phone, live_server, shared, demo_user):
    plan, _ = shared
    page = phone
    sign_in(page, live_server.url, *demo_user)
    page.goto(live_server.url + reverse("plan_detail", args=[plan.pk]))
    assert plan.name in page.content()
    assert_fits(page, "plan overview")


def test_the_share_page_has_a_favicon(phone, live_server, shared):
    _, link = shared
    page = phone
    page.goto(live_server.url + reverse("sharing:public", args=[link.token]))
    href = page.locator("link[rel=icon]").get_attribute("href")
    icon = page.request.get(live_server.url + href)
    assert icon.ok and icon.headers["content-type"].startswith("image/svg+xml")
    assert b"<svg" in icon.body()


def test_revoking_a_share_link_asks_first(strict_page, live_server, shared, demo_user):
    from planner.sharing.models import ShareLink

    plan, link = shared
    page = strict_page  # the confirmation is app.js reading data-confirm: no inline handler
    sign_in(page, live_server.url, *demo_user)
    page.goto(live_server.url + reverse("sharing:review", args=[plan.pk]))
    questions = []

    def dismiss(dialog):
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    page.get_by_test_id(f"revoke-{link.pk}").click()
    page.wait_for_timeout(300)
    assert questions and "Revoke this link?" in questions[0]
    link.refresh_from_db()
    assert link.revoked_at is None  # "Cancel" keeps the link working

    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.get_by_test_id(f"revoke-{link.pk}").click()
    assert ShareLink.objects.get(pk=link.pk).revoked_at is not None
