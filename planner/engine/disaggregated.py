"""Disaggregated prefill and decode: separate replica pools with the KV cache moved between them.

Prefill replicas only process prompts (and emit the first token); decode replicas only
generate, holding every in-flight request's full KV cache. Separating them removes the
prefill-decode interference of continuous batching, so each pool is sized on its own target
(DistServe, Zhong et al., OSDI'24: "goodput" per GPU, TTFT on the prefill pool, TPOT on the
decode pool; Splitwise, Patel et al., ISCA'24: prompt and token phases on separate machines
with the KV cache shipped between them; NVIDIA Dynamo and vLLM's disaggregated-prefill docs:
a P:D ratio of replicas, KV moved over NVLink/NIXL within a node or RDMA across nodes).

* Prefill replica, batching ``k`` prompts per step: step time D_k from the roofline
  (:func:`planner.engine.performance.step_time_ms` with no decode tokens). Queueing on batches
  is M/D/1 (DistServe §3.1) with Kingman's approximation: the M/M/1 wait × (c_a² + c_s²)/2 =
  0.5, with its exponential tail P(wait > t) = ρ·exp(−(1−ρ)t/(0.5·D_k)), so the p-quantile
  wait is 0.5·D_k/(1−ρ)·ln(ρ/(1−p)) when ρ > 1−p, else 0. TTFT_p = wait_p + D_k + KV
  transfer; requests/s per replica = ρ·k/D_k, the largest on a (k, ρ) grid meeting the target.
* KV transfer: bytes per request = KV bytes/token of the replica × prompt tokens, over
  NVLink (each prefill rank sends its own shard) when one prefill and one decode replica fit
  a server (DistServe's low-node-affinity placement puts the pair in one node), else over the
  server's front-end NIC share (catalog part nic-eth-front-end, 2 × 100 Gb/s per server).
* Decode replica at batch B: TPOT = step time of B decode tokens at the mean context
  in + out/2, no prefill mixed in; TPOT_p = TPOT × the calibrated tail ratio. The largest
  whole batch (grid search, then every integer up to the next grid point: never interpolated,
  so never over target) that meets the TPOT target and fits the KV of in + out tokens each.
* Ratio: per request a pool costs TP / (requests/s per replica) accelerator-seconds; the
  (prefill TP, decode TP) pair with the fewest accelerator-seconds per request is the
  candidate, and its P:D ratio follows from the peak (:func:`plan_disaggregated_fleet`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from planner.engine.capacity import batch_grid, plan_replicas
from planner.engine.errors import EngineInputError
from planner.engine.memory import MemoryPlan, plan_memory
from planner.engine.performance import (
    Calibration,
    ReplicaShape,
    replica_shape,
    scheduler_max_sequences,
    step_time_ms,
    tpot_tail_factor,
)
from planner.engine.specs import AcceleratorSpec, ModelSpec

__all__ = [
    "DecodePool",
    "DisaggregatedFleet",
    "DisaggregatedOption",
    "FRONT_END_GBIT_PER_S_PER_SERVER",
    "PrefillPool",
    "best_disaggregated",
    "decode_pool",
    "kv_transfer_link",
    "kv_transfer_ms",
    "plan_disaggregated_fleet",
    "prefill_pool",
    "split_accelerators",
]

# Front-end Ethernet per server (catalog part nic-eth-front-end: 2 × 100 Gb/s).
FRONT_END_GBIT_PER_S_PER_SERVER = 200.0
# vLLM's default max_num_batched_tokens for a prefill step of long prompts (chunk budget).
MAX_PREFILL_TOKENS_PER_STEP = 16_384
PREFILL_TP_OPTIONS = 2
# Kingman's G/G/1 approximation scales the M/M/1 wait by (c_a² + c_s²)/2: Poisson arrivals
# (c_a² = 1) and a deterministic prefill of fixed-length prompts (c_s² = 0, DistServe's M/D/1).
PREFILL_WAIT_SCALE = 0.5
_UTILISATION_GRID = np.linspace(0.02, 0.98, 49)


@dataclass(frozen=True, slots=True)
class PrefillPool:
    """One prefill replica at its operating point.

    Attributes:
        tensor_parallel: TP degree.
        prompts_per_step: Prompts batched in one prefill step (k).
        step_ms: Time of that step (D_k).
        utilisation: Busy fraction ρ of the replica at the operating point.
        requests_per_s: Prompts per second one replica serves within the TTFT target.
        kv_transfer_ms: Time to move one request's KV cache to its decode replica.
        kv_transfer_path: "nvlink" (same server) or "network" (front-end NIC across servers).
        ttft_ms: TTFT at the percentile: queue wait + prefill step + KV transfer.
    """

    tensor_parallel: int
    prompts_per_step: int
    step_ms: float
    utilisation: float
    requests_per_s: float
    kv_transfer_ms: float
    kv_transfer_path: str
    ttft_ms: float


@dataclass(frozen=True, slots=True)
class DecodePool:
    """One decode replica at its operating point.

    Attributes:
        tensor_parallel: TP degree.
        batch: Concurrent decoding sequences within the TPOT target.
        max_batch: Sequences whose full KV (input + output tokens) fits, capped by the scheduler.
        tpot_ms: TPOT at the percentile.
        requests_per_s: Requests per second one replica completes (B / decode time).
        output_tokens_per_s: Output tokens per second of the replica.
    """

    tensor_parallel: int
    batch: int
    max_batch: int
    tpot_ms: float
    requests_per_s: float
    output_tokens_per_s: float


@dataclass(frozen=True, slots=True)
class DisaggregatedOption:
    """The cheapest prefill/decode pairing of one accelerator and precision.

    Attributes:
        prefill: Prefill replica.
        decode: Decode replica.
        accelerator_seconds_per_request: TP_p/rps_p + TP_d/rps_d.
        output_tokens_per_s_per_accelerator: Output tokens per accelerator-second of the pair.
        decode_per_prefill: Decode replicas per prefill replica (rps_p / rps_d), before rounding.
    """

    prefill: PrefillPool
    decode: DecodePool
    accelerator_seconds_per_request: float
    output_tokens_per_s_per_accelerator: float
    decode_per_prefill: float


@dataclass(frozen=True, slots=True)
class DisaggregatedFleet:
    """Replicas of both pools for a peak load, packed on one server platform.

    Attributes:
        prefill_replicas: Prefill replicas (headroom and N+1 spares included).
        decode_replicas: Decode replicas (same).
        replicas: Both pools.
        accelerators: prefill × TP_p + decode × TP_d.
        servers: Servers holding both pools (TP degrees are powers of two dividing the
            server, so first-fit packs them to ceil(accelerators / server size)).
        peak_requests_per_s: Request rate the prefill pool was sized for.
    """

    prefill_replicas: int
    decode_replicas: int
    replicas: int
    accelerators: int
    servers: int
    peak_requests_per_s: float

    @property
    def ratio_label(self) -> str:
        """ "2P:5D"."""
        return f"{self.prefill_replicas}P:{self.decode_replicas}D"


def kv_transfer_link(
    accelerator: AcceleratorSpec,
    prefill_tp: int,
    decode_tp: int,
    calibration: Calibration,
    front_end_gbit_per_s_per_server: float = FRONT_END_GBIT_PER_S_PER_SERVER,
) -> tuple[float, str]:
    """(achievable bytes/s, path) for moving one request's KV from prefill to decode.

    NVLink/xGMI when a prefill and a decode replica fit one server: every prefill rank sends its
    shard on its own links, so TP_p × per-device bandwidth × η_link. Otherwise the prefill
    replica's share (TP_p / server size) of the server's front-end NIC, × η_link.
    """
    per_server = max(1, accelerator.accelerators_per_server)
    if prefill_tp + decode_tp <= per_server and accelerator.scale_up_bw_gbytes_per_s_per_direction:
        fraction = (
            calibration.pcie_link_bw_fraction
            if accelerator.scale_up_pcie
            else calibration.link_bw_fraction
        )
        link = accelerator.scale_up_bw_gbytes_per_s_per_direction * 1e9 * prefill_tp * fraction
        return link, "nvlink" if not accelerator.scale_up_pcie else "pcie"
    share = min(1.0, prefill_tp / per_server)
    link = front_end_gbit_per_s_per_server * 1e9 / 8.0 * share * calibration.link_bw_fraction
    return link, "network"


def kv_transfer_ms(
    kv_bytes_per_token: float, input_tokens: float, link_bytes_per_s: float
) -> float:
    """KV bytes of the prompt over the link, ms: kv bytes/token × input tokens / bandwidth."""
    if link_bytes_per_s <= 0:
        raise EngineInputError("the KV transfer link needs a positive bandwidth")
    return kv_bytes_per_token * input_tokens / link_bytes_per_s * 1e3


def prefill_pool(
    shape: ReplicaShape,
    input_len: float,
    ttft_target_ms: float,
    percentile: float,
    transfer_ms: float,
    transfer_path: str,
) -> tuple[PrefillPool | None, str | None]:
    """Most prompts/s one prefill replica serves with TTFT_p (transfer included) ≤ target."""
    most = max(1, MAX_PREFILL_TOKENS_PER_STEP // max(int(input_len), 1))
    k = np.unique(np.minimum(2 ** np.arange(0, 7), most)).astype(float)
    step = step_time_ms(shape, 0.0, k * input_len, input_len, input_len)
    rho = _UTILISATION_GRID[None, :]
    d = step[:, None]
    ttft = d * (_wait_in_steps(percentile)[None, :] + 1.0) + transfer_ms
    rps = rho * k[:, None] / d * 1e3
    ok = ttft <= ttft_target_ms
    if not ok.any():
        best = float(step[0] + transfer_ms)
        return None, (
            f"prefill TTFT {best:,.0f} ms (prompt {step[0]:,.0f} ms + KV transfer "
            f"{transfer_ms:,.1f} ms) exceeds the {ttft_target_ms:,.0f} ms target"
        )
    i, j = np.unravel_index(int(np.argmax(np.where(ok, rps, -1.0))), rps.shape)
    return (
        PrefillPool(
            tensor_parallel=shape.tp,
            prompts_per_step=int(k[i]),
            step_ms=float(step[i]),
            utilisation=float(_UTILISATION_GRID[j]),
            requests_per_s=float(rps[i, j]),
            kv_transfer_ms=transfer_ms,
            kv_transfer_path=transfer_path,
            ttft_ms=float(ttft[i, j]),
        ),
        None,
    )


def decode_pool(
    shape: ReplicaShape,
    max_batch: int,
    input_len: float,
    output_len: float,
    tpot_target_ms: float,
    percentile: float,
) -> tuple[DecodePool | None, str | None]:
    """Largest whole decode batch (checked, never interpolated) with TPOT_p ≤ target."""
    grid = _grid(max_batch)
    ctx = input_len + max(output_len, 1.0) / 2.0
    tpot = step_time_ms(shape, grid, 0.0, ctx)
    tail = tpot_tail_factor(percentile, shape.calibration)
    tpot_p = tpot * tail
    ok = np.flatnonzero(tpot_p <= tpot_target_ms)
    if ok.size == 0:
        return None, (
            f"decode p{percentile:g} TPOT {tpot_p[0]:,.1f} ms exceeds the "
            f"{tpot_target_ms:,.1f} ms target even at batch 1"
        )
    i = int(ok[-1])  # TPOT rises with the batch: the feasible batches are a prefix
    if i + 1 < grid.size and grid[i + 1] > grid[i] + 1:
        # Every whole batch up to the next (failing) geometric grid point, checked exactly.
        fine = np.arange(grid[i], grid[i + 1])
        fine_tpot = step_time_ms(shape, fine, 0.0, ctx)
        j = int(np.flatnonzero(fine_tpot * tail <= tpot_target_ms)[-1])
        grid, tpot, tpot_p, i = fine, fine_tpot, fine_tpot * tail, j
    batch = float(grid[i])
    # The prefill replica emits the first token; decode generates the other out − 1.
    decode_tokens = max(output_len - 1.0, 1.0)
    rps = batch / (decode_tokens * float(tpot[i]) * 1e-3)
    return (
        DecodePool(
            tensor_parallel=shape.tp,
            batch=int(batch),
            max_batch=int(max_batch),
            tpot_ms=float(tpot_p[i]),
            requests_per_s=rps,
            output_tokens_per_s=batch * 1e3 / float(tpot[i]),
        ),
        None,
    )


def best_disaggregated(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    precision: str,
    degrees: list[int],
    input_len: float,
    output_len: float,
    calibration: Calibration,
    ttft_target_ms: float,
    tpot_target_ms: float,
    percentile: float = 99.0,
    serving_stack: str = "vllm",
    memory_plans: Mapping[int, MemoryPlan] | None = None,
    kv_precision: str | None = None,
    shapes: Mapping[int, ReplicaShape | None] | None = None,
) -> tuple[DisaggregatedOption | None, str | None]:
    """The (prefill TP, decode TP) pair with the fewest accelerator-seconds per request.

    Each TP degree's replica shape and memory plan is built once (``memory_plans``: TP -> plan
    at input + output tokens, ``shapes``: TP -> replica shape, when the caller has them, at
    the same KV dtype); prefill tries the
    ``PREFILL_TP_OPTIONS`` smallest degrees that hold the prompt (prefill is compute-bound, so
    accelerator-seconds per prompt barely fall with TP while all-reduces grow), decode every
    degree, and each (prefill TP, link path) costs one vectorised prefill grid. Returns
    (option, None) or (None, the reason no pair meets both targets).
    """
    if ttft_target_ms is None or tpot_target_ms is None:
        raise EngineInputError("disaggregated serving is sized at both a TTFT and a TPOT target")
    util = calibration.gpu_memory_utilization
    context = int(math.ceil(input_len + output_len))
    decodes: dict[int, DecodePool] = {}
    prefill_tps: list[int] = []
    reasons: list[str] = []
    known = memory_plans or {}
    given_shapes = shapes or {}
    built: dict[int, ReplicaShape] = {}
    for tp in degrees:
        full = known.get(tp) or plan_memory(
            model, accelerator, precision, tp, context, kv_precision, util, serving_stack
        )
        prompt = full
        if not full.feasible:  # a prefill replica only holds the prompt's KV
            prompt = plan_memory(
                model, accelerator, precision, tp, int(math.ceil(input_len)) + 1, kv_precision,
                util, serving_stack,
            )  # fmt: skip
        if not prompt.feasible:
            reasons.append(prompt.infeasible_reason or "does not fit")
            continue
        shape = given_shapes.get(tp)
        if shape is None:
            try:
                shape = replica_shape(model, accelerator, precision, tp, calibration, kv_precision)
            except ValueError as exc:
                reasons.append(str(exc))
                continue
        built[tp] = shape
        if len(prefill_tps) < PREFILL_TP_OPTIONS:
            prefill_tps.append(tp)
        if full.feasible:
            cap = scheduler_max_sequences(accelerator, serving_stack, calibration)
            max_batch = max(1, min(full.max_concurrent_sequences, cap))
            pool, why = decode_pool(
                shape, max_batch, input_len, output_len, tpot_target_ms, percentile
            )
            if pool is not None:
                decodes[tp] = pool
            else:
                reasons.append(why or "")
        else:
            reasons.append(full.infeasible_reason or "does not fit")
    if not decodes or not prefill_tps:
        return None, "disaggregated: " + (reasons[-1] if reasons else "no valid TP degree")
    kv_bytes_per_token = _kv_bytes_per_token(built[prefill_tps[0]], input_len)
    best: DisaggregatedOption | None = None
    pools: dict[tuple[int, str], tuple[PrefillPool | None, str | None]] = {}
    for ptp in prefill_tps:
        for dtp, decode in decodes.items():
            link, path = kv_transfer_link(accelerator, ptp, dtp, calibration)
            if (ptp, path) not in pools:  # the link depends on the pair only through its path
                transfer = kv_transfer_ms(kv_bytes_per_token, input_len, link)
                pools[ptp, path] = prefill_pool(
                    built[ptp], input_len, ttft_target_ms, percentile, transfer, path
                )
            prefill, why = pools[ptp, path]
            if prefill is None:
                reasons.append(why or "")
                continue
            seconds = ptp / prefill.requests_per_s + dtp / decode.requests_per_s
            if best is None or seconds < best.accelerator_seconds_per_request - 1e-12:
                best = DisaggregatedOption(
                    prefill=prefill,
                    decode=decode,
                    accelerator_seconds_per_request=seconds,
                    output_tokens_per_s_per_accelerator=output_len / seconds,
                    decode_per_prefill=prefill.requests_per_s / decode.requests_per_s,
                )
    if best is None:
        return None, "disaggregated: " + (reasons[-1] if reasons else "no pair meets the targets")
    return best, None


@lru_cache(maxsize=16)
def _wait_in_steps(percentile: float) -> np.ndarray:
    """p-quantile prefill wait in prefill steps over the utilisation grid (module docstring):
    0.5/(1−ρ)·ln(ρ/(1−p)) when ρ > 1 − p, else 0 (read-only)."""
    rho = _UTILISATION_GRID
    tail = 1.0 - percentile / 100.0
    wait = np.where(
        rho > tail,
        PREFILL_WAIT_SCALE / (1.0 - rho) * np.log(np.maximum(rho / tail, 1.0)),
        0.0,
    )
    wait.setflags(write=False)
    return wait


@lru_cache(maxsize=1024)
def _grid(max_batch: int) -> np.ndarray:
    """:func:`batch_grid`, cached (read-only: callers never write to it)."""
    grid = batch_grid(max_batch)
    grid.setflags(write=False)
    return grid


def _kv_bytes_per_token(shape: ReplicaShape, input_len: float) -> float:
    """KV bytes per prompt token of the whole replica (all ranks; sliding layers capped)."""
    per_gpu = float(shape.kv_bytes_per_sequence(float(input_len))) / max(input_len, 1.0)
    return per_gpu * shape.tp


def split_accelerators(option: DisaggregatedOption, accelerators: int) -> tuple[int, int]:
    """(prefill, decode) replicas of N accelerators that complete the most requests/s.

    Maximises min(P × rps_p, D × rps_d) subject to P·TP_p + D·TP_d ≤ N, P, D ≥ 1 (each pool
    caps the request rate of the pair); ties keep fewer accelerators.

    Raises:
        EngineInputError: N holds no prefill and decode replica together.
    """
    tp_p, tp_d = option.prefill.tensor_parallel, option.decode.tensor_parallel
    best: tuple[float, int, int] | None = None
    for p in range(1, accelerators // tp_p + 1):
        d = (accelerators - p * tp_p) // tp_d
        if d < 1:
            break
        rate = min(p * option.prefill.requests_per_s, d * option.decode.requests_per_s)
        if best is None or rate > best[0] + 1e-12:
            best = (rate, p, d)
    if best is None:
        raise EngineInputError(
            f"{accelerators} accelerators hold no prefill (TP {tp_p}) and decode (TP {tp_d}) "
            "replica together"
        )
    return best[1], best[2]


def plan_disaggregated_fleet(
    option: DisaggregatedOption,
    *,
    output_len: float,
    accelerators_per_server: int,
    peak_concurrency: float | None = None,
    peak_requests_per_s: float | None = None,
    headroom_pct: float = 10.0,
    failure_domains: int = 1,
    n_plus_one: bool = True,
) -> DisaggregatedFleet:
    """Replicas of both pools for the peak; each pool gets headroom and its own N+1 spares.

    The prefill pool carries the peak request rate; given only a peak concurrency, the rate is
    concurrency / mean time in the system (Little's law; prefill step + transfer + decode).
    The decode pool carries the peak concurrency (or rate × decode time) against its batch.
    """
    decode, prefill = option.decode, option.prefill
    decode_s = max(output_len - 1.0, 1.0) * decode.batch / decode.output_tokens_per_s
    in_system_s = (prefill.step_ms + prefill.kv_transfer_ms) * 1e-3 + decode_s
    if peak_requests_per_s is not None:
        rate = peak_requests_per_s
        if peak_concurrency is not None:
            rate = max(rate, peak_concurrency / in_system_s)
    elif peak_concurrency is not None:
        rate = peak_concurrency / in_system_s
    else:
        raise EngineInputError("give peak_concurrency or peak_requests_per_s")
    common = dict(
        accelerators_per_server=accelerators_per_server,
        headroom_pct=headroom_pct,
        failure_domains=failure_domains,
        n_plus_one=n_plus_one,
    )
    p = plan_replicas(
        tensor_parallel=prefill.tensor_parallel,
        requests_per_s_per_replica=prefill.requests_per_s,
        peak_requests_per_s=rate,
        **common,
    )
    d = plan_replicas(
        tensor_parallel=decode.tensor_parallel,
        batch_per_replica=decode.batch,
        requests_per_s_per_replica=decode.requests_per_s,
        peak_concurrency=peak_concurrency,
        peak_requests_per_s=rate,
        **common,
    )
    accelerators = p.accelerators + d.accelerators
    per_server = max(1, accelerators_per_server)
    return DisaggregatedFleet(
        prefill_replicas=p.replicas,
        decode_replicas=d.replicas,
        replicas=p.replicas + d.replicas,
        accelerators=accelerators,
        servers=math.ceil(accelerators / per_server),
        peak_requests_per_s=rate,
    )
