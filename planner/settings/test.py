"""Test settings: fast hashing, in-memory mail, whatever database DATABASE_URL names."""

from .base import *  # noqa: F403

SECRET_KEY = "test-only-secret-key-not-for-production-use-0123456789abcdef"
DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
# The suite drives tasks eagerly; integration tests start a real worker explicitly.
CELERY_TASK_ALWAYS_EAGER = True
# The peer loads kernel tables per GPU system (seconds each): off for the suite, on in the tests
# of the second opinion itself (tests/planner/test_second_opinion_view.py).
SECOND_OPINION = False

# Static files come straight from static/ through WhiteNoise's finders; no collectstatic.
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
