"""The OpenAPI document is the contract: a request valid by the schema is not refused for its
shape (schemathesis' positive-data acceptance), and one invalid by it is refused
(negative-data rejection), over every operation."""

import os

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from tests.api.test_fuzz import (  # noqa: F401
    bounded,
    call_with_real_ids,
    real_ids,
)

pytestmark = pytest.mark.usefixtures("wsgi_in_this_thread")
EXAMPLES = int(os.environ.get("API_CONTRACT_EXAMPLES", "25"))

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())
schema.config.generation.update(modes=[GenerationMode.POSITIVE])
# 422: well formed, refused by a rule of the domain the document cannot state (a catalog
# lookup, a rule across fields); the server answers shape errors with 400 (SHAPE_CODES).
schema.config.checks.positive_data_acceptance.expected_statuses = [
    "2xx", "401", "403", "404", "409", "422",
]  # fmt: skip


@schema.parametrize()
@bounded(EXAMPLES)
def test_schema_valid_requests_are_accepted(case, api, real_ids):  # noqa: F811
    call_with_real_ids(case, api, real_ids, [not_a_server_error, positive_data_acceptance])


negative = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())
# Every operation takes a Bearer token or the session cookie: leaving one out is not invalid.
# Query parameters an operation does not declare are ignored, as HTTP APIs do.
negative.config.generation.update(
    modes=[GenerationMode.NEGATIVE], with_security_parameters=False, allow_extra_parameters=False
)


@negative.parametrize()
@bounded(EXAMPLES)
def test_schema_invalid_requests_are_refused(case, api, real_ids):  # noqa: F811
    call_with_real_ids(case, api, real_ids, [not_a_server_error, negative_data_rejection])
