"""Celery tasks of sourcing. Thin: ids in, a service call, the outcome stored."""

import logging

from celery import shared_task

from planner.models import Plan
from sourcing import selectors
from sourcing.services import sourcing_check_plan

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def sourcing_daily_check() -> int:
    """Queue the check of every plan with a BOM or purchase orders (run daily by beat).

    Returns:
        The number of plans queued.
    """
    plan_ids = list(selectors.plans_with_sourcing().values_list("pk", flat=True))
    for plan_id in plan_ids:
        sourcing_check_plan_run.delay(plan_id)
    return len(plan_ids)


@shared_task(bind=True, max_retries=2, default_retry_delay=60, acks_late=True)
def sourcing_check_plan_run(self, plan_id: int) -> int:
    """Re-check one plan's open orders and chosen offers; store the flags.

    Returns:
        The number of open flags after the check.
    """
    plan = Plan.objects.filter(pk=plan_id).select_related("organisation", "client").first()
    if plan is None:
        return 0  # deleted since it was queued
    try:
        return len(sourcing_check_plan(plan=plan))
    except Exception as exc:
        logger.exception("sourcing check of plan %s failed", plan_id)
        raise self.retry(exc=exc) from exc
