"""The operations & security section of a plan: who owns each concern, with which tool.

The guide: "An inference endpoint is an exposed service: plan access control, request logging,
model-weight protection and isolation between tenants from the first design review", and
"a plan for monitoring, replacement parts and support". Each concern is answered by an owner
(a person or team) and the tool, contract or method; the checklist counts a concern as
answered when both are given (``planner.sharing.checklist``).
"""

from django.db import models

from planner.input_rules import NOTES_MAX_LENGTH
from planner.versioning import VersionedModel

TOPICS: tuple[tuple[str, str], ...] = (
    ("access_control", "Access control"),
    ("request_logging", "Request logging"),
    ("weight_protection", "Model-weight protection"),
    ("tenant_isolation", "Isolation between tenants"),
    ("monitoring", "Monitoring"),
    ("replacement_parts", "Replacement parts"),
    ("support", "Support"),
)


class OperationsPlan(VersionedModel):
    """One plan's operations & security answers (one row per plan)."""

    plan = models.OneToOneField("planner.Plan", on_delete=models.CASCADE, related_name="operations")
    access_control_owner = models.CharField(
        max_length=160, blank=True, verbose_name="Access control: owner"
    )
    access_control_how = models.CharField(
        max_length=300,
        blank=True,
        verbose_name="Access control: tool or contract",
        help_text="Who may call the endpoint and how (API gateway, SSO, keys).",
    )
    request_logging_owner = models.CharField(
        max_length=160, blank=True, verbose_name="Request logging: owner"
    )
    request_logging_how = models.CharField(
        max_length=300,
        blank=True,
        verbose_name="Request logging: tool or contract",
        help_text="Where requests and answers are logged, for how long.",
    )
    weight_protection_owner = models.CharField(
        max_length=160, blank=True, verbose_name="Model-weight protection: owner"
    )
    weight_protection_how = models.CharField(
        max_length=300,
        blank=True,
        verbose_name="Model-weight protection: tool or contract",
        help_text="How the weights are stored, encrypted and who can copy them.",
    )
    tenant_isolation_owner = models.CharField(
        max_length=160, blank=True, verbose_name="Isolation between tenants: owner"
    )
    tenant_isolation_how = models.CharField(
        max_length=300,
        blank=True,
        verbose_name="Isolation between tenants: tool or contract",
        help_text="How one tenant's requests and data stay apart from another's.",
    )
    monitoring_owner = models.CharField(
        max_length=160, blank=True, verbose_name="Monitoring: owner"
    )
    monitoring_how = models.CharField(
        max_length=300,
        blank=True,
        verbose_name="Monitoring: tool or contract",
        help_text="Metrics, alerts and on-call (e.g. Prometheus, Grafana, DCGM).",
    )
    replacement_parts_owner = models.CharField(
        max_length=160, blank=True, verbose_name="Replacement parts: owner"
    )
    replacement_parts_how = models.CharField(
        max_length=300,
        blank=True,
        verbose_name="Replacement parts: tool or contract",
        help_text="Who holds the spares and swaps failed parts (the BOM's spares).",
    )
    support_owner = models.CharField(max_length=160, blank=True, verbose_name="Support: owner")
    support_how = models.CharField(
        max_length=300,
        blank=True,
        verbose_name="Support: tool or contract",
        help_text="Hardware and software support contracts (the BOM's support lines).",
    )
    notes = models.TextField(blank=True, max_length=NOTES_MAX_LENGTH)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Operations & security of {self.plan}"

    def answers(self) -> list[dict[str, object]]:
        """Each concern with its owner, tool or contract, and whether both are given."""
        rows = []
        for key, label in TOPICS:
            owner = getattr(self, f"{key}_owner").strip()
            how = getattr(self, f"{key}_how").strip()
            rows.append(
                {
                    "key": key,
                    "label": label,
                    "owner": owner,
                    "how": how,
                    "filled": bool(owner and how),
                    "summary": f"{owner} — {how}" if owner and how else (owner or how),
                }
            )
        return rows
