"""Attaching a load test to a candidate: what the consultant sees and what is saved."""

import importlib
import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from catalog.models import Accelerator, ModelArchitecture
from planner.measured import services
from planner.measured.models import LoadTestImport, LoadTestSweep
from planner.models import Client, Plan, Workload
from tests.conftest import make_member
from tests.measured.big_reports import write_guidellm_report

FIXTURES = Path(__file__).resolve().parent / "fixtures"
KEY = "h100-sxm|fp8|1"


@pytest.fixture
def workload(org_a, catalog):
    client = Client.objects.create(organisation=org_a, name="Acme")
    plan = Plan.objects.create(organisation=org_a, client=client, name="Support", currency="EUR")
    return Workload.objects.create(
        plan=plan, name="Chat", model=ModelArchitecture.objects.get(slug="llama-3.1-8b"),
        precision="fp8", input_tokens_mean=1000, output_tokens_mean=250, percentile=99,
        ttft_ms=500, tpot_ms=50, peak_concurrency=200, headroom_pct=10, n_plus_one=True,
    )  # fmt: skip


def vllm_files():
    return [
        SimpleUploadedFile(p.name, p.read_bytes(), content_type="application/json")
        for p in sorted(FIXTURES.glob("vllm-*.json"))
    ]


def upload(client, workload, files, **fields):
    data = {
        "files": files,
        "accelerator": Accelerator.objects.get(slug="h100-sxm").pk,
        "precision": "fp8",
        "tensor_parallel": 1,
        "serving_stack": "vLLM",
        "stack_version": "0.11.0",
        **fields,
    }
    url = reverse("measured:measurements", args=[workload.plan_id, workload.pk])
    return client.post(url, data)


def sizing_page(client, workload) -> str:
    """Every TP of every accelerator (by default the table keeps the cheapest TP of each)."""
    url = reverse("workload_sizing", args=[workload.plan_id, workload.pk]) + "?tp=all"
    return client.get(url).content.decode()


def row_of(page: str, key: str) -> str:
    start = page.index(f'data-key="{key}"')
    return page[start : page.index("</tr>", start)]


def test_a_sweep_sizes_its_candidate_and_the_row_says_measured(client, consultant_a, workload):
    client.force_login(consultant_a)
    before = row_of(sizing_page(client, workload), KEY)
    assert "measured" not in before

    response = upload(client, workload, vllm_files())

    sweep = LoadTestSweep.objects.get()
    assert response.status_code == 302
    assert (sweep.tool, sweep.tensor_parallel, len(sweep.points)) == ("vllm", 1, 3)
    assert sweep.measured_on.isoformat() == "2026-11-02"
    assert sweep.organisation_id == workload.plan.organisation_id
    row = row_of(sizing_page(client, workload), KEY)
    assert 'data-testid="measured-badge"' in row
    assert "2026-11-02" in row
    # 16 + 48/11 = 20.4 in flight per replica; 200 ÷ 20.36 ÷ 0.9 → 11, N+1 → 12 replicas.
    cells = re.findall(r'<td class="num">([^<]*)</td>', row)
    # TP, batch per replica, TTFT, TPOT, tokens/s, replicas, accelerators, servers, ...
    assert cells[1] == "20"  # a batch is whole requests; the 20.4 mean is on the sweep's page
    assert cells[5:8] == ["12", "12", "2"]


def test_the_measured_row_keeps_its_place_in_the_default_table(client, consultant_a, workload):
    client.force_login(consultant_a)
    upload(client, workload, vllm_files())
    url = reverse("workload_sizing", args=[workload.plan_id, workload.pk])
    page = client.get(url).content.decode()
    # One row per accelerator and precision, but the measured TP 1 is not folded into the
    # cheaper modelled TP 2 of the same accelerator.
    assert 'data-testid="measured-badge"' in row_of(page, KEY)
    assert 'data-key="h100-sxm|fp8|2"' in page


def test_the_detail_shows_measured_and_modelled_replicas_and_the_models_error(
    client, consultant_a, workload
):
    client.force_login(consultant_a)
    response = upload(client, workload, vllm_files())
    page = client.get(response.url).content.decode()
    assert 'data-testid="measured-capacity"' in page
    assert "interpolated between the measured points at 16 and 64 in flight" in page
    assert '<td class="num" data-testid="measured-replicas">12</td>' in page
    assert 'data-testid="modelled-replicas"' in page
    assert 'data-plotly-figure="measured-figure"' in page
    table = page[page.index('data-testid="model-error"') :]
    assert table.count("<tr>") == 4  # header and the three measured loads


def test_a_sweep_on_other_lengths_says_so_and_is_not_applied(client, consultant_a, workload):
    workload.input_tokens_mean = 4000
    workload.save()
    client.force_login(consultant_a)
    response = upload(client, workload, vllm_files())
    page = client.get(response.url).content.decode()
    assert "Measured on other lengths: input 1,000 tokens measured against 4,000" in page
    row = row_of(sizing_page(client, workload), KEY)
    assert 'data-testid="measured-not-applied"' in row
    assert 'data-testid="measured-badge"' not in row


def test_a_sweep_on_another_serving_stack_is_not_applied(client, consultant_a, workload):
    client.force_login(consultant_a)
    response = upload(client, workload, vllm_files())
    assert 'data-testid="measured-badge"' in row_of(sizing_page(client, workload), KEY)
    # The workload moves to TensorRT-LLM: the vLLM measurement no longer sizes it.
    workload.serving_stack = "trtllm"
    workload.save()
    page = client.get(response.url).content.decode()
    assert "Measured on vLLM; the workload is sized for TensorRT-LLM." in page
    assert "and serving stack (TensorRT-LLM)" in page
    row = row_of(sizing_page(client, workload), KEY)
    assert 'data-testid="measured-not-applied"' in row


def test_a_file_that_is_not_a_load_test_is_refused_next_to_the_field(
    client, consultant_a, workload
):
    client.force_login(consultant_a)
    bad = SimpleUploadedFile("notes.json", b'{"hello": 1}', content_type="application/json")
    response = upload(client, workload, [bad])
    page = response.content.decode()
    assert response.status_code == 400
    assert "notes.json: not a load-test result this planner reads" in page
    assert 'value="0.11.0"' in page  # what was typed is kept
    assert not LoadTestSweep.objects.exists()


def test_a_chosen_candidate_is_replanned_on_the_measurement(client, consultant_a, workload):
    client.force_login(consultant_a)
    client.post(
        reverse("workload_choose", args=[workload.plan_id, workload.pk]), {"candidate": KEY}
    )
    workload.refresh_from_db()
    modelled = workload.chosen_replicas
    upload(client, workload, vllm_files())
    workload.refresh_from_db()
    assert workload.chosen_replicas == 12 != modelled
    # Removing it gives the model back.
    sweep = LoadTestSweep.objects.get()
    client.post(reverse("measured:sweep_delete", args=[workload.plan_id, workload.pk, sweep.pk]))
    workload.refresh_from_db()
    assert workload.chosen_replicas == modelled


def test_correcting_neighbours_is_labelled_on_their_rows(client, consultant_a, workload):
    client.force_login(consultant_a)
    upload(client, workload, vllm_files())
    sweep = LoadTestSweep.objects.get()
    client.post(
        reverse("measured:sweep_correction", args=[workload.plan_id, workload.pk, sweep.pk]),
        {"enabled": "1"},
    )
    sweep.refresh_from_db()
    assert sweep.correct_neighbours
    neighbour = row_of(sizing_page(client, workload), "h100-sxm|fp8|2")
    assert 'data-testid="corrected-badge"' in neighbour


def test_other_organisations_and_viewers(client, org_a, owner_b, workload):
    client.force_login(make_member(org_a, "viewer_m", "viewer"))
    assert upload(client, workload, vllm_files()).status_code == 403
    assert not LoadTestSweep.objects.exists()
    client.force_login(owner_b)
    url = reverse("measured:measurements", args=[workload.plan_id, workload.pk])
    assert client.get(url).status_code == 404


def test_the_cheapest_badge_is_the_first_row_of_the_cost_sort_after_a_measurement(
    client, consultant_a, workload
):
    """A load test changes its row's cost after the engine ranked the sweep: the badge and the
    cost sort are re-derived from one ranking (engine.sweep.cost_order), never the modelled
    best kept from before the measurement."""
    from planner import sizing

    client.force_login(consultant_a)
    url = reverse("workload_sizing", args=[workload.plan_id, workload.pk]) + "?tp=all"
    modelled_best = client.get(url).context["best_key"]
    assert modelled_best == "gh200|fp8|1"
    # The modelled cheapest row measured: slower than modelled, it is no longer the cheapest.
    upload(client, workload, vllm_files(), accelerator=Accelerator.objects.get(slug="gh200").pk)
    response = client.get(url)
    rows = [(key, c) for key, c, _ in response.context["candidates"] if c.feasible]
    priced = [(key, c.usd_per_million_output_tokens) for key, c in rows
              if c.usd_per_million_output_tokens is not None]  # fmt: skip
    cheapest_cost = min(cost for _, cost in priced)
    best_key = response.context["best_key"]
    assert best_key == priced[0][0]  # the first row of the cost sort
    assert dict(priced)[best_key] == cheapest_cost
    page = response.content.decode()
    assert "cheapest</span>" in row_of(page, best_key)
    assert page.count('badge-succeeded">cheapest') == 1
    measured = sizing.workload_sweep(workload)
    measured_row = next(c for c in measured.candidates if sizing.candidate_key(c) == modelled_best)
    modelled = sizing.workload_sweep(workload, measured=False)
    modelled_row = next(c for c in modelled.candidates if sizing.candidate_key(c) == modelled_best)
    # The measurement moved the row's cost (else this test would not test the re-ranking).
    assert measured_row.usd_per_million_output_tokens != modelled_row.usd_per_million_output_tokens
    assert best_key != modelled_best


def llmperf_file(**changes) -> SimpleUploadedFile:
    path = FIXTURES / "meta-llama-Llama-3-1-8B-Instruct_1000_250_summary.json"
    data = {**json.loads(path.read_text()), **changes}
    return SimpleUploadedFile(path.name, json.dumps(data).encode(), "application/json")


def test_a_point_that_held_far_under_its_setting_says_so_and_sizes_on_the_load_held(
    client, consultant_a, workload
):
    client.force_login(consultant_a)
    # LLMPerf set to 8: 76.125 completed requests a minute × 3.2 s held 4.06 in flight.
    response = upload(
        client, workload, [llmperf_file(results_num_completed_requests_per_min=76.125)]
    )
    page = client.get(response.url).content.decode()
    points = page[page.index('data-testid="measured-points"') :]
    assert '<td class="num">4.06</td><td class="num">8</td>' in points
    assert "Held only 51 % of its setting" in points
    assert "One replica holds <strong>4.1</strong> requests in flight" in page
    assert "the measured point at 4.06 (set 8) in flight" in page
    # 200 ÷ 4.06 → 50; ÷ 0.9 → 55; N+1 → 56 replicas (the setting of 8 would say 29).
    assert '<td class="num" data-testid="measured-replicas">56</td>' in page
    listing = client.get(reverse("measured:measurements", args=[workload.plan_id, workload.pk]))
    assert "1 point held under 80 % of its setting" in listing.content.decode()


def test_points_stored_at_their_setting_are_migrated_to_the_load_held():
    migration = importlib.import_module("planner.measured.migrations.0002_points_at_the_load_held")
    stored = {"concurrency": 8, "concurrency_basis": "set", "requests_per_s": 1.26875,
              "e2e_mean_ms": 3200.0}  # fmt: skip
    moved = migration._held(stored)
    assert moved["concurrency"] == pytest.approx(4.06)
    assert (moved["nominal_concurrency"], moved["concurrency_basis"]) == (8, "littles_law")
    assert migration._held(moved) == moved  # run twice, changed once
    no_time = migration._held({**stored, "e2e_mean_ms": None})
    assert (no_time["concurrency"], no_time["concurrency_basis"]) == (8, "set")


def test_a_failed_run_in_a_sweep_is_left_out_and_named_on_the_page(client, consultant_a, workload):
    client.force_login(consultant_a)
    failed = json.loads(next(FIXTURES.glob("vllm-*concurrency64-*.json")).read_text())
    failed.update(completed=0, request_throughput=0.0, output_throughput=0.0, max_concurrency=128)
    files = [*vllm_files(), SimpleUploadedFile("c128.json", json.dumps(failed).encode())]
    response = upload(client, workload, files)
    sweep = LoadTestSweep.objects.get()
    assert len(sweep.points) == 3
    page = client.get(response.url).content.decode()
    skipped = page[page.index('data-testid="skipped-stages"') :]
    assert "c128.json: no request succeeded (completed: 0), left out of the sweep" in skipped
    # Only failed runs: refused next to the field, nothing stored.
    sweep.delete()
    response = upload(
        client, workload, [SimpleUploadedFile("c128.json", json.dumps(failed).encode())]
    )
    assert response.status_code == 400
    assert "nothing measured: c128.json: no request succeeded" in response.content.decode()
    assert not LoadTestSweep.objects.exists()


def test_a_run_over_the_error_rate_limit_is_shown_and_left_out(client, consultant_a, workload):
    client.force_login(consultant_a)
    failing = json.loads(next(FIXTURES.glob("vllm-*concurrency64-*.json")).read_text())
    failing.update(failed=40, max_concurrency=128)  # vllm bench serve: 40 of 440 failed
    files = [*vllm_files(), SimpleUploadedFile("c128.json", json.dumps(failing).encode())]
    response = upload(client, workload, files)
    assert len(LoadTestSweep.objects.get().points) == 3
    page = client.get(response.url).content.decode()
    assert "more than 5 % of the finished requests failed" in page
    skipped = page[page.index('data-testid="skipped-stages"') :]
    assert (
        "c128.json: 40 of 440 requests failed (9.1%, above the 5% error-rate limit), left out "
        "of the sweep" in skipped
    )
    listing = client.get(reverse("measured:measurements", args=[workload.plan_id, workload.pk]))
    assert "1 failed stage left out" in listing.content.decode()


def test_stored_llmperf_points_lose_the_first_token_from_their_tpot():
    migration = importlib.import_module("planner.measured.migrations.0002_points_at_the_load_held")
    stored = {"output_tokens_mean": 250.0, "ttft_mean_ms": 150.0, "e2e_mean_ms": 3200.0,
              "tpot_mean_ms": 12.801, "tpot_p95_ms": 14.544, "tpot_p99_ms": None}  # fmt: skip
    moved = migration._llmperf_tpot(stored)
    assert moved["tpot_mean_ms"] == pytest.approx(3050 / 249)
    assert moved["tpot_p95_ms"] == pytest.approx(14.0) and moved["tpot_p99_ms"] is None
    assert migration._llmperf_tpot(moved) == moved


def test_an_aiperf_export_attaches_and_the_page_lists_aiperf(client, consultant_a, workload):
    client.force_login(consultant_a)
    url = reverse("measured:measurements", args=[workload.plan_id, workload.pk])
    page = client.get(url).content.decode()
    assert "NVIDIA AIPerf profile export" in page and "profile_export_aiperf.json" in page
    path = FIXTURES / "profile_export_aiperf.json"
    response = upload(client, workload, [SimpleUploadedFile(path.name, path.read_bytes())])
    sweep = LoadTestSweep.objects.get()
    assert (sweep.tool, sweep.model_name) == ("aiperf", "meta-llama/Llama-3.1-8B-Instruct")
    detail = client.get(response.url).content.decode()
    assert "measured with NVIDIA AIPerf profile export" in detail
    assert "the measured point at 8 (set 10) in flight" in detail


def test_a_50_mb_guidellm_report_with_every_request_is_read(
    client, consultant_a, workload, tmp_path
):
    """20 MB, the former cap, refused GuideLLM reports of 3,800 requests or more."""
    path = tmp_path / "benchmarks.json"
    size = write_guidellm_report(path, 10_000)
    assert size > 50 * 10**6
    client.force_login(consultant_a)
    with path.open("rb") as report:
        response = upload(client, workload, [report])
    assert response.status_code == 302
    sweep = LoadTestSweep.objects.get()
    assert (sweep.tool, len(sweep.points)) == ("guidellm", 3)
    assert [p["concurrency"] for p in sweep.points] == [3.92, 15.68, 62.72]


def test_a_report_above_the_cap_is_refused_with_the_reason(
    client, consultant_a, workload, monkeypatch
):
    assert services.MAX_FILE_BYTES == 2**30  # no cap below 1 GB
    monkeypatch.setattr(services, "MAX_FILE_BYTES", 2**20)
    client.force_login(consultant_a)
    big = SimpleUploadedFile("benchmarks.json", b" " * 2**21 + b"{}")
    response = upload(client, workload, [big])
    assert response.status_code == 400
    assert (
        "benchmarks.json: 2 MB, larger than the 1 MB a result file may be"
        in response.content.decode()
    )
    assert not LoadTestSweep.objects.exists() and not LoadTestImport.objects.exists()


def test_a_large_sweep_is_stored_and_read_by_a_worker(
    client, consultant_a, workload, monkeypatch, settings, tmp_path,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    settings.MEDIA_ROOT = tmp_path
    monkeypatch.setattr(services, "INLINE_SWEEP_BYTES", 100)  # every sweep goes to a worker
    client.force_login(consultant_a)
    # CELERY_TASK_ALWAYS_EAGER in tests: the queued task runs when the request commits.
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, workload, vllm_files())
    job = LoadTestImport.objects.get()
    assert response.status_code == 302 and response.url.endswith(f"/uploads/{job.pk}/")
    assert job.status == "succeeded" and job.worker != "inline"
    sweep = LoadTestSweep.objects.get()
    assert job.sweep == sweep and len(sweep.points) == 3
    assert sweep.accelerator.slug == "h100-sxm" and sweep.serving_stack == "vLLM"
    assert not any(p.is_file() for p in tmp_path.rglob("*"))  # the stored files are gone
    opened = client.get(response.url)
    assert opened.status_code == 302 and opened.url.endswith(f"/sweeps/{sweep.pk}/")

    # A file that is no load test: the job fails and its page says why.
    sweep.delete()
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(
            client, workload, [SimpleUploadedFile("notes.json", b'{"hello": 1}' + b" " * 200)]
        )
    failed = LoadTestImport.objects.latest("pk")
    assert failed.status == "failed" and failed.sweep is None
    page = client.get(response.url).content.decode()
    assert 'data-testid="sweep-import-problem"' in page
    assert "notes.json: not a load-test result this planner reads" in page
    assert not LoadTestSweep.objects.exists()
    assert not any(p.is_file() for p in tmp_path.rglob("*"))
