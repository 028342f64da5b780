"""Every main page runs under the Content-Security-Policy with no violation: charts draw, htmx
works, and the report preview is styled by its stylesheet (no inline styles or scripts)."""

import pytest

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser

# Collects violations in the page itself (init scripts are not subject to the policy).
COLLECT = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
});
"""


@pytest.fixture
def watched(strict_page):
    page = strict_page
    messages = []
    page.on(
        "console",
        lambda m: messages.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.on("pageerror", lambda error: messages.append(f"page error: {error}"))
    page.add_init_script(COLLECT)
    return page, messages


def _violations(page, messages) -> list[str]:
    """What the page reported (directive, blocked URI, source:line), or the console message
    when the page could not report (e.g. a blocked inline style before the listener)."""
    reported = page.evaluate("window.__csp || []")
    errors = [m[:300] for m in messages if m.startswith("page error")]
    return reported + errors or [m[:160] for m in messages]


def test_main_pages_have_no_csp_violation(watched, live_server, demo_user):
    from planner.models import Plan, Workload
    from planner.sharing.models import ShareLink

    page, messages = watched
    base = live_server.url
    plan = Plan.objects.get(name__isnull=False, organisation__slug="demo-consultancy")
    workload = Workload.objects.filter(plan=plan).first()
    token = ShareLink.objects.filter(plan=plan, revoked_at=None).first().token
    page.goto(f"{base}/accounts/login/")
    assert _violations(page, messages) == []
    sign_in(page, base, *demo_user)

    checked = {}

    def visit(path, ready=None):
        page.goto(f"{base}{path}")
        page.wait_for_load_state("networkidle")
        if ready:
            page.wait_for_selector(ready)
        checked[path] = _violations(page, messages)
        messages.clear()

    visit("/")
    visit(f"/plans/{plan.pk}/")
    # The sizing page: a candidate's detail swaps in through htmx with its Plotly charts.
    visit(f"/plans/{plan.pk}/workloads/{workload.pk}/")
    page.locator("[data-testid=candidates] tbody tr").nth(1).locator("td a").first.click()
    page.wait_for_selector("[data-testid=latency-chart][data-rendered=true]")
    page.locator("[data-testid=latency-chart]").hover(position={"x": 200, "y": 120})  # hover label
    checked["sizing detail (htmx)"] = _violations(page, messages)
    visit(f"/plans/{plan.pk}/tco/", "[data-plotly-figure][data-rendered=true]")
    visit(f"/plans/{plan.pk}/placement/")
    visit(f"/plans/{plan.pk}/sites/")
    visit(f"/plans/{plan.pk}/sourcing/timeline/", "[data-plotly-figure][data-rendered=true]")
    visit("/sourcing/tariffs/")
    visit("/catalog/accelerators/")
    visit("/catalog/compare/?a=h100-sxm&a=mi300x")
    visit("/calibration/", "[data-testid=calibration-chart][data-rendered=true]")
    visit("/organisation/")
    visit(f"/plans/{plan.pk}/review/")
    visit(f"/plans/{plan.pk}/review/revisions/1/report/preview/")
    visit(f"/s/{token}/")
    visit("/s/not-a-valid-token-at-all/")
    visit("/admin/")
    visit("/admin/catalog/accelerator/")
    visit("/admin/catalog/accelerator/1/change/")
    failures = {path: sorted(set(found)) for path, found in checked.items() if found}
    assert failures == {}, "\n".join(f"{p}: {v}" for p, v in failures.items())


def test_the_report_preview_is_styled_under_the_policy(watched, live_server, demo_user):
    from planner.models import Plan

    page, messages = watched
    base = live_server.url
    plan = Plan.objects.get(organisation__slug="demo-consultancy")
    sign_in(page, base, *demo_user)
    response = page.goto(f"{base}/plans/{plan.pk}/review/revisions/1/report/preview/")
    assert "style-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_load_state("networkidle")
    styles = page.evaluate(
        """() => {
          const body = getComputedStyle(document.body);
          const header = document.querySelector('.doc-header');
          return {maxWidth: body.maxWidth, font: body.fontFamily,
                  headerDisplay: header && getComputedStyle(header).display};
        }"""
    )
    # pdf.css (A4 document, flex header) and the preview's page frame both applied.
    assert styles["maxWidth"] != "none", styles
    assert styles["headerDisplay"] == "flex", styles
    assert _violations(page, messages) == []
