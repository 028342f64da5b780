"""The estimate API: strict JSON (no NaN/Infinity), one error shape, every status documented."""

import json

import pytest
from django.test import Client

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


GENERIC_DESCRIPTIONS = {"Bad Request", "Unauthorized", "Forbidden", "Internal Server Error"}


def strict_json(response):
    """The body parsed as JSON proper: NaN and Infinity literals fail the test."""

    def refuse(constant):
        raise AssertionError(f"{constant} in a JSON response: {response.content[:200]!r}")

    return json.loads(response.content, parse_constant=refuse)


def assert_error_shape(response, status: int, key: str):
    assert response.status_code == status, response.content
    body = strict_json(response)
    assert set(body) == {"errors"}
    assert all(isinstance(m, str) and m for m in body["errors"][key])


@pytest.fixture
def member(client, consultant_a, catalog):
    client.force_login(consultant_a)
    return client


def post(client, body: str | dict):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post(URL, data, content_type="application/json")


def test_an_unbounded_ttft_is_null_with_a_reason(member):
    # A TPOT target alone lets the batch grow to the memory limit, where the p99 time to
    # first token is unbounded: it used to be written as the non-JSON literal Infinity.
    body = {k: v for k, v in GOOD.items() if k != "ttft_ms"} | {"tpot_ms": 1000}
    response = post(member, body)
    assert response.status_code == 200
    data = strict_json(response)
    assert data["ttft_ms"] is None
    assert "without bound" in data["notes"][0]
    assert data["tpot_ms"] > 0


def test_a_bounded_estimate_has_no_notes(member):
    data = strict_json(post(member, GOOD))
    assert data["ttft_ms"] > 0 and data["notes"] == []


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('"ttft_ms": 1e999', "ttft_ms"),  # parses as infinity
        ('"ttft_ms": NaN', "ttft_ms"),
        ('"request_rate": Infinity', "request_rate"),
        ('"request_rate": 1e40', "request_rate"),
        ('"accelerators": 1e40', "accelerators"),
        ('"model": "llama\\u0000"', "model"),  # a NUL byte was a PostgreSQL 500
        ('"accelerator": "' + "h" * 200 + '"', "accelerator"),
    ],
)
def test_non_finite_and_huge_inputs_are_field_errors(member, raw, field):
    text = json.dumps({k: v for k, v in GOOD.items() if k != field})[:-1] + ", " + raw + "}"
    assert_error_shape(post(member, text), 400, field)


@pytest.mark.parametrize("body", ["{not json", "a=b", "\x00"])
def test_an_unreadable_body_has_the_documented_error_shape(member, body):
    assert_error_shape(post(member, body), 400, "body")


def test_an_engine_refusal_has_the_documented_error_shape(member):
    assert_error_shape(post(member, GOOD | {"input_tokens": 10_000_000}), 422, "__all__")


def test_no_credentials_is_401_in_the_error_shape(client, catalog):
    assert_error_shape(post(client, GOOD), 401, "auth")


def test_a_session_without_csrf_is_403_in_the_error_shape(consultant_a, catalog):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(consultant_a)
    assert_error_shape(post(browser, GOOD), 403, "auth")


def test_an_unexpected_fault_is_500_in_the_error_shape(member, monkeypatch):
    import planner.api

    def broken(request):
        raise RuntimeError("boom")

    monkeypatch.setattr(planner.api, "estimate_run", broken)
    assert_error_shape(post(member, GOOD), 500, "__all__")


def test_every_status_an_operation_returns_is_documented(client):
    schema = client.get("/api/v1/openapi.json").json()
    error_ref = "#/components/schemas/ErrorOut"
    operations = [op for path in schema["paths"].values() for op in path.values()]
    assert operations
    for operation in operations:
        responses = operation["responses"]
        assert {"400", "401", "403", "500"} <= set(responses), responses
        assert any(status.startswith("2") for status in responses), responses
        for status in ("400", "401", "403", "500"):
            content = responses[status]["content"]["application/json"]["schema"]
            assert content["$ref"] == error_ref
            assert responses[status]["description"] not in GENERIC_DESCRIPTIONS  # says when
    estimate_out = schema["components"]["schemas"]["EstimateOut"]["properties"]
    assert "notes" in estimate_out


def test_the_estimate_command_prints_an_unbounded_figure_as_such(catalog):
    from io import StringIO

    from django.core.management import call_command

    args = [
        "--model", "llama-3.1-70b", "--accelerator", "h100-sxm", "--accelerators", "8",
        "--precision", "fp8", "--input-tokens", "2000", "--output-tokens", "400",
        "--tpot-ms", "1000", "--percentile", "99",
    ]  # fmt: skip
    out = StringIO()
    call_command("estimate", *args, "--json", stdout=out)
    data = json.loads(out.getvalue(), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert data["ttft_ms"] is None and data["notes"]
    out = StringIO()
    call_command("estimate", *args, stdout=out)
    assert "unbounded (see the note)" in out.getvalue()
    assert "Note: ttft_ms is null" in out.getvalue()
