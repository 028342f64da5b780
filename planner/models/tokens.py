"""API tokens: an organisation's key for scripts calling the JSON API."""

import hashlib
import secrets

from django.conf import settings
from django.db import models

TOKEN_PREFIX = "ipk_"


def token_digest(raw: str) -> str:
    """SHA-256 of a token: only the digest is stored, the token is shown once."""
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    organisation = models.ForeignKey(
        "planner.Organisation", on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True)
    hint = models.CharField(
        max_length=12, help_text="The token's first characters, to tell keys apart."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.hint}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @staticmethod
    def generate() -> str:
        """A new random token: 32 bytes from the OS's CSPRNG (256 bits)."""
        return TOKEN_PREFIX + secrets.token_urlsafe(32)
