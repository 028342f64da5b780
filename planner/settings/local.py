"""Local development: the embedded default (SQLite, eager Celery) with DEBUG on."""

import os

from .base import *  # noqa: F403
from .base import env_bool

DEBUG = env_bool("DEBUG", True)
# A development-only key; production.py refuses to start without SECRET_KEY.
SECRET_KEY = os.environ.get("SECRET_KEY", "django-insecure-local-development-only-key-3f9a")

# Static files come straight from static/ through WhiteNoise's finders; no collectstatic.
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
