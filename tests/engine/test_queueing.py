"""The scheduler's queues: FCFS prefill budget, KV admission, and latency at a request rate
up to and past capacity, checked against queueing results worked by hand."""

import math
from pathlib import Path

import numpy as np
import pytest

from planner.engine.calibration import load_calibration
from planner.engine.performance import (
    admission_wait_ms,
    exponential_tail_quantile,
    first_token_ms,
    latency_under_load,
    prefill_queue_wait_ms,
    replica_shape,
    scheduler_token_budget,
    steady_state,
)
from planner.engine.specs import load_accelerators_csv, load_models_csv

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
CAL = load_calibration()
H100 = ACCELERATORS["h100-sxm"]
SHAPE = replica_shape(MODELS["llama-3.1-8b"], H100, "fp8", 1, CAL)


def test_prefill_queue_is_pollaczek_khinchine():
    # M/M/1 (exponential prompts, c² = 1) at ρ = 0.5, S = 100 ms: Wq = ρ/(1 − ρ)·S = 100 ms.
    assert float(prefill_queue_wait_ms(0.5, 100.0, 1.0, None)) == pytest.approx(100.0)
    # M/D/1 (fixed prompts): half of it, ρ·S / (2(1 − ρ)) = 50 ms.
    assert float(prefill_queue_wait_ms(0.5, 100.0, 0.0, None)) == pytest.approx(50.0)
    # p99 of the M/M/1 wait: P(W > t) = ρ·exp(−(1 − ρ)t/S) = 0.01 -> t = 200·ln 50 = 782.4 ms.
    assert float(prefill_queue_wait_ms(0.5, 100.0, 1.0, 99.0)) == pytest.approx(
        200.0 * math.log(50.0)
    )
    # Half the arrivals do not wait at ρ = 0.5, so the median wait is 0.
    assert float(prefill_queue_wait_ms(0.5, 100.0, 1.0, 50.0)) == 0.0
    # Past the cap (ρ ≥ 0.95) the wait stays that of ρ = 0.95: 19 × S for M/M/1.
    assert float(prefill_queue_wait_ms(1.5, 10.0, 1.0, None)) == pytest.approx(190.0)


def test_exponential_tail_quantile_by_hand():
    # P(wait) = 0.2, those who wait average 150 ms: mean 0.2 × 150 = 30 ms; p95: 150·ln(0.2/0.05)
    # = 207.9 ms; the median is 0 (80 % do not wait).
    assert float(exponential_tail_quantile(0.2, 150.0, 95.0)) == pytest.approx(150 * math.log(4))
    assert float(exponential_tail_quantile(0.2, 150.0, 50.0)) == 0.0
    assert float(exponential_tail_quantile(0.2, 150.0, None)) == pytest.approx(30.0)


def test_admission_wait_is_erlang_c_scaled_by_allen_cunneen():
    # One slot (M/M/1), a = 0.5 busy, slot held 0.1 s: Wq = ρ/(μ − λ) = 0.5 / (10 − 5) = 100 ms.
    assert float(admission_wait_ms(1.0, 0.5, 0.1, 1.0, None)) == pytest.approx(100.0)
    # Two slots, a = 1 Erlang: Erlang C = 1/3, Wq = C·S/(c − a) = 1/3 × 100 ms / 1 = 33.3 ms;
    # fixed holding times (c_s² = 0) halve it (Allen–Cunneen, M/D/2 ≈ M/M/2 / 2).
    assert float(admission_wait_ms(2.0, 1.0, 0.1, 1.0, None)) == pytest.approx(100.0 / 3.0)
    assert float(admission_wait_ms(2.0, 1.0, 0.1, 0.0, None)) == pytest.approx(50.0 / 3.0)
    assert float(admission_wait_ms(2.0, 2.0, 0.1, 1.0, None)) == math.inf


def test_stack_token_budgets():
    assert scheduler_token_budget(H100, "vllm") == 8192
    assert scheduler_token_budget(ACCELERATORS["a100-80gb-sxm"], "vllm") == 2048
    assert scheduler_token_budget(ACCELERATORS["l4"], "sglang") == 2048
    assert scheduler_token_budget(ACCELERATORS["l4"], "trtllm") == 8192


def test_a_prompt_longer_than_the_budget_takes_a_step_per_chunk():
    # 20,000-token prompts at batch 1 with an 8,192-token budget: the first step carries 8,191
    # prompt tokens beside the one decode token and ~1.44 more budget-full steps follow.
    state = steady_state(SHAPE, 1.0, 20_000, 200)
    chunked = float(first_token_ms(SHAPE, state, 20_000, 200, 8192, False, None)[0])
    whole = float(first_token_ms(SHAPE, state, 20_000, 200, None, False, None)[0])
    assert chunked > whole  # each chunk re-reads the weights and pays the step overhead
    short = steady_state(SHAPE, 1.0, 500, 200)
    assert float(first_token_ms(SHAPE, short, 500, 200, 8192, False, None)[0]) == pytest.approx(
        float(first_token_ms(SHAPE, short, 500, 200, None, False, None)[0])
    )


def test_ttft_percentiles_come_from_the_queues_and_order():
    state = steady_state(SHAPE, np.asarray([64.0, 256.0]), 1000, 200)
    median, mean, p95, p99 = (
        first_token_ms(SHAPE, state, 1000, 200, 8192, True, p) for p in (50.0, None, 95.0, 99.0)
    )
    assert np.all(median < mean) and np.all(mean < p95) and np.all(p95 < p99)
    # More load: a longer prefill queue at every percentile.
    assert p99[1] > p99[0] and median[1] >= median[0]


def test_latency_at_a_rate_stays_finite_up_to_and_past_capacity():
    input_len, output_len, cap = 1000, 200, 256
    capacity = float(steady_state(SHAPE, float(cap), input_len, output_len).requests_per_s[0])
    points = [
        latency_under_load(SHAPE, input_len, output_len, capacity * f, cap, "vllm", True)
        for f in (0.2, 0.5, 0.8, 0.95, 0.999, 1.0, 1.5, 10.0)
    ]
    below, past = points[:5], points[5:]
    assert all(not p.saturated for p in below) and all(p.saturated for p in past)
    for p in points:
        figures = (p.ttft_mean_ms, p.ttft_p50_ms, p.ttft_p99_ms, p.tpot_mean_ms, p.tpot_p99_ms)
        assert all(math.isfinite(x) and x > 0 for x in figures)
    # Latency rises with the offered rate below capacity.
    assert [p.ttft_p99_ms for p in below] == sorted(p.ttft_p99_ms for p in below)
    assert [p.tpot_mean_ms for p in below] == sorted(p.tpot_mean_ms for p in below)
    # Past capacity: the saturation point, whatever the excess (the backlog is the queue).
    assert past[1].served_requests_per_s == pytest.approx(capacity)
    assert past[2].ttft_mean_ms == pytest.approx(past[1].ttft_mean_ms)
    assert past[2].batch == cap and past[2].output_tokens_per_s == pytest.approx(
        capacity * output_len
    )
    # Below capacity the replica completes what is offered.
    assert below[2].served_requests_per_s == pytest.approx(0.8 * capacity)
