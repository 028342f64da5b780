"""Organisations (consultancies) and the memberships that give users a role in one."""

from django.conf import settings
from django.db import models


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    CONSULTANT = "consultant", "Consultant"
    VIEWER = "viewer", "Viewer"


class Organisation(models.Model):
    """A consultancy: the tenant. Every client, plan and import belongs to exactly one."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    """A user's role inside one organisation."""

    organisation = models.ForeignKey(
        Organisation, on_delete=models.CASCADE, related_name="memberships"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.CONSULTANT)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["organisation__name", "user__username"]
        constraints = [
            models.UniqueConstraint(
                fields=["organisation", "user"], name="unique_membership_per_organisation"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.organisation} ({self.get_role_display()})"

    @property
    def can_edit(self) -> bool:
        """Owners and consultants edit plans; viewers only read."""
        return self.role in (Role.OWNER, Role.CONSULTANT)

    @property
    def is_owner(self) -> bool:
        return self.role == Role.OWNER
