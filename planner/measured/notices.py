"""Say where the change lands: a load test or traffic log that changes a workload's fleet.

Attaching a measurement re-plans the chosen configuration, and the overview's accelerator
count moves with it. Whoever reads the overview next must see why: one sentence ("Load test
'vLLM 0.11 NVIDIA H100 FP8 TP 1' changed Chat from 14 to 22 accelerators on 2026-12-02")
stays on the overview until dismissed or superseded by the workload's next change, and is
appended to the plan's history, where it is never edited.

The history is kept by the sourcing app, a floor above the sizing this module is called from,
so the entry goes out as the :data:`plan_history_entry` signal, which that app records
(``sourcing.apps``); the notice itself is this app's.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.dispatch import Signal
from django.utils import timezone

from planner.labels import count, stack_label
from planner.measured.models import FleetNotice, LoadTestSweep
from planner.models import Plan, Workload

EVENT_KIND = "fleet"  # shown in the history's "What" column, as "bom" and "order" are

# Sent with plan, user, kind, message and data: one entry for the plan's history.
plan_history_entry = Signal()


def sweep_label(sweep: LoadTestSweep) -> str:
    """``'vLLM 0.11 NVIDIA H100 SXM FP8 TP 1'``: a load test as a notice names it."""
    stack = stack_label(sweep.serving_stack, sweep.stack_version)
    accelerator = sweep.accelerator.name.split(" (")[0]
    return f"'{stack} {accelerator} {sweep.precision.upper()} TP {sweep.tensor_parallel}'"


def fleet_accelerators(workload: Workload) -> int | None:
    """The chosen fleet's accelerators, or None when nothing (or nothing feasible) is chosen."""
    return workload.chosen_accelerators if workload.has_choice else None


def fleet_change_record(
    *, workload: Workload, before: int | None, cause: str, user
) -> FleetNotice | None:
    """Record, on the overview and in the history, that ``cause`` changed the workload's fleet.

    Call after the re-plan with the accelerator count from before it. Nothing is recorded
    when the count did not change. An earlier open notice of the workload is superseded.

    Args:
        workload: The re-planned (saved) workload.
        before: :func:`fleet_accelerators` before the re-plan.
        cause: What changed it, the sentence's subject (``Load test '…'``).
        user: Who did it (None for a background job without one).

    Returns:
        The new notice, or None when the fleet is unchanged.
    """
    after = fleet_accelerators(workload)
    if before == after:
        return None
    today = f"{timezone.localdate():%Y-%m-%d}"
    if before is not None and after is not None:
        message = (
            f"{cause} changed {workload.name} from {before:,d} to "
            f"{count(after, 'accelerator')} on {today}."
        )
    elif after is None:
        problem = workload.chosen_problem or "its chosen configuration no longer serves it"
        message = (
            f"{cause} left {workload.name} without a fleet (it had "
            f"{count(before, 'accelerator')}) on {today}: {problem}"
        )
    else:
        message = (
            f"{cause} gave {workload.name} a fleet of {count(after, 'accelerator')} on {today}."
        )
    now = timezone.now()
    FleetNotice.objects.filter(workload=workload, closed_at=None).update(
        closed_at=now, closed_because=FleetNotice.Closed.SUPERSEDED
    )
    notice = FleetNotice.objects.create(
        organisation_id=workload.plan.organisation_id,
        plan_id=workload.plan_id,
        workload=workload,
        message=message,
        accelerators_before=before,
        accelerators_after=after,
    )
    plan_history_entry.send(
        sender=FleetNotice,
        plan=workload.plan,
        user=user,
        kind=EVENT_KIND,
        message=message,
        data={"workload": workload.pk, "before": before, "after": after, "notice": notice.pk},
    )
    return notice


def open_fleet_notices(*, plan: Plan) -> QuerySet[FleetNotice]:
    """The plan's notices not yet dismissed or superseded, newest first."""
    return FleetNotice.objects.filter(
        plan=plan, organisation_id=plan.organisation_id, closed_at=None
    ).select_related("workload")


def fleet_notice_dismiss(*, notice: FleetNotice, user) -> None:
    """Take the notice off the overview (the history keeps its sentence)."""
    if notice.closed_at is not None:
        return
    notice.closed_at = timezone.now()
    notice.closed_because = FleetNotice.Closed.DISMISSED
    notice.closed_by = user if getattr(user, "pk", None) else None
    notice.save(update_fields=["closed_at", "closed_because", "closed_by"])
