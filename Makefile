# Two commands on a new machine: `make run` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# Test processes (pytest-xdist, a database each); PYTEST_WORKERS=0 runs in this process.
PYTEST_WORKERS ?= 2

# Debian packages: WeasyPrint's Pango and fonts for the app; chromium, docker-compose (to
# validate docker-compose.yml without an engine) and poppler-utils for the tests.
RUN_DEBS := libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core
TEST_DEBS := $(RUN_DEBS) chromium docker-compose poppler-utils

.PHONY: run test lint worker system-deps-run system-deps-test venv clean-db

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

define ensure_debs
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
	    echo "Installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "Missing system packages:$$missing"; \
	    echo "Install them with: sudo apt-get install$$missing"; exit 1; \
	  fi; \
	fi
endef

system-deps-run:
	$(call ensure_debs,$(RUN_DEBS))

system-deps-test:
	$(call ensure_debs,$(TEST_DEBS))

run: system-deps-run $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_catalog
	$(PY) manage.py load_tariffs
	$(PY) manage.py load_demo
	@echo ""
	@echo "  Inference Planner on http://$(HOST):$(PORT)/"
	@echo "  Sign in as: demo / demo-planner-2026"
	@echo ""
	$(PY) manage.py runserver $(HOST):$(PORT)

test: system-deps-test $(STAMP)
	$(PY) -m pytest $(if $(filter-out 0,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS))

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

worker: $(STAMP)
	$(VENV)/bin/celery -A planner worker --loglevel=INFO

clean-db:
	rm -f db.sqlite3
