"""A consultant fills a site and sees the checks change, then runs the TCO, watches the
progress bar finish and sees the charts."""

import re

import pytest

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser


@pytest.fixture
def sized_demo_plan(demo_user):
    """The demo plan with both workloads given a chosen configuration, as sizing would."""
    from catalog.models import Accelerator, ServerPlatform
    from planner.demo import demo_plan_build
    from planner.models import Organisation
    from planner.services import User

    user = User.objects.get(username=demo_user[0])
    organisation = Organisation.objects.get(slug="demo-consultancy")
    plan, _ = demo_plan_build(organisation=organisation, user=user)
    h100 = Accelerator.objects.get(slug="h100-sxm")
    dgx = ServerPlatform.objects.filter(name="DGX H100").first()
    for workload, accelerators in zip(plan.workloads.order_by("pk"), (32, 8), strict=True):
        workload.chosen_accelerator, workload.chosen_server = h100, dgx
        workload.chosen_precision, workload.chosen_tensor_parallel = "fp8", 4
        workload.chosen_accelerators, workload.chosen_servers = accelerators, accelerators // 8
        workload.chosen_replicas = accelerators // 4
        workload.save()
    return plan


def test_fill_a_site_then_run_the_tco(page, live_server, demo_user, sized_demo_plan, monkeypatch):
    from planner.facility import tasks
    from planner.facility.models import Site, TcoRun

    plan = sized_demo_plan
    sign_in(page, live_server.url, *demo_user)
    page.goto(f"{live_server.url}/plans/{plan.pk}/")
    page.click("nav.plan-nav >> text=Sites")
    page.wait_for_url(re.compile(rf"/plans/{plan.pk}/sites/$"))
    page.click("text=Add a site")

    # Fill the site: checks appear as fields change (htmx preview, nothing saved yet).
    page.fill("#id_name", "Zurich colo")
    page.fill("#id_country", "CH")
    page.select_option("#id_region_key", "eu-central")
    page.fill("#id_racks_available", "6")
    page.fill("#id_site_it_capacity_kw", "300")
    page.select_option("#id_cooling_method", "rear_door")
    page.fill("#id_cooling_capacity_site_kw", "400")
    page.locator("#id_cooling_capacity_site_kw").blur()
    checks = page.get_by_test_id("site-checks")
    checks.locator('[data-check="ab_redundancy"]').wait_for()
    ab = checks.locator('[data-check="ab_redundancy"] .badge')
    assert ab.inner_text() in ("pass", "warn")
    assert not Site.objects.filter(name="Zurich colo").exists()

    # 16 A feeds cannot carry a 10.2 kW DGX on one side: the check turns to fail at once.
    page.fill("#id_amperage_a", "16")
    page.locator("#id_amperage_a").blur()
    page.wait_for_function(
        "document.querySelector('[data-check=ab_redundancy] .badge').innerText === 'fail'"
    )
    # Bad input: the message appears next to the field, and the typed value stays.
    page.fill("#id_pue", "0.5")
    page.locator("#id_pue").blur()
    page.wait_for_function("document.getElementById('err-pue').innerText.length > 0")
    assert page.input_value("#id_pue") == "0.5"
    page.fill("#id_pue", "1.3")
    page.fill("#id_amperage_a", "32")
    page.click("button:has-text('Add site')")
    page.wait_for_url(re.compile(rf"/plans/{plan.pk}/sites/\d+/$"))
    site = Site.objects.get(name="Zurich colo")
    assert str(site.pue) == "1.30"
    # The users' regions send every replica to Frankfurt (nearer), so Zurich holds none and
    # says so; with the fleet split to Zurich by hand it draws the racks it then holds.
    assert page.get_by_test_id("no-servers-here").count() == 1
    from planner.facility.models import WorkloadSiteSplit

    for workload in plan.workloads.all():
        WorkloadSiteSplit.objects.update_or_create(
            workload=workload, defaults={"shares": {str(site.pk): 100}}
        )
    page.reload()
    assert page.get_by_test_id("rack-elevation").count() >= 1

    # Editing the saved site saves on change and updates the checks.
    page.fill("#id_site_it_capacity_kw", "20")
    page.locator("#id_site_it_capacity_kw").blur()
    page.wait_for_function(
        "document.querySelector('[data-check=site_power] .badge').innerText === 'fail'"
    )
    assert "Saved" in page.get_by_test_id("save-status").inner_text()
    site.refresh_from_db()
    assert site.site_it_capacity_kw == 20

    # TCO: the worker is this test (the task is held back), so the page shows the progress
    # bar polling until the run finishes, then the charts.
    monkeypatch.setattr(tasks.tco_run_task, "delay", lambda run_id: None)
    page.click("nav.plan-nav >> text=TCO")
    page.click("[data-testid=tco-run-form] button")
    page.get_by_test_id("tco-progress").wait_for()
    run = TcoRun.objects.get(plan=plan, status="pending")
    tasks.tco_run_task.apply(args=[run.pk])
    page.wait_for_selector("[data-plotly-figure=fig-cumulative][data-rendered=true] .main-svg")
    for figure in ("fig-stack", "fig-tornado", "fig-monte-carlo", "fig-hybrid-curve"):
        page.wait_for_selector(f"[data-plotly-figure={figure}][data-rendered=true] .main-svg")
    assert page.get_by_test_id("tco-progress").count() == 0
    assert "up to date with the plan" in page.get_by_test_id("tco-run").inner_text()
    # The cloud options of every provider (each from its own list), one owned option for the
    # plan's deployment with a row per site holding its servers, and hybrid with a row per
    # site holding its base.
    run.refresh_from_db()
    clouds = [o for o in run.results["options"] if o["kind"].startswith("cloud")]
    assert len({o["key"].split(":")[1] for o in clouds}) == len(run.inputs["inputs"]["providers"])
    owned = next(o for o in run.results["options"] if o["key"] == "owned")
    rows = page.locator("[data-testid=tco-options] tbody tr")
    hybrid = next(o for o in run.results["options"] if o["key"] == "hybrid")
    assert rows.count() == len(clouds) + 2 + len(owned["sites"]) + len(hybrid.get("sites") or [])
