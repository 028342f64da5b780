"""Candidate sweep: every (accelerator, precision, TP) configuration for one workload.

For each accelerator in the list, each precision and each valid tensor-parallel degree, the
sweep runs the memory plan and the latency-constrained batch search (vectorised over batch
sizes), sizes the fleet for the peak load, and prices it: cost per million output tokens at the
latency target = TP × USD per accelerator-hour / (output tokens/s per replica × 3600) × 1e6
(anchors F13, llm-analysis's $/1k tokens). Infeasible candidates come back with their reason,
so the consultant sees why a part is missing from the ranking. When no degree fits one server,
replicas spanning 2, 3, ... servers are tried (TP × PP, TP across servers, EP for MoE:
:mod:`planner.engine.parallelism`), priced on all their GPUs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from planner.engine import limits
from planner.engine.capacity import (
    ReplicaCapacity,
    plan_replicas,
    replica_capacity,
    valid_tp_degrees,
)
from planner.engine.disaggregated import (
    DecodePool,
    DisaggregatedOption,
    PrefillPool,
    best_disaggregated,
    plan_disaggregated_fleet,
)
from planner.engine.errors import EngineInputError
from planner.engine.memory import (
    KV_CACHE_DTYPES,
    SERVING_STACKS,
    MemoryPlan,
    resolve_kv_cache_dtype,
    serving_stack_name,
    serving_stack_unsupported,
)
from planner.engine.parallelism import (
    MAX_SERVERS_PER_REPLICA,
    ParallelLayout,
    ScaleOutLink,
    multi_node_layouts,
    scale_out_link,
)
from planner.engine.performance import (
    Calibration,
    ReplicaShape,
    accelerator_seconds_per_request,
)
from planner.engine.specs import PRECISIONS, AcceleratorSpec, ModelSpec
from planner.engine.uncertainty import error_band

__all__ = [
    "SweepCandidate",
    "SweepResult",
    "Workload",
    "disaggregated_candidate",
    "sweep",
    "usd_per_million_output_tokens",
    "at_request_rate",
    "with_disaggregated_fleet",
]


@dataclass(frozen=True, slots=True)
class Workload:
    """One request type to size.

    Attributes:
        input_tokens: Prompt tokens (mean).
        output_tokens: Output tokens (mean).
        ttft_ms: TTFT target at the percentile, None for none.
        tpot_ms: TPOT target at the percentile, None for none.
        percentile: Percentile of the targets (95 or 99).
        peak_concurrency: Peak concurrent requests, or None.
        peak_requests_per_s: Peak requests/s, or None.
        headroom_pct: Capacity kept free at peak, percent.
        failure_domains: Failure domains for N+1.
        n_plus_one: Add one spare replica per failure domain.
        precisions: Precisions to try.
        serving_stack: "vllm", "sglang" or "trtllm": the stack's memory rule and scheduler
            cap (:func:`planner.engine.memory.plan_memory`).
        kv_cache_dtype: "auto" (the model's dtype, BF16), "bf16" or "fp8".
        disaggregated: Also try disaggregated prefill/decode pools (needs both targets;
            :mod:`planner.engine.disaggregated`).
        compare_stacks: Other serving stacks to size beside ``serving_stack`` (the consultant
            asks for the comparison; every candidate says its stack).
        compared: Set by the sweep on the copies it sizes for the compared stacks.
    """

    input_tokens: int
    output_tokens: int
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    percentile: int = 99
    peak_concurrency: float | None = None
    peak_requests_per_s: float | None = None
    headroom_pct: float = 10.0
    failure_domains: int = 1
    n_plus_one: bool = True
    precisions: tuple[str, ...] = PRECISIONS
    serving_stack: str = "vllm"
    disaggregated: bool = False
    kv_cache_dtype: str = "auto"
    compare_stacks: tuple[str, ...] = ()
    compared: bool = False

    def __post_init__(self) -> None:
        """Refuse inputs outside ``planner.engine.limits`` with the reason (EngineInputError)."""
        limits.INPUT_TOKENS.check("input_tokens", self.input_tokens)
        limits.OUTPUT_TOKENS.check("output_tokens", self.output_tokens)
        limits.ENGINE_LATENCY_MS.check("ttft_ms", self.ttft_ms)
        limits.ENGINE_LATENCY_MS.check("tpot_ms", self.tpot_ms)
        limits.PEAK_CONCURRENCY.check("peak_concurrency", self.peak_concurrency)
        limits.PEAK_REQUESTS_PER_S.check("peak_requests_per_s", self.peak_requests_per_s)
        limits.HEADROOM_PCT.check("headroom_pct", self.headroom_pct)
        if self.percentile not in (95, 99):
            raise EngineInputError(f"percentile must be 95 or 99, not {self.percentile!r}.")
        if not 1 <= self.failure_domains <= 1_000:
            raise EngineInputError("failure_domains must be between 1 and 1000.")
        unknown = [p for p in self.precisions if p not in PRECISIONS]
        if unknown or not self.precisions:
            raise EngineInputError(f"precisions must be among {', '.join(PRECISIONS)}.")
        stacks = (self.serving_stack, *self.compare_stacks)
        if any(stack not in SERVING_STACKS for stack in stacks):
            raise EngineInputError(f"serving stacks must be among {', '.join(SERVING_STACKS)}.")
        if self.kv_cache_dtype not in KV_CACHE_DTYPES:
            raise EngineInputError(f"kv_cache_dtype must be one of {', '.join(KV_CACHE_DTYPES)}.")

    @property
    def stacks(self) -> tuple[str, ...]:
        """The serving stack, then the compared ones (each once)."""
        return tuple(dict.fromkeys((self.serving_stack, *self.compare_stacks)))


def usd_per_million_output_tokens(
    tensor_parallel: int, usd_per_accelerator_hour: float | None, output_tokens_per_s: float
) -> float | None:
    """Accelerator cost of a million output tokens at a replica's throughput, or None."""
    if usd_per_accelerator_hour is None or output_tokens_per_s <= 0:
        return None
    return tensor_parallel * usd_per_accelerator_hour / (output_tokens_per_s * 3600.0) * 1e6


@dataclass(frozen=True, slots=True)
class SweepCandidate:
    """One configuration and what it costs at the latency target.

    Attributes:
        accelerator_slug: Accelerator.
        accelerator_name: Display name.
        precision: Weight precision.
        tensor_parallel: TP degree.
        accelerators_per_server: Accelerators per server.
        feasible: True when the configuration meets the targets and fits.
        infeasible_reason: Why not, else None.
        batch_per_replica: Concurrency per replica at the operating point.
        output_tokens_per_s_per_replica: Output tokens/s per replica.
        requests_per_s_per_replica: Requests/s per replica.
        ttft_ms: TTFT at the operating point (percentile under a target).
        tpot_ms: TPOT at the operating point.
        replicas: Replicas for the peak (None without a peak load).
        accelerators: Accelerators for the peak (None without a peak load).
        servers: Servers for the peak (None without a peak load).
        usd_per_accelerator_hour: Price basis, None when unknown.
        usd_per_million_output_tokens: Cost at the latency target, None without a price.
        usd_per_hour: Fleet cost per hour at peak size, None without price or peak load.
        expected_error_pct: Error band (±%) of the estimate
            (:func:`planner.engine.uncertainty.error_band`).
        provenance: Where the efficiency factors and the band come from.
        calibrated_architecture: False when no reference run has the model's architecture
            class (the band is then the wider 90th-percentile one).
        serving: "aggregated" or "disaggregated". Disaggregated: ``tensor_parallel``,
            ``batch_per_replica`` and the per-replica rates are the decode replica's,
            ``ttft_ms`` includes the KV transfer, replicas/accelerators count both pools.
        prefill_tensor_parallel: TP of a prefill replica (disaggregated), else None.
        prefill_requests_per_s_per_replica: Prompts/s of one prefill replica, else None.
        prefill_replicas: Prefill replicas for the peak, else None.
        decode_replicas: Decode replicas for the peak, else None.
        kv_transfer_ms: KV transfer time per request (in the TTFT), else None.
        kv_transfer_path: "nvlink", "pcie" or "network", else None.
        prefill_accelerator_s_per_request: Accelerator-seconds one request's prompt takes at
            the operating point (disaggregated: on the prefill pool), None when not modelled.
        decode_accelerator_s_per_request: Accelerator-seconds its output tokens take
            (disaggregated: on the decode pool), None likewise.
        serving_stack: The serving stack sized ("vllm", "sglang" or "trtllm").
        kv_cache_dtype: The KV-cache dtype sized ("bf16" or "fp8"; "auto" resolved).
        compared: True for a row of a stack the workload compares (``compare_stacks``), not
            its own.
    """

    accelerator_slug: str
    accelerator_name: str
    precision: str
    tensor_parallel: int
    accelerators_per_server: int
    feasible: bool
    infeasible_reason: str | None
    batch_per_replica: int = 0
    output_tokens_per_s_per_replica: float = 0.0
    requests_per_s_per_replica: float = 0.0
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    replicas: int | None = None
    accelerators: int | None = None
    servers: int | None = None
    usd_per_accelerator_hour: float | None = None
    usd_per_million_output_tokens: float | None = None
    usd_per_hour: float | None = None
    expected_error_pct: float | None = None
    provenance: str | None = None
    calibrated_architecture: bool | None = None
    serving: str = "aggregated"
    prefill_tensor_parallel: int | None = None
    prefill_requests_per_s_per_replica: float | None = None
    prefill_replicas: int | None = None
    decode_replicas: int | None = None
    kv_transfer_ms: float | None = None
    kv_transfer_path: str | None = None
    pipeline_parallel: int = 1
    expert_parallel: int = 1
    parallel_label: str = ""
    prefill_accelerator_s_per_request: float | None = None
    decode_accelerator_s_per_request: float | None = None
    serving_stack: str = "vllm"
    kv_cache_dtype: str = "bf16"
    compared: bool = False

    @property
    def disaggregated(self) -> bool:
        """True for a disaggregated prefill/decode candidate."""
        return self.serving == "disaggregated"

    @property
    def accelerators_per_replica(self) -> int:
        """GPUs of one (decode) replica: TP × PP, or EP (TP × data-parallel attention groups)."""
        if self.expert_parallel > 1:
            return self.expert_parallel
        return self.tensor_parallel * self.pipeline_parallel

    @property
    def servers_per_replica(self) -> int:
        """Whole servers one replica takes (1 within a server)."""
        return -(-self.accelerators_per_replica // max(1, self.accelerators_per_server))

    @property
    def layout(self) -> str:
        """Parallel layout for display: "TP4", "TP8 × PP2 (2 servers)", or "TP1/TP2"
        (prefill/decode TP) when disaggregated."""
        if self.disaggregated:
            return f"TP{self.prefill_tensor_parallel}/TP{self.tensor_parallel}"
        return self.parallel_label or f"TP{self.tensor_parallel}"

    @property
    def label(self) -> str:
        """ "H100 FP8 TP2", "H100 FP8 TP8 × PP2 (2 servers)", or
        "Disaggregated 2P:5D, H100 FP8 TP1/TP2" (prefill/decode TP)."""
        name = self.accelerator_name.split(" (")[0]
        if not self.disaggregated:
            return f"{name} {self.precision.upper()} {self.layout}"
        ratio = (
            f" {self.prefill_replicas}P:{self.decode_replicas}D"
            if self.prefill_replicas is not None
            else ""
        )
        return f"Disaggregated{ratio}, {name} {self.precision.upper()} {self.layout}"


@dataclass(frozen=True, slots=True)
class SweepResult:
    """All candidates, feasible first by cost per million output tokens.

    Attributes:
        candidates: Every configuration tried.
        best: Cheapest feasible priced candidate, None when there is none.
    """

    candidates: tuple[SweepCandidate, ...]
    best: SweepCandidate | None

    @property
    def feasible(self) -> tuple[SweepCandidate, ...]:
        """Feasible candidates only."""
        return tuple(c for c in self.candidates if c.feasible)


def _stack_provenance(workload: Workload, precision: str) -> str:
    kv = resolve_kv_cache_dtype(workload.kv_cache_dtype, precision)
    return f"; sized for {serving_stack_name(workload.serving_stack, kv_cache_dtype=kv)}"


def _stack(workload: Workload, precision: str) -> dict:
    """The serving stack and resolved KV dtype a candidate of the workload is sized with."""
    return {
        "serving_stack": workload.serving_stack,
        "kv_cache_dtype": resolve_kv_cache_dtype(workload.kv_cache_dtype, precision),
        "compared": workload.compared,
    }


def _precision_reason(accelerator: AcceleratorSpec, precision: str) -> str | None:
    if precision == "fp4" and not accelerator.fp4_dense_tflops:
        # Weight-only FP4 (MXFP4, W4A16) costs the same as the INT4 row; `estimate` sizes it.
        return (
            f"{accelerator.name} has no FP4 tensor cores: weight-only FP4 sizes as the int4 "
            "(W4A16) candidate"
        )
    if accelerator.compute_tflops(precision) is None:
        return f"{accelerator.name} publishes no dense BF16 peak"
    return None


def disaggregated_candidate(
    workload: Workload,
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    precision: str,
    degrees: list[int],
    calibration: Calibration,
    price: float | None,
    memory_plans: Mapping[int, MemoryPlan] | None = None,
    shapes: Mapping[int, ReplicaShape | None] | None = None,
) -> SweepCandidate:
    """The cheapest prefill/decode pairing of one accelerator and precision as a candidate.

    Cost per million output tokens = price × accelerator-seconds per request / output tokens
    (both pools), the aggregated formula with the pair's accelerators.
    """
    option, reason = best_disaggregated(
        model, accelerator, precision, degrees, workload.input_tokens, workload.output_tokens,
        calibration, workload.ttft_ms, workload.tpot_ms, float(workload.percentile),
        workload.serving_stack, memory_plans, workload.kv_cache_dtype, shapes=shapes,
    )  # fmt: skip
    if option is None:
        return SweepCandidate(
            accelerator.slug, accelerator.name, precision, degrees[-1],
            accelerator.accelerators_per_server, False, reason, serving="disaggregated",
            **_stack(workload, precision),
        )  # fmt: skip
    prefill, decode = option.prefill, option.decode
    band = error_band(calibration, accelerator.family, precision, model)
    per_accel = option.output_tokens_per_s_per_accelerator
    cost = usd_per_million_output_tokens(1, price, per_accel)
    candidate = SweepCandidate(
        accelerator_slug=accelerator.slug,
        accelerator_name=accelerator.name,
        precision=precision,
        tensor_parallel=decode.tensor_parallel,
        accelerators_per_server=accelerator.accelerators_per_server,
        feasible=True,
        infeasible_reason=None,
        batch_per_replica=decode.batch,
        output_tokens_per_s_per_replica=decode.output_tokens_per_s,
        requests_per_s_per_replica=decode.requests_per_s,
        ttft_ms=prefill.ttft_ms,
        tpot_ms=decode.tpot_ms,
        usd_per_accelerator_hour=price,
        usd_per_million_output_tokens=cost,
        expected_error_pct=band.pct,
        provenance=band.basis + _stack_provenance(workload, precision),
        calibrated_architecture=band.calibrated_architecture,
        serving="disaggregated",
        prefill_tensor_parallel=prefill.tensor_parallel,
        prefill_requests_per_s_per_replica=prefill.requests_per_s,
        kv_transfer_ms=prefill.kv_transfer_ms,
        kv_transfer_path=prefill.kv_transfer_path,
        # each pool's accelerators ÷ its requests/s (the option's TP_p/rps_p + TP_d/rps_d)
        prefill_accelerator_s_per_request=prefill.tensor_parallel / prefill.requests_per_s,
        decode_accelerator_s_per_request=decode.tensor_parallel / decode.requests_per_s,
        **_stack(workload, precision),
    )
    if workload.peak_concurrency is None and workload.peak_requests_per_s is None:
        return candidate
    return with_disaggregated_fleet(candidate, workload)


def with_disaggregated_fleet(candidate: SweepCandidate, workload: Workload) -> SweepCandidate:
    """A feasible disaggregated candidate with both pools sized for the workload's peak."""
    option = DisaggregatedOption(
        prefill=PrefillPool(
            tensor_parallel=candidate.prefill_tensor_parallel or 1,
            prompts_per_step=1,
            step_ms=max((candidate.ttft_ms or 0.0) - (candidate.kv_transfer_ms or 0.0), 0.0),
            utilisation=0.0,
            requests_per_s=candidate.prefill_requests_per_s_per_replica or 0.0,
            kv_transfer_ms=candidate.kv_transfer_ms or 0.0,
            kv_transfer_path=candidate.kv_transfer_path or "",
            ttft_ms=candidate.ttft_ms or 0.0,
        ),
        decode=DecodePool(
            tensor_parallel=candidate.tensor_parallel,
            batch=candidate.batch_per_replica,
            max_batch=candidate.batch_per_replica,
            tpot_ms=candidate.tpot_ms or 0.0,
            requests_per_s=candidate.requests_per_s_per_replica,
            output_tokens_per_s=candidate.output_tokens_per_s_per_replica,
        ),
        accelerator_seconds_per_request=0.0,
        output_tokens_per_s_per_accelerator=0.0,
        decode_per_prefill=0.0,
    )
    fleet = plan_disaggregated_fleet(
        option,
        output_len=workload.output_tokens,
        accelerators_per_server=candidate.accelerators_per_server,
        peak_concurrency=workload.peak_concurrency,
        peak_requests_per_s=workload.peak_requests_per_s,
        headroom_pct=workload.headroom_pct,
        failure_domains=workload.failure_domains,
        n_plus_one=workload.n_plus_one,
    )
    return with_fleet(
        candidate,
        fleet,
        prefill_replicas=fleet.prefill_replicas,
        decode_replicas=fleet.decode_replicas,
    )


def at_request_rate(candidate: SweepCandidate, requests_per_s: float) -> dict[str, float | None]:
    """The candidate's prefill and decode accelerator-seconds per request for another rate of
    its (aggregated) replica, e.g. a measured one: the total is accelerators ÷ requests/s, the
    modelled prefill share kept. Field values for :func:`dataclasses.replace`."""
    prefill = candidate.prefill_accelerator_s_per_request
    decode = candidate.decode_accelerator_s_per_request
    if prefill is None or decode is None or prefill + decode <= 0 or not requests_per_s > 0:
        return {"prefill_accelerator_s_per_request": None, "decode_accelerator_s_per_request": None}
    total = candidate.accelerators_per_replica / requests_per_s
    share = prefill / (prefill + decode)
    return {
        "prefill_accelerator_s_per_request": total * share,
        "decode_accelerator_s_per_request": total * (1.0 - share),
    }


def with_fleet(candidate: SweepCandidate, fleet, **extra) -> SweepCandidate:
    """The candidate carrying a sized fleet (replicas, accelerators, servers) and its hourly
    price; `extra` adds fields a serving mode sizes besides (the disaggregated pools)."""
    price = candidate.usd_per_accelerator_hour
    return replace(
        candidate,
        replicas=fleet.replicas,
        accelerators=fleet.accelerators,
        servers=fleet.servers,
        usd_per_hour=fleet.accelerators * price if price is not None else None,
        **extra,
    )


def _candidate(
    workload: Workload,
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    precision: str,
    tp: int,
    layout: ParallelLayout | None,
    calibration: Calibration,
    price: float | None,
) -> tuple[SweepCandidate, ReplicaCapacity]:
    """One configuration (within a server when ``layout`` is None) at the workload's target,
    with the replica capacity behind it (its memory plan and shape serve the disaggregated
    search)."""
    has_target = workload.ttft_ms is not None or workload.tpot_ms is not None
    has_peak = workload.peak_concurrency is not None or workload.peak_requests_per_s is not None
    multi = dict(
        pipeline_parallel=layout.pp if layout else 1,
        expert_parallel=layout.ep if layout else 1,
        parallel_label=layout.label if layout else "",
        **_stack(workload, precision),
    )
    cap = replica_capacity(
        model,
        accelerator,
        precision,
        tp,
        workload.input_tokens,
        workload.output_tokens,
        calibration,
        ttft_target_ms=workload.ttft_ms if has_target else None,
        tpot_target_ms=workload.tpot_ms if has_target else None,
        percentile=float(workload.percentile),
        kv_precision=workload.kv_cache_dtype,
        serving_stack=workload.serving_stack,
        parallel=layout,
    )
    if not cap.feasible:
        return SweepCandidate(
            accelerator.slug,
            accelerator.name,
            precision,
            tp,
            accelerator.accelerators_per_server,
            False,
            cap.infeasible_reason,
            **multi,
        ), cap
    gpus = layout.gpus if layout else tp
    point = cap.point
    prefill_s, decode_s = accelerator_seconds_per_request(
        cap.shape, point.batch, point.requests_per_s, gpus,
        workload.input_tokens, workload.output_tokens,
    )  # fmt: skip
    band = error_band(calibration, accelerator.family, precision, model)
    cost = usd_per_million_output_tokens(gpus, price, point.output_tokens_per_s)
    replicas = accels = servers = None
    fleet_cost = None
    if has_peak:
        plan = plan_replicas(
            tensor_parallel=gpus,
            accelerators_per_server=accelerator.accelerators_per_server,
            batch_per_replica=point.batch,
            requests_per_s_per_replica=point.requests_per_s,
            peak_concurrency=workload.peak_concurrency,
            peak_requests_per_s=workload.peak_requests_per_s,
            headroom_pct=workload.headroom_pct,
            failure_domains=workload.failure_domains,
            n_plus_one=workload.n_plus_one,
        )
        replicas, accels, servers = plan.replicas, plan.accelerators, plan.servers
        if price is not None:
            fleet_cost = accels * price
    provenance = band.basis
    if layout is not None:
        provenance += (
            f"; scale-out {layout.link.gbps_per_gpu:g} Gb/s per GPU ({layout.link.source})"
        )
    provenance += _stack_provenance(workload, precision)
    candidate = SweepCandidate(
        accelerator_slug=accelerator.slug,
        accelerator_name=accelerator.name,
        precision=precision,
        tensor_parallel=tp,
        accelerators_per_server=accelerator.accelerators_per_server,
        feasible=True,
        infeasible_reason=None,
        batch_per_replica=point.batch,
        output_tokens_per_s_per_replica=point.output_tokens_per_s,
        requests_per_s_per_replica=point.requests_per_s,
        ttft_ms=point.ttft_ms,
        tpot_ms=point.tpot_ms,
        replicas=replicas,
        accelerators=accels,
        servers=servers,
        usd_per_accelerator_hour=price,
        usd_per_million_output_tokens=cost,
        usd_per_hour=fleet_cost,
        expected_error_pct=band.pct,
        provenance=provenance,
        calibrated_architecture=band.calibrated_architecture,
        prefill_accelerator_s_per_request=prefill_s,
        decode_accelerator_s_per_request=decode_s,
        **multi,
    )
    return candidate, cap


def sweep(
    workload: Workload,
    model: ModelSpec,
    accelerators: Iterable[AcceleratorSpec],
    calibration: Calibration,
    usd_per_accelerator_hour: Mapping[str, float] | None = None,
    scale_out_links: Mapping[str, ScaleOutLink] | None = None,
) -> SweepResult:
    """Try every accelerator × precision × TP degree for one workload.

    Args:
        workload: The request type and its targets.
        model: Model spec.
        accelerators: Candidate accelerators.
        calibration: Efficiency factors.
        usd_per_accelerator_hour: Accelerator slug -> USD per accelerator-hour (e.g. the
            cheapest on-demand cloud price ÷ accelerators per instance).
        scale_out_links: Accelerator slug -> the scale-out link of its server (default by
            family, :func:`planner.engine.parallelism.scale_out_link`), for replicas that
            span servers when none fits one server.

    Returns:
        The candidates, feasible ones first by cost, then infeasible ones with reasons.
    """
    prices = usd_per_accelerator_hour or {}
    links = scale_out_links or {}
    candidates: list[SweepCandidate] = []
    # The workload's own stack first, then each stack compared (the memory rule and the
    # scheduler cap differ; the step times do not).
    sized_workloads = [workload] + [
        replace(workload, serving_stack=stack, compare_stacks=(), compared=True)
        for stack in workload.stacks[1:]
    ]
    for accelerator in accelerators:
        price = prices.get(accelerator.slug)
        degrees = valid_tp_degrees(model, accelerator)
        for sized in sized_workloads:
            for precision in sized.precisions:
                reason = serving_stack_unsupported(
                    sized.serving_stack, accelerator.vendor
                ) or _precision_reason(accelerator, precision)
                if reason or not degrees:
                    candidates.append(
                        SweepCandidate(
                            accelerator.slug,
                            accelerator.name,
                            precision,
                            degrees[0] if degrees else 1,
                            accelerator.accelerators_per_server,
                            False,
                            reason or "no valid tensor-parallel degree",
                            **_stack(sized, precision),
                        )
                    )
                    continue
                memory_plans: dict[int, MemoryPlan] = {}
                shapes: dict[int, ReplicaShape | None] = {}
                found = False
                for tp in degrees:
                    candidate, cap = _candidate(
                        sized, model, accelerator, precision, tp, None, calibration, price
                    )
                    memory_plans[tp] = cap.memory
                    shapes[tp] = cap.shape
                    candidates.append(candidate)
                    found = found or candidate.feasible
                # No single server holds it: try replicas over 2, 3, ... servers joined by
                # the scale-out fabric, stopping at the fewest servers that work. When only a
                # whole server holds a replica, two servers may still be cheaper per token
                # (the weights spread thinner leave more memory for the KV cache, so each GPU
                # holds a larger batch): those layouts are tried too and the cost ranking
                # decides.
                servers = 2
                whole_server = found and not any(
                    c.feasible and c.tensor_parallel < accelerator.accelerators_per_server
                    for c in candidates[-len(degrees) :]
                )
                while (not found or whole_server) and servers <= MAX_SERVERS_PER_REPLICA:
                    whole_server = False
                    link = links.get(accelerator.slug) or scale_out_link(accelerator)
                    for layout in multi_node_layouts(model, accelerator, degrees, servers, link):
                        candidate, _ = _candidate(
                            sized,
                            model,
                            accelerator,
                            precision,
                            layout.tp,
                            layout,
                            calibration,
                            price,
                        )
                        candidates.append(candidate)
                        found = found or candidate.feasible
                    servers += 1
                # Disaggregated pools use single-server replicas (both pools within a server
                # each); a model no server holds gets the infeasible row with the reason.
                if sized.disaggregated and sized.ttft_ms and sized.tpot_ms:
                    candidates.append(
                        disaggregated_candidate(sized, model, accelerator, precision, degrees,
                                                calibration, price, memory_plans, shapes)
                    )  # fmt: skip

    return ranked_result(candidates, workload.serving_stack)


def cost_order(c: SweepCandidate) -> tuple:
    """The one ranking by cost: feasible first, then priced, cheapest per million output
    tokens, then the higher throughput per replica. The sizing table's cost sort and the
    "cheapest" badge (``SweepResult.best``) both use it."""
    cost = c.usd_per_million_output_tokens
    return (not c.feasible, cost is None, cost or 0.0, -c.output_tokens_per_s_per_replica)


def ranked_result(
    candidates: Iterable[SweepCandidate], serving_stack: str | None = None
) -> SweepResult:
    """Candidates ranked by :func:`cost_order`, with the first feasible priced one as ``best``;
    called again whenever candidates change after the sweep (a load test's measured capacity,
    the fleet), so that ``best`` is always the cheapest row shown. With ``serving_stack`` the
    badge goes to a row of that stack (the workload's): compared stacks are for reading."""
    ranked = tuple(sorted(candidates, key=cost_order))
    best = next(
        (
            c
            for c in ranked
            if c.feasible
            and c.usd_per_million_output_tokens is not None
            and serving_stack in (None, c.serving_stack)
        ),
        None,
    )
    return SweepResult(ranked, best)
