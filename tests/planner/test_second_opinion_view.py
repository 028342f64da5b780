"""The sizing page's detail panel shows aiconfigurator's estimate beside the planner's, with
the difference, and says why when the peer does not cover a candidate. The panel loads it
after it is shown (the peer's first call on a GPU system takes seconds), so the sizing page
and its autosave never call the peer themselves."""

import html

import pytest
from django.urls import reverse

from catalog.models import ModelArchitecture
from planner import sizing
from planner.models import Client, Plan, Workload
from planner.peer.aiconfigurator import PeerRequest, peer_estimate


@pytest.fixture
def workload(org_a, catalog, settings):
    settings.SECOND_OPINION = True  # off for the rest of the suite (kernel tables load slowly)
    client = Client.objects.create(organisation=org_a, name="Acme")
    plan = Plan.objects.create(organisation=org_a, client=client, name="Support", currency="EUR")
    return Workload.objects.create(
        plan=plan, name="Chat", model=ModelArchitecture.objects.get(slug="llama-3.1-8b"),
        precision="fp8", input_tokens_mean=1024, output_tokens_mean=256, ttft_ms=1000,
        tpot_ms=50, peak_concurrency=100, serving_stack="trtllm", kv_cache_dtype="fp8",
    )  # fmt: skip


def _detail(client, workload, key):
    """The detail panel as htmx swaps it in, then the second opinion it loads."""
    panel = client.get(
        reverse("candidate_detail", args=[workload.plan_id, workload.pk, key]),
        headers={"HX-Request": "true"},
    ).content.decode()
    url = reverse("candidate_second_opinion", args=[workload.plan_id, workload.pk, key])
    assert f'hx-get="{url}" hx-trigger="load"' in panel
    return client.get(url, headers={"HX-Request": "true"})


def test_the_sizing_page_and_its_autosave_never_wait_for_the_peer(
    client, consultant_a, workload, monkeypatch
):
    def refused(request):
        raise AssertionError("the page called the peer")

    monkeypatch.setattr(sizing.peer, "peer_estimate", refused)
    client.force_login(consultant_a)
    key = "h100-sxm|fp8|1"
    client.post(
        reverse("workload_choose", args=[workload.plan_id, workload.pk]), {"candidate": key}
    )
    url = reverse("workload_sizing", args=[workload.plan_id, workload.pk])

    page = client.get(url).content.decode()

    later = reverse("candidate_second_opinion", args=[workload.plan_id, workload.pk, key])
    assert f'hx-get="{later}?line=chosen"' in page  # the chosen line's, loaded after
    assert f'hx-get="{later}" hx-trigger="load"' in page  # the panel's
    assert f'<a href="{later}">open it on its own</a>' in page  # without JavaScript


def test_the_panel_shows_both_models_and_the_difference(client, consultant_a, workload):
    client.force_login(consultant_a)
    key = "h100-sxm|fp8|1"

    response = _detail(client, workload, key)

    page = response.content.decode()
    candidate = sizing.candidate_find(sizing.workload_sweep(workload), key)
    opinion = sizing.candidate_second_opinion(workload, candidate).opinion
    # The peer's column is aiconfigurator's own figure for this replica at the candidate's batch.
    peer = peer_estimate(
        PeerRequest(
            accelerator="h100-sxm", model="llama-3.1-8b", precision="fp8", kv_cache_dtype="fp8",
            serving_stack="trtllm", tensor_parallel=1,
            batch_per_replica=candidate.batch_per_replica, input_tokens=1024, output_tokens=256,
        )
    )  # fmt: skip
    assert opinion.peer.output_tokens_per_s == peer.output_tokens_per_s_per_replica
    difference = peer.output_tokens_per_s_per_replica / opinion.planner.output_tokens_per_s - 1
    assert opinion.throughput_difference_pct == pytest.approx(difference * 100)
    assert 'data-testid="second-opinion-table"' in page
    assert f"{opinion.planner.output_tokens_per_s:,.0f}" in page
    assert f"{peer.output_tokens_per_s_per_replica:,.0f}" in page
    sign = "+" if difference > 0 else ""
    assert f"{sign}{difference * 100:.0f} %" in page
    assert f"{peer.ttft_ms:.0f} ms" in page and f"{peer.tpot_ms:.1f} ms" in page
    assert "Second opinion: aiconfigurator-core 0.12.0" in page  # its source and version
    assert "kernel tables give" in page
    if opinion.widened:
        assert f"widened from ±{candidate.expected_error_pct:.0f} %" in page
    else:
        assert f"±{candidate.expected_error_pct:.0f} %, unchanged by the second opinion" in page


def test_a_candidate_the_peer_does_not_cover_says_why(client, consultant_a, workload):
    client.force_login(consultant_a)
    workload.serving_stack = "vllm"  # TensorRT-LLM does not run on AMD
    workload.save()

    page = _detail(client, workload, "mi300x|fp8|1").content.decode()

    assert 'data-testid="second-opinion-not-covered"' in page
    assert "Not covered: aiconfigurator has no measured kernel tables for Instinct MI300X." in page
    assert 'data-testid="second-opinion-table"' not in page
    # Without JavaScript the panel's link opens the same section on a page of its own.
    url = reverse("candidate_second_opinion", args=[workload.plan_id, workload.pk, "mi300x|fp8|1"])
    alone = client.get(url).content.decode()
    assert "<html" in alone and "Not covered: aiconfigurator has no measured kernel" in alone


def test_the_chosen_configuration_carries_the_second_opinion(client, consultant_a, workload):
    client.force_login(consultant_a)
    key = "h100-sxm|fp8|1"
    client.post(
        reverse("workload_choose", args=[workload.plan_id, workload.pk]), {"candidate": key}
    )
    candidate = sizing.candidate_find(sizing.workload_sweep(workload), key)
    opinion = sizing.candidate_second_opinion(workload, candidate).opinion  # cached: no new call

    url = reverse("candidate_second_opinion", args=[workload.plan_id, workload.pk, key])
    page = client.get(f"{url}?line=chosen", headers={"HX-Request": "true"})

    line = (
        page.content.decode().split('data-testid="chosen-second-opinion">')[1].split("</span>")[0]
    )
    sign = "+" if opinion.throughput_difference_pct > 0 else ""
    assert line.startswith(
        f"Second opinion (aiconfigurator, at {candidate.batch_per_replica} requests per replica): "
        f"{sign}{opinion.throughput_difference_pct:.0f} % throughput"
    )


def test_a_large_disagreement_widens_the_band_on_the_page(
    client, consultant_a, workload, monkeypatch
):
    # The peer's answer is set at the adapter's boundary (no kernel tables loaded): twice the
    # planner's throughput at the same point, so the band must reach +100 %.
    key = "h100-sxm|fp8|1"
    candidate = sizing.candidate_find(sizing.workload_sweep(workload), key)
    planner_side = {}

    def doubled(request):
        capacity, _ = sizing._replica_curve(
            sizing.model_spec(workload.model), sizing.accelerator_specs()["h100-sxm"], "fp8", 1,
            sizing.replace(sizing.engine_workload(workload), peak_concurrency=None,
                           peak_requests_per_s=None, headroom_pct=0.0),
            1, 1, "trtllm",
        )  # fmt: skip
        state = sizing.steady_state(capacity.shape, float(request.batch_per_replica), 1024, 256)
        planner_side["tokens_per_s"] = float(state.output_tokens_per_s[0])
        return sizing.peer.PeerEstimate(
            2 * planner_side["tokens_per_s"], 100.0, 10.0, source="aiconfigurator-core 0.12.0"
        )

    monkeypatch.setattr(sizing.peer, "peer_estimate", doubled)
    client.force_login(consultant_a)

    page = html.unescape(_detail(client, workload, key).content.decode())

    band = candidate.expected_error_pct
    assert f"Expected error ±100 %, widened from ±{band:.0f} % by the second opinion" in page
    assert (
        f"aiconfigurator's kernel tables give 100 % more throughput "
        f"({2 * planner_side['tokens_per_s']:,.0f} against the planner's "
        f"{planner_side['tokens_per_s']:,.0f} output tokens/s per replica)"
    ) in page
    assert f"the band is widened from ±{band:.0f} % to ±100 % to reach it." in page
    assert 'class="notice warn" data-testid="second-opinion-reason"' in page
