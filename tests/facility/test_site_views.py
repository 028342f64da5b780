"""Site pages: create, live checks over htmx, bad input kept and explained, permissions."""

from decimal import Decimal

import pytest
from django.urls import reverse

from planner.facility.models import PowerUpgrade, Site
from tests.conftest import make_member
from tests.facility.conftest import site_post_data

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_create_a_site_with_upgrades(client, consultant_a, sized_plan):
    client.force_login(consultant_a)
    data = site_post_data(upgrades="+400 kW on 2027-03-01 new transformer\n\n2027-09-01 +50 kW")
    response = client.post(reverse("facility:site_create", args=[sized_plan.pk]), data)

    site = Site.objects.get(plan=sized_plan, name="Frankfurt")
    assert response.status_code == 302
    assert response.url == reverse("facility:site_detail", args=[sized_plan.pk, site.pk])
    assert site.country == "DE"
    upgrades = list(site.upgrades.values_list("added_kw", "note"))
    assert upgrades == [(Decimal("400.00"), "new transformer"), (Decimal("50.00"), "")]


def test_htmx_preview_of_a_new_site_checks_without_saving(client, consultant_a, sized_plan):
    client.force_login(consultant_a)
    response = client.post(
        reverse("facility:site_create", args=[sized_plan.pk]), site_post_data(), **HTMX
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="site-checks"' in html and 'data-check="ab_redundancy"' in html
    assert "Preview" in html
    assert not Site.objects.filter(plan=sized_plan).exists()


def test_site_page_shows_checks_summary_and_elevation(client, consultant_a, sized_plan, colo_site):
    client.force_login(consultant_a)
    html = client.get(reverse("facility:site_detail", args=[sized_plan.pk, colo_site.pk])).content
    html = html.decode()

    # 415 V three phase 32 A at 80 %: √3 × 415 × 32 × 0.8 = 18.4 kW per feed.
    assert "18.4 kW" in html
    assert 'data-check="power_ready"' in html and 'data-check="cooling_method"' in html
    assert "<svg" in html and "DGX H100 #1" in html
    assert "Default 80%: NEC continuous-load rule" in html  # the default's source is shown


def test_htmx_change_saves_and_updates_the_checks(client, consultant_a, sized_plan, colo_site):
    client.force_login(consultant_a)
    url = reverse("facility:site_detail", args=[sized_plan.pk, colo_site.pk])
    data = site_post_data(name="Amsterdam", amperage_a="32", site_it_capacity_kw="400")
    before = client.post(url, data, **HTMX).content.decode()
    data["amperage_a"] = "10"  # 10 A per feed cannot carry one 10.2 kW DGX
    after = client.post(url, data, **HTMX).content.decode()

    assert "Saved" in after
    colo_site.refresh_from_db()
    assert colo_site.amperage_a == Decimal("10")
    assert 'id="site-checks"' in after and "<html" not in after
    assert "fail" in after and after != before
    assert 'id="err-amperage_a" class="error" role="alert" hx-swap-oob="true"></span>' in after


def test_bad_input_is_explained_next_to_the_field_and_not_saved(
    client, consultant_a, sized_plan, colo_site
):
    client.force_login(consultant_a)
    url = reverse("facility:site_detail", args=[sized_plan.pk, colo_site.pk])
    data = site_post_data(name="Amsterdam", pue="0.7", upgrades="+400 kW sometime")

    htmx = client.post(url, data, **HTMX).content.decode()
    full = client.post(url, data)

    assert 'id="err-pue"' in htmx and "greater than or equal to 1" in htmx
    assert "Line 1: write the added kW and the date" in htmx
    assert "Not saved" in htmx
    assert full.status_code == 400
    body = full.content.decode()
    assert 'value="0.7"' in body and "+400 kW sometime" in body  # nothing typed is lost
    colo_site.refresh_from_db()
    assert colo_site.pue != Decimal("0.7")
    assert PowerUpgrade.objects.filter(site=colo_site).count() == 1


def test_plan_without_chosen_configuration_says_so(client, consultant_a, org_a, sized_plan):
    sized_plan.workloads.update(chosen_accelerator=None)
    site = Site.objects.create(plan=sized_plan, name="Empty", site_it_capacity_kw=100)
    client.force_login(consultant_a)
    overview = reverse("plan_detail", args=[sized_plan.pk])
    for url in (
        reverse("facility:site_list", args=[sized_plan.pk]),
        reverse("facility:site_detail", args=[sized_plan.pk, site.pk]),
    ):
        html = client.get(url).content.decode()
        assert "No workload has a chosen configuration yet" in html
        assert f'href="{overview}"' in html


def test_viewers_read_but_cannot_change_sites(client, org_a, sized_plan, colo_site):
    viewer = make_member(org_a, "viewer_a", "viewer")
    client.force_login(viewer)
    url = reverse("facility:site_detail", args=[sized_plan.pk, colo_site.pk])

    assert client.get(url).status_code == 200
    assert client.post(url, site_post_data(name="Renamed")).status_code == 403
    assert client.get(reverse("facility:site_create", args=[sized_plan.pk])).status_code == 403
    delete = reverse("facility:site_delete", args=[sized_plan.pk, colo_site.pk])
    assert client.post(delete).status_code == 403
    assert Site.objects.filter(pk=colo_site.pk, name="Amsterdam").exists()


def test_delete_a_site(client, consultant_a, sized_plan, colo_site):
    client.force_login(consultant_a)
    response = client.post(reverse("facility:site_delete", args=[sized_plan.pk, colo_site.pk]))
    assert response.status_code == 302
    assert not Site.objects.filter(pk=colo_site.pk).exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [("+400 kW on 2027-13-01", "is not a date"), ("2027-03-01", "write the added kW")],
)
def test_upgrade_lines_are_checked(text, message):
    from django import forms

    from planner.facility.forms import parse_upgrades

    with pytest.raises(forms.ValidationError, match=message):
        parse_upgrades(text)
