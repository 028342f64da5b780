"""The serving stack over the API and in plan files: workload round trip, the organisation's
default for a new workload, clear errors, export/import, and estimate's stack options."""

import pytest

from planner.models import Workload
from planner.portable import plan_export, plan_import

pytestmark = pytest.mark.django_db

WORKLOAD = {
    "name": "Chat", "kind": "chat", "model": "llama-3.1-8b", "precision": "fp8",
    "input_tokens_mean": 1000, "output_tokens_mean": 200, "percentile": 95, "ttft_ms": 1000,
    "tpot_ms": 50, "peak_concurrency": 100,
}  # fmt: skip


def test_a_workloads_stack_goes_through_the_api_and_back(api, sized_plan):
    url = f"/plans/{sized_plan.pk}/workloads"
    created = api.post(
        url,
        {**WORKLOAD, "serving_stack": "sglang", "serving_stack_version": "0.5.4",
         "kv_cache_dtype": "fp8"},
    )  # fmt: skip
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["serving_stack"], body["serving_stack_version"], body["kv_cache_dtype"]) == (
        "sglang",
        "0.5.4",
        "fp8",
    )
    read = api.get(f"{url}/{body['id']}").json()
    assert read["serving_stack"] == "sglang"
    # A patch of another field keeps the stack.
    patched = api.patch(f"{url}/{body['id']}", {"version": read["version"], "headroom_pct": 30})
    assert patched.status_code == 200 and patched.json()["serving_stack"] == "sglang"


def test_a_new_workload_takes_the_organisations_default_and_bad_stacks_are_400(
    api, sized_plan, org_a
):
    org_a.default_serving_stack = "trtllm"
    org_a.default_kv_cache_dtype = "fp8"
    org_a.save()
    url = f"/plans/{sized_plan.pk}/workloads"
    body = api.post(url, WORKLOAD).json()
    assert (body["serving_stack"], body["kv_cache_dtype"]) == ("trtllm", "fp8")

    bad = api.post(url, {**WORKLOAD, "serving_stack": "tgi", "serving_stack_version": "a b"})
    assert bad.status_code == 400
    errors = bad.json()["errors"]
    assert "tgi is not one of the available choices" in " ".join(errors["serving_stack"])
    assert "Write the version as the project does" in " ".join(errors["serving_stack_version"])


def test_the_chosen_configuration_names_its_stack(api, sized_plan):
    workload = sized_plan.workloads.get()
    chosen = api.get(f"/plans/{sized_plan.pk}/workloads/{workload.pk}").json()["chosen"]
    assert chosen["serving_stack"] == "vLLM, BF16 KV cache"


def test_the_stack_survives_export_and_import(sized_plan, org_b):
    Workload.objects.filter(plan=sized_plan).update(
        serving_stack="trtllm", serving_stack_version="0.21.0", kv_cache_dtype="fp8"
    )
    document = plan_export(sized_plan)
    row = document["workloads"][0]
    assert (row["serving_stack"], row["serving_stack_version"], row["kv_cache_dtype"]) == (
        "trtllm",
        "0.21.0",
        "fp8",
    )
    imported = plan_import(document, organisation=org_b)
    workload = imported.workloads.get()
    assert (workload.serving_stack, workload.kv_cache_dtype) == ("trtllm", "fp8")
    assert plan_export(imported)["workloads"][0]["serving_stack_version"] == "0.21.0"


def test_a_file_from_before_the_stack_imports_as_vllm_and_a_bad_one_is_refused(sized_plan, org_b):
    from planner.portable import PortableError

    org_b.default_serving_stack = "sglang"
    org_b.save()
    document = plan_export(sized_plan)
    for name in ("serving_stack", "serving_stack_version", "kv_cache_dtype"):
        del document["workloads"][0][name]
    # Sized before stacks were an input, the file was sized for vLLM: it stays so.
    assert plan_import(document, organisation=org_b).workloads.get().serving_stack == "vllm"

    document["workloads"][0]["serving_stack"] = "tgi"
    with pytest.raises(PortableError) as refused:
        plan_import(document, organisation=org_b)
    assert "workloads[0].serving_stack" in refused.value.errors


def test_estimate_takes_sglang_and_names_the_stack(api):
    body = {
        "model": "llama-3.1-8b", "accelerator": "h100-sxm", "accelerators": 1,
        "precision": "bf16", "input_tokens": 2000, "output_tokens": 400,
        "serving_stack": "sglang", "serving_stack_version": "0.5.4", "kv_cache_dtype": "fp8",
    }  # fmt: skip
    response = api.post("/estimate", body)
    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["serving_stack"], data["serving_stack_version"]) == ("sglang", "0.5.4")
    assert data["provenance"].endswith("sized for SGLang 0.5.4, FP8 KV cache")
    wrong = api.post("/estimate", {**body, "accelerator": "mi300x", "serving_stack": "trtllm"})
    assert wrong.status_code in (400, 422)
    assert "NVIDIA GPUs only" in wrong.content.decode()
