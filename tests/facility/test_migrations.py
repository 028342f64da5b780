"""The migration that makes TCO runs unique per (plan, input hash) keeps the best duplicate."""

from datetime import timedelta

from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from planner.models import Client, Plan

BEFORE = [("facility", "0001_initial")]
AFTER = [("facility", "0003_unique_tco_run_per_inputs")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


def test_duplicate_runs_are_reduced_to_the_succeeded_one(transactional_db, org_a):
    # The client and plan first, with today's models: going back to facility 0001 also takes
    # back the planner migrations after the one that depends on sourcing (0012 onwards).
    client = Client.objects.create(organisation=org_a, name="C")
    plan = Plan.objects.create(organisation=org_a, client=client, name="P")
    apps = _migrate(BEFORE)
    try:
        TcoRun = apps.get_model("facility", "TcoRun")
        now = timezone.now()
        runs = {}
        for name, input_hash, status, age_s in [
            ("failed", "a" * 64, "failed", 300),
            ("succeeded", "a" * 64, "succeeded", 200),
            ("pending", "a" * 64, "pending", 100),  # newest, but not finished
            ("other", "b" * 64, "failed", 50),
        ]:
            run = TcoRun.objects.create(
                plan_id=plan.pk, input_hash=input_hash, inputs={}, status=status
            )
            TcoRun.objects.filter(pk=run.pk).update(created_at=now - timedelta(seconds=age_s))
            runs[name] = run.pk

        apps = _migrate(AFTER)

        TcoRun = apps.get_model("facility", "TcoRun")
        kept = dict(TcoRun.objects.values_list("pk", "requested_at"))
        assert set(kept) == {runs["succeeded"], runs["other"]}
        # Existing runs keep their order: requested when they were created.
        assert kept[runs["succeeded"]] < kept[runs["other"]]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
