"""Reads of the sharing app. Every read takes a plan already fetched for the organisation
(``planner.tenancy.org_object_or_404``), so no query here crosses tenants."""

from __future__ import annotations

from django.db import connection
from django.db.models import Count, QuerySet

from planner.models import Plan
from planner.sharing.models import (
    ChecklistSignOff,
    Comment,
    Decision,
    PlanRevision,
    RenderedDocument,
    ReplyEmail,
    ShareLink,
    ShareLinkView,
)


def revision_list(*, plan: Plan) -> QuerySet[PlanRevision]:
    """The plan's revisions, newest first (snapshots deferred)."""
    return (
        PlanRevision.objects.filter(plan=plan)
        .defer("snapshot")
        .select_related("published_by")
        .order_by("-number")
    )


def revision_get(*, plan: Plan, number: int) -> PlanRevision:
    """One revision of the plan by number; raises PlanRevision.DoesNotExist for any other."""
    return PlanRevision.objects.get(plan=plan, number=number)


def revision_latest(*, plan: Plan) -> PlanRevision | None:
    return PlanRevision.objects.filter(plan=plan).order_by("-number").first()


def share_link_list(*, plan: Plan) -> QuerySet[ShareLink]:
    return (
        ShareLink.objects.filter(plan=plan)
        .select_related("revision", "created_by")
        .defer("revision__snapshot")
        .annotate(view_count=Count("views"))
        .order_by("-created_at", "-pk")
    )


def share_links() -> QuerySet[ShareLink]:
    """Links with their revision, but not the revision's snapshot (large, not shown).

    Not scoped: for ``planner.tenancy.org_object_or_404``, which adds the organisation."""
    return ShareLink.objects.select_related("revision").defer("revision__snapshot")


def share_link_get(*, plan: Plan, link_id: int) -> ShareLink:
    """One link of the plan; raises ShareLink.DoesNotExist for any other."""
    return share_links().get(plan=plan, pk=link_id)


def share_link_views(*, link: ShareLink, limit: int = 200) -> QuerySet[ShareLinkView]:
    return ShareLinkView.objects.filter(link=link).order_by("-viewed_at", "-pk")[:limit]


def comment_list(*, plan: Plan, revision: PlanRevision | None = None) -> QuerySet[Comment]:
    """The plan's comments, newest first, for consultants: with the address a client left
    (``contact``) and a reply's e-mail delivery (``email_delivery``), never for a client."""
    rows = Comment.objects.filter(revision__plan=plan).select_related(
        "revision", "contact", "email_delivery"
    )
    if revision is not None:
        rows = rows.filter(revision=revision)
    return rows.defer("revision__snapshot").order_by("-created_at", "-pk")


def revision_feedback(*, revision: PlanRevision) -> tuple[list[Comment], list[Decision]]:
    """The revision's comments (oldest first) and decisions (newest first), for its page.

    The revision comes from a valid share link or ``revision_get``, so it is the caller's.
    """
    comments = Comment.objects.filter(revision=revision).order_by("created_at", "pk")
    decisions = Decision.objects.filter(revision=revision).order_by("-created_at", "-pk")
    return list(comments), list(decisions)


def revision_feedback_version(*, revision: PlanRevision) -> tuple[int, int, int, int]:
    """The count and largest id of the revision's comments and of its decisions.

    Both tables are append-only with increasing ids, so a row added or deleted changes this:
    it keys what the share page memoises (``planner.sharing.body``). One raw query, no ORM
    compile: it runs on every view of a share page.
    """
    comment, decision = Comment._meta.db_table, Decision._meta.db_table
    sql = (
        f"SELECT (SELECT COUNT(*) FROM {comment} WHERE revision_id = %s),"
        f" (SELECT COALESCE(MAX(id), 0) FROM {comment} WHERE revision_id = %s),"
        f" (SELECT COUNT(*) FROM {decision} WHERE revision_id = %s),"
        f" (SELECT COALESCE(MAX(id), 0) FROM {decision} WHERE revision_id = %s)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [revision.pk] * 4)
        return tuple(cursor.fetchone())


def decision_list(*, plan: Plan, revision: PlanRevision | None = None) -> QuerySet[Decision]:
    rows = Decision.objects.filter(revision__plan=plan)
    if revision is not None:
        rows = rows.filter(revision=revision)
    return rows.order_by("-created_at", "-pk")


def sign_off_history(*, plan: Plan) -> QuerySet[ChecklistSignOff]:
    return ChecklistSignOff.objects.filter(plan=plan).order_by("-created_at", "-pk")


def document_get(*, revision: PlanRevision, kind: str) -> RenderedDocument | None:
    return RenderedDocument.objects.filter(revision=revision, kind=kind).first()


def document_list(*, revision: PlanRevision) -> dict[str, RenderedDocument]:
    return {d.kind: d for d in RenderedDocument.objects.filter(revision=revision)}


def reply_emails() -> QuerySet[ReplyEmail]:
    """Reply e-mails with their plan's organisation reachable (for ``org_object_or_404``)."""
    return ReplyEmail.objects.select_related("reply__revision__plan")
