"""Plans and their workloads: list, create, read, edit (PATCH) and delete.

Each write binds the page's form (``PlanForm``, ``WorkloadForm``) and saves through the page's
service, so messages, defaults and the stale-edit rules are the pages' own.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from ninja import Field, Path, Router, Schema, Status

from catalog.models import ModelArchitecture
from catalog.selectors import catalog_version_pinned
from planner import selectors, sizing
from planner.api.common import (
    MAX_PK,
    FormErrors,
    Versioned,
    bound_form,
    op,
    plan_get,
    posted_value,
    renamed,
    require_editor,
    sent_fields,
)
from planner.api.contract import DECIMAL_TEXT_PATTERN, Number
from planner.forms import ClientForm, PlanForm
from planner.labels import workload_stack_label
from planner.models import ApiToken, Client, Plan, Workload
from planner.services import plan_save
from planner.tenancy import org_object_or_404
from planner.workload_forms import COLD_START_FIELDS, STACK_FIELDS, WorkloadForm

router = Router(tags=["plans"])

Id = Annotated[int, Path(ge=1, le=MAX_PK)]
Finite = Number  # a JSON number (planner.api.contract)


def actor(request) -> AbstractBaseUser | None:
    """Who is recorded as having made a row: the member, or the token's creator."""
    if isinstance(request.auth, ApiToken):
        return request.auth.created_by
    return request.user if request.user.is_authenticated else None


def _iso(value: date | datetime | None) -> str | None:
    return value.isoformat() if value else None


# --- Plans ------------------------------------------------------------------------------------


class PlanIn(Versioned):
    contract_form = PlanForm
    contract_optional = frozenset({"client"})  # or client_name: a new client
    contract_names = {"client_name": "new_client"}
    client: int | None = Field(None, ge=1, le=MAX_PK, description="An existing client's id.")
    client_name: str | None = Field(
        None,
        max_length=200,
        description="A client by name: the existing one of that name, else a new client.",
    )
    name: str | None = Field(None, max_length=200)
    currency: str | None = Field(None, max_length=3, description="ISO 4217, e.g. EUR.")
    target_go_live: date | None = None
    notes: str | None = Field(None, max_length=20_000)


class ClientOut(Schema):
    id: int
    name: str
    vat_recovery: str = Field(..., description="full, partial or none.")
    vat_recoverable_pct: str = Field(
        ..., description="The share of VAT the client recovers, 0-100 (a decimal string)."
    )


class PlanOut(Schema):
    id: int
    version: int
    name: str
    client: ClientOut
    client_name: str
    currency: str
    target_go_live: str | None
    notes: str
    workloads: int = Field(..., description="How many workloads the plan has.")
    created_at: str
    updated_at: str


PLAN_NAMES = {"new_client": "client_name"}


def client_ref(client: Client) -> dict[str, Any]:
    return {
        "id": client.pk,
        "name": client.name,
        "vat_recovery": client.vat_recovery,
        "vat_recoverable_pct": f"{client.vat_recovery_pct.normalize():f}",
    }


def plan_out(plan: Plan) -> dict[str, Any]:
    return {
        "id": plan.pk,
        "version": plan.version,
        "name": plan.name,
        "client": client_ref(plan.client),
        "client_name": plan.client.name,
        "currency": plan.currency,
        "target_go_live": _iso(plan.target_go_live),
        "notes": plan.notes,
        "workloads": plan.workloads.count(),
        "created_at": _iso(plan.created_at),
        "updated_at": _iso(plan.updated_at),
    }


def _plan_sent(request, payload: PlanIn) -> dict[str, str]:
    sent = sent_fields(payload)
    data: dict[str, str] = {}
    for name in ("name", "currency", "target_go_live", "notes"):
        if name in sent:
            data[name] = posted_value(sent[name])
    if "client" in sent:
        data["client"] = posted_value(sent["client"])
        data["new_client"] = ""
    if "client_name" in sent:
        client_name = (sent["client_name"] or "").strip()
        existing = None
        if "client" not in sent and client_name and "\x00" not in client_name:
            existing = Client.objects.filter(
                organisation=request.organisation, name__iexact=client_name
            ).first()
        if existing is not None:
            data["client"], data["new_client"] = str(existing.pk), ""
        else:
            data.setdefault("client", "")
            data["new_client"] = client_name
    return data


def _plan_write(request, payload: PlanIn, plan: Plan):
    def factory(data=None, *, instance):
        return PlanForm(data, instance=instance, organisation=request.organisation)

    creating = plan.pk is None

    try:
        form = bound_form(
            factory, sent=_plan_sent(request, payload), version=payload.version, instance=plan
        )
    except FormErrors as exc:
        return Status(exc.status, {"errors": renamed(exc.errors, PLAN_NAMES)})
    saved = plan_save(
        plan=form.save(commit=False),
        new_client=form.cleaned_data.get("new_client") or "",
        organisation=request.organisation,
        user=actor(request),
    )
    return Status(201 if creating else 200, plan_out(saved))


@router.get("/plans", **op({200: list[PlanOut]}), summary="The organisation's plans")
def plan_list(request):
    plans = selectors.plan_list(organisation=request.organisation)
    return [plan_out(plan) for plan in plans]


class PlanCreateIn(PlanIn):
    """A new plan: the fields without a default are required."""

    contract_create = True


@router.post(
    "/plans",
    **op({201: PlanOut}),
    summary="Create a plan (for an existing client, or a new one by `client_name`)",
)
def plan_create(request, payload: PlanCreateIn):
    require_editor(request)
    return _plan_write(request, payload, Plan(organisation=request.organisation))


@router.get("/plans/{plan_id}", **op({200: PlanOut}, 404), summary="One plan")
def plan_read(request, plan_id: Id):
    return plan_out(plan_get(request, plan_id))


@router.patch(
    "/plans/{plan_id}",
    **op({200: PlanOut}, 404, 409),
    summary="Change a plan's fields (only those sent)",
)
def plan_update(request, plan_id: Id, payload: PlanIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    return _plan_write(request, payload, plan)


@router.delete(
    "/plans/{plan_id}",
    **op({204: None}, 404, 409),
    summary="Delete a plan with its workloads, sites and revisions",
)
def plan_delete(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    require_editor(request)
    plan.delete()
    return Status(204, None)


# --- Clients ----------------------------------------------------------------------------------


class ClientIn(Versioned):
    contract_form = ClientForm
    name: str | None = Field(None, max_length=200)
    country: str | None = Field(None, max_length=2, description="ISO 3166 alpha-2, e.g. DE.")
    contact_name: str | None = Field(None, max_length=200)
    contact_email: str | None = Field(None, max_length=254)
    vat_recovery: str | None = Field(
        None,
        max_length=10,
        description="How much VAT the client recovers: full, partial or none (VAT-exempt, "
        "e.g. a bank: the VAT it pays is a cost in the landed cost, TCO and quote).",
    )
    vat_recoverable_pct: (
        Number | Annotated[str, Field(pattern=DECIMAL_TEXT_PATTERN, max_length=40)] | None
    ) = Field(
        None,
        description="Only with partial recovery: the share recovered, more than 0 and less "
        "than 100.",
    )
    notes: str | None = Field(None, max_length=20_000)


class ClientDetailOut(ClientOut):
    version: int
    country: str
    contact_name: str
    contact_email: str
    notes: str


def client_out(client: Client) -> dict[str, Any]:
    return client_ref(client) | {
        "version": client.version,
        "country": client.country,
        "contact_name": client.contact_name,
        "contact_email": client.contact_email,
        "notes": client.notes,
    }


def _client_write(request, payload: ClientIn, client: Client):
    def factory(data=None, *, instance):
        return ClientForm(data, instance=instance, organisation=request.organisation)

    creating = client.pk is None
    sent = {name: posted_value(value) for name, value in sent_fields(payload).items()}
    try:
        form = bound_form(factory, sent=sent, version=payload.version, instance=client)
    except FormErrors as exc:
        return Status(exc.status, {"errors": exc.errors})
    saved = form.save(commit=False)
    saved.organisation = request.organisation
    saved.save()
    return Status(201 if creating else 200, client_out(saved))


@router.get("/clients", **op({200: list[ClientDetailOut]}), summary="The organisation's clients")
def client_list(request):
    return [client_out(c) for c in selectors.client_list(organisation=request.organisation)]


class ClientCreateIn(ClientIn):
    """A new client: the fields without a default are required."""

    contract_create = True


@router.post("/clients", **op({201: ClientDetailOut}), summary="Add a client")
def client_create(request, payload: ClientCreateIn):
    require_editor(request)
    return _client_write(request, payload, Client(organisation=request.organisation))


@router.get("/clients/{client_id}", **op({200: ClientDetailOut}, 404), summary="One client")
def client_read(request, client_id: Id):
    return client_out(org_object_or_404(request, Client, pk=client_id))


@router.patch(
    "/clients/{client_id}",
    **op({200: ClientDetailOut}, 404, 409),
    summary="Change a client's fields (only those sent), e.g. its VAT recovery",
)
def client_update(request, client_id: Id, payload: ClientIn):
    client = org_object_or_404(request, Client, pk=client_id)
    require_editor(request)
    return _client_write(request, payload, client)


# --- Workloads --------------------------------------------------------------------------------

SLUG = r"^[a-z0-9][a-z0-9._-]*$"


class WorkloadIn(Versioned):
    contract_form = WorkloadForm
    # Left empty, the organisation's default stack and the cold-start convention apply.
    contract_optional = frozenset({*STACK_FIELDS, *COLD_START_FIELDS})
    name: str | None = Field(None, max_length=120)
    kind: str | None = Field(None, max_length=20, description="chat, rag, code or batch.")
    model: str | None = Field(
        None, max_length=120, pattern=SLUG, description="Model slug, e.g. llama-3.1-70b."
    )
    precision: str | None = Field(None, max_length=8, description="bf16, fp8, int8, int4, fp4.")
    serving_stack: str | None = Field(
        None,
        max_length=16,
        description="vllm, sglang or trtllm: its memory rule and batch limit size the "
        "workload (a new workload takes the organisation's default).",
    )
    serving_stack_version: str | None = Field(
        None, max_length=40, description="The stack's version, e.g. 0.11.2 (optional)."
    )
    kv_cache_dtype: str | None = Field(
        None, max_length=8, description="auto (the model's, BF16), bf16 or fp8."
    )
    input_tokens_mean: int | None = None
    input_tokens_p95: int | None = None
    output_tokens_mean: int | None = None
    output_tokens_p95: int | None = None
    percentile: int | None = Field(None, description="95 or 99.")
    ttft_ms: int | None = None
    tpot_ms: int | None = None
    e2e_s: int | None = Field(None, description="Whole-request time target (batch work), s.")
    peak_concurrency: int | None = None
    peak_requests_per_s: Finite | None = None
    headroom_pct: int | None = None
    n_plus_one: bool | None = None
    daily_profile: list[Annotated[Number, Field(ge=0, le=1)]] | None = Field(
        None,
        max_length=100,
        # Exactly 24 in the document; the form counts them, with the page's message.
        json_schema_extra={"minItems": 24, "maxItems": 24},
        description="24 shares of peak (0-1), one per UTC hour.",
    )
    users_by_region: dict[str, Annotated[Number, Field(ge=0, le=100)]] | None = Field(
        None, max_length=50, description="Region key → share of users in %, adding to 100."
    )


class ChosenOut(Schema):
    key: str
    accelerator: str
    server: str | None
    precision: str
    tensor_parallel: int | None
    replicas: int | None
    accelerators: int | None
    servers: int | None
    problem: str = Field(..., description="Why the choice no longer serves the inputs, if so.")
    serving_stack: str = Field(
        "", description="What the choice is sized for, e.g. 'vLLM 0.11, BF16 KV cache'."
    )
    serving: str = Field("aggregated", description="aggregated or disaggregated.")
    prefill_tensor_parallel: int | None = Field(None, description="Disaggregated: prefill TP.")
    prefill_replicas: int | None = Field(
        None, description="Disaggregated: prefill replicas (replicas counts both pools)."
    )


class WorkloadOut(Schema):
    id: int
    plan_id: int
    version: int
    name: str
    kind: str
    model: str
    precision: str
    serving_stack: str
    serving_stack_version: str
    kv_cache_dtype: str
    input_tokens_mean: int
    input_tokens_p95: int | None
    output_tokens_mean: int
    output_tokens_p95: int | None
    percentile: int
    ttft_ms: int | None
    tpot_ms: int | None
    e2e_s: int | None
    peak_concurrency: int | None
    peak_requests_per_s: float | None
    headroom_pct: int
    n_plus_one: bool
    daily_profile: list[float]
    users_by_region: dict[str, float]
    chosen: ChosenOut | None


WORKLOAD_NAMES = {"region_shares": "users_by_region"}
WORKLOAD_FIELDS = [f for f in WorkloadIn.model_fields if f != "version"]


def workload_out(workload: Workload) -> dict[str, Any]:
    out: dict[str, Any] = {"id": workload.pk, "plan_id": workload.plan_id}
    out["version"] = workload.version
    for name in WORKLOAD_FIELDS:
        if name == "model":
            out[name] = workload.model.slug
        elif name == "users_by_region":
            out[name] = workload.region_shares
        else:
            out[name] = getattr(workload, name)
    out["chosen"] = None
    if workload.has_choice:
        out["chosen"] = {
            "key": sizing.chosen_key(workload),
            "accelerator": workload.chosen_accelerator.slug,
            "server": workload.chosen_server.slug if workload.chosen_server else None,
            "precision": workload.chosen_precision,
            "tensor_parallel": workload.chosen_tensor_parallel,
            "replicas": workload.chosen_replicas,
            "accelerators": workload.chosen_accelerators,
            "servers": workload.chosen_servers,
            "problem": workload.chosen_problem,
            "serving_stack": workload_stack_label(workload),
            "serving": workload.chosen_serving or "aggregated",
            "prefill_tensor_parallel": workload.chosen_prefill_tensor_parallel,
            "prefill_replicas": workload.chosen_prefill_replicas,
        }
    return out


def _workload_sent(payload: WorkloadIn) -> dict[str, str]:
    sent = sent_fields(payload)
    data: dict[str, str] = {}
    for name, value in sent.items():
        if name == "model":
            # The form picks the model by id; an unknown slug stays as sent, and the form
            # refuses it with its own message.
            found = ModelArchitecture.objects.filter(slug=value).values_list("pk", flat=True)
            data["model"] = str(found[0]) if value and found else posted_value(value)
        elif name == "daily_profile":
            data[name] = ", ".join(repr(v) for v in value or [])
        elif name == "users_by_region":
            data["region_shares"] = ", ".join(f"{k}: {v!r}" for k, v in (value or {}).items())
        else:
            data[name] = posted_value(value)
    return data


def workload_get(request, plan_id: int, workload_id: int) -> Workload:
    """The organisation's workload of that plan, or a 404 (the pages' one tenancy look-up)."""
    return org_object_or_404(
        request, selectors.workloads_with_choices(), plan_id=plan_id, pk=workload_id
    )


def _workload_write(request, payload: WorkloadIn, workload: Workload):
    creating = workload.pk is None
    try:
        form = bound_form(
            lambda data=None, *, instance: WorkloadForm(data, instance=instance),
            sent=_workload_sent(payload),
            version=payload.version,
            instance=workload,
        )
    except FormErrors as exc:
        return Status(exc.status, {"errors": renamed(exc.errors, WORKLOAD_NAMES)})
    with catalog_version_pinned(), transaction.atomic():
        saved = form.save() if creating else sizing.workload_save(workload=form.save(commit=False))
    return Status(201 if creating else 200, workload_out(saved))


@router.get(
    "/plans/{plan_id}/workloads",
    **op({200: list[WorkloadOut]}, 404),
    summary="The plan's workloads",
)
def workload_list(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    return [workload_out(w) for w in selectors.workload_list(plan=plan)]


class WorkloadCreateIn(WorkloadIn):
    """A new workload: the fields without a default are required."""

    contract_create = True


@router.post(
    "/plans/{plan_id}/workloads",
    **op({201: WorkloadOut}, 404, 409),
    summary="Add a workload (peak_concurrency or peak_requests_per_s)",
)
def workload_create(request, plan_id: Id, payload: WorkloadCreateIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    return _workload_write(request, payload, Workload.new_in(plan))


@router.get(
    "/plans/{plan_id}/workloads/{workload_id}",
    **op({200: WorkloadOut}, 404),
    summary="One workload",
)
def workload_read(request, plan_id: Id, workload_id: Id):
    return workload_out(workload_get(request, plan_id, workload_id))


@router.patch(
    "/plans/{plan_id}/workloads/{workload_id}",
    **op({200: WorkloadOut}, 404, 409),
    summary="Change a workload's fields (only those sent); a chosen configuration is re-planned",
)
def workload_update(request, plan_id: Id, workload_id: Id, payload: WorkloadIn):
    workload = workload_get(request, plan_id, workload_id)
    require_editor(request)
    return _workload_write(request, payload, workload)


@router.delete(
    "/plans/{plan_id}/workloads/{workload_id}",
    **op({204: None}, 404, 409),
    summary="Delete a workload",
)
def workload_delete(request, plan_id: Id, workload_id: Id):
    workload = workload_get(request, plan_id, workload_id)
    require_editor(request)
    workload.delete()
    return Status(204, None)


# Re-exported for the other modules' schemas.
__all__ = ["router", "Id", "Finite", "actor"]
