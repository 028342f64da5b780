"""Sourcing and client review: the BOM, landed cost, timeline, revisions, share links and the
revision documents. Each endpoint calls the service its page calls."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpResponse
from django.urls import reverse
from ninja import Field, Router, Schema, Status

from planner import jobs
from planner.api.common import InSchema, JobOut, job_out, op, plan_get, require_editor
from planner.api.plans import Id, actor
from planner.api.results import plain
from planner.sharing import selectors as sharing_selectors
from planner.sharing import services as sharing_services
from planner.sharing.models import DocumentKind, DocumentStatus, PlanRevision
from sourcing import selectors as sourcing_selectors
from sourcing import services as sourcing_services

router = Router(tags=["sourcing and review"])


# --- BOM, landed cost, timeline ----------------------------------------------------------------


class BomLineOut(Schema):
    id: int
    part_key: str
    category: str
    description: str
    quantity: int
    reason: str
    origin: str = Field(..., description="generated, override (hand-set quantity) or manual.")
    generated_quantity: int | None
    part: str | None
    server: str | None
    accelerator: str | None
    service: str
    hs_code: str
    pinned_offer: int | None
    site: int | None = Field(None, description="The site the units go to; null = plan-wide.")


def _slug(row) -> str | None:
    return row.slug if row is not None else None


def bom_line_out(line) -> dict[str, Any]:
    return {
        "id": line.pk,
        "part_key": line.part_key,
        "category": line.category,
        "description": line.description,
        "quantity": line.quantity,
        "reason": line.reason,
        "origin": line.origin,
        "generated_quantity": line.generated_quantity,
        "part": _slug(line.part),
        "server": _slug(line.server),
        "accelerator": _slug(line.accelerator),
        "service": line.service,
        "hs_code": line.hs_code,
        "pinned_offer": line.pinned_offer_id,
        "site": line.site_id,
    }


def _bom(plan) -> list[dict[str, Any]]:
    lines = sourcing_selectors.bom_line_list(plan=plan)
    return [bom_line_out(line) for line in lines.select_related("part", "server", "accelerator")]


class BomGeneratedOut(Schema):
    changes: list[str] = Field(..., description="What a regeneration changed, in plain words.")
    lines: list[BomLineOut]


@router.get("/plans/{plan_id}/bom", **op({200: list[BomLineOut]}, 404), summary="The BOM")
def bom(request, plan_id: Id):
    return _bom(plan_get(request, plan_id))


@router.post(
    "/plans/{plan_id}/bom/generate",
    **op({200: BomGeneratedOut}, 404),
    summary="Generate (or regenerate) the BOM from the chosen configurations; manual lines stay",
)
def bom_generate(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    require_editor(request)
    try:
        changes = sourcing_services.bom_generate(plan=plan, user=actor(request))
    except sourcing_services.SourcingError as exc:
        return Status(422, {"errors": {"__all__": [str(exc)]}})
    return Status(200, {"changes": list(changes), "lines": _bom(plan)})


class LandedCostOut(Schema):
    currency: str
    as_of: str
    destination: str
    complete: bool = Field(..., description="False when a line has no offer, HS code or rule.")
    problems: list[str]
    total_net: Any
    total_gross: Any
    vat_recoverable: Any
    reverse_charge_vat: Any
    vat_not_recoverable: Any = Field(
        None, description="VAT the client cannot recover (its VAT recovery): in total_net."
    )
    vat_recovery_pct: Any = Field(None, description="The client's VAT recovery, 0-100 %.")
    exposure_to_confirm: Any = Field(
        None,
        description="What the conditional duties still to confirm (end use, exemption, quota) "
        "would add if they apply; not in total_net. Each line lists its measures_to_confirm, and "
        "its measures_decided (PUT /plans/{id}/duty-decisions: charged, or 0 % with the reason).",
    )
    measures_to_confirm: int = 0
    unpriced_lines: int
    lines: list[dict[str, Any]]
    shipments: list[dict[str, Any]]
    sites: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Per site: the country its lines are landed into and its totals.",
    )
    option_text: str = Field(
        "", description="What the BOM buys: the chosen option's hardware, in one sentence."
    )
    buys_hardware: bool = Field(
        True, description="False when the chosen option (the public cloud) buys no hardware."
    )


@router.get(
    "/plans/{plan_id}/landed-cost",
    **op({200: LandedCostOut}, 404),
    summary="Chosen offer and landed cost per BOM line and per shipment, in the plan currency",
)
def landed_cost(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    report = sourcing_services.landed_cost_report(plan=plan, organisation=request.organisation)
    out = plain(report)
    out["lines"] = [plain(line) | {"status": line.status} for line in report.lines]
    out["sites"] = [
        {"site": plain(s.site), "destination": s.destination, "totals": plain(s.totals)}
        for s in report.sites
    ]
    option = sourcing_services.bom_option_shown(plan=plan)
    out["option_text"], out["buys_hardware"] = option["text"], option["buys_hardware"]
    return out


class TimelineOut(Schema):
    order_date: str
    power_ready: str
    power_ready_note: str
    target_go_live: str | None
    go_live: str | None = Field(..., description="By the critical path.")
    late_against_target_days: int | None
    slips: dict[str, Any] | None
    notes: list[str]
    problem: str


@router.get(
    "/plans/{plan_id}/timeline",
    **op({200: TimelineOut}, 404),
    summary="Go-live by the critical path, with the slips that moved it",
)
def timeline(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    report = sourcing_services.timeline_report(plan=plan, organisation=request.organisation)
    out = plain(report)
    out.pop("item_lines", None)
    out["go_live"] = plain(report.go_live)
    out["late_against_target_days"] = report.late_against_target_days
    return out


# --- Revisions ---------------------------------------------------------------------------------


class RevisionOut(Schema):
    number: int
    published_at: str
    published_by: str
    note: str
    url: str = Field(..., description="The API URL of the revision's snapshot.")
    documents: dict[str, str] = Field(..., description="Kind → the document's API URL.")


class RevisionDetailOut(RevisionOut):
    schema_version: int
    snapshot: dict[str, Any] = Field(..., description="Every input and result it shows.")


def revision_out(revision: PlanRevision) -> dict[str, Any]:
    args = [revision.plan_id, revision.number]
    return {
        "number": revision.number,
        "published_at": revision.published_at.isoformat(),
        "published_by": revision.published_by_name,
        "note": revision.note,
        "url": reverse("api:revision", args=args),
        "documents": {
            kind: reverse("api:document", args=[*args, kind]) for kind in DocumentKind.values
        },
    }


class PublishIn(InSchema):
    note: str = Field("", max_length=300, description="What changed (shown to the client).")
    with_open_items: bool = Field(
        False,
        description="Publish although results the revision includes are stale, failed or "
        "missing (the page's tick box); the revision then lists them to the client. Without "
        "it such a publish is refused with 400 naming them.",
    )


class PublishOut(RevisionOut):
    published: bool = Field(..., description="False: nothing changed since this revision.")


@router.post(
    "/plans/{plan_id}/revisions",
    **op({201: PublishOut, 200: PublishOut}, 404, 409),
    summary="Publish the plan as its next revision (the review page's rules)",
)
def revision_publish(request, plan_id: Id, payload: PublishIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    try:
        revision = sharing_services.revision_publish(
            plan=plan,
            user=actor(request),
            note=payload.note,
            with_open_items=payload.with_open_items,
        )
    except sharing_services.NothingToPublish as exc:
        return Status(200, revision_out(exc.revision) | {"published": False})
    except sharing_services.SharingError as exc:
        return Status(422, {"errors": {exc.field or "__all__": [str(exc)]}})
    return Status(201, revision_out(revision) | {"published": True})


@router.get(
    "/plans/{plan_id}/revisions",
    **op({200: list[RevisionOut]}, 404),
    summary="The plan's published revisions",
)
def revision_list(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    return [revision_out(r) for r in sharing_selectors.revision_list(plan=plan)]


@router.get(
    "/plans/{plan_id}/revisions/{number}",
    **op({200: RevisionDetailOut}, 404),
    url_name="revision",
    summary="One revision with its typed snapshot",
)
def revision_read(request, plan_id: Id, number: Id):
    revision = sharing_selectors.revision_get(plan=plan_get(request, plan_id), number=number)
    return revision_out(revision) | {
        "schema_version": revision.schema_version,
        "snapshot": revision.snapshot,
    }


# --- Share links -------------------------------------------------------------------------------


class ShareLinkIn(InSchema):
    revision: int | None = Field(
        None, ge=1, le=2**31 - 1, description="A revision number; empty: always the latest."
    )
    expires_at: datetime | None = Field(None, description="Empty: until revoked.")
    note: str = Field("", max_length=200)


class ShareLinkOut(Schema):
    id: int
    url: str = Field(..., description="The public page's address (send it to the client).")
    revision: int | None
    expires_at: str | None
    note: str
    revoked_at: str | None


def share_link_out(request, link) -> dict[str, Any]:
    return {
        "id": link.pk,
        "url": request.build_absolute_uri(reverse("sharing:public", args=[link.token])),
        "revision": link.revision.number if link.revision_id else None,
        "expires_at": link.expires_at.isoformat() if link.expires_at else None,
        "note": link.note,
        "revoked_at": link.revoked_at.isoformat() if link.revoked_at else None,
    }


@router.post(
    "/plans/{plan_id}/share-links",
    **op({201: ShareLinkOut}, 404),
    summary="A share link to the latest (or one) published revision",
)
def share_link_create(request, plan_id: Id, payload: ShareLinkIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    revision = None
    if payload.revision is not None:
        revision = PlanRevision.objects.filter(plan=plan, number=payload.revision).first()
        if revision is None:
            message = f"The plan has no revision {payload.revision}."
            return Status(422, {"errors": {"revision": [message]}})
    try:
        link = sharing_services.share_link_create(
            plan=plan,
            user=actor(request),
            revision=revision,
            expires_at=payload.expires_at,
            note=payload.note,
        )
    except sharing_services.SharingError as exc:
        return Status(422, {"errors": {exc.field or "__all__": [str(exc)]}})
    return Status(201, share_link_out(request, link))


@router.delete(
    "/plans/{plan_id}/share-links/{link_id}",
    **op({204: None}, 404),
    summary="Revoke a share link at once",
)
def share_link_revoke(request, plan_id: Id, link_id: Id):
    link = sharing_selectors.share_link_get(plan=plan_get(request, plan_id), link_id=link_id)
    require_editor(request)
    sharing_services.share_link_revoke(link=link, user=actor(request))
    return Status(204, None)


# --- Documents ---------------------------------------------------------------------------------


class DocumentOut(JobOut):
    status_url: str = Field(..., description="Poll it: 200 with the PDF once rendered.")


PDF = {
    200: {
        "description": "The PDF, once rendered.",
        "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}},
    }
}


def _document_op() -> dict:
    spec = op({202: DocumentOut}, 404)
    spec["openapi_extra"]["responses"] |= PDF
    return spec


@router.get(
    "/plans/{plan_id}/revisions/{number}/documents/{kind}.pdf",
    **_document_op(),
    url_name="document",
    summary="A revision's quote, checklist or report: 202 while it renders, then the PDF",
)
def document(request, plan_id: Id, number: Id, kind: DocumentKind):
    revision = sharing_selectors.revision_get(plan=plan_get(request, plan_id), number=number)
    document = sharing_selectors.document_get(revision=revision, kind=kind)
    if document is None or document.status != DocumentStatus.SUCCEEDED or not document.file:
        document, _ = sharing_services.document_request(revision=revision, kind=kind)
        document.refresh_from_db()
        jobs.job_expire_if_lost(document)
    if document.status == DocumentStatus.SUCCEEDED and document.file:
        response = HttpResponse(
            sharing_services.document_bytes(document), content_type="application/pdf"
        )
        filename = sharing_services.document_filename(revision=revision, kind=kind)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
    return Status(202, job_out(document, status_url=request.path))
