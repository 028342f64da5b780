"""Uploading a traffic log: the figures shown, the workload filled, nothing kept on failure."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from catalog.models import ModelArchitecture
from planner.measured import logs
from planner.measured.models import LogColumnMapping, MeasuredSettings, TrafficLogImport
from planner.models import Client, Plan, Workload

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


@pytest.fixture
def workload(org_a, catalog):
    client = Client.objects.create(organisation=org_a, name="Acme")
    plan = Plan.objects.create(organisation=org_a, client=client, name="Support", currency="EUR")
    return Workload.objects.create(
        plan=plan, name="Chat", model=ModelArchitecture.objects.get(slug="llama-3.1-8b"),
        precision="fp8", input_tokens_mean=2000, output_tokens_mean=300, ttft_ms=1000,
        tpot_ms=50, peak_concurrency=100, region_shares={"us-east": 100},
    )  # fmt: skip


def upload(client, workload, name: str, mapping: str, content: bytes | None = None, **extra):
    data = content if content is not None else (FIXTURES / name).read_bytes()
    url = reverse("measured:logs", args=[workload.plan_id, workload.pk])
    return client.post(url, {"file": SimpleUploadedFile(name, data), "mapping": mapping, **extra})


def test_a_gateway_log_shows_its_figures_and_fills_the_workload(
    client, consultant_a, workload, media
):
    client.force_login(consultant_a)
    response = upload(client, workload, "gateway_log.jsonl", "preset:openai_gateway")
    job = TrafficLogImport.objects.get()
    assert response.status_code == 302 and job.status == "succeeded"
    assert set(job.result) == {"all", "chat", "summary"}
    assert not job.file  # retention 0: the raw file is gone once read
    assert not any(media.rglob("*.jsonl"))

    page = client.get(response.url + "?type=chat").content.decode()
    # Chat: prompts 100..800 → mean 450, p95 rank 6.65 → 700 + 0.65 × 100 = 765.
    assert 'data-testid="input-lengths">450 / 765<' in page
    assert "from arrival times and durations" in page
    assert 'data-plotly-figure="traffic-daily"' in page

    filled = client.post(response.url, {"request_type": "chat"})
    assert filled.status_code == 302
    workload.refresh_from_db()
    assert (workload.input_tokens_mean, workload.input_tokens_p95) == (450, 765)
    # Six chat requests in 09:00 → 0.1 req/s; six in flight at once.
    assert workload.peak_requests_per_s == 0.1 and workload.peak_concurrency == 6
    assert workload.region_shares == {
        "eu-west": pytest.approx(66.7),
        "us-east": pytest.approx(33.3),
    }
    assert workload.daily_profile[9] == 1.0
    listing = client.get(reverse("measured:logs", args=[workload.plan_id, workload.pk]))
    assert "Traffic from gateway_log.jsonl (2026-10-05 to 2026-10-05, request type chat)" in (
        listing.content.decode()
    )


def test_a_usage_export_says_littles_law_and_saves_its_mapping(client, consultant_a, workload):
    client.force_login(consultant_a)
    response = upload(
        client, workload, "usage_export.csv", "preset:usage_export", save_as="Acme usage"
    )
    page = client.get(response.url).content.decode()
    # No durations: W = TTFT 1 s + 300 tokens × 50 ms = 16 s; L = 3/60 req/s × 16 s = 0.8.
    assert "0.8 (Little's law: busiest minute × 16.0 s per request)" in page
    assert "16.7 % a week over 3 full weeks" in page
    mapping = LogColumnMapping.objects.get()
    assert (mapping.name, mapping.log_format, mapping.columns["input_tokens"]) == (
        "Acme usage", "csv", "prompt_tokens",
    )  # fmt: skip
    # The saved mapping is offered on the next upload.
    form_page = client.get(reverse("measured:logs", args=[workload.plan_id, workload.pk]))
    assert f'value="saved:{mapping.pk}"' in form_page.content.decode()


def test_a_malformed_row_is_named_and_nothing_is_saved(client, consultant_a, workload, media):
    client.force_login(consultant_a)
    lines = (FIXTURES / "usage_export.csv").read_text().splitlines(keepends=True)
    lines[4] = lines[4].replace(",200,", ",-3,")
    response = upload(
        client, workload, "usage_export.csv", "preset:usage_export", "".join(lines).encode()
    )
    job = TrafficLogImport.objects.get()
    assert job.status == "failed" and job.result == {}
    assert (
        'line 5, column 6 "completion_tokens": output tokens is not a whole non-negative'
        in job.problem
    )
    assert not job.file and not any(media.rglob("*.csv"))
    page = client.get(response.url).content.decode()
    assert 'data-testid="log-problem"' in page and "Nothing of this file was saved" in page
    workload.refresh_from_db()
    assert workload.input_tokens_mean == 2000


def test_a_mapping_without_the_token_columns_is_refused_next_to_the_field(
    client, consultant_a, workload
):
    client.force_login(consultant_a)
    response = upload(client, workload, "usage_export.csv", "custom", col_timestamp="timestamp")
    assert response.status_code == 400
    page = response.content.decode()
    assert "Not readable: the column mapping needs input_tokens, output_tokens" in page
    assert "Say whether the log is CSV or JSON Lines" in page
    assert not TrafficLogImport.objects.exists()


def test_retention_keeps_the_raw_file_then_purges_it(client, org_a, owner_a, workload, media):
    MeasuredSettings.objects.create(organisation=org_a, raw_log_retention_days=30)
    client.force_login(owner_a)
    upload(client, workload, "gateway_log.jsonl", "preset:openai_gateway")
    job = TrafficLogImport.objects.get()
    assert job.file and job.file_expires_at is not None
    assert logs.logs_purge_expired(organisation=org_a, now=job.file_expires_at) == 1
    job.refresh_from_db()
    assert not job.file and job.result  # the figures stay


def test_large_logs_run_as_a_background_job_with_progress(
    client, consultant_a, workload, monkeypatch, django_capture_on_commit_callbacks
):
    from planner.engine import traffic_log_columns
    from planner.jobs import JobRecorder

    monkeypatch.setattr(logs, "INLINE_BYTES", 10)
    # Blocks of 700 bytes: two or three of the fixture's 310-byte lines each.
    monkeypatch.setattr(traffic_log_columns, "BLOCK_BYTES", 700)
    reported = []
    original = JobRecorder.__call__

    def spy(self, progress, message):
        reported.append((progress, message))
        original(self, progress, message)

    monkeypatch.setattr(JobRecorder, "__call__", spy)
    client.force_login(consultant_a)
    # CELERY_TASK_ALWAYS_EAGER in tests: the queued task runs when the request commits.
    with django_capture_on_commit_callbacks(execute=True):
        upload(client, workload, "gateway_log.jsonl", "preset:openai_gateway")
    job = TrafficLogImport.objects.get()
    assert job.status == "succeeded" and job.worker != "inline"
    assert job.result["all"]["requests"] == 11
    rows = [int(m.removesuffix(" rows read")) for _, m in reported]
    assert len(rows) >= 4 and rows == sorted(rows) and rows[-1] == 11
    assert all(0 < p <= 0.95 for p, _ in reported)


def test_other_organisations_cannot_see_a_log(client, consultant_a, owner_b, workload):
    client.force_login(consultant_a)
    response = upload(client, workload, "gateway_log.jsonl", "preset:openai_gateway")
    client.force_login(owner_b)
    assert client.get(response.url).status_code == 404
