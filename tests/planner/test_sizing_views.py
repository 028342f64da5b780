"""Workloads and their sizing page: presets, validation, candidates, explanation, choice."""

import html

import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse

from catalog.models import ModelArchitecture
from planner.models import Client, Plan, Workload
from planner.workload_forms import WORKLOAD_PRESETS
from tests.conftest import make_member

PROFILE = ", ".join(["0.5"] * 23 + ["1"])


@pytest.fixture
def plan(org_a, catalog):
    client = Client.objects.create(organisation=org_a, name="Acme")
    return Plan.objects.create(organisation=org_a, client=client, name="Support", currency="EUR")


def form_data(**overrides) -> dict:
    data = {
        "name": "Chat", "kind": "chat",
        "model": ModelArchitecture.objects.get(slug="llama-3.1-8b").pk, "precision": "fp8",
        "input_tokens_mean": 1000, "input_tokens_p95": 2000, "output_tokens_mean": 200,
        "output_tokens_p95": 500, "percentile": 95, "ttft_ms": 1000, "tpot_ms": 50,
        "e2e_s": "", "peak_concurrency": 100, "peak_requests_per_s": "", "headroom_pct": 20,
        "n_plus_one": "on", "daily_profile": PROFILE, "region_shares": "eu-west: 60, us-east: 40",
    }  # fmt: skip
    data.update(overrides)
    return data


@pytest.fixture
def workload(plan):
    return Workload.objects.create(
        plan=plan, name="Chat", model=ModelArchitecture.objects.get(slug="llama-3.1-8b"),
        precision="fp8", input_tokens_mean=1000, output_tokens_mean=200, ttft_ms=1000,
        tpot_ms=50, peak_concurrency=100, region_shares={"eu-west": 100},
    )  # fmt: skip


def test_add_a_workload_then_land_on_its_sizing_page(client, consultant_a, plan):
    client.force_login(consultant_a)

    response = client.post(reverse("workload_add", args=[plan.pk]), form_data())

    workload = Workload.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("workload_sizing", args=[plan.pk, workload.pk])
    assert workload.region_shares == {"eu-west": 60.0, "us-east": 40.0}
    assert workload.daily_profile[-1] == 1.0 and len(workload.daily_profile) == 24
    page = client.get(response.url).content.decode()
    assert 'data-testid="candidates"' in page
    assert "configurations meet the targets" in page


def test_presets_fill_the_form(client, consultant_a, plan):
    client.force_login(consultant_a)
    response = client.get(reverse("workload_add", args=[plan.pk]), {"kind": "rag"})
    content = response.content.decode()
    assert f'value="{WORKLOAD_PRESETS["rag"]["input_tokens_mean"]}"' in content
    assert 'value="2000"' in content  # RAG TTFT target


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"peak_concurrency": ""}, "peak_concurrency", "Give peak concurrent requests"),
        ({"tpot_ms": ""}, "ttft_ms", "both a TTFT and a TPOT target"),
        ({"input_tokens_p95": 10}, "input_tokens_p95", "cannot be below the mean"),
        ({"daily_profile": "1, 2"}, "daily_profile", "Give 24 hourly values (2 given)"),
        ({"region_shares": "mars: 100"}, "region_shares", "Unknown region 'mars'"),
        ({"region_shares": "eu-west: 60"}, "region_shares", "add up to 60 %"),
        ({"input_tokens_mean": "lots"}, "input_tokens_mean", "Enter a whole number"),
    ],
)
def test_bad_workload_input_is_explained_and_kept(
    client, consultant_a, plan, overrides, field, message
):
    client.force_login(consultant_a)

    response = client.post(reverse("workload_add", args=[plan.pk]), form_data(**overrides))

    content = html.unescape(response.content.decode())
    assert response.status_code == 400
    assert message in content
    assert f'id="err-{field}"' in content
    assert 'value="Chat"' in content  # what was typed is still there
    assert not Workload.objects.exists()


def test_htmx_change_saves_and_recomputes(client, consultant_a, workload):
    client.force_login(consultant_a)
    url = reverse("workload_sizing", args=[workload.plan_id, workload.pk])

    response = client.post(
        url,
        form_data(peak_concurrency=400),
        headers={"HX-Request": "true", "HX-Target": "sizing-results"},
    )

    content = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in content and 'id="sizing-results"' in content
    assert 'data-testid="form-saved"' in content
    workload.refresh_from_db()
    assert workload.peak_concurrency == 400


def test_htmx_bad_value_keeps_the_saved_workload_and_shows_the_error(
    client, consultant_a, workload
):
    client.force_login(consultant_a)
    url = reverse("workload_sizing", args=[workload.plan_id, workload.pk])

    response = client.post(
        url, form_data(tpot_ms=-5), headers={"HX-Request": "true", "HX-Target": "sizing-results"}
    )

    content = response.content.decode()
    assert response.status_code == 200  # htmx swaps only 2xx answers
    assert 'data-testid="form-errors"' in content
    assert 'id="err-tpot_ms" class="field-errors" hx-swap-oob="true"' in content
    workload.refresh_from_db()
    assert workload.tpot_ms == 50


def test_candidates_explained_and_chosen(client, consultant_a, workload):
    client.force_login(consultant_a)
    page = client.get(reverse("workload_sizing", args=[workload.plan_id, workload.pk]))
    candidates = page.context["candidates"]
    key, best, _ = candidates[0]
    assert best.feasible and key == page.context["best_key"]

    detail = client.get(
        reverse("candidate_detail", args=[workload.plan_id, workload.pk, key]),
        headers={"HX-Request": "true"},
    )
    assert detail.status_code == 200
    assert 'data-testid="bottleneck"' in detail.content.decode()
    assert "Weights per GPU" in detail.content.decode()
    # The detail panel chooses the candidate it explains (the table's row button does too).
    # It posts the page's one choose form (the rows' buttons do the same).
    assert (
        f'<button type="submit" form="choose-form" name="candidate" value="{html.escape(key)}"'
        in detail.content.decode()
    )
    page = client.get(reverse("workload_sizing", args=[workload.plan_id, workload.pk]))
    choose_url = reverse("workload_choose", args=[workload.plan_id, workload.pk])
    assert f'<form id="choose-form" method="post" action="{choose_url}"' in page.content.decode()

    chosen = client.post(
        reverse("workload_choose", args=[workload.plan_id, workload.pk]), {"candidate": key}
    )
    assert chosen.status_code == 302
    workload.refresh_from_db()
    assert workload.chosen_accelerator.slug == best.accelerator_slug
    assert workload.chosen_accelerators == best.accelerators
    assert workload.chosen_replicas == best.replicas >= 2  # N+1 adds a spare
    assert workload.chosen_summary["precision"] == "fp8"
    overview = client.get(reverse("plan_detail", args=[workload.plan_id])).content.decode()
    assert f"{best.accelerators} × " in overview
    again = client.get(
        reverse("candidate_detail", args=[workload.plan_id, workload.pk, key]),
        headers={"HX-Request": "true"},
    )
    assert "Choose this configuration" not in again.content.decode()  # already the choice


def test_infeasible_candidates_say_why(client, consultant_a, plan):
    big = Workload.objects.create(
        plan=plan, name="Big", model=ModelArchitecture.objects.get(slug="llama-3.1-405b"),
        precision="bf16", input_tokens_mean=2000, output_tokens_mean=200, ttft_ms=2000,
        tpot_ms=50, peak_concurrency=10,
    )  # fmt: skip
    client.force_login(consultant_a)
    page = client.get(
        reverse("workload_sizing", args=[plan.pk, big.pk]), {"show": "all", "tp": "all"}
    )
    infeasible = [c for _, c, _ in page.context["candidates"] if not c.feasible]
    l4 = next(c for c in infeasible if c.accelerator_slug == "l4")
    assert "exceed" in l4.infeasible_reason
    assert l4.infeasible_reason in page.content.decode()

    response = client.post(
        reverse("workload_choose", args=[plan.pk, big.pk]),
        {"candidate": f"l4|bf16|{l4.tensor_parallel}"},
        follow=True,
    )
    assert "cannot be chosen" in response.content.decode()
    big.refresh_from_db()
    assert big.chosen_accelerator is None


def test_batch_work_is_sized_from_its_request_time(client, consultant_a, plan):
    batch = Workload.objects.create(
        plan=plan, name="Nightly", kind="batch",
        model=ModelArchitecture.objects.get(slug="llama-3.1-8b"), precision="fp8",
        input_tokens_mean=2500, output_tokens_mean=400, output_tokens_p95=800, e2e_s=120,
        peak_requests_per_s=10,
    )  # fmt: skip
    client.force_login(consultant_a)
    page = client.get(reverse("workload_sizing", args=[plan.pk, batch.pk]))
    target = page.context["target"]
    # 20 % of 120 s for the first token; 80 % of 120 s over 800 tokens = 120 ms per token.
    assert (target.ttft_ms, target.tpot_ms) == (24_000, 120)
    assert page.context["feasible_count"] > 0


def test_viewer_sees_sizing_but_cannot_change_or_choose(client, org_a, workload):
    viewer = make_member(org_a, "vic", "viewer")
    client.force_login(viewer)
    url = reverse("workload_sizing", args=[workload.plan_id, workload.pk])
    assert client.get(url).status_code == 200
    assert client.post(url, form_data(peak_concurrency=1)).status_code == 403
    assert (
        client.post(
            reverse("workload_choose", args=[workload.plan_id, workload.pk]), {"candidate": "x"}
        ).status_code
        == 403
    )
    assert (
        client.post(reverse("workload_delete", args=[workload.plan_id, workload.pk])).status_code
        == 403
    )
    workload.refresh_from_db()
    assert workload.peak_concurrency == 100


def test_remove_a_workload_with_htmx(client, consultant_a, workload):
    client.force_login(consultant_a)
    response = client.post(
        reverse("workload_delete", args=[workload.plan_id, workload.pk]),
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200 and response.content == b""
    assert not Workload.objects.exists()


def test_api_tokens_page(client, owner_a, consultant_a):
    client.force_login(owner_a)
    response = client.post(reverse("api_tokens"), {"name": "CI"})
    content = response.content.decode()
    assert 'data-testid="new-token"' in content and "ipk_" in content
    token_id = owner_a.memberships.get().organisation.api_tokens.get().pk
    client.post(reverse("api_tokens"), {"revoke": token_id})
    assert owner_a.memberships.get().organisation.api_tokens.get().revoked_at is not None
    client.force_login(consultant_a)
    assert client.get(reverse("api_tokens")).status_code == 403


def test_calibration_page_lists_every_reference_run(client, consultant_a):
    client.force_login(consultant_a)
    response = client.get(reverse("calibration"))
    content = response.content.decode()
    report = response.context["report"]
    assert len(response.context["rows"]) == report.in_sample["runs"] == len(report.rows)
    assert f"{floatformat(report.in_sample['median_abs_error_pct'], 1)} %" in content
    assert 'data-plotly-figure="calibration-figure"' in content
    filtered = client.get(reverse("calibration"), {"accelerator": "h100-sxm"}).context["rows"]
    assert filtered and all(r["accelerator_slug"] == "h100-sxm" for r in filtered)


def _pct_pair(cell) -> str:
    """A validation cell as the page prints it (Django rounds half up)."""
    return f"{floatformat(cell.median_abs_error_pct, 1)} % / {floatformat(cell.p90_abs_error_pct, 1)} %"


def test_calibration_page_shows_held_out_errors_beside_in_sample(client, consultant_a):
    client.force_login(consultant_a)
    response = client.get(reverse("calibration"))
    content = response.content.decode()
    assert 'data-testid="calibration-validation"' in content
    for title in ("In-sample", "Time split", "Family split", "Precision split"):
        assert f'<th class="num" scope="col">{title}</th>' in content
    every = response.context["validation_rows"][0]
    assert every.scenario == "all"
    in_sample, time_split = every.cells[0], every.cells[1]
    for cell in (in_sample, time_split):
        assert _pct_pair(cell) in content


def test_calibration_page_leads_with_the_held_out_error_and_shows_latency(client, consultant_a):
    client.force_login(consultant_a)
    response = client.get(reverse("calibration"))
    content = response.content.decode()
    report = response.context["report"]
    headline = report.headline
    assert headline["label"] == "on runs published after the fit's cut-off"
    assert headline["runs"] == report.splits["time"]["runs"]
    lead = content.index('data-testid="held-out-error"')
    assert lead < content.index('data-testid="median-error"')  # in-sample comes after
    assert f"{floatformat(headline['median_abs_error_pct'], 1)} %" in content[lead : lead + 200]
    assert 'data-testid="calibration-latency"' in content
    rows = response.context["latency_rows"]
    assert rows[0].scenario == "all" and rows[0].tpot[0].runs > 50
    assert _pct_pair(rows[0].tpot[1]) in content  # the time split's runs
    static = report.summary["static_batch_not_fitted"]
    assert 'data-testid="calibration-static-batch"' in content
    assert f"over {static['runs']} runs" in content


def test_network_delay_flags_regions_too_far_for_the_ttft_target(client, consultant_a, workload):
    workload.region_shares = {"eu-west": 50, "ap-southeast-2": 50}
    workload.ttft_ms = 150
    workload.save()
    client.force_login(consultant_a)

    page = client.get(reverse("workload_sizing", args=[workload.plan_id, workload.pk]))

    dublin = next(s for s in page.context["network"] if "eu-west" in s.site)
    # Dublin to Sydney ≈ 17,200 km: 2 × 17,200 × 1.5 / 200 + 5 ≈ 263 ms > 150 ms.
    sydney = next(latency for latency in dublin.latencies if latency.region == "ap-southeast-2")
    assert sydney.breaks_ttft and 240 < sydney.rtt_ms < 290
    assert [latency.region for latency in dublin.breaking_regions] == ["ap-southeast-2"]
    assert 'data-testid="network-delay"' in page.content.decode()


def test_candidate_table_says_when_the_architecture_is_uncalibrated(client, consultant_a, plan):
    moe = Workload.objects.create(
        plan=plan, name="MoE chat", model=ModelArchitecture.objects.get(slug="qwen3-30b-a3b"),
        precision="fp8", input_tokens_mean=1000, output_tokens_mean=200, ttft_ms=1000,
        tpot_ms=50, peak_concurrency=100, region_shares={"eu-west": 100},
    )  # fmt: skip
    client.force_login(consultant_a)
    page = client.get(reverse("workload_sizing", args=[plan.pk, moe.pk]))
    feasible = [c for _, c, _ in page.context["candidates"] if c.feasible]
    assert feasible and all(c.calibrated_architecture is False for c in feasible)
    assert all("uncalibrated for this architecture" in c.provenance for c in feasible)
    assert "uncalibrated for this architecture</span>" in page.content.decode()


def test_a_model_no_server_holds_is_offered_over_two_servers_and_chosen(client, consultant_a, plan):
    from planner import sizing
    from planner.facility.deployment import plan_deployment

    big = Workload.objects.create(
        plan=plan, name="Big", model=ModelArchitecture.objects.get(slug="llama-3.1-405b"),
        precision="bf16", input_tokens_mean=2000, output_tokens_mean=200, ttft_ms=3000,
        tpot_ms=100, peak_concurrency=50,
    )  # fmt: skip
    client.force_login(consultant_a)
    page = client.get(
        reverse("workload_sizing", args=[plan.pk, big.pk]), {"show": "all", "tp": "all"}
    )
    rows = {key: c for key, c, _ in page.context["candidates"]}
    key = "h100-sxm|bf16|8|pp2"
    candidate = rows[key]
    assert candidate.feasible and candidate.layout == "TP8 × PP2 (2 servers)"
    assert "TP8 × PP2 (2 servers)" in page.content.decode()
    detail = client.get(
        reverse("candidate_detail", args=[plan.pk, big.pk, key]), headers={"HX-Request": "true"}
    )
    assert detail.status_code == 200 and "TP8 × PP2" in detail.content.decode()

    chosen = client.post(reverse("workload_choose", args=[plan.pk, big.pk]), {"candidate": key})
    assert chosen.status_code == 302
    big.refresh_from_db()
    assert big.chosen_tensor_parallel == 8 and sizing.chosen_key(big) == key
    assert sizing.chosen_accelerators_per_replica(big) == 16
    assert big.chosen_accelerators == big.chosen_replicas * 16
    # The deployment takes two whole servers per replica and needs the scale-out fabric.
    pooled = plan_deployment(plan=plan).pooled
    assert any(pool.spans_servers for pool in pooled.pools)
    assert pooled.servers >= 2 * (big.chosen_replicas - 1)
