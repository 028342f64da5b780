"""Create the demo organisation and consultant that `make run` signs in with. Idempotent."""

from django.core.management.base import BaseCommand

from planner.demo import demo_plan_build
from planner.models import Membership
from planner.services import demo_setup

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo-planner-2026"


class Command(BaseCommand):
    help = "Create the demo consultancy and its demo consultant (safe to run again)."

    def handle(self, *args, **options) -> None:
        user, created = demo_setup(
            username=DEMO_USERNAME,
            password=DEMO_PASSWORD,
            organisation_name="Demo Consultancy (Northwind Compute Advisory)",
        )
        organisation = Membership.objects.get(user=user, role="owner").organisation
        plan, plan_created = demo_plan_build(organisation=organisation, user=user)
        self.stdout.write(
            f"Demo plan {'created' if plan_created else 'already there'}: {plan.name}"
        )
        state = "created" if created else "already there"
        self.stdout.write(
            f"Demo consultant {state}: sign in as '{user.username}' with password "
            f"'{DEMO_PASSWORD}' (unless you changed it)"
        )
