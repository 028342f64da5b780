"""Keyboard only: on the consultant's main pages (plan overview, workload sizing, sites, the
publish form) every visible control is reached by Tab, shows where the focus is, and no click
handler sits on an element the keyboard cannot reach; a candidate is chosen and a revision
published with Enter and Space alone."""

import re

import pytest
from django.urls import reverse

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser

# Every visible, enabled control, numbered in data-kb (document order).
MARK_CONTROLS = """
() => {
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, '
                 + '[tabindex]:not([tabindex="-1"])';
  const controls = [...document.querySelectorAll(selector)].filter(e => {
    if (e.disabled || e.closest('[inert]')) return false;
    const closed = e.closest('details:not([open])');  // its content is not rendered
    if (closed && !(e.tagName === 'SUMMARY' && e.parentElement === closed)) return false;
    const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden';
  });
  controls.forEach((e, i) => e.setAttribute('data-kb', String(i)));
  return controls.length;
}
"""
# What Tab has just focused: its number, a description, and whether the focus is drawn.
FOCUSED = """
() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const s = getComputedStyle(e);
  const drawn = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0)
             || s.boxShadow !== 'none';
  const text = (e.innerText || e.value || e.getAttribute('aria-label') || e.name || '').trim();
  return {kb: e.getAttribute('data-kb'), what: `${e.tagName.toLowerCase()} "${text.slice(0, 40)}"`,
          drawn};
}
"""
# Elements that react to a click (htmx or a script's data attribute) but cannot take focus.
# A container triggered by its fields' typing (input, change, keyup) is reached through them.
CLICK_ONLY = """
() => [...document.querySelectorAll('[hx-get], [hx-post], [hx-delete], [data-confirm], [onclick]')]
  .filter(e => !['A', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'SUMMARY', 'FORM'].includes(e.tagName))
  .filter(e => !/load|every|revealed|intersect|input|change|keyup/.test(e.getAttribute('hx-trigger') || ''))
  .filter(e => e.tabIndex < 0)
  .map(e => e.outerHTML.slice(0, 120))
"""


def tab_through(page, what: str) -> None:
    """Tab from the top of the page until every control has had the focus, visibly."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    total = page.evaluate(MARK_CONTROLS)
    assert total > 0, what
    seen, undrawn = set(), []
    for _ in range(total + 10):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        if focused is None or focused["kb"] is None:
            continue
        seen.add(int(focused["kb"]))
        if not focused["drawn"]:
            undrawn.append(focused["what"])
        if len(seen) == total:
            break
    missed = page.evaluate(
        "(missing) => missing.map(i => document.querySelector(`[data-kb='${i}']`).outerHTML.slice(0, 120))",
        sorted(set(range(total)) - seen),
    )  # fmt: skip
    assert missed == [], f"{what}: not reached by Tab: {missed}"
    assert undrawn == [], f"{what}: focus not shown on {undrawn[:5]}"
    assert page.evaluate(CLICK_ONLY) == [], what


def focus_by_tab(page, locator, limit: int = 400) -> None:
    """Press Tab until the locator's element has the focus."""
    handle = locator.element_handle()
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(e) => document.activeElement === e", handle):
            return
    raise AssertionError(f"never focused: {locator}")


def test_the_main_pages_work_from_the_keyboard(page, live_server, demo_user):
    from planner.models import Plan
    from planner.sharing.models import PlanRevision

    plan = Plan.objects.get(name__startswith="Customer assistant")
    workload = plan.workloads.get(kind="chat")
    base = live_server.url
    sign_in(page, base, *demo_user)

    for what, url in (
        ("plan overview", reverse("plan_detail", args=[plan.pk])),
        ("workload sizing", reverse("workload_sizing", args=[plan.pk, workload.pk])),
        ("sites", reverse("facility:site_list", args=[plan.pk])),
        ("publish form", reverse("sharing:review", args=[plan.pk])),
    ):
        page.goto(base + url)
        tab_through(page, what)

    # Sizing: open the workload form with Enter, then choose another candidate with Space.
    page.goto(base + reverse("workload_sizing", args=[plan.pk, workload.pk]))
    focus_by_tab(page, page.locator("summary", has_text="Workload:"))
    page.keyboard.press("Enter")
    assert page.locator("details.panel").first.get_attribute("open") is not None
    tab_through(page, "workload sizing with its form open")
    choose = page.locator("[data-testid=candidates] button", has_text="Choose").first
    key = choose.get_attribute("value")
    focus_by_tab(page, choose)
    with page.expect_navigation():
        page.keyboard.press("Space")
    assert page.locator("[data-testid=candidates] tbody tr.chosen").get_attribute("data-key") == key
    workload.refresh_from_db()
    assert f"{workload.chosen_accelerator.slug}|" in key

    # Publish: type a note, tick "publish with open items" with Space, submit with Enter.
    page.goto(base + reverse("sharing:review", args=[plan.pk]))
    before = PlanRevision.objects.filter(plan=plan).count()
    form = page.get_by_test_id("publish-form")
    focus_by_tab(page, form.locator("textarea, input[name=note]").first)
    page.keyboard.type("Chosen from the keyboard")
    tick = form.locator("input[type=checkbox]")
    if tick.count():
        focus_by_tab(page, tick.first)
        page.keyboard.press("Space")
        assert tick.first.is_checked()
    focus_by_tab(page, form.get_by_test_id("publish"))
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert PlanRevision.objects.filter(plan=plan).count() == before + 1
    latest = PlanRevision.objects.filter(plan=plan).order_by("-number").first()
    assert re.search("keyboard", latest.note)
