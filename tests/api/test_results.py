"""Candidates, choose, deployment, facility checks, placement and TCO runs over the API."""

import pytest

from planner import sizing
from planner.facility.models import TcoRun


def _workload(plan):
    return plan.workloads.get()


def test_candidates_are_ranked_with_keys_and_reasons(api, sized_plan):
    workload = _workload(sized_plan)
    response = api.get(f"/plans/{sized_plan.pk}/workloads/{workload.pk}/candidates")

    assert response.status_code == 200, response.content
    rows = response.json()
    result = sizing.workload_sweep(workload)
    assert len(rows) == len(result.candidates)
    feasible = [r for r in rows if r["feasible"]]
    assert feasible and rows[: len(feasible)] == feasible  # feasible first
    costs = [r["usd_per_million_output_tokens"] for r in feasible]
    priced = [c for c in costs if c is not None]
    assert priced == sorted(priced)
    assert rows[0]["best"] and rows[0]["key"] == sizing.candidate_key(result.best)
    assert all(r["reason"] for r in rows if not r["feasible"])
    assert [r["key"] for r in rows if r["chosen"]] == ["h100-sxm|fp8|4"]


def test_choose_a_candidate_then_an_infeasible_one_is_refused(api, sized_plan):
    workload = _workload(sized_plan)
    base = f"/plans/{sized_plan.pk}/workloads/{workload.pk}"
    rows = api.get(base + "/candidates").json()
    best = next(r for r in rows if r["best"])

    response = api.post(base + "/choose", {"key": best["key"]})

    assert response.status_code == 200, response.content
    assert response.json()["chosen"]["key"] == best["key"]
    workload.refresh_from_db()
    assert sizing.chosen_key(workload) == best["key"]
    assert workload.chosen_replicas == best["replicas"]

    infeasible = next(r for r in rows if not r["feasible"])
    refused = api.post(base + "/choose", {"key": infeasible["key"]})
    assert refused.status_code == 422
    assert refused.json()["errors"]["key"] == [
        f"That configuration cannot be chosen: {infeasible['reason']}."
    ]
    unknown = api.post(base + "/choose", {"key": "nope|fp8|1"})
    assert unknown.json()["errors"]["key"] == [
        "That configuration cannot be chosen: it is not a candidate."
    ]
    assert api.post(base + "/choose", {}).status_code == 400
    workload.refresh_from_db()
    assert sizing.chosen_key(workload) == best["key"]


def test_deployment_lists_servers_and_racks_per_site(api, sized_plan):
    response = api.get(f"/plans/{sized_plan.pk}/deployment")

    assert response.status_code == 200, response.content
    body = response.json()
    (deployment,) = body["deployments"]
    assert deployment["accelerator_slug"] == "h100-sxm"
    assert deployment["accelerators"] == 32 and deployment["servers"] == 4
    (site,) = body["sites"]
    assert site["name"] == "Amsterdam" and site["racks_needed"] >= 1
    assert site["it_load_kw"] > 0 and site["status"] in ("pass", "warn", "fail")


def test_facility_checks_are_the_site_pages(api, sized_plan):
    from planner.facility import services

    response = api.get(f"/plans/{sized_plan.pk}/facility-checks")

    assert response.status_code == 200, response.content
    (site,) = response.json()
    evaluation = services.site_evaluate(plan=sized_plan, site=sized_plan.sites.get())
    assert site["checks"] == evaluation.check_rows
    assert site["status"] == evaluation.status


def test_placement_scores_the_options(api, sized_plan):
    response = api.get(f"/plans/{sized_plan.pk}/placement")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["result"] is not None
    assert body["user_regions"] == {"eu-west": 0.6, "us-east": 0.4}


def test_a_tco_run_is_202_with_a_status_url_that_reports_the_results(
    api, sized_plan, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/plans/{sized_plan.pk}/tco-runs")

    assert response.status_code == 202, response.content
    started = response.json()
    assert started["status_url"] == f"/api/v1/plans/{sized_plan.pk}/tco-runs/{started['id']}"
    done = api.client.get(started["status_url"], headers=api.headers).json()
    assert done["status"] == "succeeded" and done["progress"] == 1.0
    assert done["results"]["options"] and not done["stale"]
    assert TcoRun.objects.get().results == done["results"]
    # Every amount is in the plan's currency, named once beside the results.
    assert done["currency"] == sized_plan.currency == done["results"]["currency"]
    assert started["currency"] is None or started["status"] == "succeeded"
    # Each option gives every workload its own cost per request (its share of the option).
    ids = sorted(str(pk) for pk in sized_plan.workloads.values_list("pk", flat=True))
    for option in done["results"]["options"]:
        rows = option["workloads"]
        assert sorted(w["key"] for w in rows) == ids
        assert sum(w["share"] for w in rows) == pytest.approx(1.0, abs=1e-5)
        assert all(w["cost_per_request_amount"] for w in rows)


def test_a_plan_without_a_choice_cannot_be_costed(api, sized_plan):
    sized_plan.workloads.update(chosen_accelerator=None)
    response = api.post(f"/plans/{sized_plan.pk}/tco-runs")
    assert response.status_code == 422
    assert response.json()["errors"]["__all__"]
    assert not TcoRun.objects.exists()


def _reads(plan, workload):
    return [
        f"/plans/{plan.pk}/workloads/{workload.pk}/candidates",
        f"/plans/{plan.pk}/deployment",
        f"/plans/{plan.pk}/facility-checks",
        f"/plans/{plan.pk}/placement",
    ]


def _writes(plan, workload):
    return [
        (f"/plans/{plan.pk}/workloads/{workload.pk}/choose", {"key": "h100-sxm|fp8|4"}),
        (f"/plans/{plan.pk}/tco-runs", {}),
    ]


def test_another_organisations_plan_is_404(api, sized_plan, plan_b):
    workload = plan_b.workloads.get()
    for url in _reads(plan_b, workload):
        assert api.get(url).status_code == 404, url
    for url, body in _writes(plan_b, workload):
        assert api.post(url, body).status_code == 404, url
    run = TcoRun.objects.create(plan=plan_b, input_hash="x", inputs={})
    assert api.get(f"/plans/{plan_b.pk}/tco-runs/{run.pk}").status_code == 404
    assert api.get(f"/plans/{sized_plan.pk}/tco-runs/{run.pk}").status_code == 404


def test_a_viewer_reads_results_but_may_not_choose_or_run(viewer_api, sized_plan):
    workload = _workload(sized_plan)
    for url in _reads(sized_plan, workload):
        assert viewer_api.get(url).status_code == 200, url
    for url, body in _writes(sized_plan, workload):
        assert viewer_api.post(url, body).status_code == 403, url
    assert not TcoRun.objects.exists()


def test_no_token_is_401(anonymous, sized_plan):
    workload = _workload(sized_plan)
    for url in _reads(sized_plan, workload):
        assert anonymous.get(url).status_code == 401, url
    for url, body in _writes(sized_plan, workload):
        assert anonymous.post(url, body).status_code == 401, url
