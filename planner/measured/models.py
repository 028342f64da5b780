"""A load-test sweep of one replica attached to a workload's candidate configuration."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models

from planner.engine.load_test import TOOLS, LoadPoint, LoadTest
from planner.models import Job, Precision
from planner.versioning import VersionedModel


class LoadTestSweep(models.Model):
    """The points of one sweep (one or several result files) for one candidate.

    The candidate is the workload's accelerator × precision × TP; model, stack and version
    are as read from the files or entered. ``points`` holds the parsed
    :class:`planner.engine.load_test.LoadPoint` rows, so the raw files are not kept.
    """

    organisation = models.ForeignKey(
        "planner.Organisation", on_delete=models.CASCADE, related_name="+"
    )
    workload = models.ForeignKey(
        "planner.Workload", on_delete=models.CASCADE, related_name="load_tests"
    )
    accelerator = models.ForeignKey(
        "catalog.Accelerator", on_delete=models.PROTECT, related_name="+"
    )
    precision = models.CharField(max_length=8, choices=Precision.choices)
    tensor_parallel = models.PositiveSmallIntegerField()
    tool = models.CharField(max_length=20, choices=[(k, v) for k, v in TOOLS.items()])
    model_name = models.CharField(max_length=200, blank=True, help_text="As the file names it.")
    serving_stack = models.CharField(max_length=60, blank=True)
    stack_version = models.CharField(max_length=60, blank=True)
    file_names = models.CharField(max_length=1000)
    measured_on = models.DateField(null=True, blank=True)
    points = models.JSONField(help_text="LoadPoint rows, lightest load first.")
    skipped_stages = models.JSONField(
        default=list,
        blank=True,
        help_text="Stages or files left out (no successful request), each with why.",
    )
    correct_neighbours = models.BooleanField(
        default=False,
        help_text="Use this sweep to correct the engine for the same family and precision.",
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-uploaded_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["workload", "accelerator", "precision", "tensor_parallel"],
                name="one_sweep_per_candidate",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_tool_display()} sweep of {self.candidate_key}"

    @property
    def candidate_key(self) -> str:
        """The sizing table's key of the candidate (planner.sizing.candidate_key)."""
        return f"{self.accelerator.slug}|{self.precision}|{self.tensor_parallel}"

    def load_test(self) -> LoadTest:
        return LoadTest(
            tool=self.tool,
            model=self.model_name,
            measured_on=self.measured_on.isoformat() if self.measured_on else "",
            serving_stack=self.serving_stack,
            stack_version=self.stack_version,
            points=tuple(LoadPoint.from_stored(p) for p in self.points),
            skipped=tuple(self.skipped_stages),
        )


class MeasuredSettings(VersionedModel):
    """An organisation's rules for raw traffic logs."""

    organisation = models.OneToOneField(
        "planner.Organisation", on_delete=models.CASCADE, related_name="measured_settings"
    )
    raw_log_retention_days = models.PositiveSmallIntegerField(
        default=0,
        validators=[MaxValueValidator(3650)],
        help_text="Days an uploaded log file is kept after its import; 0 deletes it as soon "
        "as it is read (the derived figures stay).",
    )

    def __str__(self) -> str:
        return f"Measured settings of {self.organisation}"


class LogColumnMapping(models.Model):
    """A column mapping saved by an organisation for its next upload of the same export."""

    organisation = models.ForeignKey(
        "planner.Organisation", on_delete=models.CASCADE, related_name="+"
    )
    name = models.CharField(max_length=80)
    log_format = models.CharField(max_length=8, choices=[("csv", "CSV"), ("jsonl", "JSON Lines")])
    columns = models.JSONField(help_text="Field → column name (dotted path into JSON).")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["organisation", "name"], name="one_mapping_per_name")
        ]

    def __str__(self) -> str:
        return self.name


class TrafficLogImport(Job):
    """One uploaded request log, read in the background into per-type traffic figures.

    Nothing of a failed import is kept: ``result`` stays empty, the file is deleted and
    ``problem`` names the line. The raw file is kept for the organisation's retention days.
    """

    job_task = "planner.measured.tasks.traffic_log_import_task"
    status_labels = {"succeeded": "Imported"}

    organisation = models.ForeignKey(
        "planner.Organisation", on_delete=models.CASCADE, related_name="+"
    )
    workload = models.ForeignKey(
        "planner.Workload", on_delete=models.CASCADE, related_name="traffic_logs"
    )
    file = models.FileField(upload_to="traffic_logs/%Y/%m/", blank=True)
    file_name = models.CharField(max_length=255)
    file_bytes = models.PositiveBigIntegerField(default=0)
    log_format = models.CharField(max_length=8, choices=[("csv", "CSV"), ("jsonl", "JSON Lines")])
    columns = models.JSONField()
    request_s = models.FloatField(
        null=True, blank=True, help_text="Request time for Little's law when the log has none."
    )
    result = models.JSONField(default=dict, blank=True, help_text="TrafficProfile by type.")
    problem = models.TextField(blank=True, help_text="Why the log was not imported.")
    file_expires_at = models.DateTimeField(null=True, blank=True)
    applied_type = models.CharField(max_length=120, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-requested_at"]

    def __str__(self) -> str:
        return f"Traffic log {self.file_name}"


class LoadTestImport(Job):
    """Result files of one sweep too large to read while the page waits, read by a worker.

    The files are stored as uploaded (Django streamed them to disk) until the worker has read
    them; then the sweep is attached to its candidate (``sweep``), or ``problem`` says why
    not. The files are deleted either way.
    """

    job_task = "planner.measured.tasks.load_test_import_task"
    status_labels = {"succeeded": "Attached"}

    organisation = models.ForeignKey(
        "planner.Organisation", on_delete=models.CASCADE, related_name="+"
    )
    workload = models.ForeignKey(
        "planner.Workload", on_delete=models.CASCADE, related_name="load_test_imports"
    )
    accelerator = models.ForeignKey(
        "catalog.Accelerator", on_delete=models.PROTECT, related_name="+"
    )
    precision = models.CharField(max_length=8, choices=Precision.choices)
    tensor_parallel = models.PositiveSmallIntegerField()
    serving_stack = models.CharField(max_length=60, blank=True)
    stack_version = models.CharField(max_length=60, blank=True)
    measured_on = models.DateField(null=True, blank=True)
    files = models.JSONField(
        default=list, help_text="Each file's name as uploaded, stored path and size in bytes."
    )
    problem = models.TextField(blank=True, help_text="Why the sweep was not attached.")
    sweep = models.ForeignKey(
        LoadTestSweep, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-requested_at"]

    def __str__(self) -> str:
        return f"Load test import of {', '.join(f['name'] for f in self.files)}"


class FleetNotice(models.Model):
    """A measurement changed a workload's chosen fleet: said on the plan's overview.

    Shown until someone dismisses it or a later change of the same workload supersedes it;
    the same sentence is kept for ever in the plan's history (``sourcing.PlanEvent``).
    """

    class Closed(models.TextChoices):
        DISMISSED = "dismissed", "Dismissed"
        SUPERSEDED = "superseded", "Superseded by a later change"

    organisation = models.ForeignKey(
        "planner.Organisation", on_delete=models.CASCADE, related_name="+"
    )
    plan = models.ForeignKey("planner.Plan", on_delete=models.CASCADE, related_name="+")
    workload = models.ForeignKey(
        "planner.Workload", on_delete=models.CASCADE, related_name="fleet_notices"
    )
    message = models.TextField(help_text="What changed, by what and when, in one sentence.")
    accelerators_before = models.PositiveIntegerField(null=True, blank=True)
    accelerators_after = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_because = models.CharField(max_length=12, choices=Closed.choices, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["plan", "closed_at"], name="fleet_notice_open")]

    def __str__(self) -> str:
        return self.message
