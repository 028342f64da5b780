"""Autoscaling recommendation: signal, thresholds and replica bounds.

Seed guide, step 6: GPU utilisation alone misleads as a scaling trigger, because inference
shows 80-95 % GPU utilisation under normal load (Meta's deployment guide); memory use is more
informative, and queues add latency once the request rate exceeds decode capacity (Google
Cloud TPU guide). The thresholds follow llm-d's Workload Variant Autoscaler (anchors F11): a
replica is saturated at KV-cache usage ≥ 0.80 or a queue of ≥ 5 waiting requests; scale up when
the mean spare KV capacity drops below 0.10 or the mean spare queue below 3; scale down only if
the load redistributed over N − 1 replicas keeps both spares.

The replica bounds are the quietest and the busiest hour of
:func:`planner.engine.demand.replicas_by_hour`, which the recommendation carries: the bounds
and the replicas-by-hour chart are one computation, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from planner.engine import demand
from planner.engine.cold_start_headroom import headroom_absorbs, headroom_needed_pct
from planner.engine.errors import EngineInputError
from planner.engine.shown import quantity

__all__ = ["AutoscalingRecommendation", "ColdStart", "cold_start", "recommend_autoscaling"]

KV_SATURATION = 0.80  # llm-d WVA: saturated at KV usage ≥ 0.80
QUEUE_SATURATION = 5  # llm-d WVA: saturated at ≥ 5 waiting requests
SPARE_KV_SCALE_UP = 0.10  # scale up when mean spare KV < 0.10
SPARE_QUEUE_SCALE_UP = 3  # scale up when mean spare queue < 3

GPU_UTILISATION_NOTE = (
    "GPU utilisation is not the signal: a serving engine keeps its GPUs 80-95 % busy under "
    "normal load, so utilisation neither rises before latency breaks nor falls when there is "
    "room; KV-cache use and the request queue do."
)


@dataclass(frozen=True, slots=True)
class ColdStart:
    """How long a new replica takes to serve, and the load that arrives meanwhile.

    Attributes:
        weights_gb: Weights one replica reads (all its accelerators), GB.
        read_gb_per_s: Read bandwidth from where the weights are kept, GB/s.
        engine_start_s: Serving-engine start after the weights are read (warm-up), s.
        load_s: Weights ÷ read bandwidth, s.
        total_s: ``load_s + engine_start_s``: how far ahead of the load to scale.
        steepest_rise_per_h: The daily profile's largest hour-to-hour rise, share of peak.
        spike_headroom_pct: Load (percent of peak) that the steepest rise adds during
            ``total_s``: the headroom that absorbs it while a replica starts.
    """

    weights_gb: float
    read_gb_per_s: float
    engine_start_s: float
    load_s: float
    total_s: float
    steepest_rise_per_h: float
    spike_headroom_pct: float


def cold_start(
    *,
    weights_gb: float,
    read_gb_per_s: float,
    engine_start_s: float,
    daily_profile: list[float] | tuple[float, ...],
) -> ColdStart:
    """Cold start of one replica and the headroom the daily ramp needs meanwhile.

    The guide (after IBM's storage analysis): "a new replica is useless until its weights are
    in memory". Load time = bytes ÷ read bandwidth; the ramp is the profile's steepest
    hour-to-hour rise (the day wraps from 23:00 to 00:00).
    """
    if weights_gb < 0 or read_gb_per_s <= 0 or engine_start_s < 0:
        raise EngineInputError("weights, read bandwidth and engine start must be positive")
    values = [float(v) for v in daily_profile]
    if not values or max(values) <= 0 or min(values) < 0:
        raise EngineInputError("a daily profile needs non-negative values with a positive peak")
    peak = max(values)
    rise = max(
        max((values[i] - values[i - 1]) / peak for i in range(len(values))),
        0.0,
    )
    load_s = weights_gb / read_gb_per_s
    total_s = load_s + engine_start_s
    return ColdStart(
        weights_gb=weights_gb,
        read_gb_per_s=read_gb_per_s,
        engine_start_s=engine_start_s,
        load_s=load_s,
        total_s=total_s,
        steepest_rise_per_h=rise,
        spike_headroom_pct=rise * total_s / 3600.0 * 100.0,
    )


@dataclass(frozen=True, slots=True)
class AutoscalingRecommendation:
    """What to scale on and between which bounds.

    Attributes:
        primary_signal: Prometheus metric of the primary signal (KV-cache usage).
        secondary_signal: Metric of the secondary signal (requests waiting).
        scale_up_kv_usage: Scale up when the mean KV usage over replicas exceeds this (0-1).
        scale_up_queue_depth: Scale up when the mean queue per replica reaches this.
        saturation_kv_usage: A replica at or above this KV usage counts as saturated.
        saturation_queue_depth: A replica with this many waiting requests counts as saturated.
        scale_down_kv_usage: Scale down only if the KV usage over N−1 replicas would stay below.
        min_replicas: Replicas of the quietest hour (``min(replicas_by_hour)``).
        max_replicas: Replicas of the peak hour (``max(replicas_by_hour)``).
        replicas_by_hour: Replicas in each hour of the daily profile, headroom and spares
            included (:func:`planner.engine.demand.replicas_by_hour`); the chart draws these.
        expected_kv_usage_at_quietest: Mean KV usage with ``min_replicas`` at the quietest
            hour's load (0 when that hour scales to zero).
        expected_kv_usage_at_peak: Mean KV usage with ``max_replicas`` at peak load.
        window_s: Evaluation window (1-minute peak of the metrics).
        rationale: Sentences for the plan, including why GPU utilisation is not used.
        cold_start: The replica's cold start and the ramp's headroom, when known.
    """

    primary_signal: str
    secondary_signal: str
    scale_up_kv_usage: float
    scale_up_queue_depth: int
    saturation_kv_usage: float
    saturation_queue_depth: int
    scale_down_kv_usage: float
    min_replicas: int
    max_replicas: int
    replicas_by_hour: tuple[int, ...]
    expected_kv_usage_at_quietest: float
    expected_kv_usage_at_peak: float
    window_s: int
    rationale: tuple[str, ...]
    cold_start: ColdStart | None = None


def recommend_autoscaling(
    *,
    load: demand.PeakLoad,
    daily_profile: Sequence[float],
    max_concurrency_per_replica: float,
    start: ColdStart | None = None,
) -> AutoscalingRecommendation:
    """Recommend an autoscaling policy from the peak load, its daily profile and the replica.

    Concurrency (in-flight requests) is the load unit because KV-cache use is proportional to
    it: KV usage ≈ concurrency per replica / the replica's maximum concurrency. The bounds are
    the fewest and the most replicas of :func:`planner.engine.demand.replicas_by_hour` (the
    fleet's own rule, headroom and N+1 included, applied to each hour's share of the peak).

    Args:
        load: The peak traffic and the replica it is sized on (batch, requests/s, headroom,
            N+1), as the fleet is planned.
        daily_profile: Load in each hour, any scale (the peak hour is the fleet's peak).
        max_concurrency_per_replica: Sequences whose KV fits in one replica (memory plan).
        start: The replica's cold start (:func:`cold_start`): how far ahead to scale, and
            whether the headroom absorbs the ramp while a replica starts.

    Returns:
        The recommendation.

    Raises:
        EngineInputError: For non-positive capacity, negative load or a profile without peak.
    """
    if max_concurrency_per_replica <= 0:
        raise EngineInputError("max_concurrency_per_replica must be positive")
    if (load.peak_concurrency or 0) < 0 or (load.peak_requests_per_s or 0) < 0:
        raise EngineInputError("load must not be negative")
    try:
        shares = demand.profile_shares(daily_profile)
    except ValueError as exc:
        raise EngineInputError(str(exc)) from None
    by_hour = demand.replicas_by_hour(load, daily_profile)
    min_replicas, max_replicas = min(by_hour), max(by_hour)
    peak_concurrency = load.concurrency()
    quietest_concurrency = peak_concurrency * min(shares)
    kv_quietest = (
        quietest_concurrency / (min_replicas * max_concurrency_per_replica) if min_replicas else 0.0
    )
    kv_peak = peak_concurrency / (max_replicas * max_concurrency_per_replica)
    headroom_pct = load.headroom_pct
    n_plus_one = load.n_plus_one
    scale_up_kv = 1.0 - SPARE_KV_SCALE_UP - (1.0 - KV_SATURATION)  # 0.70 mean usage
    rationale = (
        "Scale on KV-cache usage (vllm:kv_cache_usage_perc): it rises with concurrent "
        "requests and their context, which is what runs a replica out of room.",
        "Queue depth (vllm:num_requests_waiting) is the second signal: requests waiting mean "
        "time to first token is already growing.",
        GPU_UTILISATION_NOTE,
        f"Bounds: {quantity(min_replicas, 'replica')} in the quietest hour, "
        f"{quantity(max_replicas, 'replica')} in the peak hour, "
        f"with {headroom_pct:g} % headroom"
        + (" and one spare" if n_plus_one else "")
        + ", as the replicas-by-hour chart shows.",
    )
    if min_replicas == 0:
        rationale += (
            # Kubernetes HPA: minReplicas ≥ 1 unless the alpha HPAScaleToZero gate is on;
            # KEDA scales a deployment to and from zero on an event source.
            "Hours without load need no replica: scaling to zero takes an autoscaler that "
            "supports it (e.g. KEDA; the Kubernetes HPA keeps at least 1 replica), and the "
            "first request after a quiet spell waits for a cold start.",
        )
    if start is not None:
        rationale += (
            f"A new replica serves after {start.total_s:.0f} s ({start.weights_gb:.0f} GB of "
            f"weights at {start.read_gb_per_s:g} GB/s = {start.load_s:.0f} s, plus "
            f"{start.engine_start_s:.0f} s engine start): scale at least that far ahead of the "
            "load, e.g. schedule the daily ramp's replicas early.",
            f"On the steepest hour of the daily profile (+{start.steepest_rise_per_h:.0%} of "
            f"the peak) the load grows {start.spike_headroom_pct:.1f} % of the peak while a "
            "replica starts; "
            + (
                f"the {headroom_pct:g} % headroom absorbs it."
                if headroom_absorbs(start.spike_headroom_pct, headroom_pct)
                else f"the {headroom_pct:g} % headroom does not: raise it to at least "
                f"{headroom_needed_pct(start.spike_headroom_pct)} % or scale ahead on a schedule."
            ),
        )
    return AutoscalingRecommendation(
        primary_signal="vllm:kv_cache_usage_perc",
        secondary_signal="vllm:num_requests_waiting",
        scale_up_kv_usage=round(scale_up_kv, 2),
        scale_up_queue_depth=QUEUE_SATURATION - SPARE_QUEUE_SCALE_UP,
        saturation_kv_usage=KV_SATURATION,
        saturation_queue_depth=QUEUE_SATURATION,
        scale_down_kv_usage=round(scale_up_kv, 2),
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        replicas_by_hour=by_hour,
        expected_kv_usage_at_quietest=round(kv_quietest, 3),
        expected_kv_usage_at_peak=round(kv_peak, 3),
        window_s=60,
        rationale=rationale,
        cold_start=start,
    )
