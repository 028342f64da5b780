"""One deployment, every page: servers, racks, accelerators and power agree everywhere.

A plan with two workloads on one server platform across an EU and a US site, checked by hand;
and the demo plan, checked page against page.
"""

import re
from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from planner.facility import services as facility_services
from planner.facility.deployment import plan_deployment
from planner.facility.models import PowerUpgrade, Site
from sourcing import services as sourcing_services
from sourcing.models import BomLine


@pytest.fixture
def two_site_plan(org_a, consultant_a, catalog):
    from catalog.models import Accelerator, ModelArchitecture, ServerPlatform
    from planner.models import Client, Plan, Workload

    client = Client.objects.create(organisation=org_a, name="Northwind", country="DE")
    plan = Plan.objects.create(
        organisation=org_a, client=client, name="Chat and batch", currency="USD",
        target_go_live=date(2027, 6, 1), created_by=consultant_a,
    )  # fmt: skip
    h100 = Accelerator.objects.get(slug="h100-sxm")
    dgx = ServerPlatform.objects.get(slug="nvidia-dgx-h100")
    common = dict(
        plan=plan, chosen_accelerator=h100, chosen_server=dgx, chosen_precision="fp8",
        input_tokens_mean=1000, output_tokens_mean=300,
    )  # fmt: skip
    # Chat: 7 replicas of TP 2 incl. its N+1 spare → 6 at peak, users half EU, half US.
    Workload.objects.create(
        **common, name="Chat", model=ModelArchitecture.objects.get(slug="llama-3.1-70b"),
        ttft_ms=1000, tpot_ms=50, peak_concurrency=400,
        region_shares={"eu-central": 50, "us-east": 50}, n_plus_one=True,
        chosen_tensor_parallel=2, chosen_replicas=7, chosen_accelerators=14, chosen_servers=2,
    )  # fmt: skip
    # Batch: 2 replicas of TP 1, no N+1, EU users only.
    Workload.objects.create(
        **common, name="Batch", kind="batch", model=ModelArchitecture.objects.get(slug="llama-3.1-8b"),
        e2e_s=120, peak_requests_per_s=12, region_shares={"eu-central": 100}, n_plus_one=False,
        chosen_tensor_parallel=1, chosen_replicas=2, chosen_accelerators=2, chosen_servers=1,
    )  # fmt: skip
    Site.objects.create(
        plan=plan, name="Frankfurt", kind="colocation", region_key="eu-central", country="DE",
        racks_available=4, site_it_capacity_kw=Decimal("80"), voltage_v=Decimal("415"),
        phase=3, amperage_a=Decimal("32"), cooling_method="rear_door",
    )  # fmt: skip
    ashburn = Site.objects.create(
        plan=plan, name="Ashburn", kind="colocation", region_key="us-east", country="US",
        racks_available=4, site_it_capacity_kw=Decimal("20"), voltage_v=Decimal("208"),
        phase=3, amperage_a=Decimal("60"), cooling_method="rear_door",
        power_ready_date=date(2027, 2, 15),
    )  # fmt: skip
    PowerUpgrade.objects.create(site=ashburn, ready_date=date(2027, 4, 1), added_kw=Decimal("80"))
    return plan


def _summary(html: str) -> dict[str, str]:
    """The deployment summary line as the page shows it."""
    return {
        key: re.sub(r"\s+", " ", m.group(1)).strip()
        for key in ("servers", "accelerators", "kw", "racks")
        if (m := re.search(rf'data-testid="summary-{key}">(.*?)</', html, re.S))
    }


def _published(plan, user) -> dict[str, str]:
    """The client page's body and the quote and report PDFs' HTML of the plan's latest
    revision (published now, open items and all, when the plan has none)."""
    from planner.pdf.render import render_html
    from planner.sharing.body import revision_body_render
    from planner.sharing.models import PlanRevision
    from planner.sharing.services import DOCUMENT_TEMPLATES, document_context, revision_publish

    revision = PlanRevision.objects.filter(plan=plan).order_by("-number").first()
    if revision is None:
        revision = revision_publish(plan=plan, user=user, with_open_items=True)
    return {
        "client page": revision_body_render(revision)[0],
    } | {
        kind: render_html(
            DOCUMENT_TEMPLATES[kind], {"doc": document_context(revision=revision, kind=kind)}
        )
        for kind in ("quote", "report")
    }


def _pages(client, plan) -> dict[str, str]:
    return {
        "overview": client.get(reverse("plan_detail", args=[plan.pk])).content.decode(),
        "sites": client.get(reverse("facility:site_list", args=[plan.pk])).content.decode(),
        "bom": client.get(reverse("sourcing:bom", args=[plan.pk])).content.decode(),
        "tco": client.get(reverse("facility:tco", args=[plan.pk])).content.decode(),
        "timeline": client.get(reverse("sourcing:timeline", args=[plan.pk])).content.decode(),
    }


def _lines(plan) -> dict[tuple[str, str], BomLine]:
    """(site name or "plan", part key) → line: each site has its own lines."""
    return {
        (line.site.name if line.site else "plan", line.part_key): line
        for line in BomLine.objects.filter(plan=plan).select_related("site")
    }


def _per_site(plan, category: str) -> dict[str, int]:
    """Units of a category per site, as the BOM stores them."""
    out: dict[str, int] = {}
    for (site, _), line in _lines(plan).items():
        if line.category == category:
            out[site] = out.get(site, 0) + line.quantity
    return out


def _deployment_per_site(plan) -> dict[str, tuple[int, int]]:
    """Site name → (servers, racks) as the deployment and the facility checks count them."""
    deployment = plan_deployment(plan=plan)
    out = {}
    for site in deployment.sites:
        pool = deployment.site_pool(site)
        if pool is None:
            continue
        evaluation = facility_services.site_evaluate(plan=plan, site=site, deployment=deployment)
        racks = sum(v.racks_needed for v in evaluation.rack_views)
        out[site.name] = (pool.servers, racks)
    return out


def test_two_workloads_on_one_platform_over_two_sites_agree_on_every_page(
    client, consultant_a, two_site_plan
):
    plan = two_site_plan
    deployment = plan_deployment(plan=plan)
    # Split: chat 6 × 50/50 → 3 Frankfurt, 3 Ashburn; batch 2 → Frankfurt.
    # Frankfurt: 3 × TP 2 + 2 × TP 1 = 8 GPUs → one 8-GPU DGX H100, plus one spare = 2.
    # Ashburn: 3 × TP 2 = 6 GPUs → one server, plus one spare = 2. Unpooled it would be
    # chat 2 + 2 and batch 1 + 0 = 5 servers.
    pools = {deployment.labels[p.site_key]: p for p in deployment.pooled.pools}
    assert {name: (p.servers, p.accelerators_used) for name, p in pools.items()} == {
        "Frankfurt": (2, 8),
        "Ashburn": (2, 6),
    }
    assert {w.workload_name for w in pools["Frankfurt"].workloads} == {"Chat", "Batch"}
    assert (deployment.servers, deployment.accelerators_installed) == (4, 32)
    assert deployment.it_load_kw == pytest.approx(4 * 10.2)  # DGX H100: 10.2 kW (catalog)
    # Racks: one 10.2 kW server per rack at both sites (415 V 32 A: √3·415·32·0.8 = 18.4 kW
    # per side; 208 V 60 A: 17.3 kW; two servers would be 20.4 kW) → 2 + 2 = 4 racks.
    client.force_login(consultant_a)
    sourcing_services.sourcing_settings_get(plan=plan)
    sourcing_services.bom_generate(plan=plan, user=consultant_a)
    pages = _pages(client, plan)
    expected = {
        "servers": "4 servers",
        "accelerators": "14 of 32 accelerators used at peak",
        "kw": "40.8 kW",
        "racks": "4 racks",
    }
    for name, html in pages.items():
        assert _summary(html) == expected, name
    # The client's page and the PDF quote and report of a revision say the same.
    for name, html in _published(plan, consultant_a).items():
        assert _summary(html) == expected, name
    # The facility page's own per-site figures.
    assert re.findall(r'data-testid="site-racks">(\d+)<', pages["sites"]) == ["2", "2"]
    assert "2 × NVIDIA DGX H100" in pages["sites"]
    # BOM: 4 servers, 4 racks, PDUs by each site's electrics, a front-end network (every
    # replica fits one server) and no scale-out NICs.
    # Each site has its own lines: 2 servers and 2 racks in Frankfurt with its 415 V PDUs,
    # 2 and 2 in Ashburn with 208 V PDUs; services are plan-wide.
    lines = _lines(plan)
    assert lines[("Frankfurt", "server:nvidia-dgx-h100")].quantity == 2
    assert lines[("Ashburn", "server:nvidia-dgx-h100")].quantity == 2
    assert lines[("Frankfurt", "rack:42u")].quantity == 2
    assert lines[("Ashburn", "rack:42u")].quantity == 2
    assert lines[("Frankfurt", "pdu:pdu-3ph-415v-32a")].quantity == 4
    assert lines[("Ashburn", "pdu:pdu-3ph-208v-60a")].quantity == 4
    assert ("Ashburn", "pdu:pdu-3ph-415v-32a") not in lines
    assert ("Frankfurt", "pdu:pdu-3ph-208v-60a") not in lines
    # The DGX H100 ships with its front-end NICs (2 dual-port ConnectX-7): none added; each
    # site's 2 front-end links take 4 100G optics.
    assert not any(key.startswith("nic:") for _, key in lines)
    assert lines[("Frankfurt", "optic:optic-100g-qsfp28")].quantity == 4
    assert lines[("Ashburn", "optic:optic-100g-qsfp28")].quantity == 4
    assert lines[("plan", "service:installation")].quantity == 4
    # Per-site BOM counts equal the deployment's per-site counts.
    per_site = _deployment_per_site(plan)
    assert per_site == {"Frankfurt": (2, 2), "Ashburn": (2, 2)}
    assert _per_site(plan, "server") == {k: v[0] for k, v in per_site.items()}
    assert _per_site(plan, "rack") == {k: v[1] for k, v in per_site.items()}
    # The BOM page groups by site with each site's subtotal and the plan total.
    subtotals = re.findall(r'data-testid="bom-site-subtotal">— (.*?)</span>', pages["bom"])
    frankfurt_lines = sum(1 for (site, _), line in lines.items() if site == "Frankfurt")
    assert subtotals[:2] == [f"2 servers · 2 racks · {frankfurt_lines} lines"] * 2
    assert "Plan total — 4 servers · 4 racks" in pages["bom"]
    # TCO: the same servers and power.
    hardware = facility_services.tco_inputs_build(plan=plan).inputs.hardware
    assert hardware.server_count == 4
    assert hardware.server_count * hardware.server_power_kw == pytest.approx(40.8)
    # Timeline: Ashburn's 20.4 kW needs its 2027-04-01 upgrade (base 20 kW), later than its
    # 2027-02-15 energising date: the facility's date, not the latest site date.
    assert "2027-04-01" in pages["timeline"]
    assert "go-live-power-unknown" not in pages["timeline"]


def test_a_split_set_by_hand_moves_the_servers(client, consultant_a, two_site_plan):
    from planner.facility.models import WorkloadSiteSplit

    plan = two_site_plan
    frankfurt = Site.objects.get(plan=plan, name="Frankfurt")
    chat = plan.workloads.get(name="Chat")
    WorkloadSiteSplit.objects.create(workload=chat, shares={str(frankfurt.pk): 100})
    deployment = plan_deployment(plan=plan)
    # Everything in Frankfurt: 6 × TP 2 + 2 × TP 1 = 14 GPUs → 2 servers + 1 spare = 3.
    assert [(p.servers, p.accelerators_used) for p in deployment.pooled.pools] == [(3, 14)]
    assert deployment.split_source[chat.pk] == "set by hand"


def test_without_a_site_the_power_date_is_a_visible_warning(client, consultant_a, two_site_plan):
    Site.objects.filter(plan=two_site_plan).delete()
    client.force_login(consultant_a)
    sourcing_services.sourcing_settings_get(plan=two_site_plan)
    page = client.get(reverse("sourcing:timeline", args=[two_site_plan.pk])).content.decode()
    assert 'data-testid="power-unknown"' in page
    overview = client.get(reverse("plan_detail", args=[two_site_plan.pk])).content.decode()
    # Pooled at one unplaced site: 14 GPUs → 2 servers + 1 spare; racks need a site.
    assert _summary(overview)["servers"] == "3 servers"
    assert _summary(overview)["racks"] == "racks: no site entered"


def test_the_demo_plan_agrees_on_every_page(client, demo):
    from planner.facility.models import TcoRun

    plan, user, organisation = demo
    deployment = plan_deployment(plan=plan)
    assert deployment.servers  # the demo is sized
    client.force_login(user)
    summary = facility_services.deployment_summary(plan=plan)
    expected = {
        "servers": f"{deployment.servers} servers",
        "accelerators": f"{deployment.accelerators_used} of "
        f"{deployment.accelerators_installed} accelerators used at peak",
        # the sites' loads as their facility checks have them (network switches included)
        "kw": f"{summary.it_load_kw:.1f} kW",
        "racks": f"{summary.racks} racks",
    }
    for name, html in _pages(client, plan).items():
        assert _summary(html) == expected, name
    # The API gives the same deployment, kW included (it once gave the servers' 57.2 kW).
    api = client.get(f"/api/v1/plans/{plan.pk}/deployment").json()
    assert (api["servers"], api["accelerators_used"], api["accelerators_installed"]) == (
        deployment.servers,
        deployment.accelerators_used,
        deployment.accelerators_installed,
    )
    assert f"{api['it_load_kw']:.1f} kW" == expected["kw"]
    assert sum(s["racks_needed"] or 0 for s in api["sites"]) == summary.racks
    # The demo's published revision: the client's page, the PDF quote and the report.
    for name, html in _published(plan, user).items():
        assert _summary(html) == expected, name
    # Per site: the BOM's servers and racks are the deployment's and the facility checks'.
    per_site = _deployment_per_site(plan)
    assert len(per_site) == 2
    assert _per_site(plan, "server") == {k: v[0] for k, v in per_site.items()}
    assert _per_site(plan, "rack") == {k: v[1] for k, v in per_site.items()}
    assert sum(_per_site(plan, "server").values()) == deployment.servers
    assert sum(_per_site(plan, "rack").values()) == summary.racks
    # Landed cost per site: each site's lines into its own country, the plan = the sum.
    report = sourcing_services.landed_cost_report(plan=plan, organisation=organisation)
    countries = {s.name: s.country for s in deployment.sites}
    landed = {s.label: s for s in report.sites if s.site is not None}
    assert {name: s.destination for name, s in landed.items()} == countries
    assert set(countries.values()) == {"DE", "US"}
    for site in landed.values():
        assert all(c.destination == site.destination for c in site.lines)
    frankfurt = next(s for s in landed.values() if s.destination == "DE")
    ashburn = next(s for s in landed.values() if s.destination == "US")
    # Into DE: the Dutch distributor's goods are intra-EU (reverse charge), into the US the
    # same distributor's goods are imports; nothing is an import VAT into the US.
    rules_de = {c.landed.supply_rule for c in frankfurt.lines if c.landed}
    rules_us = {c.landed.supply_rule for c in ashburn.lines if c.landed}
    assert "intra-EU" in rules_de and "intra-EU" not in rules_us
    assert all(c.landed.vat.amount == 0 for c in ashburn.lines if c.landed and c.landed.vat)
    assert report.complete
    assert report.total_net.amount == sum(s.totals.net.amount for s in report.sites)
    assert report.total_gross.amount == sum(s.totals.gross.amount for s in report.sites)
    landed_page = client.get(reverse("sourcing:landed_cost", args=[plan.pk])).content.decode()
    assert landed_page.count('data-testid="landed-site"') == len(report.sites)
    # Timeline: one shipment set per site; go-live is the last site ready.
    timeline = sourcing_services.timeline_report(
        plan=plan, organisation=organisation, report=report
    )
    rows = timeline.site_rows
    assert {r["site"] for r in rows} == set(countries)
    assert timeline.go_live == max(r["ready"] for r in rows)
    assert set(timeline.task_sites.values()) >= set(countries)
    assert 'data-testid="timeline-site"' in _pages(client, plan)["timeline"]
    run = TcoRun.objects.filter(plan=plan).latest("requested_at")
    assert run.inputs["inputs"]["hardware"]["server_count"] == deployment.servers
    # Two sites, one per continent, and the chat and the catalogue job share Frankfurt's servers.
    assert len(deployment.pooled.sites) == 2
    assert any(len(p.workloads) == 2 for p in deployment.pooled.pools)


def test_the_split_form_saves_a_hand_split_and_refuses_shares_not_adding_to_100(
    client, consultant_a, two_site_plan
):
    from planner.facility.models import WorkloadSiteSplit

    plan = two_site_plan
    chat = plan.workloads.get(name="Chat")
    frankfurt = Site.objects.get(plan=plan, name="Frankfurt")
    ashburn = Site.objects.get(plan=plan, name="Ashburn")
    client.force_login(consultant_a)
    url = reverse("facility:site_split", args=[plan.pk, chat.pk])
    page = client.get(reverse("facility:site_list", args=[plan.pk])).content.decode()
    assert f'data-testid="split-form-{chat.pk}"' in page

    response = client.post(url, {f"share_{frankfurt.pk}": "70", f"share_{ashburn.pk}": "20"})
    assert response.status_code == 400
    body = response.content.decode()
    assert "The shares add up to 90 %, not 100 %" in body
    assert 'value="70"' in body  # what was typed stays
    assert not WorkloadSiteSplit.objects.filter(workload=chat).exists()

    response = client.post(url, {f"share_{frankfurt.pk}": "100", f"share_{ashburn.pk}": ""})
    assert response.status_code == 302
    assert WorkloadSiteSplit.objects.get(workload=chat).shares == {str(frankfurt.pk): 100}
    overview = client.get(reverse("plan_detail", args=[plan.pk])).content.decode()
    assert _summary(overview)["servers"] == "3 servers"  # all in Frankfurt: 2 + 1 spare

    # All empty: back to the users' regions.
    response = client.post(url, {f"share_{frankfurt.pk}": "", f"share_{ashburn.pk}": ""})
    assert response.status_code == 302
    assert WorkloadSiteSplit.objects.get(workload=chat).shares == {}
    assert plan_deployment(plan=plan).servers == 4
