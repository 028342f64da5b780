"""The demo plan's facility part: sites always, a TCO run when the workloads are sized."""

from planner.demo import demo_plan_build
from planner.facility.demo import facility_demo_build
from planner.facility.deployment import workload_deployments
from planner.facility.models import PlacementDecision, Site, TcoRun


def test_demo_plan_gets_sites_a_choice_and_a_tco_when_sized(org_a, consultant_a, catalog):
    plan, created = demo_plan_build(organisation=org_a, user=consultant_a)

    assert created
    assert Site.objects.filter(plan=plan).count() == 2
    assert Site.objects.get(plan=plan, name__startswith="Ashburn").upgrades.count() == 1
    assert PlacementDecision.objects.get(plan=plan).chosen_kind == "colocation"
    runs = TcoRun.objects.filter(plan=plan)
    if workload_deployments(plan=plan):
        # Costed on the sites, then again on the sourcing demo's BOM and offers.
        assert runs.exists() and {r.status for r in runs} == {"succeeded"}
    else:
        assert not runs.exists()


def test_demo_builder_without_sizing_sets_up_the_sites_only(sized_plan, consultant_a):
    sized_plan.workloads.update(chosen_accelerator=None)

    facility_demo_build(plan=sized_plan, user=consultant_a)

    assert Site.objects.filter(plan=sized_plan).count() == 2
    assert PlacementDecision.objects.get(plan=sized_plan).reason
    assert not TcoRun.objects.filter(plan=sized_plan).exists()


def test_demo_with_sizing_runs_the_tco_through_the_engine(sized_plan, consultant_a):
    facility_demo_build(plan=sized_plan, user=consultant_a)
    facility_demo_build(plan=sized_plan, user=consultant_a)  # idempotent

    run = TcoRun.objects.get(plan=sized_plan)
    assert run.status == "succeeded" and run.results["monte_carlo"]["paths"] == 10_000
    assert Site.objects.filter(plan=sized_plan).count() == 2
