"""Schemathesis against /api/v1/openapi.json: generated requests (valid and invalid) to every
operation find no 5xx and no response that violates the documented schema.

Deterministic and bounded: hypothesis derandomized, no example database, API_FUZZ_EXAMPLES
examples per operation (5 unless set). Path ids that come out as integers are pointed at a
real plan of the caller's organisation (its workload, site, revision, TCO run, share link
and quote fee), so the endpoints' own code runs, not only their 404.
"""

import os

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

EXAMPLES = int(os.environ.get("API_FUZZ_EXAMPLES", "5"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


# Loaded once at collection (the schema view reads no database).
schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())


# Requests go through the WSGI app in this thread, inside the test's transaction.
pytestmark = pytest.mark.usefixtures("wsgi_in_this_thread")


@pytest.fixture
def real_ids(sized_plan, consultant_a, settings, tmp_path):
    from planner.facility.models import TcoRun
    from planner.sharing import services
    from sourcing.models import QuoteFee

    settings.MEDIA_ROOT = tmp_path / "media"
    revision = services.revision_publish(plan=sized_plan, user=consultant_a, with_open_items=True)
    link = services.share_link_create(
        plan=sized_plan, user=consultant_a, revision=None, expires_at=None, note=""
    )
    run = TcoRun.objects.create(plan=sized_plan, input_hash="0" * 64, inputs={})
    fee = QuoteFee.objects.create(
        plan=sized_plan, kind="design", description="Workshop", quantity=1, unit_price=100
    )
    return _sourcing_ids(sized_plan) | {
        "plan_id": sized_plan.pk,
        "workload_id": sized_plan.workloads.get().pk,
        "site_id": sized_plan.sites.get().pk,
        "number": revision.number,
        "run_id": run.pk,
        "link_id": link.pk,
        "fee_id": fee.pk,
    }


def bounded(examples: int):
    """Hypothesis settings for a deterministic, bounded run of ``examples`` per operation."""
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )


@schema.parametrize()
@bounded(EXAMPLES)
def test_no_server_error_and_no_schema_violation(case, api, real_ids):
    call_with_real_ids(case, api, real_ids, CHECKS)


def call_with_real_ids(case, api, real_ids, checks) -> None:
    """Send ``case`` with the token of ``api``, its integer path ids pointed at the plan's
    real rows (so the endpoints' own code runs, not only their 404), and run ``checks``."""
    for name, value in list((case.path_parameters or {}).items()):
        if name in real_ids and isinstance(value, int):
            case.path_parameters[name] = real_ids[name]
    case.call_and_validate(headers={"Authorization": api.headers["authorization"]}, checks=checks)


def _sourcing_ids(plan) -> dict:
    """A supplier, its offer, a BOM line pinned to it and a purchase order of the plan."""
    from datetime import date
    from decimal import Decimal

    from catalog.models import Part
    from sourcing.models import BomLine, Offer, PurchaseOrder, PurchaseOrderLine, Supplier

    part = Part.objects.get(slug="rack-42u")
    supplier = Supplier.objects.create(organisation=plan.organisation, name="Fuzz", country="NL")
    offer = Offer.objects.create(
        supplier=supplier, part=part, unit_price=Decimal("1000"), currency="EUR",
        lead_time_days=10, quoted_on=date(2026, 1, 5), valid_until=date(2027, 1, 5),
        origin_country="NL",
    )  # fmt: skip
    line = BomLine.objects.create(
        plan=plan, part_key="manual:part:rack-42u", category="rack", description="Rack",
        quantity=2, origin="manual", part=part, pinned_offer=offer,
    )  # fmt: skip
    order = PurchaseOrder.objects.create(
        plan=plan, supplier=supplier, reference="PO-001", destination_country="NL",
        charges_currency="EUR",
    )  # fmt: skip
    PurchaseOrderLine.objects.create(
        order=order, bom_line=line, offer=offer, description="Rack", quantity=2
    )
    return {
        "supplier_id": supplier.pk,
        "offer_id": offer.pk,
        "line_id": line.pk,
        "order_id": order.pk,
    }
