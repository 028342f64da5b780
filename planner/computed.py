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
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from django.db import connection

T = TypeVar("T")

_memo: ContextVar[dict[Hashable, Any] | None] = ContextVar("plan_state_memo", default=None)
_builds: ContextVar[dict[str, int] | None] = ContextVar("plan_state_builds", default=None)
_neutral: ContextVar[bool] = ContextVar("plan_state_neutral_writes", default=False)

# Writes to these tables never change a plan's computed state: sign-in bookkeeping, sessions
# and API-token use stamps. Any other write forgets what was built.
NEUTRAL_TABLES = frozenset({
    "django_session", "axes_accessattempt", "axes_accesslog", "axes_accessfailurelog",
    "planner_apitoken",
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
