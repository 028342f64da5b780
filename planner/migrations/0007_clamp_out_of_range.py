"""Bring rows saved before the input ranges existed inside them, so that the next migration
can add the database checks (a separate migration: PostgreSQL cannot alter a table in the
transaction that updated it)."""

import datetime

from django.db import migrations

DATE_MIN, DATE_MAX = datetime.date(2000, 1, 1), datetime.date(2100, 12, 31)


def _out_of_range(field):
    return {f"{field}__lt": DATE_MIN}, {f"{field}__gt": DATE_MAX}


def clamp_out_of_range(apps, schema_editor):
    """Rows saved before these ranges existed: bring them inside so the checks can be added."""
    Workload = apps.get_model("planner", "Workload")
    Plan = apps.get_model("planner", "Plan")
    Workload.objects.filter(headroom_pct__gt=90).update(headroom_pct=90)
    Workload.objects.filter(peak_requests_per_s__gt=1_000_000).update(peak_requests_per_s=1_000_000)
    Workload.objects.filter(peak_requests_per_s__lt=0.0001).update(peak_requests_per_s=0.0001)
    Workload.objects.filter(peak_concurrency__gt=10_000_000).update(peak_concurrency=10_000_000)
    Workload.objects.filter(peak_concurrency__lt=1).update(peak_concurrency=1)
    for condition in _out_of_range("target_go_live"):
        Plan.objects.filter(**condition).update(target_go_live=None)


class Migration(migrations.Migration):
    dependencies = [
        ('planner', '0006_invitation'),
    ]

    operations = [migrations.RunPython(clamp_out_of_range, migrations.RunPython.noop)]
