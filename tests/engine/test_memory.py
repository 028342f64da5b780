"""Memory footprint checked against hand calculations (no database)."""

from pathlib import Path

import pytest

from planner.engine.errors import EngineInputError
from planner.engine.memory import (
    BYTES_PER_GIB,
    bytes_per_weight,
    kv_cache_bytes_per_token,
    kv_cache_layout,
    param_counts,
    plan_memory,
    resolve_kv_cache_dtype,
    weight_format,
    weights_bytes,
)
from planner.engine.specs import load_accelerators_csv, load_models_csv

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")


def test_llama_70b_bf16_weights_about_141_gb():
    # Analytic count (F1): per layer attention 2·8192·8192 + 2·8192·1024 = 150,994,944,
    # MLP 3·8192·28672 = 704,643,072, norms 16,384 -> 855,654,400 × 80 = 68,452,352,000;
    # embeddings 2 × 128,256 × 8192 = 2,101,346,304; final norm 8192 -> 70,553,706,496 params.
    # × 2 bytes = 141.1 GB.
    model = MODELS["llama-3.1-70b"]
    assert param_counts(model).total == pytest.approx(70_553_706_496, rel=1e-9)
    assert weights_bytes(model, "bf16") / 1e9 == pytest.approx(141.1, abs=0.05)


def test_fp8_keeps_embeddings_in_bf16():
    # (70.554e9 − 2.101e9) × 1 byte + 2.101e9 × 2 bytes = 72.65e9 bytes.
    model = MODELS["llama-3.1-70b"]
    assert weights_bytes(model, "fp8") / 1e9 == pytest.approx(72.65, abs=0.05)


def test_quantisation_scale_overhead():
    # int4 g128: 0.5 + (2 + 0.5)/128 = 0.51953125; NVFP4: 0.5 + 1/16 = 0.5625.
    assert bytes_per_weight("int4") == pytest.approx(0.51953125)
    assert bytes_per_weight("fp4") == pytest.approx(0.5625)
    with pytest.raises(ValueError):
        bytes_per_weight("int3")


def test_llama_70b_kv_bytes_per_token():
    # 2 (K and V) × 80 layers × 8 KV heads × 128 head dim × 2 bytes = 327,680 bytes.
    model = MODELS["llama-3.1-70b"]
    assert kv_cache_bytes_per_token(model, "bf16", tp=1) == 327_680
    # FP8 cache halves it: 163,840.
    assert kv_cache_bytes_per_token(model, "fp8", tp=1) == 163_840


def test_gqa_heads_replicate_past_tp_8():
    model = MODELS["llama-3.1-70b"]
    # TP 8: one KV head per GPU, replica total still 8 heads = 327,680 bytes/token.
    assert kv_cache_layout(model, "bf16", 8).kv_heads_per_gpu == 1
    assert kv_cache_bytes_per_token(model, "bf16", tp=8) == 327_680
    # TP 16: still one head per GPU (max(1, 8/16)), so 16 heads' worth in the replica:
    # 16 × 2 × 80 × 1 × 128 × 2 = 655,360 bytes/token, twice the TP 8 figure.
    layout = kv_cache_layout(model, "bf16", 16)
    assert layout.kv_heads_per_gpu == 1
    assert layout.replicated
    assert kv_cache_bytes_per_token(model, "bf16", tp=16) == 655_360


def test_deepseek_v3_mla_kv_per_token():
    # MLA: 61 layers × (512 latent + 64 rope) × 2 bytes = 70,272 bytes per token (bf16).
    model = MODELS["deepseek-v3"]
    assert kv_cache_bytes_per_token(model, "bf16", tp=1) == 70_272
    # vLLM keeps the whole latent on every TP rank: TP 8 stores 8 × 70,272 per token.
    assert kv_cache_bytes_per_token(model, "bf16", tp=8) == 8 * 70_272


def test_sliding_window_caps_gemma2_local_layers():
    # Gemma-2-27B: 46 layers, 23 global + 23 local (window 4096); per layer and token
    # 2 × 16 heads × 128 × 2 bytes = 8,192 bytes. At 8,192 tokens of context:
    # 8,192 × (23 × 8,192 + 23 × 4,096) = 2,315,255,808 bytes per sequence.
    layout = kv_cache_layout(MODELS["gemma-2-27b"], "bf16", 1)
    assert (layout.full_attention_layers, layout.sliding_layers) == (23, 23)
    assert layout.bytes_per_sequence_per_gpu(8192) == 2_315_255_808
    # Below the window every layer keeps every token: 46 × 8,192 = 376,832 bytes/token.
    assert layout.bytes_per_sequence_per_gpu(1000) == 1000 * 376_832


def test_mistral_v01_all_layers_slide():
    # 32 layers all windowed at 4096: a 10,000-token sequence holds 4,096 tokens per layer.
    layout = kv_cache_layout(MODELS["mistral-7b-v0.1"], "bf16", 1)
    per_token_layer = 2 * 8 * 128 * 2
    assert layout.bytes_per_sequence_per_gpu(10_000) == 32 * 4096 * per_token_layer


def test_nothing_fits_says_which_term_and_by_how_much():
    # 141.107e9 bytes = 131.4 GiB of weights against 0.9 × 80 GiB × 1 = 72.0 GiB: over by
    # 59.4 GiB (the vendor's "80 GB" of HBM is 80 GiB).
    plan = plan_memory(MODELS["llama-3.1-70b"], ACCELERATORS["h100-sxm"], "bf16", 1, 2048)
    assert not plan.feasible
    assert plan.infeasible_reason == (
        "weights 131.4 GiB per replica exceed 0.9 × 80 GiB × TP 1 = 72.0 GiB by 59.4 GiB"
    )
    assert plan.max_concurrent_sequences == 0


def test_overheads_can_be_the_term_that_breaks():
    # TP 2: 70.55e9 bytes = 65.7 GiB weights per GPU + 5.5 GiB activation + 1.6 GiB reserve
    # = 72.8 GiB > 0.9 × 80 GiB = 72 GiB.
    plan = plan_memory(MODELS["llama-3.1-70b"], ACCELERATORS["h100-sxm"], "bf16", 2, 2048)
    assert not plan.feasible
    assert plan.infeasible_reason.startswith("weights 65.7 GiB + activation peak 5.5 GiB")


def test_vllm_budget_and_concurrency_tp4():
    # TP 4 on H100: 0.9 × 80 GiB − 141.107e9/4 − 5.5 GiB − (0.6 + 1.0) GiB
    # = 77.309e9 − 35.277e9 − 7.624e9 = 34.41e9 bytes (32.05 GiB) per GPU.
    # Per GPU each token holds 2 × 80 × 2 heads × 128 × 2 = 81,920 bytes (bf16).
    # A 4,096-token sequence (256 blocks) needs 335,544,320 bytes -> 102 sequences.
    model = MODELS["llama-3.1-70b"]
    plan = plan_memory(model, ACCELERATORS["h100-sxm"], "bf16", 4, 4096)
    expected_budget = 72 * BYTES_PER_GIB - weights_bytes(model, "bf16") / 4 - 7.1 * BYTES_PER_GIB
    assert plan.feasible
    assert plan.kv_budget_bytes_per_gpu == pytest.approx(expected_budget)
    assert plan.kv_budget_bytes_per_gpu / BYTES_PER_GIB == pytest.approx(32.05, abs=0.01)
    assert plan.max_concurrent_sequences == int(expected_budget // (4096 * 81_920)) == 102
    assert plan.kv_blocks == int(expected_budget // (16 * 81_920))


def test_70b_fp8_tp2_h100_kv_budget_is_what_vllm_reports():
    # Llama-3.1-70B FP8 TP 2 on H100: weights (70.55e9 − 2.10e9 embedding) × 1 + 2.10e9 × 2
    # = 72.65e9 bytes, 36.33e9 (33.83 GiB) per GPU; 72 − 33.83 − 5.5 − 1.6 = 31.07 GiB of KV
    # budget per GPU (vLLM logs about 32 GiB; planning on 1e9-byte GB gave 26.1).
    plan = plan_memory(MODELS["llama-3.1-70b"], ACCELERATORS["h100-sxm"], "fp8", 2, 2048)
    assert plan.kv_budget_bytes_per_gpu / BYTES_PER_GIB == pytest.approx(31.07, abs=0.01)


def test_kv_cache_dtype_auto_is_the_model_dtype_and_fp8_halves_it():
    model, h100 = MODELS["llama-3.1-70b"], ACCELERATORS["h100-sxm"]
    assert resolve_kv_cache_dtype("auto", "fp8") == "bf16"
    assert resolve_kv_cache_dtype(None, "fp4") == "bf16"
    assert resolve_kv_cache_dtype("fp8", "bf16") == "fp8"
    with pytest.raises(EngineInputError, match="kv_cache_dtype must be one of"):
        resolve_kv_cache_dtype("int3", "fp8")
    auto = plan_memory(model, h100, "fp8", 2, 2048, "auto")
    fp8 = plan_memory(model, h100, "fp8", 2, 2048, "fp8")
    # Same budget, half the bytes per sequence: 2 × 80 × 4 heads × 128 × β × 2048 tokens.
    assert auto.kv_budget_bytes_per_gpu == fp8.kv_budget_bytes_per_gpu
    assert auto.kv_bytes_per_sequence_per_gpu == 2 * 80 * 4 * 128 * 2 * 2048
    assert fp8.kv_bytes_per_sequence_per_gpu == 2 * 80 * 4 * 128 * 1 * 2048


def test_deepseek_counts_its_dense_layers_and_fp4_format_follows_the_hardware():
    from planner.engine.performance import Calibration, replica_shape

    r1 = MODELS["deepseek-r1"]
    assert (r1.dense_layers, r1.moe_layers) == (3, 58)
    # Routed experts: 58 layers × 256 × 3 × 7168 × 2048 = 653.8e9 of the card's 671e9, so the
    # rest (attention, 3 dense FFNs, shared experts, embeddings) is 17.2e9 parameters, read on
    # every step: at FP8 with BF16 embeddings 17.2e9 + 1.85e9 = 19.0e9 bytes, 2.38e9 per GPU
    # at TP 8 (with 61 MoE layers the routed count exceeded the card and this was 0).
    shape = replica_shape(r1, ACCELERATORS["h200-sxm"], "fp8", 8, Calibration())
    routed = 58 * 256 * 3 * 7168 * 2048
    embedding = 2 * 129280 * 7168
    expected = ((671e9 - embedding - routed) + 2 * embedding) / 8
    assert shape.moe_layers == 58
    assert shape.dense_weight_bytes == pytest.approx(expected, rel=1e-9)
    # NVFP4 (16-weight blocks, FP8 scale) on Blackwell, MXFP4 (32-weight blocks) elsewhere.
    assert weight_format("fp4", ACCELERATORS["b200"]) == "fp4"
    assert weight_format("fp4", ACCELERATORS["h100-sxm"]) == "mxfp4"
    assert bytes_per_weight("mxfp4") == pytest.approx(0.53125)
    assert (
        ACCELERATORS["h100-sxm"].compute_tflops("fp4") == ACCELERATORS["h100-sxm"].bf16_dense_tflops
    )
