"""Mixed server kinds in one site are checked as they are, not as the most demanding kind."""

from datetime import date

import pytest

from planner.engine import facility as fe

SITE = fe.SiteSpec(
    name="FRA",
    racks_available=4,
    site_it_capacity_kw=40.0,
    voltage_v=415.0,
    phase=3,
    amperage_a=32.0,
    planned_upgrades=(fe.PowerUpgrade(date(2027, 3, 1), 20.0),),
)
DGX = fe.RackLoad("DGX B200", 14.3, 10, 2)
SMALL = fe.RackLoad("4-GPU server", 5.6, 4, 3)


def test_two_kinds_are_laid_out_in_their_own_racks_and_summed():
    report = fe.check_site(SITE, [DGX, SMALL], date(2027, 6, 1))
    # One feed: √3 × 415 V × 32 A × 0.8 = 18.40 kW. DGX: floor(18.40 / 14.3) = 1 per rack → 2
    # racks; 4-GPU: floor(18.40 / 5.6) = 3 per rack → 1 rack. 3 racks, not 5 as the envelope.
    assert report.racks_needed == 3
    # IT load 2 × 14.3 + 3 × 5.6 = 45.4 kW (the envelope would say 5 × 14.3 = 71.5 kW).
    assert report.it_load_kw == pytest.approx(45.4)
    assert report.by_key("rack_count").value == 3
    # 45.4 kW > 40 kW base: the 20 kW upgrade of 2027-03-01 carries it.
    assert report.power_ready_on == date(2027, 3, 1)
    assert report.by_key("site_power").limit == pytest.approx(60.0)
    # The fullest rack is a 4-GPU rack at 3 × 5.6 = 16.8 kW (a DGX rack draws 14.3 kW); the
    # per-rack checks report it and name the kind.
    assert report.rack_load_kw == pytest.approx(16.8)
    # A/B: the 4-GPU rack only warns (16.8 of 18.4 kW per feed), but a DGX B200 on one feed
    # keeps 3 of its 6 power supplies (9.9 kW < 14.3 kW): the worst status is reported, named.
    ab = report.by_key("ab_redundancy")
    assert ab.status == "fail" and ab.value == pytest.approx(14.3)
    assert ab.reason.startswith("DGX B200 racks:")
    keys = [c.key for c in report.checks]
    assert keys == [c.key for c in fe.check_facility(SITE, DGX, date(2027, 6, 1)).checks]


def test_one_kind_is_the_single_kind_report():
    one = fe.check_site(SITE, [DGX], date(2027, 6, 1))
    assert one == fe.check_facility(SITE, DGX, date(2027, 6, 1))


def test_power_ready_on_follows_the_summed_load():
    # Only 30 kW base and no upgrades: 45.4 kW never fits, while each kind alone would.
    site = fe.SiteSpec(name="x", racks_available=10, site_it_capacity_kw=30.0)
    report = fe.check_site(site, [DGX, SMALL], date(2027, 6, 1))
    assert fe.check_facility(site, DGX, date(2027, 6, 1)).by_key("power_ready").status == "pass"
    assert report.by_key("power_ready").status == "fail"
