"""A plan turned into one JSON document: everything a published revision shows.

:func:`plan_snapshot` reads the plan, its workloads and their chosen configurations, and —
through their own selectors and services — the facility (sites, checks, placement, TCO) and
sourcing (BOM, landed cost, purchase orders, timeline) parts. Those apps are still growing,
so each section is read defensively: a part that cannot be read is recorded as
``{"available": false, "reason": ...}`` and the rest of the snapshot still builds.

Money is kept exact as ``{"amount": "<decimal string>", "currency": "EUR"}``; dates as ISO
strings. The result is JSON-serialisable and canonical (``snapshot_json``) so that its hash
identifies it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.utils import timezone

from planner import cost_target, sizing
from planner import selectors as plan_selectors
from planner.engine.errors import EngineInputError
from planner.engine.sweep import SweepCandidate
from planner.facility import selectors as fsel
from planner.facility import services as fsvc
from planner.facility.models import TcoRun, TcoStatus
from planner.facility.services import TcoNotReady
from planner.labels import workload_stack_label
from planner.models import OperationsPlan, Plan, Workload
from planner.sharing import checklist
from planner.sharing.models import SNAPSHOT_SCHEMA_VERSION, ChecklistSignOff
from sourcing import selectors as ssel
from sourcing import services as ssvc
from sourcing.quote import quote_sell
from sourcing.services import SourcingError

logger = logging.getLogger(__name__)


class SnapshotError(Exception):
    """A plan that cannot be published yet; the message says why."""


# --- Small converters ------------------------------------------------------------------------


def _iso(value: date | datetime | None) -> str | None:
    return value.isoformat() if value else None


def _dec(value: Decimal | float | int | None) -> str | None:
    return None if value is None else str(value)


def _money(money) -> dict[str, str] | None:
    """An engine Money or ConvertedAmount as ``{"amount", "currency"}`` (exact)."""
    if money is None:
        return None
    return {"amount": str(money.amount), "currency": money.currency}


def _unavailable(reason: str, error: Exception | None = None) -> dict[str, Any]:
    """A section that could not be computed: a fixed reason, and the domain error's own
    sentence and kind when an expected error (:func:`domain_errors`) was the cause."""
    section: dict[str, Any] = {"available": False, "reason": reason}
    if error is not None:
        section["problem"] = str(error)
        section["problem_kind"] = type(error).__name__
    return section


def domain_errors() -> tuple[type[Exception], ...]:
    """The errors a section may fail with and still be published as "unavailable".

    The engine's input errors (catalog gaps included) and the sections' own documented
    errors; anything else is a bug and fails the publish.
    """
    return (EngineInputError, SnapshotError, TcoNotReady, SourcingError)


def _jsonable(value: Any) -> Any:
    """Decimals, dates and tuples made JSON-safe (for the engine's summaries)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, float) and value != value:  # NaN
        return None
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return None
    return value


def snapshot_json(snapshot: dict[str, Any]) -> str:
    """The canonical JSON text of a snapshot (sorted keys, no spaces)."""
    return json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def snapshot_hash(snapshot: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a snapshot."""
    return hashlib.sha256(snapshot_json(snapshot).encode()).hexdigest()


# What differs between two publications of the same plan content: the revision's number,
# when it was generated, and the quote's number and dates (which follow from those).
PUBLICATION_KEYS = ("revision_number", "generated_at")
QUOTE_PUBLICATION_KEYS = ("number", "date", "valid_until")


def snapshot_content_hash(snapshot: dict[str, Any]) -> str:
    """SHA-256 of a snapshot without its publication details: equal for equal plan content."""
    content = {k: v for k, v in snapshot.items() if k not in PUBLICATION_KEYS}
    if isinstance(content.get("quote"), dict):
        quote = content["quote"]
        content["quote"] = {k: v for k, v in quote.items() if k not in QUOTE_PUBLICATION_KEYS}
    return snapshot_hash(content)


# --- Workloads and sizing ---------------------------------------------------------------------


def _workload(workload) -> dict[str, Any]:
    chosen = None
    memory = None
    autoscaling = None
    by_hour: list[int] = []
    if workload.choice_serves:  # a choice that no longer serves the inputs is not a plan
        chosen = {
            "accelerator_slug": workload.chosen_accelerator.slug,
            "accelerator_name": workload.chosen_accelerator.name,
            "server_name": str(workload.chosen_server) if workload.chosen_server else "",
            "precision": workload.chosen_precision or workload.precision,
            "tensor_parallel": workload.chosen_tensor_parallel,
            "serving": workload.chosen_serving or "aggregated",
            "prefill_tensor_parallel": workload.chosen_prefill_tensor_parallel,
            "prefill_replicas": workload.chosen_prefill_replicas,
            "replicas": workload.chosen_replicas,
            "accelerators": workload.chosen_accelerators,
            "servers": workload.chosen_servers,
            "chosen_at": _iso(workload.chosen_at),
            "summary": _jsonable(workload.chosen_summary or {}),
        }
        memory, autoscaling, by_hour = _sizing_detail(workload)
    return {
        "id": workload.pk,
        "name": workload.name,
        "kind": workload.kind,
        "kind_label": workload.get_kind_display(),
        "interactive": workload.is_interactive,
        "model_slug": workload.model.slug,
        "model_name": workload.model.name,
        "precision": workload.precision,
        # What it is sized for, as every page names it (older snapshots: absent).
        "serving_stack": workload_stack_label(workload),
        "input_tokens_mean": workload.input_tokens_mean,
        "input_tokens_p95": workload.input_tokens_p95,
        "output_tokens_mean": workload.output_tokens_mean,
        "output_tokens_p95": workload.output_tokens_p95,
        "percentile": workload.percentile,
        "ttft_ms": workload.ttft_ms,
        "tpot_ms": workload.tpot_ms,
        "e2e_s": workload.e2e_s,
        "peak_concurrency": workload.peak_concurrency,
        "peak_requests_per_s": workload.peak_requests_per_s,
        "headroom_pct": workload.headroom_pct,
        # In the plan's currency (older snapshots: cost_per_request_target_usd, in USD).
        **_cost_target(workload),
        "n_plus_one": workload.n_plus_one,
        "region_shares": _jsonable(workload.region_shares or {}),
        "daily_profile": _jsonable(workload.daily_profile or []),
        "chosen": chosen,
        "memory": memory,
        "autoscaling": autoscaling,
        "replicas_by_hour": by_hour,
    }


def _sizing_detail(workload) -> tuple[dict | None, dict | None, list[int]]:
    """Memory footprint, autoscaling recommendation and replicas per hour of the choice."""

    summary = workload.chosen_summary or {}
    try:
        fields = set(SweepCandidate.__dataclass_fields__)
        candidate = SweepCandidate(**{k: v for k, v in summary.items() if k in fields})
        detail = sizing.candidate_detail(workload, candidate)
    except (TypeError, *domain_errors()) as exc:  # the summary may predate a field change
        logger.warning("sizing detail of workload %s unavailable: %s", workload.pk, exc)
        return None, None, []
    memory = {
        "weights_gb_per_gpu": round(detail.weights_gb_per_gpu, 3),
        "kv_budget_gb_per_gpu": round(detail.kv_budget_gb_per_gpu, 3),
        "activation_gb_per_gpu": round(detail.activation_gb_per_gpu, 3),
        "reserve_gb_per_gpu": round(detail.reserve_gb_per_gpu, 3),
        "capacity_gb_per_gpu": round(detail.capacity_gb_per_gpu, 3),
        "kv_cache_bytes_per_token": round(detail.kv_cache_bytes_per_token, 1),
        "max_concurrent_sequences": detail.max_concurrent_sequences,
        "bottleneck": detail.bottleneck,
    }
    autoscaling = None
    if detail.autoscaling is not None:
        a = detail.autoscaling
        autoscaling = {
            "primary_signal": a.primary_signal,
            "secondary_signal": a.secondary_signal,
            "scale_up_kv_usage": a.scale_up_kv_usage,
            "scale_up_queue_depth": a.scale_up_queue_depth,
            "scale_down_kv_usage": a.scale_down_kv_usage,
            "min_replicas": a.min_replicas,
            "max_replicas": a.max_replicas,
            "rationale": _jsonable(a.rationale),
            "cold_start_s": round(a.cold_start.total_s, 1) if a.cold_start else None,
            "spike_headroom_pct": (
                round(a.cold_start.spike_headroom_pct, 2) if a.cold_start else None
            ),
        }
    if detail.autoscaling is not None:  # the bounds above are this list's min and max
        by_hour = [int(v) for v in detail.autoscaling.replicas_by_hour]
    else:
        try:
            by_hour = [int(v) for v in sizing.replicas_by_hour(workload, candidate)]
        except domain_errors():  # a display extra
            by_hour = []
    return memory, autoscaling, by_hour


# --- Facility, placement, TCO ----------------------------------------------------------------


def _facility(plan: Plan) -> tuple[dict, dict, dict]:
    try:
        sites = _sites(plan)
    except domain_errors() as exc:
        logger.warning("snapshot: sites of plan %s: %s", plan.pk, exc)
        sites = _unavailable("The sites could not be checked.", exc)
    try:
        placement = _placement(plan)
    except domain_errors() as exc:
        logger.warning("snapshot: placement of plan %s: %s", plan.pk, exc)
        placement = _unavailable("The placement could not be decided.", exc)
    try:
        tco = _tco(plan)
    except domain_errors() as exc:
        logger.warning("snapshot: TCO of plan %s: %s", plan.pk, exc)
        tco = _unavailable("The TCO could not be read.", exc)
    return sites, placement, tco


def _deployment(plan: Plan) -> dict[str, Any]:
    """The deployment's totals from the one summary every consultant page shows."""

    summary = fsvc.deployment_summary(plan=plan)
    deployment = summary.deployment
    if deployment is None or not summary.servers:
        return {"available": False, "reason": summary.catalog_gap or "No servers sized yet."}
    return {
        "available": True,
        "servers": summary.servers,
        "accelerators_used": deployment.accelerators_used,
        "accelerators_installed": deployment.accelerators_installed,
        "it_load_kw": round(summary.it_load_kw, 1),  # the sites' loads, network gear included
        "racks": summary.racks,
        "sites": [
            {"name": name, "servers": servers, "racks": racks, "it_load_kw": round(kw, 1)}
            for name, servers, racks, kw in summary.sites
        ],
    }


def _sites(plan: Plan) -> dict[str, Any]:

    deployment = fsvc.plan_deployment(plan=plan)
    rows = []
    for site in fsel.site_list(plan=plan):
        evaluation = fsvc.site_evaluate(plan=plan, site=site, deployment=deployment)
        report = evaluation.report
        pool = deployment.site_pool(site)
        rows.append(
            {
                "id": site.pk,
                "name": site.name,
                "deployed_servers": pool.servers if pool else 0,  # the pooled deployment's
                "kind": site.kind,
                "kind_label": site.get_kind_display(),
                "country": site.country,
                "racks_available": site.racks_available,
                "site_it_capacity_kw": _dec(site.site_it_capacity_kw),
                "cooling_method": site.get_cooling_method_display(),
                "pue": _dec(site.pue),
                # The one power-ready date: the first day the site carries its servers'
                # load, planned upgrades included (planner.engine.facility), as the facility
                # check and the timeline read it; not the base capacity's energising date.
                "power_ready_date": _iso(report.power_ready_on) if report else None,
                "upgrades": [
                    {"ready_date": _iso(u.ready_date), "added_kw": _dec(u.added_kw), "note": u.note}
                    for u in site.upgrades.all()
                ],
                "status": evaluation.status,
                "checks": evaluation.check_rows,
                "go_live": _iso(evaluation.go_live),
                "it_load_kw": round(report.it_load_kw, 2) if report else None,
                "racks_needed": report.racks_needed if report else None,
                "notes": list(evaluation.notes),
                "error": evaluation.error,
            }
        )
    return {"available": True, "sites": rows}


def _placement(plan: Plan) -> dict[str, Any]:

    decision = fsel.placement_decision_get(plan=plan)
    return {
        "available": True,
        "chosen_kind": decision.chosen_kind,
        "chosen_key": decision.chosen_key,
        "chosen_label": decision.chosen_label,
        "reason": decision.reason,
        "decided_at": _iso(decision.decided_at),
    }


def _tco(plan: Plan) -> dict[str, Any]:

    run = (
        TcoRun.objects.filter(plan=plan, status=TcoStatus.SUCCEEDED)
        .order_by("-requested_at", "-pk")
        .first()
    )
    if run is None or not run.results:
        return _unavailable("No finished TCO run.")
    try:
        stale = fsvc.tco_state(plan=plan).of_run(run).stale
    except domain_errors():  # staleness is a label, not a reason to fail
        stale = False
    results = run.results
    keep = (
        "key", "label", "kind", "net_cost_amount", "npv_amount", "break_even_month",
        "cost_per_request_amount", "cost_per_million_output_tokens_amount", "cumulative_amount",
        "monthly_amount", "owned_gpus", "mean_utilisation", "notes", "terminal_value_amount",
        "input_amount_per_million_tokens", "output_amount_per_million_tokens", "sites", "workloads",
    )  # fmt: skip
    options = [{k: o.get(k) for k in keep} for o in results.get("options", [])]
    for option, source in zip(options, results.get("options", []), strict=False):
        # Monthly cost per line of the option (capex, power, ...) for the stacked chart.
        option["lines_amount"] = source.get("lines_amount", {})
    return {
        "available": True,
        "run_id": run.pk,
        "finished_at": _iso(run.finished_at),
        "stale": stale,
        "currency": results.get("currency", "USD"),
        "fx": results.get("fx"),
        "months": results.get("months", []),
        "discount_rate": results.get("discount_rate"),
        "cheapest": results.get("cheapest"),
        "reference": results.get("reference"),
        "options": options,
        "tornado": results.get("tornado", []),
        "monte_carlo": results.get("monte_carlo", {}),
        "basis": _jsonable(run.basis or []),
    }


def _cost_target(workload: Workload) -> dict[str, Any]:

    target = cost_target.cost_target_in_plan_currency(workload)
    return {
        "cost_per_request_target": _dec(target.amount),
        "cost_per_request_target_currency": workload.plan.currency if target.amount else "",
        "cost_per_request_target_problem": target.problem,
    }


def plan_tco_and_placement(plan: Plan) -> tuple[dict[str, Any], dict[str, Any]]:
    """The snapshot's TCO and placement sections alone (for a workload's cost target)."""
    try:
        tco = _jsonable(_tco(plan))
    except Exception as exc:
        logger.exception("TCO of plan %s", plan.pk)
        tco = _unavailable(f"TCO could not be read: {exc}")
    try:
        placement = _placement(plan)
    except Exception as exc:
        logger.exception("placement of plan %s", plan.pk)
        placement = _unavailable(f"Placement could not be read: {exc}")
    return tco, placement


# --- Sourcing ----------------------------------------------------------------------------------


def _sourcing(plan: Plan) -> tuple[dict, dict, dict]:
    try:
        report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
        bom = _bom(plan, report)
    except domain_errors() as exc:
        logger.warning("snapshot: landed cost of plan %s: %s", plan.pk, exc)
        return (
            _unavailable("The bill of materials could not be priced.", exc),
            _unavailable("No timeline without a priced BOM."),
            _orders(plan),
        )
    try:
        timeline = _timeline(plan, report)
    except domain_errors() as exc:
        logger.warning("snapshot: timeline of plan %s: %s", plan.pk, exc)
        timeline = _unavailable("The timeline could not be computed.", exc)
    return bom, timeline, _orders(plan)


def _bom(plan: Plan, report) -> dict[str, Any]:

    settings = ssvc.sourcing_settings_get(plan=plan)
    lines = []
    by_currency: dict[str, Decimal] = defaultdict(Decimal)
    valid_until: list[date] = []
    for cost in report.lines:
        line, offer, landed = cost.line, cost.chosen, cost.landed
        row: dict[str, Any] = {
            "position": line.position,
            "part_key": line.part_key,
            # a support line says what its price buys (its term), as the TCO counts it
            "description": line.description
            + (f" ({offer.term_words})" if offer and offer.term_words else ""),
            "category": line.category,
            "quantity": line.quantity,
            "service": line.service,
            "hs_code": line.hs_code,
            "reason": line.reason,
            "supplier": offer.supplier.name if offer else "",
            "supplier_country": offer.supplier.country if offer else "",
            "origin_country": offer.origin_country if offer else "",
            "incoterm": offer.incoterm if offer else "",
            "lead_time_days": offer.lead_time_days if offer else None,
            "offer_valid_until": _iso(offer.valid_until) if offer else None,
            "status": cost.status,
            "problem": cost.problem,
            "unit_price": None,
            "quantity_ordered": line.quantity,
            "goods_original": None,
            "goods": None,
            "freight": None,
            "insurance": None,
            "brokerage": None,
            "duty": None,
            "vat": None,
            "vat_recoverable": None,
            "landed_net": None,
            "landed_gross": None,
            "ship_from": (offer.ship_from_country or offer.supplier.country) if offer else "",
            "supply_rule": "",
            "supply_rule_note": "",
            "reverse_charge_vat": None,
            "vat_not_recoverable": None,
            "measures_to_confirm": [],
            "measures_decided": [],
            "priced": False,
            "site": line.site.name if line.site_id else "",
            "destination": cost.destination,
        }
        if offer is not None:
            valid_until.append(offer.valid_until)
        if landed is not None:
            goods_original = landed.unit_price.amount * landed.quantity_ordered
            row.update(
                unit_price=_money(landed.unit_price),
                quantity_ordered=landed.quantity_ordered,
                goods_original={
                    "amount": str(goods_original),
                    "currency": landed.unit_price.currency,
                },
                goods=_money(landed.goods),
                freight=_money(landed.freight),
                insurance=_money(landed.insurance),
                brokerage=_money(landed.brokerage),
                duty=_money(landed.duty),
                vat=_money(landed.vat),
                vat_recoverable=landed.vat_recoverable,
                landed_net=_money(landed.landed_cost_net),
                landed_gross=_money(landed.landed_cost_gross),
                ship_from=landed.ship_from,
                supply_rule=landed.supply_rule,
                supply_rule_note=landed.supply_rule_note,
                reverse_charge_vat=_money(landed.reverse_charge_vat),
                vat_not_recoverable=_money(landed.vat_not_recovered),
                measures_to_confirm=[
                    {
                        "name": m.name,
                        "pct": str(m.pct),
                        "condition": m.condition,
                        "exposure": _money(m.exposure),
                    }
                    for m in landed.measures_to_confirm
                ],
                measures_decided=[
                    {
                        "name": m.name,
                        "pct": str(m.pct),
                        "condition": m.condition,
                        "applies": m.applies,
                        "reason": m.reason,
                        "duty": _money(m.duty),
                    }
                    for m in landed.measures_decided
                ],
                priced=landed.priced,
            )
            by_currency[landed.unit_price.currency] += goods_original
        elif cost.service_cost is not None and offer is not None:
            source = cost.service_cost.source
            unit = source.amount / line.quantity if line.quantity else source.amount
            row.update(
                unit_price={"amount": str(unit), "currency": source.currency},
                goods_original=_money(source),
                goods=_money(cost.service_cost),
                landed_net=_money(cost.service_cost),
                landed_gross=_money(cost.service_cost),
                supply_rule="service",
                priced=True,
            )
            by_currency[source.currency] += source.amount
        lines.append(row)
    ccy = plan.currency
    option = ssvc.bom_option_shown(plan=plan)
    totals = {
        name: Decimal(0)
        for name in ("goods", "freight", "insurance", "brokerage", "duty", "vat", "vat_recoverable")
    }
    shipments = []
    for shipment in report.shipments:
        result = shipment.result
        shipments.append(
            {
                "key": shipment.key,
                "supplier": shipment.supplier.name,
                "incoterm": shipment.incoterm,
                "cross_border": shipment.cross_border,
                "complete": bool(result and result.complete),
                "error": shipment.error,
                "landed_net": _money(result.landed_cost_net) if result else None,
            }
        )
        if result:
            for name in ("goods", "freight", "insurance", "brokerage", "duty", "vat"):
                totals[name] += getattr(result, name).amount + (
                    result.inland_freight.amount if name == "freight" else 0
                )
            totals["vat_recoverable"] += result.vat_recoverable.amount
    for cost in report.lines:
        if cost.service_cost is not None:
            totals["goods"] += cost.service_cost.amount
    return {
        "available": True,
        "currency": ccy,
        "as_of": _iso(report.as_of),
        "destination": report.destination,
        "complete": report.complete,
        "unpriced_lines": report.unpriced_lines,
        "problems": list(report.problems),
        "lines": lines,
        "shipments": shipments,
        "totals_by_currency": [
            {"currency": c, "amount": str(a)} for c, a in sorted(by_currency.items())
        ],
        "totals": {k: {"amount": str(v), "currency": ccy} for k, v in totals.items()},
        "total_net": _money(report.total_net),
        "total_gross": _money(report.total_gross),
        "vat_not_recoverable": _money(report.vat_not_recoverable),
        "vat_recovery_pct": str(report.vat_recovery_pct),
        "exposure_to_confirm": _money(report.exposure_to_confirm),
        "measures_to_confirm": report.measures_to_confirm,
        "offers_valid_until": _iso(min(valid_until)) if valid_until else None,
        "sites": _bom_sites(plan, report),
        "spares_mode": settings.spares_mode,
        "spares_mode_label": settings.get_spares_mode_display(),
        "spares_pct": _dec(settings.spares_pct),
        "shipping_mode": settings.shipping_mode,
        # what the BOM buys: the chosen option's hardware (none for the public cloud)
        "option_text": option["text"],
        "buys_hardware": option["buys_hardware"],
    }


def _bom_sites(plan: Plan, report) -> list[dict[str, Any]]:
    """Each site's servers, racks and landed cost into its own country."""

    groups = ssvc.bom_site_groups(
        plan=plan, items=[c for c in report.lines], line_of=lambda c: c.line
    )
    counts = {g.key: g.subtotal for g in groups}
    out = []
    for site in report.sites:
        t, sub = site.totals, counts.get(site.key)
        out.append(
            {
                "site": site.label,
                "destination": site.destination,
                "servers": sub.servers if sub else 0,
                "racks": sub.racks if sub else 0,
                "complete": bool(t and t.complete),
                "unpriced_lines": t.unpriced_lines if t else 0,
                "total_net": _money(t.net) if t else None,
                "total_gross": _money(t.gross) if t else None,
                "vat_recoverable": _money(t.vat_recoverable) if t else None,
                "reverse_charge_vat": _money(t.reverse_charge_vat) if t else None,
            }
        )
    return out


def _timeline(plan: Plan, report) -> dict[str, Any]:

    result = ssvc.timeline_report(plan=plan, organisation=plan.organisation, report=report)
    return result.section(_supplier_scrubber(plan))


def _supplier_scrubber(plan: Plan):
    """A function taking supplier names out of a timeline text (the client sees the timeline;
    who supplies what, at which price, is the consultancy's internal cost sheet only)."""

    names = sorted(
        {s.name for s in ssel.supplier_list(organisation=plan.organisation) if s.name.strip()},
        key=len,
        reverse=True,  # the longest first: "Acme GmbH" before "Acme"
    )
    if not names:
        return lambda text: text
    pattern = re.compile(
        r"(?: from )?(?:" + "|".join(re.escape(n) for n in names) + ")", re.IGNORECASE
    )

    def clean(text: str) -> str:
        return pattern.sub(
            lambda m: "" if m.group(0).startswith(" from ") else "the supplier", text
        )

    return clean


def _orders(plan: Plan) -> dict[str, Any]:
    try:
        rows = []
        for order in ssel.purchase_order_list(plan=plan):
            rows.append(
                {
                    "reference": order.reference,
                    "supplier": order.supplier.name,
                    "supplier_country": order.supplier.country,
                    "status": order.get_status_display(),
                    "destination_country": order.destination_country,
                    "cross_border": ssvc.order_is_cross_border(order),
                    "logistics_owner": order.logistics_owner,
                    "delivered_expected": _iso(order.delivered_expected),
                }
            )
        return {"available": True, "orders": rows}
    except domain_errors() as exc:
        logger.warning("snapshot: purchase orders of plan %s: %s", plan.pk, exc)
        return _unavailable("The purchase orders could not be read.", exc)


def _operations(plan: Plan) -> dict[str, Any]:

    ops = OperationsPlan.objects.filter(plan=plan).first()
    if ops is None:
        return _unavailable("The operations & security section is not filled in yet.")
    return {"available": True, "answers": ops.answers(), "notes": ops.notes}


# --- Checklist and quote -----------------------------------------------------------------------


def sign_offs_current(*, plan: Plan) -> dict[str, dict[str, Any]]:
    """The standing sign-off of each checklist item (latest record; withdrawn ones drop)."""
    current: dict[str, dict[str, Any]] = {}
    for row in ChecklistSignOff.objects.filter(plan=plan).order_by("created_at", "pk"):
        if row.withdrawn:
            current.pop(row.item_key, None)
        else:
            current[row.item_key] = {
                "name": row.signed_by_name,
                "date": _iso(row.signed_on),
                "note": row.note,
            }
    return current


def _quote(plan: Plan, number: int, today: date, bom: dict[str, Any]) -> dict[str, Any]:
    organisation = plan.organisation
    sell = _quote_sell(plan, bom)  # sell prices, fees, payment terms (sourcing.quote)
    days = sell.get("validity_days") or organisation.quote_validity_days
    valid_until = today + timedelta(days=days)
    offers_until = bom.get("offers_valid_until")
    if offers_until:
        valid_until = min(valid_until, date.fromisoformat(offers_until))
    return {
        "number": f"Q-{plan.organisation.slug.upper()[:8]}-{plan.pk:04d}-R{number}",
        "date": today.isoformat(),
        "valid_until": valid_until.isoformat(),
        "terms": organisation.quote_terms_list,
        "sell": sell,
    }


def _quote_sell(plan: Plan, bom: dict[str, Any]) -> dict[str, Any]:

    return quote_sell(plan=plan, bom=bom)


# --- The whole plan ------------------------------------------------------------------------------


def plan_snapshot(*, plan: Plan, number: int | None = None, today: date | None = None) -> dict:
    """Everything the plan shows today, as one JSON-safe dict (schema ``SNAPSHOT_SCHEMA_VERSION``).

    Args:
        plan: A plan fetched through the tenant selector.
        number: The revision number it will be published as (for the quote number); ``None``
            for a live preview.
        today: The publication date (default: today in the site's time zone).
    """
    today = today or timezone.localdate()
    workloads = [_workload(w) for w in plan_selectors.workload_list(plan=plan)]
    sites, placement, tco = _facility(plan)
    bom, timeline, orders = _sourcing(plan)
    client = plan.client
    snapshot: dict[str, Any] = {
        "schema_version": SNAPSHOT_SCHEMA_VERSION,
        "revision_number": number,
        "generated_at": timezone.now().isoformat(),
        "organisation": {"name": plan.organisation.name, "slug": plan.organisation.slug},
        "plan": {
            "id": plan.pk,
            "name": plan.name,
            "currency": plan.currency,
            "target_go_live": _iso(plan.target_go_live),
            "notes": plan.notes,
            "client": {
                "name": client.name,
                "country": client.country,
                "contact_name": client.contact_name,
                "contact_email": client.contact_email,
                "vat_recovery": client.vat_recovery,
                "vat_recovery_pct": str(client.vat_recovery_pct),
                "vat_treatment": client.vat_treatment,
            },
        },
        "workloads": workloads,
        "sites": sites,
        "placement": placement,
        "tco": tco,
        "bom": bom,
        "timeline": timeline,
        "purchase_orders": orders,
        "deployment": _deployment(plan),
        "operations": _operations(plan),
        "sign_offs": sign_offs_current(plan=plan),
        "quote": _quote(plan, number or 0, today, bom if bom.get("available") else {}),
    }
    snapshot = _jsonable(snapshot)
    snapshot["checklist"] = [item.as_dict() for item in checklist.evaluate(snapshot)]
    return snapshot
