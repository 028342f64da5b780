"""Writes of the sharing app: publish, share links, client feedback, sign-offs, documents.

Every function takes rows already fetched for the organisation (or, for a client, resolved
from a valid share link), validates, and stores. Documents are rendered from the revision's
snapshot, never from the live plan, and stored so a revision is rendered once per kind.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import re
import secrets
import time
from dataclasses import dataclass
from datetime import date, datetime

from django.core.cache import cache
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.utils import timezone

from planner import freshness, jobs
from planner.client_ip import rate_limit_key
from planner.freshness import Freshness
from planner.models import Plan
from planner.pdf import context as pdf_context
from planner.pdf.render import render_pdf
from planner.sharing import checklist, schema
from planner.sharing.models import (
    ChecklistSignOff,
    Comment,
    CommentContact,
    Decision,
    DecisionKind,
    DocumentKind,
    DocumentStatus,
    PlanRevision,
    RenderedDocument,
    ReplyEmail,
    Section,
    ShareLink,
    ShareLinkView,
)
from planner.sharing.snapshot import plan_snapshot, snapshot_content_hash, snapshot_hash
from sourcing.selectors import missing_fx_rates

logger = logging.getLogger(__name__)

TOKEN_BYTES = 32  # secrets.token_urlsafe(32): 256 bits, 43 URL-safe characters
FAILED_GUESS_LIMIT = 20
FAILED_GUESS_WINDOW_S = 10 * 60
USER_AGENT_MAX = 400

DOCUMENT_TEMPLATES = {
    DocumentKind.QUOTE: "pdf/quote.html",
    DocumentKind.CHECKLIST: "pdf/checklist.html",
    DocumentKind.REPORT: "pdf/report.html",
    DocumentKind.COST_SHEET: "pdf/cost_sheet.html",  # internal: never through a share link
}
DOCUMENT_BUILDERS = {
    DocumentKind.QUOTE: pdf_context.quote_context,
    DocumentKind.CHECKLIST: pdf_context.checklist_context,
    DocumentKind.REPORT: pdf_context.report_context,
    DocumentKind.COST_SHEET: pdf_context.cost_sheet_context,
}


class SharingError(ValueError):
    """Input a service refuses; ``field`` names the form field it concerns."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NothingToPublish(SharingError):
    """The plan's content is the latest revision's: publishing again would duplicate it."""

    def __init__(self, revision: PlanRevision) -> None:
        super().__init__(
            f"Nothing changed since revision {revision.number}; no new revision was published."
        )
        self.revision = revision


class PublishBlocked(SharingError):
    """Results the revision includes are stale, failed or missing; ``items`` lists them."""

    def __init__(self, items: list[Freshness]) -> None:
        names = "; ".join(f"{item.label} ({item.state_label})" for item in items)
        super().__init__(
            f"Not published: {len(items)} result{'s are' if len(items) != 1 else ' is'} not "
            f'current — {names}. Recompute them, or tick "publish with these open items".'
        )
        self.items = items


class PublishFailed(SharingError):
    """An unexpected error while reading the plan: nothing was published."""


# --- Revisions ----------------------------------------------------------------------------------


def publish_blockers(*, plan: Plan) -> list[Freshness]:
    """Everything that keeps the plan from a plain publish (each a not-current result).

    Other checks that refuse a plain publish append their items here, as :class:`Freshness`
    rows (kind, label, state, reason).
    """
    items = freshness.open_items(plan)  # an unpriced BOM line makes the landed cost "failed"
    if (undecided := freshness.option_choice(plan)) is not None:
        items.append(undecided)  # publishing without a chosen option prompts like a stale result
    items += freshness.facility_failures(plan)  # e.g. 11 racks needed, 10 available
    items += freshness.measures_to_confirm(plan)  # a conditional duty nobody confirmed
    return items


def _user_name(user, plan: Plan) -> str:
    """The consultant's name as the client reads it: their full name, else the consultancy's
    (a login name such as "owner_b" is an account's id, not a name to show a client)."""
    if user is None:
        return ""
    return user.get_full_name() or plan.organisation.name


def _content_hash(revision: PlanRevision) -> str:
    return revision.content_sha256 or snapshot_content_hash(revision.snapshot)


def _latest_revision(plan: Plan) -> PlanRevision | None:
    return PlanRevision.objects.filter(plan=plan).order_by("-number").first()


def _refuse_missing_fx(plan: Plan) -> None:
    """A quote priced without an exchange rate would show 0.00: say which rate is missing."""
    from django.apps import apps

    if not apps.is_installed("sourcing"):
        return

    if missing := missing_fx_rates(plan=plan, organisation=plan.organisation):
        raise SharingError(
            "Not published: no exchange rate for " + "; ".join(missing) + ". Add the rate on "
            "the FX rates page (or change the plan currency), then publish.",
            "currency",
        )


@transaction.atomic
def revision_publish(
    *, plan: Plan, user, note: str = "", with_open_items: bool = False
) -> PlanRevision:
    """Freeze the plan as its next revision (1, 2, ...), with who published it and when.

    Refused while a result the revision includes is stale, failed or missing
    (:func:`publish_blockers`), unless ``with_open_items``: the revision then stores those
    open items (``snapshot["open_items"]``) and shows them to the client.

    Publishing is serialised per plan by a lock on the plan's row, so a double submit or
    two people publishing at once make one revision: the second finds its content already
    published.

    Raises:
        PublishBlocked: Results are not current and ``with_open_items`` is false.
        PublishFailed: An unexpected error while reading the plan (nothing is stored).
        NothingToPublish: The plan's content equals the latest revision's.
        SharingError: A rate the prices need is missing from the FX table.
        SharingError: A concurrent publish took the number (only where rows cannot be
            locked, e.g. SQLite) with different content.
    """
    Plan.objects.select_for_update().filter(pk=plan.pk).first()  # serialise per plan
    _refuse_missing_fx(plan)
    latest = _latest_revision(plan)
    number = (latest.number if latest else 0) + 1
    blockers = publish_blockers(plan=plan)
    if blockers and not with_open_items:
        raise PublishBlocked(blockers)
    try:
        snapshot = plan_snapshot(plan=plan, number=number)
    except Exception as exc:  # noqa: BLE001 - expected errors are sections' "unavailable" items
        logger.exception("publish of plan %s failed while reading the plan", plan.pk)
        raise PublishFailed(
            "Publishing failed: an unexpected error occurred while reading the plan "
            f"({type(exc).__name__}). Nothing was published; the error has been logged."
        ) from exc
    if blockers:  # absent when none, so content equal to an older revision's stays equal
        snapshot["open_items"] = [item.as_item() for item in blockers]
    try:
        schema.validate(snapshot)
    except schema.SnapshotInvalid as exc:
        logger.error("publish of plan %s: %s", plan.pk, exc)
        raise PublishFailed(f"Publishing failed: {exc} Nothing was published.") from exc
    content = snapshot_content_hash(snapshot)
    if latest is not None and _content_hash(latest) == content:
        raise NothingToPublish(latest)
    try:
        with transaction.atomic():
            return PlanRevision.objects.create(
                plan=plan,
                number=number,
                snapshot=snapshot,
                snapshot_sha256=snapshot_hash(snapshot),
                content_sha256=content,
                note=note.strip()[:300],
                published_by=user,
                published_by_name=_user_name(user, plan),
            )
    except IntegrityError as exc:  # a concurrent publish took the number
        latest = _latest_revision(plan)
        if latest is not None and _content_hash(latest) == content:
            raise NothingToPublish(latest) from exc
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
    # One key per IPv4 address or IPv6 /64 (planner.client_ip.rate_limit_key).
    group = rate_limit_key(ip)
    return "sharing:failed-token:" + hashlib.sha256(group.encode()).hexdigest()[:32]


def token_guesses_exceeded(*, ip: str | None) -> bool:
    """True when this address (or IPv6 /64) had too many failed look-ups in the window.

    Only failed look-ups count and only they are refused: callers ask this after a token did
    not resolve, so a valid link is always served. When the cache is down or times out the
    limit is not enforced (logged), rather than failing the request.
    """
    try:
        count = cache.get(_guess_key(ip), 0)
    except Exception:  # noqa: BLE001 - any cache backend error: degrade, never a 500
        logger.warning(
            "Share-link guess limit not checked: the cache is unavailable.", exc_info=True
        )
        return False
    return (count or 0) >= FAILED_GUESS_LIMIT


def token_guess_failed(*, ip: str | None) -> int:
    """Count one failed look-up for this address; returns the count in the current window.

    Returns 0 when the cache is unavailable (the failure is logged, not counted).
    """
    key = _guess_key(ip)
    try:
        if cache.add(key, 1, FAILED_GUESS_WINDOW_S):
            return 1
        try:
            return cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, FAILED_GUESS_WINDOW_S)
            return 1
    except Exception:  # noqa: BLE001 - any cache backend error: degrade, never a 500
        logger.warning("Share-link guess not counted: the cache is unavailable.", exc_info=True)
        return 0


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


@transaction.atomic
def comment_add(
    *, revision: PlanRevision, link: ShareLink | None, section: str, author_name: str, body: str,
    from_client: bool = True, email: str = "",
) -> Comment:  # fmt: skip
    """Store a comment as typed (escaped wherever it is shown, never interpreted).

    ``email`` (already validated by the form) is kept beside the comment, for the
    consultant's reply only (:class:`CommentContact`); empty: no address is stored.
    """
    if section not in Section.values:
        raise SharingError("Choose a section of the plan.", "section")
    comment = Comment.objects.create(
        revision=revision,
        link=link,
        section=section,
        author_name=author_name.strip()[:120],
        body=body.strip(),
        from_client=from_client,
    )
    email = (email or "").strip()
    if email and from_client:
        CommentContact.objects.create(
            comment=comment, email=email, forget_secret=secrets.token_urlsafe(TOKEN_BYTES)
        )
    return comment


@transaction.atomic
def comment_reply(*, parent: Comment, user, body: str, site_url: str = "") -> Comment:
    """A consultant's reply to a client comment, in the same thread (section and revision).

    When the client left an address with the thread's comment, the reply is e-mailed to it
    after the commit (a :class:`ReplyEmail` job whose status the review page shows);
    ``site_url`` is the site's address the e-mail links back to.
    """
    body = body.strip()
    if not body:
        raise SharingError("Write a reply.", "body")
    if len(body) > 4000:
        raise SharingError("At most 4,000 characters.", "body")
    thread = parent.reply_to or parent  # a reply to a reply joins the same thread
    reply = Comment.objects.create(
        revision=thread.revision,
        link=None,
        section=thread.section,
        author_name=_user_name(user, thread.revision.plan)[:120],
        body=body,
        from_client=False,
        reply_to=thread,
    )
    if CommentContact.objects.filter(comment=thread).exists():
        delivery = ReplyEmail.objects.create(reply=reply, site_url=site_url[:200])
        jobs.job_enqueue(delivery)
    return reply


def reply_email_resend(*, delivery: ReplyEmail, site_url: str) -> bool:
    """Send a reply's e-mail again after it failed (or was never queued); True if queued."""
    if delivery.site_url != site_url[:200]:
        delivery.site_url = site_url[:200]
        delivery.save(update_fields=["site_url"])
    return jobs.job_retry(delivery)


def contact_by_secret(*, secret: str) -> CommentContact | None:
    """The address a forget link names, or None (wrong or already forgotten)."""
    if not secret or len(secret) > 64:
        return None
    return (
        CommentContact.objects.filter(forget_secret=secret)
        .select_related("comment__revision")
        .first()
    )


FORGOTTEN = "(address forgotten at the client's request)"


@transaction.atomic
def contact_forget(*, contact: CommentContact) -> int:
    """Forget a client's address: every copy of it on the plan's comments, and any trace in
    the reply e-mails' failure reasons. Returns how many comments carried it.

    E-mails not sent yet are then not sent (the job finds no address and says so).
    """
    plan_id = contact.comment.revision.plan_id
    same = CommentContact.objects.filter(
        comment__revision__plan_id=plan_id, email__iexact=contact.email
    )
    threads = list(same.values_list("comment_id", flat=True))
    for delivery in ReplyEmail.objects.filter(reply__reply_to_id__in=threads).exclude(error=""):
        delivery.error = re.sub(re.escape(contact.email), FORGOTTEN, delivery.error, flags=re.I)
        delivery.save(update_fields=["error"])
    count, _ = same.delete()
    return count


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
    quote = schema.load(revision.snapshot).quote.number or f"plan-{revision.plan_id}"
    return f"{quote}-{kind}.pdf".replace("/", "-")


def document_render(*, revision: PlanRevision, kind: str) -> bytes:
    """Render a document of the revision now (no storage)."""
    context = document_context(revision=revision, kind=kind)
    return render_pdf(DOCUMENT_TEMPLATES[kind], {"doc": context}).content


def document_execute(*, job: RenderedDocument, recorder: jobs.JobRecorder) -> None:
    """Render and store one claimed document row (what the task runs)."""
    document = job
    recorder(0.1, "Reading the revision")
    started = time.perf_counter()
    context = document_context(revision=document.revision, kind=document.kind)
    recorder(0.4, "Laying out the pages")
    content = render_pdf(DOCUMENT_TEMPLATES[document.kind], {"doc": context}).content
    recorder(0.9, "Storing the PDF")
    document.file.save(
        document_filename(revision=document.revision, kind=document.kind),
        ContentFile(content),
        save=False,
    )
    document.sha256 = hashlib.sha256(content).hexdigest()
    document.size_bytes = len(content)
    document.render_seconds = time.perf_counter() - started
    jobs.job_finish(document, message="Ready")


def document_get_or_render(*, revision: PlanRevision, kind: str) -> RenderedDocument:
    """The stored document, rendered now (synchronously) if it is not stored yet."""
    document, _ = RenderedDocument.objects.get_or_create(revision=revision, kind=kind)
    if document.status == DocumentStatus.SUCCEEDED:
        if document.file:
            return document
        document.status = DocumentStatus.FAILED  # the stored file is gone: render it again
    jobs.job_retry(document, enqueue=False)
    return jobs.job_run_inline(document, document_execute)


def document_request(*, revision: PlanRevision, kind: str) -> tuple[RenderedDocument, bool]:
    """The document of the revision, queued for the worker when it is not rendered yet.

    A failed or stuck render (its worker died, or the queue was down) is queued again, so
    reopening the report retries it; a lost worker is noticed here too (the lease).

    Returns:
        ``(document, queued)``; ``queued`` is False when it is stored or already on its way.
    """
    document, created = RenderedDocument.objects.get_or_create(revision=revision, kind=kind)
    if created:
        jobs.job_enqueue(document)
        return document, True
    return document, jobs.job_retry(document)


def document_bytes(document: RenderedDocument) -> bytes:
    with document.file.open("rb") as handle:
        return handle.read()
