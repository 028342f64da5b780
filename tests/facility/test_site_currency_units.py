"""A site reads in the plan's currency and in its country's units.

The demo plan is EUR with a site in Frankfurt and one in Ashburn. Its site pages show the
running costs in EUR (stored in USD: converted in the form at the TCO's dated rate), the
facility energy once (the header is the check's figure), and heat, airflow and temperatures
metric in Frankfurt, imperial with metric beside it in Ashburn. A form saved unchanged
changes nothing, to the cent; a changed figure is stored in USD at the shown rate.
"""

import re
from decimal import Decimal

import pytest
from django.forms.models import model_to_dict
from django.urls import reverse

from planner.engine import units as eu
from planner.facility import services
from planner.facility.models import Site, TcoSettings
from tests.html_forms import page_form
from tests.sharing.test_plain_words import visible_text

pytestmark = pytest.mark.django_db

IMPERIAL_WORDS = ("BTU", "CFM", "°F", "tons")


def _site(plan, city: str) -> Site:
    return Site.objects.get(plan=plan, name__startswith=city)


def _page(client, plan, site) -> str:
    response = client.get(reverse("facility:site_detail", args=[plan.pk, site.pk]))
    assert response.status_code == 200
    return response.content.decode()


def _stored(row) -> dict:
    return {k: v for k, v in model_to_dict(row).items() if k != "version"}


def test_frankfurt_reads_metric_and_ashburn_imperial(client, demo):
    plan, consultant, _ = demo
    client.force_login(consultant)
    frankfurt, ashburn = _site(plan, "Frankfurt"), _site(plan, "Ashburn")

    text = visible_text(_page(client, plan, frankfurt))
    assert not [w for w in IMPERIAL_WORDS if w in text], text
    assert "m³/h" in text and "Air ΔT (°C)" in text
    # The heat row is in kW, the IT load it came from; the airflow row in m³/h of the CFM.
    evaluation = services.site_evaluate(plan=plan, site=frankfurt)
    rows = {r["key"]: r for r in evaluation.check_rows}
    report = evaluation.report
    assert rows["heat_load"]["unit"] == "kW"
    assert rows["heat_load"]["value"] == f"{report.it_load_kw:,.1f}"
    assert rows["heat_load"]["limit"] == f"{float(frankfurt.cooling_capacity_site_kw):,.1f}"
    cfm = report.by_key("airflow").value
    assert rows["airflow"]["unit"] == "m³/h"
    assert rows["airflow"]["value"] == f"{cfm * 0.3048**3 * 60:,.0f}"

    text = visible_text(_page(client, plan, ashburn))
    assert all(w in text for w in IMPERIAL_WORDS), text
    assert "Air ΔT (°F)" in text
    rows = {r["key"]: r for r in services.site_evaluate(plan=plan, site=ashburn).check_rows}
    assert rows["heat_load"]["unit"] == "BTU/h" and rows["airflow"]["unit"] == "CFM"
    assert services.site_units_of(ashburn) is eu.IMPERIAL


def test_running_costs_and_energy_are_in_the_plans_currency(client, demo):
    plan, consultant, _ = demo
    client.force_login(consultant)
    frankfurt = _site(plan, "Frankfurt")
    rate = services.plan_usd_rate(plan)
    assert plan.currency == "EUR" and rate.currency == "EUR"

    html = _page(client, plan, frankfurt)
    text = visible_text(html)
    assert "Running costs (EUR)" in text
    assert "Energy price (EUR/kWh)" in text and "Staff (EUR/month)" in text
    assert "USD/mo" not in text and "(USD" not in text
    # The form shows the stored 0.24 USD/kWh at the rate, to the field's 4 decimals.
    form = page_form(html, containing="power_usd_per_kwh")
    assert Decimal(form["power_usd_per_kwh"]) == (Decimal("0.24") * rate.rate).quantize(
        Decimal("0.0001")
    )
    # One energy figure: the header says what the facility check's reason says.
    header = re.search(r'data-testid="facility-energy">about ([\d,]+ EUR) a month', html)
    assert header, html
    reason = next(
        r["reason"]
        for r in services.site_evaluate(plan=plan, site=frankfurt).check_rows
        if r["key"] == "facility_power"
    )
    assert f"about {header.group(1)} a month" in reason
    report = services.site_evaluate(plan=plan, site=frankfurt).report
    expected = report.energy_usd_per_month * float(rate.rate)
    assert header.group(1) == f"{expected:,.0f} EUR"


@pytest.mark.parametrize("city", ["Frankfurt", "Ashburn"])
def test_a_site_form_saved_unchanged_changes_nothing(client, demo, city):
    plan, consultant, _ = demo
    client.force_login(consultant)
    site = _site(plan, city)
    # Figures whose conversion does not round-trip: 0.2371 USD → 0.2181 EUR → 0.2371 only
    # because the unchanged figure keeps the stored one.
    Site.objects.filter(pk=site.pk).update(
        power_usd_per_kwh=Decimal("0.2371"), staff_usd_per_month=Decimal("12345.67"),
        facility_usd_per_kw_month=Decimal("201.03"), delta_t_f=Decimal("23.3"),
    )  # fmt: skip
    site.refresh_from_db()
    before = _stored(site)
    url = reverse("facility:site_detail", args=[plan.pk, site.pk])
    data = page_form(_page(client, plan, site), containing="power_usd_per_kwh")

    response = client.post(url, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    site.refresh_from_db()
    assert _stored(site) == before


def test_a_changed_figure_is_stored_in_usd_and_the_engines_units(client, demo):
    plan, consultant, _ = demo
    client.force_login(consultant)
    site = _site(plan, "Frankfurt")
    rate = services.plan_usd_rate(plan)
    url = reverse("facility:site_detail", args=[plan.pk, site.pk])
    data = page_form(_page(client, plan, site), containing="power_usd_per_kwh")
    data |= {"power_usd_per_kwh": "0.2000", "delta_t_f": "15.0"}

    assert client.post(url, data).status_code == 302

    site.refresh_from_db()
    assert site.power_usd_per_kwh == (Decimal("0.2") / rate.rate).quantize(Decimal("0.0001"))
    assert site.delta_t_f == Decimal("27.0")  # 15 °C of rise × 9/5


def test_the_units_the_form_was_shown_in_read_it(client, demo):
    """An autosave that moved the site to the US leaves the page's inputs in °C until it is
    reloaded: the form's hidden units say how to read what it posts."""
    plan, consultant, _ = demo
    client.force_login(consultant)
    site = _site(plan, "Frankfurt")
    url = reverse("facility:site_detail", args=[plan.pk, site.pk])
    data = page_form(_page(client, plan, site), containing="power_usd_per_kwh")
    assert data["units_shown"] == "metric"
    data |= {"country": "US", "delta_t_f": "10.0"}

    assert client.post(url, data, HTTP_HX_REQUEST="true").status_code == 200

    site.refresh_from_db()
    assert (site.country, site.delta_t_f) == ("US", Decimal("18.0"))


def test_a_converted_figure_out_of_range_is_refused_in_both_units(client, demo):
    plan, consultant, _ = demo
    client.force_login(consultant)
    site = _site(plan, "Frankfurt")
    url = reverse("facility:site_detail", args=[plan.pk, site.pk])
    data = page_form(_page(client, plan, site), containing="power_usd_per_kwh")
    data |= {"delta_t_f": "60.0"}  # 108 °F: above the 100 °F the engine takes

    response = client.post(url, data)

    assert response.status_code == 400
    assert "60.0 °C is 108.0 °F. Between 1 and 100 °F" in response.content.decode()
    site.refresh_from_db()
    assert site.delta_t_f != Decimal("108.0")


def test_tco_settings_read_in_the_plans_currency_and_save_unchanged(client, demo):
    plan, consultant, _ = demo
    client.force_login(consultant)
    settings, _ = TcoSettings.objects.get_or_create(plan=plan)
    TcoSettings.objects.filter(pk=settings.pk).update(
        server_price_usd=Decimal("305000.00"), storage_usd=Decimal("1234.57"),
        on_demand_usd_per_gpu_h=Decimal("5.9833"),
    )  # fmt: skip
    settings.refresh_from_db()
    before = _stored(settings)
    url = reverse("facility:tco", args=[plan.pk])
    html = client.get(url).content.decode()
    text = visible_text(html)
    assert "Server price (EUR per server)" in text
    assert "On-demand price (EUR per accelerator-hour)" in text
    assert "(USD" not in text
    data = page_form(html, containing="server_price_usd")
    rate = services.plan_usd_rate(plan).rate
    assert Decimal(data["server_price_usd"]) == (Decimal("305000") * rate).quantize(Decimal("0.01"))

    assert client.post(url, data).status_code == 302
    settings.refresh_from_db()
    assert _stored(settings) == before

    data["install_usd"] = "1000.00"  # EUR typed
    assert client.post(url, data).status_code == 302
    settings.refresh_from_db()
    assert settings.install_usd == (Decimal("1000") / rate).quantize(Decimal("0.01"))
    assert settings.server_price_usd == Decimal("305000.00")


def test_without_a_rate_the_form_says_its_prices_are_usd_and_why(client, consultant_a, sized_plan):
    from sourcing.models import FxRate

    FxRate.objects.all().delete()
    client.force_login(consultant_a)
    html = client.get(reverse("facility:site_create", args=[sized_plan.pk])).content.decode()
    text = visible_text(html)

    assert "Running costs (USD: no USD → EUR rate on file yet, add it under FX rates)" in text
    assert "Power price (USD/kWh)" in text
    # Stored as typed: nothing to convert at.
    assert page_form(html, containing="power_usd_per_kwh")["power_usd_per_kwh"] == "0.08"


def test_a_price_changed_meanwhile_is_merged_exactly(client, demo):
    """Two consultants load the Frankfurt site; one changes the energy price, the other the
    staff cost: the second save keeps the first's price to the last stored digit."""
    plan, consultant, _ = demo
    client.force_login(consultant)
    site = _site(plan, "Frankfurt")
    url = reverse("facility:site_detail", args=[plan.pk, site.pk])
    html = _page(client, plan, site)
    first, second = (page_form(html, containing="power_usd_per_kwh") for _ in range(2))

    assert client.post(url, first | {"power_usd_per_kwh": "0.1999"}).status_code == 302
    site.refresh_from_db()
    price = site.power_usd_per_kwh
    assert client.post(url, second | {"staff_usd_per_month": "5000.00"}).status_code == 302

    site.refresh_from_db()
    rate = services.plan_usd_rate(plan).rate
    assert site.power_usd_per_kwh == price
    assert site.staff_usd_per_month == (Decimal("5000") / rate).quantize(Decimal("0.01"))
