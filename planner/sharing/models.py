"""Revisions, share links, client feedback, checklist sign-offs and rendered documents.

A :class:`PlanRevision` is the frozen JSON snapshot of a plan at publication: it is written
once and never updated (``save`` and the queryset's ``update`` refuse), so a quote or report
built from it stays what the client saw. Clients without an account reach a revision
through a :class:`ShareLink`; what they do there (:class:`ShareLinkView`,
:class:`Comment`, :class:`Decision`) is recorded as new rows, never edits.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxLengthValidator
from django.db import models
from django.utils import timezone

from planner.models.jobs import Job, JobStatus
from planner.validation import date_in_range

SNAPSHOT_SCHEMA_VERSION = 3  # planner.sharing.schema: the versions and their migrations


class ImmutableRecordError(Exception):
    """Raised on any attempt to change a record that is frozen once written."""


class _AppendOnlyQuerySet(models.QuerySet):
    """A queryset whose bulk ``update`` is refused: frozen rows are never changed in place."""

    def update(self, **kwargs):
        raise ImmutableRecordError(f"{self.model.__name__} rows cannot be updated.")


class AppendOnlyModel(models.Model):
    """A model whose rows are written once: ``save`` of an existing row raises."""

    objects = _AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableRecordError(
                f"{type(self).__name__} {self.pk} is frozen; record a new one instead."
            )
        super().save(*args, **kwargs)


class PlanRevision(AppendOnlyModel):
    """A published, immutable snapshot of a plan (numbered 1, 2, ... per plan)."""

    plan = models.ForeignKey("planner.Plan", on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    schema_version = models.PositiveSmallIntegerField(default=SNAPSHOT_SCHEMA_VERSION)
    snapshot = models.JSONField(help_text="Every input and result the revision shows.")
    snapshot_sha256 = models.CharField(max_length=64)
    content_sha256 = models.CharField(
        max_length=64,
        blank=True,
        help_text="SHA-256 of the snapshot without its number and dates: equal content, equal "
        "hash (empty on revisions published before it was recorded).",
    )
    note = models.CharField(max_length=300, blank=True, help_text="What changed, for the client.")
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    published_by_name = models.CharField(max_length=200, blank=True)
    published_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["plan", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["plan", "number"], name="unique_revision_per_plan")
        ]

    def __str__(self) -> str:
        return f"Revision {self.number} of plan {self.plan_id}"


class ShareLink(models.Model):
    """A read-only link for a client: one revision, or the latest published one.

    ``token`` is ``secrets.token_urlsafe(32)`` (256 bits). Revocation and expiry are the
    only changes a link ever sees.
    """

    plan = models.ForeignKey("planner.Plan", on_delete=models.CASCADE, related_name="share_links")
    revision = models.ForeignKey(
        PlanRevision,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="share_links",
        help_text="Empty: always the latest published revision.",
    )
    token = models.CharField(max_length=64, unique=True)
    note = models.CharField(max_length=200, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"Share link {self.pk} of plan {self.plan_id}"

    def is_valid(self, now=None) -> bool:
        """Not revoked and not expired at ``now`` (default: the current time)."""
        now = now or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    @property
    def state(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return "expired"
        return "active"


class ShareLinkView(AppendOnlyModel):
    """One request made through a share link (page or download)."""

    link = models.ForeignKey(ShareLink, on_delete=models.CASCADE, related_name="views")
    viewed_at = models.DateTimeField(default=timezone.now)
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=400, blank=True)
    path = models.CharField(max_length=200, blank=True)
    revision_number = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-viewed_at", "-pk"]

    def __str__(self) -> str:
        return f"View of link {self.link_id} at {self.viewed_at:%Y-%m-%d %H:%M}"


class Section(models.TextChoices):
    SUMMARY = "summary", "Summary"
    WORKLOADS = "workloads", "Workloads and sizing"
    FACILITY = "facility", "Sites and facility checks"
    TCO = "tco", "Cost over time (TCO)"
    BOM = "bom", "Bill of materials and quote"  # the share page's heading: clients read it
    TIMELINE = "timeline", "Timeline and go-live"
    CHECKLIST = "checklist", "Pre-purchase checklist"
    GENERAL = "general", "General"


class Comment(AppendOnlyModel):
    """A comment on one section of a revision, by a client (through a link) or a consultant."""

    revision = models.ForeignKey(PlanRevision, on_delete=models.CASCADE, related_name="comments")
    link = models.ForeignKey(
        ShareLink, null=True, blank=True, on_delete=models.SET_NULL, related_name="comments"
    )
    section = models.CharField(max_length=20, choices=Section.choices, default=Section.GENERAL)
    author_name = models.CharField(max_length=120)
    body = models.TextField(validators=[MaxLengthValidator(4000)])
    from_client = models.BooleanField(default=True)
    reply_to = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="replies",
        help_text="The client comment a consultant's reply answers (same thread).",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"Comment by {self.author_name} on {self.section}"


class CommentContact(models.Model):
    """The e-mail address a client gave with a comment, so the consultant's reply reaches them.

    Kept apart from the frozen :class:`Comment`: it is personal data with a life of its own.
    Only consultants see it (the review page); the share page, the documents and other
    clients never read this table. The client removes it with ``forget_secret`` (a link in
    every reply e-mail and in the notice after commenting); deleting the row is forgetting.
    """

    comment = models.OneToOneField(Comment, on_delete=models.CASCADE, related_name="contact")
    email = models.EmailField(max_length=254)
    forget_secret = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"Reply address of comment {self.comment_id}"


class ReplyEmail(Job):
    """The e-mail that carries a consultant's reply to the client who commented (a job).

    Its status is the delivery status the consultant sees beside the reply: queued, sending,
    sent, or not sent with the mail server's reason. ``site_url`` is the site's address as
    the consultant reached it, so the worker can write absolute links.
    """

    job_task = "planner.sharing.tasks.reply_email_task"
    status_labels = {
        JobStatus.PENDING: "Queued",
        JobStatus.RUNNING: "Sending",
        JobStatus.SUCCEEDED: "Sent",
        JobStatus.FAILED: "Not sent",
    }

    reply = models.OneToOneField(Comment, on_delete=models.CASCADE, related_name="email_delivery")
    site_url = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"E-mail of reply {self.reply_id} ({self.status})"

    @property
    def status_label(self) -> str:
        return self.status_labels.get(self.status) or self.get_status_display()


class DecisionKind(models.TextChoices):
    APPROVED = "approved", "Approved"
    CHANGES_REQUESTED = "changes_requested", "Changes requested"


class Decision(AppendOnlyModel):
    """A client's approval of a revision, or their request for changes.

    Never edited: a later decision is a new row, so the history stays visible.
    ``revision_number`` repeats the revision's number so the record reads on its own.
    """

    revision = models.ForeignKey(PlanRevision, on_delete=models.CASCADE, related_name="decisions")
    revision_number = models.PositiveIntegerField()
    link = models.ForeignKey(
        ShareLink, null=True, blank=True, on_delete=models.SET_NULL, related_name="decisions"
    )
    kind = models.CharField(max_length=20, choices=DecisionKind.choices)
    name = models.CharField(max_length=120)
    note = models.TextField(blank=True, validators=[MaxLengthValidator(4000)])
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} by {self.name} (revision {self.revision_number})"


class ChecklistSignOff(AppendOnlyModel):
    """A hand sign-off of one pre-purchase checklist item (the latest per item counts)."""

    plan = models.ForeignKey(
        "planner.Plan", on_delete=models.CASCADE, related_name="checklist_sign_offs"
    )
    item_key = models.CharField(max_length=40)
    signed_by_name = models.CharField(max_length=120)
    signed_on = models.DateField(validators=date_in_range())
    note = models.TextField(blank=True, validators=[MaxLengthValidator(2000)])
    withdrawn = models.BooleanField(
        default=False, help_text="A sign-off that takes back the previous one."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.item_key} signed by {self.signed_by_name} on {self.signed_on}"


class DocumentKind(models.TextChoices):
    QUOTE = "quote", "Quote"
    CHECKLIST = "checklist", "Checklist"
    REPORT = "report", "Plan report"
    COST_SHEET = "cost_sheet", "Internal cost sheet"  # the consultancy's only: never via a link


CLIENT_DOCUMENT_KINDS = (DocumentKind.QUOTE, DocumentKind.CHECKLIST, DocumentKind.REPORT)


DocumentStatus = JobStatus  # the status of every background job


def _document_path(instance: RenderedDocument, filename: str) -> str:
    return f"documents/plan-{instance.revision.plan_id}/revision-{instance.revision_id}/{filename}"


class RenderedDocument(Job):
    """The PDF bytes of one document kind for one revision, rendered once (a job)."""

    job_task = "planner.sharing.tasks.document_render_task"
    status_labels = {JobStatus.RUNNING: "Rendering", JobStatus.SUCCEEDED: "Ready"}

    revision = models.ForeignKey(PlanRevision, on_delete=models.CASCADE, related_name="documents")
    kind = models.CharField(max_length=20, choices=DocumentKind.choices)
    file = models.FileField(upload_to=_document_path, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    size_bytes = models.PositiveIntegerField(default=0)
    render_seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["revision", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["revision", "kind"], name="unique_document_per_kind")
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.revision}"


class RevisionBody(AppendOnlyModel):
    """The HTML body of a published revision, rendered once by ``planner.sharing.body``.

    A revision never changes, so its body only needs rendering again when the code that
    renders it changes: ``fingerprint`` is a hash of that code, and a new deployment with
    other templates writes a new row. Comments are not in it (they change after
    publication); the HTML holds one slot per section for them.
    """

    revision = models.ForeignKey(PlanRevision, on_delete=models.CASCADE, related_name="bodies")
    fingerprint = models.CharField(max_length=64)
    html = models.TextField()
    head = models.JSONField(help_text="The few snapshot fields the page head shows.")
    rendered_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "fingerprint"], name="unique_body_per_revision_and_code"
            )
        ]

    def __str__(self) -> str:
        return f"Body of {self.revision} ({self.fingerprint[:8]})"
