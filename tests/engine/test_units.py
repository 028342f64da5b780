"""Unit conversions for display, against their defining constants (NIST SP 811) by hand."""

import pytest

from planner.engine import facility as fe
from planner.engine import units as eu


def test_conversions_match_their_definitions():
    # 1 ft = 0.3048 m: 1 ft³ = 0.028316846592 m³, × 60 min/h = 1.69901079552 m³/h per CFM.
    assert eu.m3_per_h_from_cfm(1) == pytest.approx(1.69901079552, abs=1e-11)
    assert eu.m3_per_h_from_cfm(1_000) == pytest.approx(1_699.01, abs=0.01)
    # 12,000 BTU/h = 1 ton of refrigeration.
    assert eu.tons_from_btu_per_h(24_000) == 2
    # The engine's 3.412 BTU/h per W: 34,120 BTU/h is the 10 kW it came from, exactly.
    assert eu.kw_from_btu_per_h(fe.heat_btu_per_h(10)) == pytest.approx(10, abs=1e-12)
    # A 20 °F rise is 11.11 °C; 9 °C is 16.2 °F; 35 °C is 95 °F.
    assert eu.celsius_delta_from_fahrenheit_delta(20) == pytest.approx(11.1111, abs=1e-4)
    assert eu.fahrenheit_delta_from_celsius_delta(9) == pytest.approx(16.2)
    assert eu.fahrenheit_from_celsius(35) == pytest.approx(95)


def test_a_site_reads_metric_unless_its_country_has_not_adopted_it():
    assert eu.site_units("DE") is eu.METRIC
    assert eu.site_units("") is eu.METRIC
    assert eu.site_units("us") is eu.IMPERIAL
    assert eu.site_units("LR") is eu.IMPERIAL and eu.site_units("MM") is eu.IMPERIAL


def test_figures_print_in_the_sites_units():
    heat = fe.heat_btu_per_h(34.1)  # 116,349 BTU/h
    assert eu.METRIC.heat(heat) == "34.1 kW"
    assert eu.IMPERIAL.heat(heat) == "116,349 BTU/h (9.7 tons, 34.1 kW)"
    assert eu.METRIC.airflow(1_604) == "2,725 m³/h"
    assert eu.IMPERIAL.airflow(1_604) == "1,604 CFM (2,725 m³/h)"
    assert eu.METRIC.delta_t(20) == "11.1 °C"
    assert eu.IMPERIAL.delta_t(20) == "20 °F (11.1 °C)"
    assert eu.IMPERIAL.temperature(35) == "95 °F (35 °C)"
    assert eu.METRIC.quantity(34_120, "BTU/h") == pytest.approx((10.0, "kW"))
    assert eu.IMPERIAL.quantity(34_120, "BTU/h") == (34_120, "BTU/h")
    assert eu.METRIC.quantity(12, "racks") == (12, "racks")


def test_the_engine_writes_its_reasons_in_the_sites_units():
    site = fe.SiteSpec(
        name="Frankfurt", racks_available=4, site_it_capacity_kw=100.0,
        cooling_capacity_site_kw=90.0,
    )  # fmt: skip
    load = fe.RackLoad(
        server_name="DGX H100", server_power_kw=10.2, server_ru=8, server_count=2,
        server_ashrae_class="A2",
    )  # fmt: skip
    from datetime import date

    metric = fe.check_facility(site, load, date(2027, 1, 1), units=eu.METRIC)
    imperial = fe.check_facility(site, load, date(2027, 1, 1), units=eu.IMPERIAL)
    assert metric.by_key("heat_load").value == imperial.by_key("heat_load").value  # BTU/h
    metric_words = " ".join(c.reason for c in metric.checks)
    imperial_words = " ".join(c.reason for c in imperial.checks)
    for word in ("BTU", "CFM", "°F", "tons"):
        assert word not in metric_words
        assert word in imperial_words
    assert (
        "releases 20.4 kW of heat against 90.0 kW of site cooling"
        in metric.by_key("heat_load").reason
    )
    assert "m³/h" in metric.by_key("airflow").reason
