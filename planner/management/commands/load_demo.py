"""Create the demo organisation, consultant and plan that `make run` shows. Idempotent."""

from django.core.management.base import BaseCommand

from catalog.models import ModelArchitecture
from catalog.services import catalog_load_reference
from planner.demo import demo_plan_build
from planner.services import demo_setup

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo-planner-2026"


class Command(BaseCommand):
    help = "Create the demo consultancy, its consultant and an example plan (safe to rerun)."

    def handle(self, *args, **options) -> None:
        if not ModelArchitecture.objects.exists():
            catalog_load_reference()  # the demo plan names catalog models
        user, organisation, created = demo_setup(
            username=DEMO_USERNAME,
            password=DEMO_PASSWORD,
            organisation_name="Demo Consultancy (Northwind Compute Advisory)",
        )
        plan, plan_created = demo_plan_build(organisation=organisation, user=user)
        self.stdout.write(f"Demo plan {'created' if plan_created else 'already there'}: {plan}")
        self.stdout.write(
            f"Demo consultant {'created' if created else 'already there'}: sign in as "
            f"'{user.username}' with password '{DEMO_PASSWORD}' (unless you changed it)"
        )
