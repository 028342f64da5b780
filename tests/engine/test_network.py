"""Great-circle distance and RTT (no database)."""

import pytest

from planner.engine.network import REGIONS, flag_regions, haversine_km, rtt_ms


def test_london_new_york_about_5570_km():
    # London (51.5074 N, 0.1278 W) to New York (40.7128 N, 74.0060 W): about 5,570 km.
    assert haversine_km(51.5074, -0.1278, 40.7128, -74.0060) == pytest.approx(5570, abs=15)


def test_rtt_formula():
    # 2 × 5,570 km × 1.5 / 200 km/ms + 5 ms = 88.55 ms.
    assert rtt_ms(5570) == pytest.approx(88.55)
    assert rtt_ms(1000, route_factor=1.0, overhead_ms=0.0) == pytest.approx(10.0)


def test_regions_name_their_city():
    assert REGIONS["eu-west"].city == "Dublin"
    assert REGIONS["eu-central"].city == "Frankfurt"
    assert REGIONS["ap-southeast"].city == "Singapore"


def test_far_region_breaks_ttft():
    # Site in Frankfurt, TTFT target 150 ms: Dublin (~1,090 km, RTT ~21 ms) is fine,
    # Sydney (~16,500 km, RTT ~250 ms) breaks the target on the round trip alone.
    frankfurt = REGIONS["eu-central"]
    rows = flag_regions(frankfurt.lat, frankfurt.lon, {"eu-west": 0.7, "ap-southeast-2": 0.3}, 150)
    dublin, sydney = rows
    assert not dublin.breaks_ttft and dublin.rtt_ms < 30
    assert sydney.breaks_ttft and sydney.rtt_ms > 200
    assert "breaks the 150 ms TTFT target" in sydney.note
