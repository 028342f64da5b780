"""The second opinion's comparison and the band it leaves (planner/engine/second_opinion.py)."""

import pytest

from planner.engine.second_opinion import (
    THROUGHPUT_DISAGREEMENT_PCT,
    Figures,
    difference_pct,
    second_opinion,
)

PLANNER = Figures(output_tokens_per_s=1000.0, ttft_ms=200.0, tpot_ms=20.0)


def test_a_disagreement_past_the_threshold_widens_the_band_to_reach_the_peer():
    # Peer 1,310 tok/s against 1,000: (1310 − 1000) ÷ 1000 = +31 % > 25 %, so the ±12 % band
    # becomes ±31 %. TTFT (150 − 200) ÷ 200 = −25 %; TPOT (25 − 20) ÷ 20 = +25 %.
    peer = Figures(output_tokens_per_s=1310.0, ttft_ms=150.0, tpot_ms=25.0)

    opinion = second_opinion(PLANNER, peer, band_pct=12.0, peer_name="aiconfigurator")

    assert THROUGHPUT_DISAGREEMENT_PCT == 25.0
    assert opinion.throughput_difference_pct == pytest.approx(31.0)
    assert opinion.ttft_difference_pct == pytest.approx(-25.0)
    assert opinion.tpot_difference_pct == pytest.approx(25.0)
    assert opinion.widened and opinion.band_pct == pytest.approx(31.0)
    assert opinion.planner_band_pct == 12.0
    assert opinion.reason.startswith(
        "aiconfigurator's kernel tables give 31 % more throughput (1,310 against the "
        "planner's 1,000 output tokens/s per replica)"
    )
    assert "widened from ±12 % to ±31 %" in opinion.reason


def test_less_throughput_widens_the_same_way():
    # (700 − 1000) ÷ 1000 = −30 %: the band reaches 30 %.
    opinion = second_opinion(PLANNER, Figures(700.0, 200.0, 20.0), 12.0, "aiconfigurator")

    assert opinion.throughput_difference_pct == pytest.approx(-30.0)
    assert opinion.widened and opinion.band_pct == pytest.approx(30.0)
    assert "30 % less throughput" in opinion.reason


@pytest.mark.parametrize(
    ("peer_tokens_per_s", "band_pct"),
    [(1200.0, 12.0), (1310.0, 40.0)],  # +20 % within 25 %; +31 % within a ±40 % band already
)
def test_the_band_stands_within_the_threshold_or_a_wider_band(peer_tokens_per_s, band_pct):
    opinion = second_opinion(PLANNER, Figures(peer_tokens_per_s, 200.0, 20.0), band_pct, "peer")

    assert not opinion.widened
    assert opinion.band_pct == band_pct
    assert f"the planner's band of ±{band_pct:.0f} % stands" in opinion.reason


def test_a_measured_candidate_keeps_its_band_whatever_the_models_say():
    opinion = second_opinion(PLANNER, Figures(1310.0, 150.0, 25.0), 13.0, "peer", measured=True)

    assert opinion.throughput_difference_pct == pytest.approx(31.0)
    assert not opinion.widened and opinion.band_pct == 13.0
    assert opinion.reason.endswith(
        "sized on a load test, so the measurement's band of ±13 % stands."
    )


def test_difference_needs_a_positive_planner_figure():
    assert difference_pct(90.0, 100.0) == pytest.approx(-10.0)
    with pytest.raises(ValueError, match="positive"):
        difference_pct(1.0, 0.0)
