"""Bring rows saved before the input ranges existed inside them, so that the next migration
can add the database checks (a separate migration: PostgreSQL cannot alter a table in the
transaction that updated it)."""

import datetime

from django.db import migrations

DATE_MIN, DATE_MAX = datetime.date(2000, 1, 1), datetime.date(2100, 12, 31)


def _out_of_range(field):
    return {f"{field}__lt": DATE_MIN}, {f"{field}__gt": DATE_MAX}

PO_DATES = [
    f"{step}_{kind}"
    for step in ("ordered", "shipped", "customs", "delivered", "installed")
    for kind in ("expected", "actual")
]


def clamp_out_of_range(apps, schema_editor):
    """Rows saved before these ranges existed: bring them inside so the checks can be added."""
    BomLine = apps.get_model("sourcing", "BomLine")
    Offer = apps.get_model("sourcing", "Offer")
    PurchaseOrder = apps.get_model("sourcing", "PurchaseOrder")
    SourcingSettings = apps.get_model("sourcing", "SourcingSettings")
    BomLine.objects.filter(quantity__gt=1_000_000).update(quantity=1_000_000)
    for field in ("quoted_on", "valid_until"):
        Offer.objects.filter(**{f"{field}__lt": DATE_MIN}).update(**{field: DATE_MIN})
        Offer.objects.filter(**{f"{field}__gt": DATE_MAX}).update(**{field: DATE_MAX})
    for field in PO_DATES:
        for condition in _out_of_range(field):
            PurchaseOrder.objects.filter(**condition).update(**{field: None})
    SourcingSettings.objects.filter(servers_per_rack__lt=1).update(servers_per_rack=1)
    SourcingSettings.objects.filter(servers_per_rack__gt=60).update(servers_per_rack=60)
    for field in ("order_date", "power_ready_on"):
        for condition in _out_of_range(field):
            SourcingSettings.objects.filter(**condition).update(**{field: None})


class Migration(migrations.Migration):
    dependencies = [
        ('sourcing', '0002_row_version_for_optimistic_concurrency'),
        ('planner', '0008_input_ranges'),
    ]

    operations = [migrations.RunPython(clamp_out_of_range, migrations.RunPython.noop)]
