"""The serving stack and KV-cache dtype as inputs: each stack's memory rule and scheduler cap
against hand calculations, the sweep's stack comparison and the stack named on estimates."""

from pathlib import Path

import pytest

from planner.engine.calibration import load_calibration
from planner.engine.errors import EngineInputError
from planner.engine.estimate import EstimateRequest, estimate
from planner.engine.memory import (
    BYTES_PER_GIB,
    plan_memory,
    serving_stack_name,
    sglang_reserved_bytes,
)
from planner.engine.performance import Calibration, scheduler_max_sequences
from planner.engine.specs import load_accelerators_csv, load_models_csv
from planner.engine.sweep import Workload, sweep

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
MIB = 2**20
CONTEXT = 2400  # 2,000 prompt + 400 output tokens: 150 blocks of 16 tokens
# Llama-3.1-8B KV per token: 32 layers × 8 KV heads × 128 dims × 2 (K and V) × bytes.
KV_BF16 = 32 * 8 * 128 * 2 * 2  # 131,072 bytes
KV_FP8 = KV_BF16 // 2


def _llama8b_h100(stack: str, kv: str):
    return plan_memory(
        MODELS["llama-3.1-8b"], ACCELERATORS["h100-sxm"], "bf16", 1, CONTEXT, kv,
        serving_stack=stack,
    )  # fmt: skip


def test_trtllm_with_fp8_kv_holds_more_sequences_than_vllm_with_bf16_kv():
    vllm = _llama8b_h100("vllm", "bf16")
    trt = _llama8b_h100("trtllm", "fp8")
    weights = vllm.weights_bytes_per_gpu
    assert trt.weights_bytes_per_gpu == weights
    capacity = 80 * BYTES_PER_GIB  # the H100's 80 GB of HBM are GiB
    # vLLM: 0.9 × 80 GiB − weights − 5.5 GiB activation − 0.15 GiB non-torch − 1 GiB graphs.
    vllm_budget = 0.9 * capacity - weights - (5.5 + 0.15 + 1.0) * BYTES_PER_GIB
    # TensorRT-LLM: (80 GiB − weights − 1 GiB activation − 0.15 GiB non-torch) × 0.9.
    trt_budget = (capacity - weights - (1.0 + 0.15) * BYTES_PER_GIB) * 0.9
    assert vllm.kv_budget_bytes_per_gpu == pytest.approx(vllm_budget)
    assert trt.kv_budget_bytes_per_gpu == pytest.approx(trt_budget)
    assert vllm.max_concurrent_sequences == int(vllm_budget // (CONTEXT * KV_BF16))
    assert trt.max_concurrent_sequences == int(trt_budget // (CONTEXT * KV_FP8))
    # About 2.2 times as many: twice from the FP8 cache, the rest from the larger budget.
    assert trt.max_concurrent_sequences > 2 * vllm.max_concurrent_sequences


def test_sglang_keeps_its_default_reserve_outside_the_static_pool():
    # H100, 81,920 MiB, TP1: chunked prefill 8,192 and CUDA graphs up to batch 256, so
    # 512 + 1.5 × 8,192 + 2 × 256 + 1/8 × 1,024 = 13,440 MiB (above the 10 GiB floor);
    # mem_fraction_static = (81,920 − 13,440) / 81,920 = 0.836.
    activation, rest = sglang_reserved_bytes(80 * BYTES_PER_GIB, 1)
    assert activation == 12_288 * MIB
    assert activation + rest == 13_440 * MIB
    plan = _llama8b_h100("sglang", "bf16")
    budget = 80 * BYTES_PER_GIB - 13_440 * MIB - plan.weights_bytes_per_gpu
    assert plan.kv_budget_bytes_per_gpu == pytest.approx(budget)
    assert plan.max_concurrent_sequences == int(budget // (CONTEXT * KV_BF16))


def test_sglang_reserve_has_a_floor_on_large_gpus_and_none_on_small_ones():
    # L4 (24 GB): 2,048-token chunks, graphs to 24 at TP1: 512 + 3,072 + 48 + 128 = 3,760 MiB.
    activation, rest = sglang_reserved_bytes(24 * BYTES_PER_GIB, 1)
    assert activation + rest == 3_760 * MIB
    # B200 (180 GB) at TP8: 512 + 1.5 × 16,384 + 2 × 512 + 1,024 = 27,136 MiB.
    activation, rest = sglang_reserved_bytes(180 * BYTES_PER_GIB, 8)
    assert activation + rest == 27_136 * MIB


@pytest.mark.parametrize(("stack", "cap"), [("vllm", 1024), ("sglang", 2048), ("trtllm", 2048)])
def test_each_stack_has_its_scheduler_cap(stack, cap):
    assert scheduler_max_sequences(ACCELERATORS["h100-sxm"], stack, Calibration()) == cap


def test_an_unknown_stack_is_refused():
    with pytest.raises(EngineInputError):
        _llama8b_h100("tgi", "bf16")
    with pytest.raises(EngineInputError):
        Workload(input_tokens=100, output_tokens=10, serving_stack="tgi")
    with pytest.raises(EngineInputError):
        Workload(input_tokens=100, output_tokens=10, kv_cache_dtype="int3")


def test_stack_names_read_as_people_write_them():
    assert serving_stack_name("trtllm", " 0.21 ", "fp8") == "TensorRT-LLM 0.21, FP8 KV cache"
    assert serving_stack_name("sglang") == "SGLang"
    assert serving_stack_name("vllm", "", "auto") == "vLLM, model dtype KV cache"


def _estimate(**kwargs):
    request = EstimateRequest(
        model="llama-3.1-8b", accelerator="h100-sxm", accelerators=1, precision="bf16",
        input_tokens=2000, output_tokens=400, tensor_parallel=1, **kwargs,
    )  # fmt: skip
    return estimate(request, MODELS["llama-3.1-8b"], ACCELERATORS["h100-sxm"], load_calibration())


def test_the_estimate_names_its_stack_and_kv_dtype():
    result = _estimate(serving_stack="trtllm", serving_stack_version="0.21", kv_cache_dtype="fp8")
    assert result.serving_stack == "trtllm"
    assert result.serving_stack_version == "0.21"
    assert result.provenance.endswith("; sized for TensorRT-LLM 0.21, FP8 KV cache")
    vllm = _estimate()
    assert vllm.provenance.endswith("; sized for vLLM, BF16 KV cache")
    assert result.max_concurrent_sequences > 2 * vllm.max_concurrent_sequences


def _sweep(**kwargs):
    workload = Workload(input_tokens=2000, output_tokens=400, precisions=("bf16",), **kwargs)
    accelerators = [ACCELERATORS["h100-sxm"], ACCELERATORS["l40s"]]
    prices = {"h100-sxm": 3.0, "l40s": 1.0}
    return sweep(workload, MODELS["llama-3.1-8b"], accelerators, load_calibration(), prices)


def test_the_sweep_sizes_the_workloads_stack_and_compares_others_only_when_asked():
    plain = _sweep(serving_stack="sglang", kv_cache_dtype="fp8")
    assert {c.serving_stack for c in plain.candidates} == {"sglang"}
    assert {c.kv_cache_dtype for c in plain.candidates} == {"fp8"}
    compared = _sweep(
        serving_stack="sglang", kv_cache_dtype="fp8", compare_stacks=("vllm", "trtllm")
    )
    assert {c.serving_stack for c in compared.candidates} == {"vllm", "sglang", "trtllm"}
    assert len(compared.candidates) == 3 * len(plain.candidates)
    # The cheapest badge stays on the workload's own stack.
    assert compared.best.serving_stack == "sglang"


def test_an_fp8_cache_and_trtllm_give_a_larger_offline_batch_in_the_sweep():
    def h100_tp1(result):
        return next(
            c for c in result.candidates
            if c.accelerator_slug == "h100-sxm" and c.tensor_parallel == 1
        )  # fmt: skip

    vllm = h100_tp1(_sweep())
    trt = h100_tp1(_sweep(serving_stack="trtllm", kv_cache_dtype="fp8"))
    assert vllm.batch_per_replica == _llama8b_h100("vllm", "bf16").max_concurrent_sequences
    assert trt.batch_per_replica == min(
        2048, _llama8b_h100("trtllm", "fp8").max_concurrent_sequences
    )
    assert trt.batch_per_replica > vllm.batch_per_replica


def test_a_stack_is_not_sized_on_hardware_it_does_not_run_on():
    workload = Workload(
        input_tokens=2000, output_tokens=400, precisions=("bf16",), serving_stack="trtllm"
    )
    result = sweep(workload, MODELS["llama-3.1-8b"], [ACCELERATORS["mi300x"]], load_calibration())
    assert [c.infeasible_reason for c in result.candidates] == [
        "TensorRT-LLM is sized on NVIDIA GPUs only"
    ]
    request = EstimateRequest(
        model="llama-3.1-8b", accelerator="mi300x", accelerators=1, precision="bf16",
        input_tokens=2000, output_tokens=400, serving_stack="trtllm",
    )  # fmt: skip
    with pytest.raises(EngineInputError, match="NVIDIA GPUs only"):
        estimate(request, MODELS["llama-3.1-8b"], ACCELERATORS["mi300x"], load_calibration())


@pytest.mark.parametrize(
    ("text", "stack"),
    [
        ("vLLM 0.11.0", "vllm"),
        ("trtllm-serve", "trtllm"),
        ("TensorRT-LLM v0.21", "trtllm"),
        ("SGLang", "sglang"),
        ("", None),
        ("TGI 3.0", None),
    ],
)
def test_a_load_tests_stack_is_read_from_its_free_text(text, stack):
    from planner.engine.stacks import stack_in_text

    assert stack_in_text(text) == stack
