"""An empty database of the test database's engine, migrated forward only as far as a
migration test needs.

Migrating the shared test database back to an old schema and forward again renders the
project's state for every migration in between (two to four seconds a migration); a new
database goes forward from nothing to the "before" state and then through the migrations
under test, and nothing has to be restored. The data migrations use the default alias (as
`manage.py migrate` does), so the new database stands in as `default` for the duration.
"""

from __future__ import annotations

import copy
from contextlib import contextmanager

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor


@contextmanager
def empty_database(tmp_path):
    """Yield ``migrate(targets) -> apps``: migrate the new, empty database forward to the
    targets and return the historical models there. The test database comes back after."""
    original = connections[DEFAULT_DB_ALIAS]
    settings_dict = copy.deepcopy(original.settings_dict)
    vendor = original.vendor
    if vendor == "sqlite":
        settings_dict["NAME"] = str(tmp_path / "migrations.sqlite3")
    elif vendor == "postgresql":
        settings_dict["NAME"] = f"{original.settings_dict['NAME']}_migrations"
        with original._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{settings_dict["NAME"]}"')
            cursor.execute(f'CREATE DATABASE "{settings_dict["NAME"]}"')
    else:  # pragma: no cover - the project runs on SQLite and PostgreSQL only
        raise NotImplementedError(f"no empty database for {vendor}")
    scratch = original.__class__(settings_dict, alias=DEFAULT_DB_ALIAS)

    def migrate(targets):
        executor = MigrationExecutor(scratch)
        executor.migrate(targets)
        return executor.loader.project_state(targets).apps

    connections[DEFAULT_DB_ALIAS] = scratch
    try:
        yield migrate
    finally:
        scratch.close()
        connections[DEFAULT_DB_ALIAS] = original
        if vendor == "postgresql":
            with original._nodb_cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{settings_dict["NAME"]}"')
