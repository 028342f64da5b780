"""TCO: inputs from the plan, the hash that avoids recomputing, the task and its failure path."""

from decimal import Decimal

import pytest
from django.conf import settings
from django.urls import reverse

from catalog.models import CloudOffering
from planner.engine import tco as te
from planner.facility import services
from planner.facility.models import TcoRun, TcoSettings
from planner.facility.tasks import tco_run_task


def test_inputs_come_from_the_plan_and_the_catalog(sized_plan, colo_site):
    build = services.tco_inputs_build(plan=sized_plan)
    inputs = build.inputs

    # the cheapest on-demand H100 but a community-marketplace listing (hosts run by
    # individuals, no SLA: never compared when the provider has others)
    cheapest = min(
        float(o.usd_per_accelerator_hour)
        for o in CloudOffering.objects.filter(
            accelerator__slug="h100-sxm", price_model="on_demand"
        ).exclude(instance_type__icontains="community")
    )
    assert inputs.cloud.on_demand_usd_per_gpu_h == pytest.approx(cheapest)
    # Pooled: chat 8 − 1 spare = 7 replicas × TP 4 = 28 GPUs, batch 7 × TP 1 = 7 GPUs share
    # 8-GPU DGX H100s: ceil(35 / 8) = 5 servers, plus one spare server for the platform = 6.
    assert inputs.hardware.server_count == 6 and inputs.hardware.gpus_per_server == 8
    # No supplier offer and no BOM: the DGX H100's dated catalog price, fallback network share.
    assert inputs.hardware.server_price_usd == 270_000
    assert inputs.hardware.network_usd is None
    assert inputs.hardware.maintenance_fraction_per_year == te.DEFAULT_MAINTENANCE_FRACTION_PER_YEAR
    assert any("catalog list price 270,000 USD (as of 2023-05-01" in line for line in build.basis)
    assert any("no BOM yet, so the fallback 19%" in line for line in build.basis)
    assert inputs.hardware.server_power_kw == pytest.approx(10.2)  # DGX H100 from the catalog
    assert [s.key for s in inputs.sites] == [f"site-{colo_site.pk}"]
    assert inputs.sites[0].power_usd_per_kwh == pytest.approx(0.22)
    # Chat: 32 GPUs at peak × mean/peak of the default profile × 730 h.
    chat = inputs.workloads[0]
    profile = sized_plan.workloads.get(name="Chat").daily_profile
    assert chat.gpu_hours_per_month == pytest.approx(32 * sum(profile) / 24 / max(profile) * 730)
    # Every provider listing the H100 is compared on its own list; the cheapest prices the
    # owned fleet's bursts (break-even is against the cheapest cloud option, chosen in the run).
    assert inputs.providers and inputs.providers[0].on_demand_usd_per_instance_h / (
        inputs.providers[0].gpus_per_instance
    ) == pytest.approx(cheapest)
    assert not any("engine default" in line for line in build.basis)
    assert len(build.input_hash) == 64
    assert services.tco_inputs_from_canonical(build.canonical) == inputs


def test_catalog_commitment_prices_are_the_same_providers(sized_plan):
    # Leave only GCP's a3-highgpu-8g, which also has 1-yr and 3-yr prices in the catalog.
    CloudOffering.objects.filter(accelerator__slug="h100-sxm", price_model="on_demand").exclude(
        instance_type="a3-highgpu-8g"
    ).delete()
    inputs = services.tco_inputs_build(plan=sized_plan).inputs
    (gcp,) = inputs.providers
    assert inputs.cloud.on_demand_usd_per_gpu_h == pytest.approx(88.4899999 / 8)
    assert gcp.commit_1yr_usd_per_instance_h == pytest.approx(61.3837)
    assert gcp.commit_3yr_usd_per_instance_h == pytest.approx(38.8644)
    assert gcp.spot_usd_per_instance_h == pytest.approx(35.39575)


def test_a_hand_entered_price_uses_the_listed_or_default_discounts(sized_plan):
    TcoSettings.objects.create(plan=sized_plan, on_demand_usd_per_gpu_h=Decimal("4"))
    build = services.tco_inputs_build(plan=sized_plan)
    assert build.inputs.providers == ()
    assert build.inputs.cloud.on_demand_usd_per_gpu_h == 4.0
    # Typed in the plan's EUR (4 USD stored), said in it: 4 × 1 / 1.035 = 3.86 EUR.
    assert "On-demand 3.86 EUR/accelerator-hour, entered by hand." in build.basis


def test_no_chosen_configuration_is_not_ready(sized_plan):
    sized_plan.workloads.update(chosen_accelerator=None)
    with pytest.raises(services.TcoNotReady, match="No workload has a chosen configuration"):
        services.tco_inputs_build(plan=sized_plan)


def test_a_run_stores_results_progress_and_money_as_decimals(sized_plan, colo_site, consultant_a):
    run, created = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    done = services.tco_run_sync(plan=sized_plan, user=consultant_a)

    assert created and done.pk == run.pk and done.status == "succeeded"
    assert done.progress == 1.0 and done.attempts == 1 and done.finished_at
    results = done.results
    keys = [o["key"] for o in results["options"]]
    # One set of cloud options per provider, the reference provider's on-demand first.
    provider_keys = [p.key for p in services.tco_inputs_build(plan=sized_plan).inputs.providers]
    assert keys[0] == f"cloud_on_demand:{provider_keys[0]}"
    cloud = [k for k in keys if k.startswith("cloud_")]
    assert {k.split(":")[1] for k in cloud} == set(provider_keys)
    assert "owned" in keys and "hybrid" in keys  # one owned option for the deployment
    owned = next(o for o in results["options"] if o["key"] == "owned")
    assert [p["key"] for p in owned["sites"]] == [f"site-{colo_site.pk}"]
    npv = results["options"][0]["npv_amount"]
    assert isinstance(npv, str) and Decimal(npv) == Decimal(npv).quantize(Decimal("0.01"))
    assert len(results["monte_carlo"]["owned_p50_amount"]) == 60
    assert results["monte_carlo"]["paths"] == 10_000
    assert {b["driver"] for b in results["tornado"]} == set(te.DEFAULT_DRIVERS)
    # The stored figures equal a direct engine run on the same inputs (USD), converted once
    # to the plan's EUR at the dated rate stored with the run.
    direct = te.run_tco(services.tco_inputs_build(plan=sized_plan).inputs)
    assert results["currency"] == "EUR" and results["fx"]["date"]
    rate = Decimal(results["fx"]["rate"])
    assert rate == (1 / Decimal("1.0350")).quantize(Decimal("0.000001"))
    expected = (Decimal(float(direct.options[0].npv_usd)) * rate).quantize(Decimal("0.01"))
    assert Decimal(npv) == expected


def test_unchanged_plan_is_not_recomputed_and_a_change_makes_it_stale(
    sized_plan, colo_site, consultant_a
):
    run, _ = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    services.tco_run_sync(plan=sized_plan, user=consultant_a)

    again, created = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    assert again.pk == run.pk and not created
    assert not services.tco_state(plan=sized_plan).stale

    TcoSettings.objects.create(plan=sized_plan, server_price_usd=Decimal("250000"))
    assert services.tco_state(plan=sized_plan).stale
    colo_site.pue = Decimal("1.2")
    colo_site.save()
    newer, created = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    assert created and newer.pk != run.pk


def test_task_runs_in_celery_and_the_page_shows_charts(
    client, consultant_a, sized_plan, colo_site, django_capture_on_commit_callbacks
):
    client.force_login(consultant_a)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("facility:tco_run", args=[sized_plan.pk]))
    assert response.status_code == 302

    run = TcoRun.objects.get(plan=sized_plan)
    page = client.get(reverse("facility:tco", args=[sized_plan.pk])).content.decode()
    status = client.get(reverse("facility:tco_status", args=[sized_plan.pk, run.pk]))

    assert run.status == "succeeded"
    for figure in ("fig-cumulative", "fig-stack", "fig-tornado", "fig-monte-carlo"):
        assert f'data-plotly-figure="{figure}"' in page and f'id="{figure}"' in page
    assert "break-even" in page and "up to date with the plan" in page
    assert status.status_code == 286 and "fig-cumulative" in status.content.decode()


def test_stale_results_say_so(client, consultant_a, sized_plan, colo_site):
    run, _ = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    services.tco_run_sync(plan=sized_plan, user=consultant_a)
    sized_plan.workloads.filter(name="Chat").update(chosen_accelerators=40, chosen_servers=5)
    client.force_login(consultant_a)

    page = client.get(reverse("facility:tco", args=[sized_plan.pk])).content.decode()

    assert "Stale, re-run." in page


def test_pending_run_polls_and_shows_progress(client, consultant_a, sized_plan, colo_site):
    run, _ = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    TcoRun.objects.filter(pk=run.pk).update(progress=0.42, progress_message="Monte Carlo: x")
    client.force_login(consultant_a)

    response = client.get(reverse("facility:tco_status", args=[sized_plan.pk, run.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert 'value="42"' in html and 'hx-trigger="every 1s"' in html and "Monte Carlo: x" in html


def test_failing_run_retries_then_shows_the_reason(
    client, consultant_a, sized_plan, colo_site, monkeypatch
):
    calls = []

    def broken(inputs, progress=None, shown=None):
        calls.append(1)
        raise RuntimeError("engine exploded")

    monkeypatch.setattr(te, "run_tco", broken)
    run, _ = services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)

    tco_run_task.apply(args=[run.pk])  # eager, with its retries

    run.refresh_from_db()
    assert len(calls) == settings.JOBS_MAX_ATTEMPTS == run.attempts
    assert run.status == "failed" and "engine exploded" in run.error
    client.force_login(consultant_a)
    status = client.get(reverse("facility:tco_status", args=[sized_plan.pk, run.pk]))
    assert status.status_code == 286 and "engine exploded" in status.content.decode()
    # Running it again resets the failed run with the same inputs and queues it again.
    again, created = services.tco_run_request(plan=sized_plan, user=consultant_a)
    assert created and again.pk == run.pk
    assert (again.status, again.attempts, again.error) == ("pending", 0, "")


def test_viewers_cannot_run_or_change_inputs(client, org_a, sized_plan):
    from tests.conftest import make_member

    client.force_login(make_member(org_a, "viewer_a", "viewer"))
    assert client.get(reverse("facility:tco", args=[sized_plan.pk])).status_code == 200
    assert client.post(reverse("facility:tco_run", args=[sized_plan.pk])).status_code == 403
    assert client.post(reverse("facility:tco", args=[sized_plan.pk]), {}).status_code == 403


def test_bad_tco_input_is_shown_and_kept(client, consultant_a, sized_plan):
    client.force_login(consultant_a)
    data = {"horizon_months": "6", "server_price_usd": "-1"}
    response = client.post(reverse("facility:tco", args=[sized_plan.pk]), data)
    html = response.content.decode()
    assert response.status_code == 400
    assert 'id="err-server_price_usd"' in html and 'value="-1"' in html
    # The editor's page stores the defaults (the row its version is checked against); the
    # bad values are not saved.
    stored = TcoSettings.objects.get(plan=sized_plan)
    assert (stored.horizon_months, stored.server_price_usd) == (60, None)


def test_a_platform_without_a_sourced_price_is_not_given_another_ones(sized_plan):
    """B200 without a chosen platform has no offer and no list price: the TCO asks for one."""
    from catalog.models import Accelerator

    sized_plan.workloads.update(
        chosen_accelerator=Accelerator.objects.get(slug="b200"), chosen_server=None
    )
    with pytest.raises(services.TcoNotReady, match="no sourced list price for .*enter the quoted"):
        services.tco_inputs_build(plan=sized_plan)

    TcoSettings.objects.create(plan=sized_plan, server_price_usd=500000)
    build = services.tco_inputs_build(plan=sized_plan)
    assert build.inputs.hardware.server_price_usd == 500_000
    # 500,000 USD at 1 USD = 1 / 1.035 = 0.966184 EUR: 483,092 EUR.
    assert "Server price 483,092 EUR per server, entered by hand." in build.basis


def test_the_queued_notice_is_replaced_when_the_polled_run_finishes(
    client, consultant_a, sized_plan, colo_site
):
    client.force_login(consultant_a)
    tco_url = reverse("facility:tco", args=[sized_plan.pk])
    client.post(reverse("plan_recompute", args=[sized_plan.pk, "tco"]), {"next": tco_url})
    run = TcoRun.objects.get(plan=sized_plan)
    status_url = reverse("facility:tco_status", args=[sized_plan.pk, run.pk])

    page = client.get(tco_url).content.decode()
    queued = client.get(status_url).content.decode()
    services.tco_run_sync(plan=sized_plan, user=consultant_a)
    finished = client.get(status_url)

    # The page's notice carries the id the polled section replaces; no replacement while queued.
    assert '<li class="msg-success" id="tco-run-notice">TCO run queued for the current inputs.' in (
        page
    )
    assert not run.is_finished and "tco-run-notice" not in queued
    html = finished.content.decode()
    assert finished.status_code == 286
    assert '<li id="tco-run-notice" class="msg-success" hx-swap-oob="true"' in html
    assert "The TCO run for the current inputs has finished: its results are below." in html
