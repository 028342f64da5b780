"""The hybrid search as the TCO page and placement see it."""

from decimal import Decimal

from django.urls import reverse

from planner.facility import services
from planner.facility.models import TcoSettings


def _option(run, key):
    return next(o for o in run.results["options"] if o["key"] == key)


def test_collapsed_hybrid_is_shown_and_scored_as_cloud(client, consultant_a, sized_plan, colo_site):
    # Cloud at 0.01 USD per accelerator-hour: no owned base can be cheaper.
    TcoSettings.objects.create(plan=sized_plan, on_demand_usd_per_gpu_h=Decimal("0.01"))
    run = services.tco_run_sync(plan=sized_plan, user=consultant_a)
    hybrid = _option(run, "hybrid")
    assert hybrid["collapses_to_cloud"] and hybrid["owned_gpus"] == 0
    assert hybrid["break_even_month"] is None
    assert hybrid["base_curve"][0][0] == 0 and len(hybrid["base_curve"]) >= 6  # 0..5 servers
    assert hybrid["npv_amount"] == _option(run, "cloud_on_demand")["npv_amount"]

    scored = {o.key: o for o in services.placement_evaluate(plan=sized_plan).result.options}
    assert scored["hybrid"].kind == "public_cloud"
    assert "collapses to cloud" in scored["hybrid"].label

    client.force_login(consultant_a)
    page = client.get(reverse("facility:tco", args=[sized_plan.pk])).content.decode()
    assert 'data-testid="tco-hybrid-curve"' in page
    assert "Hybrid: NPV by owned base" in page
    assert "collapses to cloud on-demand" in page


def test_a_paying_hybrid_base_keeps_the_hybrid_kind(consultant_a, sized_plan, colo_site):
    # Cloud at 50 USD per accelerator-hour: owning the whole base pays.
    TcoSettings.objects.create(plan=sized_plan, on_demand_usd_per_gpu_h=Decimal("50"))
    run = services.tco_run_sync(plan=sized_plan, user=consultant_a)
    hybrid = _option(run, "hybrid")
    assert not hybrid["collapses_to_cloud"] and hybrid["owned_gpus"] > 0
    npvs = [float(v) for _, v in hybrid["base_curve"]]
    assert float(hybrid["npv_amount"]) == min(npvs)
    scored = {o.key: o for o in services.placement_evaluate(plan=sized_plan).result.options}
    assert scored["hybrid"].kind == "hybrid"
