"""Memory footprint of one model replica: weights, KV cache and the vLLM-style KV budget.

Conventions:
    * Accelerator memory: the vendor's "80 GB" of HBM (or GDDR) is 80 GiB, since DRAM comes in
      powers of two (an H100 SXM holds 80 × 2**30 bytes; llm-d empirical-vllm-memory-results.md),
      so capacity is planned at 2**30 bytes per vendor GB (:data:`ACCELERATOR_BYTES_PER_GB`).
      Weights are counted in 1e9-byte GB, as model cards do.
    * A *replica* is one tensor-parallel group of ``tp`` accelerators serving one copy of the
      weights.
    * Quantised precisions keep the token embedding and the LM head in BF16, as vLLM and
      TensorRT-LLM checkpoints (llm-compressor, ModelOpt) do by default.
    * ``int4`` assumes GPTQ/AWQ group-wise quantisation with group size 128: one FP16 scale and
      one 4-bit zero point per 128 weights, 0.5 + (2 + 0.5)/128 = 0.5195 bytes per weight.
    * ``fp4`` is NVFP4 on NVIDIA parts with FP4 tensor cores (Blackwell): blocks of 16 weights
      share one FP8 (E4M3) scale, 0.5 + 1/16 = 0.5625 bytes per weight. Elsewhere it is
      MXFP4 (OCP Microscaling spec: 32-weight blocks with an 8-bit E8M0 scale,
      0.5 + 1/32 = 0.53125), the format gpt-oss ships in, run weight-only on parts without
      FP4 tensor cores (Hopper, Ampere, MI300X) and natively on MI355X.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.engine.errors import EngineInputError
from planner.engine.specs import AcceleratorSpec, ModelSpec
from planner.engine.stacks import (
    AUTO_KV_CACHE_DTYPE,
    KV_CACHE_DTYPE_NAMES,
    SERVING_STACK_NAMES,
    SERVING_STACKS,
    serving_stack_name,
    serving_stack_unsupported,
)

__all__ = [
    "ACCELERATOR_BYTES_PER_GB",
    "BYTES_PER_GIB",
    "KV_CACHE_DTYPES",
    "SERVING_STACKS",
    "SERVING_STACK_NAMES",
    "KV_CACHE_DTYPE_NAMES",
    "serving_stack_name",
    "serving_stack_unsupported",
    "KV_BLOCK_TOKENS",
    "KvCacheLayout",
    "MemoryPlan",
    "ParamCounts",
    "bytes_per_weight",
    "default_kv_precision",
    "kv_cache_bytes_per_token",
    "kv_cache_layout",
    "resolve_kv_cache_dtype",
    "sglang_reserved_bytes",
    "param_counts",
    "plan_memory",
    "weight_format",
    "weights_bytes",
]

BYTES_PER_GB = 1e9  # vendor marketing gigabyte
BYTES_PER_GIB = 2**30
# Vendor "GB" of accelerator memory: DRAM devices come in GiB, so "80 GB" HBM is 80 GiB.
ACCELERATOR_BYTES_PER_GB = BYTES_PER_GIB
# KV-cache data types a caller may ask for; "auto" is vLLM's default (the model's dtype).
KV_CACHE_DTYPES = ("auto", "bf16", "fp8")
KV_BLOCK_TOKENS = 16  # vLLM default block_size (vllm/v1/core/kv_cache_utils.py)

# Bytes per stored weight, scale overhead included (module docstring states the group sizes).
_WEIGHT_BYTES: dict[str, float] = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5 + (2.0 + 0.5) / 128.0,
    "fp4": 0.5 + 1.0 / 16.0,
    "mxfp4": 0.5 + 1.0 / 32.0,
}
_KV_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}

# Peak activation memory per GPU from vLLM's profiling forward pass at the default
# max_num_batched_tokens: dense about 5.5 GiB, MoE about 8 GiB on H100 (llm-d capacity_planner
# constants; empirical-vllm-memory-results.md measured 4.8-5.6 dense, 7.4 MoE).
ACTIVATION_PEAK_DENSE_BYTES = 5.5 * BYTES_PER_GIB
ACTIVATION_PEAK_MOE_BYTES = 8.0 * BYTES_PER_GIB
# Non-torch memory (CUDA context, NCCL): 0.15 GiB at TP1, 0.6 GiB at TP>=2 (llm-d constants),
# plus about 1 GiB of CUDA-graph pools that vLLM's profiler misses (vLLM PR #21489: ~1.3 GB).
NON_TORCH_TP1_BYTES = 0.15 * BYTES_PER_GIB
NON_TORCH_TPN_BYTES = 0.6 * BYTES_PER_GIB
CUDA_GRAPH_BYTES = 1.0 * BYTES_PER_GIB
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9  # vLLM default (0.92 in the newest releases)
# TensorRT-LLM budgets the KV cache as a fraction of the memory left after the engine loads:
# (capacity − non-KV) × kv_cache_free_gpu_mem_fraction, default 0.9 (anchors F4, AIC
# memory.py); its activation buffers for max_num_tokens are about 1 GiB dense, 2 GiB MoE.
TRTLLM_KV_FREE_FRACTION = 0.9
TRTLLM_ACTIVATION_DENSE_BYTES = 1.0 * BYTES_PER_GIB
TRTLLM_ACTIVATION_MOE_BYTES = 2.0 * BYTES_PER_GIB
# SGLang reserves memory outside its static pool (weights + KV) by GPU size, in MiB:
# 512 + 1.5 × max(chunked_prefill_size, 2048) + 2 × cuda_graph_max_bs + TP × PP / 8 × 1024,
# at least 10 GiB past 60 GiB; mem_fraction_static = (capacity − reserve) / capacity
# (sglang/srt/server_args.py, _handle_gpu_memory_settings, PR #10975 defaults).
SGLANG_MIB = 2**20
SGLANG_RESERVE_BASE_MIB = 512
SGLANG_LARGE_GPU_MIN_RESERVE_MIB = 10 * 1024
SGLANG_LARGE_GPU_MIB = 60 * 1024
# (GPU memory below, MiB) -> (chunked_prefill_size, cuda_graph_max_bs at TP < 4, at TP >= 4).
SGLANG_GPU_BUCKETS = (
    (20 * 1024, 2048, 8, 8),
    (35 * 1024, 2048, 24, 80),
    (60 * 1024, 4096, 32, 160),
    (160 * 1024, 8192, 256, 512),
    (float("inf"), 16384, 512, 512),
)


def sglang_reserved_bytes(capacity_bytes: float, gpus: int) -> tuple[float, float]:
    """SGLang's default reserve outside its static pool, per GPU: (prefill activation, the
    rest: metadata, CUDA graphs, parallel buffers), in bytes (module constants)."""
    capacity_mib = capacity_bytes / SGLANG_MIB
    chunk, graphs_small, graphs_large = next(
        (c, s, g) for limit, c, s, g in SGLANG_GPU_BUCKETS if capacity_mib < limit
    )
    graphs = graphs_small if gpus < 4 else graphs_large
    activation_mib = max(chunk, 2048) * 1.5
    total_mib = SGLANG_RESERVE_BASE_MIB + activation_mib + graphs * 2 + gpus / 8 * 1024
    if capacity_mib > SGLANG_LARGE_GPU_MIB:
        total_mib = max(total_mib, SGLANG_LARGE_GPU_MIN_RESERVE_MIB)
    return activation_mib * SGLANG_MIB, (total_mib - activation_mib) * SGLANG_MIB


def bytes_per_weight(precision: str) -> float:
    """Bytes stored per weight for a precision, quantisation scales included.

    Args:
        precision: "bf16", "fp16", "fp8", "int8", "int4" or "fp4".

    Returns:
        Bytes per weight.

    Raises:
        ValueError: For an unknown precision.
    """
    try:
        return _WEIGHT_BYTES[precision]
    except KeyError:
        raise EngineInputError(f"unknown precision {precision!r}") from None


def weight_format(precision: str, accelerator: AcceleratorSpec | None = None) -> str:
    """Stored weight format of a precision on a device: ``fp4`` is NVFP4 on NVIDIA parts with
    FP4 tensor cores and MXFP4 everywhere else (module docstring)."""
    if precision != "fp4" or accelerator is None:
        return precision
    nvfp4 = bool(accelerator.fp4_dense_tflops) and accelerator.vendor.lower().startswith("nvidia")
    return "fp4" if nvfp4 else "mxfp4"


def default_kv_precision(precision: str) -> str:
    """KV-cache dtype of vLLM's ``--kv-cache-dtype auto``: the model's dtype.

    The model dtype is the activation dtype, BF16, for every weight precision the engine sizes
    (FP8, INT4 and FP4 checkpoints quantise the weights, not the activations the KV cache
    stores; vllm/config ``CacheConfig.cache_dtype`` "auto" uses ``model_config.dtype``). An
    FP8 KV cache is an explicit choice (``kv_cache_dtype="fp8"``).
    """
    del precision  # every sized precision keeps BF16 activations
    return AUTO_KV_CACHE_DTYPE


def resolve_kv_cache_dtype(kv_cache_dtype: str | None, precision: str) -> str:
    """The KV dtype a request's ``kv_cache_dtype`` ("auto", "bf16", "fp8" or None) stands for.

    Raises:
        EngineInputError: For a dtype that is not one of :data:`KV_CACHE_DTYPES`.
    """
    if kv_cache_dtype in (None, "", "auto"):
        return default_kv_precision(precision)
    if kv_cache_dtype not in _KV_BYTES:
        raise EngineInputError(
            f"kv_cache_dtype must be one of {', '.join(KV_CACHE_DTYPES)}, not {kv_cache_dtype!r}"
        )
    return "bf16" if kv_cache_dtype == "fp16" else kv_cache_dtype


@dataclass(frozen=True, slots=True)
class ParamCounts:
    """Parameter counts of a model (plain counts, not billions).

    Attributes:
        total: All parameters.
        active: Parameters used per token (all for dense models).
        embedding: Token-embedding plus LM-head parameters (kept in BF16 when quantised).
        matmul_active: Active parameters that take part in a matrix multiply per token
            (active minus the embedding lookup table; the LM head counts).
        expert_per_layer: Parameters of one routed expert in one layer (0 for dense models).
        analytic: True when counted from the architecture (F1), False when taken from the card.
    """

    total: float
    active: float
    embedding: float
    matmul_active: float
    expert_per_layer: float
    analytic: bool


def param_counts(model: ModelSpec) -> ParamCounts:
    """Count parameters from the architecture, falling back to the model card.

    Analytic count (anchors_sizing.md F1, after llm-analysis): attention
    h·(H_q·d) + 2h·(H_kv·d) + (H_q·d)·h, MLP 3hF gated or 2hF plain (times E for MoE), router h·E,
    norms 2h per layer, embeddings V·h (twice when untied). MLA models (DeepSeek) and any model
    whose analytic count is more than 15 % off its card use the card figures instead.

    Args:
        model: Architecture.

    Returns:
        The counts.
    """
    h = model.hidden
    dense_ffn = mats_dense = (3 if model.gated_mlp else 2) * h * model.intermediate
    embedding = model.vocab * h * (1 if model.tie_word_embeddings else 2)
    lookup_only = 0 if model.tie_word_embeddings else model.vocab * h
    mats = 3 if model.gated_mlp else 2
    expert = 0.0
    if model.is_moe:
        expert = mats * h * (model.moe_intermediate or model.intermediate)
    card_total = model.params_total_b * 1e9
    card_active = model.params_active_b * 1e9
    if not model.is_mla:
        attention = 2 * h * model.heads * model.head_dim + 2 * h * model.kv_heads * model.head_dim
        if model.is_moe:
            experts = model.experts or 0
            shared = (model.shared_experts or 0) * expert
            mlp_total = experts * expert + shared + h * experts
            mlp_active = (model.experts_per_token or 0) * expert + shared + h * experts
        else:
            mlp_total = mlp_active = mats_dense
        # Leading dense layers (first_k_dense_replace) carry a dense FFN instead of experts.
        moe = model.moe_layers if model.is_moe else model.layers
        dense = model.layers - moe
        per_layer = attention + 2 * h
        total = moe * (per_layer + mlp_total) + dense * (per_layer + dense_ffn) + embedding + h
        active = moe * (per_layer + mlp_active) + dense * (per_layer + dense_ffn) + embedding + h
        if card_total <= 0 or abs(total / card_total - 1.0) <= 0.15:
            return ParamCounts(total, active, embedding, active - lookup_only, expert, True)
    return ParamCounts(
        card_total,
        card_active,
        embedding,
        card_active - lookup_only,
        expert,
        False,
    )


def weights_bytes(
    model: ModelSpec, precision: str, accelerator: AcceleratorSpec | None = None
) -> float:
    """Bytes of the weights of one replica (all TP ranks together).

    Quantised precisions keep embeddings and the LM head in BF16 (module docstring).

    Args:
        model: Architecture.
        precision: Weight precision.
        accelerator: Device, which decides the FP4 format (:func:`weight_format`); NVFP4 when
            None.

    Returns:
        Bytes.
    """
    counts = param_counts(model)
    per_weight = bytes_per_weight(weight_format(precision, accelerator))
    if per_weight >= 2.0:
        return counts.total * per_weight
    return (counts.total - counts.embedding) * per_weight + counts.embedding * 2.0


@dataclass(frozen=True, slots=True)
class KvCacheLayout:
    """How the KV cache of one token is laid out on one GPU of a TP group.

    Attributes:
        bytes_per_token_per_layer_per_gpu: KV bytes one token adds in one layer on one GPU.
        full_attention_layers: Layers that keep the whole context.
        sliding_layers: Layers that keep only the last ``sliding_window`` tokens.
        sliding_window: Window in tokens (0 when there are no sliding layers).
        kv_heads_per_gpu: KV heads stored per GPU (MLA: 1 latent "head").
        tensor_parallel: TP degree the layout is for.
        replicated: True when the same KV is stored on several TP ranks (GQA past H_kv, MLA).
    """

    bytes_per_token_per_layer_per_gpu: float
    full_attention_layers: int
    sliding_layers: int
    sliding_window: int
    kv_heads_per_gpu: float
    tensor_parallel: int
    replicated: bool

    def bytes_per_sequence_per_gpu(self, context_tokens: float) -> float:
        """KV bytes one sequence of ``context_tokens`` holds on one GPU."""
        capped = min(context_tokens, self.sliding_window) if self.sliding_layers else 0.0
        return self.bytes_per_token_per_layer_per_gpu * (
            self.full_attention_layers * context_tokens + self.sliding_layers * capped
        )

    def bytes_per_token_per_gpu(self, context_tokens: float | None = None) -> float:
        """Average KV bytes per token per GPU at a context length (all layers when None)."""
        if context_tokens is None or context_tokens <= 0:
            return self.bytes_per_token_per_layer_per_gpu * (
                self.full_attention_layers + self.sliding_layers
            )
        return self.bytes_per_sequence_per_gpu(context_tokens) / context_tokens


def _sliding_split(model: ModelSpec) -> tuple[int, int, int]:
    """(full layers, sliding layers, window) from the catalog's attention description."""
    window = model.sliding_window or 0
    if not window:
        return model.layers, 0, 0
    kind = model.attention_kind.lower()
    if any(word in kind for word in ("interleave", "alternat", "local/global")):
        # Gemma-2 and gpt-oss alternate sliding and global layers one to one.
        sliding = model.layers // 2
        return model.layers - sliding, sliding, window
    return 0, model.layers, window  # Mistral-7B-v0.1: every layer slides


def kv_cache_layout(model: ModelSpec, kv_precision: str = "bf16", tp: int = 1) -> KvCacheLayout:
    """KV-cache layout per GPU for a TP degree.

    GQA/MHA (anchors F3): 2·H_kv·d·β per token per layer; under TP each GPU holds
    max(1, H_kv/TP) heads, so KV heads are replicated once TP exceeds H_kv. MLA (DeepSeek):
    (kv_lora_rank + qk_rope_head_dim)·β per token per layer, and vLLM stores the full latent on
    every TP rank.

    Args:
        model: Architecture.
        kv_precision: KV-cache dtype ("bf16" or "fp8").
        tp: Tensor-parallel degree.

    Returns:
        The layout.
    """
    beta = _KV_BYTES[kv_precision]
    full, sliding, window = _sliding_split(model)
    if model.is_mla:
        per_layer = (model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)
        return KvCacheLayout(per_layer * beta, full, sliding, window, 1.0, tp, tp > 1)
    heads_per_gpu = max(1.0, math.ceil(model.kv_heads / tp))
    per_layer = 2 * heads_per_gpu * model.head_dim * beta
    return KvCacheLayout(per_layer, full, sliding, window, heads_per_gpu, tp, tp > model.kv_heads)


def kv_cache_bytes_per_token(
    model: ModelSpec,
    kv_precision: str = "bf16",
    tp: int = 1,
    context_tokens: float | None = None,
) -> float:
    """KV bytes one token occupies across the whole replica (all TP ranks, replicas included).

    Args:
        model: Architecture.
        kv_precision: KV-cache dtype.
        tp: Tensor-parallel degree (replication past H_kv and for MLA is counted).
        context_tokens: Context length for averaging over sliding-window layers (None: all
            layers keep the token).

    Returns:
        Bytes per token for the replica.
    """
    layout = kv_cache_layout(model, kv_precision, tp)
    return layout.bytes_per_token_per_gpu(context_tokens) * tp


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """Per-GPU memory budget of one replica, vLLM style (anchors F4, section 1.10).

    Attributes:
        tensor_parallel: TP degree.
        capacity_bytes_per_gpu: Capacity, memory_gb × 2**30 (vendor GB of HBM are GiB).
        gpu_memory_utilization: Fraction vLLM may use (default 0.9).
        usable_bytes_per_gpu: capacity × utilisation.
        weights_bytes_per_replica: Weights of the whole replica.
        weights_bytes_per_gpu: Weights per GPU (weights / TP).
        activation_peak_bytes_per_gpu: Peak activation of the profiling pass.
        runtime_reserve_bytes_per_gpu: Non-torch memory plus CUDA graphs.
        kv_budget_bytes_per_gpu: What is left for the KV cache (negative when nothing fits).
        kv_bytes_per_sequence_per_gpu: KV bytes one sequence of ``context_tokens`` needs.
        kv_bytes_per_token_replica: Average KV bytes per token for the replica at that context.
        kv_cache_tokens: Tokens the KV budget holds (full-attention equivalent).
        kv_blocks: 16-token blocks per GPU.
        context_tokens: Sequence length the concurrency figure is for.
        max_concurrent_sequences: Sequences of that length that fit at once.
        infeasible_reason: None when the replica fits, else which term is too big and by how much.
    """

    tensor_parallel: int
    capacity_bytes_per_gpu: float
    gpu_memory_utilization: float
    usable_bytes_per_gpu: float
    weights_bytes_per_replica: float
    weights_bytes_per_gpu: float
    activation_peak_bytes_per_gpu: float
    runtime_reserve_bytes_per_gpu: float
    kv_budget_bytes_per_gpu: float
    kv_bytes_per_sequence_per_gpu: float
    kv_bytes_per_token_replica: float
    kv_cache_tokens: int
    kv_blocks: int
    context_tokens: int
    max_concurrent_sequences: int
    infeasible_reason: str | None

    @property
    def feasible(self) -> bool:
        """True when at least one sequence of ``context_tokens`` fits."""
        return self.infeasible_reason is None


def _gb(value_bytes: float) -> str:
    return f"{value_bytes / BYTES_PER_GIB:,.1f} GiB"


def plan_memory(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    precision: str,
    tp: int,
    context_tokens: int,
    kv_precision: str | None = None,
    gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION,
    serving_stack: str = "vllm",
    memory_bytes_per_gb: float = ACCELERATOR_BYTES_PER_GB,
    parallel=None,
) -> MemoryPlan:
    """KV budget and maximum concurrency of one replica.

    vLLM (default): budget per GPU = capacity × utilisation − weights/TP − activation peak −
    non-torch − CUDA graphs (vllm/v1/worker/gpu_worker.py); blocks = budget / (16 × KV bytes
    per token); concurrency = blocks / ceil(context/16) (vllm/v1/core/kv_cache_utils.py).
    TensorRT-LLM: budget = (capacity − weights/TP − activation − non-torch) × 0.9.
    SGLang: budget = capacity × mem_fraction_static − weights/TP, its default fraction leaving
    the reserve of :func:`sglang_reserved_bytes` (sglang/srt/server_args.py).

    Args:
        model: Architecture.
        accelerator: Device.
        precision: Weight precision.
        tp: Tensor-parallel degree (GPUs per replica).
        context_tokens: Tokens per sequence (prompt + output) the concurrency is counted for.
        kv_precision: KV dtype; :func:`default_kv_precision` when None.
        gpu_memory_utilization: vLLM's ``gpu_memory_utilization``.
        serving_stack: "vllm", "sglang" or "trtllm" (how the engine budgets its KV cache).
        memory_bytes_per_gb: Bytes per vendor GB: 2**30 (HBM and GDDR come in GiB).
        parallel: A layout spanning servers (planner.engine.parallelism.ParallelLayout):
            weights per GPU and the KV share per GPU (÷ PP stages, ÷ DP attention groups)
            come from it; ``tp`` is then its TP degree. None within one server.

    Returns:
        The plan; ``infeasible_reason`` explains a replica that does not fit.
    """
    kv_precision = resolve_kv_cache_dtype(kv_precision, precision)
    capacity = accelerator.memory_gb * memory_bytes_per_gb
    usable = capacity * gpu_memory_utilization
    weights = weights_bytes(model, precision, accelerator)
    weights_gpu = weights / tp
    gpus, kv_divisor = tp, 1
    if parallel is not None:
        weights_gpu = parallel.weights_bytes_per_gpu(model, precision, accelerator, weights)
        gpus, kv_divisor = parallel.gpus, parallel.kv_divisor
    non_torch = NON_TORCH_TP1_BYTES if gpus == 1 else NON_TORCH_TPN_BYTES
    if serving_stack == "trtllm":
        activation = TRTLLM_ACTIVATION_MOE_BYTES if model.is_moe else TRTLLM_ACTIVATION_DENSE_BYTES
        reserve = non_torch
        usable = capacity
        budget = (capacity - weights_gpu - activation - reserve) * TRTLLM_KV_FREE_FRACTION
        gpu_memory_utilization = 1.0
    elif serving_stack == "vllm":
        activation = ACTIVATION_PEAK_MOE_BYTES if model.is_moe else ACTIVATION_PEAK_DENSE_BYTES
        reserve = non_torch + CUDA_GRAPH_BYTES
        budget = usable - weights_gpu - activation - reserve
    elif serving_stack == "sglang":
        # capacity × mem_fraction_static − weights = capacity − reserve − weights
        activation, reserve = sglang_reserved_bytes(capacity, gpus)
        usable = capacity
        budget = capacity - weights_gpu - activation - reserve
        gpu_memory_utilization = 1.0
    else:
        raise EngineInputError(f"unknown serving stack {serving_stack!r}")
    layout = kv_cache_layout(model, kv_precision, tp)
    context = max(1, int(context_tokens))
    seq_bytes = layout.bytes_per_sequence_per_gpu(context) / kv_divisor
    per_token_full = layout.bytes_per_token_per_gpu(None) / kv_divisor
    blocks = max(0, int(budget // (KV_BLOCK_TOKENS * per_token_full))) if budget > 0 else 0
    # Blocks per sequence: sliding layers need fewer, so count in bytes rather than blocks.
    seq_blocks_bytes = (
        layout.bytes_per_sequence_per_gpu(KV_BLOCK_TOKENS * math.ceil(context / KV_BLOCK_TOKENS))
        / kv_divisor
    )
    max_seqs = int(budget // seq_blocks_bytes) if budget > 0 and seq_blocks_bytes > 0 else 0
    reason = None
    total_usable = usable * gpus
    if weights > total_usable:
        shape = f"TP {tp}" if parallel is None else f"{gpus} GPUs ({parallel.label})"
        reason = (
            f"weights {_gb(weights)} per replica exceed {gpu_memory_utilization:g} × "
            f"{accelerator.memory_gb:g} GiB × {shape} = {_gb(total_usable)} "
            f"by {_gb(weights - total_usable)}"
        )
    elif budget <= 0:
        need = weights_gpu + activation + reserve
        reason = (
            f"weights {_gb(weights_gpu)} + activation peak {_gb(activation)} + runtime reserve "
            f"{_gb(reserve)} per GPU exceed {gpu_memory_utilization:g} × "
            f"{accelerator.memory_gb:g} GiB = {_gb(usable)} by {_gb(need - usable)}"
        )
    elif max_seqs < 1:
        reason = (
            f"KV-cache budget {_gb(budget)} per GPU is smaller than one {context:,}-token "
            f"sequence ({_gb(seq_blocks_bytes)} per GPU) by {_gb(seq_blocks_bytes - budget)}"
        )
    return MemoryPlan(
        tensor_parallel=tp,
        capacity_bytes_per_gpu=capacity,
        gpu_memory_utilization=gpu_memory_utilization,
        usable_bytes_per_gpu=usable,
        weights_bytes_per_replica=weights,
        weights_bytes_per_gpu=weights_gpu,
        activation_peak_bytes_per_gpu=activation,
        runtime_reserve_bytes_per_gpu=reserve,
        kv_budget_bytes_per_gpu=budget,
        kv_bytes_per_sequence_per_gpu=seq_bytes,
        kv_bytes_per_token_replica=seq_bytes / context * gpus,
        kv_cache_tokens=blocks * KV_BLOCK_TOKENS,
        kv_blocks=blocks,
        context_tokens=context,
        max_concurrent_sequences=max(0, max_seqs),
        infeasible_reason=reason,
    )
