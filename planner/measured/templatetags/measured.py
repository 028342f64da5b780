"""The sizing table's mark of a candidate sized by a load test (or corrected by one)."""

from django import template
from django.urls import reverse

from planner.measured import services

register = template.Library()


@register.inclusion_tag("measured/_badge.html")
def measured_badge(workload, key: str, candidate=None) -> dict:
    """ "measured" with file and date, "not applied" with the reason, or the correction."""
    measurement = services.workload_measurements(workload).get(key)
    if measurement is not None:
        sweep = measurement.sweep
        return {
            "measurement": measurement,
            "url": reverse("measured:sweep_detail", args=[workload.plan_id, workload.pk, sweep.pk]),
        }
    if candidate is not None and candidate.feasible and services.workload_measurements(workload):
        fix = services.candidate_correction(workload, candidate)
        if fix is not None:
            return {"correction": fix}
    return {}
