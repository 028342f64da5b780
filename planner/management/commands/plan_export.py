"""Print a plan as a portable JSON file: ``python manage.py plan_export PLAN_ID > plan.json``."""

from django.core.management.base import BaseCommand, CommandError

from planner.models import Plan
from planner.portable import plan_export_json


class Command(BaseCommand):
    help = "Print a plan as a portable, versioned JSON document (see planner/portable.py)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("plan_id", type=int)

    def handle(self, *args, plan_id: int, **options) -> None:
        plan = Plan.objects.select_related("client").filter(pk=plan_id).first()
        if plan is None:
            raise CommandError(f"No plan {plan_id}.")
        self.stdout.write(plan_export_json(plan))
