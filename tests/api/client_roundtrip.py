"""A round trip of a plan through the API with a client generated from the OpenAPI document.

Imported by ``test_generated_client.py`` once ``planner_client`` has been generated (it is not
installed), and type-checked with mypy together with the generated package: a request this
module builds from the typed models must be one the server accepts, and every response must
parse into its typed model.
"""

from __future__ import annotations

from typing import Any, TypeVar

import attrs
from planner_client import AuthenticatedClient
from planner_client.api.plan_files import plan_export_endpoint, plan_import_endpoint
from planner_client.api.plans import plan_read, workload_create, workload_list, workload_read
from planner_client.api.sites import site_create, site_list
from planner_client.models import (
    ErrorOut,
    PlanExportEndpointResponse,
    PlanImportEndpointBody,
    PlanOut,
    SiteCreateIn,
    SiteOut,
    WorkloadCreateIn,
    WorkloadOut,
)

T = TypeVar("T")


class RefusedError(AssertionError):
    """The server refused a request the typed client built."""


def _ok(answer: T | ErrorOut | None) -> T:
    if answer is None or isinstance(answer, ErrorOut):
        errors = answer.errors.to_dict() if isinstance(answer, ErrorOut) else "no answer"
        raise RefusedError(f"refused: {errors}")
    return answer


def _create_body(model: type[T], read: dict[str, Any]) -> T:
    """A create body of ``model`` from what a read returned: the fields the body has, minus
    the row's version (a new row has none)."""
    names = set(attrs.fields_dict(model)) - {"version"}  # type: ignore[arg-type]
    return model.from_dict({k: v for k, v in read.items() if k in names})  # type: ignore[attr-defined, no-any-return]


@attrs.frozen
class RoundTrip:
    exported: dict[str, Any]
    imported_plan: PlanOut
    reexported: dict[str, Any]
    workload_sent: dict[str, Any]
    workload_read: dict[str, Any]
    site_sent: dict[str, Any]
    site_read: dict[str, Any]


def plan_round_trip(client: AuthenticatedClient, plan_id: int) -> RoundTrip:
    """Export a plan, import it as a new plan, export that; then copy a workload and a site of
    the original into the copy through the typed create bodies and read them back."""
    original = _ok(plan_read.sync(plan_id, client=client))
    exported = _ok(plan_export_endpoint.sync(original.id, client=client))
    assert isinstance(exported, PlanExportEndpointResponse)
    document = exported.to_dict()
    imported = _ok(
        plan_import_endpoint.sync(client=client, body=PlanImportEndpointBody.from_dict(document))
    )
    reexported = _ok(plan_export_endpoint.sync(imported.id, client=client)).to_dict()

    workloads: list[WorkloadOut] = _ok(workload_list.sync(original.id, client=client))
    workload_body = _create_body(WorkloadCreateIn, workloads[0].to_dict())
    workload_body.name = f"{workload_body.name} (copy)"
    created = _ok(workload_create.sync(imported.id, client=client, body=workload_body))
    workload_back = _ok(workload_read.sync(imported.id, created.id, client=client))

    sites: list[SiteOut] = _ok(site_list.sync(original.id, client=client))
    site_body = _create_body(SiteCreateIn, sites[0].to_dict())
    site_body.name = f"{site_body.name} (copy)"
    site_back = _ok(site_create.sync(imported.id, client=client, body=site_body))

    return RoundTrip(
        exported=document,
        imported_plan=imported,
        reexported=reexported,
        workload_sent=workload_body.to_dict(),
        workload_read=workload_back.to_dict(),
        site_sent=site_body.to_dict(),
        site_read=site_back.to_dict(),
    )
