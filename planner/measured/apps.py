"""Measured sizing: load tests of one replica and traffic logs, beside the engine's model."""

from django.apps import AppConfig


class MeasuredConfig(AppConfig):
    name = "planner.measured"
    label = "measured"
    verbose_name = "Measured traffic and load tests"
