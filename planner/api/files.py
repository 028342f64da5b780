"""Portable plan files over the API: ``GET /plans/{id}/export`` and ``POST /plans/import``."""

from __future__ import annotations

from typing import Any

from ninja import Router, Status

from planner.api.common import op, plan_get, require_editor
from planner.api.contract import NON_BLANK_PATTERN
from planner.api.plans import Id, PlanOut, actor, plan_out
from planner.portable import (
    FORMAT,
    MAX_ROWS,
    READABLE_VERSIONS,
    VERSION,
    PortableError,
    plan_document_parse,
    plan_export,
    plan_import,
)

router = Router(tags=["plan files"])

DOCUMENT_SCHEMA = {
    "type": "object",
    "description": f"A portable plan file: format '{FORMAT}', version {VERSION}, with the "
    "client, plan, workloads (with site splits), sites, TCO, placement, sourcing and quote "
    "settings, quote fees, BOM lines, the suppliers' offers and the purchase orders. Version 1 files still import.",
    "required": ["format", "version", "client", "plan"],
    "additionalProperties": False,
    "properties": {
        "format": {"type": "string", "enum": [FORMAT]},
        "version": {"type": "integer", "enum": list(READABLE_VERSIONS)},
        "client": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 200,
                    "pattern": NON_BLANK_PATTERN,
                }
            },
        },
        "plan": {"type": "object"},
        "workloads": {
            "type": "array",
            "items": {"type": "object"},
            "maxItems": MAX_ROWS["workloads"],
        },
        "sites": {"type": "array", "items": {"type": "object"}, "maxItems": MAX_ROWS["sites"]},
        "tco_settings": {"type": ["object", "null"]},
        "placement_decision": {"type": ["object", "null"]},
        "sourcing_settings": {"type": ["object", "null"]},
        "quote_settings": {"type": ["object", "null"]},
        "quote_fees": {
            "type": "array",
            "items": {"type": "object"},
            "maxItems": MAX_ROWS["quote_fees"],
        },
        "bom_lines": {
            "type": "array",
            "items": {"type": "object"},
            "maxItems": MAX_ROWS["bom_lines"],
        },
        "suppliers": {
            "type": "array",
            "items": {"type": "object"},
            "maxItems": MAX_ROWS["suppliers"],
        },
        "purchase_orders": {
            "type": "array",
            "items": {"type": "object"},
            "maxItems": MAX_ROWS["purchase_orders"],
            "description": "Version 2 and later.",
        },
    },
}


@router.get(
    "/plans/{plan_id}/export",
    **op({200: dict[str, Any]}, 404),
    summary="The plan as a portable, versioned JSON document (no database ids)",
)
def plan_export_endpoint(request, plan_id: Id):
    return plan_export(plan_get(request, plan_id))


def _import_op() -> dict:
    spec = op({201: PlanOut})
    spec["openapi_extra"]["requestBody"] = {
        "required": True,
        "content": {"application/json": {"schema": DOCUMENT_SCHEMA}},
    }
    return spec


@router.post(
    "/plans/import",
    **_import_op(),
    summary="Rebuild a plan from a portable file in your organisation; all or nothing",
)
def plan_import_endpoint(request):
    require_editor(request)
    try:
        document = plan_document_parse(request.body)
    except PortableError as exc:  # not JSON, too large or too deep: its shape
        return Status(400, {"errors": exc.errors})
    try:
        plan = plan_import(document, organisation=request.organisation, user=actor(request))
    except PortableError as exc:  # a document whose content the plan's rules refuse
        return Status(422, {"errors": exc.errors})
    return Status(201, plan_out(plan))
