"""Disaggregated prefill/decode pools: hand calculations and properties (no database)."""

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.engine.calibration import load_calibration
from planner.engine.capacity import valid_tp_degrees
from planner.engine.disaggregated import (
    DecodePool,
    DisaggregatedOption,
    PrefillPool,
    best_disaggregated,
    decode_pool,
    kv_transfer_link,
    kv_transfer_ms,
    plan_disaggregated_fleet,
    prefill_pool,
)
from planner.engine.errors import EngineInputError
from planner.engine.performance import replica_shape, step_time_ms, tpot_tail_factor
from planner.engine.specs import load_accelerators_csv, load_models_csv
from planner.engine.sweep import Workload, sweep

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
CAL = load_calibration()


def test_kv_transfer_is_prompt_kv_over_the_link():
    # Llama-3.1-70B BF16 KV: 80 layers × 8 KV heads × 128 × 2 (K, V) × 2 B = 327,680 B/token;
    # 2,000 tokens = 655.36 MB over 25 GB/s = 26.2144 ms.
    assert kv_transfer_ms(327_680, 2000, 25e9) == pytest.approx(26.2144)
    with pytest.raises(EngineInputError):
        kv_transfer_ms(327_680, 2000, 0.0)


def test_kv_link_is_nvlink_within_a_server_and_the_front_end_nic_across():
    h100 = ACCELERATORS["h100-sxm"]
    per_dir = h100.scale_up_bw_gbytes_per_s_per_direction * 1e9
    link, path = kv_transfer_link(h100, 2, 4, CAL)
    assert path == "nvlink"
    assert link == pytest.approx(2 * per_dir * CAL.link_bw_fraction)  # both ranks send
    link, path = kv_transfer_link(h100, 8, 8, CAL)  # 16 GPUs: not one 8-GPU server
    assert path == "network"
    # The whole server's 2 × 100 Gb/s front-end NIC = 25 GB/s, × η_link.
    assert link == pytest.approx(25e9 * CAL.link_bw_fraction)


def test_prefill_pool_meets_ttft_with_queueing_and_transfer_by_hand():
    shape = replica_shape(MODELS["llama-3.1-8b"], ACCELERATORS["h100-sxm"], "fp8", 1, CAL)
    pool, reason = prefill_pool(shape, 2000, 500.0, 99.0, 20.0, "nvlink")
    assert reason is None
    d = float(step_time_ms(shape, 0.0, pool.prompts_per_step * 2000, 2000, 2000))
    assert pool.step_ms == pytest.approx(d)
    rho = pool.utilisation
    # M/D/1 by Kingman: p99 wait 0.5·D/(1−ρ)·ln(ρ/0.01) when ρ > 0.01.
    wait = 0.5 * d / (1 - rho) * math.log(rho / 0.01) if rho > 0.01 else 0.0
    assert pool.ttft_ms == pytest.approx(wait + d + 20.0)
    assert pool.ttft_ms <= 500.0
    assert pool.requests_per_s == pytest.approx(rho * pool.prompts_per_step / d * 1e3)
    # A transfer longer than the target is infeasible, and says why.
    none, why = prefill_pool(shape, 2000, 500.0, 99.0, 600.0, "network")
    assert none is None and "KV transfer" in why


def test_decode_pool_is_the_largest_grid_batch_within_tpot_by_hand():
    shape = replica_shape(MODELS["llama-3.1-70b"], ACCELERATORS["h100-sxm"], "fp8", 2, CAL)
    pool, reason = decode_pool(shape, 400, 2000, 400, 40.0, 99.0)
    assert reason is None
    tail = tpot_tail_factor(99.0, CAL)
    ctx = 2000 + 200
    mean = float(step_time_ms(shape, float(pool.batch), 0.0, ctx))
    assert pool.tpot_ms == pytest.approx(mean * tail)
    assert pool.tpot_ms <= 40.0
    assert float(step_time_ms(shape, pool.batch + 1.0, 0.0, ctx)) * tail > 40.0 or (
        pool.batch == 400
    )
    # The prefill replica emits the first token; decode makes the other 399.
    assert pool.requests_per_s == pytest.approx(pool.batch / (399 * mean * 1e-3))
    assert pool.output_tokens_per_s == pytest.approx(pool.batch * 1e3 / mean)


def test_fleet_by_hand():
    option = DisaggregatedOption(
        prefill=PrefillPool(1, 1, 100.0, 0.8, 10.0, 10.0, "nvlink", 300.0),
        decode=DecodePool(2, 100, 200, 55.0, 100 / (399 * 0.05), 2000.0),
        accelerator_seconds_per_request=0.0,
        output_tokens_per_s_per_accelerator=0.0,
        decode_per_prefill=0.0,
    )
    fleet = plan_disaggregated_fleet(
        option, output_len=400, accelerators_per_server=8, peak_concurrency=1000
    )
    # Time in system: 0.1 + 0.01 + 399 × 100 / 2000 = 20.06 s -> 1000 / 20.06 = 49.85 req/s.
    assert fleet.peak_requests_per_s == pytest.approx(1000 / 20.06)
    # Prefill: ceil(4.985 / 0.9) = 6, + 1 spare = 7. Decode: 1000 / 100 = 10 (rate: 9.945),
    # ceil(10 / 0.9) = 12, + 1 = 13 replicas × TP2 = 26 accelerators.
    assert (fleet.prefill_replicas, fleet.decode_replicas) == (7, 13)
    assert fleet.accelerators == 7 + 26
    assert fleet.servers == math.ceil(33 / 8)
    assert fleet.ratio_label == "7P:13D"


def test_needs_both_targets():
    with pytest.raises(EngineInputError, match="TTFT and a TPOT"):
        best_disaggregated(
            MODELS["llama-3.1-8b"], ACCELERATORS["h100-sxm"], "fp8", [1], 1000, 200, CAL,
            None, 50.0,
        )  # fmt: skip


def test_sweep_lists_a_labelled_disaggregated_candidate_priced_on_both_pools():
    workload = Workload(
        input_tokens=2000, output_tokens=400, ttft_ms=1500, tpot_ms=60, peak_concurrency=1000,
        disaggregated=True, precisions=("fp8",),
    )  # fmt: skip
    result = sweep(workload, MODELS["llama-3.1-70b"], [ACCELERATORS["h100-sxm"]], CAL,
                   {"h100-sxm": 3.0})  # fmt: skip
    disagg = [c for c in result.candidates if c.disaggregated]
    assert len(disagg) == 1 and disagg[0].feasible
    c = disagg[0]
    assert c.label == (
        f"Disaggregated {c.prefill_replicas}P:{c.decode_replicas}D, H100 SXM FP8 "
        f"TP{c.prefill_tensor_parallel}/TP{c.tensor_parallel}"
    )
    assert c.accelerators == (
        c.prefill_replicas * c.prefill_tensor_parallel + c.decode_replicas * c.tensor_parallel
    )
    assert c.usd_per_hour == pytest.approx(3.0 * c.accelerators)
    seconds = (
        c.prefill_tensor_parallel / c.prefill_requests_per_s_per_replica
        + c.tensor_parallel / c.requests_per_s_per_replica
    )
    assert c.usd_per_million_output_tokens == pytest.approx(3.0 * seconds / 400 / 3600 * 1e6)
    assert c.ttft_ms <= 1500 and c.tpot_ms <= 60
    # Aggregated candidates are unchanged by the flag.
    plain = sweep(
        Workload(input_tokens=2000, output_tokens=400, ttft_ms=1500, tpot_ms=60,
                 peak_concurrency=1000, precisions=("fp8",)),
        MODELS["llama-3.1-70b"], [ACCELERATORS["h100-sxm"]], CAL, {"h100-sxm": 3.0},
    )  # fmt: skip
    assert plain.candidates == tuple(c for c in result.candidates if not c.disaggregated)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-32b"]),
    accelerator=st.sampled_from(["h100-sxm", "mi300x", "l40s", "b200", "h100-pcie"]),
    precision=st.sampled_from(["bf16", "fp8"]),
    input_tokens=st.integers(64, 16_000),
    output_tokens=st.integers(2, 4_000),
    ttft_ms=st.floats(50, 10_000),
    tpot_ms=st.floats(5, 200),
    percentile=st.sampled_from([95.0, 99.0]),
)
def test_disaggregated_ttft_includes_transfer_and_is_never_over_target(
    model, accelerator, precision, input_tokens, output_tokens, ttft_ms, tpot_ms, percentile
):
    spec = MODELS.get(model) or MODELS["llama-3.1-8b"]
    acc = ACCELERATORS[accelerator]
    if acc.compute_tflops(precision) is None:
        return
    degrees = valid_tp_degrees(spec, acc)
    if not degrees or input_tokens + output_tokens > spec.max_context:
        return
    option, reason = best_disaggregated(
        spec, acc, precision, degrees, input_tokens, output_tokens, CAL, ttft_ms, tpot_ms,
        percentile,
    )  # fmt: skip
    if option is None:
        assert reason
        return
    p = option.prefill
    assert p.ttft_ms >= p.step_ms + p.kv_transfer_ms - 1e-9
    assert p.kv_transfer_ms > 0
    assert p.ttft_ms <= ttft_ms
    assert option.decode.tpot_ms <= tpot_ms
    assert np.isfinite(option.accelerator_seconds_per_request)
