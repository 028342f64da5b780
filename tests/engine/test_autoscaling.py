"""Autoscaling recommendation (no database)."""

import pytest

from planner.engine.autoscaling import cold_start, recommend_autoscaling
from planner.engine.errors import EngineInputError


def test_signals_thresholds_and_bounds():
    # Replica holds 200 sequences; saturated at 0.8 -> 160 per replica.
    # Average 300 in flight -> ceil(300/160) = 2 (+1 spare) = 3 replicas.
    # Peak 1,200 with 10 % headroom: 1,200 / 144 = 8.33 -> 9 (+1 spare) = 10 replicas.
    rec = recommend_autoscaling(
        average_concurrency=300, peak_concurrency=1200, max_concurrency_per_replica=200
    )
    assert rec.primary_signal == "vllm:kv_cache_usage_perc"
    assert rec.secondary_signal == "vllm:num_requests_waiting"
    assert (rec.min_replicas, rec.max_replicas) == (3, 10)
    assert rec.saturation_kv_usage == 0.8 and rec.saturation_queue_depth == 5
    assert rec.scale_up_kv_usage == pytest.approx(0.70)
    assert rec.scale_up_queue_depth == 2
    # 1,200 / (10 × 200) = 0.6 mean KV usage at peak, below the scale-up threshold.
    assert rec.expected_kv_usage_at_peak == pytest.approx(0.6)
    assert any("GPU utilisation is not the signal" in line for line in rec.rationale)
    assert any("80-95 %" in line for line in rec.rationale)


def test_latency_bound_batch_lowers_capacity():
    rec = recommend_autoscaling(
        average_concurrency=100,
        peak_concurrency=100,
        max_concurrency_per_replica=200,
        target_batch_per_replica=50,
        headroom_pct=0,
        n_plus_one=False,
    )
    assert rec.min_replicas == rec.max_replicas == 2


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        recommend_autoscaling(
            average_concurrency=1, peak_concurrency=2, max_concurrency_per_replica=0
        )


# --- Cold start ------------------------------------------------------------------------------


def test_cold_start_by_hand():
    # 140 GB of weights at 2 GB/s = 70 s, + 60 s engine start = 130 s. The profile rises
    # from 0.45 to 0.9 of its peak (1.0) in one hour: +45 % of the peak an hour, so during
    # 130 s the load grows 0.45 × 130 / 3600 = 1.625 % of the peak.
    profile = [0.2] * 6 + [0.45, 0.9] + [1.0] * 10 + [0.5] * 6
    start = cold_start(weights_gb=140, read_gb_per_s=2, engine_start_s=60, daily_profile=profile)
    assert start.load_s == pytest.approx(70)
    assert start.total_s == pytest.approx(130)
    assert start.steepest_rise_per_h == pytest.approx(0.45)
    assert start.spike_headroom_pct == pytest.approx(1.625)


def test_the_day_wraps_and_a_flat_day_needs_no_spike_headroom():
    # The steepest rise is from 23:00 (0.1) to 00:00 (1.0).
    start = cold_start(weights_gb=10, read_gb_per_s=1, engine_start_s=0,
                       daily_profile=[1.0] + [0.5] * 22 + [0.1])  # fmt: skip
    assert start.steepest_rise_per_h == pytest.approx(0.9)
    flat = cold_start(weights_gb=10, read_gb_per_s=1, engine_start_s=0, daily_profile=[0.3] * 24)
    assert flat.spike_headroom_pct == 0


def test_the_recommendation_says_how_far_ahead_and_whether_headroom_absorbs_the_ramp():
    slow = cold_start(weights_gb=800, read_gb_per_s=0.1, engine_start_s=300,
                      daily_profile=[0.0] * 12 + [1.0] * 12)  # fmt: skip
    # 8,000 s load + 300 s = 8,300 s; a jump from 0 to the peak in an hour → 230.6 %.
    rec = recommend_autoscaling(average_concurrency=50, peak_concurrency=100,
                                max_concurrency_per_replica=40, headroom_pct=20, start=slow)  # fmt: skip
    text = " ".join(rec.rationale)
    assert "A new replica serves after 8300 s (800 GB of weights at 0.1 GB/s = 8000 s" in text
    assert "the 20 % headroom does not: raise it to at least 231 %" in text
    quick = cold_start(weights_gb=16, read_gb_per_s=8, engine_start_s=30,
                       daily_profile=[0.5] * 12 + [1.0] * 12)  # fmt: skip
    rec = recommend_autoscaling(average_concurrency=50, peak_concurrency=100,
                                max_concurrency_per_replica=40, headroom_pct=20, start=quick)  # fmt: skip
    assert rec.cold_start is quick
    assert "the 20 % headroom absorbs it." in " ".join(rec.rationale)


def test_cold_start_refuses_nonsense():
    with pytest.raises(EngineInputError):
        cold_start(weights_gb=10, read_gb_per_s=0, engine_start_s=0, daily_profile=[1.0])
    with pytest.raises(EngineInputError):
        cold_start(weights_gb=10, read_gb_per_s=1, engine_start_s=0, daily_profile=[0.0])
