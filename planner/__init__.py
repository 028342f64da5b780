"""Inference Planner: the Django project package and the plans app."""

from .celery import app as celery_app

__all__ = ["celery_app"]
