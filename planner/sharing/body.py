"""A published revision's body, rendered once and reused by the client's share page.

A revision is immutable, so the HTML of its body (every section, read from the snapshot)
changes only when the code that renders it changes. :func:`revision_body` renders it on
first use, stores it in :class:`~planner.sharing.models.RevisionBody` keyed by the revision
and a fingerprint of that code (:data:`FINGERPRINT_SOURCES`), and keeps a small per-process
memo in front of the database, so a page view costs no snapshot read and no body render.

What changes after publication is left out: each section's comments are a slot in the stored
HTML (:data:`SLOT`), filled on every request by the page template, and decisions are outside
the body.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.conf import settings
from django.template.loader import get_template, render_to_string
from django.utils.safestring import SafeString, mark_safe

from planner.pdf import context as pdf_context
from planner.sharing import checklist
from planner.sharing.models import PlanRevision, RevisionBody

BODY_TEMPLATE = "sharing/_revision_body.html"
# Everything the body's HTML depends on besides the snapshot: its templates, the PDF context
# builders and SVG charts it reads, the checklist rules and the template filters.
FINGERPRINT_TEMPLATES = (
    BODY_TEMPLATE,
    "sharing/_section_comments.html",
    "sharing/_checklist_table.html",
    "sharing/_open_items.html",
    "sharing/_deployment_line.html",
    "pdf/_operations.html",
    "includes/source_list.html",
    "includes/commercial_terms.html",
)
FINGERPRINT_SOURCES = (
    "planner/pdf/context.py",
    "planner/pdf/svg.py",
    "planner/sharing/checklist.py",
    "planner/sharing/templatetags/sharing_tags.py",
    "planner/templatetags/planner_labels.py",
    "planner/templatetags/planner_numbers.py",  # the checklist rounds figures with ``fixed``
    "planner/sharing/body.py",
    "planner/sharing/citations.py",
    "planner/sharing/schema.py",
    "planner/facility/tco_results.py",  # schema.py reads older TCO sections through it
    "planner/chartdefs.py",
    "planner/labels.py",
    "planner/engine/stacks.py",  # labels.py names the serving stacks from it
    "planner/money.py",
    "planner/engine/landed_cost.py",  # money.py rounds with its minor units
    "planner/engine/quote.py",  # the quote groups services and splits its payments
    "planner/engine/limits.py",
    "planner/engine/errors.py",
    "planner/engine/shown.py",  # the checklist and labels write figures with its quantity
    "planner/engine/cold_start_headroom.py",  # labels: whether headroom covers a cold start
    "planner/engine/chart_layout.py",  # svg.py's round tick steps
)
# Where a section's comments go; snapshot text is escaped, so it can never contain "<!--".
SLOT = "<!--planner:section-comments:{key}-->"
SLOT_RE = re.compile(r"<!--planner:section-comments:([a-z_]+)-->")
MEMO_SIZE = 64  # revisions per process; a body is ~100 KB
PAGE_MEMO_SIZE = 128  # share-page states per process


@dataclass(frozen=True)
class Body:
    """A revision's body: the page head's fields and the HTML cut at the comment slots.

    ``parts`` alternates HTML and the section whose comments follow it:
    ``((html, "summary"), (html, "workloads"), ..., (html, ""))``.
    """

    head: dict
    parts: tuple[tuple[SafeString, str], ...]

    @property
    def html(self) -> str:
        """The stored HTML, slots included (for comparing with a fresh render)."""
        return "".join(chunk + (SLOT.format(key=key) if key else "") for chunk, key in self.parts)


def revision_view_context(revision: PlanRevision) -> dict:
    """What the shared revision body template reads from a snapshot."""
    snapshot = pdf_context.client_view(revision.snapshot)  # typed; plain words; sources
    items = pdf_context.checklist_items(snapshot)
    head = {
        "revision_number": revision.number,
        "published_at": revision.published_at,
        "published_by": revision.published_by_name,
    }
    return {
        "revision": revision,
        "snap": snapshot,
        "report": pdf_context.report_context(snapshot, **head),
        "quote": pdf_context.quote_context(snapshot, **head),
        "checklist_items": items,
        "checklist_counts": checklist.summary(items),
    }


@cache
def fingerprint() -> str:
    """A hash of the code the body's HTML depends on (computed once per process)."""
    digest = hashlib.sha256()
    paths = [Path(get_template(name).origin.name) for name in FINGERPRINT_TEMPLATES]
    paths += [Path(settings.BASE_DIR) / source for source in FINGERPRINT_SOURCES]
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def revision_body_render(revision: PlanRevision) -> tuple[str, dict]:
    """Render the body from the snapshot: its HTML with comment slots, and the head fields."""
    context = revision_view_context(revision)
    html = render_to_string(BODY_TEMPLATE, {**context, "comment_slots": True})
    snap = context["snap"]
    head = {
        "plan_name": snap.plan.name,
        "client_name": snap.plan.client.name,
        "currency": snap.plan.currency,
        "organisation_name": snap.organisation.name,
    }
    return html, head


def _split(html: str, head: dict) -> Body:
    pieces = SLOT_RE.split(html)  # html, key, html, key, ..., html
    chunks, keys = pieces[0::2], [*pieces[1::2], ""]
    return Body(
        head=head, parts=tuple((mark_safe(c), k) for c, k in zip(chunks, keys, strict=True))
    )


class _Memo:
    """A small, thread-safe, least-recently-used dict (one per process)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_bodies = _Memo(MEMO_SIZE)
_pages = _Memo(PAGE_MEMO_SIZE)
# Stands for the request's CSRF token in a memoised page; random per process, so no snapshot
# or comment text can contain it.
CSRF_PLACEHOLDER = f"csrf-{secrets.token_hex(16)}"


def revision_body(*, revision: PlanRevision) -> Body:
    """The revision's body: from this process's memo, else the database, else rendered now.

    The revision's snapshot is read only on a miss, so callers may pass a revision loaded
    with ``defer("snapshot")``.
    """
    # The snapshot's hash too: ids of rolled-back rows can be reused (SQLite, tests).
    key = (revision.pk, revision.snapshot_sha256, fingerprint())
    body = _bodies.get(key)
    if body is not None:
        return body
    row = (
        RevisionBody.objects.filter(revision_id=revision.pk, fingerprint=key[2])
        .only("html", "head")
        .first()
    )
    if row is not None:
        html, head = row.html, row.head
    else:
        html, head = revision_body_render(revision)
        # Two processes may render the same body at once: they render the same HTML.
        RevisionBody.objects.bulk_create(
            [RevisionBody(revision_id=revision.pk, fingerprint=key[2], html=html, head=head)],
            ignore_conflicts=True,
        )
    body = _split(html, head)
    _bodies.put(key, body)
    return body


def page_html(*, key: tuple, render: Callable[[str], str], csrf_token: str) -> str:
    """A page memoised under ``key`` with this request's CSRF token put in.

    ``render(csrf_token)`` renders the page; it is called with :data:`CSRF_PLACEHOLDER` on a
    miss. ``key`` must name everything else the page shows (for the share page: revision,
    link token, and the version of its comments and decisions), and the page must not hold
    anything else that varies per request (messages, bound forms).
    """
    key = (*key, fingerprint())
    html = _pages.get(key)
    if html is None:
        html = render(CSRF_PLACEHOLDER)
        _pages.put(key, html)
    return html.replace(CSRF_PLACEHOLDER, csrf_token)


def memo_clear() -> None:
    """Forget this process's memoised bodies and pages (tests)."""
    _bodies.clear()
    _pages.clear()
