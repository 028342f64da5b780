"""Placement ranks the hybrid the TCO costs (one computation), and on the demo that hybrid
is like-for-like: the EU-only batch's base stays in the EU, each base site keeps its N+1
spare, and residency is judged workload by workload."""

from decimal import Decimal

from planner.demo import demo_plan_build
from planner.facility import services
from planner.facility.deployment import plan_deployment
from planner.facility.models import TcoSettings


def test_placement_ranks_the_tcos_hybrid_and_it_serves_each_workload_where_its_users_are(
    org_a, consultant_a, catalog
):
    plan, _ = demo_plan_build(organisation=org_a, user=consultant_a)
    # Cloud at 50 USD per accelerator-hour: an owned base pays at every site.
    TcoSettings.objects.update_or_create(
        plan=plan, defaults={"on_demand_usd_per_gpu_h": Decimal("50")}
    )
    run = services.tco_run_sync(plan=plan, user=consultant_a)
    tco = next(o for o in run.results["options"] if o["kind"] == "hybrid")
    owned = next(o for o in run.results["options"] if o["key"] == "owned")
    scored = services.placement_evaluate(plan=plan)
    row = scored.result.by_key("hybrid")

    # One option: the label placement ranks names the TCO's base sites and servers, and its
    # cost is that option's.
    assert row.label == tco["label"]
    based = [p for p in tco["sites"] if p["servers"]]
    assert based, tco["notes"]
    for part in based:
        assert f"{part['label']} {part['servers']}" in row.label
    cost = next(c for c in row.criteria if c.criterion == "cost")
    assert f"{float(tco['cost_per_million_output_tokens_amount']):.2f}" in cost.explanation

    # Like-for-like with the owned option: no base site holds more than the deployment puts
    # there, and a base keeps the site's N+1 spares.
    deployment = plan_deployment(plan=plan)
    owned_parts = {p["key"]: p for p in owned["sites"]}
    for part in based:
        assert part["servers"] <= owned_parts[part["key"]]["servers"]
        assert part["spare_servers"] == owned_parts[part["key"]]["spare_servers"]
        pool = next(s for s in deployment.sites if f"site-{s.pk}" == part["key"])
        spares = sum(p.spare_servers for p in deployment.site_pool(pool).pools)
        assert part["spare_servers"] == spares
        assert part["burst_region"]
    # The batch's users are all in the EU: its data never goes to the US in the hybrid, so
    # the hybrid is not refused for the batch's residency rule.
    assert not any("Nightly catalogue enrichment" in r for r in row.ineligible_reasons)
    assert row.eligible and row.kind == "hybrid"
    assert float(tco["npv_amount"]) <= float(owned["npv_amount"])
