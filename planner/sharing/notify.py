"""E-mails about client feedback and new revisions, through Django's mail settings.

The consultant hears of a client's comment or decision (the plan's creator and the people who
published its revisions, with an address); the client can be told of a new revision (the
plan's client contact, with the share link). Mail goes out after the transaction commits, so
a rolled-back comment sends nothing; a mail server that refuses is logged, never a 500.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction

from planner.sharing.models import Comment, Decision, PlanRevision, ShareLink

logger = logging.getLogger(__name__)


def consultant_addresses(plan) -> list[str]:
    """The plan's creator and its revisions' publishers that have an e-mail address."""
    users = [plan.created_by] + [
        r.published_by for r in PlanRevision.objects.filter(plan=plan).select_related(
            "published_by"
        )
    ]  # fmt: skip
    seen: dict[str, None] = {}
    for user in users:
        email = (getattr(user, "email", "") or "").strip()
        if email:
            seen.setdefault(email.lower(), None)
    return list(seen)


def _send(subject: str, body: str, to: list[str]) -> None:
    if not to:
        return

    def deliver() -> None:
        try:
            send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, to)
        except Exception:  # noqa: BLE001 - a mail server's refusal must not lose the feedback
            logger.exception("notification %r to %s not sent", subject, to)

    transaction.on_commit(deliver)


def comment_notify(comment: Comment, page_url: str) -> None:
    """Tell the consultants that a client commented."""
    plan = comment.revision.plan
    _send(
        f"{plan.client.name} commented on {plan.name}",
        f"{comment.author_name} commented on '{comment.get_section_display()}' of revision "
        f"{comment.revision.number} of {plan.name}:\n\n{comment.body}\n\nReply on the plan's "
        f"client review page: {page_url}\n",
        consultant_addresses(plan),
    )


def decision_notify(decision: Decision, page_url: str) -> None:
    """Tell the consultants that a client approved or asked for changes."""
    plan = decision.revision.plan
    note = f"\n\n{decision.note}" if decision.note else ""
    _send(
        f"{plan.client.name}: {decision.get_kind_display().lower()} — {plan.name}",
        f"{decision.name} recorded '{decision.get_kind_display()}' on revision "
        f"{decision.revision_number} of {plan.name}.{note}\n\nSee it here: {page_url}\n",
        consultant_addresses(plan),
    )


def revision_notify_client(revision: PlanRevision, link: ShareLink, link_url: str) -> str:
    """E-mail the client contact that ``revision`` is published; returns the address used.

    Raises:
        ValueError: The client has no contact e-mail.
    """
    plan = revision.plan
    to = (plan.client.contact_email or "").strip()
    if not to:
        raise ValueError("The client has no contact e-mail: add one on the client's page.")
    greeting = f"Dear {plan.client.contact_name}," if plan.client.contact_name else "Hello,"
    note = f"\n\n{revision.note}" if revision.note else ""
    _send(
        f"{plan.name}: revision {revision.number} is ready for you",
        f"{greeting}\n\nrevision {revision.number} of {plan.name} is published.{note}\n\n"
        f"Read it, comment and approve here: {link_url}\n",
        [to],
    )
    return to
