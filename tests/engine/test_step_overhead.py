"""The fixed per-step cost: the bandwidth floor of batch-1 decode by hand, the physical
overhead terms of the step time, and the bounds the fit gives them."""

import dataclasses
from pathlib import Path

import pytest

from planner.engine import calibration as calibration_module
from planner.engine.calibration import load_calibration
from planner.engine.memory import weights_bytes
from planner.engine.performance import replica_shape, step_time_ms, unloaded_latency
from planner.engine.specs import load_accelerators_csv, load_models_csv

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODEL = load_models_csv(DATA / "models.csv")["llama-3.1-8b"]
H100 = load_accelerators_csv(DATA / "accelerators.csv")["h100-sxm"]
# Llama-3.1-8B: 8,030,261,248 parameters, of which the embedding and LM head are
# 2 × 128,256 × 4,096 = 1,050,673,152 kept in BF16 (2 bytes); the other 6,979,588,096 are FP8
# (1 byte): 6,979,588,096 + 2 × 1,050,673,152 = 9,080,934,400 bytes, streamed once per decode
# step at the H100 SXM's 3.35 TB/s: 9.0809e9 / 3.35e12 = 2.711 ms.
FLOOR_MS = 9_080_934_400 / 3.35e12 * 1e3


def test_bandwidth_floor_by_hand():
    assert weights_bytes(MODEL, "fp8", H100) == 9_080_934_400
    assert pytest.approx(2.711, abs=1e-3) == FLOOR_MS


def test_batch_1_tpot_is_the_floor_over_eta_plus_the_fixed_terms():
    # vLLM reaches ~77 % of HBM bandwidth at batch 1; with the physical nominal overheads
    # (4 µs a layer, 0.3 ms a step) the model gives 2.711 / 0.77 + KV + 0.128 + 0.3 ≈ 3.95 ms.
    cal = dataclasses.replace(
        load_calibration(),
        global_factors=load_calibration().global_factors.__class__(0.77, 0.4),
        group_factors={},
        step_overhead_us_per_layer=4.0,
        step_overhead_ms=0.3,
        step_overhead_us_per_seq=3.0,
    )
    shape = replica_shape(MODEL, H100, "fp8", 1, cal)
    tpot_ms = unloaded_latency(shape, 1024, 128).tpot_ms
    fixed_ms = 32 * 4.0e-3 + 0.3 + 3.0e-3
    assert tpot_ms == pytest.approx(FLOOR_MS / 0.77 + fixed_ms, rel=0.05)
    assert 3.5 <= tpot_ms <= 4.5


def test_per_sequence_overhead_grows_with_the_batch_only():
    cal = dataclasses.replace(load_calibration(), step_overhead_us_per_seq=3.0)
    zero = dataclasses.replace(cal, step_overhead_us_per_seq=0.0)
    one, many = step_time_ms(replica_shape(MODEL, H100, "fp8", 1, cal), [1.0, 257.0], 0.0, 512.0)
    one0, many0 = step_time_ms(replica_shape(MODEL, H100, "fp8", 1, zero), [1.0, 257.0], 0.0, 512.0)
    assert one - one0 == pytest.approx(3.0e-3)
    assert many - many0 == pytest.approx(257 * 3.0e-3)


def test_physical_switch_bounds_the_fixed_terms(monkeypatch):
    monkeypatch.setattr(calibration_module, "PHYSICAL_STEP_OVERHEAD", True)
    bounds = {name: (lo, hi) for name, _, lo, hi in calibration_module._global_bounds()}
    assert bounds["step_overhead_us_per_layer"][1] <= 20.0
    assert bounds["step_overhead_ms"][1] <= 2.0
    assert bounds["step_overhead_us_per_seq"][1] > bounds["step_overhead_us_per_seq"][0]
    monkeypatch.setattr(calibration_module, "PHYSICAL_STEP_OVERHEAD", False)
    bounds = {name: (lo, hi) for name, _, lo, hi in calibration_module._global_bounds()}
    assert bounds["step_overhead_us_per_seq"][1] < 1e-3  # the old model: no per-sequence term
    assert bounds["allreduce_base_us"][0] == pytest.approx(5.0)
