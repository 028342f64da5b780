"""TCO settings, placement settings and choice, site splits, quote settings and fees over the
API: the pages' forms and messages, versions, tenancy and roles."""

from decimal import Decimal

import pytest

from planner.facility.forms import SiteSplitForm, TcoSettingsForm
from planner.facility.models import (
    PlacementDecision,
    ResidencyRule,
    Site,
    TcoSettings,
    WorkloadSiteSplit,
)
from sourcing.models import BomLine, QuoteFee, QuoteSettings


@pytest.fixture
def two_sites(sized_plan):
    """The sized plan with a second colocation site (a split needs two)."""
    second = Site.objects.create(
        plan=sized_plan, name="Frankfurt", kind="colocation", latitude=50.1, longitude=8.68,
        country="DE", racks_available=4, site_it_capacity_kw=Decimal("200"),
    )  # fmt: skip
    return sized_plan, sized_plan.sites.get(name="Amsterdam"), second


@pytest.fixture
def bom_plan(sized_plan):
    for n, (key, category) in enumerate([("srv-dgx", "Servers"), ("nic-cx7", "Network")]):
        BomLine.objects.create(
            plan=sized_plan, part_key=key, category=category, description=key.upper(),
            quantity=4, origin="manual", position=n,
        )  # fmt: skip
    return sized_plan


def _urls(plan, workload=None, fee=None) -> dict[str, str]:
    p = f"/plans/{plan.pk}"
    urls = {
        "tco": f"{p}/tco-settings",
        "placement": f"{p}/placement-settings",
        "quote": f"{p}/quote-settings",
        "fees": f"{p}/quote-fees",
    }
    if workload is not None:
        urls["split"] = f"{p}/workloads/{workload.pk}/site-split"
    if fee is not None:
        urls["fee"] = f"{p}/quote-fees/{fee.pk}"
    return urls


# --- TCO settings -----------------------------------------------------------------------------


def test_tco_settings_read_defaults_then_patch_only_what_is_sent(api, sized_plan, catalog):
    url = f"/plans/{sized_plan.pk}/tco-settings"
    read = api.get(url)
    assert read.status_code == 200, read.content
    body = read.json()
    assert body["horizon_months"] == 60 and body["cloud_providers"] == []
    assert body["available_cloud_providers"]
    assert "horizon_months" in body["defaults"]
    provider = body["available_cloud_providers"][0]

    changed = api.patch(
        url,
        {
            "horizon_months": 48,
            "cost_of_capital_pct": 7.5,
            "cloud_providers": [provider],
            "cloud_keeps_spares": True,
        },
    )

    assert changed.status_code == 200, changed.content
    stored = TcoSettings.objects.get(plan=sized_plan)
    assert stored.horizon_months == 48 and stored.cost_of_capital_pct == Decimal("7.5")
    assert stored.cloud_providers == [provider] and stored.cloud_keeps_spares
    # A second PATCH keeps the provider list it does not send.
    again = api.patch(url, {"server_price_usd": 250000, "version": changed.json()["version"]})
    assert again.status_code == 200, again.content
    assert again.json()["cloud_providers"] == [provider]
    assert again.json()["server_price_usd"] == 250000.0
    assert api.patch(url, {"server_price_usd": None}).json()["server_price_usd"] is None


def test_tco_settings_errors_are_the_forms(api, sized_plan, catalog):
    url = f"/plans/{sized_plan.pk}/tco-settings"
    response = api.patch(url, {"horizon_months": 6, "cloud_providers": ["no-such-cloud"]})

    assert response.status_code == 400
    errors = response.json()["errors"]
    form = TcoSettingsForm(
        {"horizon_months": "6", "cloud_providers": ["no-such-cloud"]},
        instance=TcoSettings(plan=sized_plan),
    )
    form.is_valid()
    assert errors["horizon_months"] == form.errors["horizon_months"]
    assert errors["cloud_providers"] == form.errors["cloud_providers"]
    assert not TcoSettings.objects.filter(plan=sized_plan).exists()  # a refusal stores nothing


def test_tco_settings_outdated_version_is_409(api, sized_plan, catalog):
    url = f"/plans/{sized_plan.pk}/tco-settings"
    version = api.patch(url, {"horizon_months": 48}).json()["version"]
    assert api.patch(url, {"horizon_months": 36, "version": version}).status_code == 200

    response = api.patch(url, {"horizon_months": 72, "version": version})

    assert response.status_code == 409
    assert "horizon_months" in response.json()["errors"]
    assert TcoSettings.objects.get(plan=sized_plan).horizon_months == 36


# --- Placement --------------------------------------------------------------------------------


def test_placement_settings_and_residency(api, sized_plan):
    url = f"/plans/{sized_plan.pk}/placement-settings"
    workload = sized_plan.workloads.get()
    read = api.get(url).json()
    assert read["network_share_pct"] == 25 and read["chosen"] is None
    assert read["residency"] == {str(workload.pk): ""}

    response = api.patch(url, {"network_share_pct": 40, "residency": {str(workload.pk): "eu, ch"}})

    assert response.status_code == 200, response.content
    assert response.json()["residency"] == {str(workload.pk): "EU, CH"}
    decision = PlacementDecision.objects.get(plan=sized_plan)
    assert (decision.network_share_pct, decision.control_requirement) == (40, 3)
    assert ResidencyRule.objects.get(workload=workload).allowed == "EU, CH"


def test_placement_settings_errors(api, sized_plan, plan_b):
    url = f"/plans/{sized_plan.pk}/placement-settings"
    workload = sized_plan.workloads.get()
    response = api.patch(url, {"network_share_pct": 0, "residency": {str(workload.pk): "Europe!"}})
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors["network_share_pct"] == ["Ensure this value is greater than or equal to 1."]
    assert errors[f"residency.{workload.pk}"] == ["Use ISO country codes or region names: EUROPE!."]
    other = plan_b.workloads.get().pk
    unknown = api.patch(url, {"residency": {str(other): "EU"}})
    assert unknown.status_code == 422
    assert unknown.json()["errors"] == {
        f"residency.{other}": [f"No workload {other} on this plan."]
    }
    assert not ResidencyRule.objects.exists() and not PlacementDecision.objects.exists()


def test_choose_a_placement_option_with_a_reason(api, sized_plan):
    options = api.get(f"/plans/{sized_plan.pk}/placement").json()["result"]["options"]
    key = options[0]["key"]
    url = f"/plans/{sized_plan.pk}/placement/choose"

    short = api.post(url, {"key": key, "reason": "cheap"})
    assert short.status_code == 422
    assert short.json()["errors"]["reason"] == ["Say in a sentence why this option was chosen."]
    bad = api.post(url, {"key": "moon-base", "reason": "The client wants it on the moon."})
    assert bad.status_code == 422 and "key" in bad.json()["errors"]

    response = api.post(url, {"key": key, "reason": "Latency to Amsterdam users is lowest."})

    assert response.status_code == 200, response.content
    chosen = response.json()["chosen"]
    assert chosen["key"] == key and chosen["scores"]["options"]
    decision = PlacementDecision.objects.get(plan=sized_plan)
    assert decision.chosen_key == key and decision.decided_by is not None
    stale = api.post(url, {"key": key, "reason": "Another reason, written later.", "version": 1})
    assert stale.status_code == 409


# --- Site split -------------------------------------------------------------------------------


def test_split_a_workload_over_two_sites_then_back_to_automatic(api, two_sites):
    plan, amsterdam, frankfurt = two_sites
    workload = plan.workloads.get()
    url = f"/plans/{plan.pk}/workloads/{workload.pk}/site-split"
    read = api.get(url).json()
    assert read["shares"] == {} and read["source"] == "by users' regions"
    assert {s["name"] for s in read["sites"]} == {"Amsterdam", "Frankfurt"}

    response = api.put(url, {"shares": {str(amsterdam.pk): 70, str(frankfurt.pk): 30}})

    assert response.status_code == 200, response.content
    assert response.json()["source"] == "set by hand"
    split = WorkloadSiteSplit.objects.get(workload=workload)
    assert split.shares == {str(amsterdam.pk): 70, str(frankfurt.pk): 30}
    deployment = api.get(f"/plans/{plan.pk}/deployment").json()
    assert {s["name"] for s in deployment["sites"] if s["servers"]} == {"Amsterdam", "Frankfurt"}

    stale = api.put(url, {"shares": {str(amsterdam.pk): 100}, "version": 1})
    assert stale.status_code == 200  # nothing changed meanwhile since version 1 was saved
    version = stale.json()["version"]
    api.put(url, {"shares": {str(frankfurt.pk): 100}, "version": version})
    conflict = api.put(
        url, {"shares": {str(amsterdam.pk): 50, str(frankfurt.pk): 50}, "version": version}
    )
    assert conflict.status_code == 409

    cleared = api.delete(url)
    assert cleared.status_code == 200
    assert cleared.json()["shares"] == {}
    assert WorkloadSiteSplit.objects.get(workload=workload).shares == {}


def test_split_errors_are_the_forms(api, two_sites, plan_b):
    plan, amsterdam, frankfurt = two_sites
    workload = plan.workloads.get()
    url = f"/plans/{plan.pk}/workloads/{workload.pk}/site-split"

    response = api.put(url, {"shares": {str(amsterdam.pk): 60, str(frankfurt.pk): 30}})

    assert response.status_code == 422
    form = SiteSplitForm(
        {f"share_{amsterdam.pk}": "60", f"share_{frankfurt.pk}": "30"},
        workload=workload,
        sites=[amsterdam, frankfurt],
    )
    form.is_valid()
    assert response.json()["errors"] == {"shares": form.errors["__all__"]}
    assert "add up to 90 %" in response.json()["errors"]["shares"][0]
    over = api.put(url, {"shares": {str(amsterdam.pk): 150}}).json()["errors"]
    assert over == {f"shares.{amsterdam.pk}": ["Ensure this value is less than or equal to 100."]}
    theirs = plan_b.sites.get().pk
    foreign = api.put(url, {"shares": {str(theirs): 100}}).json()["errors"]
    assert list(foreign) == [f"shares.{theirs}"]
    assert api.put(url, {"shares": {"x": "lots"}}).status_code == 400
    assert not WorkloadSiteSplit.objects.exists()


# --- Quote settings and fees ------------------------------------------------------------------


def test_quote_settings_markups_terms_and_validity(api, bom_plan):
    url = f"/plans/{bom_plan.pk}/quote-settings"
    read = api.get(url).json()
    assert read["categories"] == ["Network", "Servers"]
    assert {line["part_key"] for line in read["lines"]} == {"srv-dgx", "nic-cx7"}

    response = api.patch(
        url,
        {
            "markup_pct": 12.5,
            "category_markups": {"Network": 20},
            "line_markups": {"srv-dgx": 8},
            "validity_days": 45,
            "version": read["version"],
        },
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["category_markups"] == {"Network": 20.0}
    assert body["line_markups"] == {"srv-dgx": 8.0}
    settings = QuoteSettings.objects.get(plan=bom_plan)
    assert settings.markup_pct == Decimal("12.5") and settings.validity_days == 45
    # Unsent maps are kept; a null clears one entry.
    milestones = [{"pct": 30, "when": "on order"}, {"pct": 70, "when": "on delivery"}]
    kept = api.patch(url, {"payment_milestones": milestones, "payment_due_days": 45,
                           "line_markups": {"srv-dgx": None}}).json()  # fmt: skip
    assert kept["category_markups"] == {"Network": 20.0} and kept["line_markups"] == {}
    assert kept["payment_milestones"] == [
        {"pct": 30.0, "when": "on order"}, {"pct": 70.0, "when": "on delivery"},
    ]  # fmt: skip
    assert kept["payment_due_days"] == 45


def test_payment_milestones_must_add_up_to_100(api, bom_plan):
    url = f"/plans/{bom_plan.pk}/quote-settings"
    assert api.get(url).json()["payment_milestones"][0] == {"pct": 40.0, "when": "on order"}
    bad = [{"pct": 30, "when": "on order"}, {"pct": 60, "when": "on delivery"}]
    response = api.patch(url, {"payment_milestones": bad})
    assert response.status_code == 422
    assert response.json()["errors"]["payment_milestones"] == [
        "The payment milestones add up to 90 %; they must add up to 100 %."
    ]
    assert QuoteSettings.objects.get(plan=bom_plan).payment_milestones[0]["pct"] == "40"


def test_quote_settings_errors(api, bom_plan):
    url = f"/plans/{bom_plan.pk}/quote-settings"
    response = api.patch(url, {"validity_days": 400, "category_markups": {"Network": 5000}})
    assert response.status_code == 400
    errors = response.json()["errors"]
    # The schema states the ranges the server keeps, so a refusal names the field either way.
    assert errors["validity_days"] == ["Input should be less than or equal to 365"]
    assert errors["category_markups.Network"] == ["Input should be less than or equal to 1000"]
    negative = api.patch(url, {"markup_pct": -1, "line_markups": {"srv-dgx": -5}})
    assert negative.status_code == 400
    assert negative.json()["errors"] == {
        "markup_pct": ["Input should be greater than or equal to 0"],
        "line_markups.srv-dgx": ["Input should be greater than or equal to 0"],
    }
    unknown = api.patch(url, {"category_markups": {"Cooling": 5}, "line_markups": {"x": 1}})
    assert unknown.json()["errors"] == {
        "category_markups.Cooling": ["No BOM line of category 'Cooling' on this plan."],
        "line_markups.x": ["No BOM line 'x' on this plan."],
    }
    assert not QuoteSettings.objects.filter(plan=bom_plan).exists()  # a refusal stores nothing
    assert api.get(url).json()["validity_days"] == 30


def test_quote_fees_add_change_and_remove(api, sized_plan):
    url = f"/plans/{sized_plan.pk}/quote-fees"
    design = {"kind": "design", "description": "Design workshop", "quantity": 3, "unit_price": 1500}
    created = api.post(url, design)
    assert created.status_code == 201, created.content
    fee = created.json()
    assert fee["unit"] == "days" and fee["position"] == 0
    support = {"kind": "support", "description": "Support", "unit": "years", "unit_price": 9000}
    assert api.post(url, support).json()["position"] == 1
    assert [f["description"] for f in api.get(url).json()] == ["Design workshop", "Support"]

    changed = api.patch(f"{url}/{fee['id']}", {"quantity": 5, "version": fee["version"]})
    assert changed.status_code == 200, changed.content
    assert changed.json()["quantity"] == 5.0 and changed.json()["unit_price"] == 1500.0
    assert (
        api.patch(f"{url}/{fee['id']}", {"quantity": 6, "version": fee["version"]}).status_code
        == 409
    )

    assert api.delete(f"{url}/{fee['id']}").status_code == 204
    assert list(QuoteFee.objects.values_list("description", flat=True)) == ["Support"]


def test_quote_fee_errors_are_the_models(api, sized_plan):
    url = f"/plans/{sized_plan.pk}/quote-fees"
    support = api.post(
        url, {"kind": "support", "description": "Support", "unit": "days", "unit_price": 10}
    )
    assert support.status_code == 422
    assert support.json()["errors"] == {"unit": ["Support is sold in years."]}
    missing = api.post(url, {"kind": "design", "description": "Workshop"}).json()["errors"]
    assert missing == {"unit_price": ["This field is required."]}
    lump = api.post(
        url,
        {"kind": "other", "description": "Travel", "unit": "lump sum", "quantity": 2,
         "unit_price": 100},
    )  # fmt: skip
    assert lump.status_code == 422
    assert lump.json()["errors"] == {"quantity": ["A lump sum has quantity 1."]}
    years = api.post(
        url, {"kind": "support", "description": "S", "unit": "years", "quantity": 1.5,
              "unit_price": 1},
    )  # fmt: skip
    assert years.json()["errors"] == {"quantity": ["Give whole years, from 1 to 10."]}
    assert not QuoteFee.objects.exists()


# --- Tenancy, roles, credentials --------------------------------------------------------------


@pytest.fixture
def fee_b(plan_b):
    return QuoteFee.objects.create(
        plan=plan_b, kind="design", description="B's fee", quantity=1, unit_price=10
    )


def test_another_organisations_ids_are_404(api, sized_plan, plan_b, fee_b):
    urls = _urls(plan_b, plan_b.workloads.get(), fee_b)
    for url in urls.values():
        assert api.get(url).status_code == 404, url
    for name in ("tco", "placement", "quote", "fee"):
        assert api.patch(urls[name], {}).status_code == 404, name
    assert api.post(urls["fees"], {"kind": "design"}).status_code == 404
    assert api.put(urls["split"], {"shares": {}}).status_code == 404
    assert api.delete(urls["split"]).status_code == 404
    assert api.delete(urls["fee"]).status_code == 404
    assert (
        api.post(f"/plans/{plan_b.pk}/placement/choose", {"key": "x", "reason": "y"}).status_code
        == 404
    )
    # B's workload and fee through A's own plan: still not found.
    mixed = _urls(sized_plan, plan_b.workloads.get(), fee_b)
    assert api.get(mixed["split"]).status_code == 404
    assert api.get(mixed["fee"]).status_code == 404
    assert QuoteFee.objects.get(pk=fee_b.pk).description == "B's fee"
    assert not TcoSettings.objects.filter(plan=plan_b).exists()


def test_a_viewer_reads_but_every_write_is_403(viewer_api, sized_plan):
    fee = QuoteFee.objects.create(
        plan=sized_plan, kind="design", description="Fee", quantity=1, unit_price=10
    )
    urls = _urls(sized_plan, sized_plan.workloads.get(), fee)
    for url in urls.values():
        assert viewer_api.get(url).status_code == 200, url
    writes = [
        viewer_api.patch(urls["tco"], {"horizon_months": 48}),
        viewer_api.patch(urls["placement"], {"network_share_pct": 30}),
        viewer_api.patch(urls["quote"], {"markup_pct": 5}),
        viewer_api.patch(urls["fee"], {"quantity": 2}),
        viewer_api.delete(urls["fee"]),
        viewer_api.post(urls["fees"], {"kind": "design", "description": "x", "unit_price": 1}),
        viewer_api.put(urls["split"], {"shares": {}}),
        viewer_api.delete(urls["split"]),
        viewer_api.post(
            f"/plans/{sized_plan.pk}/placement/choose",
            {"key": "cloud", "reason": "A reason of some length."},
        ),
    ]
    for response in writes:
        assert response.status_code == 403, response.content
        assert response.json()["errors"]["auth"] == ["Viewers can read plans but not change them."]
    assert not TcoSettings.objects.exists() and not WorkloadSiteSplit.objects.exists()
    assert QuoteFee.objects.get(pk=fee.pk).quantity == 1


def test_no_token_is_401(anonymous, sized_plan):
    fee = QuoteFee.objects.create(
        plan=sized_plan, kind="design", description="Fee", quantity=1, unit_price=10
    )
    urls = _urls(sized_plan, sized_plan.workloads.get(), fee)
    calls = [anonymous.get(url) for url in urls.values()] + [
        anonymous.patch(urls["tco"], {}),
        anonymous.patch(urls["placement"], {}),
        anonymous.patch(urls["quote"], {}),
        anonymous.patch(urls["fee"], {}),
        anonymous.delete(urls["fee"]),
        anonymous.post(urls["fees"], {}),
        anonymous.call("put", urls["split"], {"shares": {}}),
        anonymous.delete(urls["split"]),
        anonymous.post(f"/plans/{sized_plan.pk}/placement/choose", {"key": "k", "reason": "r"}),
    ]
    for response in calls:
        assert response.status_code == 401, response.content
        assert "auth" in response.json()["errors"]
