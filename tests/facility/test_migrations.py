"""The migration that makes TCO runs unique per (plan, input hash) keeps the best duplicate.

The runs are written at the first schema of a new database (tests/migration_db.py), which
then migrates forward through the migration under test."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.migration_db import empty_database

BEFORE = [("facility", "0001_initial")]
AFTER = [("facility", "0003_unique_tco_run_per_inputs")]


@pytest.mark.django_db
def test_duplicate_runs_are_reduced_to_the_succeeded_one(tmp_path):
    with empty_database(tmp_path) as migrate:
        apps = migrate(BEFORE)
        organisation = apps.get_model("planner", "Organisation").objects.create(
            name="Alpha Advisory", slug="alpha"
        )
        client = apps.get_model("planner", "Client").objects.create(
            organisation=organisation, name="C"
        )
        plan = apps.get_model("planner", "Plan").objects.create(
            organisation=organisation, client=client, name="P"
        )
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

        apps = migrate(AFTER)

        TcoRun = apps.get_model("facility", "TcoRun")
        kept = dict(TcoRun.objects.values_list("pk", "requested_at"))
        assert set(kept) == {runs["succeeded"], runs["other"]}
        # Existing runs keep their order: requested when they were created.
        assert kept[runs["succeeded"]] < kept[runs["other"]]
