# The web, worker and beat image: Python 3.11 with WeasyPrint's system libraries.
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=planner.settings.production
RUN apt-get update \
 && apt-get install -y --no-install-recommends libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml ./
COPY planner ./planner
COPY catalog ./catalog
COPY sourcing ./sourcing
RUN pip install --no-cache-dir .
COPY . .
# collectstatic needs a key to import settings; the real one comes from the environment.
RUN SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput
EXPOSE 8000
# Workers and threads: gunicorn.conf.py (WEB_CONCURRENCY, GUNICORN_THREADS).
CMD ["gunicorn", "planner.wsgi", "--config", "gunicorn.conf.py", "--bind", "0.0.0.0:8000", "--access-logfile", "-"]
