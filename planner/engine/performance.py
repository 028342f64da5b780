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
  as a fixed point; waiting for a free KV slot is M/M/c (Erlang C) with c = the replica's
  maximum concurrency, and percentiles of the wait follow the M/M/c exponential tail.

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
    "SteadyState",
    "allreduce_time_ms",
    "erlang_c",
    "expected_distinct_experts",
    "latency_under_load",
    "percentile_wait_factor",
    "prompt_tail_factor",
    "slot_wait_ms",
    "replica_shape",
    "steady_state",
    "step_time_ms",
    "local_step_time_ms",
    "tpot_tail_factor",
    "unloaded_latency",
]

ACTIVATION_BYTES = 2.0  # BF16 activations on the all-reduce wire


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
        max_num_seqs: Cap on concurrent sequences per replica (engine scheduler limit).
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
    max_num_seqs: int = 1024
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

        Order: the (family, precision) group; else the family's groups at other precisions
        (geometric mean); else the global factors.

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
    attn_flops_per_token_per_ctx: float  # 4 · H · d · full layers / TP
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
    if model.is_mla:
        attn_width = model.heads * ((model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0))
    else:
        attn_width = model.heads * model.head_dim
    # Attention FLOPs per decode token per context token and layer: QK^T and PV, 2 FLOPs each
    # multiply-add -> 4·H·d (llm-analysis / anchors F5).
    attn = 4.0 * attn_width / tp
    link = (accelerator.scale_up_bw_gbytes_per_s_per_direction or 32.0) * 1e9
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
        attn_flops_per_token_per_ctx=attn * layout.full_attention_layers,
        attn_flops_sliding=attn * layout.sliding_layers,
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
    # Older software stacks reach less of the peak: exp(rate × years) ≤ 1 before the family's
    # newest calibrated stack (1 for every planner estimate, which assumes that stack).
    generation = 1.0
    if shape.software_years:
        rate = cal.software_gain_per_year.get(shape.accelerator.family, 0.0)
        generation = math.exp(rate * shape.software_years)
    eta_m = min(1.0, factors.memory_bw_fraction * generation)
    bandwidth = shape.bandwidth_bytes_per_s * eta_m
    kv_bytes = batch * shape.kv_bytes_per_sequence(context_tokens)
    memory_s = weight_bytes / bandwidth + kv_bytes / (bandwidth * cal.kv_read_bw_ratio)
    window = shape.sliding_window or 0
    ctx_sliding = np.minimum(context_tokens, window) if window else 0.0
    attn_decode = batch * (
        shape.attn_flops_per_token_per_ctx * context_tokens + shape.attn_flops_sliding * ctx_sliding
    )
    half_prompt = prefill_context_tokens / 2.0  # causal attention sees half the prompt on average
    pf_sliding = min(half_prompt, window) if window else 0.0
    attn_prefill = prefill_tokens * (
        shape.attn_flops_per_token_per_ctx * half_prompt + shape.attn_flops_sliding * pf_sliding
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
    link_fraction = (
        cal.pcie_link_bw_fraction if shape.accelerator.scale_up_pcie else cal.link_bw_fraction
    )
    comm_ms = 0.0
    if comm:
        comm_ms = (
            2
            * shape.model.layers
            * allreduce_time_ms(
                tokens * shape.model.hidden * ACTIVATION_BYTES,
                shape.tp,
                shape.link_peak_bytes_per_s * link_fraction,
                cal,
            )
        )
    overhead_ms = (
        shape.model.layers * cal.step_overhead_us_per_layer * 1e-3
        + cal.step_overhead_ms
        + batch * cal.step_overhead_us_per_seq * 1e-3
    )
    return np.maximum(memory_s, compute_s) * 1e3 + comm_ms + overhead_ms


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
    """

    batch: np.ndarray
    tpot_ms: np.ndarray
    ttft_service_ms: np.ndarray
    slot_time_s: np.ndarray
    output_tokens_per_s: np.ndarray
    requests_per_s: np.ndarray


def steady_state(
    shape: ReplicaShape, batch: np.ndarray | float, input_len: float, output_len: float
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
    ttft = step_time_ms(shape, batch, prefill_per_step + input_len, ctx, input_len) + 0.5 * tpot
    ttft = np.where(batch <= 1.0, step_time_ms(shape, 0.0, input_len, ctx, input_len), ttft)
    slot_s = (ttft + output_len * tpot) * 1e-3
    return SteadyState(
        batch=batch,
        tpot_ms=tpot,
        ttft_service_ms=ttft,
        slot_time_s=slot_s,
        output_tokens_per_s=batch / slot_s * output_len,
        requests_per_s=batch / slot_s,
    )


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


def prompt_tail_factor(percentile: float, calibration: Calibration) -> float:
    """Prompt length at the percentile / mean, interpolated like :func:`tpot_tail_factor`."""
    if percentile <= 50:
        return 1.0
    excess = calibration.prompt_p99_over_mean - 1.0
    return 1.0 + excess * percentile_wait_factor(percentile) / math.log(100.0)


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
        batch: Mean concurrency from Little's law.
        utilisation: batch / max concurrency.
        ttft_mean_ms: Mean TTFT including the wait for a KV slot.
        tpot_mean_ms: Mean TPOT.
        ttft_p95_ms: 95th percentile TTFT.
        ttft_p99_ms: 99th percentile TTFT.
        tpot_p95_ms: 95th percentile TPOT.
        tpot_p99_ms: 99th percentile TPOT.
        output_tokens_per_s: λ × output_len.
        saturated: True when λ is at or beyond the replica's capacity (latencies infinite).
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


def latency_under_load(
    shape: ReplicaShape,
    input_len: float,
    output_len: float,
    request_rate_per_s: float,
    max_batch: int,
) -> LoadPoint:
    """TTFT and TPOT of one replica as the offered load rises toward capacity.

    Concurrency is the fixed point of Little's law B = λ·(TTFT + out·TPOT(B)) (solved with
    Brent's method on B − λ·S(B)); the wait for a free KV slot is M/M/c with c = ``max_batch``
    slots, offered load a = B Erlangs. Percentiles: the M/M/c tail
    P(W > t) = C(c, a)·exp(−(c − a)t/S); TPOT percentiles use the calibrated tail ratio.

    Args:
        shape: Replica constants.
        input_len: Prompt tokens (mean).
        output_len: Output tokens (mean).
        request_rate_per_s: Offered requests/s to this replica (Poisson).
        max_batch: Maximum concurrent sequences (memory and scheduler cap).

    Returns:
        The load point; ``saturated`` with infinite latencies when λ reaches capacity.
    """
    from scipy.optimize import brentq

    lam = float(request_rate_per_s)
    cap = float(max(1, max_batch))

    def excess(b: float) -> float:
        state = steady_state(shape, max(b, 1.0), input_len, output_len)
        return lam * float(state.slot_time_s[0]) - b

    saturated = excess(cap) >= 0.0
    if saturated or lam <= 0:
        batch = cap if saturated else 0.0
    else:
        batch = brentq(excess, 0.0, cap, xtol=1e-3) if excess(0.0) > 0 else 0.0
    state = steady_state(shape, max(batch, 1.0), input_len, output_len)
    tpot = float(state.tpot_ms[0])
    service = float(state.ttft_service_ms[0])
    slot_s = state.slot_time_s
    busy = np.asarray([batch])
    if saturated:
        inf = math.inf
        return LoadPoint(lam, cap, 1.0, inf, tpot, inf, inf, inf, inf, lam * output_len, True)
    wait_mean = float(slot_wait_ms(cap, busy, slot_s, None)[0])
    wait95 = float(slot_wait_ms(cap, busy, slot_s, 95.0)[0])
    wait99 = float(slot_wait_ms(cap, busy, slot_s, 99.0)[0])
    cal = shape.calibration
    return LoadPoint(
        request_rate_per_s=lam,
        batch=batch,
        utilisation=batch / cap,
        ttft_mean_ms=service + wait_mean,
        tpot_mean_ms=tpot,
        ttft_p95_ms=service + 0.45 * tpot + wait95,
        ttft_p99_ms=service + 0.49 * tpot + wait99,
        tpot_p95_ms=tpot * tpot_tail_factor(95.0, cal),
        tpot_p99_ms=tpot * tpot_tail_factor(99.0, cal),
        output_tokens_per_s=lam * output_len,
        saturated=False,
    )
