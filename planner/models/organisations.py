"""Organisations (consultancies) and the memberships that give users a role in one."""

import re

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

from planner.engine.limits import QUOTE_VALIDITY_DAYS
from planner.input_rules import NOTES_MAX_LENGTH
from planner.labels import KV_CACHE_DTYPE_CHOICES, SERVING_STACK_CHOICES
from planner.validation import in_range
from planner.versioning import VersionedModel

# A serving stack's version as people write it: 0.11.2, v0.21.0rc1, 0.5.4.post1.
stack_version_validator = RegexValidator(
    r"^[0-9A-Za-z][0-9A-Za-z.+_-]*$",
    "Write the version as the project does, e.g. 0.11.2 (letters, digits, dots, +, - and _).",
)


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    CONSULTANT = "consultant", "Consultant"
    VIEWER = "viewer", "Viewer"


# Starting terms for a new consultancy's quotes; owners edit them on the organisation page.
DEFAULT_QUOTE_TERMS = "\n".join(
    (
        "Prices are the suppliers' quotations converted at the exchange rates shown; the "
        "invoice follows the rate on the day of payment.",
        "Duties and import VAT are estimated from the tariff rules in force on the valuation "
        "date; the customs authority's assessment prevails. Recoverable VAT is shown separately.",
        "Lead times are the suppliers' quoted lead times plus transit, customs, installation and "
        "burn-in; the go-live date assumes the site's power is ready on the date stated.",
    )
)
# A general term that states payment: the quote's payment milestones are entered once, on the
# plan's quote page, so the organisation's terms never carry a second schedule.
PAYMENT_TERM = re.compile(
    r"\b(payment|payable|instal?ments?)\b|\d\s*%\s*(on|at|upon|after|within|before)\b", re.I
)


def payment_lines(terms: str) -> list[str]:
    """The lines of ``terms`` that state payment (:data:`PAYMENT_TERM`)."""
    return [line.strip() for line in terms.splitlines() if PAYMENT_TERM.search(line)]


class Organisation(VersionedModel):
    """A consultancy: the tenant. Every client, plan and import belongs to exactly one."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    quote_terms = models.TextField(
        default=DEFAULT_QUOTE_TERMS,
        max_length=NOTES_MAX_LENGTH,
        help_text="The general terms printed on every quote, one per line (payment, delivery "
        "and warranty are set on each plan's quote).",
    )
    quote_validity_days = models.PositiveSmallIntegerField(
        default=30,
        validators=in_range(QUOTE_VALIDITY_DAYS),
        help_text="Days a new plan's quote stays valid (shorter if a supplier offer expires); "
        "each plan's quote can change it.",
    )
    # What new workloads are sized for until the consultant says otherwise (README: vLLM with
    # the model's KV dtype, the stack that runs on every accelerator in the catalog).
    default_serving_stack = models.CharField(
        max_length=16,
        choices=SERVING_STACK_CHOICES,
        default="vllm",
        help_text="The serving stack new workloads are sized for.",
    )
    default_serving_stack_version = models.CharField(
        max_length=40,
        blank=True,
        validators=[stack_version_validator],
        help_text="Its version, named on estimates, reports and quotes (optional).",
    )
    default_kv_cache_dtype = models.CharField(
        max_length=8,
        choices=KV_CACHE_DTYPE_CHOICES,
        default="auto",
        help_text="The KV-cache dtype new workloads are sized with.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def quote_terms_list(self) -> list[str]:
        return [line.strip() for line in self.quote_terms.splitlines() if line.strip()]


class Membership(VersionedModel):
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
