"""Sizing service: catalog and workload rows in, engine out, the consultant's choice saved.

Fetch (catalog rows → engine specs, cheapest cloud prices), compute (planner.engine.sweep /
capacity / performance), store (the chosen candidate on the workload). Views call these.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace
from functools import lru_cache

from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from catalog.models import Accelerator, ModelArchitecture, ServerPlatform
from catalog.selectors import catalog_version, cheapest_on_demand_by_accelerator
from planner.engine import demand
from planner.engine import sweep as sweep_engine
from planner.engine.autoscaling import (
    AutoscalingRecommendation,
    cold_start,
    recommend_autoscaling,
)
from planner.engine.calibration import load_calibration
from planner.engine.capacity import LoadCurve, load_curve, plan_replicas, replica_capacity
from planner.engine.estimate import EstimateRequest, EstimateResult, estimate
from planner.engine.limits import finite_or_none
from planner.engine.memory import ACCELERATOR_BYTES_PER_GB, SERVING_STACKS, weights_bytes
from planner.engine.network import REGIONS, RegionLatency, flag_regions
from planner.engine.parallelism import ParallelLayout, scale_out_link
from planner.engine.performance import Calibration, steady_state
from planner.engine.second_opinion import Figures, SecondOpinion, second_opinion
from planner.engine.shown import quantity
from planner.engine.specs import (
    AcceleratorSpec,
    ModelSpec,
    accelerator_family,
    is_pcie_interconnect,
    load_accelerators_csv,
    load_models_csv,
)
from planner.models import Serving, Workload
from planner.peer import aiconfigurator as peer

# Batch work states a whole-request time; the engine sizes on TTFT and TPOT. Planner rule:
# a fifth of the budget for queueing and prefill, the rest spread over the p95 output.
BATCH_TTFT_SHARE = 0.2


@lru_cache(maxsize=1)
def calibration() -> Calibration:
    """The fitted efficiency factors shipped with the project (planner/engine/data)."""
    return load_calibration()


def model_spec(model: ModelArchitecture) -> ModelSpec:
    """The engine's view of a catalog model."""
    heads = model.num_attention_heads
    return ModelSpec(
        slug=model.slug,
        name=model.name,
        params_total_b=model.params_total_b,
        params_active_b=model.params_active_b or model.params_total_b,
        layers=model.num_hidden_layers,
        hidden=model.hidden_size,
        intermediate=model.intermediate_size or 0,
        moe_intermediate=model.moe_intermediate_size,
        heads=heads,
        kv_heads=model.num_key_value_heads or heads,
        head_dim=model.head_dim or model.hidden_size // heads,
        vocab=model.vocab_size,
        max_context=model.max_position_embeddings,
        experts=model.num_experts,
        shared_experts=model.num_shared_experts,
        experts_per_token=model.experts_per_token,
        dense_layers=model.first_k_dense_replace or 0,
        attention_kind=model.attention_kind or "GQA",
        sliding_window=model.sliding_window,
        kv_lora_rank=model.kv_lora_rank,
        qk_rope_head_dim=model.qk_rope_head_dim,
        v_head_dim=model.v_head_dim,
        gated_mlp=model.gated_mlp,
        tie_word_embeddings=model.tie_word_embeddings,
    )


def accelerator_specs() -> dict[str, AcceleratorSpec]:
    """Every catalog accelerator the engine can size on (memory and bandwidth known).

    Accelerators per server come from the largest catalog platform for the part, else 8.
    Cached per process until the catalog changes (see :func:`catalog_version`).
    """
    return _catalog_snapshot(catalog_version())[0]


def accelerator_prices_usd_per_hour() -> dict[str, float]:
    """Cheapest on-demand cloud price per accelerator-hour, by accelerator slug."""
    return _catalog_snapshot(catalog_version())[1]


@lru_cache(maxsize=4)
def _catalog_snapshot(version: tuple) -> tuple[dict[str, AcceleratorSpec], dict[str, float]]:
    """Specs and prices read from the catalog at one version (the key of the cache)."""
    return _read_accelerator_specs(), _read_prices()


def _read_accelerator_specs() -> dict[str, AcceleratorSpec]:
    per_server: dict[int, int] = {}
    for accelerator_id, count in ServerPlatform.objects.filter(
        accelerator__isnull=False, accelerators_per_server__isnull=False
    ).values_list("accelerator_id", "accelerators_per_server"):
        per_server[accelerator_id] = max(per_server.get(accelerator_id, 0), count)
    specs = {}
    for row in Accelerator.objects.filter(memory_gb__isnull=False).order_by("vendor", "name"):
        specs[row.slug] = AcceleratorSpec(
            slug=row.slug,
            vendor=row.vendor,
            name=row.name,
            memory_gb=row.memory_gb,
            memory_bandwidth_tbps=row.memory_bandwidth_tbps,
            bf16_dense_tflops=row.bf16_dense_tflops,
            fp8_dense_tflops=row.fp8_dense_tflops,
            int8_dense_tops=row.int8_dense_tops,
            fp4_dense_tflops=row.fp4_dense_tflops,
            tdp_w=row.tdp_w,
            scale_up_bw_gbytes_per_s_per_direction=row.scale_up_bw_gbytes_per_s_per_direction,
            family=accelerator_family(row.slug),
            # Rack-scale systems (GB200 NVL72) keep tensor parallelism inside an 8-GPU group.
            accelerators_per_server=min(per_server.get(row.pk, 8), 8),
            scale_up_pcie=is_pcie_interconnect(row.scale_up_interconnect),
        )
    return specs


def _read_prices() -> dict[str, float]:
    cheapest = cheapest_on_demand_by_accelerator(Accelerator.objects.values_list("pk", flat=True))
    return {
        offering.accelerator.slug: float(offering.usd_per_accelerator_hour)
        for offering in cheapest.values()
    }


def engine_workload(
    workload: Workload,
    *,
    precisions: tuple[str, ...] | None = None,
    compare_stacks: bool = False,
):
    """The engine's view of a workload; batch time targets become TTFT and TPOT targets.

    With ``compare_stacks`` every other serving stack is sized beside the workload's own (the
    consultant asked for the comparison on the sizing page)."""
    ttft_ms, tpot_ms = workload.ttft_ms, workload.tpot_ms
    if not (ttft_ms and tpot_ms) and workload.e2e_s:
        output = workload.output_tokens_p95 or workload.output_tokens_mean
        ttft_ms = BATCH_TTFT_SHARE * workload.e2e_s * 1000
        tpot_ms = (1 - BATCH_TTFT_SHARE) * workload.e2e_s * 1000 / output
    return sweep_engine.Workload(
        input_tokens=workload.input_tokens_mean,
        output_tokens=workload.output_tokens_mean,
        ttft_ms=ttft_ms,
        tpot_ms=tpot_ms,
        percentile=workload.percentile,
        peak_concurrency=workload.peak_concurrency,
        peak_requests_per_s=workload.peak_requests_per_s,
        headroom_pct=float(workload.headroom_pct),
        failure_domains=1,
        n_plus_one=workload.n_plus_one,
        precisions=precisions or (workload.precision,),
        # Disaggregated prefill/decode pools are sized at explicit TTFT and TPOT targets.
        disaggregated=bool(workload.ttft_ms and workload.tpot_ms),
        serving_stack=workload.serving_stack,
        kv_cache_dtype=workload.kv_cache_dtype or "auto",
        compare_stacks=(
            tuple(s for s in SERVING_STACKS if s != workload.serving_stack)
            if compare_stacks
            else ()
        ),
    )


@lru_cache(maxsize=256)
def _sweep_per_replica(
    model: ModelSpec,
    accelerators: tuple[AcceleratorSpec, ...],
    prices: tuple[tuple[str, float], ...],
    latency_target: sweep_engine.Workload,
) -> sweep_engine.SweepResult:
    """The sweep without traffic: what one replica of each candidate does at the target.

    Cached per process: editing traffic, headroom or N+1 (the most frequent changes) then
    only re-plans replicas, which takes microseconds per candidate.
    """
    return sweep_engine.sweep(latency_target, model, accelerators, calibration(), dict(prices))


def _with_fleet(candidate, target: sweep_engine.Workload):
    """The candidate with replicas, accelerators, servers and fleet price for the peak."""
    if not candidate.feasible or (
        target.peak_concurrency is None and target.peak_requests_per_s is None
    ):
        return candidate
    if candidate.disaggregated:
        return sweep_engine.with_disaggregated_fleet(candidate, target)
    fleet = plan_replicas(
        tensor_parallel=candidate.accelerators_per_replica,
        accelerators_per_server=candidate.accelerators_per_server,
        batch_per_replica=candidate.batch_per_replica,
        requests_per_s_per_replica=candidate.requests_per_s_per_replica,
        peak_concurrency=target.peak_concurrency,
        peak_requests_per_s=target.peak_requests_per_s,
        headroom_pct=target.headroom_pct,
        failure_domains=target.failure_domains,
        n_plus_one=target.n_plus_one,
    )
    return sweep_engine.with_fleet(candidate, fleet)


def _workload_sweep_base(
    workload: Workload, *, all_precisions: bool, measured: bool = True, compare_stacks=False
) -> tuple[sweep_engine.SweepResult, sweep_engine.Workload]:
    """The cached per-replica sweep of the workload, and its target with the peak.

    With ``measured``, a candidate with a load test attached takes its capacity from the
    measurement (planner.measured), the others stay modelled.
    """
    precisions = ("bf16", "fp8", "int4", "fp4") if all_precisions else None
    target = engine_workload(workload, precisions=precisions, compare_stacks=compare_stacks)
    per_replica_target = replace(
        target, peak_concurrency=None, peak_requests_per_s=None, headroom_pct=0.0
    )
    base = _sweep_per_replica(
        model_spec(workload.model),
        tuple(accelerator_specs().values()),
        tuple(sorted(accelerator_prices_usd_per_hour().items())),
        per_replica_target,
    )
    if measured:
        from planner.measured.services import apply_measurements  # that app builds on this one

        base = apply_measurements(workload, base)
    return base, target


def workload_sweep(
    workload: Workload,
    *,
    all_precisions: bool = False,
    measured: bool = True,
    compare_stacks: bool = False,
) -> sweep_engine.SweepResult:
    """Every accelerator × TP candidate for the workload (its precision, or all four; its
    serving stack, or with ``compare_stacks`` every stack, the others for reading)."""
    base, target = _workload_sweep_base(
        workload, all_precisions=all_precisions, measured=measured, compare_stacks=compare_stacks
    )
    return sweep_engine.ranked_result(
        (_with_fleet(c, target) for c in base.candidates), workload.serving_stack
    )


def _layout_suffix(pipeline_parallel: int, expert_parallel: int) -> str:
    return (f"|pp{pipeline_parallel}" if pipeline_parallel > 1 else "") + (
        f"|ep{expert_parallel}" if expert_parallel > 1 else ""
    )


def candidate_key(candidate) -> str:
    """A stable key of one candidate for URLs and forms: slug|precision|tp, plus |ppN or |epN
    for a replica spanning servers, or |p<prefill tp> for a disaggregated one."""
    key = (
        f"{candidate.accelerator_slug}|{candidate.precision}|{candidate.tensor_parallel}"
        + _layout_suffix(candidate.pipeline_parallel, candidate.expert_parallel)
    )
    if candidate.disaggregated:
        key += f"|p{candidate.prefill_tensor_parallel}"
    if candidate.compared:
        key += f"|{candidate.serving_stack}"
    return key


def is_compared_key(key: str) -> bool:
    """True for the key of a row of a compared serving stack (it ends with the stack)."""
    return key.rsplit("|", 1)[-1] in SERVING_STACKS


def _is_disaggregated_key(key: str) -> bool:
    """True when a candidate key carries the |p<prefill tp> part (not |ppN)."""
    return any(part[:1] == "p" and part[1:].isdigit() for part in key.split("|")[3:])


def model_weights_gb(workload: Workload) -> float:
    """Weights of the workload's model at its chosen (else requested) precision, GB (1e9)."""
    precision = workload.chosen_precision or workload.precision
    return weights_bytes(model_spec(workload.model), precision) / 1e9


def chosen_accelerators_per_replica(workload: Workload) -> int:
    """GPUs per replica of the saved choice: TP, TP × PP or EP (from its stored summary)."""
    summary = workload.chosen_summary or {}
    tp = workload.chosen_tensor_parallel or 1
    ep = int(summary.get("expert_parallel") or 1)
    return ep if ep > 1 else tp * int(summary.get("pipeline_parallel") or 1)


def chosen_key(workload: Workload) -> str | None:
    """The candidate key of the workload's saved configuration, or None."""
    if not workload.has_choice:
        return None
    summary = workload.chosen_summary or {}
    key = (
        f"{workload.chosen_accelerator.slug}|{workload.chosen_precision}|"
        f"{workload.chosen_tensor_parallel}"
        + _layout_suffix(
            int(summary.get("pipeline_parallel") or 1), int(summary.get("expert_parallel") or 1)
        )
    )
    if workload.chosen_serving == Serving.DISAGGREGATED:
        key += f"|p{workload.chosen_prefill_tensor_parallel}"
    return key


def candidate_find(result: sweep_engine.SweepResult, key: str):
    """The candidate with this key, or None.

    The sweep offers one disaggregated candidate per accelerator and precision, whose TP pair
    follows the inputs: a disaggregated key finds it whatever its TP pair is now.
    """
    found = next((c for c in result.candidates if candidate_key(c) == key), None)
    if found is None and _is_disaggregated_key(key):
        slug, precision = key.split("|")[:2]
        found = next(
            (
                c
                for c in result.candidates
                if c.disaggregated and (c.accelerator_slug, c.precision) == (slug, precision)
            ),
            None,
        )
    return found


@dataclass(frozen=True, slots=True)
class CandidateDetail:
    """Why a candidate is (in)feasible: memory breakdown, bottleneck and load curve."""

    candidate: sweep_engine.SweepCandidate
    weights_gb_per_gpu: float
    kv_budget_gb_per_gpu: float
    activation_gb_per_gpu: float
    reserve_gb_per_gpu: float
    unusable_gb_per_gpu: float
    capacity_gb_per_gpu: float
    kv_cache_bytes_per_token: float
    max_concurrent_sequences: int
    batch_curve: tuple[float, ...]
    ttft_curve_ms: tuple[float, ...]
    tpot_curve_ms: tuple[float, ...]
    throughput_curve: tuple[float, ...]
    bottleneck: str
    autoscaling: AutoscalingRecommendation | None


GB = ACCELERATOR_BYTES_PER_GB  # the vendor's GB of HBM is a GiB (engine memory.py)


@lru_cache(maxsize=256)
def _replica_curve(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    precision: str,
    tensor_parallel: int,
    target: sweep_engine.Workload,
    pipeline_parallel: int = 1,
    expert_parallel: int = 1,
    serving_stack: str = "vllm",
):
    """One replica's capacity at the target and its steady state over batch sizes (cached),
    sized for ``serving_stack`` with the target's KV-cache dtype."""
    layout = None
    if (
        pipeline_parallel > 1
        or expert_parallel > 1
        or tensor_parallel > accelerator.accelerators_per_server
    ):
        layout = ParallelLayout(
            tensor_parallel,
            pipeline_parallel,
            expert_parallel,
            accelerator.accelerators_per_server,
            scale_out_link(accelerator),
        )
    capacity = replica_capacity(
        model,
        accelerator,
        precision,
        tensor_parallel,
        target.input_tokens,
        target.output_tokens,
        calibration(),
        ttft_target_ms=target.ttft_ms,
        tpot_target_ms=target.tpot_ms,
        percentile=float(target.percentile),
        kv_precision=target.kv_cache_dtype,
        serving_stack=serving_stack,
        parallel=layout,
    )
    if not (capacity.memory.feasible and capacity.max_batch >= 1):
        return capacity, LoadCurve((), (), (), ())
    shape = capacity.shape
    return capacity, load_curve(
        shape, capacity.max_batch, target.input_tokens, target.output_tokens
    )


def _candidate_replica_curve(workload: Workload, candidate, target):
    """One replica of the candidate with no traffic on it: its capacity and batch curve."""
    return _replica_curve(
        model_spec(workload.model),
        accelerator_specs()[candidate.accelerator_slug],
        candidate.precision,
        candidate.tensor_parallel,
        replace(target, peak_concurrency=None, peak_requests_per_s=None, headroom_pct=0.0),
        candidate.pipeline_parallel,
        candidate.expert_parallel,
        # A compared row's own stack; else the workload's (a stored summary may predate it).
        candidate.serving_stack if candidate.compared else workload.serving_stack,
    )


def candidate_detail(workload: Workload, candidate) -> CandidateDetail:
    """Memory breakdown per GPU, the latency/throughput curve over batch sizes, and why."""
    target = engine_workload(workload)
    capacity, curve = _candidate_replica_curve(workload, candidate, target)
    memory = capacity.memory
    capacity_gb = memory.capacity_bytes_per_gpu / GB
    usable_gb = memory.usable_bytes_per_gpu / GB
    if not candidate.feasible:
        bottleneck = candidate.infeasible_reason or "infeasible"
    elif candidate.disaggregated:
        bottleneck = (
            f"disaggregated: prefill replicas (TP {candidate.prefill_tensor_parallel}) serve "
            f"{candidate.prefill_requests_per_s_per_replica:,.2f} prompts/s each within the "
            f"TTFT target, {candidate.ttft_ms:,.0f} ms including the "
            f"{candidate.kv_transfer_ms:,.1f} ms KV transfer over {candidate.kv_transfer_path}; "
            f"decode replicas (TP {candidate.tensor_parallel}) hold "
            f"{quantity(candidate.batch_per_replica, 'stream')} each at TPOT {candidate.tpot_ms:,.1f} ms. The memory and curve below are "
            "the decode replica's serving everything, for comparison"
        )
    elif candidate.batch_per_replica >= capacity.max_batch:
        bottleneck = (
            f"memory: the KV cache holds {capacity.max_batch} sequences per replica, and the "
            "latency targets would allow more"
        )
    else:
        limits = []
        if target.tpot_ms and candidate.tpot_ms and candidate.tpot_ms >= 0.9 * target.tpot_ms:
            limits.append(
                f"TPOT {candidate.tpot_ms:.0f} ms against the {target.tpot_ms:.0f} ms target"
            )
        if target.ttft_ms and candidate.ttft_ms and candidate.ttft_ms >= 0.9 * target.ttft_ms:
            limits.append(
                f"TTFT {candidate.ttft_ms:.0f} ms against the {target.ttft_ms:.0f} ms target"
            )
        bottleneck = "latency: " + (" and ".join(limits) if limits else "the targets cap the batch")
    autoscaling = None
    if candidate.feasible and (workload.peak_concurrency or workload.peak_requests_per_s):
        weights_gb = memory.weights_bytes_per_gpu * candidate.accelerators_per_replica / GB
        autoscaling = _autoscaling(workload, candidate, capacity.max_batch, weights_gb)
    return CandidateDetail(
        candidate=candidate,
        weights_gb_per_gpu=memory.weights_bytes_per_gpu / GB,
        kv_budget_gb_per_gpu=max(memory.kv_budget_bytes_per_gpu, 0.0) / GB,
        activation_gb_per_gpu=memory.activation_peak_bytes_per_gpu / GB,
        reserve_gb_per_gpu=memory.runtime_reserve_bytes_per_gpu / GB,
        unusable_gb_per_gpu=capacity_gb - usable_gb,
        capacity_gb_per_gpu=capacity_gb,
        kv_cache_bytes_per_token=memory.kv_bytes_per_token_replica,
        max_concurrent_sequences=memory.max_concurrent_sequences,
        batch_curve=curve.batch,
        ttft_curve_ms=curve.ttft_ms,
        tpot_curve_ms=curve.tpot_ms,
        throughput_curve=curve.output_tokens_per_s,
        bottleneck=bottleneck,
        autoscaling=autoscaling,
    )


@dataclass(frozen=True, slots=True)
class CandidateSecondOpinion:
    """The peer's estimate of a candidate beside the planner's, or why there is none.

    Attributes:
        peer_name: The peer, e.g. "aiconfigurator".
        batch_per_replica: The operating point both models are asked about.
        opinion: The comparison and its band (None when the peer does not cover it).
        not_covered: Why the peer gives no figure ("" when it does).
        source: The peer's version and the kernel tables it read.
    """

    peer_name: str
    batch_per_replica: int
    opinion: SecondOpinion | None
    not_covered: str = ""
    source: str = ""


def candidate_second_opinion(workload: Workload, candidate) -> CandidateSecondOpinion | None:
    """aiconfigurator's figures for the candidate's replica at its batch beside the planner's
    (mean TTFT and TPOT of its steady state at that batch: the peer reports means), with the
    band the disagreement leaves; None when switched off (SECOND_OPINION) or infeasible."""
    if not settings.SECOND_OPINION or not candidate.feasible:
        return None
    stack = candidate.serving_stack if candidate.compared else workload.serving_stack
    target = engine_workload(workload)
    request = peer.PeerRequest(
        accelerator=candidate.accelerator_slug,
        model=workload.model.slug,
        precision=candidate.precision,
        kv_cache_dtype=candidate.kv_cache_dtype,
        serving_stack=stack,
        tensor_parallel=candidate.tensor_parallel,
        batch_per_replica=candidate.batch_per_replica,
        input_tokens=round(target.input_tokens),
        output_tokens=round(target.output_tokens),
        pipeline_parallel=candidate.pipeline_parallel,
        expert_parallel=candidate.expert_parallel,
        disaggregated=candidate.disaggregated,
        accelerator_name=candidate.accelerator_name,
        model_name=workload.model.name,
    )
    batch = candidate.batch_per_replica
    found = peer.peer_estimate(request)
    if not found.covered:
        return CandidateSecondOpinion(peer.PEER_NAME, batch, None, not_covered=found.not_covered)
    capacity, _ = _candidate_replica_curve(workload, candidate, target)
    state = steady_state(capacity.shape, float(batch), target.input_tokens, target.output_tokens)
    planner_figures = Figures(
        output_tokens_per_s=float(state.output_tokens_per_s[0]),
        ttft_ms=float(state.ttft_service_ms[0]),
        tpot_ms=float(state.tpot_ms[0]),
    )
    peer_figures = Figures(found.output_tokens_per_s_per_replica, found.ttft_ms, found.tpot_ms)
    opinion = second_opinion(
        planner_figures,
        peer_figures,
        candidate.expected_error_pct or 0.0,
        peer.PEER_NAME,
        # A load-tested candidate (planner.measured) keeps its measurement's band.
        measured=(candidate.provenance or "").startswith("measured"),
    )
    return CandidateSecondOpinion(peer.PEER_NAME, batch, opinion, source=found.source)


def peak_load(workload: Workload, candidate) -> demand.PeakLoad:
    """The workload's peak traffic on the candidate's replica (the engine's demand input)."""
    return demand.PeakLoad(
        peak_concurrency=workload.peak_concurrency,
        peak_requests_per_s=workload.peak_requests_per_s,
        tensor_parallel=candidate.accelerators_per_replica,
        accelerators_per_server=candidate.accelerators_per_server,
        batch_per_replica=candidate.batch_per_replica,
        requests_per_s_per_replica=candidate.requests_per_s_per_replica,
        headroom_pct=float(workload.headroom_pct),
        n_plus_one=workload.n_plus_one,
    )


def _autoscaling(workload: Workload, candidate, max_batch: int, weights_gb_per_replica: float):
    if not candidate.feasible:
        return None
    start = cold_start(
        weights_gb=weights_gb_per_replica,
        read_gb_per_s=float(workload.weights_read_gb_per_s),
        engine_start_s=float(workload.engine_start_s),
        daily_profile=workload.daily_profile or [1.0],
    )
    # The bounds and the replicas-by-hour chart are one computation (the recommendation's).
    return recommend_autoscaling(
        load=peak_load(workload, candidate),
        daily_profile=workload.daily_profile or [1.0] * 24,
        max_concurrency_per_replica=max_batch,
        start=start,
    )


def replicas_by_hour(workload: Workload, candidate) -> list[int]:
    """Replicas needed in each UTC hour of the daily profile (peak sized as the candidate)."""
    profile = workload.daily_profile or [1.0] * 24
    return list(demand.replicas_by_hour(peak_load(workload, candidate), profile))


# Every input that changes a candidate's replicas; the chosen plan records their hash.
REPLAN_INPUTS = (
    "model_id", "precision", "input_tokens_mean", "output_tokens_mean", "output_tokens_p95",
    "percentile", "ttft_ms", "tpot_ms", "e2e_s", "peak_concurrency", "peak_requests_per_s",
    "headroom_pct", "n_plus_one",
)  # fmt: skip


# Inputs added later, with the value every earlier plan was sized with: hashed only when they
# differ from it, so a plan sized before they existed is not reported stale for them.
REPLAN_INPUTS_SINCE = {"serving_stack": "vllm", "kv_cache_dtype": "auto"}


def workload_inputs_hash(workload: Workload) -> str:
    """SHA-256 of the sizing inputs of the workload (the chosen replica plan's provenance)."""
    values = {name: getattr(workload, name) for name in REPLAN_INPUTS}
    for name, before in REPLAN_INPUTS_SINCE.items():
        if (getattr(workload, name) or before) != before:
            values[name] = getattr(workload, name)
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()


def _store_candidate(workload: Workload, candidate) -> None:
    workload.chosen_replicas = candidate.replicas
    workload.chosen_accelerators = candidate.accelerators
    workload.chosen_servers = candidate.servers
    workload.chosen_tensor_parallel = candidate.tensor_parallel
    workload.chosen_serving = candidate.serving
    workload.chosen_prefill_tensor_parallel = candidate.prefill_tensor_parallel
    workload.chosen_prefill_replicas = candidate.prefill_replicas
    workload.chosen_summary = {k: v for k, v in asdict(candidate).items()}
    workload.chosen_inputs_hash = workload_inputs_hash(workload)
    workload.chosen_problem = ""


def chosen_replan(workload: Workload) -> None:
    """Re-plan the chosen configuration's replicas for the workload's current inputs (unsaved).

    Same accelerator, precision and TP; its replicas, accelerators, servers and summary follow
    the sizing table. When it no longer serves the inputs the numbers are cleared and
    ``chosen_problem`` says why, so no page or document counts a fleet that misses its target.
    """
    if not workload.has_choice:
        return
    key = chosen_key(workload)
    # One candidate's fleet, not the whole table's: the page plans the others when it renders.
    base, target = _workload_sweep_base(
        workload, all_precisions=workload.chosen_precision != workload.precision
    )
    candidate = candidate_find(base, key)
    if candidate is not None:
        candidate = _with_fleet(candidate, target)
    if candidate is not None and candidate.feasible and candidate.replicas:
        _store_candidate(workload, candidate)
        return
    reason = (
        candidate.infeasible_reason
        if candidate is not None and candidate.infeasible_reason
        else "it is not a configuration of this model any more"
    )
    name = workload.chosen_accelerator.name.split(" (")[0]
    workload.chosen_problem = (
        f"The chosen {name} ({workload.chosen_precision.upper()}, TP "
        f"{workload.chosen_tensor_parallel}) no longer serves this workload: {reason}. "
        "Choose another configuration."
    )
    workload.chosen_replicas = workload.chosen_accelerators = workload.chosen_servers = None
    workload.chosen_prefill_replicas = None
    workload.chosen_summary = {}
    workload.chosen_inputs_hash = workload_inputs_hash(workload)


def workload_save(*, workload: Workload) -> Workload:
    """Save the edited workload; its chosen configuration is re-planned in the same save.

    Raises:
        StaleEditError: the row changed since it was loaded (see planner.versioning).
    """
    chosen_replan(workload)
    workload.save()
    return workload


@transaction.atomic
def workload_choose(*, workload: Workload, candidate) -> Workload:
    """Save a feasible candidate as the workload's configuration."""
    if not candidate.feasible:
        raise ValueError(
            f"This configuration cannot serve the workload: {candidate.infeasible_reason}"
        )
    accelerator = Accelerator.objects.get(slug=candidate.accelerator_slug)
    server = (
        ServerPlatform.objects.filter(
            accelerator=accelerator, accelerators_per_server=candidate.accelerators_per_server
        )
        .order_by("vendor", "name")
        .first()
    )
    workload.chosen_accelerator = accelerator
    workload.chosen_server = server
    workload.chosen_precision = candidate.precision
    _store_candidate(workload, candidate)
    workload.chosen_at = timezone.now()
    workload.save()
    return workload


class SizingInputError(ValueError):
    """An estimate input that names nothing in the catalog, with the field it concerns."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


PACKAGED_CATALOG_NOTE = (
    "The database holds no catalog yet (run `python manage.py migrate` and `python manage.py "
    "load_catalog`, or `make run`): the figures come from the packaged reference data in "
    "catalog/data."
)


def catalog_loaded() -> bool:
    """True when the database has a model catalog (migrated and loaded)."""
    try:
        return ModelArchitecture.objects.exists()
    except DatabaseError:
        return False


@lru_cache(maxsize=1)
def _packaged_specs() -> tuple[dict[str, ModelSpec], dict[str, AcceleratorSpec]]:
    data = settings.CATALOG_DATA_DIR
    return load_models_csv(data / "models.csv"), load_accelerators_csv(data / "accelerators.csv")


def _packaged_specs_for(model_slug: str, accelerator_slug: str):
    models, accelerators = _packaged_specs()
    if model_slug not in models:
        raise SizingInputError("model", f"unknown model '{model_slug}' (see catalog/data)")
    if accelerator_slug not in accelerators:
        raise SizingInputError(
            "accelerator", f"accelerator '{accelerator_slug}' is not in the catalog"
        )
    return models[model_slug], accelerators[accelerator_slug]


def specs_for(model_slug: str, accelerator_slug: str) -> tuple[ModelSpec, AcceleratorSpec]:
    """Engine specs for two catalog slugs, from the database (from the packaged reference data
    when the database has no catalog yet).

    Raises:
        SizingInputError: for an unknown model or accelerator, or one without memory figures.
    """
    try:
        model = ModelArchitecture.objects.filter(slug=model_slug).first()
    except DatabaseError:  # not migrated yet
        model = None
    if model is None and not catalog_loaded():
        return _packaged_specs_for(model_slug, accelerator_slug)
    if model is None:
        raise SizingInputError("model", f"unknown model '{model_slug}' (see /catalog/models/)")
    accelerators = accelerator_specs()
    if accelerator_slug not in accelerators:
        known = Accelerator.objects.filter(slug=accelerator_slug).exists()
        reason = "has no published memory figures to size on" if known else "is not in the catalog"
        raise SizingInputError("accelerator", f"accelerator '{accelerator_slug}' {reason}")
    return model_spec(model), accelerators[accelerator_slug]


def estimate_run(request: EstimateRequest) -> EstimateResult:
    """One estimate for catalog slugs (CLI and API share this).

    Raises:
        SizingInputError: unknown slugs.
        EstimateError: impossible inputs (one sentence saying why).
    """
    model, accelerator = specs_for(request.model, request.accelerator)
    return estimate(request, model, accelerator, calibration(), scale_out_for(accelerator))


def scale_out_for(accelerator: AcceleratorSpec):
    """The scale-out link per GPU from a catalog server's network ports, else the family's
    (also when the database has no catalog yet)."""
    try:
        ports = (
            ServerPlatform.objects.filter(
                accelerator__slug=accelerator.slug,
                accelerators_per_server=accelerator.accelerators_per_server,
            )
            .exclude(network_ports="")
            .order_by("vendor", "name")
            .values_list("network_ports", flat=True)
            .first()
        )
    except DatabaseError:  # not migrated yet
        ports = None
    return scale_out_link(accelerator, ports)


UNBOUNDED_NOTES = {
    "ttft_ms": "ttft_ms is null: at this operating point (batch {batch}, the most the TPOT "
    "target and memory allow) requests wait for a free slot without bound, so the time to "
    "first token has no finite value. Give a TTFT target too, or a request rate.",
}


def estimate_as_dict(result: EstimateResult) -> dict:
    """The JSON object of the CLI and the API (units in the keys).

    A figure the engine found unbounded (e.g. TTFT at a TPOT-only operating point) is None,
    and ``notes`` says why: JSON has no Infinity or NaN.
    """
    data = asdict(result)
    notes = []
    for key, value in data.items():
        if isinstance(value, float):
            if finite_or_none(value) is not None:
                data[key] = round(value, 4)
            else:
                data[key] = None
                template = UNBOUNDED_NOTES.get(
                    key, "{key} is null: the engine found no finite value."
                )
                notes.append(template.format(key=key, batch=result.batch_per_replica))
    if result.saturated:
        notes = [n for n in notes if not n.startswith("ttft_ms is null")]
        notes.insert(
            0,
            f"The offered rate is past the saturation point of about "
            f"{result.saturation_requests_per_s:,.2f} requests/s: the queue grows by "
            f"{result.queue_growth_requests_per_s:,.2f} requests every second, so the wait "
            "for a KV slot grows without bound. The figures are those of the saturation "
            "point, the time to first token being that of the requests it admits.",
        )
    if not catalog_loaded():
        notes.append(PACKAGED_CATALOG_NOTE)
    data["notes"] = notes
    return data


@dataclass(frozen=True, slots=True)
class SiteDelay:
    """Round trips from each user region of a workload to one candidate site."""

    site: str
    latencies: tuple[RegionLatency, ...]

    @property
    def breaking_regions(self) -> tuple[RegionLatency, ...]:
        return tuple(latency for latency in self.latencies if latency.breaks_ttft)


def _site_locations(workload: Workload) -> list[tuple[str, float, float]]:
    """The plan's sites that have a location, then the user regions' own hubs."""
    locations: list[tuple[str, float, float]] = []
    # The four columns read, not the sites' rows (thirty-odd fields each, on every autosave).
    sites = (
        workload.plan.sites.values_list("name", "latitude", "longitude", "region_key")
        if hasattr(workload.plan, "sites")
        else []
    )
    for name, lat, lon, region_key in sites:
        region = REGIONS.get(region_key or "")
        if lat is None and region is not None:
            lat, lon = region.lat, region.lon
        if lat is not None and lon is not None:
            locations.append((name, lat, lon))
    for key in workload.region_shares:
        region = REGIONS[key]
        locations.append((f"{region.city} ({key})", region.lat, region.lon))
    return locations


def workload_network_delay(workload: Workload) -> list[SiteDelay]:
    """RTT from every user region to every candidate site, flagged against the TTFT target."""
    if not workload.region_shares:
        return []
    target = engine_workload(workload)
    shares = {k: v / 100 for k, v in workload.region_shares.items() if k in REGIONS}
    return [
        SiteDelay(name, tuple(flag_regions(lat, lon, shares, target.ttft_ms or float("inf"))))
        for name, lat, lon in _site_locations(workload)
    ]
