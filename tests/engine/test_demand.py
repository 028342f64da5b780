"""Demand formulas pinned against hand calculations (planner.engine.demand)."""

import pytest

from planner.engine import demand
from planner.engine.capacity import plan_replicas
from planner.engine.errors import EngineInputError

BUSINESS_DAY = [1.0] * 12 + [0.5] * 12  # mean 0.75, peak 1


def test_mean_to_peak_is_the_average_over_the_peak_at_any_scale():
    assert demand.mean_to_peak(BUSINESS_DAY) == pytest.approx(0.75)
    assert demand.mean_to_peak([2 * v for v in BUSINESS_DAY]) == pytest.approx(0.75)
    assert demand.mean_to_peak([0.4] * 24) == pytest.approx(1.0)  # flat, whatever the level


def test_profile_shares_put_the_peak_hour_at_one():
    shares = demand.profile_shares([0.8, 0.4, 0.0] + [0.2] * 21)
    assert shares[:3] == pytest.approx((1.0, 0.5, 0.0))
    assert shares[3] == pytest.approx(0.25)


@pytest.mark.parametrize("profile", [[0.0] * 24, [1.0, -0.1] + [1.0] * 22, []])
def test_a_profile_without_a_positive_peak_is_refused(profile):
    with pytest.raises(ValueError, match="positive peak"):
        demand.mean_to_peak(profile)


def test_littles_law_both_ways():
    # L = λW: 10 requests/s that each take 2.5 s keep 25 in flight, and back.
    assert demand.concurrency_from_rate(10.0, 2.5) == pytest.approx(25.0)
    assert demand.rate_from_concurrency(25.0, 2.5) == pytest.approx(10.0)
    assert demand.rate_from_concurrency(400.0, 0.0) == 0.0  # no request time known
    with pytest.raises(ValueError):
        demand.concurrency_from_rate(-1.0, 2.0)


def test_request_time_modelled_and_at_the_targets():
    # 32 requests in flight at 4 requests/s: each spends 8 s in the replica.
    assert demand.modelled_request_s(32, 4.0) == pytest.approx(8.0)
    assert demand.modelled_request_s(0, 4.0) == 0.0
    # Demo chat targets: 1,000 ms TTFT + 350 tokens × 50 ms = 18.5 s.
    assert demand.target_request_s(
        ttft_ms=1000, tpot_ms=50, output_tokens_mean=350
    ) == pytest.approx(18.5)
    assert demand.target_request_s(
        ttft_ms=None, tpot_ms=None, output_tokens_mean=400, e2e_s=120
    ) == pytest.approx(120.0)
    assert demand.target_request_s(ttft_ms=None, tpot_ms=None, output_tokens_mean=400) == 0.0


def _chat(**overrides) -> demand.PeakLoad:
    values = {
        "peak_concurrency": 400, "peak_requests_per_s": None, "tensor_parallel": 1,
        "accelerators_per_server": 8, "batch_per_replica": 30, "requests_per_s_per_replica": 2.0,
        "headroom_pct": 20.0, "n_plus_one": True,
    }  # fmt: skip
    return demand.PeakLoad(**(values | overrides))


def test_replicas_at_the_peak_and_in_a_half_hour():
    load = _chat()
    # 400 / 30 = 13.3 replicas of load; ÷ 0.8 headroom = 16.7 → 17; + 1 spare = 18.
    assert load.replicas() == 18
    # Half the peak: 200 / 30 = 6.7; ÷ 0.8 = 8.3 → 9; + 1 spare = 10.
    assert load.replicas(0.5) == 10
    assert load.replicas(0.0) == 0  # no traffic, no replica


def test_replicas_by_hour_follow_the_profile_and_peak_at_the_fleet():
    load = _chat()
    hours = demand.replicas_by_hour(load, [0.8] * 12 + [0.4] * 12)  # 0.8 is the peak hour
    assert hours == (18,) * 12 + (10,) * 12
    fleet = plan_replicas(
        tensor_parallel=1, accelerators_per_server=8, batch_per_replica=30,
        requests_per_s_per_replica=2.0, peak_concurrency=400, headroom_pct=20.0,
    )  # fmt: skip
    assert max(hours) == fleet.replicas


def test_peak_requests_per_s_size_on_the_modelled_request_time():
    load = _chat(
        peak_concurrency=None, peak_requests_per_s=12.0, batch_per_replica=40,
        requests_per_s_per_replica=5.0, headroom_pct=10.0, n_plus_one=False,
    )  # fmt: skip
    # Little's law on the replica: 12 requests/s × (40 / 5 = 8 s) = 96 in flight.
    assert load.concurrency() == pytest.approx(96.0)
    # 12 / 5 = 2.4 replicas; ÷ 0.9 = 2.67 → 3.
    assert load.replicas() == 3


def test_both_peaks_given_the_larger_need_wins_every_hour():
    load = _chat(
        peak_concurrency=100, peak_requests_per_s=30.0, batch_per_replica=50,
        requests_per_s_per_replica=5.0, headroom_pct=0.0, n_plus_one=False,
    )  # fmt: skip
    # Concurrency needs 100 / 50 = 2 replicas; requests/s need 30 / 5 = 6.
    assert demand.replicas_by_hour(load, [1.0] * 12 + [0.5] * 12) == (6,) * 12 + (3,) * 12


def test_monthly_demand_of_a_fleet_sized_for_the_peak():
    month = demand.monthly_demand(
        peak_accelerators=5, daily_profile=BUSINESS_DAY, peak_requests_per_s=10.0,
        output_tokens_mean=350,
    )  # fmt: skip
    assert month.gpu_hours_per_month == pytest.approx(5 * 0.75 * 730)  # 2,737.5
    assert month.requests_per_month == pytest.approx(10 * 0.75 * 730 * 3600)  # 19,710,000
    assert month.output_tokens_per_month == pytest.approx(19_710_000 * 350)


# --- Traffic helper: active users to peak load -----------------------------------------------


def test_daily_active_users_to_peak_load_by_hand():
    # 20,000 DAU × 2 sessions × 5 requests = 200,000 requests a day; 12 % in the busiest hour
    # = 24,000 requests → λ = 6.667/s. W = 1 s + 350 × 0.05 s = 18.5 s → L = λW = 123.3;
    # with 30 s think time, N = λ(W + Z) = 6.667 × 48.5 = 323.3 users in a session.
    request_s = demand.target_request_s(ttft_ms=1000, tpot_ms=50, output_tokens_mean=350)
    t = demand.traffic_from_users(
        active_users=20_000, per_month=False, sessions_per_user=2, requests_per_session=5,
        think_time_s=30, busiest_hour_pct=12, request_s=request_s,
    )  # fmt: skip
    assert t.requests_per_day == pytest.approx(200_000)
    assert t.peak_hour_requests == pytest.approx(24_000)
    assert t.peak_requests_per_s == pytest.approx(6.6667, rel=1e-4)
    assert t.request_s == pytest.approx(18.5)
    assert t.peak_concurrency == pytest.approx(123.33, rel=1e-4)
    assert t.concurrent_users == pytest.approx(323.33, rel=1e-4)


def test_monthly_active_users_spread_over_the_tco_month():
    # 100,000 MAU × 4 sessions × 5 requests a month = 2,000,000 ÷ (730 / 24 = 30.417 days).
    t = demand.traffic_from_users(
        active_users=100_000, per_month=True, sessions_per_user=4, requests_per_session=5,
        think_time_s=0, busiest_hour_pct=100 / 24 + 0.1, request_s=10,
    )  # fmt: skip
    assert t.requests_per_day == pytest.approx(65_753.4, rel=1e-5)
    assert t.concurrent_users == pytest.approx(t.peak_concurrency)


@pytest.mark.parametrize(
    "field,value",
    [("active_users", 0), ("busiest_hour_pct", 3), ("busiest_hour_pct", 101),
     ("think_time_s", -1), ("requests_per_session", 0)],
)  # fmt: skip
def test_traffic_inputs_outside_their_range_are_refused(field, value):
    kwargs = dict(active_users=1000, per_month=False, sessions_per_user=1,
                  requests_per_session=1, think_time_s=0, busiest_hour_pct=10, request_s=5)  # fmt: skip
    kwargs[field] = value
    with pytest.raises(EngineInputError):
        demand.traffic_from_users(**kwargs)


def test_concurrent_users_to_peak_load_by_hand():
    # 323.3 users in a session (the DAU example above, run backwards): W = 18.5 s, Z = 30 s,
    # λ = N / (W + Z) = 323.33 / 48.5 = 6.667/s, L = λW = 123.3 in flight.
    t = demand.traffic_from_concurrent_users(
        concurrent_users=323.333_33, think_time_s=30, request_s=18.5
    )
    assert t.peak_requests_per_s == pytest.approx(6.6667, rel=1e-4)
    assert t.peak_concurrency == pytest.approx(123.33, rel=1e-4)
    assert t.peak_hour_requests == pytest.approx(24_000, rel=1e-4)
    assert t.requests_per_day is None  # unknown without a daily volume
    # Without think time every user always has a request in flight: L = N.
    busy = demand.traffic_from_concurrent_users(concurrent_users=500, think_time_s=0, request_s=4)
    assert (busy.peak_requests_per_s, busy.peak_concurrency) == (125, 500)


@pytest.mark.parametrize(
    "field,value", [("concurrent_users", 0), ("think_time_s", -1), ("request_s", 0)]
)
def test_concurrent_users_outside_their_range_are_refused(field, value):
    kwargs = dict(concurrent_users=100, think_time_s=10, request_s=5)
    kwargs[field] = value
    with pytest.raises(EngineInputError):
        demand.traffic_from_concurrent_users(**kwargs)
