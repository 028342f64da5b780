"""POST /api/v1/estimate: session or organisation token, field errors, OpenAPI schema."""

import json

import pytest
from django.utils import timezone

from planner.models import ApiToken
from planner.models.tokens import token_digest

URL = "/api/v1/estimate"
GOOD = {
    "model": "llama-3.1-70b",
    "accelerator": "h100-sxm",
    "accelerators": 8,
    "precision": "fp8",
    "input_tokens": 2000,
    "output_tokens": 400,
    "ttft_ms": 2000,
    "tpot_ms": 50,
    "percentile": 99,
}


def post(client, body, **headers):
    return client.post(URL, json.dumps(body), content_type="application/json", headers=headers)


@pytest.fixture
def token(org_a, consultant_a):
    raw = ApiToken.generate()
    ApiToken.objects.create(
        organisation=org_a,
        name="ci",
        digest=token_digest(raw),
        hint=raw[:8],
        created_by=consultant_a,
    )
    return raw


def test_estimate_with_a_session(client, consultant_a, catalog):
    client.force_login(consultant_a)

    response = post(client, GOOD)

    assert response.status_code == 200, response.content
    data = response.json()
    for key in (
        "output_tokens_per_s",
        "requests_per_s",
        "ttft_ms",
        "tpot_ms",
        "batch_per_replica",
        "tensor_parallel",
        "replicas",
        "weights_gb",
        "kv_cache_bytes_per_token",
        "max_concurrent_sequences",
        "expected_error_pct",
        "provenance",
        "kv_cache_dtype",
        "kv_cache_bytes_per_token_per_gpu",
        "kv_replication",
        "kv_cache_gib_per_gpu",
        "software_generation",
    ):
        assert key in data
    assert data["kv_cache_dtype"] == "bf16"
    assert data["tpot_ms"] <= 50.0 + 1e-6
    assert data["replicas"] * data["tensor_parallel"] == 8
    assert "hopper" in data["provenance"]


def test_estimate_with_an_api_token_and_no_session(client, token, catalog):
    response = post(client, GOOD, authorization=f"Bearer {token}")
    assert response.status_code == 200
    assert ApiToken.objects.get().last_used_at is not None


def test_revoked_or_unknown_token_is_401(client, token, catalog):
    ApiToken.objects.update(revoked_at=timezone.now())
    assert post(client, GOOD, authorization=f"Bearer {token}").status_code == 401
    assert post(client, GOOD, authorization="Bearer ipk_made_up").status_code == 401
    anonymous = post(client, GOOD)
    assert anonymous.status_code == 401
    assert "auth" in anonymous.json()["errors"]


@pytest.mark.parametrize(
    ("change", "field", "fragment", "status"),
    [
        # 400: a shape the OpenAPI document states; 422: the catalog or the engine refuses.
        ({"model": "no-such-model"}, "model", "unknown model", 422),
        ({"accelerator": "epyc-9654"}, "accelerator", "no published memory", 422),
        ({"accelerators": 0}, "accelerators", "greater than or equal to 1", 400),
        ({"input_tokens": "many"}, "input_tokens", "integer", 400),
        ({"precision": "fp3"}, "precision", "'bf16', 'fp8', 'int4' or 'fp4'", 400),
        ({"tensor_parallel": 3}, "__all__", "tensor_parallel 3 is not valid", 422),
        ({"input_tokens": 200_000}, "__all__", "exceed", 422),
        ({"kv_cache_dtype": "int2"}, "kv_cache_dtype", "should match pattern", 400),
        ({"serving_stack": "tgi"}, "serving_stack", "should match pattern", 400),
    ],
)
def test_bad_input_gets_field_errors(client, token, catalog, change, field, fragment, status):
    response = post(client, {**GOOD, **change}, authorization=f"Bearer {token}")

    assert response.status_code == status
    errors = response.json()["errors"]
    assert field in errors, errors
    assert fragment in " ".join(errors[field])


def test_missing_fields_are_named(client, token):
    response = post(client, {"model": "llama-3.1-8b"}, authorization=f"Bearer {token}")
    assert response.status_code == 400
    assert {"accelerator", "accelerators", "precision"} <= set(response.json()["errors"])


def test_openapi_schema_describes_the_estimate(client):
    schema = client.get("/api/v1/openapi.json").json()
    operation = schema["paths"]["/api/v1/estimate"]["post"]
    assert "200" in operation["responses"] and "400" in operation["responses"]
    properties = schema["components"]["schemas"]["EstimateOut"]["properties"]
    assert "kv_cache_bytes_per_token" in properties and "provenance" in properties
    assert "kv_replication" in properties and "kv_cache_gib_per_gpu" in properties
    inputs = schema["components"]["schemas"]["EstimateIn"]["properties"]
    assert "fp8" in inputs["kv_cache_dtype"]["description"]


def test_estimate_spans_servers_and_the_schema_says_so(client, consultant_a, catalog):
    client.force_login(consultant_a)
    body = {**GOOD, "model": "llama-3.1-405b", "precision": "bf16", "accelerators": 16}
    body["tpot_ms"] = 150
    body.pop("tensor_parallel", None)
    response = post(client, body)
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["servers_per_replica"] == 2 and data["accelerators_used"] == 16
    assert "PP" in data["parallel_layout"] or "TP16" in data["parallel_layout"]

    bad = post(client, {**body, "pipeline_parallel": 3})
    assert bad.status_code == 422 and "do not divide" in str(bad.json())

    schema = client.get("/api/v1/openapi.json").json()
    inputs = schema["components"]["schemas"]["EstimateIn"]["properties"]
    assert "pipeline_parallel" in inputs and "expert_parallel" in inputs
    out = schema["components"]["schemas"]["EstimateOut"]["properties"]
    assert "parallel_layout" in out and "servers_per_replica" in out


def test_estimate_takes_the_serving_stack_and_variable_lengths(client, consultant_a, catalog):
    client.force_login(consultant_a)
    body = {**GOOD, "ttft_ms": 2000, "tpot_ms": 100, "kv_cache_dtype": "fp8"}
    vllm = post(client, body).json()
    trtllm = post(client, {**body, "serving_stack": "trtllm", "variable_lengths": True})
    assert trtllm.status_code == 200, trtllm.content
    assert trtllm.json()["max_concurrent_sequences"] != vllm["max_concurrent_sequences"]
    schema = client.get("/api/v1/openapi.json").json()
    inputs = schema["components"]["schemas"]["EstimateIn"]["properties"]
    assert "trtllm" in inputs["serving_stack"]["description"]
    assert "variable_lengths" in inputs
