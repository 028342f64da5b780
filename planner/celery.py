"""The Celery app, configured from Django settings under the CELERY namespace.

Without CELERY_BROKER_URL the settings make every task run eagerly in-process.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings.local")

app = Celery("planner")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
