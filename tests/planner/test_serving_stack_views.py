"""The serving stack as a workload input: the organisation's default, the workload form, the
sizing page that names it and compares stacks on request, and the chosen plan's freshness."""

import pytest
from django.urls import reverse

from planner import freshness, sizing
from planner.models import Workload
from tests.planner.test_sizing_views import form_data
from tests.planner.test_sizing_views import plan as plan  # noqa: F401  (fixture)
from tests.planner.test_sizing_views import workload as workload  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def _sizing_url(w):
    return reverse("workload_sizing", args=[w.plan_id, w.pk])


def test_the_owner_sets_the_default_stack_and_new_workloads_take_it(
    client,
    owner_a,
    org_a,
    plan,  # noqa: F811
):
    client.force_login(owner_a)
    bad = client.post(
        reverse("serving_defaults"),
        {"default_serving_stack": "tgi", "default_serving_stack_version": "1 beta!",
         "default_kv_cache_dtype": "fp8"},
    )  # fmt: skip
    page = bad.content.decode()
    assert bad.status_code == 400
    assert "Select a valid choice. tgi is not one of the available choices." in page
    assert "Write the version as the project does" in page

    client.post(
        reverse("serving_defaults"),
        {"default_serving_stack": "trtllm", "default_serving_stack_version": "0.21.0",
         "default_kv_cache_dtype": "fp8"},
    )  # fmt: skip
    org_a.refresh_from_db()
    assert (org_a.default_serving_stack, org_a.default_kv_cache_dtype) == ("trtllm", "fp8")
    assert (
        "TensorRT-LLM 0.21.0, FP8 KV cache" in client.get(reverse("organisation")).content.decode()
    )

    # The add page offers the default; a post that leaves the stack out takes it too.
    add = client.get(reverse("workload_add", args=[plan.pk])).content.decode()
    assert '<option value="trtllm" selected>TensorRT-LLM</option>' in add
    client.post(reverse("workload_add", args=[plan.pk]), form_data())
    added = Workload.objects.get()
    assert (added.serving_stack, added.serving_stack_version, added.kv_cache_dtype) == (
        "trtllm",
        "0.21.0",
        "fp8",
    )


def test_only_owners_set_the_default_stack(client, consultant_a):
    client.force_login(consultant_a)
    assert client.get(reverse("serving_defaults")).status_code == 403


def test_the_sizing_page_saves_the_stack_and_names_it(client, consultant_a, workload):  # noqa: F811
    client.force_login(consultant_a)
    page = client.get(_sizing_url(workload)).content.decode()
    assert 'data-testid="serving-stack">vLLM, BF16 KV cache</strong>' in page
    before = next(c for c in sizing.workload_sweep(workload).candidates if c.feasible)

    data = form_data(serving_stack="trtllm", serving_stack_version="0.21", kv_cache_dtype="fp8")
    response = client.post(_sizing_url(workload), data)
    assert response.status_code in (200, 302)
    workload.refresh_from_db()
    assert (workload.serving_stack, workload.serving_stack_version) == ("trtllm", "0.21")
    assert workload.kv_cache_dtype == "fp8"
    page = client.get(_sizing_url(workload)).content.decode()
    assert 'data-testid="serving-stack">TensorRT-LLM 0.21, FP8 KV cache</strong>' in page
    # The sizing follows: the same H100 row holds more sequences per replica.
    after = next(
        c for c in sizing.workload_sweep(workload).candidates
        if sizing.candidate_key(c) == sizing.candidate_key(before)
    )  # fmt: skip
    assert after.serving_stack == "trtllm" and after.kv_cache_dtype == "fp8"
    assert "sized for TensorRT-LLM, FP8 KV cache" in after.provenance


def test_a_bad_stack_is_refused_next_to_its_field(client, consultant_a, workload):  # noqa: F811
    client.force_login(consultant_a)
    response = client.post(
        _sizing_url(workload), form_data(serving_stack="tgi", serving_stack_version="x y")
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "tgi is not one of the available choices" in page
    assert "Write the version as the project does" in page
    workload.refresh_from_db()
    assert workload.serving_stack == "vllm"


def test_changing_the_stack_makes_the_chosen_plan_stale_like_any_sizing_input(
    client,
    consultant_a,
    workload,  # noqa: F811
):
    candidate = sizing.workload_sweep(workload).best
    sizing.workload_choose(workload=workload, candidate=candidate)
    workload.refresh_from_db()
    assert freshness.chosen_freshness(workload).is_current

    Workload.objects.filter(pk=workload.pk).update(serving_stack="sglang")
    workload.refresh_from_db()
    stale = freshness.chosen_freshness(workload)
    assert not stale.is_current
    assert stale.reason == "Its replicas were planned for other sizing inputs."

    # Saving through the form re-plans the chosen configuration for the stack at once.
    client.force_login(consultant_a)
    client.post(_sizing_url(workload), form_data(serving_stack="trtllm", kv_cache_dtype="fp8"))
    workload.refresh_from_db()
    assert workload.chosen_summary["serving_stack"] == "trtllm"
    assert freshness.chosen_freshness(workload).is_current


def test_stacks_are_compared_only_on_request_and_cannot_be_chosen_there(
    client,
    consultant_a,
    workload,  # noqa: F811
):
    client.force_login(consultant_a)
    plain = client.get(_sizing_url(workload))
    assert {c.serving_stack for _, c, _ in plain.context["candidates"]} == {"vllm"}
    assert 'data-testid="row-stack"' not in plain.content.decode()

    compared = client.get(_sizing_url(workload), {"stacks": "all"})
    rows = compared.context["candidates"]
    assert {c.serving_stack for _, c, _ in rows} == {"vllm", "sglang", "trtllm"}
    page = compared.content.decode()
    assert "TensorRT-LLM, FP8 KV" not in page  # the workload's KV dtype is kept: auto (BF16)
    assert "TensorRT-LLM, BF16 KV <span" in page and "compare only" in page
    key = next(k for k, c, _ in rows if c.compared and c.feasible)
    assert key.endswith(("|sglang", "|trtllm"))

    response = client.post(
        reverse("workload_choose", args=[workload.plan_id, workload.pk]), {"candidate": key}
    )
    assert response.status_code == 302
    workload.refresh_from_db()
    assert not workload.has_choice
    messages = [str(m) for m in client.get(response.url).context["messages"]]
    assert any("shown for comparison" in m for m in messages)
