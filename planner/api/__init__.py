"""The JSON API (django-ninja) under /api/v1/, schema at /api/v1/openapi.json.

This module holds the API object, authentication, the error handlers and the estimate;
the plan endpoints live in the sibling modules (``planner.api.plans`` …), added as routers
at the end of this module.

django-ninja was chosen over DRF because the schema comes straight from the typed request
and response classes below (pydantic), with no serializer layer or extra schema package.
Authentication: the browser session, or an organisation's API token as a Bearer header.

Every error, whatever raised it (a field, an unreadable body, missing credentials, a failed
CSRF check, an estimate the engine refuses, an unexpected fault), is one shape:
``{"errors": {"<field, body, auth or __all__>": ["message", ...]}}``. No response holds NaN
or Infinity: a figure the engine cannot bound is ``null`` and ``notes`` says why.
"""

import json
import logging
from typing import Literal

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, RequestDataTooBig
from django.db.models import ProtectedError
from django.http import Http404
from django.utils import timezone
from ninja import Field, NinjaAPI, Schema, Status
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.renderers import JSONRenderer
from ninja.security import HttpBearer, SessionAuth

from planner.api.common import InSchema
from planner.engine import limits
from planner.engine.errors import EngineInputError
from planner.engine.estimate import EstimateRequest
from planner.engine.limits import finite_or_none
from planner.engine.specs import PRECISIONS
from planner.models import ApiToken, Membership
from planner.models.tokens import token_digest
from planner.sizing import SizingInputError, estimate_as_dict, estimate_run
from planner.versioning import StaleEditError

logger = logging.getLogger(__name__)


class FiniteJSONRenderer(JSONRenderer):
    """Strict JSON: never writes NaN or Infinity (they are not JSON and break clients)."""

    json_dumps_params = {"allow_nan": False}

    def render(self, request, data, *, response_status):
        return json.dumps(finite_or_none(data), cls=self.encoder_class, **self.json_dumps_params)


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


class PlannerAPI(NinjaAPI):
    """The API object; an operation's id is its view's name (``plan_create``), which a client
    generated from the document uses as its function name (ninja's default prefixes the
    module path). ``tests/api/test_generated_client.py`` checks the ids are unique."""

    def get_openapi_operation_id(self, operation) -> str:
        return operation.view_func.__name__


api = PlannerAPI(
    title="Inference Planner API",
    version="1",
    description="Estimates from the calibrated sizing engine. Authenticate with the session "
    "or `Authorization: Bearer <organisation API token>`. Every error has one shape, "
    '`{"errors": {"<field | body | auth | __all__>": ["message"]}}`, with status 400 (a '
    "request whose shape this document refuses, or an unreadable body), 422 (well formed, "
    "but a rule of the domain refuses it: the message says which), 401 (no valid credentials), 403 (CSRF check of a session "
    "request failed) or 500 (unexpected fault, logged). No number is ever NaN or Infinity: a "
    "figure the engine cannot bound is null and `notes` says why.",
    urls_namespace="api",
    docs_url=None,  # the interactive docs page would load assets from a CDN
    auth=[TokenAuth(), MemberSessionAuth()],
    renderer=FiniteJSONRenderer(),
)

LATENCY = limits.ENGINE_LATENCY_MS
SLUG = r"^[a-z0-9][a-z0-9._-]*$"  # catalog slugs; keeps NUL and other bytes out of queries


class EstimateIn(InSchema):
    model: str = Field(
        ...,
        description="Model slug, e.g. llama-3.1-70b.",
        examples=["llama-3.1-70b"],
        pattern=SLUG,
        max_length=120,
    )
    accelerator: str = Field(
        ..., description="Accelerator slug, e.g. h100-sxm.", pattern=SLUG, max_length=120
    )
    accelerators: int = Field(..., ge=1, le=100_000, description="Accelerators in total.")
    precision: Literal[PRECISIONS] = Field(  # type: ignore[valid-type]
        ..., description="bf16, fp8, int4 (weight-only) or fp4."
    )
    input_tokens: int = Field(..., ge=1, le=10_000_000)
    output_tokens: int = Field(..., ge=1, le=10_000_000)
    tensor_parallel: int | None = Field(
        None, ge=1, le=1024, description="Chosen by the engine if omitted."
    )
    scenario: Literal["offline", "server"] | None = Field(
        None, description="offline or server; server when a target or a request rate is given."
    )
    ttft_ms: float | None = Field(None, gt=0, le=LATENCY.high, allow_inf_nan=False)
    tpot_ms: float | None = Field(None, gt=0, le=LATENCY.high, allow_inf_nan=False)
    percentile: Literal[95, 99] = Field(99, description="95 or 99.")
    request_rate: float | None = Field(
        None,
        gt=0,
        le=limits.PEAK_REQUESTS_PER_S.high,
        allow_inf_nan=False,
        description="Offered requests per second.",
    )
    concurrency: int | None = Field(
        None,
        ge=1,
        le=10_000_000,
        description="Requests in flight over all accelerators (closed loop); gives per-user "
        "and total tokens/s, TTFT and TPOT.",
    )
    kv_cache_dtype: str = Field(
        "auto",
        description="KV-cache data type: auto (vLLM's default: the model's dtype, BF16), bf16 "
        "or fp8.",
        pattern="^(auto|bf16|fp8)$",
        max_length=8,
    )
    serving: str = Field(
        "aggregated",
        description="aggregated, or disaggregated: separate prefill and decode replica pools "
        "with the KV cache moved between them (DistServe, Splitwise, NVIDIA Dynamo); the "
        "accelerators are split between the pools. Needs ttft_ms and tpot_ms.",
        pattern="^(aggregated|disaggregated)$",
        max_length=16,
    )
    pipeline_parallel: int = Field(
        1,
        ge=1,
        le=64,
        description="Pipeline stages per replica; stages on other servers talk "
        "over the scale-out fabric.",
    )
    expert_parallel: int = Field(
        1,
        ge=1,
        le=1024,
        description="Expert-parallel degree for MoE models (a multiple of "
        "TP: the replica's GPUs, attention data-parallel over EP/TP servers); 1 for none.",
    )
    serving_stack: str = Field(
        "vllm",
        description="Serving engine whose memory rule and scheduler cap apply: vllm (the "
        "default: gpu_memory_utilization of the whole memory, max_num_seqs 1024 on parts of "
        "70 GiB or more, else 256), sglang (its default mem_fraction_static reserve by GPU "
        "size, at least 2048 running requests; NVIDIA and AMD) or trtllm (KV from the memory "
        "left after the weights, up to 2048 requests; NVIDIA only).",
        pattern="^(vllm|sglang|trtllm)$",
        max_length=8,
    )
    serving_stack_version: str = Field(
        "",
        description="The stack's version as you name it, e.g. 0.11.2; named in the "
        "provenance (the engine has one rule per stack).",
        pattern=r"^([0-9A-Za-z][0-9A-Za-z.+_-]*)?$",
        max_length=40,
    )
    variable_lengths: bool = Field(
        False,
        description="Prompts vary in length around the mean (a dataset such as MLPerf's): "
        "latency percentiles take a long prompt and a variable prefill queue.",
    )


UNBOUNDED = "null when the engine finds no finite value; `notes` says why."


class EstimateOut(Schema):
    output_tokens_per_s: float
    requests_per_s: float
    ttft_ms: float | None = Field(..., description=UNBOUNDED)
    tpot_ms: float | None = Field(..., description=UNBOUNDED)
    latency_statistic: str
    batch_per_replica: int
    tensor_parallel: int
    replicas: int
    accelerators_used: int
    weights_gb: float
    kv_cache_bytes_per_token: float
    max_concurrent_sequences: int
    kv_cache_gb_per_gpu: float
    kv_cache_gib_per_gpu: float = Field(..., description="KV budget per GPU in GiB (2**30).")
    kv_cache_dtype: str = Field(..., description="KV dtype used: bf16 or fp8 (auto resolved).")
    kv_cache_bytes_per_token_per_gpu: float = Field(
        ..., description="KV bytes one token occupies on each GPU of a replica."
    )
    kv_replication: int = Field(
        ..., description="TP ranks that store the same KV (TP replication); 1 for none."
    )
    kv_note: str = Field(..., description="The per-GPU KV layout in one sentence.")
    per_user_output_tokens_per_s: float | None = Field(
        ..., description="Tokens/s one request sees while decoding (concurrency or rate mode)."
    )
    saturated: bool = Field(..., description="True when the offered rate exceeds capacity.")
    saturation_requests_per_s: float | None = Field(
        ..., description="Most requests/s the accelerators complete (request-rate mode)."
    )
    queue_growth_requests_per_s: float | None = Field(
        ..., description="How fast the queue grows past saturation, requests/s (0 below it)."
    )
    software_generation: str = Field(
        ...,
        description="Date of the newest reference runs of the accelerator's family: the "
        "serving-software generation the estimate assumes ('' when undated).",
    )
    queued_per_replica: float | None = Field(
        ..., description="Requests waiting for a KV slot per replica (concurrency mode)."
    )
    pipeline_parallel: int = Field(..., description="Pipeline stages per replica.")
    expert_parallel: int = Field(..., description="Expert-parallel degree (1: none).")
    parallel_layout: str = Field(
        ...,
        description="Layout of a replica spanning servers, e.g. 'TP8 × PP2 (2 servers)'; "
        "'' within one server. Chosen by the engine when no single server fits.",
    )
    servers_per_replica: int = Field(..., description="Whole servers one replica takes.")
    serving_stack: str = Field(..., description="The serving stack sized: vllm, sglang, trtllm.")
    serving_stack_version: str = Field(..., description="Its version as the request named it.")
    utilisation: float | None
    expected_error_pct: float = Field(
        ...,
        description="Error band (±%): the error on reference runs held out of the fit for the "
        "nearest calibrated group; the wider 90th-percentile error when the architecture has "
        "no reference runs.",
    )
    provenance: str = Field(..., description="Where the efficiency factors and the band come from.")
    calibration_version: str
    notes: list[str] = Field(default_factory=list, description="Why a figure is null, if one is.")
    architecture: str = Field(..., description="Architecture class, e.g. 'dense GQA'.")
    calibrated_architecture: bool = Field(
        ..., description="False: uncalibrated for this architecture (no reference runs)."
    )
    serving: str = Field(
        "aggregated",
        description="aggregated or disaggregated; disaggregated: tensor_parallel, batch and "
        "memory figures are the decode replica's, replicas counts both pools, ttft_ms "
        "includes the KV transfer.",
    )
    prefill_tensor_parallel: int | None = Field(None, description="Prefill replica TP.")
    prefill_replicas: int | None = Field(None, description="Prefill replicas (disaggregated).")
    decode_replicas: int | None = Field(None, description="Decode replicas (disaggregated).")
    kv_transfer_ms: float | None = Field(
        None, description="KV-cache transfer per request, prefill to decode, ms (in ttft_ms)."
    )
    kv_transfer_path: str | None = Field(
        None, description="nvlink or pcie within a server, network across servers."
    )


class ErrorOut(Schema):
    errors: dict[str, list[str]] = Field(
        ..., description="Messages per field; 'body', 'auth' or '__all__' when not one field."
    )


def _errors(request, key: str, message: str, status: int):
    return api.create_response(request, {"errors": {key: [message]}}, status=status)


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
    return _errors(request, "auth", "Sign in, or send 'Authorization: Bearer <API token>'.", 401)


@api.exception_handler(HttpError)
def http_errors(request, exc: HttpError):
    """ninja's own refusals (unreadable body 400, CSRF 403) in the one error shape."""
    key = {400: "body", 401: "auth", 403: "auth"}.get(exc.status_code, "__all__")
    message = str(exc)
    if exc.status_code == 400:
        message = "The body is not a JSON object (" + message.lower() + ")."
    elif exc.status_code == 403:
        message = "The CSRF check failed: send the CSRF token, or use a Bearer token."
    return _errors(request, key, message, exc.status_code)


@api.exception_handler(Http404)
def not_found(request, exc):
    return _errors(request, "__all__", "Not found.", 404)


@api.exception_handler(ObjectDoesNotExist)
def no_such_row(request, exc):
    """A row of another organisation reads exactly like one that does not exist."""
    return _errors(request, "__all__", "Not found.", 404)


@api.exception_handler(PermissionDenied)
def forbidden(request, exc):
    """A role that may not do this (a viewer writing): 403 with the pages' message."""
    return _errors(request, "auth", str(exc) or "You may not do this.", 403)


@api.exception_handler(RequestDataTooBig)
def too_big(request, exc):
    return _errors(request, "body", "The body is too large.", 413)


@api.exception_handler(ProtectedError)
def protected(request, exc):
    return _errors(request, "__all__", "Other records still use this; remove them first.", 409)


@api.exception_handler(Exception)
def unexpected(request, exc):
    """A fault of ours: logged with its traceback, answered in the one error shape."""
    logger.exception("API error on %s", request.path)
    return _errors(request, "__all__", "Unexpected error; it has been logged.", 500)


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
    response={
        200: EstimateOut,
        400: ErrorOut,
        401: ErrorOut,
        403: ErrorOut,
        422: ErrorOut,
        500: ErrorOut,
    },
    summary="Estimate throughput and latency of N accelerators serving one model",
    openapi_extra={
        "responses": {
            400: {"description": "A field's shape is invalid, or the body is not JSON."},
            401: {"description": "No session of a member and no valid Bearer token."},
            403: {"description": "A session request without a valid CSRF token."},
            422: {
                "description": "A slug that is not in the catalog, or a configuration the "
                "engine refuses to size (the message says why)."
            },
            500: {"description": "Unexpected fault (logged)."},
        }
    },
)
def estimate_endpoint(request, payload: EstimateIn):
    has_target = payload.ttft_ms is not None or payload.tpot_ms is not None
    online = has_target or payload.request_rate is not None or payload.concurrency is not None
    scenario = payload.scenario or ("server" if online else "offline")
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
        kv_cache_dtype=payload.kv_cache_dtype,
        serving_stack=payload.serving_stack,
        serving_stack_version=payload.serving_stack_version,
        variable_lengths=payload.variable_lengths,
        concurrency=payload.concurrency,
        serving=payload.serving,
        pipeline_parallel=payload.pipeline_parallel,
        expert_parallel=payload.expert_parallel,
    )
    try:
        return Status(200, estimate_as_dict(estimate_run(engine_request)))
    except SizingInputError as exc:
        return Status(422, {"errors": {exc.field: [str(exc)]}})
    except EngineInputError as exc:
        return Status(422, {"errors": {"__all__": [str(exc)]}})


# The plan endpoints (imported last: they use the schemas and handlers above).
from planner.api import delivery as _delivery  # noqa: E402
from planner.api import files as _files  # noqa: E402
from planner.api import plans as _plans  # noqa: E402
from planner.api import results as _results  # noqa: E402
from planner.api import settings as _settings  # noqa: E402
from planner.api import sites as _sites  # noqa: E402

api.add_router("", _files.router)  # first: /plans/import before /plans/{plan_id}
api.add_router("", _plans.router)
api.add_router("", _sites.router)
api.add_router("", _results.router)
api.add_router("", _delivery.router)
api.add_router("", _settings.router)

from planner.api import sourcing as _sourcing  # noqa: E402

api.add_router("", _sourcing.router)
