"""Property tests of the engine's entry points (hypothesis): random values inside and outside
the ranges give a result with finite figures or the engine's own EngineInputError, never
another exception. Example counts are bounded so the suite stays fast."""

import math
from dataclasses import asdict
from datetime import date
from decimal import Decimal
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.engine import facility as fe
from planner.engine import landed_cost as lc
from planner.engine import tco as te
from planner.engine.calibration import load_calibration
from planner.engine.deployment import estimate_server
from planner.engine.errors import EngineInputError
from planner.engine.estimate import EstimateRequest, estimate
from planner.engine.specs import load_accelerators_csv, load_models_csv
from planner.engine.sweep import Workload, sweep
from planner.engine.tariff_defaults import DEFAULT_TARIFF_RULES

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
CAL = load_calibration()
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Numbers a hostile form or API client sends: tiny, huge, zero, negative, NaN and infinities.
ANY_FLOAT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e6, max_value=1e7),
    st.sampled_from([0.0, -0.0, 1e-300, 1e300, 1e40, -1.0]),
)
ANY_INT = st.one_of(st.integers(min_value=-10, max_value=10**12), st.sampled_from([0, 1, 10**40]))
OPTIONAL_FLOAT = st.none() | ANY_FLOAT


def _all_finite(value) -> bool:
    if isinstance(value, np.ndarray):
        return bool(np.isfinite(value).all())
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_all_finite(v) for v in value)
    return True


@FAST
@given(
    model=st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b"]),
    accelerator=st.sampled_from(["h100-sxm", "mi300x", "l40s", "gh200"]),
    accelerators=ANY_INT,
    precision=st.sampled_from(["bf16", "fp8", "int4", "fp4", "fp3"]),
    input_tokens=ANY_INT,
    output_tokens=ANY_INT,
    tensor_parallel=st.none() | st.integers(min_value=-1, max_value=16),
    ttft_ms=OPTIONAL_FLOAT,
    tpot_ms=OPTIONAL_FLOAT,
    percentile=st.sampled_from([95, 99, 50]),
    request_rate=OPTIONAL_FLOAT,
)
def test_estimate_gives_finite_figures_or_a_clear_error(model, accelerator, **kwargs):
    if model not in MODELS or accelerator not in ACCELERATORS:
        return
    has_target = kwargs["ttft_ms"] is not None or kwargs["tpot_ms"] is not None
    scenario = "server" if has_target or kwargs["request_rate"] is not None else "offline"
    request = EstimateRequest(model=model, accelerator=accelerator, scenario=scenario, **kwargs)
    try:
        result = estimate(request, MODELS[model], ACCELERATORS[accelerator], CAL)
    except EngineInputError as exc:
        assert str(exc)
        return
    figures = asdict(result)
    if figures.get("saturated"):
        # Past saturation the engine answers with the saturation point: every figure finite,
        # TTFT included (that of the requests admitted); the backlog is the queue's growth.
        assert figures["queue_growth_requests_per_s"] > 0
    elif kwargs["ttft_ms"] is None and scenario == "server" and kwargs["request_rate"] is None:
        # No TTFT target: the batch grows to the TPOT limit and requests may queue without
        # bound, the engine's documented "unbounded" TTFT (as in the sweep's property below).
        figures.pop("ttft_ms")
    assert _all_finite(figures), result


@FAST
@given(
    input_tokens=ANY_INT,
    output_tokens=ANY_INT,
    ttft_ms=OPTIONAL_FLOAT,
    tpot_ms=OPTIONAL_FLOAT,
    peak_concurrency=OPTIONAL_FLOAT,
    peak_requests_per_s=OPTIONAL_FLOAT,
    headroom_pct=ANY_FLOAT,
    n_plus_one=st.booleans(),
)
def test_sweep_gives_candidates_or_a_clear_error(**kwargs):
    try:
        workload = Workload(precisions=("fp8",), **kwargs)
    except EngineInputError as exc:
        assert str(exc)
        return
    accelerators = [ACCELERATORS["h100-sxm"], ACCELERATORS["l40s"]]
    try:
        result = sweep(
            workload, MODELS["llama-3.1-8b"], accelerators, CAL, usd_per_accelerator_hour={}
        )
    except EngineInputError as exc:
        assert str(exc)
        return
    for candidate in result.candidates:
        figures = asdict(candidate)
        if kwargs["ttft_ms"] is None:
            # Without a TTFT target the batch may grow until requests queue without bound:
            # the engine's documented "unbounded" TTFT (the API gives null with a note).
            figures.pop("ttft_ms")
        assert _all_finite(figures), candidate


@FAST
@given(
    accelerators_per_server=ANY_INT,
    accelerator_tdp_w=OPTIONAL_FLOAT,
    platform_power_kw=OPTIONAL_FLOAT,
    platform_rack_units=st.none() | st.integers(min_value=0, max_value=60),
)
def test_estimate_server_gives_power_or_a_clear_error(**kwargs):
    try:
        power_kw, rack_units, _ = estimate_server(**kwargs)
    except EngineInputError as exc:
        assert str(exc)
        return
    assert math.isfinite(power_kw) and power_kw > 0 and rack_units >= 1


SITE_DATES = st.none() | st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31))


@FAST
@given(
    racks_available=ANY_INT,
    site_it_capacity_kw=ANY_FLOAT,
    cooling_capacity_per_rack_kw=OPTIONAL_FLOAT,
    cooling_capacity_site_kw=OPTIONAL_FLOAT,
    voltage_v=ANY_FLOAT,
    amperage_a=ANY_FLOAT,
    pue=ANY_FLOAT,
    power_ready_date=SITE_DATES,
    server_power_kw=ANY_FLOAT,
    server_count=ANY_INT,
    servers_per_rack=st.none() | ANY_INT,
    go_live=st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 12, 31)),
)
def test_facility_checks_give_a_report_or_a_clear_error(
    server_power_kw, server_count, servers_per_rack, go_live, **site
):
    try:
        spec = fe.SiteSpec(name="site", **site)
        load = fe.RackLoad(
            server_name="server",
            server_power_kw=server_power_kw,
            server_ru=8,
            server_count=server_count,
            servers_per_rack=servers_per_rack,
        )
        report = fe.check_facility(spec, load, go_live)
        fe.rack_layout(spec, load, max_racks=4)
    except EngineInputError as exc:
        assert str(exc)
        return
    assert report.status


FRACTION = st.one_of(st.floats(min_value=0, max_value=1), ANY_FLOAT)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    gpu_hours_per_month=ANY_FLOAT,
    growth_pct_per_month=ANY_FLOAT,
    on_demand_usd_per_gpu_h=ANY_FLOAT,
    commit_1yr_discount=FRACTION,
    spot_share=FRACTION,
    annual_price_decline=FRACTION,
    server_count=ANY_INT,
    server_price_usd=ANY_FLOAT,
    server_power_kw=ANY_FLOAT,
    residual_fraction=FRACTION,
    lifetime_months=st.integers(min_value=-1, max_value=1000),
    pue=ANY_FLOAT,
    power_usd_per_kwh=ANY_FLOAT,
    horizon_months=st.integers(min_value=-1, max_value=1000),
    cost_of_capital=FRACTION,
)
def test_tco_gives_finite_cash_flows_or_a_clear_error(
    gpu_hours_per_month, growth_pct_per_month, on_demand_usd_per_gpu_h, commit_1yr_discount,
    spot_share, annual_price_decline, server_count, server_price_usd, server_power_kw,
    residual_fraction, lifetime_months, pue, power_usd_per_kwh, horizon_months, cost_of_capital,
):  # fmt: skip
    try:
        inputs = te.TcoInputs(
            workloads=(te.WorkloadDemand("w", gpu_hours_per_month, growth_pct_per_month=growth_pct_per_month),),
            cloud=te.CloudPricing(
                on_demand_usd_per_gpu_h, commit_1yr_discount=commit_1yr_discount,
                spot_share=spot_share, annual_price_decline=annual_price_decline,
            ),
            hardware=te.OwnedHardware(
                server_count=server_count, gpus_per_server=8, server_price_usd=server_price_usd,
                server_power_kw=server_power_kw, residual_fraction=residual_fraction,
                lifetime_months=lifetime_months,
            ),
            sites=(te.SiteCost("colo", "Colo", pue=pue, power_usd_per_kwh=power_usd_per_kwh),),
            horizon_months=horizon_months,
            cost_of_capital=cost_of_capital,
        )  # fmt: skip
        result = te.run_tco(inputs)
    except EngineInputError as exc:
        assert str(exc)
        return
    for option in result.options:
        assert _all_finite(asdict(option)), option.key


DECIMAL = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True),
    st.decimals(min_value=0, max_value=10**6, places=2),
    st.sampled_from([Decimal("1e40"), Decimal("-1"), Decimal("0"), Decimal("9" * 40)]),
)
LC_DATES = st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31))
AS_OF = date(2025, 6, 1)
FX = lc.FxTable((lc.FxRate("USD", "EUR", Decimal("0.92"), date(2025, 5, 30)),))


@FAST
@given(
    unit_price=DECIMAL,
    freight_per_unit=DECIMAL,
    break_price=DECIMAL,
    break_qty=ANY_INT,
    minimum_order_qty=ANY_INT,
    lead_time_days=ANY_INT,
    quoted_on=LC_DATES,
    valid_until=LC_DATES,
    quantity=ANY_INT,
    currency=st.sampled_from(["USD", "EUR", "XXX", "usd"]),
    hs_code=st.sampled_from(["847150", "8471.50", "84", "x"]),
)
def test_landed_cost_choice_gives_finite_money_or_a_clear_error(
    unit_price, freight_per_unit, break_price, break_qty, quantity, hs_code, **offer
):
    try:
        candidate = lc.Offer(
            supplier="Acme",
            part_key="server:dgx",
            unit_price=unit_price,
            origin_country="US",
            freight_per_unit=freight_per_unit,
            price_breaks=(lc.PriceBreak(break_qty, break_price),),
            offer_id="acme",
            **offer,
        )
        choice = lc.choose_offer(
            [candidate],
            quantity=quantity,
            hs_code=hs_code,
            destination="DE",
            tariffs=DEFAULT_TARIFF_RULES,
            fx=FX,
            plan_currency="EUR",
            as_of=AS_OF,
        )
    except EngineInputError as exc:
        assert str(exc)
        return
    for evaluation in choice.evaluations:
        for value in asdict(evaluation).values():
            if isinstance(value, Decimal):
                assert value.is_finite(), evaluation


def test_a_tpot_only_target_reports_the_unbounded_ttft_as_infinite_not_as_a_number():
    """The case hypothesis found: no TTFT target, so every batch meets the TPOT target and the
    largest one queues without bound. Other figures stay finite."""
    workload = Workload(precisions=("fp8",), input_tokens=1, output_tokens=1, tpot_ms=22.0)
    result = sweep(
        workload,
        MODELS["llama-3.1-8b"],
        [ACCELERATORS["h100-sxm"]],
        CAL,
        usd_per_accelerator_hour={},
    )
    for candidate in result.candidates:
        figures = asdict(candidate)
        ttft = figures.pop("ttft_ms")
        assert ttft is None or ttft > 0
        assert _all_finite(figures), candidate
