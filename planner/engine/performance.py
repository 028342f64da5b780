"""Step times, latency and throughput of one replica: a calibrated roofline.

The model (anchors_sizing.md section 5, F5-F8) for one replica of ``tp`` accelerators:

* A *step* of the serving engine processes ``B`` decode tokens plus ``P`` prefill tokens
  (continuous batching with chunked prefill). Its time is
  ``max(bytes / (bandwidth·η_m), FLOPs / (peak·η_c)) + 2·L all-reduces + L·overhead``:
  memory and compute overlap, communication and per-layer launch overhead do not.
* Bytes per step: weights per GPU (MoE: only the experts the step's tokens touch) plus the KV
  cache of the ``B`` sequences at their average context.
* FLOPs per step: 2·active matmul parameters per token plus attention (4·H·d·context per
  decode token and layer; causal prefill averages half the prompt).
* Continuous-batching steady state: at concurrency ``B`` each request needs ``output_len``
  steps and one prompt, so every step also carries ``B·input_len/output_len`` prefill tokens of
  arriving requests. When compute-bound this is exactly "decode step + prefill of one
  request / output_len per sequence"; when the decode step is memory-bound the prefill uses
  the idle compute (Sarathi-Serve piggybacking).
* Under an offered load λ the concurrency follows Little's law, B = λ·(TTFT + out·TPOT), solved
  as a fixed point. TTFT holds the scheduler's queues under Poisson arrivals: the FCFS wait for
  the step's chunked-prefill token budget (M/G/1, Pollaczek–Khinchine) and the wait for KV
  capacity (G/G/c by Allen–Cunneen on Erlang C, c = the replica's maximum concurrency), each
  percentile from the queue's own exponential tail; past capacity the replica answers with its
  saturation point.

Every efficiency factor comes from a :class:`Calibration` (fitted by ``calibration.py``),
never from constants in the formulas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from planner.engine.errors import CatalogGapError
from planner.engine.memory import (
    bytes_per_weight,
    kv_cache_layout,
    param_counts,
    resolve_kv_cache_dtype,
    weight_format,
    weights_bytes,
)
from planner.engine.specs import AcceleratorSpec, ModelSpec

__all__ = [
    "Calibration",
    "EfficiencyFactors",
    "LoadPoint",
    "PerformancePoint",
    "ReplicaShape",
    "ResolvedFactors",
    "accelerator_seconds_per_request",
    "SteadyState",
    "allreduce_time_ms",
    "erlang_c",
    "expected_distinct_experts",
    "admission_wait_ms",
    "first_token_ms",
    "latency_under_load",
    "prefill_queue_wait_ms",
    "prompt_length_scv",
    "scheduler_token_budget",
    "slot_wait_ms",
    "percentile_wait_factor",
    "prompt_tail_factor",
    "replica_shape",
    "steady_state",
    "step_time_ms",
    "local_step_time_ms",
    "tpot_tail_factor",
    "unloaded_latency",
]

ACTIVATION_BYTES = 2.0  # BF16 activations on the all-reduce wire


# vLLM's default max_num_seqs: 1024 on GPUs of 70 GiB or more other than the A100, else 256
# (vllm/engine/arg_utils.py, get_batch_defaults). TensorRT-LLM batches up to 2048 requests
# (trtllm-serve and the LLM API's max_batch_size of 2048 for throughput runs; MLPerf B200 Mixtral
# held ~1,760 requests per GPU by Little's law on its measured rate and latencies).
VLLM_LARGE_GPU_MAX_NUM_SEQS = 1024
VLLM_SMALL_GPU_MAX_NUM_SEQS = 256
VLLM_LARGE_GPU_MIN_GIB = 70
TRTLLM_MAX_BATCH_SIZE = 2048
# SGLang's max_running_requests defaults to min(KV tokens ÷ 2, its request pool), the pool
# being KV tokens ÷ context length × 512 clamped to 2048..4096 (sglang/srt/model_executor/
# model_runner.py); the KV fit caps the batch first, so the pool's floor is the scheduler cap.
SGLANG_MIN_RUNNING_REQUESTS = 2048


def scheduler_max_sequences(
    accelerator: AcceleratorSpec, serving_stack: str, calibration: Calibration
) -> int:
    """Most sequences the serving engine schedules at once on one replica by default."""
    if calibration.max_num_seqs:
        return calibration.max_num_seqs
    if serving_stack == "trtllm":
        return TRTLLM_MAX_BATCH_SIZE
    if serving_stack == "sglang":
        return SGLANG_MIN_RUNNING_REQUESTS
    large = (accelerator.memory_gb or 0) >= VLLM_LARGE_GPU_MIN_GIB and not (
        accelerator.slug.startswith("a100")
    )
    return VLLM_LARGE_GPU_MAX_NUM_SEQS if large else VLLM_SMALL_GPU_MAX_NUM_SEQS


def precision_group(precision: str) -> str:
    """Calibration group name of a precision (fp16 and bf16 share one group)."""
    return "bf16" if precision in {"bf16", "fp16"} else precision


@dataclass(frozen=True, slots=True)
class EfficiencyFactors:
    """Achievable fractions of the datasheet peaks.

    Attributes:
        memory_bw_fraction: η_m, achieved / peak memory bandwidth in decode.
        compute_fraction: η_c, achieved / peak dense matrix throughput.
    """

    memory_bw_fraction: float
    compute_fraction: float


@dataclass(frozen=True, slots=True)
class ResolvedFactors:
    """Factors chosen for one (family, precision), with where they come from.

    Attributes:
        factors: The efficiency factors.
        provenance: One sentence, e.g. "calibrated on 93 reference runs of hopper/fp8".
        expected_error_pct: Median absolute % error of the nearest group of reference runs.
        reference_runs: Reference runs behind the factors (0 for roofline-only).
    """

    factors: EfficiencyFactors
    provenance: str
    expected_error_pct: float
    reference_runs: int


@dataclass(frozen=True, slots=True)
class Calibration:
    """Every tunable factor of the performance model, fitted or default.

    Attributes:
        global_factors: Factors for hardware without reference runs.
        group_factors: "family/precision" -> factors fitted on that group's runs.
        family_offsets: Family -> (log η_m, log η_c) offsets from the global factors that
            every precision of the family shares.
        precision_offsets: Precision group -> (log η_m, log η_c) offsets that every family
            shares at that precision. An unmeasured (family, precision) pair composes the two.
        link_bw_fraction: Achieved / peak scale-up bandwidth in all-reduce on a fabric
            (NVLink, xGMI, ICI, RoCE).
        pcie_link_bw_fraction: Same for devices whose scale-up path is PCIe.
        allreduce_base_us: Fixed latency of one all-reduce (GenZ α: 5 µs).
        allreduce_hop_us: Extra latency per ring hop, charged 2(TP−1) times.
        step_overhead_us_per_layer: Kernel-launch gap per layer per step (CUDA graphs replay
            the layer's kernels back to back: a few µs per layer).
        step_overhead_ms: Fixed time per step outside the kernels: the scheduler, input
            preparation and the sampler's launch (sub-millisecond in vLLM V1 / TensorRT-LLM).
        step_overhead_us_per_seq: Host-side time per sequence in the step (scheduling,
            block-table and sampling bookkeeping); grows with the batch, ~0 at batch 1.
        prefill_compute_ratio: η_c of prefill tokens / η_c of decode tokens (large prefill
            GEMMs run closer to peak than decode GEMMs).
        moe_compute_ratio: η_c multiplier for MoE models (grouped GEMMs, routing).
        kv_read_bw_ratio: η_m multiplier for KV-cache reads (paged attention reads less
            efficiently than streamed weights).
        step_model: "roofline" (one max(memory, compute) over the whole step) or "kernels"
            (each kernel its own roofline, summed: see :func:`kernel_step_time_ms`).
        gemm_half_tokens: Kernels model: tokens in a GEMM at which it reaches half of η_c
            (tile and wave quantisation at small M; 0 for a flat η_c).
        attention_compute_ratio: Kernels model: η_c of the prefill attention kernel (flash
            attention) / η_c of the weight GEMMs.
        activation_traffic_ratio: Kernels model: multiplier on the activation bytes a token
            moves through the unfused element-wise kernels (norms, RoPE, SwiGLU, residual
            adds, activation quantisation); 0 leaves them out.
        max_num_seqs: Cap on concurrent sequences per replica (engine scheduler limit); 0
            takes each serving stack's default (:func:`scheduler_max_sequences`).
        gpu_memory_utilization: vLLM ``gpu_memory_utilization``.
        tpot_p99_over_mean: p99 / mean TPOT across requests (chunked-prefill jitter).
        prompt_p99_over_mean: p99 / mean prompt length for variable-length traffic (OpenOrca,
            the MLPerf Llama-2-70B set: 791 / 222.33 = 3.56, catalog/data/README.md).
        group_runs: "family/precision" -> reference runs used.
        group_error_pct: "family/precision" -> median abs % error of the fit on that group.
        global_error_pct: Median abs % error for hardware left out of the fit (k-fold).
        group_band_pct: "family/precision" -> (median, p90) abs % error of that group's runs
            published after the time split's cut-off (:mod:`planner.engine.uncertainty`).
        calibrated_band_pct: (median, p90) of the whole time split, None when not stored.
        other_precision_band_pct: (median, p90) of the precision split, None when not stored.
        roofline_band_pct: (median, p90) of the family split (accelerator families held out
            of the fit), None when not stored.
        architecture_runs: Architecture class -> reference runs of that class.
        software_gain_per_year: Family -> log-rate per year at which that family's achieved
            efficiency rose with newer software stacks (fitted by publication date; 0 when the
            family's runs span one date). The factors themselves are for the newest stack.
        software_dates: Family -> ISO date of the newest reference runs of that family: the
            software generation its factors (and so every estimate) assume.
        version: Version string of the calibration data.
        fitted_at: ISO date of the fit ("" for defaults).
    """

    global_factors: EfficiencyFactors = EfficiencyFactors(0.8, 0.7)
    group_factors: Mapping[str, EfficiencyFactors] = field(default_factory=dict)
    family_offsets: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    precision_offsets: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    link_bw_fraction: float = 0.8
    pcie_link_bw_fraction: float = 0.6
    allreduce_base_us: float = 5.0
    allreduce_hop_us: float = 1.0
    step_overhead_us_per_layer: float = 10.0
    step_overhead_ms: float = 1.0
    step_overhead_us_per_seq: float = 0.0
    prefill_compute_ratio: float = 1.0
    moe_compute_ratio: float = 1.0
    kv_read_bw_ratio: float = 1.0
    step_model: str = "roofline"
    gemm_half_tokens: float = 0.0
    attention_compute_ratio: float = 1.0
    activation_traffic_ratio: float = 0.0
    max_num_seqs: int = 0
    gpu_memory_utilization: float = 0.9
    tpot_p99_over_mean: float = 1.15
    prompt_p99_over_mean: float = 791.0 / 222.33
    group_runs: Mapping[str, int] = field(default_factory=dict)
    group_error_pct: Mapping[str, float] = field(default_factory=dict)
    global_error_pct: float = 35.0
    group_band_pct: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    calibrated_band_pct: tuple[float, float] | None = None
    other_precision_band_pct: tuple[float, float] | None = None
    roofline_band_pct: tuple[float, float] | None = None
    architecture_runs: Mapping[str, int] = field(default_factory=dict)
    software_gain_per_year: Mapping[str, float] = field(default_factory=dict)
    software_dates: Mapping[str, str] = field(default_factory=dict)
    version: str = "roofline-defaults"
    fitted_at: str = ""

    def factors_for(self, family: str, precision: str) -> ResolvedFactors:
        """Pick the factors for a family and precision, with provenance and error band.

        Order: the (family, precision) group; else the family's offset composed with the
        precision's (each fitted across the groups that share it); else the family's groups at
        other precisions (geometric mean, for calibrations without offsets); else the global
        factors.

        Args:
            family: Accelerator family, e.g. "hopper".
            precision: Weight precision.

        Returns:
            The resolved factors.
        """
        key = f"{family}/{precision_group(precision)}"
        if key in self.group_factors:
            runs = self.group_runs.get(key, 0)
            return ResolvedFactors(
                self.group_factors[key],
                f"calibrated on {runs} reference runs of {key}",
                self.group_error_pct.get(key, self.global_error_pct),
                runs,
            )
        group = precision_group(precision)
        if family in self.family_offsets or group in self.precision_offsets:
            fm, fc = self.family_offsets.get(family, (0.0, 0.0))
            pm, pc = self.precision_offsets.get(group, (0.0, 0.0))
            g = self.global_factors
            factors = EfficiencyFactors(
                min(1.0, g.memory_bw_fraction * math.exp(fm + pm)),
                min(1.0, g.compute_fraction * math.exp(fc + pc)),
            )
            family_runs = sum(n for k, n in self.group_runs.items() if k.split("/")[0] == family)
            precision_runs = sum(n for k, n in self.group_runs.items() if k.split("/")[1] == group)
            parts = []
            if family_runs:
                parts.append(f"{family_runs} reference runs of {family} at other precisions")
            if precision_runs:
                parts.append(f"{precision_runs} of other families at {group}")
            measured = " and ".join(parts) if parts else "no reference runs"
            errors = [
                self.group_error_pct.get(k, self.global_error_pct)
                for k in self.group_factors
                if k.split("/")[0] == family or k.split("/")[1] == group
            ]
            return ResolvedFactors(
                factors,
                f"calibrated on {measured}; {family}/{group} itself not measured",
                max(max(errors, default=self.global_error_pct), self.global_error_pct / 2.0),
                family_runs,
            )
        siblings = [k for k in self.group_factors if k.split("/")[0] == family]
        if siblings:
            eta_m = math.exp(
                np.mean([math.log(self.group_factors[k].memory_bw_fraction) for k in siblings])
            )
            eta_c = math.exp(
                np.mean([math.log(self.group_factors[k].compute_fraction) for k in siblings])
            )
            runs = sum(self.group_runs.get(k, 0) for k in siblings)
            errors = [self.group_error_pct.get(k, self.global_error_pct) for k in siblings]
            return ResolvedFactors(
                EfficiencyFactors(eta_m, eta_c),
                f"calibrated on {runs} reference runs of {family} at "
                f"{', '.join(k.split('/')[1] for k in siblings)}; "
                f"{precision_group(precision)} not measured",
                max(max(errors), self.global_error_pct / 2.0),
                runs,
            )
        return ResolvedFactors(
            self.global_factors,
            "roofline only, global factors",
            self.global_error_pct,
            0,
        )


@dataclass(frozen=True, slots=True)
class ReplicaShape:
    """Per-GPU constants of one replica that the vectorised formulas need.

    Build it with :func:`replica_shape`; all byte and FLOP figures are per GPU.
    """

    model: ModelSpec
    accelerator: AcceleratorSpec
    precision: str
    kv_precision: str
    tp: int
    dense_weight_bytes: float  # non-expert weights per GPU
    expert_bytes_per_layer: float  # one routed expert in one layer, per GPU
    moe_layers: int
    experts: int
    top_k: int
    flops_per_token: float  # 2 · active matmul params / TP
    dense_flops_per_token: float  # the non-expert GEMMs without the LM head, / TP
    expert_flops_per_token: float  # the top-k routed experts over the MoE layers, / TP
    lm_head_flops_per_token: float  # 2 · vocab · hidden / TP (decode tokens and last prompt token)
    activation_bytes_per_token: float  # element-wise traffic of one token, all layers, per GPU
    attn_flops_per_token_per_ctx: float  # 4 · H · d · full layers / TP (MLA: absorbed decode)
    attn_flops_sliding: float  # same for sliding layers (context capped at the window)
    sliding_window: int
    kv_layout_bytes_full: float  # KV bytes per token per GPU summed over full layers
    kv_layout_bytes_sliding: float  # same over sliding layers
    peak_flops: float  # FLOP/s of the weight GEMMs at the precision, per GPU
    attention_peak_flops: float  # FLOP/s of attention (BF16 tensor cores), per GPU
    bandwidth_bytes_per_s: float
    link_peak_bytes_per_s: float  # scale-up peak per direction
    factors: ResolvedFactors
    calibration: Calibration
    software_years: float = 0.0  # run date − the family's newest calibrated stack (years)
    # Prefill attention FLOPs per context token / decode's (MLA prefill runs decompressed).
    prefill_attn_ratio: float = 1.0
    # A layout spanning servers (planner.engine.parallelism.ParallelLayout): its
    # ``step_time_ms`` replaces the single-server all-reduce term. None within one server.
    parallel: object | None = None

    def kv_bytes_per_sequence(self, context_tokens: np.ndarray | float) -> np.ndarray | float:
        """KV bytes per GPU of one sequence at a context length (sliding layers capped)."""
        capped = np.minimum(context_tokens, self.sliding_window) if self.sliding_window else 0.0
        return self.kv_layout_bytes_full * context_tokens + self.kv_layout_bytes_sliding * capped


def replica_shape(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    precision: str,
    tp: int,
    calibration: Calibration,
    kv_precision: str | None = None,
) -> ReplicaShape:
    """Precompute the per-GPU constants of a replica.

    Args:
        model: Architecture.
        accelerator: Device.
        precision: Weight precision.
        tp: Tensor-parallel degree.
        calibration: Efficiency factors.
        kv_precision: KV dtype; default from the weight precision.

    Returns:
        The shape.

    Raises:
        ValueError: When the accelerator publishes no matrix peak.
    """
    kv_precision = resolve_kv_cache_dtype(kv_precision, precision)
    peak_tflops = accelerator.compute_tflops(precision)
    if not peak_tflops:
        raise CatalogGapError(
            f"{accelerator.name} publishes no dense matrix peak for {precision}",
            item=accelerator.name,
            figure=f"{precision} peak",
        )
    counts = param_counts(model)
    total_bytes = weights_bytes(model, precision, accelerator)
    moe_layers = model.moe_layers
    expert_bytes = (
        counts.expert_per_layer * bytes_per_weight(weight_format(precision, accelerator)) / tp
    )
    experts = model.experts or 0
    dense_bytes = total_bytes / tp - expert_bytes * experts * moe_layers
    layout = kv_cache_layout(model, kv_precision, tp)
    per_layer = layout.bytes_per_token_per_layer_per_gpu
    # Attention FLOPs per decode token per context token and layer: QK^T and PV, 2 FLOPs each
    # multiply-add -> 4·H·d (llm-analysis / anchors F5).
    attn = 4.0 * model.heads * model.head_dim / tp
    prefill_attn_ratio = 1.0
    if model.is_mla:
        # MLA (DeepSeek-V2 §2.1.3; vLLM and SGLang MLA backends, FlashMLA): decode attends on the
        # cached latent with the up-projections absorbed, QK^T over kv_lora_rank + rope dims and
        # PV over kv_lora_rank, 2·H·(2·r + rope); prefill decompresses K and V and attends per
        # head at head_dim (nope + rope) and v_head_dim, 2·H·(head_dim + v_head_dim).
        latent, rope = model.kv_lora_rank or 0, model.qk_rope_head_dim or 0
        attn = 2.0 * model.heads * (2 * latent + rope) / tp
        prefill = 2.0 * model.heads * (model.head_dim + (model.v_head_dim or model.head_dim)) / tp
        prefill_attn_ratio = prefill / attn if attn > 0 else 1.0
    link = (accelerator.scale_up_bw_gbytes_per_s_per_direction or 32.0) * 1e9
    top_k = model.experts_per_token or 0
    expert_matmul = top_k * counts.expert_per_layer * moe_layers
    lm_head = float(model.vocab * model.hidden)
    dense_matmul = max(counts.matmul_active - expert_matmul - lm_head, 0.0)
    return ReplicaShape(
        model=model,
        accelerator=accelerator,
        precision=precision,
        kv_precision=kv_precision,
        tp=tp,
        dense_weight_bytes=max(dense_bytes, 0.0),
        expert_bytes_per_layer=expert_bytes,
        moe_layers=moe_layers,
        experts=experts,
        top_k=model.experts_per_token or 0,
        flops_per_token=2.0 * counts.matmul_active / tp,
        dense_flops_per_token=2.0 * dense_matmul / tp,
        expert_flops_per_token=2.0 * expert_matmul / tp,
        lm_head_flops_per_token=2.0 * lm_head / tp,
        activation_bytes_per_token=activation_bytes_per_token(model, tp),
        attn_flops_per_token_per_ctx=attn * layout.full_attention_layers,
        attn_flops_sliding=attn * layout.sliding_layers,
        prefill_attn_ratio=prefill_attn_ratio,
        sliding_window=layout.sliding_window,
        kv_layout_bytes_full=per_layer * layout.full_attention_layers,
        kv_layout_bytes_sliding=per_layer * layout.sliding_layers,
        peak_flops=peak_tflops * 1e12,
        attention_peak_flops=(accelerator.bf16_dense_tflops or peak_tflops) * 1e12,
        bandwidth_bytes_per_s=accelerator.memory_bandwidth_tbps * 1e12,
        link_peak_bytes_per_s=link,
        factors=calibration.factors_for(accelerator.family, precision),
        calibration=calibration,
    )


# Element-wise traffic per token and layer, in activation elements (BF16, 2 bytes): the two
# RMSNorms and residual adds read and write the hidden state on every TP rank (~10·h: 2 norms ×
# read + write, 2 residual adds × 2 reads + 1 write), SwiGLU reads the gate and up outputs and
# writes their product (3 × FFN width / TP). FP8 activation quantisation and RoPE are of the same
# order and are left to the calibrated ratio.
_ACTIVATION_HIDDEN_PASSES = 10.0
_ACTIVATION_FFN_PASSES = 3.0


def activation_bytes_per_token(model: ModelSpec, tp: int) -> float:
    """Bytes one token moves through the element-wise kernels of every layer, per GPU."""
    moe_layers = model.moe_layers if model.is_moe else 0
    dense_layers = model.layers - moe_layers
    width = model.moe_intermediate or model.intermediate
    moe_ffn = ((model.experts_per_token or 0) + (model.shared_experts or 0)) * width
    ffn = dense_layers * model.intermediate + moe_layers * moe_ffn
    hidden = model.layers * _ACTIVATION_HIDDEN_PASSES * model.hidden
    return ACTIVATION_BYTES * (hidden + _ACTIVATION_FFN_PASSES * ffn / tp)


def expected_distinct_experts(
    experts: int, top_k: int, tokens: np.ndarray | float
) -> np.ndarray | float:
    """Expected number of distinct experts a batch of tokens routes to in one layer.

    E·(1 − (1 − k/E)^T) for T tokens each picking k of E experts uniformly (anchors F8, our
    derivation): k experts at T = 1, approaching E for large batches.

    Args:
        experts: Routed experts E.
        top_k: Experts per token k.
        tokens: Tokens T in the step (scalar or array).

    Returns:
        Expected distinct experts (same shape as ``tokens``).
    """
    if experts <= 0 or top_k <= 0:
        return np.zeros_like(np.asarray(tokens, dtype=float))
    return experts * (1.0 - np.power(1.0 - top_k / experts, tokens))


def allreduce_time_ms(
    message_bytes: np.ndarray | float,
    tp: int,
    link_bytes_per_s: float,
    calibration: Calibration,
) -> np.ndarray | float:
    """Time of one ring all-reduce across ``tp`` devices.

    α + 2(TP−1)/TP · M / (B_link · η_link) with α = base + 2(TP−1)·hop latency (GenZ collective
    model; llm-analysis uses the same bandwidth term with an 8 µs floor).

    Args:
        message_bytes: Bytes reduced (tokens × hidden × 2 for BF16 activations).
        tp: Devices in the ring.
        link_bytes_per_s: Achievable scale-up bandwidth per device and direction, bytes/s
            (peak × η_link, as stored in :class:`ReplicaShape`).
        calibration: Supplies the latencies.

    Returns:
        Milliseconds (0 when tp == 1).
    """
    if tp <= 1:
        return np.zeros_like(np.asarray(message_bytes, dtype=float))
    alpha_us = calibration.allreduce_base_us + 2 * (tp - 1) * calibration.allreduce_hop_us
    wire_s = 2.0 * (tp - 1) / tp * message_bytes / link_bytes_per_s
    return alpha_us * 1e-3 + wire_s * 1e3


def step_time_ms(
    shape: ReplicaShape,
    batch: np.ndarray | float,
    prefill_tokens: np.ndarray | float,
    context_tokens: np.ndarray | float,
    prefill_context_tokens: float = 0.0,
) -> np.ndarray:
    """Time of one engine step (see :func:`local_step_time_ms`); a layout spanning servers
    (``shape.parallel``) adds its own communication (planner.engine.parallelism)."""
    if shape.parallel is not None:
        return shape.parallel.step_time_ms(
            shape,
            batch,
            prefill_tokens,
            context_tokens,
            prefill_context_tokens,
            lambda *args: local_step_time_ms(*args, comm=False),
        )
    return local_step_time_ms(shape, batch, prefill_tokens, context_tokens, prefill_context_tokens)


def local_step_time_ms(
    shape: ReplicaShape,
    batch: np.ndarray | float,
    prefill_tokens: np.ndarray | float,
    context_tokens: np.ndarray | float,
    prefill_context_tokens: float = 0.0,
    comm: bool = True,
) -> np.ndarray:
    """Time of one engine step on one server, in the calibration's step model."""
    if shape.calibration.step_model == "kernels":
        return kernel_step_time_ms(
            shape, batch, prefill_tokens, context_tokens, prefill_context_tokens, comm
        )
    return roofline_step_time_ms(
        shape, batch, prefill_tokens, context_tokens, prefill_context_tokens, comm
    )


def _software_generation(shape: ReplicaShape) -> float:
    """exp(rate × years): older stacks reach less of the peak (1 for planner estimates, which
    assume the family's newest calibrated stack)."""
    if not shape.software_years:
        return 1.0
    rate = shape.calibration.software_gain_per_year.get(shape.accelerator.family, 0.0)
    return math.exp(rate * shape.software_years)


def _comm_ms(shape: ReplicaShape, tokens: np.ndarray) -> np.ndarray | float:
    """Two all-reduces of the step's activations per layer over the scale-up fabric (F7)."""
    cal = shape.calibration
    link_fraction = (
        cal.pcie_link_bw_fraction if shape.accelerator.scale_up_pcie else cal.link_bw_fraction
    )
    return (
        2
        * shape.model.layers
        * allreduce_time_ms(
            tokens * shape.model.hidden * ACTIVATION_BYTES,
            shape.tp,
            shape.link_peak_bytes_per_s * link_fraction,
            cal,
        )
    )


def _overhead_ms(shape: ReplicaShape, batch: np.ndarray) -> np.ndarray:
    """Time outside the kernels: launch gaps per layer, the scheduler and sampler per step, and
    host bookkeeping per sequence."""
    cal = shape.calibration
    return (
        shape.model.layers * cal.step_overhead_us_per_layer * 1e-3
        + cal.step_overhead_ms
        + batch * cal.step_overhead_us_per_seq * 1e-3
    )


# Exponent of the GEMM tile-utilisation half point in the matrix peak (GEMM_HALF_SCALING).
GEMM_HALF_PEAK_EXPONENT = 0.5
GEMM_HALF_SCALING = True
_GEMM_HALF_REFERENCE_FLOPS = 1e15


def gemm_half_tokens(calibration: Calibration, peak_flops: float) -> float:
    """Rows M½ at which a weight GEMM reaches half of η_c on a part of ``peak_flops``.

    A tile's fixed costs (pipeline fill, epilogue, scale loads) take about the same time
    whatever its math rate, so the faster the tensor cores the more rows it takes to hide
    them: with GEMM_HALF_SCALING, M½ grows as (peak / 1 PFLOP/s)^0.5 from the calibrated
    value at 1 PFLOP/s (Blackwell NVFP4 needs about twice Hopper FP8's rows).
    """
    if not GEMM_HALF_SCALING:
        return calibration.gemm_half_tokens
    return (
        calibration.gemm_half_tokens
        * (peak_flops / _GEMM_HALF_REFERENCE_FLOPS) ** GEMM_HALF_PEAK_EXPONENT
    )


def attention_flops(
    shape: ReplicaShape,
    batch: np.ndarray,
    prefill_tokens: np.ndarray | float,
    context_tokens: np.ndarray | float,
    prefill_context_tokens: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Attention FLOPs of one step per GPU: the decode tokens over their context, the prefill
    tokens over half their prompt (causal attention), sliding layers capped at the window."""
    window = shape.sliding_window or 0
    ctx_sliding = np.minimum(context_tokens, window) if window else 0.0
    decode = batch * (
        shape.attn_flops_per_token_per_ctx * context_tokens + shape.attn_flops_sliding * ctx_sliding
    )
    half_prompt = prefill_context_tokens / 2.0  # causal attention sees half the prompt on average
    pf_sliding = min(half_prompt, window) if window else 0.0
    prefill = (
        prefill_tokens
        * shape.prefill_attn_ratio
        * (shape.attn_flops_per_token_per_ctx * half_prompt + shape.attn_flops_sliding * pf_sliding)
    )
    return decode, prefill


def kernel_step_time_ms(
    shape: ReplicaShape,
    batch: np.ndarray | float,
    prefill_tokens: np.ndarray | float,
    context_tokens: np.ndarray | float,
    prefill_context_tokens: float = 0.0,
    comm: bool = True,
) -> np.ndarray:
    """Time of one engine step as the sum of its kernels, each on its own roofline.

    The kernels of a step run one after another, so memory time of one does not hide behind
    compute time of another (LLM-Viewer's and GenZ's per-operator roofline, anchors §1.1 and
    §1.8), whereas within one kernel memory and compute overlap:

    * weight GEMMs of the non-expert layers: max(weight bytes / BW, FLOPs / (peak · η_c ·
      u(M))) for the M tokens of the step, u(M) = M / (M + M½) the tile utilisation of a
      GEMM with few rows; the LM head only for the decode tokens and each prompt's last token;
    * routed experts: the experts the step's tokens touch, each with M·k/touched rows;
    * decode attention: the KV cache of the batch read once (× kv_read_bw_ratio), or its
      FLOPs, whichever is longer;
    * prefill attention: causal flash attention at η_c × attention_compute_ratio;
    * element-wise kernels: the activation bytes of the M tokens (× activation_traffic_ratio);
    * two all-reduces per layer (F7) and the overheads outside the kernels.

    Args and returns as :func:`roofline_step_time_ms`.
    """
    batch = np.asarray(batch, dtype=float)
    prefill_tokens = np.asarray(prefill_tokens, dtype=float)
    tokens = batch + prefill_tokens
    rows = np.maximum(tokens, 1.0)
    cal = shape.calibration
    factors = shape.factors.factors
    generation = _software_generation(shape)
    bandwidth = shape.bandwidth_bytes_per_s * min(1.0, factors.memory_bw_fraction * generation)
    eta_c = min(1.0, factors.compute_fraction * generation)
    gemm_flops_s = shape.peak_flops * eta_c
    attention_flops_s = shape.attention_peak_flops * eta_c
    half = gemm_half_tokens(cal, shape.peak_flops)

    def utilisation(m):
        return m / (m + half) if half > 0 else 1.0

    prompts = prefill_tokens / prefill_context_tokens if prefill_context_tokens > 0 else 0.0
    logits = batch + prompts
    dense_s = np.maximum(
        shape.dense_weight_bytes / bandwidth,
        (rows * shape.dense_flops_per_token + logits * shape.lm_head_flops_per_token)
        / (gemm_flops_s * utilisation(rows)),
    )
    expert_s = 0.0
    if shape.moe_layers:
        touched = expected_distinct_experts(shape.experts, shape.top_k, rows)
        rows_per_expert = rows * shape.top_k / np.maximum(touched, 1e-9)
        expert_s = np.maximum(
            touched * shape.expert_bytes_per_layer * shape.moe_layers / bandwidth,
            rows
            * shape.expert_flops_per_token
            / (gemm_flops_s * cal.moe_compute_ratio * utilisation(rows_per_expert)),
        )
    kv_s = batch * shape.kv_bytes_per_sequence(context_tokens) / (bandwidth * cal.kv_read_bw_ratio)
    decode_attention_flops, prefill_attention_flops = attention_flops(
        shape, batch, prefill_tokens, context_tokens, prefill_context_tokens
    )
    decode_attention_s = np.maximum(kv_s, decode_attention_flops / attention_flops_s)
    prefill_attention_s = prefill_attention_flops / (
        attention_flops_s * cal.attention_compute_ratio
    )
    activation_s = (
        tokens * shape.activation_bytes_per_token * cal.activation_traffic_ratio / bandwidth
    )
    kernels_ms = (
        dense_s + expert_s + decode_attention_s + prefill_attention_s + activation_s
    ) * 1e3
    comm_ms = _comm_ms(shape, tokens) if comm else 0.0
    return kernels_ms + comm_ms + _overhead_ms(shape, batch)


def roofline_step_time_ms(
    shape: ReplicaShape,
    batch: np.ndarray | float,
    prefill_tokens: np.ndarray | float,
    context_tokens: np.ndarray | float,
    prefill_context_tokens: float = 0.0,
    comm: bool = True,
) -> np.ndarray:
    """Time of one engine step: ``batch`` decode tokens plus ``prefill_tokens`` prompt tokens.

    Roofline with overlap of memory and compute (anchors F5), plus two all-reduces per layer
    (F7) and per-layer and per-step overheads; all factors from the calibration (η_m for
    weights, η_m × kv_read_bw_ratio for the KV cache, η_c for decode tokens,
    η_c × prefill_compute_ratio for prompt tokens, × moe_compute_ratio for MoE models).

    Args:
        shape: Replica constants.
        batch: Sequences decoding in the step.
        prefill_tokens: Prompt tokens processed in the same step.
        context_tokens: Average context of the decoding sequences.
        prefill_context_tokens: Prompt length the prefill tokens belong to (for attention).

    Returns:
        Milliseconds, as an array shaped like the broadcast inputs.
    """
    batch = np.asarray(batch, dtype=float)
    tokens = batch + prefill_tokens
    cal = shape.calibration
    factors = shape.factors.factors
    weight_bytes = shape.dense_weight_bytes
    if shape.moe_layers:
        touched = expected_distinct_experts(shape.experts, shape.top_k, np.maximum(tokens, 1.0))
        weight_bytes = weight_bytes + touched * shape.expert_bytes_per_layer * shape.moe_layers
    generation = _software_generation(shape)
    eta_m = min(1.0, factors.memory_bw_fraction * generation)
    bandwidth = shape.bandwidth_bytes_per_s * eta_m
    kv_bytes = batch * shape.kv_bytes_per_sequence(context_tokens)
    memory_s = weight_bytes / bandwidth + kv_bytes / (bandwidth * cal.kv_read_bw_ratio)
    attn_decode, attn_prefill = attention_flops(
        shape, batch, prefill_tokens, context_tokens, prefill_context_tokens
    )
    eta_c = min(1.0, factors.compute_fraction * generation) * (
        cal.moe_compute_ratio if shape.moe_layers else 1.0
    )
    eta_prefill = min(1.0, eta_c * cal.prefill_compute_ratio)
    # Attention (QK^T, PV) runs on BF16 tensor cores whatever the weight precision.
    compute_s = (
        batch * shape.flops_per_token / shape.peak_flops + attn_decode / shape.attention_peak_flops
    ) / eta_c + (
        prefill_tokens * shape.flops_per_token / shape.peak_flops
        + attn_prefill / shape.attention_peak_flops
    ) / eta_prefill
    comm_ms = _comm_ms(shape, tokens) if comm else 0.0
    return np.maximum(memory_s, compute_s) * 1e3 + comm_ms + _overhead_ms(shape, batch)


@dataclass(frozen=True, slots=True)
class SteadyState:
    """Continuous-batching steady state of one replica over an array of concurrencies.

    Attributes:
        batch: Concurrent sequences B (array).
        tpot_ms: Mean time per output token (the step time with the arriving prefill mixed in).
        ttft_service_ms: TTFT without queueing: the step that carries the prompt plus half a
            step of waiting for the step in progress.
        slot_time_s: Time a request holds a KV slot, TTFT service + output_len × TPOT.
        output_tokens_per_s: Output tokens/s of the replica, requests/s × output_len.
        requests_per_s: Completed requests/s, B / slot time (Little's law).
        prefill_ms: Time one prompt's prefill adds to the step that carries it (its marginal
            service time on the replica).
        prefill_utilisation: ρ, the share of the replica's time spent on prompts' prefill
            (requests/s × prefill_ms).
        carrying_ms: The step that carries a mean prompt whole (the prompt alone on an idle
            replica at B ≤ 1).
    """

    batch: np.ndarray
    tpot_ms: np.ndarray
    ttft_service_ms: np.ndarray
    slot_time_s: np.ndarray
    output_tokens_per_s: np.ndarray
    requests_per_s: np.ndarray
    prefill_ms: np.ndarray | None = None
    prefill_utilisation: np.ndarray | None = None
    carrying_ms: np.ndarray | None = None

    def prefill_wait_ms(self, service_ms: np.ndarray | float | None = None) -> np.ndarray:
        """Extra time a prompt's prefill takes while it shares the replica with the prefills
        of the prompts around it (see :func:`prefill_wait_ms`); ``service_ms`` is that
        prompt's own prefill time (default: a mean prompt's)."""
        if not PREFILL_QUEUE or self.prefill_ms is None or self.prefill_utilisation is None:
            return np.zeros_like(self.tpot_ms)
        service = self.prefill_ms if service_ms is None else service_ms
        return prefill_wait_ms(self.prefill_utilisation, service)


# TTFT includes the time a prompt's prefill shares the replica with other prefills.
PREFILL_QUEUE = True
# Utilisation at which the prefill share is capped (the steady state itself saturates there).
_MAX_PREFILL_UTILISATION = 0.95


def prefill_wait_ms(utilisation: np.ndarray | float, service_ms: np.ndarray | float) -> np.ndarray:
    """Extra prefill time of a prompt that arrives while other prompts are being prefilled.

    Continuous batching prefills the prompts that are in flight together, each step sharing
    its token budget among them, so the replica serves prefill like a processor-sharing queue
    (M/G/1-PS): a prompt of prefill time S finishes after S / (1 − ρ) on average, whatever the
    spread of prompt lengths, ρ = λ·S̄ being the share of the replica's time spent on
    prefill. The extra time is S·ρ / (1 − ρ): a few ms for short prompts at moderate load, as
    long as the prefill itself for long prompts at high load (MLPerf Llama-3.1-405B: 9.4k
    tokens).

    Args:
        utilisation: ρ (array).
        service_ms: S, the prompt's own prefill time in ms (array).

    Returns:
        Extra time in ms.
    """
    rho = np.clip(np.asarray(utilisation, dtype=float), 0.0, _MAX_PREFILL_UTILISATION)
    return np.asarray(service_ms, dtype=float) * rho / (1.0 - rho)


def steady_state(
    shape: ReplicaShape,
    batch: np.ndarray | float,
    input_len: float,
    output_len: float,
) -> SteadyState:
    """Steady state at concurrency ``batch`` with chunked prefill of arriving requests.

    Each step carries B decode tokens and B·in/out prefill tokens (see module docstring); the
    decoding sequences sit on average at context in + out/2 (anchors F5).

    Args:
        shape: Replica constants.
        batch: Concurrency B (scalar or array, ≥ 1).
        input_len: Prompt tokens per request (mean).
        output_len: Output tokens per request (mean).

    Returns:
        The steady state arrays.
    """
    batch = np.atleast_1d(np.asarray(batch, dtype=float))
    output_len = max(float(output_len), 1.0)
    ctx = input_len + output_len / 2.0
    prefill_per_step = batch * input_len / output_len
    tpot = step_time_ms(shape, batch, prefill_per_step, ctx, input_len)
    # The step that carries the new prompt holds it whole, plus half a step in progress.
    carrying = step_time_ms(shape, batch, prefill_per_step + input_len, ctx, input_len)
    alone = step_time_ms(shape, 0.0, input_len, ctx, input_len)  # an idle replica's prefill
    ttft = np.where(batch <= 1.0, alone, carrying + 0.5 * tpot)
    slot_s = (ttft + output_len * tpot) * 1e-3
    requests_per_s = batch / slot_s
    prefill_ms = np.maximum(carrying - tpot, 0.0)
    return SteadyState(
        batch=batch,
        tpot_ms=tpot,
        ttft_service_ms=ttft,
        slot_time_s=slot_s,
        output_tokens_per_s=requests_per_s * output_len,
        requests_per_s=requests_per_s,
        prefill_ms=prefill_ms,
        prefill_utilisation=requests_per_s * prefill_ms * 1e-3,
        carrying_ms=np.where(batch <= 1.0, alone, carrying),
    )


def accelerator_seconds_per_request(
    shape: ReplicaShape,
    batch: float,
    requests_per_s: float,
    accelerators: int,
    input_len: float,
    output_len: float,
) -> tuple[float, float]:
    """(Prefill, decode) accelerator-seconds one request takes on a replica at its operating
    point: concurrency ``batch``, serving ``requests_per_s`` on ``accelerators``.

    The replica's time per request is ``accelerators ÷ requests/s``. Its prefill part is the
    time one prompt adds to the step that carries it (:func:`steady_state`'s ``prefill_ms``:
    input tokens × prefill FLOPs per token ÷ the step model's effective throughput, weights
    and attention included) × accelerators; decode is the rest (output tokens ÷ the decode
    tokens/s per accelerator). Prices input and output tokens by their compute, not by
    TTFT's share of the wall time.

    Raises:
        ValueError: ``requests_per_s`` or ``accelerators`` is not positive.
    """
    if not requests_per_s > 0 or accelerators < 1:
        raise ValueError("requests_per_s and accelerators must be positive")
    total_s = accelerators / requests_per_s
    state = steady_state(shape, max(float(batch), 1.0), input_len, output_len)
    prefill_s = accelerators * float(state.prefill_ms[0]) * 1e-3  # type: ignore[index]
    prefill_s = min(max(prefill_s, 0.0), total_s)
    return prefill_s, total_s - prefill_s


def erlang_c(servers: np.ndarray | float, offered: np.ndarray | float) -> np.ndarray:
    """Probability that an arrival waits in an M/M/c queue (Erlang C).

    Uses Erlang B = Poisson pmf(c; a) / cdf(c; a) written with the regularised incomplete gamma
    function, then C = c·B / (c − a·(1 − B)). Returns 1 where a ≥ c (unstable).

    Args:
        servers: c, the number of servers (KV slots).
        offered: a = λ·S, the offered load in Erlangs.

    Returns:
        P(wait > 0), array.
    """
    c = np.asarray(servers, dtype=float)
    a = np.maximum(np.asarray(offered, dtype=float), 1e-12)
    log_pmf = c * np.log(a) - a - special.gammaln(c + 1.0)
    cdf = special.gammaincc(c + 1.0, a)
    erlang_b = np.exp(log_pmf) / np.maximum(cdf, 1e-300)
    erlang_b = np.clip(erlang_b, 0.0, 1.0)
    denom = c - a * (1.0 - erlang_b)
    result = np.where(denom > 0, c * erlang_b / np.maximum(denom, 1e-12), 1.0)
    return np.where(a >= c, 1.0, np.clip(result, 0.0, 1.0))


def percentile_wait_factor(percentile: float) -> float:
    """ln(1/(1 − p)): the p-quantile of an exponential wait in units of its mean.

    p99 → ln(100) = 4.61, p95 → ln(20) = 3.00.
    """
    return math.log(1.0 / (1.0 - percentile / 100.0))


# A dataset whose mean prompt exceeds OpenOrca's longest (1,021 tokens) is a long-context set
# (LongBench, RULER, GovReport: the MLPerf Llama-3.1-405B prompts average 9,428 tokens) whose
# lengths its tasks bound: its p99 is taken as twice the mean, not OpenOrca's 3.56 (no p99 is
# published for those sets; 3.56 × 9,428 = 33,600 tokens would take longer to prefill on an
# H200 server than the 6 s p99 TTFT the measured runs met).
LONG_PROMPT_MEAN_TOKENS = 1024
LONG_PROMPT_P99_OVER_MEAN = 2.0


def prompt_tail_factor(
    percentile: float, calibration: Calibration, mean_tokens: float | None = None
) -> float:
    """Prompt length at the percentile / mean, interpolated like :func:`tpot_tail_factor`
    (the long-context ratio for a mean above :data:`LONG_PROMPT_MEAN_TOKENS`)."""
    if percentile <= 50:
        return 1.0
    ratio = calibration.prompt_p99_over_mean
    if mean_tokens is not None and mean_tokens > LONG_PROMPT_MEAN_TOKENS:
        ratio = min(ratio, LONG_PROMPT_P99_OVER_MEAN)
    return 1.0 + (ratio - 1.0) * percentile_wait_factor(percentile) / math.log(100.0)


def tpot_tail_factor(percentile: float, calibration: Calibration) -> float:
    """TPOT p-quantile / mean, interpolated in ln(1/(1−p)) from the calibrated p99 ratio.

    The p99/p50 TPOT ratio of the MLPerf server runs is stored in the calibration; between the
    mean and p99 the excess is assumed to grow like an exponential tail.
    """
    if percentile <= 50:
        return 1.0
    excess = calibration.tpot_p99_over_mean - 1.0
    return 1.0 + excess * percentile_wait_factor(percentile) / math.log(100.0)


@dataclass(frozen=True, slots=True)
class PerformancePoint:
    """One operating point of one replica.

    Attributes:
        batch: Concurrent sequences.
        ttft_ms: Time to first token (the percentile asked for, or the mean).
        tpot_ms: Time per output token (same statistic as ``ttft_ms``).
        output_tokens_per_s: Output tokens/s of the replica.
        requests_per_s: Completed requests/s of the replica.
        statistic: "mean", "p95", "p99" or "unloaded".
    """

    batch: int
    ttft_ms: float
    tpot_ms: float
    output_tokens_per_s: float
    requests_per_s: float
    statistic: str


def unloaded_latency(shape: ReplicaShape, input_len: float, output_len: float) -> PerformancePoint:
    """Latency of a single request on an idle replica (batch 1, no queue)."""
    state = steady_state(shape, 1.0, input_len, output_len)
    return PerformancePoint(
        batch=1,
        ttft_ms=float(state.ttft_service_ms[0]),
        tpot_ms=float(state.tpot_ms[0]),
        output_tokens_per_s=float(state.output_tokens_per_s[0]),
        requests_per_s=float(state.requests_per_s[0]),
        statistic="unloaded",
    )


@dataclass(frozen=True, slots=True)
class LoadPoint:
    """Latency of one replica under an offered Poisson load.

    Attributes:
        request_rate_per_s: Offered requests/s to this replica.
        batch: Mean concurrency from Little's law (the admission cap when saturated).
        utilisation: batch / max concurrency.
        ttft_mean_ms: Mean TTFT including the waits for the prefill budget and a KV slot.
        tpot_mean_ms: Mean TPOT.
        ttft_p95_ms: 95th percentile TTFT.
        ttft_p99_ms: 99th percentile TTFT.
        tpot_p95_ms: 95th percentile TPOT.
        tpot_p99_ms: 99th percentile TPOT.
        output_tokens_per_s: Output tokens/s the replica completes (λ × output_len, or the
            saturation point's when saturated).
        saturated: True when λ is at or beyond the replica's capacity: the figures are then
            those of the saturation point (every KV slot busy) for the requests it admits,
            and the backlog of the others grows by λ − ``served_requests_per_s``.
        ttft_p50_ms: Median TTFT.
        tpot_p50_ms: Median TPOT.
        served_requests_per_s: Requests/s the replica completes: λ, or its capacity when
            saturated.
    """

    request_rate_per_s: float
    batch: float
    utilisation: float
    ttft_mean_ms: float
    tpot_mean_ms: float
    ttft_p95_ms: float
    ttft_p99_ms: float
    tpot_p95_ms: float
    tpot_p99_ms: float
    output_tokens_per_s: float
    saturated: bool
    ttft_p50_ms: float = math.nan
    tpot_p50_ms: float = math.nan
    served_requests_per_s: float = math.nan


def slot_wait_ms(
    slots: float, busy: np.ndarray, slot_time_s: np.ndarray, percentile: float | None
) -> np.ndarray:
    """M/M/c wait for a free KV slot, in ms.

    Args:
        slots: c, maximum concurrent sequences of the replica.
        busy: a, mean busy slots (the concurrency B), array.
        slot_time_s: S, time a request holds its slot, array (s).
        percentile: None for the mean wait, else the p-quantile (e.g. 99.0).

    Returns:
        Wait in ms (infinite where a ≥ c for a quantile).
    """
    p_wait = erlang_c(slots, busy)
    free = np.maximum(slots - busy, 1e-9)
    scale_ms = slot_time_s * 1e3 / free  # mean wait of those who wait
    if percentile is None:
        return p_wait * scale_ms
    tail = 1.0 - percentile / 100.0
    ratio = np.maximum(p_wait / tail, 1.0)
    return np.where(busy >= slots, np.inf, scale_ms * np.log(ratio))


# --- The scheduler's queues: continuous batching, a chunked-prefill token budget, KV admission ---

# Tokens one engine step may carry (decode + prefill) by default. vLLM V1: max_num_batched_tokens
# 8192 for the OpenAI server on GPUs of 70 GiB or more other than the A100, else 2048
# (vllm/engine/arg_utils.py, the table beside max_num_seqs); TensorRT-LLM: max_num_tokens 8192
# (LLM API and trtllm-serve default, docs "Tuning Max Batch Size and Max Num Tokens"); SGLang:
# chunked_prefill_size 8192 on 80-GB-class GPUs, smaller on small ones (sglang/srt/server_args.py).
VLLM_LARGE_GPU_MAX_NUM_BATCHED_TOKENS = 8192
VLLM_SMALL_GPU_MAX_NUM_BATCHED_TOKENS = 2048
TRTLLM_MAX_NUM_TOKENS = 8192
SGLANG_LARGE_GPU_CHUNKED_PREFILL = 8192
SGLANG_SMALL_GPU_CHUNKED_PREFILL = 2048
# Squared coefficient of variation of the time a request holds its KV slot when output lengths
# vary: 1, an exponential spread (no dataset publishes its output spread); 0 for fixed lengths.
VARIABLE_LENGTH_SCV = 1.0
# Utilisation at which the queues are capped (the step model itself saturates there).
_MAX_QUEUE_UTILISATION = 0.95


def scheduler_token_budget(accelerator: AcceleratorSpec, serving_stack: str) -> int:
    """Tokens per engine step (decode plus chunked prefill) the stack schedules by default."""
    large = (accelerator.memory_gb or 0) >= VLLM_LARGE_GPU_MIN_GIB and not (
        accelerator.slug.startswith("a100")
    )
    if serving_stack == "trtllm":
        return TRTLLM_MAX_NUM_TOKENS
    if serving_stack == "sglang":
        return SGLANG_LARGE_GPU_CHUNKED_PREFILL if large else SGLANG_SMALL_GPU_CHUNKED_PREFILL
    return VLLM_LARGE_GPU_MAX_NUM_BATCHED_TOKENS if large else VLLM_SMALL_GPU_MAX_NUM_BATCHED_TOKENS


def prompt_quantile_factor(
    percentile: float | None, calibration: Calibration, mean_tokens: float, variable: bool
) -> float:
    """Prompt length at the percentile / mean (1 for the mean and for fixed lengths).

    Variable lengths: the median of an exponential, ln 2 (OpenOrca: 152 / 222.33 = 0.68), and
    above it :func:`prompt_tail_factor` (the dataset's measured p99 / mean)."""
    if percentile is None or not variable:
        return 1.0
    if percentile <= 50:
        return -math.log(1.0 - percentile / 100.0) if percentile > 0 else 0.0
    return prompt_tail_factor(percentile, calibration, mean_tokens)


def prompt_length_scv(calibration: Calibration, mean_tokens: float) -> float:
    """Squared coefficient of variation of variable prompt lengths, from the dataset's p99/mean
    ratio (:func:`prompt_tail_factor`): the p99 taken to sit as many standard deviations above
    the mean as an exponential's does (ln 100 − 1 = 3.61), c² = ((p99/mean − 1) / 3.61)².
    OpenOrca (3.56): 0.50; the long-context sets (2.0): 0.08."""
    ratio = prompt_tail_factor(99.0, calibration, mean_tokens)
    return ((ratio - 1.0) / (math.log(100.0) - 1.0)) ** 2


def exponential_tail_quantile(
    p_wait: np.ndarray | float, waiting_mean_ms: np.ndarray | float, percentile: float | None
) -> np.ndarray:
    """Mean or quantile of a wait that is 0 with probability 1 − P and else exponential.

    P(W > t) = P·exp(−t / m), m the mean wait of those who wait: exact for M/M/1 and M/M/c
    (Erlang C), and the heavy-traffic form of the G/G/1 wait (Kingman) otherwise. Mean
    (``percentile`` None): P·m; p-quantile: m·ln(P / (1 − p)) where P > 1 − p, else 0.
    """
    if percentile is None:
        return p_wait * waiting_mean_ms
    # ln(max(P / (1 − p), 1)) is 0 where P ≤ 1 − p: no wait at that percentile.
    return waiting_mean_ms * np.log(np.maximum(p_wait / (1.0 - percentile / 100.0), 1.0))


def prefill_queue_wait_ms(
    utilisation: np.ndarray | float,
    service_ms: np.ndarray | float,
    length_scv: float,
    percentile: float | None,
) -> np.ndarray:
    """Wait of a prompt for the prefill budget: an FCFS M/G/1 queue.

    The scheduler takes waiting prompts first come, first served into the budget each step
    leaves after the decode tokens (vLLM's and TensorRT-LLM's waiting queue). With Poisson
    arrivals the mean wait is Pollaczek–Khinchine's ρ/(1 − ρ)·S̄·(1 + c_s²)/2, c_s² being the
    prompt lengths' squared coefficient of variation; an arrival waits with probability ρ and
    the tail is exponential (:func:`exponential_tail_quantile`).

    Args:
        utilisation: ρ, the share of the replica's time spent on prefill (array).
        service_ms: S̄, a mean prompt's own prefill time (array).
        length_scv: c_s² of the prompt lengths.
        percentile: None for the mean wait, else the quantile.

    Returns:
        Wait in ms.
    """
    rho = np.minimum(utilisation, _MAX_QUEUE_UTILISATION)  # ρ ≥ 0 by construction
    # Those who wait, wait W̄ / ρ = S̄·(1 + c_s²) / (2(1 − ρ)) on average.
    waiting_mean = service_ms * (1.0 + length_scv) / (2.0 * (1.0 - rho))
    return exponential_tail_quantile(rho, waiting_mean, percentile)


def admission_wait_ms(
    slots: float,
    busy: np.ndarray | float,
    slot_time_s: np.ndarray | float,
    hold_scv: float,
    percentile: float | None,
) -> np.ndarray:
    """Wait for KV capacity: the scheduler admits a request only when its sequence fits.

    G/G/c with c = the replica's admission cap, a = the busy sequences, by Allen–Cunneen: the
    M/M/c wait (Erlang C) × (c_a² + c_s²)/2 with Poisson arrivals (c_a² = 1) and c_s² the
    spread of the slot-hold times (output lengths); the tail as Erlang C's exponential.
    Infinite where a ≥ c (the caller answers with the saturation point there).
    """
    busy = np.asarray(busy, dtype=float)
    # Those who wait, wait S / (c − a) on average in M/M/c, × (1 + c_s²)/2 (Allen–Cunneen).
    waiting_mean = slot_time_s * 1e3 * (1.0 + hold_scv) / (2.0 * np.maximum(slots - busy, 1e-9))
    wait = exponential_tail_quantile(erlang_c(slots, busy), waiting_mean, percentile)
    return np.where(busy >= slots, np.inf, wait)


def first_token_ms(
    shape: ReplicaShape,
    state: SteadyState,
    input_len: float,
    output_len: float,
    token_budget: int | None,
    variable_lengths: bool,
    percentile: float | None,
) -> np.ndarray:
    """TTFT of an admitted request at the steady state ``state``, at a percentile.

    The sum of (each at the percentile; None is the mean):

    * the step in progress when the request arrives: uniform over one step, p·TPOT;
    * the steps that prefill its prompt: the step carrying the prompt (chunked prefill of the
      arriving prompts beside the B decode tokens, :func:`steady_state`) and, when the prompt
      is longer than the budget left after the decode tokens, one more step per budget-full
      chunk (Sarathi-Serve's chunked prefill); prompt length at the percentile from
      :func:`prompt_quantile_factor`;
    * the wait for the prefill budget behind the prompts that came first
      (:func:`prefill_queue_wait_ms`).

    Summing the terms' quantiles bounds the quantile of their sum from above (p99 within
    ±20 % of most MLPerf Llama-2-70B and Mixtral server runs at their measured concurrency;
    a root-sum-square of the excesses fell 30 % short).

    Args:
        shape: Replica constants.
        state: Steady state at the concurrency (array).
        input_len: Mean prompt tokens.
        output_len: Mean output tokens.
        token_budget: Tokens per step (decode + prefill), None for no budget.
        variable_lengths: Prompt lengths vary (exponential spread) rather than fixed.
        percentile: None for the mean, else the quantile (e.g. 50, 99).

    Returns:
        TTFT in ms, an array like ``state.batch``.
    """
    batch = state.batch
    output_len = max(float(output_len), 1.0)
    factor = prompt_quantile_factor(percentile, shape.calibration, input_len, variable_lengths)
    prompt = min(input_len * factor, max(1.0, shape.model.max_context - output_len))
    # Chunked when the prompt exceeds the budget the decode tokens leave at the largest batch.
    chunked = bool(token_budget) and prompt > token_budget - float(np.max(batch))
    if factor == 1.0 and not chunked and state.carrying_ms is not None:
        prefill_steps = state.carrying_ms  # the steady state's own carrying step
    else:
        ctx = input_len + output_len / 2.0
        room = np.maximum(token_budget - batch, 1.0) if chunked else prompt
        first_chunk = np.minimum(prompt, room)
        prefill_steps = step_time_ms(
            shape, batch, batch * input_len / output_len + first_chunk, ctx, prompt
        )
        if float(np.min(batch)) <= 1.0:
            alone = step_time_ms(shape, 0.0, first_chunk, ctx, prompt)
            prefill_steps = np.where(batch <= 1.0, alone, prefill_steps)
        if chunked:
            # One more budget-full step per chunk past the first.
            chunks_after = np.maximum(prompt - room, 0.0) / room
            prefill_steps = prefill_steps + chunks_after * step_time_ms(
                shape, batch, room, ctx, prompt
            )
    # The step in progress when the request arrives (none on an idle replica, B ≤ 1).
    in_progress = (0.5 if percentile is None else percentile / 100.0) * np.where(
        batch <= 1.0, 0.0, state.tpot_ms
    )
    scv = prompt_length_scv(shape.calibration, input_len) if variable_lengths else 0.0
    wait = prefill_queue_wait_ms(
        state.prefill_utilisation if state.prefill_utilisation is not None else 0.0,
        np.maximum(state.prefill_ms, 0.0) if state.prefill_ms is not None else 0.0,
        scv,
        percentile,
    )
    return in_progress + prefill_steps + wait


def latency_under_load(
    shape: ReplicaShape,
    input_len: float,
    output_len: float,
    request_rate_per_s: float,
    max_batch: int,
    serving_stack: str = "vllm",
    variable_lengths: bool = False,
) -> LoadPoint:
    """TTFT and TPOT of one replica as the offered load rises toward capacity and past it.

    The scheduler (vLLM's, TensorRT-LLM's, SGLang's) runs continuous batching: each step
    carries the running sequences' decode tokens and, within the step's token budget
    (:func:`scheduler_token_budget`), chunks of the waiting prompts first come first served;
    it admits a request only when its KV cache fits (``max_batch`` sequences).

    * Concurrency is the fixed point of Little's law B = λ·(TTFT + out·TPOT(B)) (Brent's
      method on B − λ·S(B)).
    * TTFT = the step in progress + the steps that prefill the prompt + the FCFS wait for the
      prefill budget (:func:`first_token_ms`) + the wait for KV capacity
      (:func:`admission_wait_ms`); each percentile comes from those queues' distributions
      under Poisson arrivals, not from a fixed multiple of the mean.
    * TPOT percentiles use the calibrated p99/mean ratio of the MLPerf server runs (the
      spread of output lengths, which the arrival process does not give).
    * At or past capacity (λ·S(c) ≥ c: every KV slot busy) the replica answers with its
      saturation point: it completes c / S(c) requests/s at the latencies of a full batch
      for the requests it admits, the KV admission backlog growing by the rest of the rate
      (``served_requests_per_s`` tells it); nothing is infinite.

    Args:
        shape: Replica constants.
        input_len: Prompt tokens (mean).
        output_len: Output tokens (mean).
        request_rate_per_s: Offered requests/s to this replica (Poisson).
        max_batch: Maximum concurrent sequences (memory and scheduler cap).
        serving_stack: "vllm", "sglang" or "trtllm": its default token budget per step.
        variable_lengths: Prompt and output lengths vary (exponential spread) rather than
            being fixed.

    Returns:
        The load point.
    """
    from scipy.optimize import brentq

    lam = max(float(request_rate_per_s), 0.0)
    cap = float(max(1, max_batch))

    def excess(b: float) -> float:
        state = steady_state(shape, max(b, 1.0), input_len, output_len)
        return lam * float(state.slot_time_s[0]) - b

    saturated = excess(cap) >= 0.0
    if saturated:
        batch = cap
    elif lam > 0 and excess(0.0) > 0:
        batch = brentq(excess, 0.0, cap, xtol=1e-3)
    else:
        batch = 0.0
    state = steady_state(shape, max(batch, 1.0), input_len, output_len)
    served = float(state.requests_per_s[0]) if saturated else lam
    budget = scheduler_token_budget(shape.accelerator, serving_stack)
    scv = VARIABLE_LENGTH_SCV if variable_lengths else 0.0
    busy = np.asarray([batch])

    def ttft(percentile: float | None) -> float:
        first = float(
            first_token_ms(
                shape, state, input_len, output_len, budget, variable_lengths, percentile
            )[0]
        )
        if saturated:  # the admitted requests' TTFT; the backlog is the queue's growth
            return first
        return first + float(admission_wait_ms(cap, busy, state.slot_time_s, scv, percentile)[0])

    tpot = float(state.tpot_ms[0])
    cal = shape.calibration
    return LoadPoint(
        request_rate_per_s=lam,
        batch=batch,
        utilisation=batch / cap,
        ttft_mean_ms=ttft(None),
        tpot_mean_ms=tpot,
        ttft_p95_ms=ttft(95.0),
        ttft_p99_ms=ttft(99.0),
        tpot_p95_ms=tpot * tpot_tail_factor(95.0, cal),
        tpot_p99_ms=tpot * tpot_tail_factor(99.0, cal),
        output_tokens_per_s=served * output_len,
        saturated=saturated,
        ttft_p50_ms=ttft(50.0),
        tpot_p50_ms=tpot,
        served_requests_per_s=served,
    )
