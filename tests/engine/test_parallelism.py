"""Parallelism beyond one server: memory split, communication time, sweep and estimate."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.engine.calibration import load_calibration
from planner.engine.capacity import replica_capacity
from planner.engine.errors import EngineInputError
from planner.engine.estimate import EstimateError, EstimateRequest, estimate
from planner.engine.memory import plan_memory, weights_bytes
from planner.engine.parallelism import (
    ParallelLayout,
    ScaleOutLink,
    alltoall_time_ms,
    parallel_shape,
    parse_network_ports,
    pipeline_send_ms,
    scale_out_link,
)
from planner.engine.performance import (
    allreduce_time_ms,
    local_step_time_ms,
    replica_shape,
    step_time_ms,
)
from planner.engine.pooling import Platform, WorkloadChoice, plan_pooled
from planner.engine.specs import load_accelerators_csv, load_models_csv
from planner.engine.sweep import Workload, sweep

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
H100 = ACCELERATORS["h100-sxm"]
CAL = load_calibration()
IB400 = ScaleOutLink(400.0, 5.0, "test: 400G per GPU")
GIB = 2**30


def layout(tp, pp=1, ep=1, link=IB400):
    return ParallelLayout(tp, pp, ep, 8, link)


# --- Memory split ------------------------------------------------------------------------------


def test_405b_bf16_tp8_pp2_memory_split_by_hand():
    model = MODELS["llama-3.1-405b"]
    plan = plan_memory(model, H100, "bf16", 8, 2400, parallel=layout(8, pp=2))
    # Weights: the replica's BF16 bytes over 16 GPUs.
    assert plan.weights_bytes_per_gpu == pytest.approx(weights_bytes(model, "bf16", H100) / 16)
    # KV: 8 KV heads over TP8 = 1 head × 128 × 2 (K, V) × 2 bytes = 512 B per layer per GPU;
    # each stage keeps 126 / 2 = 63 layers -> 32,256 B per token per GPU.
    assert plan.kv_bytes_per_sequence_per_gpu == pytest.approx(512 * 63 * 2400)
    # vLLM budget: 0.9 × 80 GiB − weights − 5.5 GiB activations − 0.6 − 1.0 GiB reserve.
    expected = 0.9 * 80 * GIB - plan.weights_bytes_per_gpu - 5.5 * GIB - 1.6 * GIB
    assert plan.kv_budget_bytes_per_gpu == pytest.approx(expected)
    assert plan.feasible
    # One server (TP8) does not hold it at all.
    assert not plan_memory(model, H100, "bf16", 8, 2400).feasible


def test_deepseek_ep16_memory_split_by_hand():
    model = MODELS["deepseek-r1"]
    ep = layout(8, ep=16)
    plan = plan_memory(model, H100, "fp8", 8, 2400, parallel=ep)
    total = weights_bytes(model, "fp8", H100)
    shape = replica_shape(model, H100, "fp8", 16, CAL)
    experts_all = shape.expert_bytes_per_layer * 16 * shape.experts * shape.moe_layers
    # Dense layers TP8 (replicated per server), routed experts whole over 16 GPUs.
    assert plan.weights_bytes_per_gpu == pytest.approx((total - experts_all) / 8 + experts_all / 16)
    # MLA latent (512 + 64) × 2 B = 1,152 B per layer, on every TP rank; each server keeps
    # half the sequences (DP2): 1,152 × 61 / 2 per token per GPU.
    assert plan.kv_bytes_per_sequence_per_gpu == pytest.approx(1152 * 61 / 2 * 2400)
    assert plan.feasible
    assert ep.gpus == 16 and ep.servers == 2 and ep.label == "EP16 (TP8 × DP2, 2 servers)"


@settings(max_examples=40, deadline=None)
@given(
    slug=st.sampled_from(["llama-3.1-405b", "llama-3.1-70b", "deepseek-r1", "qwen3-235b-a22b"]),
    precision=st.sampled_from(["bf16", "fp8"]),
    pp=st.integers(1, 4),
    context=st.integers(128, 32_000),
)
def test_more_pipeline_stages_never_raise_memory_per_gpu(slug, precision, pp, context):
    model = MODELS.get(slug) or MODELS["llama-3.1-70b"]
    fewer = plan_memory(model, H100, precision, 8, context, parallel=layout(8, pp=pp))
    more = plan_memory(model, H100, precision, 8, context, parallel=layout(8, pp=pp + 1))
    assert more.weights_bytes_per_gpu <= fewer.weights_bytes_per_gpu
    assert more.kv_bytes_per_sequence_per_gpu <= fewer.kv_bytes_per_sequence_per_gpu
    assert more.kv_budget_bytes_per_gpu >= fewer.kv_budget_bytes_per_gpu - 1e-6
    # ... and never below the even split: all weights still live somewhere.
    assert more.weights_bytes_per_gpu * 8 * (pp + 1) == pytest.approx(
        weights_bytes(model, precision, H100)
    )


# --- Communication ---------------------------------------------------------------------------


def test_pipeline_send_by_hand():
    # 100 tokens × 16,384 hidden × 2 B over 50 GB/s = 65.536 µs, plus 5 µs latency.
    assert pipeline_send_ms(100, 16384, 50e9, 5.0) == pytest.approx(0.070536)


def test_alltoall_by_hand():
    # 1,600 tokens over EP16: 100 per GPU × top-8 × 7,168 × (1 B FP8 + 2 B BF16) = 17.2 MB,
    # half of it to the other server: 8,601,600 B / 40 GB/s = 215.04 µs, plus 2 × 5 µs.
    assert alltoall_time_ms(1600, 7168, 8, 16, 8, 40e9, 5.0) == pytest.approx(0.22504)
    # All experts in one server: nothing crosses the NIC, only the latencies remain.
    assert alltoall_time_ms(1600, 7168, 8, 8, 8, 40e9, 5.0) == pytest.approx(0.01)


def test_tp_across_servers_adds_ring_over_the_nic_by_hand():
    model = MODELS["llama-3.1-405b"]
    wide = layout(16)
    shape = parallel_shape(model, H100, "fp8", wide, CAL)
    batch = np.asarray([64.0])
    local = local_step_time_ms(shape, batch, 0.0, 2000.0, 0.0, comm=False)
    nic = 400e9 / 8 * CAL.link_bw_fraction
    ring = allreduce_time_ms(64 * 16384 * 2.0, 16, nic, CAL)
    expected = local + 2 * 126 * (ring + 2 * 15 * 5.0 * 1e-3)
    assert step_time_ms(shape, batch, 0.0, 2000.0) == pytest.approx(expected)


def test_pipeline_micro_batches_and_bubble():
    model = MODELS["llama-3.1-405b"]
    pp = parallel_shape(model, H100, "fp8", layout(8, pp=2), CAL)
    tp8 = replica_shape(model, H100, "fp8", 8, CAL)
    nic = 400e9 / 8 * CAL.link_bw_fraction
    # B = 64 ≥ 2 stages: two micro-batches of 32 in flight; a token step of each micro-batch
    # sees all layers at batch 32 plus one activation send across the stage boundary.
    got = step_time_ms(pp, 64.0, 0.0, 2000.0)
    assert got == pytest.approx(
        step_time_ms(tp8, 32.0, 0.0, 2000.0) + pipeline_send_ms(32, 16384, nic, 5.0)
    )
    # B = 1 < 2 stages: one micro-batch, the other stage idles (the bubble): no gain over TP8.
    one = step_time_ms(pp, 1.0, 0.0, 2000.0)
    assert one == pytest.approx(
        step_time_ms(tp8, 1.0, 0.0, 2000.0) + pipeline_send_ms(1, 16384, nic, 5.0)
    )


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(["pp", "tp", "ep"]),
    batch=st.floats(1.0, 512.0),
    slow=st.floats(25.0, 399.0),
)
def test_slower_fabric_never_shortens_a_step(kind, batch, slow):
    model = MODELS["deepseek-r1"]
    fast_link, slow_link = IB400, ScaleOutLink(slow, 5.0, "slow")
    make = {
        "pp": lambda link: layout(8, pp=2, link=link),
        "tp": lambda link: layout(16, link=link),
        "ep": lambda link: layout(8, ep=16, link=link),
    }[kind]
    fast = step_time_ms(
        parallel_shape(model, H100, "fp8", make(fast_link), CAL), batch, batch, 2000.0
    )
    slow_t = step_time_ms(
        parallel_shape(model, H100, "fp8", make(slow_link), CAL), batch, batch, 2000.0
    )
    assert np.all(slow_t >= fast - 1e-12)


def test_scale_out_link_from_ports_and_defaults():
    assert parse_network_ports("8x 400Gb/s InfiniBand (per MLPerf system json)", 8) == 400.0
    assert parse_network_ports("10x 400Gb/s InfiniBand", 8) == 400.0
    assert parse_network_ports("2x 100GbE", 8) == 25.0
    assert parse_network_ports("", 8) is None
    assert scale_out_link(H100).gbps_per_gpu == 400.0
    assert scale_out_link(ACCELERATORS["l4"]).gbps_per_gpu == 100.0
    with pytest.raises(EngineInputError):
        ScaleOutLink(0.0, 5.0, "none")
    with pytest.raises(EngineInputError):
        ParallelLayout(8, pp=2, ep=16)


def test_single_server_step_is_unchanged_by_the_hook():
    # Within a server the shape has no layout and step_time_ms is the local roofline itself.
    shape = replica_shape(MODELS["llama-3.1-70b"], H100, "fp8", 4, CAL)
    assert shape.parallel is None
    batch = np.asarray([1.0, 16.0, 128.0])
    assert np.array_equal(
        step_time_ms(shape, batch, 10.0, 1500.0, 300.0),
        local_step_time_ms(shape, batch, 10.0, 1500.0, 300.0),
    )


# --- Sweep, estimate, pooling ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slug", "precision"), [("deepseek-r1", "fp8"), ("llama-3.1-405b", "bf16")]
)
def test_sweep_offers_costed_multi_node_candidates_when_no_server_holds_the_model(slug, precision):
    workload = Workload(
        input_tokens=2000,
        output_tokens=400,
        ttft_ms=3000,
        tpot_ms=100,
        peak_concurrency=200,
        precisions=(precision,),
    )
    result = sweep(workload, MODELS[slug], [H100], CAL, {"h100-sxm": 3.0})
    single = [c for c in result.candidates if c.accelerators_per_replica <= 8]
    assert single and not any(c.feasible for c in single)
    multi = [c for c in result.feasible if c.servers_per_replica == 2]
    assert multi, [c.infeasible_reason for c in result.candidates]
    pp = next(c for c in multi if c.pipeline_parallel == 2)
    assert pp.layout == "TP8 × PP2 (2 servers)"
    assert pp.accelerators_per_replica == 16
    # Priced on all 16 GPUs of the replica; the fleet takes two whole servers per replica.
    assert pp.usd_per_million_output_tokens == pytest.approx(
        16 * 3.0 / (pp.output_tokens_per_s_per_replica * 3600) * 1e6
    )
    assert pp.accelerators == pp.replicas * 16 and pp.servers == pp.replicas * 2
    assert result.best is not None and result.best.servers_per_replica == 2


def test_sweep_adds_no_multi_node_candidate_when_one_server_fits():
    workload = Workload(input_tokens=2000, output_tokens=400, ttft_ms=2000, tpot_ms=60)
    result = sweep(workload, MODELS["llama-3.1-70b"], [H100], CAL, {"h100-sxm": 3.0})
    assert result.feasible
    assert all(c.servers_per_replica == 1 for c in result.candidates)


def test_estimate_spreads_models_no_server_holds_over_servers():
    for slug, precision in (("deepseek-r1", "fp8"), ("llama-3.1-405b", "bf16")):
        request = EstimateRequest(slug, "h100-sxm", 16, precision, 2000, 400)
        result = estimate(request, MODELS[slug], H100, CAL)
        assert result.servers_per_replica == 2 and result.replicas == 1
        assert result.accelerators_used == 16 and result.output_tokens_per_s > 0
        assert result.parallel_layout


def test_estimate_explicit_layouts_and_refusals():
    model = MODELS["deepseek-r1"]
    ep = estimate(
        EstimateRequest("deepseek-r1", "h100-sxm", 32, "fp8", 2000, 400, expert_parallel=16),
        model,
        H100,
        CAL,
    )
    assert ep.expert_parallel == 16 and ep.replicas == 2 and ep.parallel_layout.startswith("EP16")
    with pytest.raises(EstimateError, match="no experts"):
        estimate(
            EstimateRequest("llama-3.1-70b", "h100-sxm", 16, "fp8", 2000, 400, expert_parallel=16),
            MODELS["llama-3.1-70b"],
            H100,
            CAL,
        )
    with pytest.raises(EstimateError, match="do not divide"):
        estimate(
            EstimateRequest("deepseek-r1", "h100-sxm", 24, "fp8", 2000, 400, pipeline_parallel=2),
            model,
            H100,
            CAL,
        )


def test_single_server_estimate_is_unchanged():
    request = EstimateRequest("llama-3.1-70b", "h100-sxm", 8, "fp8", 2000, 400)
    result = estimate(request, MODELS["llama-3.1-70b"], H100, CAL)
    assert result.parallel_layout == "" and result.servers_per_replica == 1
    capacity = replica_capacity(
        MODELS["llama-3.1-70b"], H100, "fp8", result.tensor_parallel, 2000, 400, CAL
    )
    assert result.output_tokens_per_s == pytest.approx(
        capacity.point.output_tokens_per_s * (8 // result.tensor_parallel)
    )


def test_a_replica_spanning_two_servers_takes_them_whole_and_needs_the_fabric():
    workload = Workload(
        input_tokens=2000, output_tokens=400, peak_concurrency=300, precisions=("bf16",)
    )
    result = sweep(workload, MODELS["llama-3.1-405b"], [H100], CAL, {"h100-sxm": 3.0})
    candidate = next(c for c in result.feasible if c.pipeline_parallel == 2)
    dgx = Platform("dgx-h100", "DGX H100", "h100-sxm", "H100", 8, 10.2, 8)
    choice = WorkloadChoice(
        1, "405b", dgx, "bf16", candidate.accelerators_per_replica, candidate.replicas, False, ()
    )
    pool = plan_pooled([choice], ["a"]).sites[0].pools[0]
    assert pool.spans_servers  # the BOM's scale-out rule reads this
    assert pool.servers == candidate.servers == 2 * candidate.replicas
    assert dataclasses.replace(candidate).layout == "TP8 × PP2 (2 servers)"
