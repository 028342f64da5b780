"""Clients, plans and workloads: what a consultant plans for whom.

A plan belongs to a client of one organisation. A workload is one request type (chat,
batch, ...) with its model, lengths, latency targets and peak traffic; the sizing engine
turns it into candidate configurations and the consultant's choice is kept on it.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

from planner.engine import limits
from planner.input_rules import NOTES_MAX_LENGTH
from planner.labels import KV_CACHE_DTYPE_CHOICES, SERVING_STACK_CHOICES
from planner.validation import (
    date_constraint,
    date_in_range,
    in_range,
    range_constraint,
)
from planner.versioning import VersionedModel

from .organisations import stack_version_validator

currency_validator = RegexValidator(r"^[A-Z]{3}$", "Use a three-letter ISO 4217 code, e.g. EUR.")


class VatRecovery(models.TextChoices):
    """How much of the VAT it pays the client deducts (Directive 2006/112/EC Art. 168-173)."""

    FULL = "full", "Full: VAT-registered, fully taxable"
    PARTIAL = "partial", "Partial: a percentage (pro-rata, Art. 173)"
    NONE = "none", "None: VAT-exempt (e.g. a bank or insurer), VAT is a cost"


class Client(VersionedModel):
    """A consultancy's client (the company a plan is for).

    ``vat_recovery`` says how much of the VAT it pays on the plan's purchases the client
    deducts; the rest is a cost in the landed cost, the TCO and the quote.
    ``vat_recoverable_pct`` is the percentage when recovery is partial (empty otherwise).
    """

    organisation = models.ForeignKey(
        "planner.Organisation", on_delete=models.CASCADE, related_name="clients"
    )
    name = models.CharField(max_length=200)
    country = models.CharField(
        max_length=2, blank=True, help_text="ISO 3166 two-letter code, e.g. DE."
    )
    contact_name = models.CharField(max_length=200, blank=True)
    contact_email = models.EmailField(blank=True)
    notes = models.TextField(blank=True, max_length=NOTES_MAX_LENGTH)
    vat_recovery = models.CharField(
        "VAT recovery",
        max_length=10,
        choices=VatRecovery.choices,
        default=VatRecovery.FULL,
        help_text="How much of the VAT it pays the client can deduct.",
    )
    vat_recoverable_pct = models.DecimalField(
        "VAT recoverable, %",
        max_digits=5,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="Only for partial recovery: the client's deductible share, e.g. 30.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["organisation", "name"], name="unique_client_name_per_organisation"
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(
                        vat_recovery="partial",
                        vat_recoverable_pct__gt=0,
                        vat_recoverable_pct__lt=100,
                    )
                    | (
                        models.Q(vat_recovery__in=("full", "none"))
                        & models.Q(vat_recoverable_pct__isnull=True)
                    )
                ),
                name="client_vat_recoverable_pct_only_when_partial",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def vat_recovery_pct(self) -> Decimal:
        """The share of deductible VAT the client recovers, 0-100."""
        if self.vat_recovery == VatRecovery.NONE:
            return Decimal(0)
        if self.vat_recovery == VatRecovery.PARTIAL and self.vat_recoverable_pct is not None:
            return Decimal(self.vat_recoverable_pct)
        return Decimal(100)

    @property
    def vat_treatment(self) -> str:
        """The VAT treatment in words, for the quote."""
        if self.vat_recovery == VatRecovery.NONE:
            return (
                f"{self.name} is VAT-exempt and recovers no VAT: the VAT paid on these goods is "
                "part of its cost."
            )
        if self.vat_recovery == VatRecovery.PARTIAL:
            return (
                f"{self.name} recovers {self.vat_recovery_pct.normalize():f} % of the VAT it "
                "pays; the rest of the VAT on these goods is part of its cost."
            )
        return f"{self.name} is VAT-registered and recovers the VAT it pays in full."


class Plan(VersionedModel):
    """An inference deployment plan for one client."""

    organisation = models.ForeignKey(
        "planner.Organisation", on_delete=models.CASCADE, related_name="plans"
    )
    client = models.ForeignKey(Client, on_delete=models.PROTECT, related_name="plans")
    name = models.CharField(max_length=200)
    currency = models.CharField(max_length=3, default="USD", validators=[currency_validator])
    target_go_live = models.DateField(null=True, blank=True, validators=date_in_range())
    notes = models.TextField(blank=True, max_length=NOTES_MAX_LENGTH)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-pk"]
        constraints = [date_constraint("target_go_live", name="plan_target_go_live_in_range")]

    def __str__(self) -> str:
        return f"{self.name} ({self.client})"

    def clean(self) -> None:
        if (
            self.client_id
            and self.organisation_id
            and (self.client.organisation_id != self.organisation_id)
        ):
            raise ValidationError({"client": "The client belongs to another organisation."})


class WorkloadKind(models.TextChoices):
    CHAT = "chat", "Chat assistant"
    RAG = "rag", "Retrieval-augmented generation"
    CODE = "code", "Code completion"
    BATCH = "batch", "Batch / offline"


class Serving(models.TextChoices):
    AGGREGATED = "aggregated", "Aggregated"
    DISAGGREGATED = "disaggregated", "Disaggregated prefill/decode"


class Precision(models.TextChoices):
    BF16 = "bf16", "BF16"
    FP8 = "fp8", "FP8"
    INT8 = "int8", "INT8"
    INT4 = "int4", "INT4 (weights)"
    FP4 = "fp4", "FP4"


def default_daily_profile() -> list[float]:
    """A business-day shape: share of peak traffic in each UTC hour (0-1)."""
    return [
        0.15, 0.1, 0.1, 0.1, 0.15, 0.25, 0.45, 0.7, 0.9, 1.0, 1.0, 0.95,
        0.9, 0.95, 1.0, 0.95, 0.85, 0.7, 0.55, 0.45, 0.35, 0.3, 0.25, 0.2,
    ]  # fmt: skip


class Workload(VersionedModel):
    """One request type of a plan, and the configuration chosen for it.

    Latency targets are at ``percentile`` (95 or 99). Interactive work has TTFT and TPOT
    targets; batch work has an end-to-end time. Peak traffic is either peak concurrent
    requests or peak requests per second (then concurrency follows by Little's law).
    ``daily_profile`` holds 24 shares of peak (UTC hours); ``region_shares`` maps a
    region key (planner.engine.network.REGIONS) to its share of users in percent.
    """

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="workloads")
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=20, choices=WorkloadKind.choices, default=WorkloadKind.CHAT)
    model = models.ForeignKey(
        "catalog.ModelArchitecture", on_delete=models.PROTECT, related_name="workloads"
    )
    precision = models.CharField(max_length=8, choices=Precision.choices, default=Precision.FP8)
    # The serving stack is a sizing input (its memory rule and scheduler cap); a new workload
    # takes its organisation's default (planner.services.workload_defaults).
    serving_stack = models.CharField(
        max_length=16,
        choices=SERVING_STACK_CHOICES,
        default="vllm",
        help_text="The serving engine the workload runs on: its memory rule and batch limit.",
    )
    serving_stack_version = models.CharField(
        max_length=40,
        blank=True,
        validators=[stack_version_validator],
        help_text="Its version, named on estimates, reports and quotes (optional).",
    )
    kv_cache_dtype = models.CharField(
        max_length=8,
        choices=KV_CACHE_DTYPE_CHOICES,
        default="auto",
        help_text="KV-cache dtype: the model's (BF16) unless FP8 is chosen; FP8 holds twice "
        "the sequences.",
    )
    input_tokens_mean = models.PositiveIntegerField(validators=in_range(limits.INPUT_TOKENS))
    input_tokens_p95 = models.PositiveIntegerField(
        null=True, blank=True, validators=in_range(limits.INPUT_TOKENS)
    )
    output_tokens_mean = models.PositiveIntegerField(validators=in_range(limits.OUTPUT_TOKENS))
    output_tokens_p95 = models.PositiveIntegerField(
        null=True, blank=True, validators=in_range(limits.OUTPUT_TOKENS)
    )
    percentile = models.PositiveSmallIntegerField(choices=[(95, "p95"), (99, "p99")], default=95)
    ttft_ms = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=in_range(limits.TTFT_MS),
        help_text="Time to first token target, ms (interactive work).",
    )
    tpot_ms = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=in_range(limits.TPOT_MS),
        help_text="Time per output token target, ms (interactive work).",
    )
    e2e_s = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=in_range(limits.E2E_S),
        help_text="Whole-request time target, seconds (batch work).",
    )
    peak_concurrency = models.PositiveIntegerField(
        null=True, blank=True, validators=in_range(limits.PEAK_CONCURRENCY)
    )
    peak_requests_per_s = models.FloatField(
        null=True, blank=True, validators=in_range(limits.PEAK_REQUESTS_PER_S)
    )
    daily_profile = models.JSONField(default=default_daily_profile)
    region_shares = models.JSONField(default=dict, blank=True)
    headroom_pct = models.PositiveSmallIntegerField(
        default=20,
        validators=in_range(limits.HEADROOM_PCT),
        help_text="Capacity kept free at peak, %.",
    )
    n_plus_one = models.BooleanField(
        default=True, help_text="Add one replica per failure domain so a failure keeps the target."
    )
    cost_per_request_target = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        validators=in_range(limits.COST_PER_REQUEST),
        help_text="The most a request may cost at the latency target, in "
        "cost_per_request_target_currency (entered in the plan's currency; the checklist "
        "compares the chosen option's cost per request with it).",
    )
    cost_per_request_target_currency = models.CharField(
        max_length=3,
        blank=True,
        help_text="ISO 4217 code of the target: the plan's currency when it was entered.",
    )
    traffic = models.JSONField(
        default=dict,
        blank=True,
        help_text="The traffic helper's inputs (active users, sessions, think time...).",
    )
    # Cold start of a replica; planner conventions as defaults: one NVMe drive or a 25 GbE
    # link to network storage reads about 2 GB/s, and a serving engine's start, graph capture
    # and warm-up take about a minute. Both are the site's or cloud's own figures to enter.
    weights_read_gb_per_s = models.FloatField(
        default=2.0,
        validators=in_range(limits.WEIGHTS_READ_GB_PER_S),
        help_text="Read bandwidth from where the weights are kept to a new replica, GB/s.",
    )
    engine_start_s = models.PositiveIntegerField(
        default=60,
        validators=in_range(limits.ENGINE_START_S),
        help_text="Seconds the serving engine needs after the weights are read.",
    )
    # The configuration the consultant chose from the sizing candidates.
    chosen_accelerator = models.ForeignKey(
        "catalog.Accelerator", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    chosen_server = models.ForeignKey(
        "catalog.ServerPlatform", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    chosen_precision = models.CharField(max_length=8, choices=Precision.choices, blank=True)
    chosen_tensor_parallel = models.PositiveSmallIntegerField(null=True, blank=True)
    # Disaggregated prefill/decode: chosen_tensor_parallel is the decode replica's TP and
    # chosen_replicas/accelerators/servers count both pools.
    chosen_serving = models.CharField(
        max_length=16, choices=Serving.choices, default=Serving.AGGREGATED, blank=True
    )
    chosen_prefill_tensor_parallel = models.PositiveSmallIntegerField(null=True, blank=True)
    chosen_prefill_replicas = models.PositiveIntegerField(
        null=True, blank=True, help_text="Prefill replicas of a disaggregated choice."
    )
    chosen_replicas = models.PositiveIntegerField(null=True, blank=True)
    chosen_accelerators = models.PositiveIntegerField(null=True, blank=True)
    chosen_servers = models.PositiveIntegerField(null=True, blank=True)
    chosen_summary = models.JSONField(
        default=dict, blank=True, help_text="The candidate as the engine gave it when chosen."
    )
    chosen_at = models.DateTimeField(null=True, blank=True)
    # The replica plan above is re-planned from the inputs on every save (planner.sizing).
    chosen_inputs_hash = models.CharField(
        max_length=64, blank=True, help_text="Hash of the inputs the chosen replicas came from."
    )
    chosen_problem = models.TextField(
        blank=True, help_text="Why the chosen configuration no longer serves the inputs."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["plan", "pk"]
        constraints = [
            range_constraint(
                "headroom_pct", limits.HEADROOM_PCT, name="workload_headroom_pct_in_range"
            ),
            range_constraint(
                "peak_requests_per_s",
                limits.PEAK_REQUESTS_PER_S,
                name="workload_peak_requests_per_s_in_range",
                nullable=True,
            ),
            range_constraint(
                "peak_concurrency",
                limits.PEAK_CONCURRENCY,
                name="workload_peak_concurrency_in_range",
                nullable=True,
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.plan.name})"

    @property
    def is_interactive(self) -> bool:
        return self.kind != WorkloadKind.BATCH

    @property
    def has_choice(self) -> bool:
        return self.chosen_accelerator_id is not None

    @classmethod
    def new_in(cls, plan: Plan) -> Workload:
        """A new (unsaved) workload of ``plan``, sized for its organisation's default serving
        stack, version and KV-cache dtype until the consultant says otherwise."""
        organisation = plan.organisation
        return cls(
            plan=plan,
            serving_stack=organisation.default_serving_stack,
            serving_stack_version=organisation.default_serving_stack_version,
            kv_cache_dtype=organisation.default_kv_cache_dtype,
        )

    @property
    def choice_serves(self) -> bool:
        """A choice whose re-planned replicas still meet the current inputs."""
        return self.has_choice and not self.chosen_problem

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.peak_concurrency is None and self.peak_requests_per_s is None:
            errors["peak_concurrency"] = (
                "Give peak concurrent requests or peak requests per second."
            )
        if self.is_interactive and not (self.ttft_ms and self.tpot_ms):
            errors["ttft_ms"] = "Interactive work needs both a TTFT and a TPOT target."
        if not self.is_interactive and not self.e2e_s and not (self.ttft_ms and self.tpot_ms):
            errors["e2e_s"] = "Batch work needs a whole-request time target."
        if (
            self.input_tokens_p95
            and self.input_tokens_mean
            and (self.input_tokens_p95 < self.input_tokens_mean)
        ):
            errors["input_tokens_p95"] = "The p95 length cannot be below the mean."
        if (
            self.output_tokens_p95
            and self.output_tokens_mean
            and (self.output_tokens_p95 < self.output_tokens_mean)
        ):
            errors["output_tokens_p95"] = "The p95 length cannot be below the mean."
        profile = self.daily_profile
        if not (
            isinstance(profile, list)
            and len(profile) == 24
            and all(isinstance(v, int | float) and 0 <= v <= 1 for v in profile)
        ):
            errors["daily_profile"] = "Give 24 hourly shares of peak, each between 0 and 1."
        elif max(profile) == 0:
            errors["daily_profile"] = "At least one hour must carry traffic."
        shares = self.region_shares
        if not isinstance(shares, dict) or not all(
            isinstance(v, int | float) and v >= 0 for v in shares.values()
        ):
            errors["region_shares"] = "Region shares are percentages per region."
        elif shares and abs(sum(shares.values()) - 100) > 0.5:
            errors["region_shares"] = (
                f"Region shares add up to {sum(shares.values()):g} %, not 100 %."
            )
        if errors:
            raise ValidationError(errors)
