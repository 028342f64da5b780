"""The plan's computed state, built once per request or job and shared by everything that reads it.

The parts of a plan's computed state (each workload's chosen deployment, the pooled deployment
over the sites, the landed cost of the BOM, the TCO inputs) each have one builder in the app
that owns them. A page shows them in several sections, its freshness checks and open items
read them again, and the share page, snapshot and PDFs read them once more: built on every
read, one overview page built the pooled deployment three times. Inside a scope, each part is
built at most once per plan and every reader gets that one result:

- every request runs in a scope (``PlanStateMiddleware``), every background job too
  (``planner.jobs.job_run``); code outside a scope (a shell, a management command) builds on
  every call, which is always correct;
- any write to the database inside the scope (INSERT, UPDATE or DELETE on a table that holds
  plan inputs) forgets everything built, so a POST that saves and then renders reads the state
  after its write, whichever service or query made the change;
- a builder's refusal (a catalog gap, an input the engine refuses) is remembered too, and
  raised again to every reader.

A part is only ever kept while nothing was written, so what a reader gets is what the builder
would return at that moment. Results are the builders' frozen dataclasses; a list is handed
out as a new list each time so that a reader cannot change what the next one gets.

A few small results that pages read on every view (the hash of the plan's TCO inputs that
says whether the last run is stale, ``computed_across_requests``) are also kept by the process
from one request to the next, beside the database's *state generation* read before building
them (``planner.models.StateGeneration``, a random token):

- every committed write to a table outside ``NEUTRAL_TABLES``, by any process (pages, jobs,
  commands, the admin, migrations), replaces the token once its transaction commits
  (``state_generation_install`` hooks every database connection), so the next reader of any
  process builds again; a write not yet committed keeps nothing on its connection;
- a result is also keyed by the day (offers expire, rates are dated) and kept at most
  ``ACROSS_REQUESTS_MAX_AGE_S``, which bounds what a change made outside Django (SQL typed in
  psql) can hide;
- only values (strings, tuples, frozen dataclasses of those) are kept this way, never a model
  instance: a reader cannot change what another request gets.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import date
from typing import Any, TypeVar

from django.db import DatabaseError, connection, transaction
from django.db.transaction import TransactionManagementError
from django.utils import timezone

logger = logging.getLogger(__name__)

T = TypeVar("T")

_memo: ContextVar[dict[Hashable, Any] | None] = ContextVar("plan_state_memo", default=None)
_builds: ContextVar[dict[str, int] | None] = ContextVar("plan_state_builds", default=None)
_neutral: ContextVar[bool] = ContextVar("plan_state_neutral_writes", default=False)

# Writes to these tables never change a plan's computed state: sign-in bookkeeping, sessions
# and API-token use stamps. Any other write forgets what was built.
STATE_GENERATION_TABLE = "planner_stategeneration"  # planner.models.StateGeneration
NEUTRAL_TABLES = frozenset({
    "django_session", "axes_accessattempt", "axes_accesslog", "axes_accessfailurelog",
    "planner_apitoken", STATE_GENERATION_TABLE,
})  # fmt: skip
_WRITE_VERBS = ("INSERT", "UPDATE", "DELETE", "REPLACE")


def _written_table(sql: str) -> str | None:
    """The table a write statement changes (None for a read, a savepoint or a transaction)."""
    words = sql.lstrip().split(None, 3)
    if not words or words[0].upper() not in _WRITE_VERBS:
        return None
    # INSERT INTO "t" / DELETE FROM "t" / UPDATE "t" / REPLACE INTO "t"
    name = words[2] if words[0].upper() != "UPDATE" and len(words) > 2 else words[1]
    return name.strip('"`').split("(")[0].strip('"`')


def _forget_on_write(execute, sql, params, many, context):
    memo = _memo.get()
    if memo and not _neutral.get():
        table = _written_table(sql)
        if table is not None and table not in NEUTRAL_TABLES:
            memo.clear()
    return execute(sql, params, many, context)


@contextmanager
def plan_state_scope() -> Iterator[None]:
    """Build each part of a plan's state at most once inside the block (nested blocks share
    the outer one)."""
    if _memo.get() is not None:
        yield
        return
    memo_token = _memo.set({})
    try:
        with connection.execute_wrapper(_forget_on_write):
            yield
    finally:
        _memo.reset(memo_token)


def computed(key: Hashable, build: Callable[[], T]) -> T:
    """``build()``, or what it returned (or raised) earlier in this scope for ``key``.

    ``key`` names the part and everything it depends on besides the database, e.g.
    ``("deployment", plan.pk)``.
    """
    counts = _builds.get()
    memo = _memo.get()
    if memo is not None and key in memo:
        kept = memo[key]
        if isinstance(kept, _Refused):
            raise kept.error
        return list(kept) if isinstance(kept, list) else kept
    if counts is not None:
        part = key[0] if isinstance(key, tuple) else key
        counts[part] = counts.get(part, 0) + 1
    try:
        value = build()
    except Exception as error:
        if memo is not None:
            memo[key] = _Refused(error)
        raise
    if memo is not None:
        memo[key] = value
    return list(value) if isinstance(value, list) else value


class _Refused:
    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


@contextmanager
def neutral_writes() -> Iterator[None]:
    """Writes inside the block keep what was built: for bookkeeping that no plan part reads
    (a job's progress and heartbeat)."""
    token = _neutral.set(True)
    try:
        yield
    finally:
        _neutral.reset(token)


@contextmanager
def counting_builds() -> Iterator[dict[str, int]]:
    """Count the builds of each part inside the block (for tests and benchmarks)."""
    token = _builds.set({})
    try:
        yield _builds.get()
    finally:
        _builds.reset(token)


class PlanStateMiddleware:
    """Runs each request in a plan-state scope (see the module docstring)."""

    def __init__(self, get_response: Callable) -> None:
        self.get_response = get_response

    def __call__(self, request):
        with plan_state_scope():
            return self.get_response(request)


# --- Across requests -----------------------------------------------------------------------------

ACROSS_REQUESTS_MAX_AGE_S = 300.0
ACROSS_REQUESTS_PRUNE_AT = 200  # a plan has a few keys; past this, other generations' go
ACROSS_REQUESTS_MAX_KEYS = 2000  # and past this the process starts again empty
_across: dict[Hashable, tuple[str, date, float, Any]] = {}
_PENDING = "_state_generation_pending"  # the connection's bump waiting for its commit
_SEEN = "_state_generation_seen"  # the generation table answered on this connection


def _generation_replace(conn) -> None:
    with conn.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {STATE_GENERATION_TABLE} (id, token) VALUES (1, %s) "
            "ON CONFLICT (id) DO UPDATE SET token = excluded.token",
            [uuid.uuid4().hex],
        )
    setattr(conn, _SEEN, True)


def _bump(conn) -> None:
    """Give the database a new state generation (after a commit, or at once in autocommit)."""
    try:
        _generation_replace(conn)
    except DatabaseError:
        # Before its migration (the migrations' own writes) the table is not there, and a
        # reader then keeps nothing; once seen, a failed bump forgets this process's results.
        _across.clear()
        if getattr(conn, _SEEN, False):
            logger.warning("state generation not replaced", exc_info=True)


def _bump_after_commit(conn) -> None:
    if _uncommitted_write(conn):
        return  # this transaction's bump is waiting already

    def bump() -> None:
        if getattr(conn, _PENDING, None) is bump:
            setattr(conn, _PENDING, None)
        _bump(conn)

    setattr(conn, _PENDING, bump if conn.in_atomic_block else None)
    try:
        transaction.on_commit(bump, using=conn.alias)
    except TransactionManagementError:  # a transaction managed by hand: bump inside it
        setattr(conn, _PENDING, None)
        _bump(conn)


def _uncommitted_write(conn) -> bool:
    """Whether this connection wrote in a transaction that has not committed yet."""
    pending = getattr(conn, _PENDING, None)
    return (
        pending is not None
        and conn.in_atomic_block
        and any(func is pending for _, func, _ in conn.run_on_commit)
    )


def _bump_on_write(execute, sql, params, many, context):
    if _neutral.get():
        return execute(sql, params, many, context)
    table = _written_table(sql)
    truncate = table is None and sql.lstrip()[:8].upper() == "TRUNCATE"
    if not truncate and (table is None or table in NEUTRAL_TABLES):
        return execute(sql, params, many, context)
    conn = context["connection"]
    together = getattr(conn, _SEEN, False) and not conn.in_atomic_block and conn.get_autocommit()
    if not together or "RETURNING" in sql.upper():
        result = execute(sql, params, many, context)
        _bump_after_commit(conn)
        return result
    # A statement in autocommit: it and the new generation commit together (one commit, and
    # no moment when the write is there under the old generation), or neither does. Not a
    # statement that returns rows: those are read after it returns, after the commit.
    with transaction.atomic(using=conn.alias):
        result = execute(sql, params, many, context)
        _generation_replace(conn)
    return result


def state_generation_install(sender=None, connection=None, **kwargs) -> None:
    """Hook a database connection so that its committed writes replace the state generation
    (``connection_created`` receiver, connected in ``PlannerConfig.ready``)."""
    setattr(connection, _SEEN, False)  # a new database connection: maybe another database
    wrappers = connection.execute_wrappers
    if _bump_on_write not in wrappers:
        # first: a scope's wrapper, appended and popped by a context manager, stays last
        wrappers.insert(0, _bump_on_write)


def state_generation() -> str | None:
    """The database's current state generation (None when its row is missing)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT token FROM {STATE_GENERATION_TABLE} WHERE id = 1")
        row = cursor.fetchone()
    setattr(connection, _SEEN, True)
    return row[0] if row else None


def state_generation_bump() -> None:
    """A new state generation now (for code that wrote while hooks were set aside)."""
    _bump(connection)


def computed_across_requests(key: Hashable, build: Callable[[], T]) -> T:
    """``computed(key, build)``, also kept by the process across requests while the database's
    state generation and the day are those it was built with (see the module docstring).

    ``build`` must return a value (no model instance, no list); a refusal is not kept across
    requests (raise it and it is built again next time). Outside a scope, or on a connection
    with a write not yet committed, it builds as ``computed`` does.
    """
    return computed(key, lambda: _kept_across_requests(key, build))


def _kept_across_requests(key: Hashable, build: Callable[[], T]) -> T:
    if _memo.get() is None or _uncommitted_write(connection):
        return build()
    generation = state_generation()  # read before building: a later write gives a new one
    if generation is None:
        return build()
    today = timezone.localdate()
    now = time.monotonic()
    kept = _across.get(key)
    if (
        kept is not None
        and kept[0] == generation
        and kept[1] == today
        and now - kept[2] < ACROSS_REQUESTS_MAX_AGE_S
    ):
        return kept[3]
    value = build()
    if not _uncommitted_write(connection):
        if len(_across) >= ACROSS_REQUESTS_PRUNE_AT:  # what older generations left
            for old in [k for k, v in list(_across.items()) if v[0] != generation]:
                _across.pop(old, None)
        if len(_across) >= ACROSS_REQUESTS_MAX_KEYS:
            _across.clear()
        _across[key] = (generation, today, now, value)
    return value


def across_requests_forget() -> None:
    """Forget what this process kept across requests (tests)."""
    _across.clear()
