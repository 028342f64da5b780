"""A load-test sweep of one replica attached to a workload's candidate configuration."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from planner.engine.load_test import TOOLS, LoadPoint, LoadTest
from planner.models import Precision


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
            points=tuple(LoadPoint(**p) for p in self.points),
        )
