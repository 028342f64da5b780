"""A Python client generated from /api/v1/openapi.json (openapi-python-client) type-checks
(mypy) and round-trips the demo plan through the API: what a typed SDK sends, the server
accepts, and what the server answers, the SDK parses."""

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from django.core.wsgi import get_wsgi_application

HERE = Path(__file__).parent
CONFIG = """\
package_name_override: planner_client
post_hooks: []
content_type_overrides:
  application/pdf: application/octet-stream
"""


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """The client package generated from the live document, in a temporary folder."""
    from planner.api import api

    folder = tmp_path_factory.mktemp("client")
    (folder / "openapi.json").write_text(json.dumps(api.get_openapi_schema(), default=str))
    (folder / "config.yml").write_text(CONFIG)
    generator = Path(sys.executable).with_name("openapi-python-client")
    result = subprocess.run(
        [str(generator), "generate", "--path", "openapi.json", "--meta", "none",
         "--output-path", "planner_client", "--config", "config.yml"],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    # Every operation and schema became code: the generator warns on what it cannot read.
    assert "Warning" not in result.stdout + result.stderr, result.stdout + result.stderr
    return folder


def test_operation_ids_are_unique_function_names():
    from planner.api import api

    ids = [
        operation["operationId"]
        for path in api.get_openapi_schema()["paths"].values()
        for operation in path.values()
    ]
    assert len(ids) == len(set(ids)) == 74
    assert all(name.isidentifier() for name in ids)


def test_the_client_and_its_round_trip_type_check(generated):
    """mypy over the generated package and the round trip written against it (strict on the
    round trip: no untyped call or Any leaking from the SDK)."""
    (generated / "client_roundtrip.py").write_text((HERE / "client_roundtrip.py").read_text())
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--python-version", "3.11",
         "planner_client", "client_roundtrip.py"],
        cwd=generated, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_demo_plan_round_trips_through_the_generated_client(
    generated, demo, wsgi_in_this_thread, monkeypatch
):
    from tests.api.conftest import _token

    monkeypatch.syspath_prepend(str(generated))
    from planner_client import AuthenticatedClient

    from tests.api import client_roundtrip as roundtrip

    plan, user, organisation = demo
    raw = _token(organisation, user)
    client = AuthenticatedClient(
        base_url="http://testserver",
        token=raw,
        raise_on_unexpected_status=True,
        httpx_args={"transport": httpx.WSGITransport(app=get_wsgi_application())},
    )
    trip = roundtrip.plan_round_trip(client, plan.pk)

    # The file read back from the imported plan is the file sent, but for the plan's name.
    def without_name(document: dict) -> dict:
        return document | {"plan": {k: v for k, v in document["plan"].items() if k != "name"}}

    assert without_name(trip.reexported) == without_name(trip.exported)
    assert trip.imported_plan.name.startswith(plan.name) and "(imported" in trip.imported_plan.name
    assert len(trip.reexported["workloads"]) == plan.workloads.count()
    # What the typed create bodies sent is what the server stored.
    for name, value in trip.workload_sent.items():
        assert trip.workload_read[name] == value, name
    for name, value in trip.site_sent.items():
        assert trip.site_read[name] == value, name
