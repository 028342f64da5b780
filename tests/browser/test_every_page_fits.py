"""Every page of the demo plan fits its screen and passes axe-core.

One browser and one page walk every consultant page of the demo plan (each URL of the
URLconf under /plans/<plan_id>/ that answers a GET with a page, with the demo's own ids) and
the client's share page, at 1,280 and 390 CSS pixels. A page fails when it is wider than
the screen (``document.documentElement.scrollWidth``), when a box cuts a table off instead
of scrolling it, when a box that scrolls cannot be reached by keyboard or has no name, and
when axe-core (vendored in static/vendor/axe-core-4.14.1, MPL-2.0) reports a serious or
critical violation. A guard fails when a new plan URL is added without saying whether it
is walked.
"""

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.browser.test_catalog_flow import sign_in
from tests.browser.test_client_pages import shared  # noqa: F401

pytestmark = pytest.mark.browser

WIDTHS_PX = (1280, 390)
HEIGHT_PX = 844
AXE = Path(settings.BASE_DIR) / "static" / "vendor" / "axe-core-4.14.1" / "axe.min.js"

RUN_AXE = """
async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => `${v.id} ×${v.nodes.length}: ${v.nodes.slice(0, 2).map(n => n.target.join(" ")).join(", ")}`);
}
"""

# The innermost elements that reach past the screen outside any box of their own that
# scrolls: what makes a page too wide.
WIDEST = """
() => {
  const limit = document.documentElement.clientWidth;
  const over = el => el.getBoundingClientRect().right > limit + 0.5;
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    if (!over(el) || [...el.children].some(over)) continue;
    let box = el.parentElement, boxed = false;
    for (; box && box !== document.body; box = box.parentElement) {
      if (getComputedStyle(box).overflowX !== "visible") { boxed = true; break; }
    }
    if (!boxed) out.push(`${el.tagName.toLowerCase()}.${el.className} "${el.textContent.trim().slice(0, 30)}" right=${Math.round(el.getBoundingClientRect().right)}`);
  }
  return out.slice(0, 3);
}
"""

# Boxes that cut content off (overflow hidden or clip and narrower than what they hold,
# around a table), and boxes that scroll without a keyboard stop or a name.
BOX_PROBLEMS = """
() => {
  const out = [];
  const describe = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : "");
  for (const table of document.querySelectorAll("table")) {
    for (let box = table.parentElement; box && box !== document.body; box = box.parentElement) {
      const o = getComputedStyle(box).overflowX;
      if (o === "visible") continue;
      if ((o === "hidden" || o === "clip") && box.scrollWidth > box.clientWidth + 1) {
        out.push(`${describe(box)} cuts a table (${box.scrollWidth} px in ${box.clientWidth} px)`);
      }
      break;
    }
  }
  for (const box of document.body.querySelectorAll("*")) {
    const o = getComputedStyle(box).overflowX;
    if (o !== "auto" && o !== "scroll") continue;
    if (box.scrollWidth <= box.clientWidth + 1) continue;
    if (box.closest(".js-plotly-plot")) continue;  // plotly's own drag layers
    const named = box.getAttribute("aria-label") || box.getAttribute("aria-labelledby");
    if (box.tabIndex < 0 || !named) {
      out.push(`${describe(box)} scrolls but has ${box.tabIndex < 0 ? "no keyboard stop" : "no name"}`);
    }
  }
  return out.slice(0, 5);
}
"""


# The header shows the consultancy's name (the share page's title, the consultant's organisation):
# real ones are long, the demo's is not, so each page is measured again with this one.
LONG_NAME = "Lowlands Inference Infrastructure Consultancy Partners Europe B.V."
WITH_LONG_NAME = """
(name) => {
  document.querySelectorAll("span.brand, .account .org").forEach(e => { e.textContent = name; });
  return document.documentElement.scrollWidth;
}
"""


def _plan(n: str) -> Callable:
    return lambda d: [reverse(n, args=[d["plan"].pk])]


def _workloads(n: str) -> Callable:
    return lambda d: [reverse(n, args=[d["plan"].pk, w.pk]) for w in d["workloads"]]


def _each(n: str, key: str, attr: str = "pk") -> Callable:
    return lambda d: [reverse(n, args=[d["plan"].pk, getattr(o, attr)]) for o in d[key]]


def _of_workload(n: str, key: str) -> Callable:
    return lambda d: [reverse(n, args=[d["plan"].pk, o.workload_id, o.pk]) for o in d[key]]


# URL name -> the demo's URLs of that page.
PAGES: dict[str, Callable[[dict], list[str]]] = {
    "plan_detail": _plan("plan_detail"),
    "plan_edit": _plan("plan_edit"),
    "operations": _plan("operations"),
    "workload_add": _plan("workload_add"),
    "workload_sizing": _workloads("workload_sizing"),
    "measured:measurements": _workloads("measured:measurements"),
    "measured:sweep_detail": _of_workload("measured:sweep_detail", "sweeps"),
    "measured:logs": _workloads("measured:logs"),
    "measured:log_detail": _of_workload("measured:log_detail", "log_imports"),
    "facility:site_list": _plan("facility:site_list"),
    "facility:site_create": _plan("facility:site_create"),
    "facility:site_detail": _each("facility:site_detail", "sites"),
    "facility:placement": _plan("facility:placement"),
    "facility:tco": _plan("facility:tco"),
    "sourcing:bom": _plan("sourcing:bom"),
    "sourcing:settings": _plan("sourcing:settings"),
    "sourcing:landed_cost": _plan("sourcing:landed_cost"),
    "sourcing:timeline": _plan("sourcing:timeline"),
    "sourcing:orders": _plan("sourcing:orders"),
    "sourcing:order_detail": _each("sourcing:order_detail", "orders"),
    "sourcing:history": _plan("sourcing:history"),
    "sourcing:quote": _plan("sourcing:quote"),
    "sharing:review": _plan("sharing:review"),
    "sharing:compare": _plan("sharing:compare"),
    "sharing:link_detail": _each("sharing:link_detail", "links"),
    "sharing:revision": _each("sharing:revision", "revisions", "number"),
    "sharing:checklist": _plan("sharing:checklist"),
    "sharing:public": lambda d: [reverse("sharing:public", args=[d["token"]])],
}

# URL names of the plan and the share link that are not walked, and why.
NOT_PAGES = {
    **dict.fromkeys(
        ("plan_export", "sharing:document", "sharing:public_document"), "a download"
    ),
    "sharing:document_preview": "a download: the PDF's HTML as WeasyPrint receives it",
    **dict.fromkeys(
        (
            "facility:tco_status", "sharing:document_status", "sharing:public_document_status",
            "candidate_detail", "workload_traffic_preview", "sharing:reply_email_status",
            "candidate_second_opinion",
        ),
        "an htmx partial of a page that is walked",
    ),
    "measured:sweep_import": "the progress of a large upload: the demo has none (a finished "
    "one redirects to its sweep, which is walked)",
    **dict.fromkeys(
        (
            "plan_recompute", "workload_delete", "workload_choose", "facility:site_delete",
            "facility:site_split", "facility:tco_run", "measured:sweep_correction",
            "measured:sweep_delete", "measured:fleet_notice_dismiss", "sharing:publish", "sharing:link_create",
            "sharing:link_revoke", "sharing:revision_notify", "sharing:comment_reply",
            "sharing:public_comment", "sharing:public_decision", "sourcing:bom_generate",
            "sourcing:bom_line_add", "sourcing:bom_line_edit", "sourcing:bom_line_remove",
            "sourcing:quote_fee_add", "sourcing:quote_fee_delete", "sourcing:check",
            "sharing:reply_email_resend", "sourcing:measure_decision",
        ),
        "a POST action",
    ),
}  # fmt: skip


def _plan_url_names(resolver: URLResolver, prefix: str = "", namespace: str = "") -> set[str]:
    """Names of the URLs whose route takes a plan id or a share-link token."""
    names = set()
    for pattern in resolver.url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            names |= _plan_url_names(pattern, route, inner)
        elif (
            isinstance(pattern, URLPattern)
            and pattern.name
            and ("<int:plan_id>" in route or route.startswith("s/<str:token>"))
        ):
            names.add(namespace + pattern.name)
    return names


def test_every_plan_url_is_walked_or_says_why_not():
    names = _plan_url_names(get_resolver())
    assert not PAGES.keys() & NOT_PAGES.keys()
    assert names == PAGES.keys() | NOT_PAGES.keys(), (
        f"not classified: {sorted(names - PAGES.keys() - NOT_PAGES.keys())}; "
        f"gone: {sorted(PAGES.keys() | NOT_PAGES.keys() - names)}"
    )


def _demo_objects(plan, token: str) -> dict:
    """The demo's rows each page is walked with; a fee, so the quote shows its Remove button."""
    from planner.facility.models import Site
    from planner.measured.models import LoadTestSweep, TrafficLogImport
    from planner.sharing.models import PlanRevision, ShareLink
    from sourcing.models import FeeKind, PurchaseOrder, QuoteFee

    QuoteFee.objects.create(
        plan=plan, kind=FeeKind.INSTALLATION, description="Installation and acceptance",
        quantity=5, unit_price=Decimal("1200.00"),
    )  # fmt: skip

    return {
        "plan": plan,
        "token": token,
        "workloads": list(plan.workloads.order_by("pk")),
        "sweeps": list(LoadTestSweep.objects.filter(workload__plan=plan)),
        "log_imports": list(TrafficLogImport.objects.filter(workload__plan=plan)),
        "sites": list(Site.objects.filter(plan=plan)),
        "orders": list(PurchaseOrder.objects.filter(plan=plan)),
        "links": list(ShareLink.objects.filter(plan=plan)),
        "revisions": list(PlanRevision.objects.filter(plan=plan)),
    }


def _settled(page) -> None:
    """Wait until the charts are drawn (charts.js renders them after load)."""
    page.wait_for_load_state("load")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def test_every_page_fits_its_screen_and_passes_axe(page, live_server, shared, demo_user):  # noqa: F811
    plan, link = shared
    demo = _demo_objects(plan, link.token)
    sign_in(page, live_server.url, *demo_user)
    urls = [(name, url) for name, build in PAGES.items() for url in build(demo)]
    missing = [name for name, build in PAGES.items() if not build(demo)]
    assert missing == [], f"the demo has none of these pages to walk: {missing}"
    problems = {}
    for width in WIDTHS_PX:
        page.set_viewport_size({"width": width, "height": HEIGHT_PX})
        for name, url in urls:
            response = page.goto(live_server.url + url)
            assert response.status == 200, f"{url}: HTTP {response.status}"
            _settled(page)
            found = []
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            if scroll_width > width:
                found.append(f"{scroll_width} px wide: {page.evaluate(WIDEST)}")
            found += page.evaluate(BOX_PROBLEMS)
            page.add_script_tag(path=str(AXE))
            found += page.evaluate(RUN_AXE)
            if (named_width := page.evaluate(WITH_LONG_NAME, LONG_NAME)) > width:
                found.append(f"{named_width} px wide with a long consultancy name")
            if found:
                problems[f"{width} px {name} {url}"] = found
    assert problems == {}, "\n".join(f"{k}: {v}" for k, v in problems.items())
