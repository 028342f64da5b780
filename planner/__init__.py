"""Inference Planner: the Django project package and the plans app.

The Celery app is imported in PlannerConfig.ready() rather than here, so that importing
the plain-Python engine (planner.engine) pulls in neither Django nor Celery.
"""
