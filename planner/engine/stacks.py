"""Serving stacks as the engine knows them: which there are, their names as people write
them, and the hardware each is sized on. Plain data with no other import, so that every page
and document names a stack from here (``planner.labels``) and the engine's rules
(:mod:`planner.engine.memory`, :mod:`planner.engine.performance`) key on the same codes.
"""

from __future__ import annotations

__all__ = [
    "AUTO_KV_CACHE_DTYPE",
    "KV_CACHE_DTYPE_NAMES",
    "SERVING_STACKS",
    "SERVING_STACK_NAMES",
    "SERVING_STACK_VENDORS",
    "serving_stack_name",
    "serving_stack_unsupported",
    "stack_in_text",
]

# What "auto" stands for: the model's activation dtype, BF16, for every precision sized
# (planner.engine.memory.default_kv_precision).
AUTO_KV_CACHE_DTYPE = "bf16"
SERVING_STACKS = ("vllm", "sglang", "trtllm")
SERVING_STACK_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}
KV_CACHE_DTYPE_NAMES = {"auto": "model dtype", "bf16": "BF16", "fp16": "BF16", "fp8": "FP8"}
# Vendors whose accelerators each stack runs on (vLLM: every vendor in the catalog through its
# platform plugins; TensorRT-LLM is NVIDIA's; the SGLang memory rule is its CUDA/ROCm one).
SERVING_STACK_VENDORS = {"trtllm": ("NVIDIA",), "sglang": ("NVIDIA", "AMD")}


def serving_stack_unsupported(stack: str, vendor: str) -> str | None:
    """Why the engine does not size ``stack`` on an accelerator of ``vendor`` (None when it
    does)."""
    vendors = SERVING_STACK_VENDORS.get(stack)
    if vendors is None or vendor.upper().startswith(vendors):
        return None
    return f"{SERVING_STACK_NAMES[stack]} is sized on {' and '.join(vendors)} GPUs only"


def serving_stack_name(stack: str, version: str = "", kv_cache_dtype: str = "") -> str:
    """``vLLM 0.11, FP8 KV cache``: the stack as people name it, its version when given, and
    the KV-cache dtype when given ("auto" reads "model dtype")."""
    name = SERVING_STACK_NAMES.get(stack, stack)
    if version.strip():
        name += f" {version.strip()}"
    if kv_cache_dtype:
        name += f", {KV_CACHE_DTYPE_NAMES.get(kv_cache_dtype, kv_cache_dtype.upper())} KV cache"
    return name


def stack_in_text(text: str) -> str | None:
    """The stack a tool or a person names in free text ("vLLM 0.11", "TensorRT-LLM",
    "trtllm-serve", "sglang"), or None when the text names none of them."""
    words = (text or "").lower().replace(" ", "").replace("-", "").replace("_", "")
    if "tensorrt" in words or "trtllm" in words:
        return "trtllm"
    if "sglang" in words:
        return "sglang"
    if "vllm" in words:
        return "vllm"
    return None
