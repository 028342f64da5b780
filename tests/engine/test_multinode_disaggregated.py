"""Replicas spanning servers and disaggregated prefill/decode together (one sweep, one key)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.engine.calibration import load_calibration
from planner.engine.estimate import EstimateError, EstimateRequest, estimate
from planner.engine.specs import load_accelerators_csv, load_models_csv
from planner.engine.sweep import SweepCandidate, Workload, sweep

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
H100 = ACCELERATORS["h100-sxm"]
CAL = load_calibration()


def test_a_model_no_server_holds_gets_multi_node_rows_and_an_infeasible_disaggregated_row():
    workload = Workload(
        input_tokens=2000, output_tokens=400, ttft_ms=3000, tpot_ms=100, peak_concurrency=200,
        precisions=("bf16",), disaggregated=True,
    )  # fmt: skip
    result = sweep(workload, MODELS["llama-3.1-405b"], [H100], CAL, {"h100-sxm": 3.0})
    disagg = [c for c in result.candidates if c.disaggregated]
    assert len(disagg) == 1 and not disagg[0].feasible and disagg[0].infeasible_reason
    multi = [c for c in result.feasible if c.servers_per_replica == 2]
    assert multi and result.best in multi
    pp = next(c for c in multi if c.pipeline_parallel == 2)
    assert pp.label == "H100 SXM BF16 TP8 × PP2 (2 servers)" and not pp.disaggregated


def test_a_model_one_server_holds_gets_a_disaggregated_row_and_no_multi_node_rows():
    workload = Workload(
        input_tokens=2000, output_tokens=400, ttft_ms=1500, tpot_ms=60, peak_concurrency=1000,
        precisions=("fp8",), disaggregated=True,
    )  # fmt: skip
    result = sweep(workload, MODELS["llama-3.1-70b"], [H100], CAL, {"h100-sxm": 3.0})
    assert all(c.servers_per_replica == 1 for c in result.candidates)
    (c,) = [c for c in result.candidates if c.disaggregated]
    assert c.feasible and c.pipeline_parallel == c.expert_parallel == 1
    assert c.layout == f"TP{c.prefill_tensor_parallel}/TP{c.tensor_parallel}"
    assert c.label.startswith("Disaggregated ") and c.label.endswith(c.layout)


def test_label_describes_either_layout():
    one = SweepCandidate("h100-sxm", "H100 SXM (80 GB)", "fp8", 4, 8, True, None)
    assert one.label == "H100 SXM FP8 TP4" and one.layout == "TP4"
    ep = SweepCandidate(
        "h100-sxm", "H100 SXM", "fp8", 8, 8, True, None, expert_parallel=16,
        parallel_label="EP16 (TP8 × DP2, 2 servers)",
    )  # fmt: skip
    assert ep.label == "H100 SXM FP8 EP16 (TP8 × DP2, 2 servers)"
    assert ep.accelerators_per_replica == 16 and ep.servers_per_replica == 2


@pytest.mark.parametrize("field", ["pipeline_parallel", "expert_parallel"])
def test_estimate_refuses_disaggregated_serving_across_servers(field):
    request = EstimateRequest(
        "deepseek-r1", "h100-sxm", 32, "fp8", 2000, 400, scenario="server", ttft_ms=3000,
        tpot_ms=100, serving="disaggregated", **{field: 2 if field == "pipeline_parallel" else 16},
    )  # fmt: skip
    with pytest.raises(EstimateError, match="within one server"):
        estimate(request, MODELS["deepseek-r1"], H100, CAL)


def test_a_model_only_a_whole_server_holds_also_gets_two_server_rows():
    """DeepSeek-R1 FP8 (671 GB) needs all eight H200s of one server; two servers spread the
    weights thinner and leave room for a larger batch, so they are tried and ranked by cost."""
    workload = Workload(
        input_tokens=2000, output_tokens=1000, ttft_ms=5000, tpot_ms=100, peak_concurrency=500,
        precisions=("fp8",),
    )  # fmt: skip
    result = sweep(
        workload, MODELS["deepseek-r1"], [ACCELERATORS["h200-sxm"]], CAL, {"h200-sxm": 4.0}
    )
    one = [c for c in result.feasible if c.servers_per_replica == 1]
    two = [c for c in result.candidates if c.servers_per_replica == 2]
    assert one and all(c.tensor_parallel == 8 for c in one)
    assert two, "two-server layouts are tried when only a whole server holds a replica"
    assert not any(c.servers_per_replica > 2 for c in result.candidates)
    costs = [c.usd_per_million_output_tokens for c in result.feasible]
    assert result.best.usd_per_million_output_tokens == min(costs)


def test_a_model_half_a_server_holds_gets_no_multi_server_rows():
    workload = Workload(
        input_tokens=2000, output_tokens=400, ttft_ms=1500, tpot_ms=60, peak_concurrency=1000,
        precisions=("fp8",),
    )  # fmt: skip
    result = sweep(workload, MODELS["llama-3.1-70b"], [H100], CAL, {"h100-sxm": 3.0})
    assert all(c.servers_per_replica == 1 for c in result.candidates)
