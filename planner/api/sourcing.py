"""Sourcing over the API: suppliers and their offers (organisation data), a plan's BOM line
edits and its purchase orders.

Each write binds the sourcing page's own form (``SupplierForm``, ``OfferForm``,
``BomLineAddForm``, ``BomLineForm``, ``PurchaseOrderCreateForm``, ``PurchaseOrderForm``) and
saves through the page's service, so validation, messages, the plan history and the
stale-edit rules are the pages' own. The landed cost and timeline are priced live from the
offers: a changed offer (a new price, break or validity) is what ``GET .../landed-cost`` and
the plan's freshness read next; a chosen (pinned) offer is set on the BOM line.

Money is exact decimal text in answers (as in the landed cost) and a number or decimal text
in requests. An offer's ``item`` is ``part:<slug>``, ``server:<slug>``,
``accelerator:<slug>`` or ``service:<kind>``; its ``price_breaks`` are
``[{"min_qty", "unit_price"}]``.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any

from django.db import transaction
from ninja import Field, Router, Schema, Status

from catalog.models import Accelerator, Part, ServerPlatform
from planner.api.common import (
    MAX_PK,
    FormErrors,
    InSchema,
    Versioned,
    bound_form,
    op,
    plan_get,
    posted_value,
    refusal_status,
    renamed,
    require_editor,
    sent_fields,
)
from planner.api.contract import DECIMAL_TEXT_PATTERN, Number, stated_range
from planner.api.delivery import BomLineOut, bom_line_out
from planner.api.plans import Id, actor
from planner.tenancy import org_object_or_404
from sourcing import selectors, services
from sourcing.forms import (
    BomLineAddForm,
    BomLineForm,
    MeasureDecisionForm,
    OfferForm,
    PurchaseOrderCreateForm,
    PurchaseOrderForm,
    SupplierForm,
)
from sourcing.models import ORDER_STEPS, Offer, OfferPriceBreak, PurchaseOrder, Supplier

router = Router(tags=["suppliers and orders"])

SLUG = r"^[a-z0-9][a-z0-9._-]*$"
# Bounded only against absurd values; the form says what it refuses (negative, too many digits).
# A JSON number (rounded to the field's places) or a decimal as text (read exactly).
Money = (
    Annotated[Number, stated_range(0, 10**14)]
    | Annotated[str, Field(pattern=DECIMAL_TEXT_PATTERN, max_length=40)]
)


def _text(value: Any) -> Any:
    """A request value as a browser posts it (decimals without an exponent)."""
    if isinstance(value, Decimal):
        return format(value, "f")
    return posted_value(value)


def _money(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value else None


# --- Suppliers -----------------------------------------------------------------------------------


class SupplierIn(Versioned):
    contract_form = SupplierForm
    name: str | None = Field(None, max_length=200)
    country: str | None = Field(None, max_length=2, description="ISO 3166 code, e.g. NL.")
    contact_name: str | None = Field(None, max_length=200)
    contact_email: str | None = Field(None, max_length=254)
    phone: str | None = Field(None, max_length=60)
    website: str | None = Field(None, max_length=200)
    notes: str | None = Field(None, max_length=20_000)


class SupplierOut(Schema):
    id: int
    version: int
    name: str
    country: str
    contact_name: str
    contact_email: str
    phone: str
    website: str
    notes: str
    offers: int = Field(..., description="How many offers the supplier has.")


SUPPLIER_FIELDS = ("name", "country", "contact_name", "contact_email", "phone", "website", "notes")


def supplier_out(supplier: Supplier) -> dict[str, Any]:
    return {"id": supplier.pk, "version": supplier.version, "offers": supplier.offers.count()} | {
        name: getattr(supplier, name) for name in SUPPLIER_FIELDS
    }


def _supplier(request, supplier_id: int) -> Supplier:
    return org_object_or_404(request, Supplier, pk=supplier_id)


def _supplier_write(request, payload: SupplierIn, supplier: Supplier):
    creating = supplier.pk is None

    def factory(data=None, *, instance):
        return SupplierForm(data, instance=instance, organisation=request.organisation)

    sent = {name: _text(value) for name, value in sent_fields(payload).items()}
    try:
        form = bound_form(factory, sent=sent, version=payload.version, instance=supplier)
    except FormErrors as exc:
        return Status(exc.status, {"errors": exc.errors})
    saved = form.save(commit=False)
    saved.organisation = request.organisation
    saved.save()
    return Status(201 if creating else 200, supplier_out(saved))


@router.get("/suppliers", **op({200: list[SupplierOut]}), summary="The organisation's suppliers")
def supplier_list(request):
    return [supplier_out(s) for s in selectors.supplier_list(organisation=request.organisation)]


class SupplierCreateIn(SupplierIn):
    """A new supplier: the fields without a default are required."""

    contract_create = True


@router.post("/suppliers", **op({201: SupplierOut}), summary="Add a supplier")
def supplier_create(request, payload: SupplierCreateIn):
    require_editor(request)
    return _supplier_write(request, payload, Supplier(organisation=request.organisation))


@router.get("/suppliers/{supplier_id}", **op({200: SupplierOut}, 404), summary="One supplier")
def supplier_read(request, supplier_id: Id):
    return supplier_out(_supplier(request, supplier_id))


@router.patch(
    "/suppliers/{supplier_id}",
    **op({200: SupplierOut}, 404, 409),
    summary="Change a supplier's fields (only those sent)",
)
def supplier_update(request, supplier_id: Id, payload: SupplierIn):
    supplier = _supplier(request, supplier_id)
    require_editor(request)
    return _supplier_write(request, payload, supplier)


@router.delete(
    "/suppliers/{supplier_id}",
    **op({204: None}, 404, 409),
    summary="Delete a supplier with its offers (409 while a purchase order uses it)",
)
def supplier_delete(request, supplier_id: Id):
    supplier = _supplier(request, supplier_id)
    require_editor(request)
    if (
        supplier.orders.exists()
        or Offer.objects.filter(supplier=supplier, order_lines__isnull=False).exists()
    ):
        return Status(
            409,
            {
                "errors": {
                    "__all__": ["This supplier is on a purchase order and cannot be deleted."]
                }
            },
        )
    supplier.delete()
    return Status(204, None)


# --- Offers --------------------------------------------------------------------------------------


class PriceBreakIn(InSchema):
    min_qty: int = Field(..., ge=1, le=MAX_PK)
    unit_price: Money


class OfferIn(Versioned):
    contract_form = OfferForm
    contract_names = {"price_breaks": "price_breaks_text"}
    item: str | None = Field(
        None,
        max_length=140,
        pattern=r"^(part|server|accelerator|service):[a-z0-9][a-z0-9._-]*$",
        description="What the offer is for: part:<slug>, server:<slug>, accelerator:<slug> "
        "or service:<kind> (installation, support, …).",
    )
    supplier_sku: str | None = Field(None, max_length=120)
    unit_price: Money | None = None
    term_years: int | None = Field(
        None, ge=1, le=10, description="A support contract: the years its price buys, paid "
        "once; null = a yearly price.",
    )  # fmt: skip
    currency: str | None = Field(None, max_length=3, description="ISO 4217, e.g. USD.")
    price_breaks: list[PriceBreakIn] | None = Field(
        None, max_length=50, description="From min_qty units upward the unit price is unit_price."
    )
    minimum_order_qty: int | None = Field(None, ge=0, le=MAX_PK)
    lead_time_days: int | None = Field(None, ge=0, le=MAX_PK)
    quoted_on: date | None = Field(None, description="When it was quoted (not in the future).")
    valid_until: date | None = Field(None, description="When it expires (not before quoted_on).")
    origin_country: str | None = Field(None, max_length=2)
    ship_from_country: str | None = Field(None, max_length=2)
    incoterm: str | None = Field(None, max_length=3, description="EXW, FCA, FOB, CIF, DAP, DDP…")
    freight_per_unit: Money | None = None
    unit_weight_kg: Money | None = None
    notes: str | None = Field(None, max_length=20_000)


class PriceBreakOut(Schema):
    min_qty: int
    unit_price: str


class OfferOut(Schema):
    id: int
    version: int
    supplier_id: int
    supplier: str
    item: str = Field(
        ..., description="part:<slug>, server:<slug>, accelerator:<slug> or service:<kind>."
    )
    item_label: str
    supplier_sku: str
    unit_price: str
    term_years: int | None = None
    currency: str
    price_breaks: list[PriceBreakOut]
    minimum_order_qty: int
    lead_time_days: int
    quoted_on: str
    valid_until: str
    expired: bool = Field(..., description="True once valid_until is past.")
    origin_country: str
    ship_from_country: str
    incoterm: str
    freight_per_unit: str
    unit_weight_kg: str | None
    notes: str


OFFER_FIELDS = (
    "supplier_sku", "currency", "minimum_order_qty", "lead_time_days", "origin_country",
    "ship_from_country", "incoterm", "notes", "term_years",
)  # fmt: skip


def _item(offer: Offer) -> str:
    for kind in ("part", "server", "accelerator"):
        row = getattr(offer, kind)
        if row is not None:
            return f"{kind}:{row.slug}"
    return f"service:{offer.service}"


def offer_out(offer: Offer) -> dict[str, Any]:
    from django.utils import timezone

    return {
        "id": offer.pk,
        "version": offer.version,
        "supplier_id": offer.supplier_id,
        "supplier": offer.supplier.name,
        "item": _item(offer),
        "item_label": offer.item_label,
        "unit_price": _money(offer.unit_price),
        "price_breaks": [
            {"min_qty": b.min_qty, "unit_price": _money(b.unit_price)}
            for b in offer.price_breaks.order_by("min_qty")
        ],
        "quoted_on": offer.quoted_on.isoformat(),
        "valid_until": offer.valid_until.isoformat(),
        "expired": offer.valid_until < timezone.localdate(),
        "freight_per_unit": _money(offer.freight_per_unit),
        "unit_weight_kg": _money(offer.unit_weight_kg),
    } | {name: getattr(offer, name) for name in OFFER_FIELDS}


ITEM_MODELS = {"part": Part, "server": ServerPlatform, "accelerator": Accelerator}


def _offer_sent(payload: OfferIn) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The form's posted data for what was sent, and errors of items that do not exist."""
    sent = sent_fields(payload)
    data = {
        name: _text(value) for name, value in sent.items() if name not in ("item", "price_breaks")
    }
    errors: dict[str, list[str]] = {}
    if "item" in sent:
        kind, _, key = (sent["item"] or "").partition(":")
        if kind in ITEM_MODELS:
            row = ITEM_MODELS[kind].objects.filter(slug=key).first()
            if row is None:
                errors["item"] = [f"Unknown {kind} '{key}' in the catalog."]
            data["item"] = f"{kind}:{row.pk}" if row else ""
        else:
            data["item"] = f"{kind}:{key}" if kind else ""
    if "price_breaks" in sent:
        data["price_breaks_text"] = ", ".join(
            f"{b['min_qty']}: {_text(b['unit_price'])}" for b in sent["price_breaks"] or []
        )
    return data, errors


OFFER_NAMES = {"price_breaks_text": "price_breaks"}


@transaction.atomic
def _offer_save(form: OfferForm) -> Offer:
    """The page's save: the offer, then its price breaks replaced by the form's."""
    offer = form.save()
    offer.price_breaks.all().delete()
    for qty, price in form.cleaned_data["price_breaks_text"]:
        OfferPriceBreak.objects.create(offer=offer, min_qty=qty, unit_price=price)
    return offer


def _offer_write(payload: OfferIn, offer: Offer, initial: dict | None = None):
    creating = offer.pk is None
    data, unknown = _offer_sent(payload)
    if unknown:
        return Status(422, {"errors": unknown})

    def factory(posted=None, *, instance):
        return OfferForm(posted, instance=instance, initial=initial)

    try:
        form = bound_form(factory, sent=data, version=payload.version, instance=offer)
    except FormErrors as exc:
        return Status(exc.status, {"errors": renamed(exc.errors, OFFER_NAMES)})
    saved = _offer_save(form)
    saved.refresh_from_db()  # money as stored (4 decimal places), as a later read gives it
    return Status(201 if creating else 200, offer_out(saved))


def _offer(request, offer_id: int) -> Offer:
    return selectors.offer_get(organisation=request.organisation, offer_id=offer_id)


@router.get(
    "/suppliers/{supplier_id}/offers",
    **op({200: list[OfferOut]}, 404),
    summary="A supplier's offers",
)
def offer_list(request, supplier_id: Id):
    supplier = _supplier(request, supplier_id)
    offers = selectors.offer_list(organisation=request.organisation).filter(supplier=supplier)
    return [offer_out(o) for o in offers]


class OfferCreateIn(OfferIn):
    """A new offer: the fields without a default are required."""

    contract_create = True


@router.post(
    "/suppliers/{supplier_id}/offers",
    **op({201: OfferOut}, 404),
    summary="Add an offer (origin country defaults to the supplier's)",
)
def offer_create(request, supplier_id: Id, payload: OfferCreateIn):
    supplier = _supplier(request, supplier_id)
    require_editor(request)
    return _offer_write(payload, Offer(supplier=supplier), {"origin_country": supplier.country})


@router.get("/offers/{offer_id}", **op({200: OfferOut}, 404), summary="One offer")
def offer_read(request, offer_id: Id):
    return offer_out(_offer(request, offer_id))


@router.patch(
    "/offers/{offer_id}",
    **op({200: OfferOut}, 404, 409),
    summary="Change an offer (a re-price: every plan's landed cost reads the new price)",
)
def offer_update(request, offer_id: Id, payload: OfferIn):
    offer = _offer(request, offer_id)
    require_editor(request)
    return _offer_write(payload, offer)


@router.delete(
    "/offers/{offer_id}",
    **op({204: None}, 404, 409),
    summary="Delete an offer (409 while a purchase order uses it)",
)
def offer_delete(request, offer_id: Id):
    offer = _offer(request, offer_id)
    require_editor(request)
    if offer.order_lines.exists():
        message = "This offer is on a purchase order and cannot be deleted."
        return Status(409, {"errors": {"__all__": [message]}})
    offer.delete()
    return Status(204, None)


# --- BOM line edits ------------------------------------------------------------------------------


class BomLineAddIn(InSchema):
    contract_form = BomLineAddForm
    contract_create = True
    part: str | None = Field(None, max_length=120, pattern=SLUG, description="A part's slug.")
    server: str | None = Field(None, max_length=120, pattern=SLUG, description="A server's slug.")
    service: str | None = Field(None, max_length=20, description="installation, support, …")
    description: str | None = Field(None, max_length=200)
    quantity: int | None = Field(None, ge=-MAX_PK, le=MAX_PK)
    reason: str | None = Field(None, max_length=300)
    hs_code: str | None = Field(None, max_length=14)


class BomLineIn(Versioned):
    contract_form = BomLineForm
    quantity: int | None = Field(
        None, ge=-MAX_PK, le=MAX_PK, description="On a generated line: a hand-set override."
    )
    pinned_offer: int | None = Field(
        None,
        ge=1,
        le=MAX_PK,
        description="The offer chosen for the line (one of its item's offers); null for the "
        "automatic choice.",
    )
    hs_code: str | None = Field(None, max_length=14)


class BomLineDetailOut(BomLineOut):
    version: int


def line_out(line) -> dict[str, Any]:
    return bom_line_out(line) | {"version": line.version}


@router.post(
    "/plans/{plan_id}/bom/lines",
    **op({201: BomLineDetailOut}, 404),
    summary="Add a line by hand (a part, a server, a service or a described item)",
)
def bom_line_add(request, plan_id: Id, payload: BomLineAddIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    form = BomLineAddForm({k: _text(v) for k, v in sent_fields(payload).items()})
    for name in ("part", "server"):
        form.fields[name].to_field_name = "slug"  # the API names catalog rows by slug
    if not form.is_valid():
        return Status(
            refusal_status(form), {"errors": {k: list(v) for k, v in form.errors.items()}}
        )
    data = form.cleaned_data
    try:
        line = services.bom_line_add(
            plan=plan, user=actor(request), description=data["description"].strip(),
            quantity=data["quantity"], reason=data["reason"], part=data["part"],
            server=data["server"], service=data["service"], hs_code=data["hs_code"],
        )  # fmt: skip
    except services.SourcingError as exc:
        return Status(422, {"errors": {"__all__": [str(exc)]}})
    return Status(201, line_out(line))


def _line(request, plan_id: int, line_id: int):
    plan = plan_get(request, plan_id)
    return plan, selectors.bom_line_get(plan=plan, line_id=line_id)


@router.get(
    "/plans/{plan_id}/bom/lines/{line_id}", **op({200: BomLineDetailOut}, 404), summary="BOM line"
)
def bom_line_read(request, plan_id: Id, line_id: Id):
    return line_out(_line(request, plan_id, line_id)[1])


@router.patch(
    "/plans/{plan_id}/bom/lines/{line_id}",
    **op({200: BomLineDetailOut}, 404, 409),
    summary="Set a line's quantity (an override on a generated line), chosen offer or HS code",
)
def bom_line_update(request, plan_id: Id, line_id: Id, payload: BomLineIn):
    _, line = _line(request, plan_id, line_id)
    require_editor(request)
    offers = selectors.offers_for_line(
        list(selectors.offer_list(organisation=request.organisation)), line
    )
    initial = {
        "quantity": line.quantity,
        "pinned_offer": line.pinned_offer_id,
        "hs_code": line.hs_code,
    }

    def factory(data=None, *, instance):
        return BomLineForm(data, offers=offers, initial=initial, record=instance)

    sent = {k: _text(v) for k, v in sent_fields(payload).items()}
    try:
        form = bound_form(factory, sent=sent, version=payload.version, instance=line)
    except FormErrors as exc:
        return Status(exc.status, {"errors": exc.errors})
    services.bom_line_update(
        line=line, user=actor(request), quantity=form.cleaned_data["quantity"],
        pinned_offer=form.cleaned_data["pinned_offer"], hs_code=form.cleaned_data["hs_code"],
    )  # fmt: skip
    return Status(200, line_out(line))


@router.delete(
    "/plans/{plan_id}/bom/lines/{line_id}",
    **op({204: None}, 404, 409),
    summary="Remove a line: a manual line is deleted; a generated one is set to quantity 0 "
    "(kept out through regeneration)",
)
def bom_line_remove(request, plan_id: Id, line_id: Id):
    _, line = _line(request, plan_id, line_id)
    require_editor(request)
    services.bom_line_remove(line=line, user=actor(request))
    return Status(204, None)


# --- Decisions on conditional duties ------------------------------------------------------------


class MeasureDecisionIn(Versioned):
    contract_form = MeasureDecisionForm
    contract_names = {"measure": None}
    measure: str = Field(
        ...,
        max_length=200,
        description="The conditional duty's legal name, as GET .../duty-decisions lists it.",
    )
    decision: str | None = Field(
        None,
        max_length=20,
        description="applies (charged), does_not_apply (0 %, reason required) or unconfirmed "
        "(left out, its exposure shown, an open item).",
    )
    reason: str | None = Field(
        None, max_length=300, description="Why; required for does_not_apply (e.g. the "
        "end-use certificate reference).",
    )  # fmt: skip


class MeasureDecisionOut(Schema):
    measure: str
    pct: str = Field(..., description="Its rate, % of the customs value.")
    condition: str
    decision: str = Field(..., description="applies, does_not_apply or unconfirmed.")
    reason: str
    version: int | None = Field(..., description="null: never decided (unconfirmed).")
    exposure: str | None = Field(
        ..., description="Plan currency: what it adds where unconfirmed, if it applies."
    )
    duty_charged: str | None = Field(
        ..., description="Plan currency: the duty it adds where decided (0 when it does not apply)."
    )


def _decisions_out(plan, report) -> list[dict[str, Any]]:
    stored = {d.measure: d for d in plan.measure_decisions.all()}
    out = []
    for m in report.conditional_measures:
        row = stored.get(m.name)
        out.append(
            {
                "measure": m.name, "pct": str(m.pct), "condition": m.condition,
                "decision": row.decision if row else "unconfirmed",
                "reason": row.reason if row else "",
                "version": row.version if row else None,
                "exposure": str(m.exposure.amount) if m.exposure is not None else None,
                "duty_charged": str(m.charged.amount) if m.charged is not None else None,
            }
        )  # fmt: skip
    return out


@router.get(
    "/plans/{plan_id}/duty-decisions",
    **op({200: list[MeasureDecisionOut]}, 404),
    summary="The conditional duties (end use, exemption, quota) in force on the plan's lines, "
    "each with its decision",
)
def measure_decision_list(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    report = services.landed_cost_report(plan=plan, organisation=request.organisation)
    return _decisions_out(plan, report)


@router.put(
    "/plans/{plan_id}/duty-decisions",
    **op({200: MeasureDecisionOut}, 404, 409),
    summary="Decide a conditional duty for the plan: applies, does_not_apply (with the reason) "
    "or unconfirmed",
)
def measure_decision_put(request, plan_id: Id, payload: MeasureDecisionIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    report = services.landed_cost_report(plan=plan, organisation=request.organisation)
    if payload.measure not in {m.name for m in report.conditional_measures}:
        return Status(
            422,
            {"errors": {"measure": ["No conditional duty of that name is in force on the "
                                    "plan's lines (see GET .../duty-decisions)."]}},
        )  # fmt: skip
    row = services.measure_decision_get(plan=plan, measure=payload.measure)
    sent = {k: _text(v) for k, v in sent_fields(payload).items() if k != "measure"}

    def factory(data=None, *, instance):
        return MeasureDecisionForm(data, instance=instance)

    try:
        form = bound_form(factory, sent=sent, version=payload.version, instance=row)
        services.measure_decision_save(
            plan=plan, decision=form.save(commit=False), user=actor(request)
        )
    except FormErrors as exc:
        return Status(exc.status, {"errors": exc.errors})
    report = services.landed_cost_report(plan=plan, organisation=request.organisation)
    return next(d for d in _decisions_out(plan, report) if d["measure"] == payload.measure)


# --- Purchase orders -----------------------------------------------------------------------------


class PurchaseOrderCreateIn(InSchema):
    contract_form = PurchaseOrderCreateForm
    contract_create = True
    supplier: int = Field(
        ..., ge=1, le=MAX_PK, description="The supplier whose chosen offers to order."
    )
    logistics_owner: str | None = Field(None, max_length=200)


STEP_FIELDS = tuple(f for _, e, a in ORDER_STEPS for f in (e, a))


class PurchaseOrderIn(Versioned):
    contract_form = PurchaseOrderForm
    status: str | None = Field(None, max_length=12, description="planned, ordered, shipped, …")
    logistics_owner: str | None = Field(None, max_length=200)
    shipping_mode: str | None = Field(None, max_length=3, description="air or sea.")
    destination_country: str | None = Field(None, max_length=2)
    charges_currency: str | None = Field(None, max_length=3)
    freight: Money | None = None
    insurance: Money | None = Field(None, description="null: 0.3 % of 110 % of the value.")
    brokerage: Money | None = None
    inland_freight: Money | None = None
    allocation: str | None = Field(None, max_length=10)
    ordered_expected: date | None = None
    ordered_actual: date | None = None
    shipped_expected: date | None = None
    shipped_actual: date | None = None
    customs_expected: date | None = None
    customs_actual: date | None = None
    delivered_expected: date | None = None
    delivered_actual: date | None = None
    installed_expected: date | None = None
    installed_actual: date | None = None
    notes: str | None = Field(None, max_length=20_000)


class OrderLineOut(Schema):
    id: int
    bom_line: int | None
    offer: int
    description: str
    quantity: int
    hs_code: str


class PurchaseOrderOut(Schema):
    id: int
    version: int
    reference: str
    supplier: int
    supplier_name: str
    status: str
    cross_border: bool = Field(..., description="A line ships from outside the customs territory.")
    logistics_owner: str
    shipping_mode: str
    destination_country: str
    charges_currency: str
    freight: str
    insurance: str | None
    brokerage: str
    inland_freight: str
    allocation: str
    ordered_expected: str | None
    ordered_actual: str | None
    shipped_expected: str | None
    shipped_actual: str | None
    customs_expected: str | None
    customs_actual: str | None
    delivered_expected: str | None
    delivered_actual: str | None
    installed_expected: str | None
    installed_actual: str | None
    notes: str
    lines: list[OrderLineOut]


def order_out(order: PurchaseOrder) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": order.pk,
        "version": order.version,
        "reference": order.reference,
        "supplier": order.supplier_id,
        "supplier_name": order.supplier.name,
        "cross_border": services.order_is_cross_border(order),
        "lines": [
            {
                "id": line.pk,
                "bom_line": line.bom_line_id,
                "offer": line.offer_id,
                "description": line.description,
                "quantity": line.quantity,
                "hs_code": line.hs_code,
            }  # fmt: skip
            for line in order.lines.all()
        ],
    }
    for name in ("status", "logistics_owner", "shipping_mode", "destination_country",
                 "charges_currency", "allocation", "notes"):  # fmt: skip
        out[name] = getattr(order, name)
    for name in ("freight", "insurance", "brokerage", "inland_freight"):
        out[name] = _money(getattr(order, name))
    for name in STEP_FIELDS:
        out[name] = _iso(getattr(order, name))
    return out


def _order(request, plan_id: int, order_id: int):
    plan = plan_get(request, plan_id)
    return plan, selectors.purchase_order_get(plan=plan, order_id=order_id)


@router.get(
    "/plans/{plan_id}/purchase-orders",
    **op({200: list[PurchaseOrderOut]}, 404),
    summary="The plan's purchase orders",
)
def order_list(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    return [order_out(o) for o in selectors.purchase_order_list(plan=plan)]


@router.post(
    "/plans/{plan_id}/purchase-orders",
    **op({201: PurchaseOrderOut}, 404),
    summary="Order from a supplier every BOM line whose chosen offer is theirs and not yet "
    "ordered (expected dates from the schedule)",
)
def order_create(request, plan_id: Id, payload: PurchaseOrderCreateIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    suppliers = selectors.supplier_list(organisation=request.organisation)
    form = PurchaseOrderCreateForm(
        {k: _text(v) for k, v in sent_fields(payload).items()}, suppliers=suppliers
    )
    if not form.is_valid():
        return Status(
            refusal_status(form), {"errors": {k: list(v) for k, v in form.errors.items()}}
        )
    try:
        order = services.purchase_order_create(
            plan=plan, organisation=request.organisation,
            supplier=form.cleaned_data["supplier"], user=actor(request),
            logistics_owner=form.cleaned_data["logistics_owner"].strip(),
        )  # fmt: skip
    except services.SourcingError as exc:
        return Status(422, {"errors": {"supplier": [str(exc)]}})
    return Status(201, order_out(selectors.purchase_order_get(plan=plan, order_id=order.pk)))


@router.get(
    "/plans/{plan_id}/purchase-orders/{order_id}",
    **op({200: PurchaseOrderOut}, 404),
    summary="One purchase order",
)
def order_read(request, plan_id: Id, order_id: Id):
    return order_out(_order(request, plan_id, order_id)[1])


@router.patch(
    "/plans/{plan_id}/purchase-orders/{order_id}",
    **op({200: PurchaseOrderOut}, 404, 409),
    summary="Change an order: status, actual dates (the status follows the latest), charges",
)
def order_update(request, plan_id: Id, order_id: Id, payload: PurchaseOrderIn):
    plan, order = _order(request, plan_id, order_id)
    require_editor(request)
    cross_border = services.order_is_cross_border(order)

    def factory(data=None, *, instance):
        return PurchaseOrderForm(data, instance=instance, cross_border=cross_border)

    sent = {k: _text(v) for k, v in sent_fields(payload).items()}
    try:
        form = bound_form(factory, sent=sent, version=payload.version, instance=order)
    except FormErrors as exc:
        return Status(exc.status, {"errors": exc.errors})
    values = {n: form.cleaned_data[n] for n in form.changed_data}
    order.refresh_from_db()  # compare against what is stored, not the bound form
    services.purchase_order_update(order=order, changes=values, user=actor(request))
    return Status(200, order_out(selectors.purchase_order_get(plan=plan, order_id=order.pk)))
