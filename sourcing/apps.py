from django.apps import AppConfig


class SourcingConfig(AppConfig):
    name = "sourcing"
    verbose_name = "Sourcing"

    def ready(self) -> None:
        # The plan's history lives here; apps below this floor announce entries by signal.
        from planner.measured.notices import plan_history_entry
        from sourcing.services import event_record

        def record(sender, *, plan, user, kind, message, data, **kwargs) -> None:
            event_record(plan=plan, user=user, kind=kind, message=message, data=data)

        plan_history_entry.connect(record, weak=False, dispatch_uid="sourcing.plan_history")
