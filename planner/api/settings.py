"""A plan's settings over the API: TCO inputs, placement settings and choice, each workload's
split over the sites, and the quote's markups, terms and fees.

Each write binds the page's form (``TcoSettingsForm``, ``PlacementSettingsForm``,
``PlacementChoiceForm``, ``SiteSplitForm``, ``QuoteSettingsForm``, ``QuoteFeeForm``) and saves
through the page's service, so the messages, the defaults and the stale-edit rules (409 on an
outdated ``version``) are the pages' own. The pages' per-row form fields (``residency_12``,
``share_7``, ``category_Network``) are maps in JSON, keyed by the row's id or name.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Annotated, Any

from django.db import transaction
from ninja import Field, Router, Schema, Status

from planner import selectors
from planner.api.common import (
    FormErrors,
    InSchema,
    Versioned,
    bound_form,
    op,
    plan_get,
    posted_value,
    require_editor,
    sent_fields,
)
from planner.api.contract import NON_BLANK_PATTERN, Number, whole_number
from planner.api.plans import Finite, Id, actor, workload_get
from planner.engine import limits
from planner.facility import selectors as facility_selectors
from planner.facility import services as facility_services
from planner.facility.deployment import physical_sites
from planner.facility.forms import (
    TCO_DEFAULT_SOURCES,
    PlacementChoiceForm,
    PlacementSettingsForm,
    SiteSplitForm,
    TcoSettingsForm,
)
from planner.facility.models import PlacementDecision, WorkloadSiteSplit
from sourcing import quote
from sourcing import selectors as sourcing_selectors
from sourcing.models import QuoteFee
from sourcing.quote_forms import QuoteFeeForm, QuoteSettingsForm

router = Router(tags=["settings"])

MAP_ROWS = 500  # entries of a map in a body (sites, workloads, BOM categories or lines)


def _number(value: Any) -> Any:
    return float(value) if isinstance(value, Decimal) else value


def _bad_keys(field: str, keys, known, message: str) -> dict[str, list[str]]:
    return {f"{field}.{k}": [message.format(key=k)] for k in keys if str(k) not in known}


def _form_errors(errors: dict[str, list[str]], prefixes: dict[str, str]) -> dict[str, list[str]]:
    """The form's per-row field names (``share_7``) as the API's (``shares.7``)."""
    out: dict[str, list[str]] = {}
    for name, messages in errors.items():
        for prefix, field in prefixes.items():
            if name == prefix:  # a renamed field
                name = field
                break
            if prefix.endswith("_") and name.startswith(prefix):  # one per row
                name = f"{field}.{name[len(prefix) :]}"
                break
        out.setdefault(name, []).extend(messages)
    return out


# --- TCO settings -----------------------------------------------------------------------------

TCO_FIELDS = list(TcoSettingsForm._meta.fields)


class TcoSettingsIn(Versioned):
    contract_form = TcoSettingsForm
    horizon_months: int | None = None
    server_price_usd: Finite | None = None
    network_usd: Finite | None = None
    storage_usd: Finite | None = None
    install_usd: Finite | None = None
    shipping_and_duties_usd: Finite | None = None
    maintenance_pct_per_year: Finite | None = None
    spares_pct: Finite | None = None
    residual_pct: Finite | None = None
    lifetime_months: int | None = None
    idle_power_pct: Finite | None = None
    cost_of_capital_pct: Finite | None = None
    on_demand_usd_per_gpu_h: Finite | None = None
    commit_1yr_discount_pct: Finite | None = None
    commit_3yr_discount_pct: Finite | None = None
    spot_discount_pct: Finite | None = None
    spot_share_pct: Finite | None = None
    annual_cloud_price_decline_pct: Finite | None = None
    growth_pct_per_month: Finite | None = None
    cloud_providers: list[Annotated[str, Field(max_length=120)]] | None = Field(
        None,
        max_length=50,
        description="Providers of the catalog's cloud offerings; empty compares every one.",
    )
    cloud_keeps_spares: bool | None = None


# The TCO's price inputs are entered in USD, as its form says (the engine computes in USD and
# converts the run's results into the plan's currency): their names say so truly.
_USD_INPUT = "USD, like the catalog's prices; a run's results are in the plan's currency."


class TcoSettingsOut(Schema):
    version: int
    horizon_months: int
    server_price_usd: float | None = Field(..., description="Price of one server, " + _USD_INPUT)
    network_usd: float | None = Field(..., description="Network capex, " + _USD_INPUT)
    storage_usd: float = Field(..., description="Storage capex, " + _USD_INPUT)
    install_usd: float = Field(..., description="Installation, " + _USD_INPUT)
    shipping_and_duties_usd: float = Field(
        ..., description="Freight, insurance and duties, " + _USD_INPUT
    )
    maintenance_pct_per_year: float | None
    spares_pct: float
    residual_pct: float
    lifetime_months: int
    idle_power_pct: float
    cost_of_capital_pct: float
    on_demand_usd_per_gpu_h: float | None = Field(
        ..., description="On-demand price per accelerator-hour, " + _USD_INPUT
    )
    commit_1yr_discount_pct: float | None
    commit_3yr_discount_pct: float | None
    spot_discount_pct: float
    spot_share_pct: float
    annual_cloud_price_decline_pct: float
    growth_pct_per_month: float
    cloud_providers: list[str]
    cloud_keeps_spares: bool
    available_cloud_providers: list[str] = Field(
        ..., description="What `cloud_providers` may name (the catalog's cloud providers)."
    )
    defaults: dict[str, str] = Field(
        ..., description="Per field: its default (null/empty: what it falls back to) and source."
    )


def tco_settings_out(settings) -> dict[str, Any]:
    form = TcoSettingsForm(instance=settings)
    out = {name: _number(getattr(settings, name)) for name in TCO_FIELDS}
    out["cloud_providers"] = [str(p) for p in (settings.cloud_providers or [])]
    out["version"] = settings.version
    out["available_cloud_providers"] = [str(k) for k, _ in form.fields["cloud_providers"].choices]
    out["defaults"] = dict(TCO_DEFAULT_SOURCES)
    return out


@router.get(
    "/plans/{plan_id}/tco-settings",
    **op({200: TcoSettingsOut}, 404),
    summary="The TCO inputs sizing cannot tell (horizon, prices, discounts, cloud providers …)",
)
def tco_settings_read(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    return tco_settings_out(facility_selectors.tco_settings_get(plan=plan))


@router.patch(
    "/plans/{plan_id}/tco-settings",
    **op({200: TcoSettingsOut}, 404, 409),
    summary="Change TCO inputs (only those sent; null clears a field that may be blank)",
)
def tco_settings_update(request, plan_id: Id, payload: TcoSettingsIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    sent = sent_fields(payload)
    data: dict[str, Any] = {
        name: posted_value(value) for name, value in sent.items() if name != "cloud_providers"
    }
    with transaction.atomic():
        settings = facility_services.tco_settings_for_edit(plan=plan)
        # A checkbox list: posted as a list (the stored one unless sent).
        providers = sent.get("cloud_providers", settings.cloud_providers) or []
        data["cloud_providers"] = [str(p) for p in providers]
        try:
            form = bound_form(
                lambda data=None, *, instance: TcoSettingsForm(data, instance=instance),
                sent=data,
                version=payload.version,
                instance=settings,
            )
        except FormErrors as exc:
            transaction.set_rollback(True)  # a refused edit stores nothing
            return Status(exc.status, {"errors": exc.errors})
        saved = facility_services.tco_settings_save(
            plan=plan, settings=form.save(commit=False), changed=form.has_changed()
        )
    return Status(200, tco_settings_out(saved))


# --- Placement settings and choice ------------------------------------------------------------


class PlacementSettingsIn(Versioned):
    contract_form = PlacementSettingsForm
    network_share_pct: int | None = Field(
        None, description="Share of the tightest TTFT target the network round trip may take."
    )
    control_requirement: int | None = Field(None, description="0 (none) to 5 (full control).")
    residency: dict[str, Annotated[str, Field(max_length=200)] | None] | None = Field(
        None,
        max_length=MAP_ROWS,
        description="Workload id → where it may run ('EU, CH'; empty or null: anywhere). "
        "Workloads not sent keep their rule.",
    )


class PlacementChoiceIn(Versioned):
    contract_form = PlacementChoiceForm
    contract_names = {"key": "option"}
    key: str = Field(..., max_length=200, description="An option's key from GET .../placement.")
    reason: str = Field(..., max_length=20_000, description="Why; printed in the plan report.")


class PlacementChosenOut(Schema):
    key: str
    kind: str
    label: str
    reason: str
    decided_at: str | None
    scores: dict[str, Any] = Field(..., description="The comparison as it stood when chosen.")


class PlacementSettingsOut(Schema):
    version: int
    network_share_pct: int
    control_requirement: int
    residency: dict[str, str] = Field(
        ..., description="Workload id → where it may run; empty: anywhere."
    )
    chosen: PlacementChosenOut | None


def placement_out(plan, decision: PlacementDecision) -> dict[str, Any]:
    rules = facility_selectors.residency_rules(plan=plan)
    chosen = None
    if decision.chosen_key:
        chosen = {
            "key": decision.chosen_key,
            "kind": decision.chosen_kind,
            "label": decision.chosen_label,
            "reason": decision.reason,
            "decided_at": decision.decided_at.isoformat() if decision.decided_at else None,
            "scores": decision.scores or {},
        }
    return {
        "version": decision.version,
        "network_share_pct": decision.network_share_pct,
        "control_requirement": decision.control_requirement,
        "residency": {
            str(w.pk): rules[w.pk].allowed if w.pk in rules else ""
            for w in selectors.workload_list(plan=plan)
        },
        "chosen": chosen,
    }


def _placement_settings_form(plan, workloads, rules):
    def factory(data=None, *, instance):
        initial = {
            "network_share_pct": instance.network_share_pct,
            "control_requirement": instance.control_requirement,
        }
        return PlacementSettingsForm(
            data, initial=initial, workloads=workloads, rules=rules, record=instance
        )

    return factory


@router.get(
    "/plans/{plan_id}/placement-settings",
    **op({200: PlacementSettingsOut}, 404),
    summary="Network budget, control need, residency rules and the recorded placement choice",
)
def placement_settings_read(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    return placement_out(plan, facility_selectors.placement_decision_get(plan=plan))


@router.patch(
    "/plans/{plan_id}/placement-settings",
    **op({200: PlacementSettingsOut}, 404, 409),
    summary="Change the network budget, control need or residency rules (only those sent)",
)
def placement_settings_update(request, plan_id: Id, payload: PlacementSettingsIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    sent = sent_fields(payload)
    workloads = list(selectors.workload_list(plan=plan))
    data = {
        name: posted_value(sent[name])
        for name in ("network_share_pct", "control_requirement")
        if name in sent
    }
    residency = sent.get("residency") or {}
    unknown = _bad_keys(
        "residency", residency, {str(w.pk) for w in workloads}, "No workload {key} on this plan."
    )
    if unknown:
        return Status(422, {"errors": unknown})
    data |= {f"residency_{k}": posted_value(v) for k, v in residency.items()}
    with transaction.atomic():
        decision = facility_services.placement_decision_for_edit(plan=plan)
        rules = facility_selectors.residency_rules(plan=plan)
        try:
            form = bound_form(
                _placement_settings_form(plan, workloads, rules),
                sent=data,
                version=payload.version,
                instance=decision,
            )
        except FormErrors as exc:
            transaction.set_rollback(True)  # a refused edit stores nothing
            return Status(
                exc.status, {"errors": _form_errors(exc.errors, {"residency_": "residency"})}
            )
        decision = facility_services.placement_settings_save(
            plan=plan,
            network_share_pct=form.cleaned_data["network_share_pct"],
            control_requirement=form.cleaned_data["control_requirement"],
            residency=form.residency_values(),
            decision=decision,
        )
    return Status(200, placement_out(plan, decision))


@router.post(
    "/plans/{plan_id}/placement/choose",
    **op({200: PlacementSettingsOut}, 404, 409),
    summary="Record the chosen placement option and why, with the comparison as it stands",
)
def placement_choose(request, plan_id: Id, payload: PlacementChoiceIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    with transaction.atomic():
        decision = facility_services.placement_decision_for_edit(plan=plan)
        evaluation = facility_services.placement_evaluate(plan=plan, decision=decision)
        if evaluation.result is None:
            why = evaluation.catalog_gap or "The plan has no workloads to place yet."
            transaction.set_rollback(True)  # a refused edit stores nothing
            return Status(422, {"errors": {"key": [why]}})
        options = evaluation.result.options

        def factory(data=None, *, instance):
            initial = {"option": instance.chosen_key, "reason": instance.reason}
            return PlacementChoiceForm(data, initial=initial, options=options, record=instance)

        try:
            form = bound_form(
                factory,
                sent={"option": payload.key, "reason": payload.reason},
                version=payload.version,
                instance=decision,
            )
        except FormErrors as exc:
            transaction.set_rollback(True)  # a refused edit stores nothing
            return Status(exc.status, {"errors": _form_errors(exc.errors, {"option": "key"})})
        decision = facility_services.placement_choice_save(
            plan=plan,
            user=actor(request),
            option_key=form.cleaned_data["option"],
            reason=form.cleaned_data["reason"],
            evaluation=evaluation,
            decision=decision,
        )
    return Status(200, placement_out(plan, decision))


# --- Site split of a workload -----------------------------------------------------------------


class SiteSplitIn(Versioned):
    shares: dict[str, whole_number(0, 100) | None] = Field(  # type: ignore[valid-type]
        ...,
        max_length=MAP_ROWS,
        description="Site id → whole percent of the workload's replicas, adding up to 100. "
        "Sites not sent get 0; an empty map follows the users' regions again.",
    )


class SplitSiteOut(Schema):
    id: int
    name: str


class SiteSplitOut(Schema):
    workload_id: int
    version: int
    shares: dict[str, int] = Field(..., description="Site id → percent; empty: by users.")
    source: str = Field(..., description="'set by hand' or 'by users' regions'.")
    sites: list[SplitSiteOut] = Field(
        ..., description="The plan's owned and colocation sites (those that hold servers)."
    )


def site_split_out(workload, split: WorkloadSiteSplit, sites) -> dict[str, Any]:
    shares = {str(k): int(v) for k, v in (split.shares or {}).items()}
    return {
        "workload_id": workload.pk,
        "version": split.version,
        "shares": shares,
        "source": "set by hand" if shares else "by users' regions",
        "sites": [{"id": s.pk, "name": s.name} for s in sites],
    }


def _split_write(plan, workload, shares: dict[str, Any], version: int | None):
    sites = physical_sites(plan=plan)
    unknown = _bad_keys(
        "shares",
        shares,
        {str(s.pk) for s in sites},
        "No owned or colocation site {key} on this plan (only those hold servers).",
    )
    if unknown:
        return Status(422, {"errors": unknown})
    with transaction.atomic():
        split = facility_services.site_split_for_edit(workload=workload)

        def factory(data=None, *, instance):
            return SiteSplitForm(data, workload=workload, sites=sites, record=instance)

        sent = {f"share_{s.pk}": posted_value(shares.get(str(s.pk))) for s in sites}
        try:
            form = bound_form(factory, sent=sent, version=version, instance=split)
        except FormErrors as exc:
            errors = _form_errors(exc.errors, {"share_": "shares"})
            if "__all__" in errors:
                errors.setdefault("shares", []).extend(errors.pop("__all__"))
            transaction.set_rollback(True)  # a refused edit stores nothing
            return Status(exc.status, {"errors": errors})
        split = facility_services.site_split_save(split=split, shares=form.shares())
    return Status(200, site_split_out(workload, split, sites))


@router.get(
    "/plans/{plan_id}/workloads/{workload_id}/site-split",
    **op({200: SiteSplitOut}, 404),
    summary="How the workload's replicas are split over the sites (by hand or by users)",
)
def site_split_read(request, plan_id: Id, workload_id: Id):
    workload = workload_get(request, plan_id, workload_id)
    split = facility_services.site_split_for_edit(workload=workload)
    return site_split_out(workload, split, physical_sites(plan=workload.plan))


@router.put(
    "/plans/{plan_id}/workloads/{workload_id}/site-split",
    **op({200: SiteSplitOut}, 404, 409),
    summary="Split the workload's replicas over the sites by hand (percent per site, sum 100)",
)
def site_split_update(request, plan_id: Id, workload_id: Id, payload: SiteSplitIn):
    workload = workload_get(request, plan_id, workload_id)
    require_editor(request)
    return _split_write(workload.plan, workload, payload.shares, payload.version)


@router.delete(
    "/plans/{plan_id}/workloads/{workload_id}/site-split",
    **op({200: SiteSplitOut}, 404, 409),
    summary="Back to the automatic split (the users' regions decide)",
)
def site_split_clear(request, plan_id: Id, workload_id: Id):
    workload = workload_get(request, plan_id, workload_id)
    require_editor(request)
    return _split_write(workload.plan, workload, {}, None)


# --- Quote settings ---------------------------------------------------------------------------


# A markup in % on landed cost, in the range the form and the quote engine take (0-1000).
MarkupPct = Annotated[Number, Field(ge=limits.MARKUP_PCT.low, le=limits.MARKUP_PCT.high)]


def _cents(pct: float) -> Decimal:
    """A share sent as a JSON number, to the 0.01 % the terms are written in."""
    return Decimal(repr(pct)).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN).normalize()


class PaymentMilestoneIn(InSchema):
    pct: Annotated[Number, Field(ge=0.01, le=100, description="Rounded half-even to 0.01.")]
    when: str = Field(
        ...,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK_PATTERN,
        description="e.g. 'on delivery'.",
    )


class PaymentMilestoneOut(Schema):
    pct: float
    when: str


class QuoteSettingsIn(Versioned):
    contract_form = QuoteSettingsForm
    markup_pct: MarkupPct | None = Field(None, description="Global markup on landed cost, %.")
    category_markups: dict[str, MarkupPct | None] | None = Field(
        None,
        max_length=MAP_ROWS,
        description="BOM category → markup % (null: the global one). Replaces the map.",
    )
    line_markups: dict[str, MarkupPct | None] | None = Field(
        None,
        max_length=MAP_ROWS,
        description="BOM line part key → markup % (null: its category's, else the global). "
        "Replaces the map.",
    )
    payment_milestones: list[PaymentMilestoneIn] | None = Field(
        None, max_length=20, description="Shares of the total and when each falls due; they "
        "add up to 100. Replaces the list.",
    )  # fmt: skip
    payment_due_days: int | None = Field(None, ge=0, le=365, description="Invoices payable "
                                         "within this many days.")  # fmt: skip
    delivery_terms: str | None = Field(None, max_length=300)
    warranty_terms: str | None = Field(None, max_length=300)
    validity_days: int | None = Field(None, ge=1, le=365, description="Days from publication.")


class QuoteLineOut(Schema):
    part_key: str
    description: str
    category: str


class QuoteSettingsOut(Schema):
    version: int
    markup_pct: float
    category_markups: dict[str, float]
    line_markups: dict[str, float]
    payment_milestones: list[PaymentMilestoneOut]
    payment_due_days: int
    delivery_terms: str
    warranty_terms: str
    validity_days: int
    categories: list[str] = Field(..., description="Categories a markup may be set for.")
    lines: list[QuoteLineOut] = Field(..., description="BOM lines a markup may be set for.")


def _quote_lines(plan) -> list:
    return [x for x in sourcing_selectors.bom_line_list(plan=plan) if x.quantity]


def quote_settings_out(settings, lines) -> dict[str, Any]:
    return {
        "version": settings.version,
        "markup_pct": float(settings.markup_pct),
        "category_markups": {
            str(k): float(v) for k, v in (settings.category_markups or {}).items()
        },
        "line_markups": {str(k): float(v) for k, v in (settings.line_markups or {}).items()},
        "payment_milestones": [
            {"pct": float(m["pct"]), "when": m["when"]} for m in settings.payment_milestones
        ],
        "payment_due_days": settings.payment_due_days,
        "delivery_terms": settings.delivery_terms,
        "warranty_terms": settings.warranty_terms,
        "validity_days": settings.validity_days,
        "categories": sorted({x.category for x in lines}),
        "lines": [
            {"part_key": x.part_key, "description": x.description, "category": x.category}
            for x in lines
        ],
    }


@router.get(
    "/plans/{plan_id}/quote-settings",
    **op({200: QuoteSettingsOut}, 404),
    summary="Markups (global, per BOM category, per BOM line) and the commercial terms",
)
def quote_settings_read(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    return quote_settings_out(quote.quote_settings_get(plan=plan), _quote_lines(plan))


@router.patch(
    "/plans/{plan_id}/quote-settings",
    **op({200: QuoteSettingsOut}, 404, 409),
    summary="Change markups or commercial terms (only those sent)",
)
def quote_settings_update(request, plan_id: Id, payload: QuoteSettingsIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    sent = sent_fields(payload)
    lines = _quote_lines(plan)
    categories = sorted({x.category for x in lines})
    keys = [x.part_key for x in lines]
    by_category = sent.get("category_markups")
    by_line = sent.get("line_markups")
    errors = _bad_keys(
        "category_markups",
        by_category or {},
        set(categories),
        "No BOM line of category '{key}' on this plan.",
    ) | _bad_keys("line_markups", by_line or {}, set(keys), "No BOM line '{key}' on this plan.")
    if errors:
        return Status(422, {"errors": errors})
    data = {
        name: posted_value(sent[name])
        for name in (
            "markup_pct", "payment_due_days", "delivery_terms", "warranty_terms",
            "validity_days",
        )
        if name in sent
    }  # fmt: skip
    if sent.get("payment_milestones") is not None:  # the form reads them one a line
        data["payment_milestones"] = "\n".join(
            f"{_cents(m['pct']):f} % {m['when']}" for m in sent["payment_milestones"]
        )
    if by_category is not None:
        data |= {f"category_{c}": posted_value(by_category.get(c)) for c in categories}
    if by_line is not None:
        data |= {f"line_{k}": posted_value(by_line.get(k)) for k in keys}

    def factory(data=None, *, instance):
        return QuoteSettingsForm(
            data,
            instance=instance,
            categories=categories,
            lines=[(x.part_key, x.description) for x in lines],
        )

    with transaction.atomic():
        settings = quote.quote_settings_get(plan=plan)
        try:
            form = bound_form(factory, sent=data, version=payload.version, instance=settings)
        except FormErrors as exc:
            prefixes = {"category_": "category_markups", "line_": "line_markups"}
            transaction.set_rollback(True)  # a refused edit stores nothing
            return Status(exc.status, {"errors": _form_errors(exc.errors, prefixes)})
        saved = form.save()
    return Status(200, quote_settings_out(saved, lines))


# --- Quote fees -------------------------------------------------------------------------------


class QuoteFeeIn(Versioned):
    contract_form = QuoteFeeForm
    kind: str | None = Field(
        None, max_length=20, description="design, installation, project_management, support, other."
    )
    description: str | None = Field(None, max_length=200)
    quantity: Finite | None = None
    unit: str | None = Field(None, max_length=10, description="days, years or 'lump sum'.")
    unit_price: Finite | None = Field(None, description="Sell price per unit, plan currency.")


class QuoteFeeOut(Schema):
    id: int
    plan_id: int
    version: int
    kind: str
    description: str
    quantity: float
    unit: str
    unit_price: float
    position: int


def quote_fee_out(fee: QuoteFee) -> dict[str, Any]:
    return {
        "id": fee.pk,
        "plan_id": fee.plan_id,
        "version": fee.version,
        "kind": fee.kind,
        "description": fee.description,
        "quantity": float(fee.quantity),
        "unit": fee.unit,
        "unit_price": float(fee.unit_price),
        "position": fee.position,
    }


def _fee_write(plan, payload: QuoteFeeIn, fee: QuoteFee):
    creating = fee.pk is None
    sent = sent_fields(payload)
    try:
        form = bound_form(
            lambda data=None, *, instance: QuoteFeeForm(data, instance=instance),
            sent={name: posted_value(value) for name, value in sent.items()},
            version=payload.version,
            instance=fee,
        )
    except FormErrors as exc:
        return Status(exc.status, {"errors": exc.errors})
    with transaction.atomic():
        saved = form.save(commit=False)
        if creating:
            saved.position = quote.quote_fee_list(plan=plan).count()
        saved.save()
    return Status(201 if creating else 200, quote_fee_out(saved))


def _fee_get(request, plan_id: int, fee_id: int) -> tuple[Any, QuoteFee]:
    plan = plan_get(request, plan_id)
    return plan, quote.quote_fee_get(plan=plan, fee_id=fee_id)


@router.get(
    "/plans/{plan_id}/quote-fees",
    **op({200: list[QuoteFeeOut]}, 404),
    summary="The services and fees sold on the quote",
)
def quote_fee_list(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    return [quote_fee_out(f) for f in quote.quote_fee_list(plan=plan)]


class QuoteFeeCreateIn(QuoteFeeIn):
    """A new fee: the fields without a default are required."""

    contract_create = True


@router.post(
    "/plans/{plan_id}/quote-fees",
    **op({201: QuoteFeeOut}, 404),
    summary="Add a service or fee (support in whole years, a lump sum as quantity 1)",
)
def quote_fee_create(request, plan_id: Id, payload: QuoteFeeCreateIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    return _fee_write(plan, payload, QuoteFee(plan=plan))


@router.get(
    "/plans/{plan_id}/quote-fees/{fee_id}", **op({200: QuoteFeeOut}, 404), summary="One fee"
)
def quote_fee_read(request, plan_id: Id, fee_id: Id):
    return quote_fee_out(_fee_get(request, plan_id, fee_id)[1])


@router.patch(
    "/plans/{plan_id}/quote-fees/{fee_id}",
    **op({200: QuoteFeeOut}, 404, 409),
    summary="Change a fee's fields (only those sent)",
)
def quote_fee_update(request, plan_id: Id, fee_id: Id, payload: QuoteFeeIn):
    plan, fee = _fee_get(request, plan_id, fee_id)
    require_editor(request)
    return _fee_write(plan, payload, fee)


@router.delete(
    "/plans/{plan_id}/quote-fees/{fee_id}",
    **op({204: None}, 404, 409),
    summary="Remove a fee",
)
def quote_fee_remove(request, plan_id: Id, fee_id: Id):
    _, fee = _fee_get(request, plan_id, fee_id)
    require_editor(request)
    quote.quote_fee_delete(fee=fee)
    return Status(204, None)
