"""Portable plan files: export → import → export round trip on the demo plan, tenancy, and
hostile files that must create nothing."""

import copy
import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from planner.facility.models import PlacementDecision, Site, TcoSettings, WorkloadSiteSplit
from planner.models import Client, Plan, Workload
from planner.portable import MAX_ROWS, imported_name, plan_export
from sourcing.models import BomLine, Offer, QuoteFee, QuoteSettings, Supplier
from tests.api.conftest import Api, _token
from tests.conftest import make_member


@pytest.fixture
def demo_api(client, demo):
    return Api(client, _token(demo[2], demo[1]))


@pytest.fixture
def b_api(client, org_b, owner_b):
    return Api(client, _token(org_b, owner_b))


def _counts() -> tuple[int, ...]:
    return tuple(
        m.objects.count()
        for m in (
            Plan, Client, Workload, Site, BomLine, Supplier, Offer, TcoSettings,
            PlacementDecision, WorkloadSiteSplit, QuoteSettings, QuoteFee,
        )
    )  # fmt: skip


def _as_imported(document: dict) -> dict:
    """The document as its imported plan exports it: only the name differs (told apart from
    the original by the import's date)."""
    name = imported_name(document["plan"]["name"], timezone.localdate())
    return document | {"plan": document["plan"] | {"name": name}}


def _settle(api, plan) -> None:
    """Set every setting a consultant edits through the API: TCO inputs, placement settings
    and choice, a hand-set site split, quote markups, terms and fees."""
    p = f"/plans/{plan.pk}"
    tco = api.get(f"{p}/tco-settings").json()
    body = {"horizon_months": 48, "cost_of_capital_pct": 7.5, "cloud_keeps_spares": True}
    body["cloud_providers"] = tco["available_cloud_providers"][:1]
    assert api.patch(f"{p}/tco-settings", body).status_code == 200
    workloads = api.get(f"{p}/workloads").json()
    residency = {str(workloads[0]["id"]): "EU, CH"}
    settings = api.patch(
        f"{p}/placement-settings", {"network_share_pct": 30, "residency": residency}
    )
    assert settings.status_code == 200, settings.content
    options = api.get(f"{p}/placement").json()["result"]["options"]
    site_option = next(o["key"] for o in options if o["key"].startswith("site-"))
    chosen = api.post(
        f"{p}/placement/choose", {"key": site_option, "reason": "Nearest to most users."}
    )
    assert chosen.status_code == 200, chosen.content
    split_url = f"{p}/workloads/{workloads[0]['id']}/site-split"
    sites = api.get(split_url).json()["sites"]
    shares = {str(sites[0]["id"]): 60, str(sites[1]["id"]): 40}
    assert api.put(split_url, {"shares": shares}).status_code == 200
    quote = api.get(f"{p}/quote-settings").json()
    body = {
        "markup_pct": 12.5,
        "category_markups": {quote["categories"][0]: 20},
        "line_markups": {quote["lines"][0]["part_key"]: 8},
        "payment_milestones": [{"pct": 30, "when": "on order"}, {"pct": 70, "when": "on delivery"}],
        "validity_days": 45,
    }
    assert api.patch(f"{p}/quote-settings", body).status_code == 200
    for fee in (
        {"kind": "design", "description": "Design workshop", "quantity": 3, "unit_price": 1500},
        {"kind": "support", "description": "Support", "unit": "years", "unit_price": 9000},
    ):
        assert api.post(f"{p}/quote-fees", fee).status_code == 201


def test_export_import_export_gives_the_same_document(demo, demo_api, b_api, org_b):
    plan, _, organisation = demo
    _settle(demo_api, plan)
    exported = demo_api.get(f"/plans/{plan.pk}/export")
    assert exported.status_code == 200, exported.content
    document = exported.json()
    assert document["format"] == "inference-planner/plan" and document["version"] == 3
    assert document["workloads"] and document["sites"] and document["suppliers"]
    names = [site["name"] for site in document["sites"]]
    assert document["workloads"][0]["site_split"] == {names[0]: 60, names[1]: 40}
    assert document["tco_settings"]["horizon_months"] == 48
    assert document["placement_decision"]["network_share_pct"] == 30
    assert document["placement_decision"]["chosen_key"].removeprefix("site:") in names
    assert document["quote_settings"]["validity_days"] == 45
    assert [fee["description"] for fee in document["quote_fees"]] == ["Design workshop", "Support"]
    source_rows = {
        "plans": Plan.objects.filter(organisation=organisation).count(),
        "suppliers": list(Supplier.objects.filter(organisation=organisation).values()),
        "offers": Offer.objects.filter(supplier__organisation=organisation).count(),
    }

    imported = b_api.post("/plans/import", document)

    assert imported.status_code == 201, imported.content
    copy_of = Plan.objects.get(pk=imported.json()["id"])
    assert copy_of.organisation == org_b and copy_of.client.organisation == org_b
    assert b_api.get(f"/plans/{copy_of.pk}/export").json() == _as_imported(document)
    # The source organisation's rows are untouched.
    assert source_rows == {
        "plans": Plan.objects.filter(organisation=organisation).count(),
        "suppliers": list(Supplier.objects.filter(organisation=organisation).values()),
        "offers": Offer.objects.filter(supplier__organisation=organisation).count(),
    }
    assert Supplier.objects.filter(organisation=org_b).count() == len(document["suppliers"])
    # The split and the placement choice point at the copy's own sites.
    split = WorkloadSiteSplit.objects.get(workload__plan=copy_of, shares__isnull=False)
    assert set(split.shares) == {str(pk) for pk in copy_of.sites.values_list("pk", flat=True)}
    chosen = PlacementDecision.objects.get(plan=copy_of).chosen_key
    assert chosen in {f"site-{pk}" for pk in copy_of.sites.values_list("pk", flat=True)}


def test_import_twice_reuses_the_client_and_the_suppliers_offers(demo, b_api):
    document = plan_export(demo[0])
    assert b_api.post("/plans/import", document).status_code == 201
    offers = Offer.objects.count()
    assert b_api.post("/plans/import", document).status_code == 201
    assert Offer.objects.count() == offers
    assert Client.objects.filter(name=document["client"]["name"]).count() == 2  # A's and B's


def _hostile(document):
    deep: dict = {}
    cursor = deep
    for _ in range(40):
        cursor["x"] = {}
        cursor = cursor["x"]
    cases = {
        "wrong type of section": {**document, "workloads": "many"},
        "wrong type of value": {
            **document,
            "workloads": [{**document["workloads"][0], "ttft_ms": "soon"}],
        },
        "list for a text": {**document, "plan": {**document["plan"], "name": ["a", "b"]}},
        "unknown slug": {
            **document,
            "workloads": [{**document["workloads"][0], "model": "gpt-17-ultra"}],
        },
        "unknown field": {**document, "plan": {**document["plan"], "id": 5}},
        "huge array": {**document, "sites": [document["sites"][0]] * (MAX_ROWS["sites"] + 1)},
        "deep nesting": {
            **document,
            "workloads": [{**document["workloads"][0], "chosen_summary": deep}],
        },
        "out of range": {
            **document,
            "workloads": [{**document["workloads"][0], "headroom_pct": 10_000}],
        },
        "not finite": {
            **document,
            "workloads": [{**document["workloads"][0], "peak_requests_per_s": "NaN"}],
        },
        "unknown offer ref": {
            **document,
            "bom_lines": [{**document["bom_lines"][0], "pinned_offer": "offer-999"}]
            if document["bom_lines"]
            else [{"pinned_offer": "offer-999"}],
        },
        "wrong version": {**document, "version": 4},
        "split to an unknown site": {
            **document,
            "workloads": [{**document["workloads"][0], "site_split": {"Atlantis": 100}}],
        },
        "split not adding up": {
            **document,
            "workloads": [
                {**document["workloads"][0], "site_split": {document["sites"][0]["name"]: 90}}
            ],
        },
        "markup out of range": {
            **document,
            "quote_settings": {"category_markups": {"Network": "5000"}},
        },
        "markup not a number": {**document, "quote_settings": {"line_markups": {"x": [1]}}},
        "providers not a list": {**document, "tco_settings": {"cloud_providers": {"a": 1}}},
        "lump sum of two": {
            **document,
            "quote_fees": [
                {
                    "kind": "other",
                    "description": "Travel",
                    "unit": "lump sum",
                    "quantity": "2",
                    "unit_price": "100",
                }
            ],
        },  # fmt: skip
        "too many fees": {
            **document,
            "quote_fees": [{"kind": "design"}] * (MAX_ROWS["quote_fees"] + 1),
        },
        "placement at an unknown site": {
            **document,
            "placement_decision": {"chosen_key": "site:Atlantis", "reason": "x"},
        },
        "not a plan file": [1, 2, 3],
    }
    return cases


def test_hostile_files_get_a_clear_error_and_create_nothing(demo, demo_api, b_api):
    _settle(demo_api, demo[0])
    document = plan_export(demo[0])
    before = _counts()
    # The file's shape (the document's schema: an object of known sections, its version,
    # row counts, depth) answers 400; content the plan's rules refuse, 422.
    shape = {"huge array", "deep nesting", "wrong version", "too many fees", "not a plan file"}
    for name, case in _hostile(copy.deepcopy(document)).items():
        response = b_api.post("/plans/import", case)
        assert response.status_code == (400 if name in shape else 422), (name, response.content)
        errors = response.json()["errors"]
        assert errors and all(messages for messages in errors.values()), name
        assert _counts() == before, name
    unknown = b_api.post("/plans/import", _hostile(document)["unknown slug"]).json()
    assert unknown["errors"]["workloads[0].model"] == [
        "Unknown model architecture 'gpt-17-ultra' in this catalog."
    ]
    wrong = b_api.post("/plans/import", _hostile(document)["wrong type of value"]).json()
    assert wrong["errors"]["workloads[0].ttft_ms"] == ["“soon” value must be an integer."]
    split = b_api.post("/plans/import", _hostile(document)["split not adding up"]).json()
    assert split["errors"]["workloads[0].site_split"] == ["The shares add up to 90 %, not 100 %."]
    lump = b_api.post("/plans/import", _hostile(document)["lump sum of two"]).json()
    assert lump["errors"]["quote_fees[0].quantity"] == ["A lump sum has quantity 1."]


def test_a_version_1_file_still_imports(demo, b_api):
    document = plan_export(demo[0])
    old = {
        k: v
        for k, v in document.items()
        if k not in ("quote_settings", "quote_fees", "purchase_orders")
    }
    old["version"] = 1
    old["workloads"] = [{k: v for k, v in w.items() if k != "site_split"} for w in old["workloads"]]
    # Files of then held the cost-per-request target in USD under its old name.
    for w in old["workloads"]:
        w.pop("cost_per_request_target_currency")
        w["cost_per_request_target_usd"] = w.pop("cost_per_request_target") and "0.0015"
    response = b_api.post("/plans/import", old)
    assert response.status_code == 201, response.content
    assert not QuoteFee.objects.filter(plan_id=response.json()["id"]).exists()
    chat = Plan.objects.get(pk=response.json()["id"]).workloads.get(kind="chat")
    assert (chat.cost_per_request_target, chat.cost_per_request_target_currency) == (
        Decimal("0.0015"),
        "USD",
    )


def test_unparseable_bodies_are_400(b_api):
    client, headers = b_api.client, b_api.headers
    for body in (b"{not json", b"[" * 100_000 + b"]" * 100_000, b'"\\ud800"'):
        response = client.post(
            "/api/v1/plans/import", body, content_type="application/json", headers=headers
        )
        assert response.status_code == 400, body[:20]
    assert Plan.objects.count() == 0


def test_export_and_import_respect_tenancy_and_roles(demo, client, b_api, org_b):
    plan = demo[0]
    assert b_api.get(f"/plans/{plan.pk}/export").status_code == 404
    assert Api(client, None).get(f"/plans/{plan.pk}/export").status_code == 401
    viewer = Api(client, _token(org_b, make_member(org_b, "vee", role="viewer")))
    assert viewer.post("/plans/import", plan_export(plan)).status_code == 403
    assert Api(client, None).post("/plans/import", plan_export(plan)).status_code == 401
    assert Plan.objects.filter(organisation=org_b).count() == 0


def test_the_management_commands_round_trip(demo, org_b, tmp_path):
    plan = demo[0]
    out = StringIO()
    call_command("plan_export", str(plan.pk), stdout=out)
    path = tmp_path / "plan.json"
    path.write_text(out.getvalue())

    result = StringIO()
    call_command("plan_import", str(path), "--organisation", "beta", stdout=result)

    imported = Plan.objects.filter(organisation=org_b).get()
    assert f"Imported plan {imported.pk}" in result.getvalue()
    assert plan_export(imported) == _as_imported(json.loads(out.getvalue()))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**json.loads(out.getvalue()), "workloads": [{"name": 1}]}))
    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command("plan_import", str(bad), "--organisation", "beta")
    with pytest.raises(CommandError, match="No organisation"):
        call_command("plan_import", str(path), "--organisation", "nope")
    assert Plan.objects.filter(organisation=org_b).count() == 1
