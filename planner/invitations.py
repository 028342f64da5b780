"""Invitations: an owner invites an e-mail address; the person joins by accepting the link.

Nobody is added to an organisation without accepting, and the owner learns nothing about
whether the address already has an account: inviting answers the same in both cases (the
one thing said is "already a member", which the owner's member list shows anyway).

The link carries a random 256-bit token; only its SHA-256 is stored (``Invitation.token_sha256``)
so a copy of the database cannot be used to join. An invitation is valid for
``INVITATION_VALID_DAYS`` days, once, until the owner revokes it.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from planner.models import Invitation, Membership, Organisation

TOKEN_BYTES = 32  # secrets.token_urlsafe(32): 256 bits, 43 URL-safe characters


class InvitationError(ValueError):
    """An invitation the service refuses, with the message for the form's e-mail field."""


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _valid_days() -> int:
    return int(getattr(settings, "INVITATION_VALID_DAYS", 7))


@transaction.atomic
def invitation_create(
    *, organisation: Organisation, email: str, role: str, invited_by: User, base_url: str
) -> Invitation:
    """Invite ``email`` to join with ``role`` and e-mail them the link.

    A second invitation to the same address replaces the open one (its link stops working).

    Raises:
        InvitationError: The address belongs to a member of this organisation already, or
            the e-mail could not be sent (then nothing is saved).
    """
    email = email.strip().lower()
    if Membership.objects.filter(organisation=organisation, user__email__iexact=email).exists():
        raise InvitationError(f"{email} is already a member of {organisation}.")
    now = timezone.now()
    Invitation.objects.filter(
        organisation=organisation, email=email, accepted_at=None, revoked_at=None
    ).update(revoked_at=now)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    invitation = Invitation.objects.create(
        organisation=organisation,
        email=email,
        role=role,
        token_sha256=_token_hash(token),
        invited_by=invited_by,
        expires_at=now + timedelta(days=_valid_days()),
    )
    link = base_url + reverse("invitation_accept", args=[token])
    inviter = invited_by.get_full_name() or invited_by.get_username()
    try:
        _send(invitation, inviter=inviter, link=link)
    except OSError as exc:  # SMTP refused or unreachable: nothing is saved (atomic)
        raise InvitationError("The invitation e-mail could not be sent; try again later.") from exc
    return invitation


def _send(invitation: Invitation, *, inviter: str, link: str) -> None:
    organisation = invitation.organisation
    send_mail(
        subject=f"{inviter} invited you to {organisation} on Inference Planner",
        message=(
            f"{inviter} invited you to join {organisation} on Inference Planner as "
            f"{invitation.get_role_display().lower()}.\n\n"
            f"To accept, open this link (valid for {_valid_days()} days, once); you can sign "
            f"in or create an account there:\n{link}\n\n"
            "If you did not expect this invitation, ignore this e-mail: nothing changes "
            "unless you accept."
        ),
        from_email=None,
        recipient_list=[invitation.email],
    )


def invitation_revoke(*, invitation: Invitation) -> Invitation:
    """Revoke a pending invitation at once (idempotent; accepted ones stay accepted)."""
    if invitation.accepted_at is None and invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
    return invitation


def invitation_list_pending(*, organisation: Organisation):
    """The organisation's invitations not yet accepted, revoked or expired, newest first."""
    return Invitation.objects.filter(
        organisation=organisation,
        accepted_at=None,
        revoked_at=None,
        expires_at__gt=timezone.now(),
    ).select_related("invited_by")


def invitation_get_pending(*, token: str) -> Invitation | None:
    """The pending invitation with this link token, else ``None``.

    Wrong, expired, revoked and already accepted tokens all give ``None``.
    """
    if not token or len(token) > 100:
        return None
    invitation = (
        Invitation.objects.select_related("organisation", "invited_by")
        .filter(token_sha256=_token_hash(token))
        .first()
    )
    if invitation is None or not invitation.is_pending:
        return None
    return invitation


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user: User) -> Membership:
    """Make ``user`` a member with the invited role, once.

    A user who is a member already keeps their membership and role.

    Raises:
        InvitationError: The invitation was accepted, revoked or expired meanwhile.
    """
    locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if not locked.is_pending:
        raise InvitationError("This invitation is no longer valid.")
    membership, _ = Membership.objects.get_or_create(
        organisation=locked.organisation, user=user, defaults={"role": locked.role}
    )
    locked.accepted_at = timezone.now()
    locked.accepted_by = user
    locked.save(update_fields=["accepted_at", "accepted_by"])
    return membership
