"""Facility checks against hand calculations (reference: facility_tco_sourcing.md part A)."""

from __future__ import annotations

import math
from datetime import date

import pytest

from planner.engine.facility import (
    PowerUpgrade,
    RackLoad,
    SiteSpec,
    airflow_cfm,
    check_facility,
    feed_usable_kw,
    heat_btu_per_h,
    rack_capacity,
    rack_elevation_svg,
    rack_layout,
)

GO_LIVE = date(2027, 3, 1)


def site(**kw) -> SiteSpec:
    """415 V three-phase 32 A A+B feeds, air-cooled, 15 kW of cooling per rack."""
    base = {
        "name": "FRA1",
        "racks_available": 10,
        "site_it_capacity_kw": 500.0,
        "voltage_v": 415.0,
        "phase": 3,
        "amperage_a": 32.0,
        "feeds_per_rack": 2,
        "cooling_method": "air",
        "cooling_capacity_per_rack_kw": 15.0,
        "cooling_capacity_site_kw": 400.0,
    }
    base.update(kw)
    return SiteSpec(**base)


def dgx(count: int = 1, **kw) -> RackLoad:
    """DGX H100: 10.2 kW max, 8U (ref A2)."""
    return RackLoad(
        server_name="DGX H100", server_power_kw=10.2, server_ru=8, server_count=count, **kw
    )


# --- Electrical formulas ----------------------------------------------------------------------


def test_three_phase_415v_32a_at_80_percent_is_18_40_kw():
    # √3 × 415 × 32 × 0.8 = 1.7320508 × 415 = 718.80; × 32 = 23,001.6; × 0.8 = 18,401.3 W
    assert feed_usable_kw(415, 32, 3, 0.8) == pytest.approx(18.4013, abs=1e-4)


def test_single_phase_230v_32a_at_80_percent():
    # 230 × 32 × 0.8 = 5,888 W (ref A5 lists 5.9 kVA)
    assert feed_usable_kw(230, 32, 1, 0.8) == pytest.approx(5.888)


def test_208v_three_phase_30a_matches_reference_example():
    # 208 × 30 × √3 × 0.8 = 8,646 VA (datacentermd example, ref A5)
    assert feed_usable_kw(208, 30, 3, 0.8) * 1000 == pytest.approx(8646, abs=1)


def test_power_factor_reduces_usable_kw():
    # 18.4013 kW × 0.9 = 16.561 kW
    assert feed_usable_kw(415, 32, 3, 0.8, 0.9) == pytest.approx(16.5612, abs=1e-3)


def test_heat_of_10_kw_is_34120_btu_per_h():
    # 10,000 W × 3.412 BTU/h per W = 34,120 BTU/h
    assert heat_btu_per_h(10.0) == pytest.approx(34_120.0)


def test_airflow_of_dgx_h100_matches_reference_table():
    # 3412 × 10.2 / (1.085 × 20) = 34,802.4 / 21.7 = 1,603.8 CFM (ref A6 table: 1,604)
    assert airflow_cfm(10.2, 20.0) == pytest.approx(1603.8, abs=0.1)


# --- One DGX in a 15 kW air-cooled rack -------------------------------------------------------


def test_dgx_in_15_kw_air_rack_passes_power_but_air_method_warns():
    report = check_facility(site(), dgx(1), GO_LIVE)
    # A+B: 10.2 kW ≤ 18.40 kW of one side (55 %); the warning is the DGX's own supplies
    # (3 of 6 × 3.3 kW = 9.9 kW on one feed, test_dgx_h100_psus_a_few_percent_short_warn).
    ab = report.by_key("ab_redundancy")
    assert ab.status == "warn" and "18.40 kW usable) can carry it alone" in ab.reason
    assert ab.value == pytest.approx(10.2)
    assert ab.limit == pytest.approx(18.4013, abs=1e-4)
    # 10.2 kW of 15 kW per-rack cooling = 68 % → pass
    assert report.by_key("rack_cooling").status == "pass"
    # air is comfortable to ~10 kW and tops out at ~30 kW (ref A3): 10.2 kW → warn, not fail
    cooling = report.by_key("cooling_method")
    assert cooling.status == "warn"
    assert cooling.limit == 30.0
    assert "10.2 kW" in cooling.reason


def test_same_rack_with_direct_to_chip_passes_method_envelope():
    report = check_facility(site(cooling_method="direct_to_chip"), dgx(1), GO_LIVE)
    assert report.by_key("cooling_method").status == "pass"


def test_rack_above_air_practical_limit_fails():
    # four 10.2 kW servers = 40.8 kW > 30 kW practical limit of air (feeds sized large enough)
    s = site(amperage_a=125.0, voltage_v=400.0, cooling_capacity_per_rack_kw=60.0)
    report = check_facility(s, dgx(4, servers_per_rack=4), GO_LIVE)
    assert report.rack_load_kw == pytest.approx(40.8)
    assert report.by_key("cooling_method").status == "fail"


def test_ab_redundancy_fails_when_rack_exceeds_one_feed():
    # 2 × 10.2 = 20.4 kW > 18.40 kW of one side, though < 36.80 kW of both sides together
    report = check_facility(
        site(cooling_capacity_per_rack_kw=30.0), dgx(2, servers_per_rack=2), GO_LIVE
    )
    # NetBox's view (both feeds summed) sees only 20.4 / 36.80 = 55 % and passes
    assert report.by_key("feed_capacity").status == "pass"
    ab = report.by_key("ab_redundancy")
    assert ab.status == "fail"
    assert ab.value == pytest.approx(20.4)
    assert "cannot carry it alone" in ab.reason
    assert report.status == "fail"


def test_two_feeds_per_side_double_the_side_capacity():
    # 4 feeds = 2 per side: 2 × 18.40 = 36.80 kW ≥ 20.4 kW
    s = site(feeds_per_rack=4, cooling_capacity_per_rack_kw=30.0)
    report = check_facility(s, dgx(2, servers_per_rack=2), GO_LIVE)
    assert report.side_usable_kw == pytest.approx(36.8026, abs=1e-3)
    ab = report.by_key("ab_redundancy")
    # The side carries the rack; the warning is the DGX H100's 3 remaining supplies.
    assert ab.status == "warn" and "can carry it alone" in ab.reason


def test_single_feed_warns_no_redundancy():
    report = check_facility(site(feeds_per_rack=1), dgx(1), GO_LIVE)
    ab = report.by_key("ab_redundancy")
    assert ab.status == "warn"
    assert "no A/B redundancy" in ab.reason


# --- Servers per rack -------------------------------------------------------------------------


def test_servers_per_rack_limited_by_power():
    # 1 kW 2U servers, one 1U 0.4 kW switch. Power: ⌊(18.40 − 0.4) / 1.0⌋ = 18;
    # cooling: ⌊(30 − 0.4) / 1.0⌋ = 29; rack units: ⌊(42 − 1) / 2⌋ = 20 → power binds at 18
    load = RackLoad("1U node", 1.0, 2, 40, switch_power_kw=0.4)
    cap = rack_capacity(site(cooling_capacity_per_rack_kw=30.0), load)
    assert (cap.by_power, cap.by_cooling, cap.by_rack_units) == (18, 29, 20)
    assert cap.max_servers == 18
    assert cap.binding == ("power",)


def test_servers_per_rack_limited_by_rack_units():
    # same servers but 4U: rack units ⌊41 / 4⌋ = 10 < 18 by power
    load = RackLoad("4U node", 1.0, 4, 40, switch_power_kw=0.4)
    cap = rack_capacity(site(cooling_capacity_per_rack_kw=30.0), load)
    assert cap.by_rack_units == 10
    assert cap.binding == ("rack_units",)
    report = check_facility(site(cooling_capacity_per_rack_kw=30.0), load, GO_LIVE)
    check = report.by_key("servers_per_rack")
    assert check.status == "pass"
    assert "bound by rack units" in check.reason
    # 40 servers at 10 per rack = 4 racks
    assert report.racks_needed == 4


def test_planned_density_above_limit_fails():
    report = check_facility(site(), dgx(4, servers_per_rack=2), GO_LIVE)
    assert report.by_key("servers_per_rack").status == "fail"


def test_rack_count_fails_when_more_racks_needed_than_available():
    # 1 DGX per rack (power and cooling both allow one): 12 servers → 12 racks > 10
    report = check_facility(site(site_it_capacity_kw=1000.0), dgx(12), GO_LIVE)
    assert report.racks_needed == 12
    assert report.by_key("rack_count").status == "fail"


def test_rack_count_warns_at_90_percent():
    # 9 racks of 10 = 90 % → warn band
    report = check_facility(site(), dgx(9), GO_LIVE)
    assert report.by_key("rack_count").status == "warn"


# --- Site power, PUE, heat --------------------------------------------------------------------


def test_site_totals_and_heat_against_site_cooling():
    # 5 DGX = 51 kW IT; × PUE 1.5 = 76.5 kW; heat 51,000 × 3.412 = 174,012 BTU/h
    report = check_facility(site(), dgx(5), GO_LIVE)
    assert report.it_load_kw == pytest.approx(51.0)
    assert report.facility_load_kw == pytest.approx(76.5)
    assert report.heat_btu_per_h == pytest.approx(174_012.0)
    heat = report.by_key("heat_load")
    assert heat.status == "pass"
    assert heat.limit == pytest.approx(400 * 3412.0)
    # 76.5 kW × 730 h × 0.08 USD/kWh = 4,467.60 USD a month
    assert report.energy_usd_per_month == pytest.approx(4467.6)


def test_site_power_warns_in_the_90_percent_band():
    # 9 × 10.2 = 91.8 kW of 100 kW = 91.8 %
    report = check_facility(site(site_it_capacity_kw=100.0), dgx(9), GO_LIVE)
    assert report.by_key("site_power").status == "warn"


def test_high_pue_warns():
    report = check_facility(site(pue=1.8), dgx(1), GO_LIVE)
    assert report.by_key("facility_power").status == "warn"


def test_room_class_warmer_than_server_rating_warns():
    report = check_facility(site(ashrae_class="A3"), dgx(1, server_ashrae_class="A2"), GO_LIVE)
    check = report.by_key("inlet_class")
    assert check.status == "warn"
    assert (check.value, check.limit) == (40.0, 35.0)


# --- Power readiness --------------------------------------------------------------------------


def test_power_not_ready_before_go_live_fails():
    # 10 DGX = 102 kW needed, only 100 kW and no upgrade → never ready
    report = check_facility(site(site_it_capacity_kw=100.0), dgx(10), GO_LIVE)
    assert report.by_key("site_power").status == "fail"
    assert report.by_key("power_ready").status == "fail"
    assert report.power_ready_on is None


def test_power_energised_after_go_live_fails():
    s = site(power_ready_date=date(2027, 4, 1))
    check = check_facility(s, dgx(1), GO_LIVE).by_key("power_ready")
    assert check.status == "fail"
    assert check.value == -31  # 1 March → 1 April 2027 is 31 days late


def test_power_ready_thanks_to_an_upgrade_before_go_live_passes():
    # 100 + 50 kW from 15 January 2027 ≥ 102 kW; slack 15 Jan → 1 Mar = 45 days ≥ 28
    upgrade = PowerUpgrade(date(2027, 1, 15), 50.0, "second transformer")
    report = check_facility(
        site(site_it_capacity_kw=100.0, planned_upgrades=(upgrade,)), dgx(10), GO_LIVE
    )
    assert report.site_capacity_at_go_live_kw == 150.0
    assert report.by_key("site_power").status == "pass"  # 102 / 150 = 68 %
    check = report.by_key("power_ready")
    assert check.status == "pass"
    assert check.value == 45
    assert report.power_ready_on == date(2027, 1, 15)


def test_upgrade_dated_after_go_live_does_not_count():
    upgrade = PowerUpgrade(date(2027, 3, 2), 50.0)
    report = check_facility(
        site(site_it_capacity_kw=100.0, planned_upgrades=(upgrade,)), dgx(10), GO_LIVE
    )
    assert report.by_key("site_power").status == "fail"
    assert report.by_key("power_ready").status == "fail"
    assert report.power_ready_on == date(2027, 3, 2)


def test_power_ready_with_thin_margin_warns():
    # ready 20 Feb, go-live 1 Mar: 9 days of slack < 28
    s = site(power_ready_date=date(2027, 2, 20))
    check = check_facility(s, dgx(1), GO_LIVE).by_key("power_ready")
    assert (check.status, check.value) == ("warn", 9)


# --- Validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", [{"phase": 2}, {"breaker_derating": 1.2}, {"cooling_method": "fans"}, {"pue": 0.9}]
)
def test_site_spec_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        site(**bad)


# --- Rack layout and SVG ----------------------------------------------------------------------


def test_rack_layout_places_devices_without_overlap():
    load = RackLoad("2U node", 1.0, 2, 30, switches_per_rack=2, switch_power_kw=0.4, pdu_ru=1)
    layout = rack_layout(site(cooling_capacity_per_rack_kw=30.0), load)
    # power per rack: ⌊(18.40 − 0.8) / 1.0⌋ = 17; RU: ⌊(42 − 2 − 2) / 2⌋ = 19 → 17 per rack
    assert [sum(d.role == "server" for d in r.devices) for r in layout.racks] == [17, 13]
    for rack in layout.racks:
        used = [u for d in rack.devices for u in range(d.position_u, d.position_u + d.height_u)]
        assert len(used) == len(set(used))
        assert max(used) <= rack.u_height and min(used) >= 1
        top = max(rack.devices, key=lambda d: d.position_u)
        assert top.role == "switch" and top.position_u + top.height_u - 1 == 42
    assert layout.unplaced_servers == 0


def test_rack_layout_reports_servers_that_do_not_fit():
    layout = rack_layout(site(racks_available=3), dgx(5))
    assert len(layout.racks) == 3
    assert layout.unplaced_servers == 2


def test_svg_has_every_label_and_escapes_markup():
    load = RackLoad("<GPU & co>", 5.0, 4, 2, switch_name='Leaf "A"', pdu_name="PDU<0U>")
    svg = rack_elevation_svg(rack_layout(site(), load))
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    for label in ("&lt;GPU &amp; co&gt; #1", "&lt;GPU &amp; co&gt; #2", "Leaf &quot;A&quot; 1"):
        assert label in svg
    assert "PDU&lt;0U&gt; A" in svg and "PDU&lt;0U&gt; B" in svg
    assert "<GPU" not in svg and "PDU<0U>" not in svg
    # rack units numbered 1..42
    assert 'class="unit">1</text>' in svg and 'class="unit">42</text>' in svg


def test_zero_servers_gives_empty_layout():
    layout = rack_layout(site(), dgx(0))
    assert layout.racks == ()
    assert math.isclose(check_facility(site(), dgx(0), GO_LIVE).it_load_kw, 0.0)


# --- Power supplies behind the A/B feeds, rack-scale systems ----------------------------------


def test_dgx_b200_psus_cannot_carry_it_on_one_feed():
    # DGX B200: 14.3 kW max, 6 × 3.3 kW supplies, 5+1 (ref A2). A feed loss leaves 3 supplies,
    # 9.9 kW, against 14.3 kW: the rack feeds (18.40 kW a side) are enough, the server is not.
    load = RackLoad(server_name="DGX B200", server_power_kw=14.3, server_ru=10, server_count=1)
    ab = check_facility(site(cooling_capacity_per_rack_kw=30.0), load, GO_LIVE).by_key(
        "ab_redundancy"
    )
    assert ab.status == "fail"
    assert "keeps 3 of its 6 × 3.3 kW power supplies (9.9 kW)" in ab.reason
    assert "5+1 redundancy needs 5 working" in ab.reason


def test_dgx_h100_psus_a_few_percent_short_warn():
    # DGX H100: 3 of 6 × 3.3 kW = 9.9 kW for 10.2 kW (97 %): it throttles at full load.
    ab = check_facility(site(), dgx(1), GO_LIVE).by_key("ab_redundancy")
    assert ab.status == "warn"
    assert "throttles at full load" in ab.reason


def test_unknown_platform_without_psu_figures_keeps_the_rack_check():
    load = RackLoad(server_name="8x L40S", server_power_kw=5.0, server_ru=4, server_count=2)
    ab = check_facility(site(), load, GO_LIVE).by_key("ab_redundancy")
    assert ab.status == "pass" and "power supplies" not in ab.reason


def test_rack_scale_system_is_one_per_rack_and_needs_a_liquid_rack():
    # GB200 NVL72 estimated at 72 × (1.2 + 0.45) = 118.8 kW, 48U: one per rack by rack units;
    # a 32 A 415 V side (18.4 kW) carries none of it.
    load = RackLoad(server_name="GB200 NVL72", server_power_kw=118.8, server_ru=48, server_count=1)
    cap = rack_capacity(site(), load)
    assert load.is_rack_scale and cap.by_rack_units == 1
    assert cap.by_power == 0
