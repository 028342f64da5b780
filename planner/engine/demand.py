"""Demand arithmetic shared by every page: Little's law, mean-to-peak, replicas per hour.

One formula per number: sizing (autoscaling, the replicas-by-hour chart), the TCO demand and
the placement profile call these functions instead of restating them.

Which request time Little's law uses:

- **Modelled** (:func:`modelled_request_s`): the time a request spends in the chosen
  configuration at its operating point, batch per replica ÷ requests/s per replica. This is
  the basis the fleet is sized on (:func:`planner.engine.capacity.plan_replicas` divides
  peak concurrency by the batch and peak requests/s by the requests/s per replica), so every
  figure derived from a chosen configuration uses it: autoscaling bounds, replicas per hour
  and the requests and tokens a month that the TCO prices.
- **At the targets** (:func:`target_request_s`): TTFT + mean output tokens × TPOT, or the
  batch time target. It is the longest a request may take, so it is only a fallback when no
  configuration is chosen yet (no modelled time exists); it understates requests/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from planner.engine import limits
from planner.engine.capacity import plan_replicas
from planner.engine.tco import HOURS_PER_MONTH

SECONDS_PER_HOUR = 3600.0
DAYS_PER_MONTH = HOURS_PER_MONTH / 24.0  # 730 h a month as the TCO counts it = 30.4 days

__all__ = [
    "MonthlyDemand",
    "PeakLoad",
    "TrafficEstimate",
    "concurrency_from_rate",
    "mean_to_peak",
    "modelled_request_s",
    "monthly_demand",
    "profile_shares",
    "rate_from_concurrency",
    "replicas_by_hour",
    "target_request_s",
    "traffic_from_concurrent_users",
    "traffic_from_users",
]


def _check_profile(profile: Sequence[float]) -> list[float]:
    values = [float(v) for v in profile]
    if not values or min(values) < 0 or max(values) <= 0:
        raise ValueError("a daily profile needs non-negative values with a positive peak")
    return values


def mean_to_peak(profile: Sequence[float]) -> float:
    """Mean ÷ peak of a daily profile (load factor; 1 = flat), any scale."""
    values = _check_profile(profile)
    # Load factor (average ÷ peak load), as utilities define it for a daily load curve.
    return sum(values) / len(values) / max(values)


def profile_shares(profile: Sequence[float]) -> tuple[float, ...]:
    """Each hour as a share of the profile's own peak hour (the peak hour is 1)."""
    values = _check_profile(profile)
    peak = max(values)
    return tuple(v / peak for v in values)


def concurrency_from_rate(requests_per_s: float, request_s: float) -> float:
    """Concurrent requests L = λ·W (Little's law: arrival rate × time in system)."""
    # J. D. C. Little, "A proof for the queuing formula L = λW", Oper. Res. 9(3), 1961.
    if requests_per_s < 0 or request_s < 0:
        raise ValueError("rate and request time must be non-negative")
    return requests_per_s * request_s


def rate_from_concurrency(concurrency: float, request_s: float) -> float:
    """Requests/s λ = L / W (Little's law); 0 when the request time is unknown (0)."""
    if concurrency < 0 or request_s < 0:
        raise ValueError("concurrency and request time must be non-negative")
    return concurrency / request_s if request_s > 0 else 0.0


def modelled_request_s(batch_per_replica: float, requests_per_s_per_replica: float) -> float:
    """Seconds a request spends in one replica at its operating point (W = L / λ per replica).

    0 when the replica has no operating point.
    """
    if not (batch_per_replica and requests_per_s_per_replica):
        return 0.0
    return batch_per_replica / requests_per_s_per_replica


def target_request_s(
    *,
    ttft_ms: float | None,
    tpot_ms: float | None,
    output_tokens_mean: float,
    e2e_s: float | None = None,
) -> float:
    """Longest time a request may take by its targets: TTFT + output × TPOT, or the batch time.

    0 when neither is given.
    """
    if ttft_ms and tpot_ms:
        return (ttft_ms + output_tokens_mean * tpot_ms) / 1000.0
    return float(e2e_s or 0.0)


@dataclass(frozen=True, slots=True)
class PeakLoad:
    """The peak traffic of a workload and the replica it is sized on.

    Attributes:
        peak_concurrency: Peak concurrent requests, or None.
        peak_requests_per_s: Peak requests/s, or None.
        tensor_parallel: Accelerators per replica.
        accelerators_per_server: Accelerators per server.
        batch_per_replica: Concurrent requests one replica holds within target.
        requests_per_s_per_replica: Requests/s one replica serves within target.
        headroom_pct: Capacity kept free at peak, percent.
        n_plus_one: One spare replica per failure domain.
        failure_domains: Failure domains.
    """

    peak_concurrency: float | None
    peak_requests_per_s: float | None
    tensor_parallel: int
    accelerators_per_server: int
    batch_per_replica: float
    requests_per_s_per_replica: float
    headroom_pct: float
    n_plus_one: bool = True
    failure_domains: int = 1

    def concurrency(self) -> float:
        """Peak concurrency: given, else peak requests/s × the modelled request time."""
        if self.peak_concurrency:
            return float(self.peak_concurrency)
        request_s = modelled_request_s(self.batch_per_replica, self.requests_per_s_per_replica)
        return concurrency_from_rate(self.peak_requests_per_s or 0.0, request_s)

    def replicas(self, share: float = 1.0) -> int:
        """Replicas (with headroom and spares) for ``share`` of the peak; 0 when share is 0."""
        if share <= 0:
            return 0  # an hour without traffic needs no replica (scale to zero)
        scale = min(float(share), 1.0)
        # Seed guide step 4, anchors F9 (via plan_replicas): ceil(load ÷ cap ÷ (1 − h)) + N+1.
        return plan_replicas(
            tensor_parallel=self.tensor_parallel,
            accelerators_per_server=self.accelerators_per_server,
            batch_per_replica=self.batch_per_replica,
            requests_per_s_per_replica=self.requests_per_s_per_replica,
            peak_concurrency=None
            if self.peak_concurrency is None
            else self.peak_concurrency * scale,
            peak_requests_per_s=(
                None if self.peak_requests_per_s is None else self.peak_requests_per_s * scale
            ),
            headroom_pct=self.headroom_pct,
            failure_domains=self.failure_domains,
            n_plus_one=self.n_plus_one,
        ).replicas


def replicas_by_hour(load: PeakLoad, profile: Sequence[float]) -> tuple[int, ...]:
    """Replicas needed in each hour: plan_replicas for that hour's share of the peak.

    The peak hour needs exactly the fleet's replicas; other hours scale the load by their
    share of the profile's peak (seed guide step 4, applied per hour).
    """
    return tuple(load.replicas(share) for share in profile_shares(profile))


@dataclass(frozen=True, slots=True)
class MonthlyDemand:
    """One workload's month-1 demand for the TCO engine.

    Attributes:
        gpu_hours_per_month: Accelerators of the peak hour × mean-to-peak × hours a month.
        requests_per_month: Peak requests/s × mean-to-peak × seconds a month.
        output_tokens_per_month: Requests a month × mean output tokens.
    """

    gpu_hours_per_month: float
    requests_per_month: float
    output_tokens_per_month: float


def monthly_demand(
    *,
    peak_accelerators: int,
    daily_profile: Sequence[float],
    peak_requests_per_s: float,
    output_tokens_mean: float,
) -> MonthlyDemand:
    """GPU-hours, requests and output tokens a month of a fleet sized for the peak hour.

    The peak hour's accelerators scale with the profile (autoscaled), so a month uses
    mean ÷ peak of them on average; 730 h a month as in :mod:`planner.engine.tco`.
    """
    load_factor = mean_to_peak(daily_profile)
    requests = peak_requests_per_s * load_factor * HOURS_PER_MONTH * SECONDS_PER_HOUR
    return MonthlyDemand(
        gpu_hours_per_month=peak_accelerators * load_factor * HOURS_PER_MONTH,
        requests_per_month=requests,
        output_tokens_per_month=requests * output_tokens_mean,
    )


@dataclass(frozen=True, slots=True)
class TrafficEstimate:
    """Peak traffic from active users, in the client's terms, with every step's number.

    Attributes:
        requests_per_day: Active users × sessions per user × requests per session, a day;
            None when the estimate starts from concurrent users (no daily volume is known).
        peak_hour_requests: Requests in the busiest hour (the day's × its share), or λ × 3,600 s
            from concurrent users.
        peak_requests_per_s: λ, the busiest hour's requests ÷ 3,600 s.
        request_s: W, the time one request takes at the latency target.
        think_time_s: Z, a user's pause between two requests of a session.
        peak_concurrency: L = λ·W, requests in flight at the peak (Little's law).
        concurrent_users: N = λ·(W + Z), users in a session at the peak.
    """

    requests_per_day: float | None
    peak_hour_requests: float
    peak_requests_per_s: float
    request_s: float
    think_time_s: float
    peak_concurrency: float
    concurrent_users: float


def traffic_from_users(
    *,
    active_users: float,
    per_month: bool,
    sessions_per_user: float,
    requests_per_session: float,
    think_time_s: float,
    busiest_hour_pct: float,
    request_s: float,
) -> TrafficEstimate:
    """Peak requests/s and concurrency of ``active_users`` daily (or monthly) active users.

    Args:
        active_users: Daily active users, or monthly ones when ``per_month``.
        per_month: Users and sessions per user are counted per month (30.4 days), not a day.
        sessions_per_user: Sessions a user opens in the same period.
        requests_per_session: Requests a session sends.
        think_time_s: Seconds a user pauses between two requests.
        busiest_hour_pct: Percent of a day's requests that arrive in its busiest hour.
        request_s: Seconds a request takes at the latency target (:func:`target_request_s`).

    Raises:
        EngineInputError: An input outside its range (``planner.engine.limits``).
    """
    limits.ACTIVE_USERS.check("active users", active_users)
    limits.SESSIONS_PER_USER.check("sessions per user", sessions_per_user)
    limits.REQUESTS_PER_SESSION.check("requests per session", requests_per_session)
    limits.THINK_TIME_S.check("think time", think_time_s)
    limits.BUSIEST_HOUR_PCT.check("busiest hour share", busiest_hour_pct)
    limits.ENGINE_REQUEST_S.check("request time", request_s)
    days = DAYS_PER_MONTH if per_month else 1.0
    requests_per_day = active_users * sessions_per_user * requests_per_session / days
    # Busy-hour traffic: the day's volume × the busiest hour's share (ITU-T E.500, busy hour).
    peak_hour = requests_per_day * busiest_hour_pct / 100.0
    rate = peak_hour / SECONDS_PER_HOUR
    return TrafficEstimate(
        requests_per_day=requests_per_day,
        peak_hour_requests=peak_hour,
        peak_requests_per_s=rate,
        request_s=request_s,
        think_time_s=think_time_s,
        peak_concurrency=concurrency_from_rate(rate, request_s),
        # Interactive response-time law N = X·(R + Z): Lazowska et al., "Quantitative System
        # Performance" (1984), chapter 3 (fundamental laws).
        concurrent_users=concurrency_from_rate(rate, request_s + think_time_s),
    )


def traffic_from_concurrent_users(
    *, concurrent_users: float, think_time_s: float, request_s: float
) -> TrafficEstimate:
    """Peak requests/s and concurrency of ``concurrent_users`` in a session at the peak.

    Each user in a session waits for a request (W) and then thinks (Z) before the next, so the
    users send λ = N / (W + Z) requests a second, of which L = λ·W are in flight.

    Args:
        concurrent_users: Users in a session at the same moment at the peak (N).
        think_time_s: Seconds a user pauses between two requests (Z); 0 means every user
            always has a request in flight.
        request_s: Seconds a request takes at the latency target (:func:`target_request_s`).

    Raises:
        EngineInputError: An input outside its range (``planner.engine.limits``).
    """
    limits.CONCURRENT_USERS.check("concurrent users", concurrent_users)
    limits.THINK_TIME_S.check("think time", think_time_s)
    limits.ENGINE_REQUEST_S.check("request time", request_s)
    # Interactive response-time law solved for throughput, X = N / (R + Z): Lazowska et al.,
    # "Quantitative System Performance" (1984), chapter 3.
    rate = concurrent_users / (request_s + think_time_s)
    return TrafficEstimate(
        requests_per_day=None,
        peak_hour_requests=rate * SECONDS_PER_HOUR,
        peak_requests_per_s=rate,
        request_s=request_s,
        think_time_s=think_time_s,
        peak_concurrency=concurrency_from_rate(rate, request_s),
        concurrent_users=concurrent_users,
    )
