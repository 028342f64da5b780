"""Load the seed tariff rules and customs valuation rules (planner/engine/tariff_defaults.py)."""

from django.core.management.base import BaseCommand

from sourcing.services import tariffs_load_defaults


class Command(BaseCommand):
    help = (
        "Load the seed tariff rules with their sources and the customs value basis (safe to rerun)."
    )

    def handle(self, *args, **options) -> None:
        created, updated = tariffs_load_defaults()
        self.stdout.write(f"Tariff rules: {created} created, {updated} already there (refreshed).")
