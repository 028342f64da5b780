"""Performance formulas checked by hand (no database)."""

import math
from pathlib import Path

import numpy as np
import pytest

from planner.engine.performance import (
    Calibration,
    EfficiencyFactors,
    allreduce_time_ms,
    erlang_c,
    expected_distinct_experts,
    latency_under_load,
    percentile_wait_factor,
    replica_shape,
    steady_state,
    step_time_ms,
    tpot_tail_factor,
    unloaded_latency,
)
from planner.engine.specs import load_accelerators_csv, load_models_csv

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
# Simple factors so the arithmetic below stays readable.
PLAIN = Calibration(
    global_factors=EfficiencyFactors(0.8, 0.5),
    step_overhead_us_per_layer=0.0,
    step_overhead_ms=0.0,
    allreduce_base_us=5.0,
    allreduce_hop_us=1.0,
    link_bw_fraction=1.0,
)


def test_mixtral_expected_distinct_experts():
    # E = 8, k = 2: one token touches 2; two tokens 8·(1 − 0.75²) = 3.5; 32 tokens
    # 8·(1 − 0.75³²) = 7.9992, i.e. all experts are read for any real batch.
    assert expected_distinct_experts(8, 2, 1) == pytest.approx(2.0)
    assert expected_distinct_experts(8, 2, 2) == pytest.approx(3.5)
    assert expected_distinct_experts(8, 2, 32) == pytest.approx(7.9992, abs=1e-4)
    assert expected_distinct_experts(0, 0, 10) == 0


def test_allreduce_ring_with_latency_floor():
    # TP 8, 1 MB message, 450 GB/s: 2·7/8·1e6 / 450e9 = 3.889 µs on the wire,
    # plus α = 5 + 2·7·1 = 19 µs -> 22.889 µs.
    t = allreduce_time_ms(1e6, 8, 450e9, PLAIN)
    assert t == pytest.approx((19 + 3.8889) * 1e-3, rel=1e-4)
    assert allreduce_time_ms(1e6, 1, 450e9, PLAIN) == 0


def test_decode_step_at_batch_one_is_weight_read():
    # Llama-3.1-8B bf16 on one H100: 16.06e9 bytes of weights / (3.35e12 × 0.8) = 5.99 ms;
    # KV of one 1,000-token sequence adds 131 MB / 2.68e12 = 0.049 ms; compute is far less.
    model = MODELS["llama-3.1-8b"]
    shape = replica_shape(model, ACCELERATORS["h100-sxm"], "bf16", 1, PLAIN)
    t = float(step_time_ms(shape, 1.0, 0.0, 1000.0)[()])
    weights_ms = shape.dense_weight_bytes / (3.35e12 * 0.8) * 1e3
    kv_ms = 1000 * 131_072 / (3.35e12 * 0.8) * 1e3
    assert t == pytest.approx(weights_ms + kv_ms, rel=1e-6)
    assert t == pytest.approx(6.04, abs=0.02)


def test_prefill_is_compute_bound():
    # 2,000 prompt tokens of Llama-3.1-8B: 2 × 7.50e9 matmul params × 2,000 = 30.0 TFLOP,
    # at 989 TFLOP/s × 0.5 about 61 ms, far above the 6 ms weight read.
    shape = replica_shape(MODELS["llama-3.1-8b"], ACCELERATORS["h100-sxm"], "bf16", 1, PLAIN)
    t = float(step_time_ms(shape, 0.0, 2000.0, 0.0, 2000.0)[()])
    assert 60 < t < 70


def test_steady_state_trades_latency_for_throughput():
    shape = replica_shape(MODELS["llama-3.1-70b"], ACCELERATORS["h100-sxm"], "fp8", 2, PLAIN)
    state = steady_state(shape, np.array([1.0, 16.0, 128.0]), 1000, 200)
    assert np.all(np.diff(state.tpot_ms) > 0)
    assert np.all(np.diff(state.output_tokens_per_s) > 0)
    # Little's law: requests/s = B / (TTFT + out·TPOT).
    assert state.requests_per_s[2] == pytest.approx(128 / state.slot_time_s[2])


def test_erlang_c_known_values():
    # M/M/1: P(wait) = ρ. M/M/2 with a = 1: C = 1/3.
    assert erlang_c(1, 0.5) == pytest.approx(0.5)
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)
    assert erlang_c(4, 5.0) == 1.0


def test_percentile_factors():
    # Exponential waiting: p99 = mean · ln(100) = 4.605 · mean; p95 = ln(20) = 2.996.
    assert percentile_wait_factor(99) == pytest.approx(math.log(100))
    assert percentile_wait_factor(95) == pytest.approx(math.log(20))
    cal = Calibration(tpot_p99_over_mean=1.2)
    assert tpot_tail_factor(99, cal) == pytest.approx(1.2)
    assert tpot_tail_factor(95, cal) == pytest.approx(1 + 0.2 * math.log(20) / math.log(100))


def test_latency_rises_toward_capacity():
    shape = replica_shape(MODELS["llama-3.1-8b"], ACCELERATORS["h100-sxm"], "fp8", 1, PLAIN)
    idle = unloaded_latency(shape, 500, 200)
    light = latency_under_load(shape, 500, 200, 1.0, 256)
    heavy = latency_under_load(shape, 500, 200, 30.0, 256)
    assert light.ttft_mean_ms >= idle.ttft_ms * 0.99
    assert heavy.batch > light.batch
    assert heavy.ttft_p99_ms > light.ttft_p99_ms
    assert heavy.tpot_mean_ms > light.tpot_mean_ms
    # Little's law holds at the fixed point: B = λ · (TTFT + out · TPOT).
    state = steady_state(shape, heavy.batch, 500, 200)
    assert heavy.batch == pytest.approx(30.0 * float(state.slot_time_s[0]), rel=1e-2)
    overload = latency_under_load(shape, 500, 200, 1e5, 256)
    # Past capacity: the saturation point (a full batch of 256), finite, its TTFT above the
    # heavy load's and the served rate the full batch's B / S(B).
    full = steady_state(shape, 256.0, 500, 200)
    assert overload.saturated and overload.batch == 256.0
    assert heavy.ttft_mean_ms < overload.ttft_mean_ms < math.inf
    assert overload.served_requests_per_s == pytest.approx(float(full.requests_per_s[0]))


def test_group_factors_and_provenance():
    cal = Calibration(
        group_factors={"hopper/fp8": EfficiencyFactors(0.9, 0.4)},
        group_runs={"hopper/fp8": 12},
        group_error_pct={"hopper/fp8": 8.5},
        global_error_pct=20.0,
    )
    hopper = cal.factors_for("hopper", "fp8")
    assert hopper.provenance == "calibrated on 12 reference runs of hopper/fp8"
    assert hopper.expected_error_pct == 8.5
    sibling = cal.factors_for("hopper", "bf16")
    assert "bf16 not measured" in sibling.provenance
    assert cal.factors_for("tpu", "bf16").provenance == "roofline only, global factors"


def test_older_software_reaches_less_of_the_peak_and_estimates_assume_the_newest():
    import dataclasses

    # Software-generation factor exp(rate × years): with rate 0.2/year, a run published one
    # year before the family's newest runs has η_m and η_c × e^−0.2 = 0.8187. A memory-bound
    # decode step (batch 1, no overheads) is then 1/0.8187 = 1.2214 × longer; estimates use
    # years = 0, the newest stack.
    cal = Calibration(
        global_factors=EfficiencyFactors(0.8, 0.5),
        step_overhead_us_per_layer=0.0,
        step_overhead_ms=0.0,
        software_gain_per_year={"hopper": 0.2},
        software_dates={"hopper": "2025-04-02"},
    )
    shape = replica_shape(MODELS["llama-3.1-8b"], ACCELERATORS["h100-sxm"], "fp8", 1, cal)
    older = dataclasses.replace(shape, software_years=-1.0)
    now = float(step_time_ms(shape, 1.0, 0.0, 100.0)[()])
    then = float(step_time_ms(older, 1.0, 0.0, 100.0)[()])
    assert then / now == pytest.approx(math.exp(0.2), rel=1e-9)
    assert shape.software_years == 0.0
