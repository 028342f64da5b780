"""Placement scoring (seed decision table) with hand-computed scores."""

from __future__ import annotations

import pytest

from planner.engine.errors import EngineInputError
from planner.engine.placement import (
    Location,
    PlacementInputs,
    PlacementOption,
    ResidencyRule,
    score_placement,
    traffic_steadiness,
)

FLAT = (1.0,) * 24
# 12 hours at 1.0 and 12 at 0.5: mean 0.75, std 0.25
HALF = (1.0,) * 12 + (0.5,) * 12
# office-hours spike: 4 h at 1.0, 20 h at 0.1 → mean (4 + 2) / 24 = 0.25
SPIKY = (0.1,) * 9 + (1.0,) * 4 + (0.1,) * 11

DE = Location("DE", "EU")
FR = Location("FR", "EU")
US = Location("US", "")


def options(**cost) -> tuple[PlacementOption, ...]:
    return (
        PlacementOption("aws", "public_cloud", "AWS us-east-1", (US,), 90.0, cost.get("aws")),
        PlacementOption("colo", "colocation", "Paris colo", (FR,), 20.0, cost.get("colo")),
        PlacementOption("own", "owned_dc", "Frankfurt DC", (DE,), 10.0, cost.get("own")),
        PlacementOption("hyb", "hybrid", "Frankfurt + AWS", (DE, US), 90.0, cost.get("hyb")),
        PlacementOption("edge", "edge", "On-prem edge", (DE,), 2.0, cost.get("edge")),
    )


def test_steadiness_of_a_flat_profile():
    t = traffic_steadiness(FLAT)
    assert (t.mean_to_peak, t.coefficient_of_variation, t.steadiness) == (1.0, 0.0, 1.0)


def test_steadiness_by_hand():
    t = traffic_steadiness(HALF)
    # mean/peak = 0.75; CV = 0.25 / 0.75 = 0.3333; steadiness = (0.75 − 0.40) / 0.45 = 0.7778
    assert t.mean_to_peak == pytest.approx(0.75)
    assert t.coefficient_of_variation == pytest.approx(1 / 3)
    assert t.steadiness == pytest.approx(0.35 / 0.45)
    assert t.base_to_peak == 0.5
    assert t.peak_hour == 0


@pytest.mark.parametrize("bad", [(1.0,) * 23, (0.0,) * 24, (-1.0,) + (1.0,) * 23])
def test_steadiness_rejects_bad_profiles(bad):
    with pytest.raises(ValueError):
        traffic_steadiness(bad)


def test_residency_violation_makes_options_ineligible_with_reason():
    rule = ResidencyRule("patient-chat", allowed_regions=frozenset({"EU"}))
    result = score_placement(
        PlacementInputs(options(), FLAT, residency_rules=(rule,), control_requirement=0)
    )
    aws, hyb = result.by_key("aws"), result.by_key("hyb")
    assert not aws.eligible and not hyb.eligible
    assert "patient-chat" in aws.ineligible_reasons[0]
    assert "US" in aws.ineligible_reasons[0]
    assert aws.score("residency") == 0.0
    assert result.by_key("colo").eligible and result.by_key("own").eligible
    # ineligible options rank after every eligible one
    ranks = {o.key: o.rank for o in result.options}
    assert max(ranks[k] for k in ("colo", "own", "edge")) < min(ranks["aws"], ranks["hyb"])
    assert result.best is not None and result.best.eligible


def test_residency_by_country_list():
    rule = ResidencyRule("hr", allowed_countries=frozenset({"de"}))
    result = score_placement(PlacementInputs(options(), FLAT, residency_rules=(rule,)))
    assert not result.by_key("colo").eligible  # FR is in the EU but not DE
    assert result.by_key("own").eligible


def test_no_rules_means_everyone_eligible():
    result = score_placement(PlacementInputs(options(), FLAT))
    assert all(o.eligible for o in result.options)


def test_steady_traffic_favours_owned_and_bursty_favours_cloud():
    steady = score_placement(PlacementInputs(options(), FLAT))
    # steadiness 1: owned 5 × 1 = 5; cloud 5 − 3 × 1 = 2; hybrid 2 + 3 × (1 − 1) = 2
    assert steady.by_key("own").score("steadiness") == 5.0
    assert steady.by_key("aws").score("steadiness") == 2.0
    assert steady.by_key("hyb").score("steadiness") == 2.0
    bursty = score_placement(PlacementInputs(options(), SPIKY))
    # mean/peak 0.25 < 0.40 → steadiness 0: owned 0, cloud 5
    assert bursty.by_key("own").score("steadiness") == 0.0
    assert bursty.by_key("aws").score("steadiness") == 5.0


def test_latency_score_and_flag_when_round_trip_breaks_budget():
    result = score_placement(PlacementInputs(options(), FLAT, rtt_budget_ms=80.0))
    # own: 5 × (1 − 10/80) = 4.375; aws 90 ms > 80 ms → 0 and flagged
    assert result.by_key("own").score("latency") == pytest.approx(4.375)
    aws = result.by_key("aws")
    assert aws.score("latency") == 0.0
    assert "exceeds" in aws.flags[0]


def test_cost_relative_to_cheapest_and_missing_cost_left_out():
    result = score_placement(PlacementInputs(options(aws=4.0, own=2.0), FLAT, cost_currency="EUR"))
    assert result.by_key("own").score("cost") == 5.0
    assert result.by_key("aws").score("cost") == 2.5  # 5 × 2 / 4
    colo = result.by_key("colo")
    assert colo.score("cost") is None and "cost" in colo.missing
    # The reason names the costs' currency (the TCO run's), never a USD it does not hold.
    why = next(c.explanation for c in result.by_key("aws").criteria if c.criterion == "cost")
    assert why == "4.00 EUR per million tokens against 2.00 for the cheapest option."


def test_costs_without_their_currency_are_refused():
    with pytest.raises(EngineInputError, match="cost_currency"):
        score_placement(PlacementInputs(options(aws=4.0), FLAT))


def test_weighted_total_by_hand():
    # own, flat profile, budget 200 ms, control requirement 3, no cost:
    # residency 5, steadiness 5, latency 5 × (1 − 10/200) = 4.75, control 5 (level 5 ≥ 3)
    # equal weights over 4 scored criteria: (5 + 5 + 4.75 + 5) / 4 = 4.9375
    result = score_placement(PlacementInputs(options(), FLAT))
    assert result.by_key("own").weighted_total == pytest.approx(4.9375)


def test_control_shortfall_lowers_score():
    result = score_placement(PlacementInputs(options(), FLAT, control_requirement=5))
    # cloud default level 2: 5 − 2 × (5 − 2) = −1 → 0
    assert result.by_key("aws").score("control") == 0.0
    assert result.by_key("colo").score("control") == 3.0  # level 4: 5 − 2 × 1


def test_weights_change_the_ranking():
    base = PlacementInputs(
        options(aws=1.0, own=10.0), SPIKY, control_requirement=0, cost_currency="USD"
    )
    cost_heavy = score_placement(
        PlacementInputs(**{**_fields(base), "weights": {"cost": 10.0, "latency": 0.0}})
    )
    latency_heavy = score_placement(
        PlacementInputs(**{**_fields(base), "weights": {"latency": 10.0, "cost": 0.0}})
    )
    assert cost_heavy.by_key("aws").rank < cost_heavy.by_key("own").rank
    assert latency_heavy.by_key("own").rank < latency_heavy.by_key("aws").rank


def test_unknown_weight_is_rejected():
    with pytest.raises(ValueError):
        score_placement(PlacementInputs(options(), FLAT, weights={"vibes": 1.0}))


def test_every_option_carries_the_seed_table_text():
    result = score_placement(PlacementInputs(options(), FLAT))
    assert "Steady base load" in result.by_key("hyb").fits_when
    assert "largest line" in result.by_key("aws").watch_out


def _fields(inputs: PlacementInputs) -> dict:
    return {name: getattr(inputs, name) for name in PlacementInputs.__dataclass_fields__}


def test_each_user_region_is_served_from_its_nearest_allowed_cloud_region():
    from planner.engine.network import REGIONS, haversine_km, rtt_ms
    from planner.engine.placement import cloud_region_per_user_region

    coords = {k: (r.lat, r.lon) for k, r in REGIONS.items()}
    served = cloud_region_per_user_region(
        ["eu-west", "us-west"], coords, ["eu-central", "us-east", "ca-central"]
    )
    # Dublin users → Frankfurt; The Dalles users → Ashburn (nearer than Montréal):
    # not one region for both.
    assert [(a.user_region, a.cloud_region) for a in served] == [
        ("eu-west", "eu-central"),
        ("us-west", "us-east"),
    ]
    dublin_frankfurt = rtt_ms(haversine_km(53.35, -6.26, 50.11, 8.68))
    assert served[0].rtt_ms == pytest.approx(dublin_frankfurt)
    with pytest.raises(EngineInputError):
        cloud_region_per_user_region(["eu-west"], coords, [])


def test_edge_is_only_for_models_that_fit_edge_hardware():
    # Edge wins on latency when nothing is known about the model (spiky traffic, cheap edge).
    base = PlacementInputs(
        options(edge=1.0, aws=2.0), SPIKY, rtt_budget_ms=20.0, cost_currency="USD"
    )
    assert score_placement(base).best.key == "edge"
    # A 70B FP8 model (70 GB of weights) on 41 GPUs: edge hardware cannot hold it.
    big = PlacementInputs(
        options(edge=1.0, aws=2.0),
        SPIKY,
        rtt_budget_ms=20.0,
        cost_currency="USD",
        model_weights_gb=70.6,
        accelerators_per_replica=1,
    )
    result = score_placement(big)
    edge = result.by_key("edge")
    assert not edge.eligible and "70.6" not in edge.ineligible_reasons[0]
    assert "71 GB" in edge.ineligible_reasons[0] and "48 GB" in edge.ineligible_reasons[0]
    assert result.best.key != "edge" and edge.rank == len(result.options)
    # A replica wider than an edge server is refused too; a small model stays eligible.
    wide = score_placement(
        PlacementInputs(options(), SPIKY, model_weights_gb=16.0, accelerators_per_replica=4)
    )
    assert not wide.by_key("edge").eligible
    assert "4 accelerators" in wide.by_key("edge").ineligible_reasons[0]
    small = score_placement(
        PlacementInputs(options(), SPIKY, model_weights_gb=16.0, accelerators_per_replica=1)
    )
    assert small.by_key("edge").eligible
