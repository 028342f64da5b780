from django.apps import AppConfig
from django.db.backends.signals import connection_created

from planner.computed import state_generation_install


class PlannerConfig(AppConfig):
    name = "planner"
    verbose_name = "Planner"

    def ready(self) -> None:
        # Make the project's Celery app current so @shared_task binds to it in web processes.
        from planner.celery import app  # noqa: F401

        # Every connection's committed writes give the database a new state generation, so
        # that results kept across requests are built again (planner.computed).
        connection_created.connect(state_generation_install, dispatch_uid="state_generation")
