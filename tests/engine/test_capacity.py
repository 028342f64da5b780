"""Capacity: TP choice, batch search and fleet sizing (no database)."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from planner.engine.calibration import load_calibration
from planner.engine.capacity import (
    batch_grid,
    plan_replicas,
    replica_capacity,
    smallest_fitting_tp,
    valid_tp_degrees,
)
from planner.engine.errors import EngineInputError
from planner.engine.specs import load_accelerators_csv, load_models_csv

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
CAL = load_calibration()


def test_replicas_with_headroom_and_n_plus_one():
    # 1,000 peak concurrent requests / 64 per replica = 15.6 -> 16 replicas at full load;
    # with 10 % headroom 15.625 / 0.9 = 17.4 -> 18; N+1 in each of 2 failure domains -> 20.
    # TP 2 -> 40 accelerators; 8 per server hold 4 replicas -> 5 servers; 4 per rack -> 2.
    plan = plan_replicas(
        tensor_parallel=2,
        accelerators_per_server=8,
        batch_per_replica=64,
        peak_concurrency=1000,
        headroom_pct=10,
        failure_domains=2,
        servers_per_rack=4,
    )
    assert (plan.replicas_for_load, plan.replicas_with_headroom) == (16, 18)
    assert (plan.spare_replicas, plan.replicas) == (2, 20)
    assert (plan.accelerators, plan.servers, plan.racks) == (40, 5, 2)


def test_replicas_by_request_rate_takes_the_larger_need():
    # 50 req/s at 4 req/s per replica = 12.5 -> 13; concurrency 100/64 = 1.6 -> 2: rate wins.
    plan = plan_replicas(
        tensor_parallel=8,
        accelerators_per_server=8,
        batch_per_replica=64,
        requests_per_s_per_replica=4.0,
        peak_concurrency=100,
        peak_requests_per_s=50,
        headroom_pct=0,
        n_plus_one=False,
    )
    assert plan.replicas == 13 and plan.servers == 13
    with pytest.raises(ValueError):
        plan_replicas(tensor_parallel=1, accelerators_per_server=8)


def test_smallest_tp_that_fits_llama_70b_bf16_on_h100():
    # TP 1: 141 GB > 72 GB; TP 2: 70.6 GB + 7.1 GiB overheads > 72 GB; TP 4 fits.
    tp, plan = smallest_fitting_tp(MODELS["llama-3.1-70b"], ACCELERATORS["h100-sxm"], "bf16", 4096)
    assert tp == 4 and plan.feasible
    tp, plan = smallest_fitting_tp(MODELS["llama-3.1-405b"], ACCELERATORS["l4"], "bf16", 4096)
    assert tp is None and "exceed" in plan.infeasible_reason


def test_valid_tp_degrees_respect_heads_and_server():
    assert valid_tp_degrees(MODELS["llama-3.1-70b"], ACCELERATORS["h100-sxm"]) == [1, 2, 4, 8]
    # Phi-4: 40 heads, 10 KV heads -> 8 does not divide 40 evenly with 10 KV heads.
    assert 8 not in valid_tp_degrees(MODELS["phi-4"], ACCELERATORS["h100-sxm"])


def test_batch_grid_covers_small_batches_and_the_cap():
    grid = batch_grid(1000)
    assert grid[0] == 1 and grid[-1] == 1000
    assert np.all(np.arange(1, 33) == grid[:32])


def test_latency_target_limits_the_batch():
    args = (MODELS["llama-3.1-70b"], ACCELERATORS["h100-sxm"], "fp8", 2, 1000, 300, CAL)
    offline = replica_capacity(*args)
    loose = replica_capacity(*args, ttft_target_ms=2000, tpot_target_ms=100)
    tight = replica_capacity(*args, ttft_target_ms=500, tpot_target_ms=30)
    assert offline.point.batch == offline.max_batch
    assert tight.point.batch < loose.point.batch <= offline.max_batch
    assert tight.point.tpot_ms <= 30.0 + 1e-6 and tight.point.ttft_ms <= 500.0 + 1e-6
    assert tight.point.output_tokens_per_s < offline.point.output_tokens_per_s


def test_impossible_target_says_so():
    cap = replica_capacity(
        MODELS["llama-3.1-70b"],
        ACCELERATORS["h100-sxm"],
        "fp8",
        2,
        1000,
        300,
        CAL,
        tpot_target_ms=1.0,
    )
    assert not cap.feasible
    assert "TPOT" in cap.infeasible_reason and "even at batch 1" in cap.infeasible_reason


@pytest.mark.parametrize(
    ("model", "accelerator", "precision", "tp", "lengths", "percentile"),
    [
        # The overshoot was found here: the straight line between grid batches 2 and 3 gave
        # p95 TPOT 30.11 ms for a 30 ms target (MoE: expert activation is not linear in the
        # batch), and on Gaudi2 20.04 ms for 20 ms. The target is put between the p95 TPOT at
        # batch 2 and at batch 3 under the shipped calibration, so the case stays the one
        # that needs the interpolation whatever the fitted factors.
        ("gpt-oss-20b", "l4", "fp8", 4, (2000, 300), 95.0),
        ("gpt-oss-120b", "gaudi2", "bf16", 4, (1000, 300), 95.0),
    ],
)
def test_latency_search_never_reports_a_point_over_its_target(
    model, accelerator, precision, tp, lengths, percentile
):
    from planner.engine.performance import replica_shape, steady_state, tpot_tail_factor

    shape = replica_shape(MODELS[model], ACCELERATORS[accelerator], precision, tp, CAL)
    tpot_2, tpot_3 = steady_state(shape, np.array([2.0, 3.0]), *lengths).tpot_ms * (
        tpot_tail_factor(percentile, CAL)
    )
    tpot_ms = float(tpot_2 + 0.5 * (tpot_3 - tpot_2))
    cap = replica_capacity(
        MODELS[model],
        ACCELERATORS[accelerator],
        precision,
        tp,
        *lengths,
        CAL,
        tpot_target_ms=tpot_ms,
        percentile=percentile,
    )
    assert cap.feasible
    assert cap.point.tpot_ms <= tpot_ms
    # Still the boundary, not batch 1: the point is at least the last feasible grid batch.
    assert cap.point.batch >= 2


_SEARCH_MODELS = ["gpt-oss-20b", "gpt-oss-120b", "qwen3-30b-a3b", "mixtral-8x7b", "llama-3.1-8b"]
_SEARCH_ACCELERATORS = ["l4", "l40s", "h100-sxm", "gaudi2", "a100-80gb-sxm", "mi300x"]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    model=st.sampled_from(_SEARCH_MODELS),
    accelerator=st.sampled_from(_SEARCH_ACCELERATORS),
    precision=st.sampled_from(["fp8", "bf16"]),
    input_len=st.integers(64, 4000),
    output_len=st.integers(16, 1000),
    ttft_ms=st.none() | st.floats(100, 3000),
    tpot_ms=st.floats(8, 120),
    percentile=st.sampled_from([95.0, 99.0]),
    variable_lengths=st.booleans(),
)
def test_no_feasible_point_is_over_its_target(
    model, accelerator, precision, input_len, output_len, ttft_ms, tpot_ms, percentile,
    variable_lengths,
):  # fmt: skip
    spec, device = MODELS[model], ACCELERATORS[accelerator]
    degrees = valid_tp_degrees(spec, device)
    assume(degrees)
    cap = replica_capacity(
        spec, device, precision, degrees[len(degrees) // 2], input_len, output_len, CAL,
        ttft_target_ms=ttft_ms, tpot_target_ms=tpot_ms, percentile=percentile,
        variable_lengths=variable_lengths,
    )  # fmt: skip
    if cap.feasible:
        assert cap.point.tpot_ms <= tpot_ms
        assert ttft_ms is None or cap.point.ttft_ms <= ttft_ms


def test_headroom_is_one_rule_a_target_utilisation():
    # 2,200 concurrent requests at 100 per replica: the load needs 22 replicas. 20 % headroom
    # sizes for 80 % utilisation: ⌈22 ÷ 0.8⌉ = ⌈27.5⌉ = 28 (× 1.2 would give ⌈26.4⌉ = 27).
    from planner.engine.capacity import plan_replicas, target_utilisation

    assert target_utilisation(20) == pytest.approx(0.8)
    assert target_utilisation(0) == 1.0
    plan = plan_replicas(tensor_parallel=1, accelerators_per_server=8, batch_per_replica=100,
                         peak_concurrency=2200, headroom_pct=20, n_plus_one=False)  # fmt: skip
    assert (plan.replicas_for_load, plan.replicas_with_headroom, plan.replicas) == (22, 28, 28)
    # 10 % (ConfigIQ's 0.9 planning factor): ⌈22 ÷ 0.9⌉ = ⌈24.4⌉ = 25, plus one N+1 spare.
    spare = plan_replicas(tensor_parallel=1, accelerators_per_server=8, batch_per_replica=100,
                          peak_concurrency=2200, headroom_pct=10, n_plus_one=True)  # fmt: skip
    assert (spare.replicas_with_headroom, spare.replicas) == (25, 26)
    with pytest.raises(EngineInputError):
        target_utilisation(100)
