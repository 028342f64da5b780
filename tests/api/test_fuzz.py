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
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
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


@pytest.fixture(autouse=True)
def _keep_the_test_connection(db):
    """Requests run in this thread inside the test's transaction: like Django's test client,
    keep the start and end of a request from closing the connection."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        yield
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


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
    return {
        "plan_id": sized_plan.pk,
        "workload_id": sized_plan.workloads.get().pk,
        "site_id": sized_plan.sites.get().pk,
        "number": revision.number,
        "run_id": run.pk,
        "link_id": link.pk,
        "fee_id": fee.pk,
    }


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_server_error_and_no_schema_violation(case, api, real_ids):
    for name, value in list((case.path_parameters or {}).items()):
        if name in real_ids and isinstance(value, int):
            case.path_parameters[name] = real_ids[name]
    case.call_and_validate(headers={"Authorization": api.headers["authorization"]}, checks=CHECKS)
