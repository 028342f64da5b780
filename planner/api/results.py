"""Sizing and what follows from it: candidates and the choice, the deployment, the facility
checks, placement and TCO runs. Each endpoint calls the service its page calls and returns
what the page shows, as JSON."""

from __future__ import annotations

import dataclasses
from datetime import date
from typing import Annotated, Any

from django.db import models
from django.urls import reverse
from ninja import Field, Query, Router, Schema, Status
from pydantic import BeforeValidator, ConfigDict

from catalog.selectors import catalog_version_pinned
from planner import jobs, sizing
from planner.api.common import InSchema, JobOut, job_out, op, plan_get, require_editor
from planner.api.plans import Id, WorkloadOut, actor, workload_get, workload_out
from planner.engine.errors import CatalogGapError, EngineInputError
from planner.engine.limits import finite_or_none
from planner.facility import selectors as facility_selectors
from planner.facility import services as facility_services
from planner.facility.deployment import PlanDeployment, plan_deployment, workload_deployments
from planner.facility.models import TcoRun

router = Router(tags=["results"])


def plain(value: Any) -> Any:
    """A service's or the engine's dataclass as JSON values: infinities become null, a stored
    row its id and name, dates ISO text, decimals exact text."""
    if isinstance(value, models.Model):
        return {"id": value.pk, "name": str(value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, float):
        return finite_or_none(value)
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, date):
        return value.isoformat()
    return str(value)  # decimals, enums


# --- Candidates and the choice -----------------------------------------------------------------


class CandidateOut(Schema):
    key: str = Field(
        ...,
        description="accelerator|precision|tensor_parallel, plus |ppN or |epN for a replica "
        "spanning servers, or |p<prefill TP> when disaggregated; send it to choose.",
    )
    accelerator: str
    accelerator_name: str
    precision: str
    tensor_parallel: int
    pipeline_parallel: int = Field(..., description="Pipeline stages per replica (1: none).")
    expert_parallel: int = Field(..., description="Expert-parallel degree (1: none).")
    layout: str = Field(
        ...,
        description="e.g. 'TP4', 'TP8 × PP2 (2 servers)' for a replica spanning servers, or "
        "'TP1/TP2' (prefill/decode) when disaggregated.",
    )
    accelerators_per_replica: int
    feasible: bool
    reason: str | None = Field(..., description="Why the candidate is infeasible, if it is.")
    replicas: int | None
    accelerators: int | None
    servers: int | None
    ttft_ms: float | None
    tpot_ms: float | None
    batch_per_replica: int
    output_tokens_per_s_per_replica: float
    usd_per_million_output_tokens: float | None = Field(
        ..., description="At the catalog's cloud list price, USD (the catalog's currency)."
    )
    usd_per_hour: float | None = Field(
        ..., description="The fleet at the catalog's cloud list price, USD per hour."
    )
    expected_error_pct: float | None
    best: bool
    chosen: bool
    serving: str = Field(
        "aggregated",
        description="aggregated, or disaggregated: separate prefill and decode replica pools "
        "(tensor_parallel, batch and per-replica figures are the decode replica's; replicas, "
        "accelerators and servers count both pools; ttft_ms includes the KV transfer).",
    )
    label: str = Field(
        "",
        description='e.g. "H100 SXM FP8 TP8 × PP2 (2 servers)" or '
        '"Disaggregated 2P:5D, H100 SXM FP8 TP1/TP2".',
    )
    prefill_tensor_parallel: int | None = None
    prefill_replicas: int | None = None
    decode_replicas: int | None = None
    kv_transfer_ms: float | None = Field(None, description="KV transfer per request, ms.")


def _cost_rank(candidate) -> tuple:
    cost = candidate.usd_per_million_output_tokens
    return (not candidate.feasible, cost is None, cost or 0)


@router.get(
    "/plans/{plan_id}/workloads/{workload_id}/candidates",
    **op({200: list[CandidateOut]}, 404),
    summary="The ranked candidate table: feasible by cost first, then the infeasible with why",
)
def candidates(
    request,
    plan_id: Id,
    workload_id: Id,
    all_precisions: bool = Query(False, description="Every precision, not only the workload's."),
):
    workload = workload_get(request, plan_id, workload_id)
    with catalog_version_pinned():
        try:
            result = sizing.workload_sweep(workload, all_precisions=all_precisions)
        except EngineInputError as exc:
            return Status(422, {"errors": {"__all__": [str(exc)]}})
    best = sizing.candidate_key(result.best) if result.best else None
    chosen = sizing.chosen_key(workload)
    rows = []
    for c in sorted(result.candidates, key=_cost_rank):
        key = sizing.candidate_key(c)
        rows.append(
            {
                "key": key,
                "accelerator": c.accelerator_slug,
                "accelerator_name": c.accelerator_name,
                "precision": c.precision,
                "tensor_parallel": c.tensor_parallel,
                "pipeline_parallel": c.pipeline_parallel,
                "expert_parallel": c.expert_parallel,
                "layout": c.layout,
                "accelerators_per_replica": c.accelerators_per_replica,
                "feasible": c.feasible,
                "reason": c.infeasible_reason,
                "replicas": c.replicas,
                "accelerators": c.accelerators,
                "servers": c.servers,
                "ttft_ms": finite_or_none(c.ttft_ms),
                "tpot_ms": finite_or_none(c.tpot_ms),
                "batch_per_replica": c.batch_per_replica,
                "output_tokens_per_s_per_replica": c.output_tokens_per_s_per_replica,
                "usd_per_million_output_tokens": c.usd_per_million_output_tokens,
                "usd_per_hour": c.usd_per_hour,
                "expected_error_pct": c.expected_error_pct,
                "best": key == best,
                "chosen": key == chosen,
                "serving": c.serving,
                "label": c.label,
                "prefill_tensor_parallel": c.prefill_tensor_parallel,
                "prefill_replicas": c.prefill_replicas,
                "decode_replicas": c.decode_replicas,
                "kv_transfer_ms": c.kv_transfer_ms,
            }
        )
    return rows


class ChooseIn(InSchema):
    key: str = Field(..., max_length=200, description="A candidate's key from the table.")


class ChosenWorkloadOut(WorkloadOut):
    warning: str = Field(
        "", description="Why sites, TCO and sourcing cannot use the choice yet, if so."
    )


@router.post(
    "/plans/{plan_id}/workloads/{workload_id}/choose",
    **op({200: ChosenWorkloadOut}, 404),
    summary="Choose a feasible candidate as the workload's configuration",
)
def choose(request, plan_id: Id, workload_id: Id, payload: ChooseIn):
    workload = workload_get(request, plan_id, workload_id)
    require_editor(request)
    key = payload.key
    precision = key.split("|")[1] if key.count("|") >= 2 else ""
    with catalog_version_pinned():
        try:
            result = sizing.workload_sweep(workload, all_precisions=precision != workload.precision)
        except EngineInputError as exc:
            return Status(422, {"errors": {"__all__": [str(exc)]}})
        candidate = sizing.candidate_find(result, key)
        if candidate is None or not candidate.feasible:
            reason = candidate.infeasible_reason if candidate else "it is not a candidate"
            message = f"That configuration cannot be chosen: {reason}."
            return Status(422, {"errors": {"key": [message]}})
        workload = sizing.workload_choose(workload=workload, candidate=candidate)
    warning = ""
    try:
        workload_deployments(plan=workload.plan)
    except CatalogGapError as gap:
        warning = f"Sites, placement, TCO and sourcing cannot use it yet. {gap}"
    return Status(200, workload_out(workload) | {"warning": warning})


# --- Deployment and facility checks ------------------------------------------------------------


class DeploymentOut(Schema):
    servers: int = Field(0, description="Servers of every site, N+1 spares included.")
    accelerators_used: int = Field(0, description="Accelerators the replicas use at peak.")
    accelerators_installed: int = Field(0, description="Accelerators in the servers bought.")
    it_load_kw: float = Field(
        0.0,
        description="IT load of the deployment, kW: the sites' loads as their facility checks "
        "have them (servers and network gear); without a site, the servers alone.",
    )
    pools: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Per site and server platform: the workloads' replicas packed onto shared "
        "servers, the servers for the load and the spares (the one deployment every page reads).",
    )
    deployments: list[dict[str, Any]] = Field(
        ..., description="Each workload's chosen configuration (for labels and demand)."
    )
    sites: list[dict[str, Any]] = Field(
        ..., description="Per site: servers, racks needed, IT and facility load (kW), status."
    )
    catalog_gap: str = Field("", description="Why the plan's servers cannot be placed yet.")


def _deployment(plan) -> tuple[PlanDeployment | None, str]:
    try:
        return plan_deployment(plan=plan), ""
    except (CatalogGapError, EngineInputError) as gap:
        return None, str(gap)


def _evaluations(plan, deployment: PlanDeployment | None):
    for site in facility_selectors.site_list(plan=plan):
        yield site, facility_services.site_evaluate(plan=plan, site=site, deployment=deployment)


@router.get(
    "/plans/{plan_id}/deployment",
    **op({200: DeploymentOut}, 404),
    summary="Servers, accelerators, racks and power of the plan, per site",
)
def deployment(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    pooled, gap = _deployment(plan)
    sites = []
    for site, evaluation in _evaluations(plan, pooled):
        report = evaluation.report
        at_site = pooled.site_pool(site) if pooled else None
        sites.append(
            {
                "id": site.pk,
                "name": site.name,
                "status": evaluation.status,
                "servers": at_site.servers if at_site else 0,
                "racks_needed": report.racks_needed if report else None,
                "servers_per_rack": report.servers_per_rack if report else None,
                "it_load_kw": finite_or_none(report.it_load_kw) if report else None,
                "facility_load_kw": finite_or_none(report.facility_load_kw) if report else None,
                "error": evaluation.error,
            }
        )
    if pooled is None:
        return {"deployments": [], "sites": sites, "catalog_gap": gap}
    return {
        "servers": pooled.servers,
        "accelerators_used": pooled.accelerators_used,
        "accelerators_installed": pooled.accelerators_installed,
        # The headline kW every page shows: the sites' loads with their network gear.
        "it_load_kw": finite_or_none(facility_services.deployment_summary(plan=plan).it_load_kw)
        or 0.0,
        "pools": plain(list(pooled.pooled.pools)),
        "deployments": plain(list(pooled.per_workload)),
        "sites": sites,
        "catalog_gap": gap,
    }


class CheckOut(Schema):
    key: str
    title: str
    status: str
    value: str
    limit: str
    unit: str
    reason: str
    value_shown: str = Field(..., description="The value as the pages show it, with its unit.")
    limit_shown: str = Field(..., description="The limit as the pages show it, with its unit.")


class SiteChecksOut(Schema):
    site_id: int
    site_name: str
    status: str = Field(..., description="The worst check's status; empty without servers.")
    checks: list[CheckOut]
    notes: list[str]
    error: str
    catalog_gap: str


@router.get(
    "/plans/{plan_id}/facility-checks",
    **op({200: list[SiteChecksOut]}, 404),
    summary="The facility checks of every site for the plan's servers, as the site page",
)
def facility_checks(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    pooled, gap = _deployment(plan)
    return [
        {
            "site_id": site.pk,
            "site_name": site.name,
            "status": evaluation.status,
            "checks": evaluation.check_rows,
            "notes": evaluation.notes,
            "error": evaluation.error,
            "catalog_gap": evaluation.catalog_gap or gap,
        }
        for site, evaluation in _evaluations(plan, pooled)
    ]


# --- Placement ---------------------------------------------------------------------------------


class PlacementOut(Schema):
    result: dict[str, Any] | None = Field(..., description="The scored options (engine result).")
    rtt_budget_ms: float
    ttft_target_ms: float | None
    user_regions: dict[str, float]
    latency_notes: dict[str, list[str]]
    notes: list[str]
    cost_source: str
    catalog_gap: str
    cost_currency: str = Field(
        "",
        description="The currency of the costs per million tokens the result scores (the TCO "
        "run's: the plan's); empty when no TCO run has finished.",
    )


@router.get(
    "/plans/{plan_id}/placement",
    **op({200: PlacementOut}, 404),
    summary="Cloud, owned, colocation, edge and hybrid scored for the plan",
)
def placement(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    return plain(facility_services.placement_evaluate(plan=plan))


# --- TCO runs ----------------------------------------------------------------------------------


def _text(value: Any) -> Any:
    """An amount as its exact decimal text (runs store text; a number is written as text)."""
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


# Money of a TCO run: exact decimal text in the run's `currency` (never a float, never USD
# unless `currency` says so). Amounts are named `…_amount`; runs stored with `…_usd` keys
# are renamed on read (planner.facility.tco_results).
Amount = Annotated[str, BeforeValidator(_text)]
IN_CURRENCY = " Decimal text in the run's `currency`."


class TcoPart(Schema):
    """Keeps the keys a newer run adds that these schemas do not name yet."""

    model_config = ConfigDict(extra="allow")


class TcoUnitCosts(TcoPart):
    """What a request and a million tokens cost, amortised (an option's, or one workload's
    share of it)."""

    cost_per_request_amount: Amount | None = Field(
        None, description="Amortised cost per request." + IN_CURRENCY
    )
    cost_per_million_output_tokens_amount: Amount | None = Field(
        None, description="Amortised cost per million output tokens." + IN_CURRENCY
    )
    input_amount_per_million_tokens: Amount | None = Field(
        None, description="The prefill part per million input tokens." + IN_CURRENCY
    )
    output_amount_per_million_tokens: Amount | None = Field(
        None, description="The decode part per million output tokens." + IN_CURRENCY
    )


class TcoWorkloadCostOut(TcoUnitCosts):
    key: str = Field(..., description="The workload's id.")
    name: str = ""
    share: float | None = Field(
        None, description="The workload's share of the option's cost (accelerator-seconds)."
    )


class TcoSiteShareOut(TcoPart):
    key: str
    label: str = ""
    servers: int | None = None
    lines_amount: dict[str, Amount] = Field(
        default_factory=dict, description="Horizon total per cost line at the site." + IN_CURRENCY
    )
    net_cost_amount: Amount | None = Field(
        None, description="The site's cash cost net of terminal value." + IN_CURRENCY
    )
    npv_amount: Amount | None = Field(None, description="The site's NPV of cost." + IN_CURRENCY)
    spare_servers: int | None = None
    burst_region: str | None = None


class TcoOptionOut(TcoUnitCosts):
    key: str
    label: str
    kind: str = ""
    lines_amount: dict[str, list[Amount]] = Field(
        default_factory=dict, description="Monthly cash cost per cost line." + IN_CURRENCY
    )
    monthly_amount: list[Amount] = Field(
        default_factory=list, description="Monthly cash cost." + IN_CURRENCY
    )
    cumulative_amount: list[Amount] = Field(
        default_factory=list, description="Running total of the monthly cost." + IN_CURRENCY
    )
    terminal_value_amount: Amount | None = Field(
        None, description="Book value at the horizon (credited)." + IN_CURRENCY
    )
    net_cost_amount: Amount | None = Field(
        None, description="Cumulative cost net of the terminal value." + IN_CURRENCY
    )
    npv_amount: Amount | None = Field(
        None, description="Net present value of cost at the plan's discount rate." + IN_CURRENCY
    )
    break_even_month: int | None = None
    owned_gpus: int | None = None
    mean_utilisation: float | None = None
    break_even_utilisation: float | None = None
    notes: list[str] = Field(default_factory=list)
    flags: list[str] = Field(
        default_factory=list,
        description="A cloud option: what its listings do not meet (users served from another "
        "area's region, a region not stated).",
    )
    base_curve: list[list[Any]] = Field(
        default_factory=list,
        description="Hybrid: [owned base servers, NPV amount in `currency`] per base size.",
    )
    collapses_to_cloud: bool | None = None
    workloads: list[TcoWorkloadCostOut] | None = Field(
        default_factory=list,
        description="Every workload (`key`: its id) with its own cost per request and per "
        "million input and output tokens: its `share` of the option's cost, by the "
        "accelerator-seconds its prompts and outputs take.",
    )
    sites: list[TcoSiteShareOut] = Field(
        default_factory=list, description="The option's sites and each one's share."
    )


class TcoTornadoBarOut(TcoPart):
    driver: str
    unit: str = ""
    low_input: float | None = None
    high_input: float | None = None
    low_value_amount: Amount = Field(
        ..., description="NPV saved by owning at the driver's low end." + IN_CURRENCY
    )
    high_value_amount: Amount = Field(
        ..., description="NPV saved by owning at the driver's high end." + IN_CURRENCY
    )
    base_value_amount: Amount = Field(..., description="The base case." + IN_CURRENCY)
    span_amount: Amount | None = Field(None, description="|high − low|." + IN_CURRENCY)


class TcoMonteCarloOut(TcoPart):
    site_key: str | None = None
    paths: int | None = None
    seed: int | None = None
    probability_owned_cheaper: float | None = None
    owned_p10_amount: list[Amount] = Field(
        default_factory=list, description="Cumulative owned cost, P10 by month." + IN_CURRENCY
    )
    owned_p50_amount: list[Amount] = Field(default_factory=list, description="P50." + IN_CURRENCY)
    owned_p90_amount: list[Amount] = Field(default_factory=list, description="P90." + IN_CURRENCY)
    cloud_p10_amount: list[Amount] = Field(
        default_factory=list, description="Cumulative cloud on-demand cost, P10." + IN_CURRENCY
    )
    cloud_p50_amount: list[Amount] = Field(default_factory=list, description="P50." + IN_CURRENCY)
    cloud_p90_amount: list[Amount] = Field(default_factory=list, description="P90." + IN_CURRENCY)


class TcoResultsOut(TcoPart):
    currency: str = Field(..., description="The currency of every `…_amount` (the plan's).")
    fx: dict[str, str | None] | None = Field(
        None,
        description="The conversion of the engine's USD: `from` (USD), `to` (`currency`), "
        "`rate` (1 USD in `to`, as applied) and `date` (the rate's; none for USD).",
    )
    months: list[int] = Field(default_factory=list)
    demand_gpu_hours: list[float] = Field(default_factory=list)
    discount_rate: float | None = None
    cheapest: str | None = Field(None, description="The key of the option with the lowest NPV.")
    reference: str | None = Field(
        None,
        description="The key of the break-even reference: the cloud option with the lowest NPV "
        "among the providers allowed (every price model); each `break_even_month` counts "
        "against it.",
    )
    capex_basis: str | None = Field(
        None, description="What the owned capex is: the priced BOM or an estimate."
    )
    options: list[TcoOptionOut] = Field(default_factory=list)
    tornado: list[TcoTornadoBarOut] = Field(default_factory=list)
    monte_carlo: TcoMonteCarloOut | None = None


class TcoRunOut(JobOut):
    id: int
    stale: bool = Field(..., description="The plan's inputs changed since this run.")
    currency: str | None = Field(
        None,
        description="When done: the currency of every amount in results (the plan's), "
        "converted from the engine's USD at results.fx (rate and its date).",
    )
    results: TcoResultsOut | None = Field(
        ...,
        description="When done: cash flows and costs per option. Every amount is named "
        "`…_amount` (`npv_amount`, `net_cost_amount`, `cost_per_request_amount`, "
        "`cost_per_million_output_tokens_amount`, `input_amount_per_million_tokens`, "
        "`lines_amount`, the tornado's `low_value_amount`, the Monte Carlo's "
        "`owned_p50_amount` …) and is decimal text in `currency` (earlier versions of the API "
        "named them `…_usd`, though they held the same amounts in `currency`).",
    )


def _run_out(run: TcoRun, *, stale: bool) -> dict[str, Any]:
    return {
        "id": run.pk,
        **job_out(run, status_url=reverse("api:tco_run", args=[run.plan_id, run.pk])),
        "stale": stale,
        # Runs stored before amounts were converted carry no currency: they are USD.
        "currency": (run.results or {}).get("currency", "USD") if run.is_finished else None,
        "results": run.results if run.is_finished else None,
    }


@router.post(
    "/plans/{plan_id}/tco-runs",
    **op({202: TcoRunOut}, 404),
    summary="Start (or join) the TCO run of the plan's current inputs; poll its status URL",
)
def tco_run_start(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    require_editor(request)
    try:
        run, _ = facility_services.tco_run_request(plan=plan, user=actor(request))
    except facility_services.TcoNotReady as exc:
        return Status(422, {"errors": {"__all__": [str(exc)]}})
    run.refresh_from_db()
    return Status(202, _run_out(run, stale=False))


@router.get(
    "/plans/{plan_id}/tco-runs/{run_id}",
    **op({200: TcoRunOut}, 404),
    url_name="tco_run",
    summary="A TCO run's status, progress and, when done, its results per option",
)
def tco_run_read(request, plan_id: Id, run_id: Id):
    plan = plan_get(request, plan_id)
    run = TcoRun.objects.get(plan=plan, pk=run_id)
    jobs.job_expire_if_lost(run)
    stale = facility_services.tco_state(plan=plan).of_run(run).stale
    return _run_out(run, stale=stale)
