"""Single entry point for one estimate: the contract of the CLI and ``POST /api/v1/estimate``.

Given a model, an accelerator, N accelerators in total, a precision and a workload, return the
throughput of all N together at the operating point asked for, with latency, memory figures,
the expected error band and where the efficiency factors come from:

* ``scenario="offline"`` with no target: maximum throughput (largest batch that fits);
* ``scenario="server"`` with TTFT and/or TPOT targets: the most throughput that meets them at
  the percentile;
* with ``request_rate``: what that offered load yields (mean latencies, queueing included);
  a rate beyond capacity answers with the saturation point (its throughput and the latencies
  of the requests it admits) and the queue's growth;
* with ``concurrency``: N requests in flight, closed loop (as benchmark tools and NIM tables
  report): per-user and total tokens/s, TTFT and TPOT.

The tensor-parallel degree is the engine's choice unless given: among the valid degrees that
divide N, the one with the most throughput (or, under a request rate, the lowest mean
end-to-end latency).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.engine.capacity import ReplicaCapacity, replica_capacity, valid_tp_degrees
from planner.engine.disaggregated import best_disaggregated, split_accelerators
from planner.engine.errors import EngineInputError
from planner.engine.memory import (
    BYTES_PER_GB,
    BYTES_PER_GIB,
    KV_CACHE_DTYPES,
    SERVING_STACKS,
    MemoryPlan,
    plan_memory,
    resolve_kv_cache_dtype,
    serving_stack_name,
    serving_stack_unsupported,
)
from planner.engine.parallelism import (
    MAX_SERVERS_PER_REPLICA,
    ParallelLayout,
    ScaleOutLink,
    multi_node_layouts,
    parallel_shape,
    scale_out_link,
)
from planner.engine.performance import (
    Calibration,
    latency_under_load,
    replica_shape,
    steady_state,
)
from planner.engine.specs import PRECISIONS, AcceleratorSpec, ModelSpec
from planner.engine.uncertainty import ErrorBand, error_band

__all__ = ["SERVINGS", "EstimateError", "EstimateRequest", "EstimateResult", "estimate"]

SERVINGS = ("aggregated", "disaggregated")


class EstimateError(EngineInputError):
    """The inputs describe something that cannot be estimated; the message says why."""


@dataclass(frozen=True, slots=True)
class EstimateRequest:
    """Inputs of one estimate.

    Attributes:
        model: Model slug (must match the ModelSpec passed in).
        accelerator: Accelerator slug (must match the AcceleratorSpec passed in).
        accelerators: Accelerators in total (N).
        precision: Weight precision: "bf16", "fp8", "int4" or "fp4".
        input_tokens: Prompt tokens per request (mean).
        output_tokens: Output tokens per request (mean).
        tensor_parallel: TP degree, or None to let the engine choose.
        scenario: "offline" (no latency target) or "server" (targets and/or a request rate).
        ttft_ms: TTFT target at the percentile (server), ms.
        tpot_ms: TPOT target at the percentile (server), ms.
        percentile: 95 or 99.
        request_rate: Offered requests/s for all N accelerators together, or None.
        concurrency: Requests in flight for all N accelerators together (closed loop: a
            finished request is replaced at once), or None.
        kv_cache_dtype: KV-cache dtype: "auto" (vLLM's default, the model's dtype: BF16),
            "bf16" or "fp8".
        serving_stack: "vllm" (default), "sglang" or "trtllm": memory rule and scheduler cap.
        serving_stack_version: The stack's version as the consultant names it (free text,
            named in the provenance; the engine has one rule per stack, not per version).
        variable_lengths: Prompt lengths vary around the mean (exponential assumption for TTFT
            percentiles) instead of being fixed.
        serving: "aggregated" (default) or "disaggregated": separate prefill and decode
            replicas with the KV cache moved between them (:mod:`planner.engine.disaggregated`),
            the N accelerators split between the pools; needs scenario "server" with both a
            TTFT and a TPOT target.
        pipeline_parallel: Pipeline stages per replica (1: none); stages past one server talk
            over the scale-out fabric (planner.engine.parallelism).
        expert_parallel: Expert-parallel degree for MoE models (1: experts TP-sharded); a
            multiple of TP, the GPUs of one replica (data-parallel attention over EP ÷ TP).
    """

    model: str
    accelerator: str
    accelerators: int
    precision: str
    input_tokens: int
    output_tokens: int
    tensor_parallel: int | None = None
    scenario: str = "offline"
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    percentile: int = 99
    request_rate: float | None = None
    concurrency: int | None = None
    kv_cache_dtype: str = "auto"
    serving_stack: str = "vllm"
    serving_stack_version: str = ""
    variable_lengths: bool = False
    serving: str = "aggregated"
    pipeline_parallel: int = 1
    expert_parallel: int = 1


@dataclass(frozen=True, slots=True)
class EstimateResult:
    """Outputs of one estimate (all N accelerators together unless "per replica").

    Attributes:
        output_tokens_per_s: Output tokens/s of the N accelerators at the operating point.
        requests_per_s: Completed requests/s of the N accelerators.
        ttft_ms: TTFT at the operating point (``latency_statistic`` says which statistic).
        tpot_ms: TPOT at the operating point (same statistic).
        latency_statistic: "p95"/"p99" under a target, "mean" under a request rate or offline.
        batch_per_replica: Concurrent sequences per replica.
        tensor_parallel: TP degree used.
        replicas: N ÷ accelerators per replica (TP, or TP × PP, or EP).
        accelerators_used: replicas × accelerators per replica.
        weights_gb: Weights of one replica, GB (1e9 bytes).
        kv_cache_bytes_per_token: KV bytes per token of one replica (all TP ranks, at the
            request's context for sliding-window models).
        max_concurrent_sequences: Sequences of input+output tokens whose KV fits per replica.
        kv_cache_gb_per_gpu: KV budget per GPU, GB (1e9 bytes).
        kv_cache_gib_per_gpu: KV budget per GPU, GiB (as vLLM logs it).
        kv_cache_dtype: KV dtype used ("bf16" or "fp8"; "auto" resolved).
        kv_cache_bytes_per_token_per_gpu: KV bytes one token occupies on each GPU.
        kv_replication: How many TP ranks hold the same KV (1: each rank holds its own share
            of the heads; TP ÷ KV heads past H_kv, TP for MLA's shared latent).
        kv_note: One sentence on the per-GPU KV layout, naming TP replication as such.
        per_user_output_tokens_per_s: Output tokens/s one request sees while decoding,
            1000 / TPOT (concurrency and request-rate modes), else None.
        saturated: True when the offered request rate exceeds capacity.
        saturation_requests_per_s: Requests/s the N accelerators complete at most (the
            saturation point), for a request rate; else None.
        queue_growth_requests_per_s: Offered − saturation requests/s: how fast the queue grows
            past saturation (0 below it), for a request rate; else None.
        queued_per_replica: Requests waiting for a KV slot per replica (concurrency mode:
            requests in flight beyond what memory and the scheduler admit), else None.
        pipeline_parallel: Pipeline stages per replica.
        expert_parallel: Expert-parallel degree (1: none).
        parallel_layout: The replica's layout, e.g. "TP8 × PP2 (2 servers)" ("" within one
            server).
        servers_per_replica: Servers one replica spans.
        software_generation: The serving-software generation the estimate assumes: the
            publication date of the newest reference runs of the accelerator's family (the
            efficiency factors are for that stack), "" when the family has no dated runs.
        utilisation: Concurrency / max concurrency per replica (request-rate mode), else None.
        expected_error_pct: Error band (±%): the held-out error of the nearest calibrated
            group, wider when the architecture has no reference runs
            (:func:`planner.engine.uncertainty.error_band`).
        provenance: Where the efficiency factors and the band come from.
        calibration_version: Version of the calibration used.
        architecture: Architecture class of the model, e.g. "dense GQA".
        calibrated_architecture: False when no reference run has this architecture class.
        serving: "aggregated" or "disaggregated". Disaggregated: ``tensor_parallel``,
            ``batch_per_replica`` and the memory figures are the decode replica's, ``replicas``
            counts both pools and ``ttft_ms`` includes the KV transfer.
        prefill_tensor_parallel: TP of a prefill replica (disaggregated), else None.
        prefill_replicas: Prefill replicas (disaggregated), else None.
        decode_replicas: Decode replicas (disaggregated), else None.
        kv_transfer_ms: KV transfer time per request, prefill to decode (disaggregated).
        kv_transfer_path: "nvlink", "pcie" or "network" (disaggregated), else None.
        serving_stack: The serving stack sized ("vllm", "sglang" or "trtllm").
        serving_stack_version: Its version as the request named it ("" when not named).
    """

    output_tokens_per_s: float
    requests_per_s: float
    ttft_ms: float
    tpot_ms: float
    latency_statistic: str
    batch_per_replica: int
    tensor_parallel: int
    replicas: int
    accelerators_used: int
    weights_gb: float
    kv_cache_bytes_per_token: float
    max_concurrent_sequences: int
    kv_cache_gb_per_gpu: float
    utilisation: float | None
    expected_error_pct: float
    provenance: str
    calibration_version: str
    architecture: str = ""
    calibrated_architecture: bool = True
    kv_cache_gib_per_gpu: float = 0.0
    kv_cache_dtype: str = "bf16"
    kv_cache_bytes_per_token_per_gpu: float = 0.0
    kv_replication: int = 1
    kv_note: str = ""
    per_user_output_tokens_per_s: float | None = None
    saturated: bool = False
    saturation_requests_per_s: float | None = None
    queue_growth_requests_per_s: float | None = None
    queued_per_replica: float | None = None
    software_generation: str = ""
    serving: str = "aggregated"
    prefill_tensor_parallel: int | None = None
    prefill_replicas: int | None = None
    decode_replicas: int | None = None
    kv_transfer_ms: float | None = None
    kv_transfer_path: str | None = None
    pipeline_parallel: int = 1
    expert_parallel: int = 1
    parallel_layout: str = ""
    servers_per_replica: int = 1
    serving_stack: str = "vllm"
    serving_stack_version: str = ""


def _kv_layout_note(model: ModelSpec, tp: int, kv_dtype: str, per_gpu: float) -> tuple[int, str]:
    """(replication factor, sentence) for the per-GPU KV layout at a TP degree."""
    if tp <= 1:
        return 1, f"{per_gpu:,.0f} bytes of {kv_dtype} KV per token on the one GPU."
    if model.is_mla:
        return tp, (
            f"{per_gpu:,.0f} bytes of {kv_dtype} KV per token on each GPU; TP replication: "
            f"the MLA latent is stored whole on all {tp} ranks."
        )
    if tp > model.kv_heads:
        copies = tp // model.kv_heads
        return copies, (
            f"{per_gpu:,.0f} bytes of {kv_dtype} KV per token on each GPU; TP replication: "
            f"{model.kv_heads} KV heads over {tp} ranks, so each head is stored {copies} times."
        )
    return 1, (
        f"{per_gpu:,.0f} bytes of {kv_dtype} KV per token on each GPU ("
        f"{model.kv_heads // tp} of {model.kv_heads} KV heads per rank, no replication)."
    )


def _band_and_provenance(
    calibration: Calibration,
    accelerator: AcceleratorSpec,
    request: EstimateRequest,
    model: ModelSpec,
    method: str = "",
) -> tuple[ErrorBand, str, str]:
    """The error band, the serving-software generation the calibration assumes, and the
    provenance line (band basis, the serving `method` if any, the software date)."""
    band = error_band(calibration, accelerator.family, request.precision, model)
    generation = calibration.software_dates.get(accelerator.family, "")
    kv_dtype = resolve_kv_cache_dtype(request.kv_cache_dtype, request.precision)
    stack = serving_stack_name(request.serving_stack, request.serving_stack_version, kv_dtype)
    provenance = band.basis + method
    if generation:
        provenance += f"; assumes {accelerator.family} serving software as of {generation}"
    provenance += f"; sized for {stack}"
    return band, generation, provenance


def _stack_fields(request: EstimateRequest) -> dict[str, str]:
    return {
        "serving_stack": request.serving_stack,
        "serving_stack_version": request.serving_stack_version.strip(),
    }


def _memory_and_band_fields(
    model: ModelSpec,
    memory: MemoryPlan,
    band: ErrorBand,
    calibration: Calibration,
    kv_dtype: str,
    *,
    tensor_parallel: int,
    accelerators_per_replica: int,
) -> dict:
    """The EstimateResult fields every serving mode reports alike: one replica's memory
    (weights, KV budget and layout per GPU) and the calibration's error band."""
    per_gpu = memory.kv_bytes_per_token_replica / accelerators_per_replica
    replication, kv_note = _kv_layout_note(model, tensor_parallel, kv_dtype, per_gpu)
    return dict(
        weights_gb=memory.weights_bytes_per_replica / BYTES_PER_GB,
        kv_cache_bytes_per_token=memory.kv_bytes_per_token_replica,
        max_concurrent_sequences=memory.max_concurrent_sequences,
        kv_cache_gb_per_gpu=max(0.0, memory.kv_budget_bytes_per_gpu) / BYTES_PER_GB,
        expected_error_pct=band.pct,
        calibration_version=calibration.version,
        architecture=band.architecture,
        calibrated_architecture=band.calibrated_architecture,
        kv_cache_gib_per_gpu=max(0.0, memory.kv_budget_bytes_per_gpu) / BYTES_PER_GIB,
        kv_cache_dtype=kv_dtype,
        kv_cache_bytes_per_token_per_gpu=per_gpu,
        kv_replication=replication,
        kv_note=kv_note,
    )


def _validate(request: EstimateRequest, model: ModelSpec, accelerator: AcceleratorSpec) -> None:
    if request.model != model.slug:
        raise EstimateError(f"request is for model {request.model!r} but {model.slug!r} was given")
    if request.accelerator != accelerator.slug:
        raise EstimateError(
            f"request is for accelerator {request.accelerator!r} but {accelerator.slug!r} was given"
        )
    if request.accelerators < 1:
        raise EstimateError("accelerators must be at least 1")
    if request.precision not in PRECISIONS:
        raise EstimateError(
            f"precision {request.precision!r} is not one of {', '.join(PRECISIONS)}"
        )
    if request.input_tokens < 1 or request.output_tokens < 1:
        raise EstimateError("input_tokens and output_tokens must be at least 1")
    if request.input_tokens + request.output_tokens > model.max_context:
        raise EstimateError(
            f"{request.input_tokens + request.output_tokens:,} tokens per request exceed "
            f"{model.name}'s context of {model.max_context:,} tokens"
        )
    if request.scenario not in {"offline", "server"}:
        raise EstimateError(f"scenario must be 'offline' or 'server', not {request.scenario!r}")
    if request.percentile not in (95, 99):
        raise EstimateError("percentile must be 95 or 99")
    if request.kv_cache_dtype not in KV_CACHE_DTYPES:
        raise EstimateError(
            f"kv_cache_dtype must be one of {', '.join(KV_CACHE_DTYPES)}, "
            f"not {request.kv_cache_dtype!r}"
        )
    if request.serving_stack not in SERVING_STACKS:
        raise EstimateError(f"serving_stack must be one of {', '.join(SERVING_STACKS)}")
    unsupported = serving_stack_unsupported(request.serving_stack, accelerator.vendor)
    if unsupported:
        raise EstimateError(f"{unsupported}; {accelerator.name} is {accelerator.vendor}'s")
    has_target = request.ttft_ms is not None or request.tpot_ms is not None
    if request.scenario == "offline" and has_target:
        raise EstimateError("an offline estimate takes no latency target; use scenario 'server'")
    if request.concurrency is not None:
        if request.concurrency < 1:
            raise EstimateError("concurrency must be at least 1")
        if has_target or request.request_rate is not None:
            raise EstimateError(
                "concurrency fixes the requests in flight: give it without a latency target "
                "or a request rate"
            )
    if (
        request.scenario == "server"
        and not has_target
        and request.request_rate is None
        and request.concurrency is None
    ):
        raise EstimateError(
            "a server estimate needs a TTFT or TPOT target, a request rate or a concurrency"
        )
    for name in ("ttft_ms", "tpot_ms", "request_rate"):
        value = getattr(request, name)
        if value is not None and value <= 0:
            raise EstimateError(f"{name} must be positive")
    if accelerator.compute_tflops(request.precision) is None:
        raise EstimateError(f"{accelerator.name} publishes no dense BF16 peak to estimate with")
    if request.serving not in SERVINGS:
        raise EstimateError(f"serving must be one of {', '.join(SERVINGS)}")
    if request.serving == "disaggregated" and (
        request.scenario != "server"
        or request.ttft_ms is None
        or request.tpot_ms is None
        or request.request_rate is not None
        or request.concurrency is not None
    ):
        raise EstimateError(
            "disaggregated serving is sized at a TTFT and a TPOT target: give scenario "
            "'server' with both, and no request rate or concurrency"
        )
    if request.serving == "disaggregated" and (
        request.pipeline_parallel != 1 or request.expert_parallel != 1
    ):
        raise EstimateError(
            "disaggregated serving keeps each prefill and decode replica within one server: "
            "pipeline_parallel and expert_parallel must be 1"
        )


def _tp_options(
    request: EstimateRequest,
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    link: ScaleOutLink,
) -> list[tuple[int, ParallelLayout | None]]:
    """(TP, layout) pairs to try: the single-server degrees, or the one layout asked for."""
    valid = valid_tp_degrees(model, accelerator)
    per_server = accelerator.accelerators_per_server
    pp, ep = request.pipeline_parallel, request.expert_parallel
    tp = request.tensor_parallel
    if pp < 1 or ep < 1:
        raise EstimateError("pipeline_parallel and expert_parallel must be at least 1")
    if pp > 1 or ep > 1 or (tp is not None and tp > per_server):
        if ep > 1 and not model.is_moe:
            raise EstimateError(f"{model.name} has no experts to spread: expert_parallel is 1")
        tp = tp or (max(valid) if valid else 1)
        kv_ok = model.is_mla or model.kv_heads % tp == 0 or tp % model.kv_heads == 0
        if (tp <= per_server and tp not in valid) or model.heads % tp or not kv_ok:
            raise EstimateError(
                f"tensor_parallel {tp} does not divide {model.name}'s {model.heads} attention "
                f"and {model.kv_heads} KV heads"
            )
        if pp > model.layers:
            raise EstimateError(f"{model.name} has {model.layers} layers, fewer than {pp} stages")
        try:
            layout = ParallelLayout(tp, pp, ep, per_server, link)
        except EngineInputError as exc:
            raise EstimateError(str(exc)) from exc
        if request.accelerators % layout.gpus:
            raise EstimateError(
                f"{request.accelerators} accelerators do not divide into replicas of "
                f"{layout.gpus} ({layout.label})"
            )
        return [(tp, layout)]
    if tp is not None:
        if tp not in valid:
            raise EstimateError(
                f"tensor_parallel {tp} is not valid for {model.name} on {accelerator.name} "
                f"(valid: {', '.join(map(str, valid))})"
            )
        if request.accelerators % tp:
            raise EstimateError(f"{request.accelerators} accelerators do not divide into TP {tp}")
        return [(tp, None)]
    options = [tp for tp in valid if tp <= request.accelerators and request.accelerators % tp == 0]
    if not options:
        raise EstimateError(f"no valid tensor-parallel degree divides {request.accelerators}")
    return [(tp, None) for tp in options]


def _multi_node_options(
    request: EstimateRequest, model: ModelSpec, accelerator: AcceleratorSpec, link: ScaleOutLink
) -> list[list[tuple[int, ParallelLayout]]]:
    """Layouts over 2, 3, ... servers whose GPUs divide N, grouped by servers per replica."""
    valid = valid_tp_degrees(model, accelerator)
    groups = []
    for servers in range(2, MAX_SERVERS_PER_REPLICA + 1):
        layouts = [
            (layout.tp, layout)
            for layout in multi_node_layouts(model, accelerator, valid, servers, link)
            if request.accelerators % layout.gpus == 0
        ]
        if layouts:
            groups.append(layouts)
    return groups


def _shape(
    cap: ReplicaCapacity,
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    precision: str,
    calibration: Calibration,
    kv_dtype: str,
):
    """The replica shape of a capacity, across servers when it has a layout."""
    if cap.parallel is not None:
        return parallel_shape(model, accelerator, precision, cap.parallel, calibration, kv_dtype)
    return replica_shape(model, accelerator, precision, cap.tensor_parallel, calibration, kv_dtype)


def estimate(
    request: EstimateRequest,
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    calibration: Calibration,
    link: ScaleOutLink | None = None,
) -> EstimateResult:
    """Estimate throughput and latency of N accelerators serving one workload.

    When no TP degree fits one server (and no layout is asked for), replicas over 2, 3, ...
    servers are tried (:mod:`planner.engine.parallelism`), the fewest servers that work.

    Args:
        request: The inputs.
        model: Spec of ``request.model``.
        accelerator: Spec of ``request.accelerator``.
        calibration: Efficiency factors (``calibration.load_calibration()``).
        link: Scale-out link per GPU (default by accelerator family).

    Returns:
        The estimate.

    Raises:
        EstimateError: When the inputs are impossible (one sentence saying why).
    """
    _validate(request, model, accelerator)
    kv_dtype = resolve_kv_cache_dtype(request.kv_cache_dtype, request.precision)
    if request.serving == "disaggregated":
        return _disaggregated(request, model, accelerator, calibration, kv_dtype)
    server = request.scenario == "server"
    targets = server and (request.ttft_ms is not None or request.tpot_ms is not None)
    options: list[ReplicaCapacity] = []
    reasons: list[str] = []
    link = link or scale_out_link(accelerator)
    explicit = _tp_options(request, model, accelerator, link)
    groups = [explicit]
    if explicit[0][1] is None and request.tensor_parallel is None:
        groups += _multi_node_options(request, model, accelerator, link)
    for group in groups:
        if options:
            break  # the fewest servers per replica that work
        for tp, layout in group:
            capacity = replica_capacity(
                model,
                accelerator,
                request.precision,
                tp,
                request.input_tokens,
                request.output_tokens,
                calibration,
                ttft_target_ms=request.ttft_ms
                if targets and request.request_rate is None
                else None,
                tpot_target_ms=request.tpot_ms
                if targets and request.request_rate is None
                else None,
                percentile=float(request.percentile),
                kv_precision=kv_dtype,
                serving_stack=request.serving_stack,
                variable_lengths=request.variable_lengths,
                parallel=layout,
            )
            if capacity.feasible:
                options.append(capacity)
            else:
                reasons.append(
                    f"{layout.label if layout else f'TP {tp}'}: {capacity.infeasible_reason}"
                )
    if not options:
        raise EstimateError(
            f"{model.name} at {request.precision} does not run on {accelerator.name}: "
            + "; ".join(reasons)
        )

    def total(cap: ReplicaCapacity) -> float:
        return cap.point.output_tokens_per_s * (
            request.accelerators // cap.accelerators_per_replica
        )

    utilisation = None
    extra: dict = {}
    if request.concurrency is not None:
        chosen, replicas, extra = _closed_loop(request, model, accelerator, calibration, options)
        ttft, tpot, statistic = extra.pop("ttft_ms"), extra.pop("tpot_ms"), "mean"
        tokens_per_s = extra.pop("output_tokens_per_s")
        requests_per_s = extra.pop("requests_per_s")
        batch = extra.pop("batch")
    elif request.request_rate is not None:
        loads = []
        for cap in options:
            replicas = request.accelerators // cap.accelerators_per_replica
            shape = _shape(cap, model, accelerator, request.precision, calibration, kv_dtype)
            load = latency_under_load(
                shape,
                request.input_tokens,
                request.output_tokens,
                request.request_rate / replicas,
                cap.max_batch,
                serving_stack=request.serving_stack,
                variable_lengths=request.variable_lengths,
            )
            loads.append((cap, replicas, load))
        ceiling = max(c.point.requests_per_s * r for c, r, _ in loads)
        unsaturated = [item for item in loads if not item[2].saturated]
        if unsaturated:
            # The TP degree with the shortest mean request latency at the offered rate.
            chosen, replicas, load = min(
                unsaturated,
                key=lambda item: (
                    item[2].ttft_mean_ms + request.output_tokens * item[2].tpot_mean_ms
                ),
            )
            tokens_per_s = request.request_rate * request.output_tokens
            requests_per_s = request.request_rate
            growth = 0.0
        else:
            # Beyond capacity: the replicas run at their saturation point (every KV slot busy)
            # and answer with its latencies for the requests they admit; the backlog grows by
            # the excess rate (performance.latency_under_load).
            chosen, replicas, load = max(
                loads, key=lambda item: (total(item[0]), -item[0].tensor_parallel)
            )
            point = chosen.point
            tokens_per_s = point.output_tokens_per_s * replicas
            requests_per_s = point.requests_per_s * replicas
            growth = request.request_rate - ceiling
        ttft, tpot, statistic = load.ttft_mean_ms, load.tpot_mean_ms, "mean"
        batch = int(math.ceil(load.batch))
        utilisation = load.utilisation
        extra = dict(
            saturated=load.saturated,
            saturation_requests_per_s=ceiling,
            queue_growth_requests_per_s=growth,
            per_user_output_tokens_per_s=1000.0 / tpot,
        )
    else:
        chosen = max(options, key=lambda c: (total(c), -c.tensor_parallel))
        replicas = request.accelerators // chosen.accelerators_per_replica
        point = chosen.point
        ttft, tpot = point.ttft_ms, point.tpot_ms
        statistic = point.statistic
        tokens_per_s = point.output_tokens_per_s * replicas
        requests_per_s = point.requests_per_s * replicas
        batch = point.batch
    memory = chosen.memory
    band, generation, provenance = _band_and_provenance(calibration, accelerator, request, model)
    extra = {**extra, **_stack_fields(request)}
    if chosen.parallel is not None:
        link_used = chosen.parallel.link
        provenance += f"; scale-out {link_used.gbps_per_gpu:g} Gb/s per GPU ({link_used.source})"
    memory_fields = _memory_and_band_fields(
        model, memory, band, calibration, kv_dtype,
        tensor_parallel=chosen.tensor_parallel,
        accelerators_per_replica=chosen.accelerators_per_replica,
    )  # fmt: skip
    return EstimateResult(
        output_tokens_per_s=tokens_per_s,
        requests_per_s=requests_per_s,
        ttft_ms=ttft,
        tpot_ms=tpot,
        latency_statistic=statistic,
        batch_per_replica=batch,
        tensor_parallel=chosen.tensor_parallel,
        replicas=replicas,
        accelerators_used=replicas * chosen.accelerators_per_replica,
        utilisation=utilisation,
        provenance=provenance,
        **memory_fields,
        software_generation=generation,
        pipeline_parallel=chosen.parallel.pp if chosen.parallel else 1,
        expert_parallel=chosen.parallel.ep if chosen.parallel else 1,
        parallel_layout=chosen.parallel.label if chosen.parallel else "",
        servers_per_replica=chosen.parallel.servers if chosen.parallel else 1,
        **extra,
    )


def _closed_loop(
    request: EstimateRequest,
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    calibration: Calibration,
    options: list[ReplicaCapacity],
) -> tuple[ReplicaCapacity, int, dict]:
    """Closed-loop operating point: ``concurrency`` requests in flight over the N accelerators.

    Requests spread evenly over the replicas; each replica runs B = min(N/replicas, max batch)
    at the continuous-batching steady state. Requests past the memory/scheduler cap wait, and
    in a closed loop the cycle time is exact by Little's law: every request's turn takes
    N_replica / X (X = completed requests/s), so TTFT = N_replica / X − out × TPOT. Per-user
    tokens/s = 1000 / TPOT. The TP degree is the one with the most total throughput.
    """
    best = None
    for cap in options:
        replicas = request.accelerators // cap.accelerators_per_replica
        in_flight = request.concurrency / replicas
        running = min(max(in_flight, 1.0), float(cap.max_batch))
        shape = _shape(
            cap, model, accelerator, request.precision, calibration, request.kv_cache_dtype
        )
        state = steady_state(shape, running, request.input_tokens, request.output_tokens)
        requests_s = float(state.requests_per_s[0]) * min(in_flight, running) / running
        tpot = float(state.tpot_ms[0])
        # No wait for the prefill budget (performance.prefill_queue_wait_ms): a closed loop
        # sends a request when one finishes, so prompts arrive as the batch drains, not in
        # Poisson bursts.
        ttft = float(state.ttft_service_ms[0])
        queued = max(0.0, in_flight - running)
        if queued > 0:
            cycle_ms = in_flight / requests_s * 1e3
            ttft = cycle_ms - request.output_tokens * tpot
        total_tokens = requests_s * request.output_tokens * replicas
        if best is None or total_tokens > best[0]:
            best = (
                total_tokens,
                cap,
                replicas,
                dict(
                    ttft_ms=ttft,
                    tpot_ms=tpot,
                    output_tokens_per_s=total_tokens,
                    requests_per_s=requests_s * replicas,
                    batch=int(math.ceil(running)),
                    per_user_output_tokens_per_s=1000.0 / tpot,
                    queued_per_replica=queued,
                ),
            )
    _, cap, replicas, figures = best
    return cap, replicas, figures


def _disaggregated(
    request: EstimateRequest,
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    calibration: Calibration,
    kv_dtype: str,
) -> EstimateResult:
    """N accelerators as prefill and decode pools (:mod:`planner.engine.disaggregated`).

    The (prefill TP, decode TP) pair with the fewest accelerator-seconds per request at the
    targets (both TPs = ``tensor_parallel`` when given), then the split of N between the
    pools that completes the most requests/s (:func:`split_accelerators`).
    """
    valid = valid_tp_degrees(model, accelerator)
    degrees = [tp for tp in valid if tp <= request.accelerators]
    if request.tensor_parallel is not None:
        if request.tensor_parallel not in valid:
            raise EstimateError(
                f"tensor_parallel {request.tensor_parallel} is not valid for {model.name} on "
                f"{accelerator.name} (valid: {', '.join(map(str, valid))})"
            )
        degrees = [request.tensor_parallel]
    if not degrees:
        raise EstimateError(f"no valid tensor-parallel degree fits {request.accelerators}")

    def pair(tps: list[int]):
        return best_disaggregated(
            model, accelerator, request.precision, tps, request.input_tokens,
            request.output_tokens, calibration, request.ttft_ms, request.tpot_ms,
            float(request.percentile), request.serving_stack, kv_precision=kv_dtype,
        )  # fmt: skip

    option, reason = pair(degrees)
    if option is not None and (
        option.prefill.tensor_parallel + option.decode.tensor_parallel > request.accelerators
    ):
        # The cheapest pair does not fit N together: only degrees that leave room for both.
        halves = [tp for tp in degrees if tp <= request.accelerators // 2]
        option, reason = pair(halves) if halves else (None, "no pair of replicas fits")
        if option is not None and (
            option.prefill.tensor_parallel + option.decode.tensor_parallel > request.accelerators
        ):
            option, reason = None, "no pair of replicas fits"
    if option is None:
        raise EstimateError(
            f"{model.name} at {request.precision} cannot meet the targets disaggregated on "
            f"{request.accelerators} × {accelerator.name}: {reason}"
        )
    prefill, decode = option.prefill, option.decode
    p, d = split_accelerators(option, request.accelerators)
    requests_per_s = min(p * prefill.requests_per_s, d * decode.requests_per_s)
    memory = plan_memory(
        model, accelerator, request.precision, decode.tensor_parallel,
        int(math.ceil(request.input_tokens + request.output_tokens)), kv_dtype,
        calibration.gpu_memory_utilization, request.serving_stack,
    )  # fmt: skip
    band, generation, provenance = _band_and_provenance(
        calibration, accelerator, request, model,
        method="; disaggregated prefill/decode (DistServe OSDI'24 goodput model)",
    )  # fmt: skip
    used = p * prefill.tensor_parallel + d * decode.tensor_parallel
    memory_fields = _memory_and_band_fields(
        model, memory, band, calibration, kv_dtype,
        tensor_parallel=decode.tensor_parallel,
        accelerators_per_replica=decode.tensor_parallel,
    )  # fmt: skip
    return EstimateResult(
        output_tokens_per_s=requests_per_s * request.output_tokens,
        requests_per_s=requests_per_s,
        ttft_ms=prefill.ttft_ms,
        tpot_ms=decode.tpot_ms,
        latency_statistic=f"p{request.percentile}",
        batch_per_replica=decode.batch,
        tensor_parallel=decode.tensor_parallel,
        replicas=p + d,
        accelerators_used=used,
        utilisation=None,
        provenance=provenance,
        **memory_fields,
        per_user_output_tokens_per_s=1000.0 / decode.tpot_ms,
        software_generation=generation,
        serving="disaggregated",
        prefill_tensor_parallel=prefill.tensor_parallel,
        prefill_replicas=p,
        decode_replicas=d,
        kv_transfer_ms=prefill.kv_transfer_ms,
        kv_transfer_path=prefill.kv_transfer_path,
        **_stack_fields(request),
    )
