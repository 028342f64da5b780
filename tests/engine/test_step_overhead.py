"""The step time as the sum of its kernels: the bandwidth floor of batch-1 decode by hand, each
kernel's own roofline, the GEMM tile utilisation, the physical overheads, and the prefill queue
of TTFT."""

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from planner.engine import calibration as calibration_module
from planner.engine import performance
from planner.engine.calibration import fit_parameters, load_calibration
from planner.engine.memory import weights_bytes
from planner.engine.performance import (
    Calibration,
    EfficiencyFactors,
    gemm_half_tokens,
    prefill_queue_wait_ms,
    prefill_wait_ms,
    replica_shape,
    steady_state,
    step_time_ms,
    unloaded_latency,
)
from planner.engine.specs import load_accelerators_csv, load_models_csv

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
MODEL = MODELS["llama-3.1-8b"]
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
H100 = ACCELERATORS["h100-sxm"]
# Llama-3.1-8B: 8,030,261,248 parameters, of which the embedding and LM head are
# 2 × 128,256 × 4,096 = 1,050,673,152 kept in BF16 (2 bytes); the other 6,979,588,096 are FP8
# (1 byte): 6,979,588,096 + 2 × 1,050,673,152 = 9,080,934,400 bytes, streamed once per decode
# step at the H100 SXM's 3.35 TB/s: 9.0809e9 / 3.35e12 = 2.711 ms.
FLOOR_MS = 9_080_934_400 / 3.35e12 * 1e3


def kernels(**overrides) -> Calibration:
    """A kernels-model calibration with round factors (no reference to the shipped fit)."""
    values = {
        "step_model": "kernels",
        "global_factors": EfficiencyFactors(0.8, 0.5),
        "gemm_half_tokens": 64.0,
        "attention_compute_ratio": 1.0,
        "activation_traffic_ratio": 0.0,
        "kv_read_bw_ratio": 1.0,
        "step_overhead_us_per_layer": 4.0,
        "step_overhead_ms": 0.3,
        "step_overhead_us_per_seq": 2.0,
        "allreduce_base_us": 8.0,
        "allreduce_hop_us": 0.0,
    }
    values.update(overrides)
    return Calibration(**values)


def test_bandwidth_floor_by_hand():
    assert weights_bytes(MODEL, "fp8", H100) == 9_080_934_400
    assert pytest.approx(2.711, abs=1e-3) == FLOOR_MS


def test_batch_1_decode_is_the_weights_over_bandwidth_plus_kv_plus_the_fixed_terms():
    cal = kernels()
    shape = replica_shape(MODEL, H100, "fp8", 1, cal)
    ctx = 1000.0
    kv_ms = ctx * 131_072 / (3.35e12 * 0.8) * 1e3  # BF16 KV: 32 layers × 8 heads × 128 × 2 × 2 B
    fixed_ms = 32 * 4.0e-3 + 0.3 + 2.0e-3
    weights_ms = 9_080_934_400 / (3.35e12 * 0.8) * 1e3
    assert float(step_time_ms(shape, 1.0, 0.0, ctx)) == pytest.approx(
        weights_ms + kv_ms + fixed_ms, rel=1e-9
    )
    # vLLM reaches ~77 % of HBM bandwidth at batch 1 on this model: about 3.5 ms a token.
    assert 3.3 <= unloaded_latency(shape, 1024, 128).tpot_ms <= 4.2


def test_decode_attention_adds_to_the_weight_gemms_instead_of_hiding_behind_them():
    """The KV read is its own kernel: at a batch where the GEMMs are compute-bound, reading a
    longer context still costs its full memory time."""
    cal = kernels()
    shape = replica_shape(MODEL, H100, "fp8", 1, cal)
    batch = 512.0
    short, long = (float(step_time_ms(shape, batch, 0.0, ctx)) for ctx in (100.0, 2100.0))
    kv_ms = batch * 2000 * 131_072 / (3.35e12 * 0.8) * 1e3
    assert long - short == pytest.approx(kv_ms, rel=1e-9)


def test_gemm_tile_utilisation_adds_half_a_tile_of_rows():
    """Compute-bound weight GEMMs of M rows cost FLOPs × (M + M½) / (peak · η_c)."""
    cal = kernels(
        step_overhead_us_per_layer=0.0, step_overhead_ms=0.0, step_overhead_us_per_seq=0.0
    )
    shape = replica_shape(MODEL, H100, "fp8", 1, cal)
    prompt = 8192.0
    total = float(step_time_ms(shape, 0.0, prompt, 0.0, prompt))
    half = gemm_half_tokens(cal, 1979e12)  # 64 × √1.979 = 90 rows at the H100's FP8 peak
    assert half == pytest.approx(64.0 * math.sqrt(1.979))
    gemm_s = (
        (prompt * shape.dense_flops_per_token + shape.lm_head_flops_per_token)
        * (1 + half / prompt)
        / (1979e12 * 0.5)
    )
    attention_s = prompt * shape.attn_flops_per_token_per_ctx * prompt / 2 / (989e12 * 0.5)
    assert total == pytest.approx((gemm_s + attention_s) * 1e3, rel=1e-9)


def test_the_lm_head_runs_for_decode_tokens_and_each_prompts_last_token_only():
    shape = replica_shape(MODEL, H100, "fp8", 1, kernels())
    assert shape.lm_head_flops_per_token == 2 * 128_256 * 4_096
    assert shape.dense_flops_per_token + shape.lm_head_flops_per_token == pytest.approx(
        shape.flops_per_token
    )


def test_the_half_point_grows_with_the_square_root_of_the_peak(monkeypatch):
    monkeypatch.setattr(performance, "GEMM_HALF_SCALING", True)
    cal = kernels(gemm_half_tokens=100.0)
    assert gemm_half_tokens(cal, 1e15) == pytest.approx(100.0)
    b200 = ACCELERATORS["b200"]
    ratio = gemm_half_tokens(cal, b200.compute_tflops("fp4") * 1e12) / gemm_half_tokens(
        cal, H100.compute_tflops("fp8") * 1e12
    )
    assert ratio == pytest.approx(math.sqrt(9000 / 1979), rel=1e-6)
    monkeypatch.setattr(performance, "GEMM_HALF_SCALING", False)
    assert gemm_half_tokens(cal, 9e15) == pytest.approx(100.0)


def test_per_sequence_overhead_grows_with_the_batch_only():
    cal = kernels(step_overhead_us_per_seq=3.0)
    zero = dataclasses.replace(cal, step_overhead_us_per_seq=0.0)
    one, many = step_time_ms(replica_shape(MODEL, H100, "fp8", 1, cal), [1.0, 257.0], 0.0, 512.0)
    one0, many0 = step_time_ms(replica_shape(MODEL, H100, "fp8", 1, zero), [1.0, 257.0], 0.0, 512.0)
    assert one - one0 == pytest.approx(3.0e-3)
    assert many - many0 == pytest.approx(257 * 3.0e-3)


def test_prefill_sharing_stretches_a_prompt_by_one_over_one_minus_rho():
    """Processor sharing (M/G/1-PS): a prompt of prefill time S finishes after S / (1 − ρ), so
    the extra time is S·ρ / (1 − ρ), whatever the spread of prompt lengths."""
    assert float(prefill_wait_ms(0.5, 800.0)) == pytest.approx(800.0)
    assert float(prefill_wait_ms(0.2, 800.0)) == pytest.approx(200.0)
    assert float(prefill_wait_ms(0.0, 800.0)) == 0.0
    # Capped short of saturation (the steady state itself saturates there).
    assert float(prefill_wait_ms(1.5, 10.0)) == pytest.approx(10.0 * 0.95 / 0.05)


def test_long_prompts_at_high_load_wait_for_the_prefills_around_them():
    """MLPerf Llama-3.1-405B server prompts (9.4k tokens) keep the replica busy with prefill,
    so a prompt's TTFT stretches by a good part of its own prefill; short chat prompts at the
    same concurrency barely stretch."""
    model = MODELS["llama-3.1-405b"]
    h200 = ACCELERATORS["h200-sxm"]
    shape = replica_shape(model, h200, "fp8", 8, kernels())
    long = steady_state(shape, 40.0, 9428, 685)
    short = steady_state(shape, 40.0, 222, 685)
    assert float(long.prefill_utilisation[0]) > 0.5 > 0.15 > float(short.prefill_utilisation[0])
    assert float(long.prefill_wait_ms()[0]) > float(long.prefill_ms[0])
    assert float(short.prefill_wait_ms()[0]) < 0.2 * float(short.prefill_ms[0])
    longer = float(long.prefill_wait_ms(2 * long.prefill_ms)[0])
    assert longer == pytest.approx(2 * float(long.prefill_wait_ms()[0]))


def test_long_prompts_at_high_load_wait_for_the_prefills_ahead_of_them():
    """MLPerf Llama-3.1-405B server prompts (9.4k tokens) keep the replica busy with prefill,
    so a prompt waits a good part of a prefill for the prompts ahead of it (FCFS, M/G/1);
    short chat prompts at the same concurrency barely wait."""
    model = MODELS["llama-3.1-405b"]
    h200 = ACCELERATORS["h200-sxm"]
    shape = replica_shape(model, h200, "fp8", 8, kernels())
    long = steady_state(shape, 40.0, 9428, 685)
    short = steady_state(shape, 40.0, 222, 685)
    assert float(long.prefill_utilisation[0]) > 0.5 > 0.15 > float(short.prefill_utilisation[0])

    def wait(state):
        return float(
            prefill_queue_wait_ms(state.prefill_utilisation, state.prefill_ms, 1.0, None)[0]
        )

    assert wait(long) > float(long.prefill_ms[0])
    assert wait(short) < 0.2 * float(short.prefill_ms[0])


def test_shipped_fit_is_physical_and_off_its_bounds():
    cal = load_calibration()
    assert cal.step_model == "kernels"
    for parameter in fit_parameters("kernels"):
        if parameter.name in {"eta_m", "eta_c", "link_bw_fraction", "pcie_link_bw_fraction"}:
            continue
        value = calibration_module._parameter_value(cal, parameter.name)
        assert parameter.lower * 1.01 < value < parameter.upper * 0.99, parameter.name
    shape = replica_shape(MODEL, H100, "fp8", 1, cal)
    # 9.3 ms under the old whole-step roofline whose fixed terms sat on their bounds.
    assert 2.711 < unloaded_latency(shape, 1024, 128).tpot_ms < 5.0
    assert np.isfinite(cal.step_overhead_ms) and cal.step_overhead_ms < 1.0
