"""Invitations: how a person joins an organisation, by accepting a link e-mailed to them."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from .organisations import Organisation, Role


class InvitationState(models.TextChoices):
    PENDING = "pending", "Pending"
    ACCEPTED = "accepted", "Accepted"
    REVOKED = "revoked", "Revoked"
    EXPIRED = "expired", "Expired"


class Invitation(models.Model):
    """An owner's invitation for an e-mail address to join with a role.

    Only the SHA-256 of the link's token is stored: the token itself exists in the e-mail
    alone, so a database reader cannot accept an invitation.
    """

    organisation = models.ForeignKey(
        Organisation, on_delete=models.CASCADE, related_name="invitations"
    )
    email = models.EmailField()
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.CONSULTANT)
    token_sha256 = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["organisation", "email"],
                condition=Q(accepted_at__isnull=True, revoked_at__isnull=True),
                name="one_open_invitation_per_email",
            )
        ]

    def __str__(self) -> str:
        return f"{self.email} to {self.organisation} ({self.get_role_display()})"

    @property
    def state(self) -> str:
        if self.accepted_at is not None:
            return InvitationState.ACCEPTED
        if self.revoked_at is not None:
            return InvitationState.REVOKED
        if self.expires_at <= timezone.now():
            return InvitationState.EXPIRED
        return InvitationState.PENDING

    @property
    def is_pending(self) -> bool:
        return self.state == InvitationState.PENDING
