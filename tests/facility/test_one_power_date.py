"""One power-ready date per site: the site page, the checklist, the facility check, the
timeline and the client's share page all read the first day the site carries its servers'
load (base capacity plus planned upgrades), never the base capacity's energising date.

The demo's Ashburn cage is energised on 2027-02-15 with 20 kW, short of the plan's load; its
80 kW upgrade lands on 2027-04-01, so Ashburn's power is ready on 2027-04-01 everywhere."""

import re
from datetime import date

import pytest
from django.urls import reverse

from planner.facility import services as fsvc
from planner.facility.deployment import plan_deployment
from planner.sharing.models import ShareLink

pytestmark = pytest.mark.django_db

ISO = r"\d{4}-\d{2}-\d{2}"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _site_page_date(client, plan, site) -> str:
    page = client.get(reverse("facility:site_detail", args=[plan.pk, site.pk])).content.decode()
    return re.search(r'data-testid="power-ready">([^<]*)<', page).group(1).strip()


def _check_date(client, plan, site) -> str:
    page = client.get(reverse("facility:site_detail", args=[plan.pk, site.pk])).content.decode()
    row = re.search(r'<tr data-check="power_ready">(.*?)</tr>', page, re.S).group(1)
    found = re.search(rf"available on ({ISO})", _text(row))
    return found.group(1) if found else "—"


def _checklist_date(client, plan, site) -> str:
    page = _text(client.get(reverse("sharing:checklist", args=[plan.pk])).content.decode())
    found = re.search(
        rf"{re.escape(site.name)}: \d+ checks[^;]*;(?: power ready ({ISO})| no)", page
    )
    assert found, f"{site.name} is not in the checklist's facility evidence"
    return found.group(1) or "—"


def _timeline_date(client, plan, site) -> str:
    page = client.get(reverse("sourcing:timeline", args=[plan.pk])).content.decode()
    rows = re.findall(r'<tr data-testid="timeline-site">(.*?)</tr>', page, re.S)
    row = next(r for r in rows if site.name in r)
    return re.search(ISO, row).group(0)


def _share_page_date(client, plan, site) -> str:
    link = ShareLink.objects.filter(plan=plan, revoked_at__isnull=True).latest("pk")
    page = client.get(reverse("sharing:public", args=[link.token])).content.decode()
    header = re.search(
        rf"<h3>{re.escape(site.name)} .*?data-testid=\"site-power-ready\">([^<]*)<", page, re.S
    )
    return header.group(1).strip()


def test_every_surface_reads_one_power_ready_date_per_site(client, demo):
    plan, user, _ = demo
    client.force_login(user)
    deployment = plan_deployment(plan=plan)
    sites = [s for s in deployment.sites if deployment.site_pool(s)]
    assert len(sites) == 2
    seen = {}
    for site in sites:
        report = fsvc.site_evaluate(plan=plan, site=site, deployment=deployment).report
        expected = report.power_ready_on.isoformat() if report.power_ready_on else "—"
        surfaces = {
            "site page": _site_page_date(client, plan, site),
            "facility check": _check_date(client, plan, site),
            "checklist": _checklist_date(client, plan, site),
            "share page": _share_page_date(client, plan, site),
        }
        if report.power_ready_on:  # a site with power already has no date to start from
            surfaces["timeline"] = _timeline_date(client, plan, site)
        assert surfaces == dict.fromkeys(surfaces, expected), site.name
        seen[site.name.split()[0]] = expected
    # The hand check: Ashburn's 20 kW base (energised 2027-02-15) cannot carry the load; the
    # 80 kW upgrade of 2027-04-01 can. Frankfurt states no date: its power is there already.
    ashburn = next(s for s in sites if s.name.startswith("Ashburn"))
    assert ashburn.power_ready_date == date(2027, 2, 15)
    assert seen == {"Ashburn": "2027-04-01", "Frankfurt": "—"}
