"""The range migrations bring rows saved before the ranges existed inside them, so the new
database checks can be added to a live database (year-1 dates, headroom 150 %, 0 servers
per rack were all stored by the old forms).

The rows are written at the old schema of a new database (tests/migration_db.py), which then
migrates forward through the range migrations."""

from datetime import date
from decimal import Decimal

import pytest

from tests.migration_db import empty_database

BEFORE = [
    ("planner", "0006_invitation"),
    ("facility", "0004_row_version_for_optimistic_concurrency"),
    ("sourcing", "0002_row_version_for_optimistic_concurrency"),
]
AFTER = [("planner", "0008_input_ranges"), ("facility", "0006_input_ranges"), ("sourcing", "0004_input_ranges")]  # fmt: skip


@pytest.mark.django_db
def test_out_of_range_rows_are_clamped_before_the_checks(tmp_path):
    with empty_database(tmp_path) as migrate:
        apps = migrate(BEFORE)
        Organisation = apps.get_model("planner", "Organisation")
        Client = apps.get_model("planner", "Client")
        Plan = apps.get_model("planner", "Plan")
        Workload = apps.get_model("planner", "Workload")
        Site = apps.get_model("facility", "Site")
        ModelArchitecture = apps.get_model("catalog", "ModelArchitecture")

        org = Organisation.objects.create(name="Old", slug="old")
        client = Client.objects.create(organisation=org, name="C")
        plan = Plan.objects.create(
            organisation=org, client=client, name="P", target_go_live=date(1, 1, 1)
        )
        model = ModelArchitecture.objects.create(
            slug="m", name="M", params_total_b=1, params_active_b=1, num_hidden_layers=1,
            hidden_size=1, num_attention_heads=1, num_key_value_heads=1, head_dim=1,
            vocab_size=1, max_position_embeddings=1, source="test",
        )  # fmt: skip
        workload = Workload.objects.create(
            plan=plan, name="W", model=model, input_tokens_mean=1, output_tokens_mean=1,
            ttft_ms=1, tpot_ms=1, headroom_pct=150, peak_requests_per_s=1e40,
        )  # fmt: skip
        site = Site.objects.create(
            plan=plan, name="S", site_it_capacity_kw=Decimal("100"), servers_per_rack=0,
            cooling_capacity_per_rack_kw=Decimal("0"), power_ready_date=date(9999, 1, 1),
        )  # fmt: skip
        apps = migrate(AFTER)
        workload = apps.get_model("planner", "Workload").objects.get(pk=workload.pk)
        assert (workload.headroom_pct, workload.peak_requests_per_s) == (90, 1_000_000)
        assert apps.get_model("planner", "Plan").objects.get(pk=plan.pk).target_go_live is None
        site = apps.get_model("facility", "Site").objects.get(pk=site.pk)
        assert site.servers_per_rack is None
        assert site.cooling_capacity_per_rack_kw is None
        assert site.power_ready_date is None
