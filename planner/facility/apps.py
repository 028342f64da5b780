"""Facility, placement and TCO: where the plan's servers go, and what they cost over time."""

from django.apps import AppConfig


class FacilityConfig(AppConfig):
    name = "planner.facility"
    label = "facility"
    verbose_name = "Facility, placement and TCO"
