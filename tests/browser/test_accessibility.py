"""axe-core (vendored in static/vendor/axe-core-4.14.1, MPL-2.0) on the main pages: no
serious or critical violation, for the consultant's pages and the client's share page."""

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from tests.browser.test_catalog_flow import sign_in
from tests.browser.test_client_pages import shared  # noqa: F401

pytestmark = pytest.mark.browser

AXE = Path(settings.BASE_DIR) / "static" / "vendor" / "axe-core-4.14.1" / "axe.min.js"
RUN_AXE = """
async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")}`);
}
"""


def serious_violations(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate(RUN_AXE)


def test_main_pages_have_no_serious_accessibility_violation(page, live_server, shared, demo_user):  # noqa: F811
    plan, link = shared
    workload = plan.workloads.get(kind="chat")
    sign_in(page, live_server.url, *demo_user)
    found = {}
    for name, url in (
        ("plans", reverse("plan_list")),
        ("plan overview", reverse("plan_detail", args=[plan.pk])),
        ("sizing", reverse("workload_sizing", args=[plan.pk, workload.pk])),
        ("operations", reverse("operations", args=[plan.pk])),
        ("checklist", reverse("sharing:checklist", args=[plan.pk])),
        ("client review", reverse("sharing:review", args=[plan.pk])),
        ("share page", reverse("sharing:public", args=[link.token])),
    ):
        page.goto(live_server.url + url)
        found[name] = serious_violations(page)
    assert found == {name: [] for name in found}, found
