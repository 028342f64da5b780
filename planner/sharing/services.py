"""Writes of the sharing app: publish, share links, client feedback, sign-offs, documents.

Every function takes rows already fetched for the organisation (or, for a client, resolved
from a valid share link), validates, and stores. Documents are rendered from the revision's
snapshot, never from the live plan, and stored so a revision is rendered once per kind.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import date, datetime

from django.core.cache import cache
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from planner.models import Plan
from planner.pdf import context as pdf_context
from planner.pdf.render import render_pdf
from planner.sharing import checklist
from planner.sharing.models import (
    ChecklistSignOff,
    Comment,
    Decision,
    DecisionKind,
    DocumentKind,
    DocumentStatus,
    PlanRevision,
    RenderedDocument,
    Section,
    ShareLink,
    ShareLinkView,
)
from planner.sharing.snapshot import plan_snapshot, snapshot_hash

logger = logging.getLogger(__name__)

TOKEN_BYTES = 32  # secrets.token_urlsafe(32): 256 bits, 43 URL-safe characters
FAILED_GUESS_LIMIT = 20
FAILED_GUESS_WINDOW_S = 10 * 60
USER_AGENT_MAX = 400

DOCUMENT_TEMPLATES = {
    DocumentKind.QUOTE: "pdf/quote.html",
    DocumentKind.CHECKLIST: "pdf/checklist.html",
    DocumentKind.REPORT: "pdf/report.html",
}
DOCUMENT_BUILDERS = {
    DocumentKind.QUOTE: pdf_context.quote_context,
    DocumentKind.CHECKLIST: pdf_context.checklist_context,
    DocumentKind.REPORT: pdf_context.report_context,
}


class SharingError(ValueError):
    """Input a service refuses; ``field`` names the form field it concerns."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


# --- Revisions ----------------------------------------------------------------------------------


def _user_name(user) -> str:
    if user is None:
        return ""
    return user.get_full_name() or user.get_username()


@transaction.atomic
def revision_publish(*, plan: Plan, user, note: str = "") -> PlanRevision:
    """Freeze the plan as its next revision (1, 2, ...), with who published it and when."""
    Plan.objects.select_for_update().filter(pk=plan.pk).first()  # serialise numbering
    number = (PlanRevision.objects.filter(plan=plan).aggregate(n=Max("number"))["n"] or 0) + 1
    snapshot = plan_snapshot(plan=plan, number=number)
    try:
        with transaction.atomic():
            return PlanRevision.objects.create(
                plan=plan,
                number=number,
                snapshot=snapshot,
                snapshot_sha256=snapshot_hash(snapshot),
                note=note.strip()[:300],
                published_by=user,
                published_by_name=_user_name(user),
            )
    except IntegrityError as exc:  # a concurrent publish took the number
        raise SharingError("Another revision was published at the same moment; try again.") from exc


# --- Share links ----------------------------------------------------------------------------------


def share_link_create(
    *, plan: Plan, user, revision: PlanRevision | None, expires_at: datetime | None, note: str
) -> ShareLink:
    """A new link with a fresh 256-bit token.

    Raises:
        SharingError: When the plan has no published revision yet, the revision is another
            plan's, or the expiry is in the past.
    """
    if revision is not None and revision.plan_id != plan.pk:
        raise SharingError("That revision belongs to another plan.", "revision")
    if revision is None and not PlanRevision.objects.filter(plan=plan).exists():
        raise SharingError("Publish a revision before sharing the plan.", "revision")
    if expires_at is not None and expires_at <= timezone.now():
        raise SharingError("The expiry must be in the future.", "expires_at")
    return ShareLink.objects.create(
        plan=plan,
        revision=revision,
        token=secrets.token_urlsafe(TOKEN_BYTES),
        expires_at=expires_at,
        note=note.strip()[:200],
        created_by=user,
    )


def share_link_revoke(*, link: ShareLink, user) -> ShareLink:
    """Revoke at once (idempotent: the first revocation's time is kept)."""
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.revoked_by = user
        link.save(update_fields=["revoked_at", "revoked_by"])
    return link


def _guess_key(ip: str | None) -> str:
    return "sharing:failed-token:" + hashlib.sha256((ip or "unknown").encode()).hexdigest()[:32]


def token_guesses_exceeded(*, ip: str | None) -> bool:
    """True when this IP has had too many failed token look-ups in the window."""
    return cache.get(_guess_key(ip), 0) >= FAILED_GUESS_LIMIT


def token_guess_failed(*, ip: str | None) -> int:
    """Count one failed look-up for this IP; returns the count in the current window."""
    key = _guess_key(ip)
    if cache.add(key, 1, FAILED_GUESS_WINDOW_S):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, FAILED_GUESS_WINDOW_S)
        return 1


@dataclass(frozen=True)
class LinkAccess:
    """A valid link and the revision it shows now."""

    link: ShareLink
    revision: PlanRevision


def share_link_resolve(*, token: str) -> LinkAccess | None:
    """The valid link with this token and its revision, else ``None``.

    Wrong, revoked and expired tokens all give ``None``: callers answer them identically.
    """
    if not token or len(token) > 64:
        return None
    # The snapshot (the largest column) is loaded only if a caller reads it: the share page
    # shows the body stored once per revision (planner.sharing.body).
    link = (
        ShareLink.objects.select_related("revision")
        .defer("revision__snapshot")
        .filter(token=token)
        .first()
    )
    if link is None or not secrets.compare_digest(link.token, token) or not link.is_valid():
        return None
    revision = link.revision or (
        PlanRevision.objects.filter(plan_id=link.plan_id)
        .defer("snapshot")
        .order_by("-number")
        .first()
    )
    if revision is None:
        return None
    return LinkAccess(link, revision)


def _clean_ip(ip: str | None) -> str | None:
    try:
        return str(ipaddress.ip_address(ip)) if ip else None
    except ValueError:
        return None


def share_link_view_record(
    *, access: LinkAccess, ip: str | None, user_agent: str, path: str
) -> ShareLinkView:
    """Log one request made through a link."""
    return ShareLinkView.objects.create(
        link=access.link,
        ip_address=_clean_ip(ip),
        user_agent=(user_agent or "")[:USER_AGENT_MAX],
        path=path[:200],
        revision_number=access.revision.number,
    )


# --- Client feedback ---------------------------------------------------------------------------


def comment_add(
    *, revision: PlanRevision, link: ShareLink | None, section: str, author_name: str, body: str,
    from_client: bool = True,
) -> Comment:  # fmt: skip
    """Store a comment as typed (escaped wherever it is shown, never interpreted)."""
    if section not in Section.values:
        raise SharingError("Choose a section of the plan.", "section")
    return Comment.objects.create(
        revision=revision,
        link=link,
        section=section,
        author_name=author_name.strip()[:120],
        body=body.strip(),
        from_client=from_client,
    )


def decision_record(
    *, revision: PlanRevision, link: ShareLink | None, kind: str, name: str, note: str,
    ip: str | None = None,
) -> Decision:  # fmt: skip
    """Record an approval or a request for changes as a new row (history is kept)."""
    if kind not in DecisionKind.values:
        raise SharingError("Choose approve or request changes.", "kind")
    if kind == DecisionKind.CHANGES_REQUESTED and not note.strip():
        raise SharingError("Say what should change.", "note")
    return Decision.objects.create(
        revision=revision,
        revision_number=revision.number,
        link=link,
        kind=kind,
        name=name.strip()[:120],
        note=note.strip(),
        ip_address=_clean_ip(ip),
    )


# --- Checklist sign-offs ---------------------------------------------------------------------


def sign_off_record(
    *, plan: Plan, user, item_key: str, name: str, signed_on: date, note: str,
    withdraw: bool = False,
) -> ChecklistSignOff:  # fmt: skip
    """Sign off (or withdraw the sign-off of) one checklist item."""
    if item_key not in checklist.ITEM_KEYS:
        raise SharingError("Unknown checklist item.", "item_key")
    if not checklist.signed_on_is_valid(signed_on, timezone.localdate()):
        raise SharingError("The sign-off date cannot be in the future.", "signed_on")
    return ChecklistSignOff.objects.create(
        plan=plan,
        item_key=item_key,
        signed_by_name=name.strip()[:120],
        signed_on=signed_on,
        note=note.strip(),
        withdrawn=withdraw,
        created_by=user,
    )


# --- Documents -------------------------------------------------------------------------------


def document_context(*, revision: PlanRevision, kind: str):
    """The typed context of a document of the revision (from its snapshot only)."""
    return DOCUMENT_BUILDERS[kind](
        revision.snapshot,
        revision_number=revision.number,
        published_at=revision.published_at,
        published_by=revision.published_by_name,
    )


def document_filename(*, revision: PlanRevision, kind: str) -> str:
    quote = revision.snapshot.get("quote", {}).get("number") or f"plan-{revision.plan_id}"
    return f"{quote}-{kind}.pdf".replace("/", "-")


def document_render(*, revision: PlanRevision, kind: str) -> bytes:
    """Render a document of the revision now (no storage)."""
    context = document_context(revision=revision, kind=kind)
    return render_pdf(DOCUMENT_TEMPLATES[kind], {"doc": context}).content


class _Progress:
    """Writes a document row's progress (a recorder the task passes through)."""

    def __init__(self, document_id: int | None) -> None:
        self.document_id = document_id

    def __call__(self, progress: float, message: str) -> None:
        if self.document_id is not None:
            RenderedDocument.objects.filter(pk=self.document_id).update(
                progress=progress, progress_message=message[:200]
            )


def document_execute(*, document_id: int) -> RenderedDocument:
    """Render and store one document row (what the task calls)."""
    document = RenderedDocument.objects.select_related("revision").get(pk=document_id)
    if document.status == DocumentStatus.SUCCEEDED and document.file:
        return document
    progress = _Progress(document.pk)
    RenderedDocument.objects.filter(pk=document.pk).update(status=DocumentStatus.RUNNING)
    progress(0.1, "Reading the revision")
    started = time.perf_counter()
    context = document_context(revision=document.revision, kind=document.kind)
    progress(0.4, "Laying out the pages")
    content = render_pdf(DOCUMENT_TEMPLATES[document.kind], {"doc": context}).content
    progress(0.9, "Storing the PDF")
    document.refresh_from_db()
    document.file.save(
        document_filename(revision=document.revision, kind=document.kind),
        ContentFile(content),
        save=False,
    )
    document.sha256 = hashlib.sha256(content).hexdigest()
    document.size_bytes = len(content)
    document.render_seconds = time.perf_counter() - started
    document.status = DocumentStatus.SUCCEEDED
    document.progress = 1.0
    document.progress_message = "Ready"
    document.error = ""
    document.finished_at = timezone.now()
    document.save()
    return document


def document_fail(*, document_id: int, reason: str) -> None:
    RenderedDocument.objects.filter(pk=document_id).update(
        status=DocumentStatus.FAILED, error=reason[:2000], finished_at=timezone.now()
    )


def document_get_or_render(*, revision: PlanRevision, kind: str) -> RenderedDocument:
    """The stored document, rendered now (synchronously) if it is not stored yet."""
    document, _ = RenderedDocument.objects.get_or_create(revision=revision, kind=kind)
    if document.status != DocumentStatus.SUCCEEDED or not document.file:
        document = document_execute(document_id=document.pk)
    return document


def document_request(*, revision: PlanRevision, kind: str) -> tuple[RenderedDocument, bool]:
    """The document of the revision, queued for the worker when it is not rendered yet.

    Returns:
        ``(document, queued)``; ``queued`` is False when it is stored or already queued.
    """
    from planner.sharing.tasks import document_render_task

    document, created = RenderedDocument.objects.get_or_create(revision=revision, kind=kind)
    if document.status == DocumentStatus.FAILED:
        RenderedDocument.objects.filter(pk=document.pk).update(
            status=DocumentStatus.PENDING, error="", progress=0.0, progress_message=""
        )
        created = True
    if not created:
        return document, False
    transaction.on_commit(lambda: document_render_task.delay(document.pk))
    return document, True


def document_bytes(document: RenderedDocument) -> bytes:
    with document.file.open("rb") as handle:
        return handle.read()
