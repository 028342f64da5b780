"""Load the catalog's reference data (catalog/data/*.csv). Running it again changes nothing."""

from django.core.management.base import BaseCommand, CommandError

from catalog.services import CatalogDataError, catalog_load_reference


class Command(BaseCommand):
    help = "Load accelerators, models, servers, parts and cloud prices from catalog/data."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--data-dir", help="Folder with the CSV files (default: catalog/data).")

    def handle(self, *args, **options) -> None:
        try:
            results = catalog_load_reference(data_dir=options.get("data_dir"))
        except CatalogDataError as exc:
            raise CommandError(str(exc)) from exc
        for key, result in results.items():
            self.stdout.write(
                f"{key:<13} {result.rows:>4} rows: {result.created} created, "
                f"{result.updated} updated, {result.unchanged} unchanged, "
                f"{result.prices_recorded} prices recorded"
            )
