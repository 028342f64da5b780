from django.apps import AppConfig


class PlannerConfig(AppConfig):
    name = "planner"
    verbose_name = "Planner"

    def ready(self) -> None:
        # Make the project's Celery app current so @shared_task binds to it in web processes.
        from planner.celery import app  # noqa: F401
