"""The aiconfigurator adapter: one covered case against the figures aiconfigurator gives, one
case it does not cover. Each covered call loads a GPU system's kernel tables (seconds), so the
suite makes one."""

from dataclasses import replace

import pytest

from planner.peer.aiconfigurator import PeerRequest, coverage, peer_estimate

H100_LLAMA_8B_FP8 = PeerRequest(
    accelerator="h100-sxm",
    model="llama-3.1-8b",
    precision="fp8",
    kv_cache_dtype="fp8",
    serving_stack="trtllm",
    tensor_parallel=1,
    batch_per_replica=64,
    input_tokens=1024,
    output_tokens=256,
)


def test_h100_llama_8b_fp8_gives_aiconfigurators_own_figures():
    # aiconfigurator-core 0.12.0 driven directly (sdk backends.factory.get_backend("trtllm")
    # .run_agg on h100_sxm's 1.3.0rc20 tables, Meta-Llama-3.1-8B, FP8 GEMM/KV/FMHA, TP1,
    # batch 64, ISL 1024, OSL 256, ctx_tokens 1024) returns these; it is deterministic.
    found = peer_estimate(H100_LLAMA_8B_FP8)

    assert found.covered, found.not_covered
    assert found.output_tokens_per_s_per_replica == pytest.approx(5838.8865, rel=1e-6)
    assert found.ttft_ms == pytest.approx(86.29234, rel=1e-6)
    assert found.tpot_ms == pytest.approx(10.791835, rel=1e-6)
    assert "aiconfigurator-core 0.12.0" in found.source
    assert "h100_sxm, TensorRT-LLM 1.3.0rc20" in found.source


def test_mi300x_is_not_covered_and_says_why():
    request = replace(
        H100_LLAMA_8B_FP8,
        accelerator="mi300x",
        serving_stack="vllm",
        accelerator_name="Instinct MI300X",
    )

    found = peer_estimate(request)

    assert not found.covered and found.output_tokens_per_s_per_replica is None
    assert found.not_covered == "aiconfigurator has no measured kernel tables for Instinct MI300X"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"model": "phi-4", "model_name": "Phi-4 (14B)"}, "ships no configuration of Phi-4"),
        ({"precision": "int4"}, "INT4 weight kernels are not mapped"),
        ({"pipeline_parallel": 2}, "pipeline- and expert-parallel layouts are not compared"),
        ({"disaggregated": True}, "disaggregated prefill and decode pools are not compared"),
    ],
)
def test_other_uncovered_inputs_say_why_without_calling_the_peer(change, reason):
    from dataclasses import replace

    assert reason in coverage(replace(H100_LLAMA_8B_FP8, **change))
