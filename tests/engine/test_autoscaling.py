"""Autoscaling recommendation (no database)."""

import pytest

from planner.engine.autoscaling import recommend_autoscaling


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
