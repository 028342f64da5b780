"""Autoscaling recommendation (no database)."""

import pytest

from planner.engine.autoscaling import cold_start, recommend_autoscaling
from planner.engine.demand import PeakLoad, replicas_by_hour
from planner.engine.errors import EngineInputError


def _load(peak_concurrency, batch, *, headroom_pct=10.0, n_plus_one=True):
    return PeakLoad(
        peak_concurrency=peak_concurrency, peak_requests_per_s=None, tensor_parallel=1,
        accelerators_per_server=8, batch_per_replica=batch, requests_per_s_per_replica=10.0,
        headroom_pct=headroom_pct, n_plus_one=n_plus_one,
    )  # fmt: skip


def test_signals_thresholds_and_bounds():
    # A replica holds 200 sequences and serves 160 within target. Night hours carry a quarter
    # of the 1,200 peak: 300 / 160 / 0.9 = 2.08 -> 3 (+1 spare) = 4 replicas; the peak hour
    # 1,200 / 160 / 0.9 = 8.33 -> 9 (+1 spare) = 10 replicas.
    profile = [0.25] * 12 + [1.0] * 12
    rec = recommend_autoscaling(
        load=_load(1200, 160), daily_profile=profile, max_concurrency_per_replica=200
    )
    assert rec.primary_signal == "vllm:kv_cache_usage_perc"
    assert rec.secondary_signal == "vllm:num_requests_waiting"
    assert (rec.min_replicas, rec.max_replicas) == (4, 10)
    assert rec.replicas_by_hour == (4,) * 12 + (10,) * 12
    assert rec.saturation_kv_usage == 0.8 and rec.saturation_queue_depth == 5
    assert rec.scale_up_kv_usage == pytest.approx(0.70)
    assert rec.scale_up_queue_depth == 2
    # 1,200 / (10 × 200) = 0.6 mean KV usage at peak, below the scale-up threshold;
    # 300 / (4 × 200) = 0.375 in the quietest hour.
    assert rec.expected_kv_usage_at_peak == pytest.approx(0.6)
    assert rec.expected_kv_usage_at_quietest == pytest.approx(0.375)
    assert any("GPU utilisation is not the signal" in line for line in rec.rationale)
    assert any("80-95 %" in line for line in rec.rationale)
    assert "Bounds: 4 replicas in the quietest hour, 10 replicas in the peak hour" in " ".join(
        rec.rationale
    )


def test_bounds_are_the_hourly_chart_min_and_max():
    # The issue: "between 3 and 5 replicas" beside a chart showing 2 at night. The bounds are
    # now taken from the very hours the chart draws, whatever the profile's shape.
    load = _load(500, 40, headroom_pct=20)
    profile = [0.05, 0.1, 0.1, 0.2, 0.4, 0.7, 1.0, 0.9] * 3
    rec = recommend_autoscaling(load=load, daily_profile=profile, max_concurrency_per_replica=64)
    assert rec.replicas_by_hour == replicas_by_hour(load, profile)
    assert (rec.min_replicas, rec.max_replicas) == (min(rec.replicas_by_hour),
                                                    max(rec.replicas_by_hour))  # fmt: skip
    # 25 / 40 / 0.8 = 0.78 -> 1 (+1) = 2 at night; 500 / 40 / 0.8 = 15.6 -> 16 (+1) = 17.
    assert (rec.min_replicas, rec.max_replicas) == (2, 17)


def test_latency_bound_batch_lowers_capacity():
    rec = recommend_autoscaling(
        load=_load(100, 50, headroom_pct=0, n_plus_one=False),
        daily_profile=[1.0] * 24,
        max_concurrency_per_replica=200,
    )
    assert rec.min_replicas == rec.max_replicas == 2


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        recommend_autoscaling(load=_load(2, 1), daily_profile=[1.0], max_concurrency_per_replica=0)
    with pytest.raises(EngineInputError):
        recommend_autoscaling(
            load=_load(2, 1), daily_profile=[0.0] * 24, max_concurrency_per_replica=4
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
    rec = recommend_autoscaling(load=_load(100, 32, headroom_pct=20), daily_profile=[1.0] * 24,
                                max_concurrency_per_replica=40, start=slow)  # fmt: skip
    text = " ".join(rec.rationale)
    assert "A new replica serves after 8300 s (800 GB of weights at 0.1 GB/s = 8000 s" in text
    assert "the 20 % headroom does not: raise it to at least 231 %" in text
    quick = cold_start(weights_gb=16, read_gb_per_s=8, engine_start_s=30,
                       daily_profile=[0.5] * 12 + [1.0] * 12)  # fmt: skip
    rec = recommend_autoscaling(load=_load(100, 32, headroom_pct=20), daily_profile=[1.0] * 24,
                                max_concurrency_per_replica=40, start=quick)  # fmt: skip
    assert rec.cold_start is quick
    assert "the 20 % headroom absorbs it." in " ".join(rec.rationale)


def test_cold_start_refuses_nonsense():
    with pytest.raises(EngineInputError):
        cold_start(weights_gb=10, read_gb_per_s=0, engine_start_s=0, daily_profile=[1.0])
    with pytest.raises(EngineInputError):
        cold_start(weights_gb=10, read_gb_per_s=1, engine_start_s=0, daily_profile=[0.0])


def test_hours_without_load_scale_to_zero_and_say_what_that_takes():
    # A nightly batch: load 01:00-05:00 only; the other hours need no replica.
    profile = [0.0] + [1.0] * 4 + [0.0] * 19
    rec = recommend_autoscaling(
        load=_load(30, 40, n_plus_one=False), daily_profile=profile, max_concurrency_per_replica=64
    )
    assert (rec.min_replicas, rec.max_replicas) == (0, 1)
    assert rec.expected_kv_usage_at_quietest == 0
    assert any("scaling to zero takes an autoscaler that supports it" in r for r in rec.rationale)
    flat = recommend_autoscaling(
        load=_load(30, 40), daily_profile=[1.0] * 24, max_concurrency_per_replica=64
    )
    assert not any("scaling to zero" in r for r in flat.rationale)
