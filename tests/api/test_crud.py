"""Plans, workloads and sites over the API: the pages' validation, tenancy, roles, versions."""

import pytest

from planner.facility.models import Site
from planner.models import Client, Plan, Workload
from planner.sizing import workload_inputs_hash
from planner.workload_forms import WorkloadForm

CHAT = {
    "name": "Support chat",
    "model": "llama-3.1-70b",
    "precision": "fp8",
    "input_tokens_mean": 1200,
    "input_tokens_p95": 3000,
    "output_tokens_mean": 350,
    "output_tokens_p95": 900,
    "ttft_ms": 1000,
    "tpot_ms": 50,
    "percentile": 95,
    "peak_concurrency": 200,
    "daily_profile": [0.5] * 12 + [1.0] * 12,
    "users_by_region": {"eu-west": 70, "us-east": 30},
}


# --- Plans -------------------------------------------------------------------------------------


def test_create_a_plan_for_a_new_client_then_reuse_it_by_name(api, org_a, consultant_a):
    body = {"client_name": "Fabrikam", "name": "Pilot", "currency": "eur"}
    response = api.post("/plans", body)

    assert response.status_code == 201, response.content
    plan = response.json()
    assert plan["client_name"] == "Fabrikam"
    assert plan["currency"] == "EUR"  # the form upper-cases it
    assert plan["version"] == 1
    stored = Plan.objects.get(pk=plan["id"])
    assert stored.organisation == org_a and stored.created_by == consultant_a

    again = api.post("/plans", {"client_name": "fabrikam", "name": "Phase 2", "currency": "EUR"})
    assert again.status_code == 201
    assert again.json()["client"]["id"] == plan["client"]["id"]
    assert Client.objects.filter(organisation=org_a).count() == 1
    assert {p["name"] for p in api.get("/plans").json()} == {"Phase 2", "Pilot"}


def test_plan_validation_errors_are_the_forms_messages(api):
    response = api.post("/plans", {"name": "No client", "currency": "E1X"})

    assert response.status_code == 422
    errors = response.json()["errors"]
    assert errors["client"] == ["Pick a client or name a new one."]
    assert errors["currency"] == [
        "Unknown currency 'E1X': use an ISO 4217 code such as EUR, USD or GBP."
    ]
    assert Plan.objects.count() == 0


def test_a_wrong_type_or_an_unknown_field_is_a_400(api):
    assert api.post("/plans", {"name": ["x"]}).status_code == 400
    response = api.post("/plans", {"name": "x", "client_name": "y", "colour": "red"})
    assert response.status_code == 400
    assert "colour" in response.json()["errors"]
    assert Plan.objects.count() == 0


def test_patch_changes_only_what_is_sent_and_bumps_the_version(api, sized_plan):
    url = f"/plans/{sized_plan.pk}"
    read = api.get(url).json()

    response = api.patch(url, {"notes": "Budget approved", "version": read["version"]})

    assert response.status_code == 200, response.content
    assert response.json()["version"] == read["version"] + 1
    sized_plan.refresh_from_db()
    assert sized_plan.notes == "Budget approved"
    assert (sized_plan.name, sized_plan.currency) == ("Chat", "EUR")


def test_patch_from_an_outdated_version_is_a_409_naming_the_field(api, sized_plan):
    url = f"/plans/{sized_plan.pk}"
    version = api.get(url).json()["version"]
    assert api.patch(url, {"name": "Theirs", "version": version}).status_code == 200

    response = api.patch(url, {"name": "Mine", "version": version})

    assert response.status_code == 409
    errors = response.json()["errors"]
    assert errors["name"] == ["Changed meanwhile to Theirs; yours Mine."]
    sized_plan.refresh_from_db()
    assert sized_plan.name == "Theirs"


def test_delete_a_plan(api, sized_plan):
    assert api.delete(f"/plans/{sized_plan.pk}").status_code == 204
    assert not Plan.objects.filter(pk=sized_plan.pk).exists()


# --- Workloads ---------------------------------------------------------------------------------


def test_add_a_workload_and_read_it_back(api, sized_plan):
    response = api.post(f"/plans/{sized_plan.pk}/workloads", CHAT)

    assert response.status_code == 201, response.content
    created = response.json()
    assert created["users_by_region"] == {"eu-west": 70.0, "us-east": 30.0}
    assert created["daily_profile"] == CHAT["daily_profile"]
    assert created["chosen"] is None
    stored = Workload.objects.get(pk=created["id"])
    assert stored.model.slug == "llama-3.1-70b" and stored.peak_concurrency == 200
    listed = api.get(f"/plans/{sized_plan.pk}/workloads").json()
    assert [w["name"] for w in listed] == ["Chat", "Support chat"]
    assert listed[0]["chosen"]["key"] == "h100-sxm|fp8|4"


def test_workload_errors_match_the_page_form(api, sized_plan):
    body = CHAT | {"input_tokens_p95": 100, "daily_profile": [1.0] * 23}
    response = api.post(f"/plans/{sized_plan.pk}/workloads", body)

    assert response.status_code == 422
    errors = response.json()["errors"]
    form = WorkloadForm(
        {"input_tokens_p95": "100", "daily_profile": ", ".join(["1.0"] * 23)},
        instance=Workload(plan=sized_plan),
    )
    form.is_valid()
    assert errors["daily_profile"] == form.errors["daily_profile"]
    assert errors["daily_profile"] == ["Give 24 hourly values (23 given)."]
    assert errors["input_tokens_p95"] == ["The p95 length cannot be below the mean."]
    assert Workload.objects.filter(plan=sized_plan).count() == 1


def test_unknown_model_and_region_are_field_errors(api, sized_plan):
    body = CHAT | {"model": "no-such-model", "users_by_region": {"mars": 100}}
    errors = api.post(f"/plans/{sized_plan.pk}/workloads", body).json()["errors"]

    assert errors["model"] == [
        "Select a valid choice. That choice is not one of the available choices."
    ]
    assert errors["users_by_region"][0].startswith("Unknown region 'mars'.")


def test_patch_a_workload_replans_its_choice(api, sized_plan):
    workload = sized_plan.workloads.get()
    url = f"/plans/{sized_plan.pk}/workloads/{workload.pk}"

    response = api.patch(url, {"peak_concurrency": 800, "version": workload.version})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["peak_concurrency"] == 800 and body["ttft_ms"] == 1000
    workload.refresh_from_db()
    # Re-planned from the new inputs, as the page's save does.
    assert workload.chosen_inputs_hash == workload_inputs_hash(workload)


def test_delete_a_workload(api, sized_plan):
    workload = sized_plan.workloads.get()
    assert api.delete(f"/plans/{sized_plan.pk}/workloads/{workload.pk}").status_code == 204
    assert not sized_plan.workloads.exists()


# --- Sites -------------------------------------------------------------------------------------


def test_add_a_site_with_upgrades_and_defaults(api, sized_plan):
    body = {
        "name": "Frankfurt",
        "region_key": "eu-central",
        "country": "de",
        "site_it_capacity_kw": 100,
        "upgrades": [{"ready_date": "2027-03-01", "added_kw": 400, "note": "new transformer"}],
    }
    response = api.post(f"/plans/{sized_plan.pk}/sites", body)

    assert response.status_code == 201, response.content
    site = response.json()
    assert site["country"] == "DE" and site["voltage_v"] == 415.0  # the model's default
    assert site["upgrades"] == [
        {"ready_date": "2027-03-01", "added_kw": 400.0, "note": "new transformer"}
    ]


def test_site_errors_are_the_forms(api, sized_plan):
    body = {"name": "amsterdam", "site_it_capacity_kw": 10, "latitude": 50}
    errors = api.post(f"/plans/{sized_plan.pk}/sites", body).json()["errors"]

    assert errors["name"] == ["This plan already has a site with this name."]
    assert errors["longitude"] == ["Give both latitude and longitude, or neither."]
    upgrades = [{"ready_date": "1900-01-01", "added_kw": 5}]
    body = {"name": "X", "site_it_capacity_kw": 1, "upgrades": upgrades}
    errors = api.post(f"/plans/{sized_plan.pk}/sites", body).json()["errors"]
    assert errors["upgrades"][0].startswith("Line 1: ")
    assert Site.objects.filter(plan=sized_plan).count() == 1


def test_patch_a_site_replaces_its_upgrades(api, sized_plan):
    site = sized_plan.sites.get()
    url = f"/plans/{sized_plan.pk}/sites/{site.pk}"

    response = api.patch(url, {"upgrades": [], "pue": 1.3, "version": site.version})

    assert response.status_code == 200, response.content
    assert response.json()["upgrades"] == [] and response.json()["pue"] == 1.3
    assert api.get(url).json()["name"] == "Amsterdam"
    assert api.patch(url, {"pue": 1.2, "version": site.version}).status_code == 409


def test_delete_a_site(api, sized_plan):
    site = sized_plan.sites.get()
    assert api.delete(f"/plans/{sized_plan.pk}/sites/{site.pk}").status_code == 204
    assert not sized_plan.sites.exists()


# --- Tenancy, roles, credentials ---------------------------------------------------------------


def _urls(plan, workload, site):
    return {
        "plan": f"/plans/{plan.pk}",
        "workloads": f"/plans/{plan.pk}/workloads",
        "workload": f"/plans/{plan.pk}/workloads/{workload.pk}",
        "sites": f"/plans/{plan.pk}/sites",
        "site": f"/plans/{plan.pk}/sites/{site.pk}",
    }


def test_another_organisations_ids_are_404(api, sized_plan, plan_b):
    urls = _urls(plan_b, plan_b.workloads.get(), plan_b.sites.get())
    for url in urls.values():
        assert api.get(url).status_code == 404, url
    for url in (urls["plan"], urls["workload"], urls["site"]):
        assert api.patch(url, {"name": "stolen"}).status_code == 404, url
        assert api.delete(url).status_code == 404, url
    assert api.post(urls["workloads"], CHAT).status_code == 404
    assert api.post(urls["sites"], {"name": "s"}).status_code == 404
    # B's workload and site through A's own plan id: still not found.
    mixed = _urls(sized_plan, plan_b.workloads.get(), plan_b.sites.get())
    assert api.get(mixed["workload"]).status_code == 404
    assert api.get(mixed["site"]).status_code == 404
    assert Plan.objects.get(pk=plan_b.pk).name == "B's plan"
    assert [p["id"] for p in api.get("/plans").json()] == [sized_plan.pk]


def test_a_viewer_reads_but_every_write_is_403(viewer_api, sized_plan):
    urls = _urls(sized_plan, sized_plan.workloads.get(), sized_plan.sites.get())
    for url in urls.values():
        assert viewer_api.get(url).status_code == 200, url
    assert viewer_api.post("/plans", {"client_name": "X", "name": "Y"}).status_code == 403
    assert viewer_api.post(urls["workloads"], CHAT).status_code == 403
    assert viewer_api.post(urls["sites"], {"name": "S"}).status_code == 403
    for url in (urls["plan"], urls["workload"], urls["site"]):
        response = viewer_api.patch(url, {"name": "changed"})
        assert response.status_code == 403, url
        assert response.json()["errors"]["auth"] == ["Viewers can read plans but not change them."]
        assert viewer_api.delete(url).status_code == 403, url
    assert Plan.objects.get(pk=sized_plan.pk).name == "Chat"


def test_a_token_acts_with_its_creators_role_today(api, sized_plan, consultant_a):
    consultant_a.memberships.update(role="viewer")
    assert api.patch(f"/plans/{sized_plan.pk}", {"notes": "x"}).status_code == 403
    consultant_a.memberships.all().delete()
    assert api.get(f"/plans/{sized_plan.pk}").status_code == 200  # an organisation's token
    assert api.patch(f"/plans/{sized_plan.pk}", {"notes": "x"}).status_code == 403


@pytest.mark.parametrize("method", ["get", "post", "patch", "delete"])
def test_no_token_is_401(anonymous, sized_plan, method):
    urls = _urls(sized_plan, sized_plan.workloads.get(), sized_plan.sites.get())
    for url in ["/plans", *urls.values()]:
        response = anonymous.call(method, url, {} if method in ("post", "patch") else None)
        assert response.status_code in (401, 405), url
        if response.status_code == 401:
            assert "auth" in response.json()["errors"]


def test_the_session_of_a_member_works_too(client, consultant_a, sized_plan):
    client.force_login(consultant_a)
    response = client.get(f"/api/v1/plans/{sized_plan.pk}/workloads")
    assert response.status_code == 200
    assert response.json()[0]["name"] == "Chat"


def test_ids_beyond_the_database_range_are_400_not_500(api):
    assert api.get(f"/plans/{2**63}").status_code == 400
    assert api.get("/plans/0").status_code == 400
