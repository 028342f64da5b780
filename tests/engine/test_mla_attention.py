"""MLA's attention FLOPs (DeepSeek): absorbed on the cached latent in decode, decompressed per
head in prefill, checked by hand; GQA models unchanged."""

from pathlib import Path

import pytest

from planner.engine.calibration import load_calibration
from planner.engine.performance import attention_flops, replica_shape
from planner.engine.specs import load_accelerators_csv, load_models_csv

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
CAL = load_calibration()


def test_mla_decode_attention_is_absorbed_and_prefill_decompressed():
    model, h200 = MODELS["deepseek-r1"], ACCELERATORS["h200-sxm"]
    shape = replica_shape(model, h200, "fp8", 8, CAL, "fp8")
    # Decode: 128 heads / 8 = 16 per GPU; QK^T over 512 + 64, PV over 512: 2 × 16 × 1,088 =
    # 34,816 FLOPs per context token and layer, × 61 layers.
    assert shape.attn_flops_per_token_per_ctx == pytest.approx(2 * 16 * (512 + 64 + 512) * 61)
    # Prefill: QK^T at head_dim 192 (128 nope + 64 rope), PV at v_head_dim 128: 2 × 16 × 320.
    decode, prefill = attention_flops(shape, 1.0, 1000.0, 2000.0, 4000.0)
    assert float(decode) == pytest.approx(2 * 16 * 1088 * 61 * 2000.0)
    assert float(prefill) == pytest.approx(1000.0 * 2 * 16 * (192 + 128) * 61 * 2000.0)


def test_gqa_attention_unchanged():
    model, h100 = MODELS["llama-3.1-8b"], ACCELERATORS["h100-sxm"]
    shape = replica_shape(model, h100, "fp8", 1, CAL)
    # 4 · H · d per context token and layer, prefill the same: 4 × 32 × 128 × 32 layers.
    assert shape.attn_flops_per_token_per_ctx == pytest.approx(4 * 32 * 128 * 32)
    assert shape.prefill_attn_ratio == 1.0
