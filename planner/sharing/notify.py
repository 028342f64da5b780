"""E-mails about client feedback and new revisions, through Django's mail settings.

The consultant hears of a client's comment or decision (the plan's creator and the people who
published its revisions, with an address); the client can be told of a new revision (the
plan's client contact, with the share link) and receives the consultant's reply to a comment
they left an address with. Mail goes out after the transaction commits, so a rolled-back
comment sends nothing; a mail server that refuses is logged, never a 500. A reply's e-mail is
a job (:class:`~planner.sharing.models.ReplyEmail`): retried, and its outcome shown to the
consultant beside the reply.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse

from planner import jobs
from planner.sharing.models import (
    Comment,
    CommentContact,
    Decision,
    PlanRevision,
    ReplyEmail,
    ShareLink,
)

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
    contact = CommentContact.objects.filter(comment=comment).first()
    reach = (
        f"\n\nYour reply is e-mailed to {contact.email}, the address they gave."
        if contact
        else "\n\nThey gave no e-mail address: they see your reply on their page."
    )
    _send(
        f"{plan.client.name} commented on {plan.name}",
        f"{comment.author_name} commented on '{comment.get_section_display()}' of revision "
        f"{comment.revision.number} of {plan.name}:\n\n{comment.body}{reach}\n\nReply on the "
        f"plan's client review page: {page_url}\n",
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


class AddressForgotten(Exception):
    """The client asked to forget the address before the reply went out."""


def reply_email_message(reply: Comment, site_url: str) -> tuple[str, str, str]:
    """(subject, body, recipient) of the e-mail carrying ``reply`` to the client.

    The body quotes the client's comment, the reply, a link back to the share page the
    client commented through (while it works) and the link that forgets their address.

    Raises:
        AddressForgotten: The thread's comment has no address (any more).
    """
    thread = reply.reply_to
    contact = CommentContact.objects.filter(comment=thread).first() if thread else None
    if contact is None:
        raise AddressForgotten("The client asked us to forget their address: not sent.")
    plan = reply.revision.plan
    link = thread.link
    if link is not None and link.is_valid():
        page = f"{site_url}{reverse('sharing:public', args=[link.token])}#comment-{reply.pk}"
        where = f"Read the plan and answer here: {page}"
    else:
        where = (
            f"The link you commented through no longer works; ask {reply.author_name} "
            "for a new one."
        )
    forget = f"{site_url}{reverse('sharing:contact_forget', args=[contact.forget_secret])}"
    quoted = "\n".join(f"> {line}" for line in thread.body.splitlines())
    body = (
        f"Dear {thread.author_name},\n\n{reply.author_name} replied to your comment on "
        f"'{thread.get_section_display()}' of {plan.name} (revision {reply.revision.number}):"
        f"\n\n{quoted}\n\n{reply.body}\n\n{where}\n\n"
        f"You receive this because you gave this address with your comment. To stop these "
        f"e-mails and have us forget it: {forget}\n"
    )
    return f"{plan.name}: {reply.author_name} replied to your comment", body, contact.email


def reply_email_execute(*, job: ReplyEmail, recorder: jobs.JobRecorder) -> None:
    """Send one reply's e-mail now; a refusal raises (the task base retries, then records it)."""
    reply = Comment.objects.select_related(
        "revision__plan", "reply_to__link"
    ).get(pk=job.reply_id)  # fmt: skip
    try:
        subject, body, to = reply_email_message(reply, job.site_url)
    except AddressForgotten as exc:
        jobs.job_fail(job, str(exc))
        return
    recorder(0.5, "Sending")
    send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [to], fail_silently=False)
    jobs.job_finish(job, message="Sent")
