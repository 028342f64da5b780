"""A load test or traffic log that changes a fleet says so on the overview and in the history."""

import html
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from planner import sizing
from planner.measured.demo import _sweep_files
from planner.measured.models import FleetNotice
from planner.models import WorkloadKind
from sourcing.models import PlanEvent
from tests.conftest import make_member
from tests.measured.test_log_views import media, upload, workload  # noqa: F401

LATENCIES = ("mean_ttft_ms", "p95_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p95_tpot_ms",
             "p99_tpot_ms", "mean_e2el_ms")  # fmt: skip


def _text(response) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode()))


def _slow_sweep(chat) -> list[SimpleUploadedFile]:
    """The demo's sweep of the chosen configuration at half its throughput, twice its latency:
    a replica carries less, so the fleet grows."""
    files = []
    for i, data in enumerate(_sweep_files(chat)):
        data["request_throughput"] /= 2
        data["output_throughput"] /= 2
        for key in LATENCIES:
            data[key] *= 2
        files.append(SimpleUploadedFile(f"slow-{i}.json", json.dumps(data).encode()))
    return files


@pytest.fixture
def chat(demo, client):
    plan, user, _ = demo
    client.force_login(user)
    return plan.workloads.select_related("chosen_accelerator").get(kind=WorkloadKind.CHAT)


def _attach(client, chat, files):
    return client.post(
        reverse("measured:measurements", args=[chat.plan_id, chat.pk]),
        {
            "files": files,
            "accelerator": chat.chosen_accelerator_id,
            "precision": chat.chosen_precision,
            "tensor_parallel": chat.chosen_tensor_parallel,
            "serving_stack": "vLLM",
            "stack_version": "0.11.0",
        },
    )


def test_a_load_test_that_changes_the_fleet_says_so_on_the_overview_and_in_the_history(
    client, chat
):
    before = chat.chosen_accelerators
    response = _attach(client, chat, _slow_sweep(chat))
    assert response.status_code == 302, response.content.decode()[:2000]
    chat.refresh_from_db()
    after = chat.chosen_accelerators
    assert after > before  # half the throughput per replica: more replicas

    accelerator = chat.chosen_accelerator.name.split(" (")[0]
    said = (
        f"Load test 'vLLM 0.11.0 {accelerator} {chat.chosen_precision.upper()} TP "
        f"{chat.chosen_tensor_parallel}' changed {chat.name} from {before} to {after} "
        f"accelerators on {timezone.localdate():%Y-%m-%d}."
    )
    overview = client.get(reverse("plan_detail", args=[chat.plan_id]))
    assert said in " ".join(_text(overview).split())
    assert overview.content.decode().count('data-testid="fleet-notice"') == 1

    event = PlanEvent.objects.filter(plan=chat.plan, kind="fleet").first()  # newest
    assert event.message == said
    assert (event.data["before"], event.data["after"]) == (before, after)
    history = client.get(reverse("sourcing:history", args=[chat.plan_id]))
    assert said in " ".join(_text(history).split())


def test_a_notice_stays_until_dismissed_or_superseded(client, chat):
    before = chat.chosen_accelerators
    history = PlanEvent.objects.filter(plan=chat.plan, kind="fleet").count()
    _attach(client, chat, _slow_sweep(chat))
    first = FleetNotice.objects.get(workload=chat, closed_at=None)
    # The same candidate measured again at the demo's own figures: the fleet changes back,
    # and that newer notice replaces the first on the overview.
    _attach(client, chat, [SimpleUploadedFile(f"again-{i}.json", json.dumps(d).encode())
                           for i, d in enumerate(_sweep_files(chat))])  # fmt: skip
    first.refresh_from_db()
    assert first.closed_because == FleetNotice.Closed.SUPERSEDED
    second = FleetNotice.objects.get(workload=chat, closed_at=None)
    assert second.accelerators_after == before
    overview = client.get(reverse("plan_detail", args=[chat.plan_id])).content.decode()
    assert overview.count('data-testid="fleet-notice"') == 1
    assert f'id="fleet-notice-{second.pk}"' in overview

    url = reverse("measured:fleet_notice_dismiss", args=[chat.plan_id, second.pk])
    response = client.post(url, headers={"HX-Request": "true"})
    assert response.status_code == 200 and response.content == b""
    second.refresh_from_db()
    assert second.closed_because == FleetNotice.Closed.DISMISSED
    overview = client.get(reverse("plan_detail", args=[chat.plan_id])).content.decode()
    assert 'data-testid="fleet-notice"' not in overview
    # The history keeps both sentences.
    assert PlanEvent.objects.filter(plan=chat.plan, kind="fleet").count() == history + 2


def test_a_viewer_cannot_dismiss(client, chat, demo):
    notice = FleetNotice.objects.create(
        organisation=demo[2], plan=chat.plan, workload=chat, message="x"
    )
    viewer = make_member(demo[2], "notice-viewer", "viewer")
    client.force_login(viewer)
    url = reverse("measured:fleet_notice_dismiss", args=[chat.plan_id, notice.pk])
    assert client.post(url).status_code == 403
    notice.refresh_from_db()
    assert notice.closed_at is None


def test_a_traffic_log_that_changes_the_fleet_says_so(client, consultant_a, workload, media):  # noqa: F811
    # Sized for 3,000 in flight; the log's chat peak is 6 in flight (test_log_views).
    workload.peak_concurrency = 3000
    workload.save()
    candidate = next(c for c in sizing.workload_sweep(workload).candidates if c.feasible)
    sizing.workload_choose(workload=workload, candidate=candidate)
    workload.refresh_from_db()
    before = workload.chosen_accelerators
    client.force_login(consultant_a)
    response = upload(client, workload, "gateway_log.jsonl", "preset:openai_gateway")
    assert client.post(response.url, {"request_type": "chat"}).status_code == 302
    workload.refresh_from_db()
    after = workload.chosen_accelerators
    assert after < before
    said = (
        f"Traffic log 'gateway_log.jsonl' (request type chat) changed Chat from {before} to "
        f"{after} accelerator{'s' if after != 1 else ''} on {timezone.localdate():%Y-%m-%d}."
    )
    overview = client.get(reverse("plan_detail", args=[workload.plan_id]))
    assert said in " ".join(_text(overview).split())
    assert PlanEvent.objects.get(plan=workload.plan, kind="fleet").message == said
