"""The JSON API (django-ninja): POST /api/v1/estimate, schema at /api/v1/openapi.json.

django-ninja was chosen over DRF because the schema comes straight from the typed request
and response classes below (pydantic), with no serializer layer or extra schema package.
Authentication: the browser session, or an organisation's API token as a Bearer header.
"""

from django.utils import timezone
from ninja import Field, NinjaAPI, Schema, Status
from ninja.errors import AuthenticationError, ValidationError
from ninja.security import HttpBearer, SessionAuth

from planner.engine.estimate import EstimateError, EstimateRequest
from planner.models import ApiToken, Membership
from planner.models.tokens import token_digest
from planner.sizing import SizingInputError, estimate_as_dict, estimate_run
from planner.versioning import StaleEditError


class TokenAuth(HttpBearer):
    """``Authorization: Bearer ipk_…`` with an active token of an organisation."""

    def authenticate(self, request, token: str):
        api_token = (
            ApiToken.objects.select_related("organisation")
            .filter(digest=token_digest(token), revoked_at__isnull=True)
            .first()
        )
        if api_token is None:
            return None
        ApiToken.objects.filter(pk=api_token.pk).update(last_used_at=timezone.now())
        request.organisation = api_token.organisation
        return api_token


class MemberSessionAuth(SessionAuth):
    """A signed-in member of an organisation (session cookie; ninja checks CSRF)."""

    def authenticate(self, request, key):
        user = super().authenticate(request, key)
        if user is None or not Membership.objects.filter(user=user).exists():
            return None
        return user


api = NinjaAPI(
    title="Inference Planner API",
    version="1",
    description="Estimates from the calibrated sizing engine. Authenticate with the session "
    "or `Authorization: Bearer <organisation API token>`.",
    urls_namespace="api",
    docs_url=None,  # the interactive docs page would load assets from a CDN
    auth=[TokenAuth(), MemberSessionAuth()],
)


class EstimateIn(Schema):
    model: str = Field(
        ..., description="Model slug, e.g. llama-3.1-70b.", examples=["llama-3.1-70b"]
    )
    accelerator: str = Field(..., description="Accelerator slug, e.g. h100-sxm.")
    accelerators: int = Field(..., ge=1, le=100_000, description="Accelerators in total.")
    precision: str = Field(..., description="bf16, fp8, int4 or fp4.")
    input_tokens: int = Field(..., ge=1, le=10_000_000)
    output_tokens: int = Field(..., ge=1, le=10_000_000)
    tensor_parallel: int | None = Field(None, ge=1, description="Chosen by the engine if omitted.")
    scenario: str | None = Field(
        None, description="offline or server; server when a target or a request rate is given."
    )
    ttft_ms: float | None = Field(None, gt=0)
    tpot_ms: float | None = Field(None, gt=0)
    percentile: int = Field(99, description="95 or 99.")
    request_rate: float | None = Field(None, gt=0, description="Offered requests per second.")


class EstimateOut(Schema):
    output_tokens_per_s: float
    requests_per_s: float
    ttft_ms: float
    tpot_ms: float
    latency_statistic: str
    batch_per_replica: int
    tensor_parallel: int
    replicas: int
    accelerators_used: int
    weights_gb: float
    kv_cache_bytes_per_token: float
    max_concurrent_sequences: int
    kv_cache_gb_per_gpu: float
    utilisation: float | None
    expected_error_pct: float = Field(
        ...,
        description="Error band (±%): the error on reference runs held out of the fit for the "
        "nearest calibrated group; the wider 90th-percentile error when the architecture has "
        "no reference runs.",
    )
    provenance: str = Field(..., description="Where the efficiency factors and the band come from.")
    calibration_version: str
    architecture: str = Field(..., description="Architecture class, e.g. 'dense GQA'.")
    calibrated_architecture: bool = Field(
        ..., description="False: uncalibrated for this architecture (no reference runs)."
    )


class ErrorOut(Schema):
    errors: dict[str, list[str]]


@api.exception_handler(ValidationError)
def validation_errors(request, exc: ValidationError):
    """Field errors as {"errors": {field: [message, ...]}} with status 400."""
    errors: dict[str, list[str]] = {}
    for error in exc.errors:
        location = [str(part) for part in error.get("loc", ()) if part not in ("body", "payload")]
        errors.setdefault(".".join(location) or "body", []).append(error.get("msg", "invalid"))
    return api.create_response(request, {"errors": errors}, status=400)


@api.exception_handler(AuthenticationError)
def unauthenticated(request, exc):
    return api.create_response(
        request,
        {"errors": {"auth": ["Sign in, or send 'Authorization: Bearer <API token>'."]}},
        status=401,
    )


@api.exception_handler(StaleEditError)
def stale_edit(request, exc: StaleEditError):
    """A save based on an outdated version of a row: 409 with what changed meanwhile.

    Endpoints that edit stored rows save through the same services as the forms (which
    raise :class:`StaleEditError`) and list ``CONFLICT`` in their responses.
    """
    return api.create_response(request, {"errors": exc.as_error_dict()}, status=409)


# For ``response=`` of endpoints that edit stored rows: documents the 409 in the schema.
CONFLICT = {409: ErrorOut}


@api.post(
    "/estimate",
    response={200: EstimateOut, 400: ErrorOut},
    summary="Estimate throughput and latency of N accelerators serving one model",
)
def estimate_endpoint(request, payload: EstimateIn):
    has_target = payload.ttft_ms is not None or payload.tpot_ms is not None
    scenario = payload.scenario or (
        "server" if has_target or payload.request_rate is not None else "offline"
    )
    engine_request = EstimateRequest(
        model=payload.model,
        accelerator=payload.accelerator,
        accelerators=payload.accelerators,
        precision=payload.precision,
        input_tokens=payload.input_tokens,
        output_tokens=payload.output_tokens,
        tensor_parallel=payload.tensor_parallel,
        scenario=scenario,
        ttft_ms=payload.ttft_ms,
        tpot_ms=payload.tpot_ms,
        percentile=payload.percentile,
        request_rate=payload.request_rate,
    )
    try:
        return Status(200, estimate_as_dict(estimate_run(engine_request)))
    except SizingInputError as exc:
        return Status(400, {"errors": {exc.field: [str(exc)]}})
    except EstimateError as exc:
        return Status(400, {"errors": {"__all__": [str(exc)]}})
