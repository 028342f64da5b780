"""The demo consultancy's example plan, loaded by `make run` (python manage.py load_demo).

A fictional retailer's inference plan: a customer chat assistant and a nightly batch job,
with users in Europe and North America. Each capability extends the same plan through the
builders in DEMO_EXTENSIONS, so a newcomer finds every page filled. Idempotent: an existing
demo plan is left as it is.
"""

from collections.abc import Callable
from datetime import date

from django.contrib.auth.models import User
from django.db import transaction

from catalog.models import Accelerator, ModelArchitecture
from planner.computed import plan_state_scope
from planner.facility.demo import facility_costing_demo_build, facility_demo_build
from planner.measured.demo import measured_demo_build
from planner.models import Client, Organisation, Plan, Workload, WorkloadKind
from planner.sharing.demo import sharing_demo_build
from planner.sizing import workload_choose, workload_sweep
from sourcing.demo import fx_demo_build, sourcing_demo_build

DEMO_CLIENT = "Northwind Retail Group"
DEMO_PLAN = "Customer assistant and nightly catalogue enrichment"

# Share of peak traffic per UTC hour: European mornings and North American afternoons.
CHAT_PROFILE = [
    0.10, 0.08, 0.06, 0.06, 0.08, 0.15, 0.30, 0.55, 0.75, 0.85, 0.90, 0.90,
    0.95, 1.00, 1.00, 0.95, 0.90, 0.85, 0.75, 0.60, 0.45, 0.35, 0.25, 0.15,
]  # fmt: skip
# The batch job runs from 00:00 to 05:00 UTC, when the chat is quiet.
BATCH_PROFILE = [1.0, 1.0, 1.0, 1.0, 1.0] + [0.0] * 19

# Builders that add each capability's part of the demo: callables (plan=, user=) -> None.
DEMO_EXTENSIONS: list[Callable[..., None]] = []
DEMO_EXTENSIONS.append(measured_demo_build)  # first: the chat's replicas follow its sweep
DEMO_EXTENSIONS.append(fx_demo_build)  # before facility: its TCO converts into EUR
DEMO_EXTENSIONS.append(facility_demo_build)  # keep last: it costs the sized configurations
DEMO_EXTENSIONS.append(sourcing_demo_build)  # after facility: uses its sites
DEMO_EXTENSIONS.append(facility_costing_demo_build)  # after sourcing: the TCO reads its BOM
DEMO_EXTENSIONS.append(sharing_demo_build)  # last: publishes what the others built


# The accelerator the demo consultancy standardises on (see demo_plan_build).
DEMO_PLATFORM = "b200"


@transaction.atomic
def demo_plan_build(*, organisation: Organisation, user: User) -> tuple[Plan, bool]:
    """Create the demo client, plan and workloads unless they exist. Returns (plan, created).

    The build reads the plan's state between its writes (sites, BOM, TCO, documents): one
    plan-state scope builds each part once between two writes (11 pooled deployments instead
    of 21).
    """
    with plan_state_scope():
        return _demo_plan_build(organisation=organisation, user=user)


def _demo_plan_build(*, organisation: Organisation, user: User) -> tuple[Plan, bool]:
    client, _ = Client.objects.get_or_create(
        organisation=organisation,
        name=DEMO_CLIENT,
        defaults={
            "country": "NL",
            "contact_name": "Sanne de Vries",
            "contact_email": "sanne.devries@northwind.example",
            "notes": "Fictional client for the demo.",
        },
    )
    plan = Plan.objects.filter(organisation=organisation, client=client, name=DEMO_PLAN).first()
    if plan is not None:
        return plan, False
    plan = Plan.objects.create(
        organisation=organisation,
        client=client,
        name=DEMO_PLAN,
        currency="EUR",
        target_go_live=date(2027, 6, 1),
        created_by=user,
        notes=(
            "Customer-service chat on the web shop in the EU and North America, and a "
            "nightly job that writes product descriptions for new catalogue items."
        ),
    )
    Workload.objects.create(
        plan=plan,
        name="Customer chat assistant",
        kind=WorkloadKind.CHAT,
        model=ModelArchitecture.objects.get(slug="llama-3.1-70b"),
        precision="fp8",
        input_tokens_mean=1200,
        input_tokens_p95=3000,
        output_tokens_mean=350,
        output_tokens_p95=900,
        percentile=95,
        ttft_ms=1000,
        tpot_ms=50,
        peak_concurrency=400,
        daily_profile=CHAT_PROFILE,
        region_shares={"eu-west": 35, "eu-central": 25, "us-east": 30, "us-west": 10},
        headroom_pct=20,
        n_plus_one=True,
    )
    Workload.objects.create(
        plan=plan,
        name="Nightly catalogue enrichment",
        kind=WorkloadKind.BATCH,
        model=ModelArchitecture.objects.get(slug="llama-3.1-8b"),
        precision="fp8",
        input_tokens_mean=2500,
        input_tokens_p95=6000,
        output_tokens_mean=400,
        output_tokens_p95=800,
        percentile=95,
        e2e_s=120,
        peak_requests_per_s=12,
        daily_profile=BATCH_PROFILE,
        region_shares={"eu-west": 100},
        headroom_pct=10,
        n_plus_one=False,
    )
    # Size each workload with the engine and keep the cheapest configuration the client can
    # buy and rack (the demo plan goes to colocation) on the platform the demo consultancy
    # standardises on (DEMO_PLATFORM: its suppliers' offers, the facility checks and the
    # quote are written for DGX B200), else the cheapest buyable one; a later workload stays
    # on a platform already chosen when one serves it, so their replicas pool onto shared
    # servers instead of each buying its own. Pinning the platform keeps the demo's story the
    # same when a recalibration reorders candidates that cost within a few per cent.
    buyable = {
        a.slug for a in Accelerator.objects.filter(tdp_w__isnull=False) if not a.is_cloud_only
    }
    chosen_platforms: set[str] = {DEMO_PLATFORM} if DEMO_PLATFORM in buyable else set()
    for workload in plan.workloads.select_related("model").order_by("pk"):
        candidates = [
            c
            for c in workload_sweep(workload).candidates
            if c.feasible
            and c.accelerator_slug in buyable
            and c.usd_per_million_output_tokens is not None
            and not c.disaggregated  # the demo serves each workload aggregated
        ]
        best = next((c for c in candidates if c.accelerator_slug in chosen_platforms), None)
        best = best or next(iter(candidates), None)
        if best is not None:
            workload_choose(workload=workload, candidate=best)
            chosen_platforms.add(best.accelerator_slug)
    for extend in DEMO_EXTENSIONS:
        extend(plan=plan, user=user)
    return plan, True
