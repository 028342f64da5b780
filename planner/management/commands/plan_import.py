"""Rebuild a plan from a portable file:
``python manage.py plan_import plan.json [--organisation SLUG]``.

All or nothing: a file with any error creates nothing and the errors are listed.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from planner.models import Organisation
from planner.portable import PortableError, plan_document_parse, plan_import


class Command(BaseCommand):
    help = "Import a portable plan file into an organisation (the only one, or --organisation)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--organisation", help="The organisation's slug.")

    def handle(self, *args, file: Path, organisation: str | None, **options) -> None:
        if organisation:
            target = Organisation.objects.filter(slug=organisation).first()
            if target is None:
                raise CommandError(f"No organisation with the slug '{organisation}'.")
        else:
            organisations = list(Organisation.objects.all()[:2])
            if len(organisations) != 1:
                raise CommandError("Name the organisation to import into: --organisation SLUG.")
            target = organisations[0]
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}.") from exc
        try:
            plan = plan_import(plan_document_parse(raw), organisation=target)
        except PortableError as exc:
            lines = [f"  {where}: {' '.join(messages)}" for where, messages in exc.errors.items()]
            raise CommandError("Nothing was imported:\n" + "\n".join(lines)) from exc
        self.stdout.write(f"Imported plan {plan.pk} '{plan.name}' into {target.slug}.")
