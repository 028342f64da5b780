from django.db import migrations


def drop_payment_lines(apps, schema_editor):
    """The organisations' general quote terms lose the lines that state payment: each plan's
    quote sets its payment milestones once (sourcing.QuoteSettings)."""
    from planner.models.organisations import PAYMENT_TERM

    Organisation = apps.get_model("planner", "Organisation")
    for org in Organisation.objects.all():
        lines = org.quote_terms.splitlines()
        kept = [line for line in lines if not PAYMENT_TERM.search(line)]
        if kept != lines:
            org.quote_terms = "\n".join(kept)
            org.save(update_fields=["quote_terms"])


class Migration(migrations.Migration):
    dependencies = [
        ("planner", "0012_workload_cost_target_in_plan_currency"),
    ]

    operations = [
        migrations.RunPython(drop_payment_lines, migrations.RunPython.noop),
    ]
