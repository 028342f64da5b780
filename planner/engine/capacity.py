"""Capacity of one replica and the fleet for a peak load.

Seed guide, "a working method", steps 1-4: memory footprint → smallest parallel degree that
fits → largest batch that meets the latency targets and fits in memory → tokens/s per replica →
replicas for peak concurrency, plus headroom and N+1 per failure domain → accelerators,
servers, racks. The batch search is vectorised over a grid of batch sizes with NumPy.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from planner.engine.errors import EngineInputError
from planner.engine.memory import MemoryPlan, plan_memory
from planner.engine.parallelism import parallel_shape
from planner.engine.performance import (
    Calibration,
    PerformancePoint,
    ReplicaShape,
    ResolvedFactors,
    prompt_tail_factor,
    replica_shape,
    scheduler_max_sequences,
    slot_wait_ms,
    steady_state,
    step_time_ms,
    tpot_tail_factor,
)
from planner.engine.specs import AcceleratorSpec, ModelSpec

__all__ = [
    "LoadCurve",
    "ReplicaCapacity",
    "ReplicaPlan",
    "batch_grid",
    "latency_capacity",
    "load_curve",
    "offline_capacity",
    "plan_replicas",
    "replica_capacity",
    "smallest_fitting_tp",
    "valid_tp_degrees",
]

# Points of the fine grid that replaces an interpolated batch landing past its latency target.
_REFINE_POINTS = 33
# The TTFT percentile under targets keeps the processor-sharing prefill wait and the M/M/c
# slot wait (performance.prefill_wait_ms, slot_wait_ms) rather than the scheduler queues of
# performance.first_token_ms: refitted with those (FCFS p99 tail), held-out throughput got
# worse (time split worst run 41 -> 67 %, the H200 Llama-3.1-405B server run 2x low under its
# 6 s p99 TTFT; family split p90 34.1 -> 46.9 %) while in-sample stayed 7.4 -> 7.0 %.


def batch_grid(max_batch: int, points: int = 96) -> np.ndarray:
    """Candidate batch sizes 1..max_batch: every integer up to 32, then geometric steps.

    Args:
        max_batch: Largest batch to consider (≥ 1).
        points: Geometric points above 32.

    Returns:
        Sorted unique integers as floats, always including ``max_batch`` (a read-only array,
        shared between calls: a sweep asks for the same few grids hundreds of times).
    """
    return _batch_grid(max(1, int(max_batch)), points)


@functools.lru_cache(maxsize=1024)
def _batch_grid(max_batch: int, points: int) -> np.ndarray:
    low = np.arange(1, min(max_batch, 32) + 1, dtype=float)
    if max_batch <= 32:
        grid = low
    else:
        high = np.unique(np.round(np.geomspace(32, max_batch, points)))
        grid = np.unique(np.concatenate([low, high, [float(max_batch)]]))
    grid.flags.writeable = False
    return grid


def valid_tp_degrees(model: ModelSpec, accelerator: AcceleratorSpec) -> list[int]:
    """Powers of two up to the accelerators per server that divide the attention heads.

    vLLM requires num_attention_heads % TP == 0 (and KV heads to divide or be divided by TP).
    """
    degrees = []
    tp = 1
    while tp <= accelerator.accelerators_per_server:
        kv_ok = model.is_mla or model.kv_heads % tp == 0 or tp % model.kv_heads == 0
        if model.heads % tp == 0 and kv_ok:
            degrees.append(tp)
        tp *= 2
    return degrees


def smallest_fitting_tp(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    precision: str,
    context_tokens: int,
    calibration: Calibration | None = None,
) -> tuple[int | None, MemoryPlan]:
    """Smallest valid TP degree at which one sequence of ``context_tokens`` fits.

    Args:
        model: Architecture.
        accelerator: Device.
        precision: Weight precision.
        context_tokens: Prompt + output tokens of one sequence.
        calibration: Supplies ``gpu_memory_utilization`` (default 0.9).

    Returns:
        (TP or None when nothing fits, the memory plan of the last degree tried).
    """
    util = calibration.gpu_memory_utilization if calibration else 0.9
    plan = None
    for tp in valid_tp_degrees(model, accelerator):
        plan = plan_memory(model, accelerator, precision, tp, context_tokens, None, util)
        if plan.feasible:
            return tp, plan
    if plan is None:
        plan = plan_memory(model, accelerator, precision, 1, context_tokens, None, util)
    return None, plan


@dataclass(frozen=True, slots=True)
class ReplicaCapacity:
    """What one replica of ``tensor_parallel`` accelerators can do for a workload.

    Attributes:
        tensor_parallel: TP degree.
        memory: The memory plan (weights, KV budget, max concurrency).
        max_batch: Concurrency cap: memory limit and the scheduler's max_num_seqs.
        point: Operating point (None when infeasible).
        infeasible_reason: Why there is no operating point, or None.
        factors: Efficiency factors used, with provenance and expected error.
        shape: The replica's constants (None when the memory plan fails first).
        parallel: The layout of a replica spanning servers, None within one server.
    """

    tensor_parallel: int
    memory: MemoryPlan
    max_batch: int
    point: PerformancePoint | None
    infeasible_reason: str | None
    factors: ResolvedFactors | None
    shape: ReplicaShape | None = None
    parallel: object | None = None  # planner.engine.parallelism.ParallelLayout across servers

    @property
    def feasible(self) -> bool:
        """True when the replica has an operating point."""
        return self.point is not None

    @property
    def accelerators_per_replica(self) -> int:
        """GPUs of one replica: TP within a server, else the layout's."""
        return self.parallel.gpus if self.parallel is not None else self.tensor_parallel


def offline_capacity(
    shape: ReplicaShape, max_batch: int, input_len: float, output_len: float
) -> PerformancePoint:
    """Maximum throughput with no latency target: the best batch up to the memory cap.

    Throughput B·out / (TTFT + out·TPOT) rises with B almost everywhere, so the optimum is
    usually the memory cap; with very short outputs the prefill-bound steps make it flat and
    the cap can fall a hair short, so the best point of :func:`batch_grid` is taken (the
    largest batch on ties).
    """
    grid = batch_grid(max_batch)
    state = steady_state(shape, grid, input_len, output_len)
    tokens = state.output_tokens_per_s
    i = len(grid) - 1 - int(np.argmax(tokens[::-1]))
    return PerformancePoint(
        batch=int(grid[i]),
        ttft_ms=float(state.ttft_service_ms[i]),
        tpot_ms=float(state.tpot_ms[i]),
        output_tokens_per_s=float(tokens[i]),
        requests_per_s=float(state.requests_per_s[i]),
        statistic="mean",
    )


def latency_capacity(
    shape: ReplicaShape,
    max_batch: int,
    input_len: float,
    output_len: float,
    ttft_target_ms: float | None,
    tpot_target_ms: float | None,
    percentile: float = 99.0,
    variable_lengths: bool = False,
) -> tuple[PerformancePoint | None, str | None]:
    """Largest-throughput batch whose p-th percentile TTFT and TPOT meet the targets.

    For each batch B on :func:`batch_grid`: TPOT_p = TPOT × tail ratio; TTFT_p = service time
    (the step that carries the prompt, plus the p-quantile of the step in progress) + the
    p-quantile of the M/M/c wait for a KV slot with c = ``max_batch`` and load a = B
    (anchors F10: sweep the concurrency, keep the best point meeting the SLO). With
    ``variable_lengths`` the TTFT percentile is that of a long prompt: mean × the calibration's
    p99/mean prompt ratio (3.56 for OpenOrca), interpolated for other percentiles and capped at
    the model's context.

    Args:
        shape: Replica constants.
        max_batch: Concurrency cap (memory and scheduler).
        input_len: Prompt tokens (mean).
        output_len: Output tokens (mean).
        ttft_target_ms: TTFT target at the percentile, None for no target.
        tpot_target_ms: TPOT target at the percentile, None for no target.
        percentile: 95 or 99 (any 50 < p < 100 works).
        variable_lengths: Prompts vary in length (exponential assumption) rather than fixed.

    Returns:
        (point, None) or (None, reason when even batch 1 misses a target).
    """
    label = f"p{percentile:g}"

    def evaluate(batch: np.ndarray) -> tuple:
        state = steady_state(shape, batch, input_len, output_len)
        tpot_p = state.tpot_ms * tpot_tail_factor(percentile, shape.calibration)
        wait = slot_wait_ms(float(max_batch), batch, state.slot_time_s, percentile)
        service = state.ttft_service_ms
        prefill = state.prefill_ms
        if variable_lengths:
            cap = max(1.0, shape.model.max_context - output_len)
            tail = prompt_tail_factor(percentile, shape.calibration, input_len)
            long_prompt = min(input_len * tail, cap)
            ctx = input_len + output_len / 2.0
            steady_prefill = batch * input_len / max(output_len, 1.0)
            carrying = step_time_ms(shape, batch, steady_prefill + long_prompt, ctx, long_prompt)
            service = carrying + 0.5 * state.tpot_ms
            prefill = np.maximum(carrying - state.tpot_ms, 0.0)
        # The prompt's prefill shares the replica with the others' (processor sharing).
        ttft_p = (
            service
            + (percentile / 100.0 - 0.5) * state.tpot_ms
            + state.prefill_wait_ms(prefill)
            + wait
        )
        margin = np.zeros_like(batch)
        if ttft_target_ms is not None:
            margin = np.maximum(margin, ttft_p / ttft_target_ms)
        if tpot_target_ms is not None:
            margin = np.maximum(margin, tpot_p / tpot_target_ms)
        return state, ttft_p, tpot_p, margin - 1.0  # margin ≤ 0 meets both targets

    grid = batch_grid(max_batch)
    state, ttft_p, tpot_p, margin = evaluate(grid)
    if margin[0] > 0:
        parts = []
        if ttft_target_ms is not None and ttft_p[0] > ttft_target_ms:
            parts.append(
                f"{label} TTFT {ttft_p[0]:,.0f} ms exceeds the {ttft_target_ms:,.0f} ms target"
            )
        if tpot_target_ms is not None and tpot_p[0] > tpot_target_ms:
            parts.append(
                f"{label} TPOT {tpot_p[0]:,.1f} ms exceeds the {tpot_target_ms:,.1f} ms target"
            )
        return None, " and ".join(parts) + " even at batch 1"
    # Latency grows with the batch, so the feasible batches are a prefix of the grid; the
    # boundary is interpolated between the last feasible and first infeasible grid points.
    failing = np.flatnonzero(margin > 0)
    if failing.size == 0:
        best = np.asarray([grid[-1]])
    else:
        hi = int(failing[0])
        lo = hi - 1
        frac = margin[lo] / (margin[lo] - margin[hi])
        best = np.asarray([grid[lo] + frac * (grid[hi] - grid[lo])])
    state, ttft_p, tpot_p, over = evaluate(best)
    if over[0] > 0:
        # Latency is not linear in the batch (expert activation, queueing), so the straight
        # line can land past the target: keep the largest of a fine grid between the last
        # feasible grid point (margin ≤ 0 there) and the interpolated one that meets it.
        fine = np.linspace(grid[lo], best[0], _REFINE_POINTS)
        fine_margin = evaluate(fine)[3]
        best = fine[[int(np.flatnonzero(fine_margin <= 0)[-1])]]
        state, ttft_p, tpot_p, _ = evaluate(best)
    return (
        PerformancePoint(
            batch=max(1, int(best[0])),
            ttft_ms=float(ttft_p[0]),
            tpot_ms=float(tpot_p[0]),
            output_tokens_per_s=float(state.output_tokens_per_s[0]),
            requests_per_s=float(state.requests_per_s[0]),
            statistic=label,
        ),
        None,
    )


def replica_capacity(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    precision: str,
    tp: int,
    input_len: float,
    output_len: float,
    calibration: Calibration,
    ttft_target_ms: float | None = None,
    tpot_target_ms: float | None = None,
    percentile: float = 99.0,
    kv_precision: str | None = None,
    serving_stack: str = "vllm",
    variable_lengths: bool = False,
    parallel=None,
) -> ReplicaCapacity:
    """Memory plan plus operating point of one replica.

    With no targets the point is offline maximum throughput; with a TTFT and/or TPOT target
    it is the largest-throughput batch meeting them at the percentile.

    Args:
        model: Architecture.
        accelerator: Device.
        precision: Weight precision.
        tp: Tensor-parallel degree.
        input_len: Prompt tokens (mean).
        output_len: Output tokens (mean).
        calibration: Efficiency factors.
        ttft_target_ms: Optional TTFT target (ms).
        tpot_target_ms: Optional TPOT target (ms).
        percentile: Percentile of the targets.
        kv_precision: KV dtype (default from the weight precision).
        serving_stack: "vllm", "sglang" or "trtllm" memory rule and scheduler cap.
        variable_lengths: Prompt lengths vary (see :func:`latency_capacity`).
        parallel: A layout spanning servers (planner.engine.parallelism.ParallelLayout),
            whose TP degree is ``tp``; None within one server.

    Returns:
        The capacity; ``infeasible_reason`` says why when there is no operating point.
    """
    context = int(math.ceil(input_len + output_len))
    memory = plan_memory(
        model,
        accelerator,
        precision,
        tp,
        context,
        kv_precision,
        calibration.gpu_memory_utilization,
        serving_stack,
        parallel=parallel,
    )
    if not memory.feasible:
        return ReplicaCapacity(
            tp, memory, 0, None, memory.infeasible_reason, None, parallel=parallel
        )
    try:
        if parallel is None:
            shape = replica_shape(model, accelerator, precision, tp, calibration, kv_precision)
        else:
            shape = parallel_shape(
                model, accelerator, precision, parallel, calibration, kv_precision
            )
    except ValueError as exc:
        return ReplicaCapacity(tp, memory, 0, None, str(exc), None, parallel=parallel)
    max_batch = max(
        1,
        min(
            memory.max_concurrent_sequences,
            scheduler_max_sequences(accelerator, serving_stack, calibration),
        ),
    )
    if ttft_target_ms is None and tpot_target_ms is None:
        point, reason = offline_capacity(shape, max_batch, input_len, output_len), None
    else:
        point, reason = latency_capacity(
            shape,
            max_batch,
            input_len,
            output_len,
            ttft_target_ms,
            tpot_target_ms,
            percentile,
            variable_lengths,
        )
    return ReplicaCapacity(tp, memory, max_batch, point, reason, shape.factors, shape, parallel)


@dataclass(frozen=True, slots=True)
class ReplicaPlan:
    """Fleet for a peak load.

    Attributes:
        replicas_for_load: Replicas that carry the peak at full per-replica capacity.
        replicas_with_headroom: The load's replicas ÷ (1 − headroom), rounded up
            (:func:`target_utilisation`).
        spare_replicas: N+1 spares, one per failure domain.
        replicas: Total replicas.
        accelerators: replicas × TP.
        servers: Servers holding them (replicas never straddle servers when TP ≤ server size).
        racks: Racks, None when servers per rack is not given.
        headroom_pct: Headroom used.
        failure_domains: Failure domains used.
    """

    replicas_for_load: int
    replicas_with_headroom: int
    spare_replicas: int
    replicas: int
    accelerators: int
    servers: int
    racks: int | None
    headroom_pct: float
    failure_domains: int


def target_utilisation(headroom_pct: float) -> float:
    """The one headroom rule: keep ``headroom_pct`` of each replica's capacity free at peak,
    i.e. run at most ``1 − headroom`` busy; replicas = load ÷ (1 − headroom), rounded up
    (20 % headroom: ÷ 0.8, 25 % more than the load, not × 1.2) (anchors F9: ConfigIQ's 0.9
    planning factor is 10 % headroom)."""
    if not 0.0 <= headroom_pct < 100.0:
        raise EngineInputError("headroom_pct must be in [0, 100)")
    return 1.0 - headroom_pct / 100.0


def plan_replicas(
    *,
    tensor_parallel: int,
    accelerators_per_server: int,
    batch_per_replica: float | None = None,
    requests_per_s_per_replica: float | None = None,
    peak_concurrency: float | None = None,
    peak_requests_per_s: float | None = None,
    headroom_pct: float = 10.0,
    failure_domains: int = 1,
    n_plus_one: bool = True,
    servers_per_rack: int | None = None,
) -> ReplicaPlan:
    """Replicas, accelerators, servers and racks for a peak load.

    replicas = ceil(load / (capacity × (1 − headroom))) (:func:`target_utilisation`), by
    peak concurrency against the batch per replica and/or by peak
    requests/s against requests/s per replica (Little's law links the two); the larger wins.
    N+1: the replicas are spread over ``failure_domains`` and each domain gets one spare.

    Args:
        tensor_parallel: Accelerators per replica.
        accelerators_per_server: Accelerators per server.
        batch_per_replica: Concurrent requests one replica holds within target.
        requests_per_s_per_replica: Requests/s one replica serves within target.
        peak_concurrency: Peak concurrent requests.
        peak_requests_per_s: Peak requests/s.
        headroom_pct: Capacity kept free at peak, in percent (0-<100).
        failure_domains: Failure domains (racks, rooms, zones) the replicas are spread over.
        n_plus_one: Add one spare replica per failure domain.
        servers_per_rack: Servers per rack, for the rack count.

    Returns:
        The plan.

    Raises:
        ValueError: When no load or no matching capacity is given, or headroom is out of range.
    """
    utilisation = target_utilisation(headroom_pct)
    needs = []
    if peak_concurrency is not None:
        if not batch_per_replica:
            raise EngineInputError("peak_concurrency needs batch_per_replica")
        needs.append(peak_concurrency / batch_per_replica)
    if peak_requests_per_s is not None:
        if not requests_per_s_per_replica:
            raise EngineInputError("peak_requests_per_s needs requests_per_s_per_replica")
        needs.append(peak_requests_per_s / requests_per_s_per_replica)
    if not needs:
        raise EngineInputError("give peak_concurrency or peak_requests_per_s")
    need = max(needs)
    for_load = max(1, math.ceil(need - 1e-9))
    with_headroom = max(1, math.ceil(need / utilisation - 1e-9))
    domains = max(1, int(failure_domains))
    spares = domains if n_plus_one else 0
    replicas = with_headroom + spares
    accelerators = replicas * tensor_parallel
    if tensor_parallel <= accelerators_per_server:
        per_server = max(1, accelerators_per_server // tensor_parallel)
        servers = math.ceil(replicas / per_server)
    else:
        servers = replicas * math.ceil(tensor_parallel / accelerators_per_server)
    racks = math.ceil(servers / servers_per_rack) if servers_per_rack else None
    return ReplicaPlan(
        replicas_for_load=for_load,
        replicas_with_headroom=with_headroom,
        spare_replicas=spares,
        replicas=replicas,
        accelerators=accelerators,
        servers=servers,
        racks=racks,
        headroom_pct=headroom_pct,
        failure_domains=domains,
    )


@dataclass(frozen=True, slots=True)
class LoadCurve:
    """One replica's steady state over batch sizes 1..max batch (the latency/throughput chart).

    Attributes:
        batch: Batch sizes (geometric steps, whole numbers).
        ttft_ms: Mean TTFT service time at each batch.
        tpot_ms: Mean TPOT at each batch.
        output_tokens_per_s: Output tokens/s of the replica at each batch.
    """

    batch: tuple[float, ...]
    ttft_ms: tuple[float, ...]
    tpot_ms: tuple[float, ...]
    output_tokens_per_s: tuple[float, ...]


def load_curve(
    shape: ReplicaShape, max_batch: int, input_len: float, output_len: float, points: int = 40
) -> LoadCurve:
    """Steady state at ``points`` geometric batch sizes from 1 to ``max_batch`` (deduplicated)."""
    batch = np.unique(np.geomspace(1, max(int(max_batch), 1), num=points).round())
    state = steady_state(shape, batch, input_len, output_len)
    return LoadCurve(
        batch=tuple(float(b) for b in batch),
        ttft_ms=tuple(float(v) for v in state.ttft_service_ms),
        tpot_ms=tuple(float(v) for v in state.tpot_ms),
        output_tokens_per_s=tuple(float(v) for v in state.output_tokens_per_s),
    )
