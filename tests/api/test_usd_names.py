"""A name that says USD holds USD. Every field of every API response schema and of the revision
snapshot's schema is walked; one named ``…_usd…`` (or ``usd_…``) must be listed here with the
reason its value really is USD. The TCO's results are in the plan's currency, so they are
``…_amount`` beside ``currency``: ``npv_usd: 2118077.89`` for a EUR plan was a wrong name."""

from __future__ import annotations

import re
import types
import typing

from pydantic import BaseModel

from planner.api import api
from planner.sharing import schema

USD_NAME = re.compile(r"(?:^|_)usd(?:_|$)")

# (schema, field) → why its value is USD.
TRULY_USD = {
    ("CandidateOut", "usd_per_million_output_tokens"): "the catalog's cloud list prices (USD)",
    ("CandidateOut", "usd_per_hour"): "the catalog's cloud list prices (USD)",
    ("SiteOut", "power_usd_per_kwh"): "entered in USD (the site form says so); TCO input",
    ("SiteOut", "facility_usd_per_kw_month"): "entered in USD (the site form says so)",
    ("SiteOut", "staff_usd_per_month"): "entered in USD (the site form says so)",
    ("TcoSettingsOut", "server_price_usd"): "entered in USD (the TCO form says so)",
    ("TcoSettingsOut", "network_usd"): "entered in USD (the TCO form says so)",
    ("TcoSettingsOut", "storage_usd"): "entered in USD (the TCO form says so)",
    ("TcoSettingsOut", "install_usd"): "entered in USD (the TCO form says so)",
    ("TcoSettingsOut", "shipping_and_duties_usd"): "entered in USD (the TCO form says so)",
    ("TcoSettingsOut", "on_demand_usd_per_gpu_h"): "entered in USD (the TCO form says so)",
}


def _response_fields() -> set[tuple[str, str]]:
    """(schema name, field) of every property reachable from a response of the API."""
    document = api.get_openapi_schema()
    components = document["components"]["schemas"]
    found: set[tuple[str, str]] = set()
    visited: set[str] = set()

    def walk(node, owner: str) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, owner)
            return
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name not in visited:
                visited.add(name)
                walk(components[name], name)
            return
        for field, sub in (node.get("properties") or {}).items():
            found.add((owner, field))
            walk(sub, owner)
        for key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
            walk(node.get(key), owner)

    for path, operations in document["paths"].items():
        for operation in operations.values():
            for response in (operation.get("responses") or {}).values():
                for content in (response.get("content") or {}).values():
                    walk(content.get("schema"), path)
    return found


def _model_fields(model: type[BaseModel], seen: set[type] | None = None) -> set[tuple[str, str]]:
    """(model name, field) of ``model`` and of every model its fields hold."""
    seen = set() if seen is None else seen
    if model in seen:
        return set()
    seen.add(model)
    found = set()
    for name, info in model.model_fields.items():
        found.add((model.__name__, name))
        stack = [info.annotation]
        while stack:
            kind = stack.pop()
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                found |= _model_fields(kind, seen)
            elif isinstance(kind, types.UnionType) or typing.get_origin(kind) is not None:
                stack.extend(typing.get_args(kind))
    return found


def test_the_walk_reaches_the_tco_results_and_the_snapshot_amounts():
    """The walks see deep fields (else the tests below could not fail)."""
    responses = _response_fields()
    assert ("TcoOptionOut", "npv_amount") in responses
    assert ("TcoWorkloadCostOut", "cost_per_request_amount") in responses
    assert ("TcoMonteCarloOut", "owned_p50_amount") in responses
    assert ("CandidateOut", "usd_per_hour") in responses
    snapshot = _model_fields(schema.Snapshot)
    assert ("TcoOption", "npv_amount") in snapshot
    assert ("WorkloadCost", "cost_per_request_amount") in snapshot
    assert ("TornadoBar", "low_value_amount") in snapshot


def test_no_api_response_field_says_usd_unless_it_holds_usd():
    named = {f for f in _response_fields() if USD_NAME.search(f[1])}
    assert named - TRULY_USD.keys() == set(), "name it …_amount beside a currency"
    assert TRULY_USD.keys() - named == set(), "a listed field is gone: remove it from the list"


def test_no_snapshot_field_says_usd():
    """A snapshot's amounts are Money or ``…_amount`` in their section's currency."""
    assert {f for f in _model_fields(schema.Snapshot) if USD_NAME.search(f[1])} == set()
