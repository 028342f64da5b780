"""Settings shared by every environment, read from the environment (12-factor).

Environment variables:
    DATABASE_URL: any dj-database-url URL; default an SQLite file in the project folder.
    CELERY_BROKER_URL: e.g. redis://127.0.0.1:6379/0; empty means tasks run eagerly in-process.
    BROKER_SOCKET_TIMEOUT_S: seconds a click waits on a hung broker or cache (default 1).
    CELERY_VISIBILITY_TIMEOUT_S: seconds before Redis redelivers an unacknowledged task.
    JOBS_LEASE_SECONDS, JOBS_HEARTBEAT_SECONDS: a running job's lease and heartbeat period.
    SECRET_KEY, DEBUG, ALLOWED_HOSTS (comma-separated), CSRF_TRUSTED_ORIGINS (comma-separated).
    SECOND_OPINION: 0 to leave aiconfigurator's second opinion out of the sizing page (default 1).
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env_bool(name: str, default: bool) -> bool:
    """Read a boolean from the environment ("1", "true", "yes", "on" are true)."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def env_number(name: str, default: float) -> float:
    """Read a number from the environment."""
    raw = os.environ.get(name, "")
    return float(raw) if raw.strip() else default


def env_list(name: str, default: list[str]) -> list[str]:
    """Read a comma-separated list from the environment."""
    raw = os.environ.get(name, "")
    items = [item.strip() for item in raw.split(",") if item.strip()]
    return items or default


DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "planner",
    "planner.facility",
    "planner.measured",
    "planner.sharing",
    "catalog",
    "sourcing",
    "axes",  # login throttling (planner/login_throttle.py)
    "csp",  # Content-Security-Policy header (CONTENT_SECURITY_POLICY below)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "planner.middleware.CurrentOrganisationMiddleware",
    "planner.computed.PlanStateMiddleware",  # each plan part built once per request
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out sign-in into its page
]

ROOT_URLCONF = "planner.urls"
WSGI_APPLICATION = "planner.wsgi.application"
ASGI_APPLICATION = "planner.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "planner.context_processors.organisation",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Shared cache (share-link rate limits must count across processes): Redis when CACHE_URL is
# set, e.g. redis://127.0.0.1:6379/1; otherwise a per-process memory cache.
# A hung Redis must not hold a page for more than about a second: short socket timeouts.
BROKER_SOCKET_TIMEOUT_S = env_number("BROKER_SOCKET_TIMEOUT_S", 1.0)
CACHE_URL = os.environ.get("CACHE_URL", "")
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            "OPTIONS": {
                "socket_connect_timeout": BROKER_SOCKET_TIMEOUT_S,
                "socket_timeout": BROKER_SOCKET_TIMEOUT_S,
            },
        }
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "var" / "media"))

# Password-reset mail goes to the console unless an SMTP backend is configured.
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "planner@localhost")

# Celery: configured from Django settings under the CELERY namespace (planner/celery.py).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
# No broker configured: run tasks in-process so one command can start the whole app.
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL == ""
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_IGNORE_RESULT = True  # results live in our own tables, next to the plan
CELERY_TASK_TIME_LIMIT = 15 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 10 * 60
# Acknowledge a task when it returns, and requeue it when the process running it dies
# (SIGKILL, the OOM killer): every job task is safe to redeliver (planner/jobs.py).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = TIME_ZONE
# Redis redelivers an unacknowledged task after the visibility timeout: longer than the
# longest task (the hard time limit) so a running task is never delivered twice; a whole
# worker that died is noticed sooner by the job lease (JOBS_LEASE_SECONDS below).
# Short socket timeouts and one quick publish retry: a click on a down or hung broker
# answers within about 1-3 s with "the job queue is unavailable", never a 30 s hang.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(
        env_number("CELERY_VISIBILITY_TIMEOUT_S", CELERY_TASK_TIME_LIMIT + 5 * 60)
    ),
    "socket_timeout": BROKER_SOCKET_TIMEOUT_S,
    "socket_connect_timeout": BROKER_SOCKET_TIMEOUT_S,
}
CELERY_BROKER_CONNECTION_TIMEOUT = BROKER_SOCKET_TIMEOUT_S
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
# Periodic tasks, run by `celery -A planner beat` (docker-compose's beat service).
CELERY_BEAT_SCHEDULE = {
    "sourcing-daily-check": {
        "task": "sourcing.tasks.sourcing_daily_check",
        "schedule": 24 * 60 * 60,  # seconds: once a day
    },
    "jobs-reap": {
        "task": "planner.tasks.jobs_reap",
        "schedule": 60,  # seconds: lost jobs are failed, unqueued jobs queued, within a minute
    },
}

# Background jobs (planner/jobs.py). A running job refreshes its heartbeat every
# JOBS_HEARTBEAT_SECONDS; one silent for JOBS_LEASE_SECONDS lost its worker and is failed.
JOBS_HEARTBEAT_SECONDS = env_number("JOBS_HEARTBEAT_SECONDS", 10)
JOBS_LEASE_SECONDS = env_number("JOBS_LEASE_SECONDS", 120)
JOBS_MAX_ATTEMPTS = 3  # an exception or a dead pool process; then the job fails
# The reaper queues a pending job the broker never accepted once its request is this old
# (younger ones are still being queued by the request), and one queued this long ago that
# never started (the broker lost it).
JOBS_PUBLISH_GRACE_SECONDS = env_number("JOBS_PUBLISH_GRACE_SECONDS", 30)
JOBS_REQUEUE_AFTER_SECONDS = env_number("JOBS_REQUEUE_AFTER_SECONDS", CELERY_TASK_TIME_LIMIT)

# The sizing page's second opinion (planner/peer/aiconfigurator.py) beside the planner's estimate
# of the candidate shown in detail. A process's first comparison on a GPU system loads that
# system's kernel tables (4-12 s); later ones take 30-50 ms, repeats none (cached by inputs).
SECOND_OPINION = env_bool("SECOND_OPINION", True)

# Where the catalog's reference data ships inside the project (copied from shared/data).
CATALOG_DATA_DIR = BASE_DIR / "catalog" / "data"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

# --- Security (issue 9): client address, login throttling, Content-Security-Policy ----------
# How many reverse proxies of ours stand in front of Django, each appending to
# X-Forwarded-For (planner/client_ip.py). 0 (the default) trusts none: the socket address is
# the client. Behind one reverse proxy (nginx, a load balancer) in front of gunicorn: set 1.
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))

# Login throttling (django-axes; planner/login_throttle.py). Counted in the database.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out client
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_FAILURE_LIMIT_PER_USER = int(os.environ.get("LOGIN_FAILURE_LIMIT_PER_USER", "5"))
LOGIN_FAILURE_LIMIT_PER_ADDRESS = int(os.environ.get("LOGIN_FAILURE_LIMIT_PER_ADDRESS", "20"))
AXES_HANDLER = "planner.login_throttle.LoginThrottleHandler"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]  # read in this order
AXES_FAILURE_LIMIT = LOGIN_FAILURE_LIMIT_PER_USER
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("LOGIN_LOCKOUT_MINUTES", "15")))
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "planner.client_ip.rate_limit_address"
AXES_LOCKOUT_CALLABLE = "planner.login_throttle.lockout_response"
AXES_VERBOSE = False  # no start-up banner on stderr (management commands' output stays clean)

# Content-Security-Policy on every response (django-csp). Scripts and styles come only from our
# own static files: no inline <script>, no on*= handlers, no style="" attributes or <style>
# blocks (tests/test_csp.py greps the templates; tests/browser/test_csp.py loads the pages).
# htmx is told not to inject its indicator <style> (meta htmx-config in base.html), and
# plotly.js finds its stylesheets already loaded (templates/includes/plotly.html).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Invitations to join an organisation (planner/invitations.py): days a link stays valid.
INVITATION_VALID_DAYS = int(os.environ.get("INVITATION_VALID_DAYS", "7"))
