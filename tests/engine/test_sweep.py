"""Catalog sweep: feasible and infeasible candidates with reasons (no database)."""

from pathlib import Path

import pytest

from planner.engine.calibration import load_calibration
from planner.engine.specs import load_accelerators_csv, load_models_csv
from planner.engine.sweep import Workload, sweep

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
PRICES = {"h100-sxm": 3.0, "h200-sxm": 4.0, "mi300x": 3.5, "l40s": 1.0}


def test_sweep_returns_feasible_and_infeasible_with_reasons():
    workload = Workload(
        input_tokens=1000, output_tokens=300, ttft_ms=1000, tpot_ms=60, peak_concurrency=500
    )
    result = sweep(
        workload, MODELS["llama-3.1-70b"], ACCELERATORS.values(), load_calibration(), PRICES
    )
    feasible = result.feasible
    infeasible = [c for c in result.candidates if not c.feasible]
    assert feasible and infeasible
    assert all(c.infeasible_reason for c in infeasible)
    # 141 GB of BF16 weights cannot sit on one 80 GB H100.
    h100_bf16_tp1 = next(
        c
        for c in infeasible
        if (c.accelerator_slug, c.precision, c.tensor_parallel) == ("h100-sxm", "bf16", 1)
    )
    assert "exceed 0.9 × 80 GiB × TP 1" in h100_bf16_tp1.infeasible_reason
    # No FP4 tensor cores before Blackwell: weight-only FP4 is the int4 (W4A16) row.
    assert any("no FP4 tensor cores" in (c.infeasible_reason or "") for c in infeasible)
    # Ranked by cost per million output tokens; every feasible candidate meets the targets.
    costs = [c.usd_per_million_output_tokens for c in feasible if c.usd_per_million_output_tokens]
    assert costs == sorted(costs)
    assert result.best is not None and result.best.usd_per_million_output_tokens == costs[0]
    for c in feasible:
        assert c.ttft_ms <= 1000 + 1e-6 and c.tpot_ms <= 60 + 1e-6
        assert c.replicas * c.accelerators_per_replica == c.accelerators
        assert c.provenance


def test_cost_per_million_tokens_arithmetic():
    workload = Workload(input_tokens=500, output_tokens=200, precisions=("fp8",))
    result = sweep(
        workload, MODELS["llama-3.1-8b"], [ACCELERATORS["h100-sxm"]], load_calibration(), PRICES
    )
    c = next(c for c in result.candidates if c.tensor_parallel == 1)
    # TP 1 × $3.00/h / (tokens/s × 3600 s/h) × 1e6.
    assert c.usd_per_million_output_tokens == 3.0 / (c.output_tokens_per_s_per_replica * 3600) * 1e6


def test_prefill_and_decode_accelerator_seconds_split_the_sized_request_time():
    """Each feasible candidate carries the accelerator-seconds a request's prompt and output
    take, which sum to the replica's accelerators ÷ its requests/s (what the sizing pays for).

    By hand, an 8,192-token prompt on Llama 3.1 70B needs 8,192 × 2 × 70.6e9 = 1.16e15 FLOPs,
    0.58 accelerator-seconds at the H100's 1,979 TFLOP/s FP8 peak: the modelled prefill can be
    no faster. By TTFT's share of the wall time the prompt would be about 5 % of the cost
    (TTFT ÷ (TTFT + 400 × TPOT)); by its compute it is more than half.
    """
    workload = Workload(
        input_tokens=8192, output_tokens=400, ttft_ms=3000, tpot_ms=60,
        peak_concurrency=500, precisions=("fp8",),
    )  # fmt: skip
    h100 = ACCELERATORS["h100-sxm"]
    result = sweep(workload, MODELS["llama-3.1-70b"], [h100], load_calibration(), PRICES)
    floor_s = (
        8192
        * 2
        * MODELS["llama-3.1-70b"].params_active_b
        * 1e9
        / (h100.compute_tflops("fp8") * 1e12)
    )
    aggregated = [c for c in result.feasible if c.serving == "aggregated"]
    assert aggregated
    for c in aggregated:
        prefill, decode = c.prefill_accelerator_s_per_request, c.decode_accelerator_s_per_request
        assert prefill + decode == pytest.approx(
            c.accelerators_per_replica / c.requests_per_s_per_replica
        )
        assert prefill >= floor_s
        ttft_share = c.ttft_ms / (c.ttft_ms + 400 * c.tpot_ms)
        assert ttft_share < 0.15
        assert prefill / (prefill + decode) > 0.5


def test_a_measured_rate_rescales_the_accelerator_seconds_keeping_the_prefill_share():
    from dataclasses import replace

    from planner.engine.sweep import SweepCandidate, at_request_rate

    modelled = SweepCandidate(
        "h100-sxm", "H100", "fp8", 2, 8, True, None, requests_per_s_per_replica=0.5,
        prefill_accelerator_s_per_request=1.0, decode_accelerator_s_per_request=3.0,
    )  # fmt: skip
    # 2 accelerators ÷ 1 request/s = 2 accelerator-seconds a request, a quarter of it prefill
    measured = replace(modelled, requests_per_s_per_replica=1.0, **at_request_rate(modelled, 1.0))
    assert measured.prefill_accelerator_s_per_request == pytest.approx(0.5)
    assert measured.decode_accelerator_s_per_request == pytest.approx(1.5)
    unknown = replace(modelled, prefill_accelerator_s_per_request=None)
    assert at_request_rate(unknown, 1.0)["decode_accelerator_s_per_request"] is None
