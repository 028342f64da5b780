"""Every request body in the OpenAPI document goes through the shared input rules: a walk
over the document fails on a body that lets unknown fields through, a free string without a
length and the control-character rule, a number without both bounds, a list or map without a
size, or a body that is not bound to its page form's rules (``planner.api.contract``)."""

import pytest

from planner.api import api
from planner.api.common import InSchema

# Numbers whose range is the domain's but cannot be one interval (each says why).
UNBOUNDED: dict[str, str] = {}
# Objects of the plan file whose fields follow the file format, checked field by field by
# the importer (planner.portable), which refuses unknown ones with 422.
LOOSE = {"POST /api/v1/plans/import.client"}

DOCUMENT = api.get_openapi_schema()
COMPONENTS = DOCUMENT["components"]["schemas"]


def _request_bodies() -> dict[str, dict]:
    """operation label -> the body's JSON schema (refs resolved one level)."""
    bodies = {}
    for path, operations in DOCUMENT["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            for media in content.values():
                schema = media["schema"]
                if "$ref" in schema:
                    schema = COMPONENTS[schema["$ref"].rsplit("/", 1)[-1]]
                bodies[f"{method.upper()} {path}"] = schema
    return bodies


def _resolve(node: dict) -> dict:
    return COMPONENTS[node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else node


def _problems(schema: dict, where: str) -> list[str]:
    problems = []
    if schema.get("type") == "object" and "properties" in schema:
        if schema.get("additionalProperties") is not False and where not in LOOSE:
            problems.append(f"{where}: unknown fields are not refused")
        for name, node in schema["properties"].items():
            problems += _node_problems(node, f"{where}.{name}")
    return problems


def _node_problems(node: dict, where: str) -> list[str]:
    problems = []
    branches = node.get("anyOf", [node])
    for branch in branches:
        branch = _resolve(branch)
        kind = branch.get("type")
        if kind == "string":
            closed = {"enum", "const", "format"} & set(branch)
            if not closed and "maxLength" not in branch and "anyOf" not in branch:
                problems.append(f"{where}: a string without maxLength")
            if not closed and "pattern" not in branch and "anyOf" not in branch:
                problems.append(f"{where}: a string without the text rule's pattern")
        elif kind in ("number", "integer") and "enum" not in branch:
            has_low = "minimum" in branch or "exclusiveMinimum" in branch
            has_high = "maximum" in branch or "exclusiveMaximum" in branch
            if not (has_low and has_high) and where not in UNBOUNDED:
                problems.append(f"{where}: a number without both bounds")
        elif kind == "array":
            if "maxItems" not in branch and "maxItems" not in node:
                problems.append(f"{where}: a list without maxItems")
            problems += _node_problems(branch.get("items", {}), f"{where}[]")
        elif kind == "object":
            if "properties" in branch:
                problems += _problems(branch, where)
            elif isinstance(branch.get("additionalProperties"), dict):
                if "maxProperties" not in branch:
                    problems.append(f"{where}: a map without maxProperties")
                if "pattern" not in branch.get("propertyNames", {}):
                    problems.append(f"{where}: a map whose keys skip the text rule")
                problems += _node_problems(branch["additionalProperties"], f"{where}{{}}")
    return problems


BODIES = _request_bodies()


def test_the_walk_sees_every_body():
    assert len(BODIES) >= 28


@pytest.mark.parametrize("operation", sorted(BODIES))
def test_every_request_body_follows_the_input_rules(operation):
    assert _problems(BODIES[operation], operation) == []


def _in_schemas(cls=InSchema):
    for sub in cls.__subclasses__():
        yield sub
        yield from _in_schemas(sub)


# Bodies that are not one page form's fields (each says why).
NOT_A_FORM = {
    "EstimateIn": "the engine's own inputs; the engine refuses what it cannot size (422)",
    "UpgradeIn": "a row of the site form's upgrades text, bound with the site",
    "ChooseIn": "a candidate key from the sweep, looked up in it",
    "PublishIn": "publish options for the sharing service",
    "ShareLinkIn": "share-link options for the sharing service",
    "PaymentMilestoneIn": "a row of the quote form's milestones text, bound with the quote",
    "PriceBreakIn": "a row of the offer form's price breaks text, bound with the offer",
    "SiteSplitIn": "the shares are the form's per-site fields, named by site id",
}


def test_every_body_that_edits_a_row_is_bound_to_its_form():
    unbound = {
        cls.__name__
        for cls in _in_schemas()
        if cls.contract_form is None
        and cls.__name__ not in NOT_A_FORM
        and cls.__name__ != "Versioned"
    }
    assert unbound == set()
    assert set(NOT_A_FORM) <= {cls.__name__ for cls in _in_schemas()}  # no stale entry
