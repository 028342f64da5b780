"""Bring rows saved before the input ranges existed inside them, so that the next migration
can add the database checks (a separate migration: PostgreSQL cannot alter a table in the
transaction that updated it)."""

import datetime
from decimal import Decimal

from django.db import migrations

DATE_MIN, DATE_MAX = datetime.date(2000, 1, 1), datetime.date(2100, 12, 31)


def _out_of_range(field):
    return {f"{field}__lt": DATE_MIN}, {f"{field}__gt": DATE_MAX}


def clamp_out_of_range(apps, schema_editor):
    """Rows saved before these ranges existed: bring them inside so the checks can be added.

    An impossible density or cooling figure becomes "not stated" (the checks then use the
    engine's envelope); an impossible date becomes empty or the nearest bound.
    """
    Site = apps.get_model("facility", "Site")
    PowerUpgrade = apps.get_model("facility", "PowerUpgrade")
    Site.objects.filter(servers_per_rack__lt=1).update(servers_per_rack=None)
    Site.objects.filter(servers_per_rack__gt=60).update(servers_per_rack=60)
    Site.objects.filter(cooling_capacity_per_rack_kw__lt=Decimal("0.1")).update(
        cooling_capacity_per_rack_kw=None
    )
    Site.objects.filter(cooling_capacity_per_rack_kw__gt=500).update(
        cooling_capacity_per_rack_kw=500
    )
    for condition in _out_of_range("power_ready_date"):
        Site.objects.filter(**condition).update(power_ready_date=None)
    PowerUpgrade.objects.filter(ready_date__lt=DATE_MIN).update(ready_date=DATE_MIN)
    PowerUpgrade.objects.filter(ready_date__gt=DATE_MAX).update(ready_date=DATE_MAX)


class Migration(migrations.Migration):
    dependencies = [
        ('facility', '0004_row_version_for_optimistic_concurrency'),
        ('planner', '0008_input_ranges'),
    ]

    operations = [migrations.RunPython(clamp_out_of_range, migrations.RunPython.noop)]
