"""A workload's chosen configuration follows its inputs: re-planned on save, or says it fails."""

import pytest
from django.urls import reverse

from catalog.models import Accelerator
from planner import sizing
from planner.facility.deployment import workload_deployments
from planner.models import Workload
from tests.html_forms import page_form
from tests.planner.test_sizing_views import plan as plan  # noqa: F401  (fixture)
from tests.planner.test_sizing_views import workload as workload  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def _sizing_url(workload):  # noqa: F811
    return reverse("workload_sizing", args=[workload.plan_id, workload.pk])


def _edit(client, workload, **changes):  # noqa: F811
    """Load the sizing page, change fields in its form (version fields kept), post it."""
    data = page_form(client.get(_sizing_url(workload)).content.decode(), containing="ttft_ms")
    assert data.get("loaded_version"), "the page's form carries its version"
    data.update({k: str(v) for k, v in changes.items()})
    return client.post(_sizing_url(workload), data)


def _rackable_best(workload):  # noqa: F811
    """The cheapest feasible candidate one can buy and rack (its accelerator has a TDP)."""
    rackable = set(Accelerator.objects.filter(tdp_w__isnull=False).values_list("slug", flat=True))
    return next(
        c
        for c in sizing.workload_sweep(workload).candidates
        if c.feasible and c.accelerator_slug in rackable and c.usd_per_million_output_tokens
    )


def _table_row(workload):  # noqa: F811
    """The chosen configuration's row as the sizing table computes it for the stored inputs."""
    workload = Workload.objects.get(pk=workload.pk)
    return sizing.candidate_find(sizing.workload_sweep(workload), sizing.chosen_key(workload))


def test_raising_the_peak_replans_the_chosen_replicas(client, consultant_a, workload):  # noqa: F811
    client.force_login(consultant_a)
    best = _rackable_best(workload)
    key = sizing.candidate_key(best)
    client.post(
        reverse("workload_choose", args=[workload.plan_id, workload.pk]), {"candidate": key}
    )
    workload.refresh_from_db()
    before, before_hash = workload.chosen_replicas, workload.chosen_inputs_hash
    assert before == best.replicas and before_hash == sizing.workload_inputs_hash(workload)

    response = _edit(client, workload, peak_concurrency=2500)

    assert response.status_code == 302
    workload.refresh_from_db()
    row = _table_row(workload)
    assert workload.peak_concurrency == 2500
    assert sizing.chosen_key(workload) == key  # same accelerator, precision and TP
    assert workload.chosen_replicas == row.replicas > before
    assert workload.chosen_accelerators == row.accelerators
    assert workload.chosen_servers == row.servers
    assert workload.chosen_summary["replicas"] == row.replicas
    assert workload.chosen_inputs_hash == sizing.workload_inputs_hash(workload) != before_hash
    assert workload.chosen_problem == ""
    [deployment] = workload_deployments(plan=workload.plan)
    assert deployment.replicas == row.replicas
    page = client.get(_sizing_url(workload)).content.decode()
    assert f"Chosen: {row.replicas} replicas" in page
    overview = client.get(reverse("plan_detail", args=[workload.plan_id])).content.decode()
    assert f"{row.replicas} replicas" in overview


def test_a_choice_that_stops_serving_says_so_and_asks_for_a_new_one(
    client,
    consultant_a,
    workload,  # noqa: F811
):
    client.force_login(consultant_a)
    best = _rackable_best(workload)
    sizing.workload_choose(workload=workload, candidate=best)

    # A 1 ms per-token target: no configuration keeps it, the chosen one neither.
    response = _edit(client, workload, tpot_ms=1)

    assert response.status_code == 302
    workload.refresh_from_db()
    assert workload.tpot_ms == 1
    assert sizing.chosen_key(workload) == sizing.candidate_key(best)  # what was chosen stays
    assert workload.chosen_replicas is None and workload.chosen_accelerators is None
    assert "no longer serves this workload" in workload.chosen_problem
    assert "TPOT" in workload.chosen_problem and "Choose another" in workload.chosen_problem
    assert workload_deployments(plan=workload.plan) == []  # nothing counts a failing fleet
    page = client.get(_sizing_url(workload)).content.decode()
    assert 'data-testid="chosen-problem"' in page and "Choose another configuration" in page
    overview = client.get(reverse("plan_detail", args=[workload.plan_id])).content.decode()
    assert "no longer serves this workload" in overview and "choose again" in overview

    # Back to a reachable target: the same choice serves again, re-planned.
    _edit(client, workload, tpot_ms=50)
    workload.refresh_from_db()
    assert workload.chosen_problem == ""
    assert workload.chosen_replicas == _table_row(workload).replicas


def test_htmx_autosave_replans_and_shows_the_problem(client, consultant_a, workload):  # noqa: F811
    client.force_login(consultant_a)
    sizing.workload_choose(workload=workload, candidate=_rackable_best(workload))
    data = page_form(client.get(_sizing_url(workload)).content.decode(), containing="ttft_ms")
    data["tpot_ms"] = "1"

    response = client.post(
        _sizing_url(workload), data, headers={"HX-Request": "true", "HX-Target": "sizing-results"}
    )

    content = response.content.decode()
    assert 'data-testid="form-saved"' in content
    assert 'data-testid="chosen-problem"' in content
