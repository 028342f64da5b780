"""Sites, placement decisions and TCO runs of a plan.

A :class:`Site` is a place the plan's servers could live (own data centre, colocation cage
or cloud region) with the electrical and cooling figures the facility checks need. Defaults
are the engine's constants (``planner.engine.facility`` / ``planner.engine.tco``), shown with
their source in the form. Their prices are ``Decimal`` in USD, like the catalog's and the
engine's (the forms say so); a TCO run's results are in the plan's currency, named
``…_amount`` with ``currency`` beside them (:mod:`planner.facility.tco_results`).
"""

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from planner.engine import facility as fe
from planner.engine import limits
from planner.engine import tco as te
from planner.engine.network import REGIONS
from planner.engine.placement import OPTION_KINDS
from planner.facility.tco_results import upgrade_tco_results
from planner.input_rules import NOTES_MAX_LENGTH
from planner.models.jobs import Job, JobStatus
from planner.validation import date_constraint, date_in_range, in_range, range_constraint
from planner.versioning import VersionedModel

country_validator = RegexValidator(r"^[A-Z]{2}$", "Use a two-letter ISO 3166 code, e.g. NL.")


def percent_field(fraction: float | None, limit: limits.Limit | None = None) -> models.DecimalField:
    """A 0-100 % field (or within ``limit``, its reason shown with a refusal) defaulting to
    ``fraction`` (an engine constant); blank when None."""
    validators = in_range(limit) if limit else [MinValueValidator(0), MaxValueValidator(100)]
    if fraction is None:
        return models.DecimalField(
            max_digits=5, decimal_places=2, null=True, blank=True, validators=validators
        )
    return models.DecimalField(
        max_digits=5, decimal_places=2, default=_pct(fraction), validators=validators
    )


def _pct(value: float) -> Decimal:
    return Decimal(str(round(value * 100, 4)))


class SiteKind(models.TextChoices):
    OWN_DC = "own_dc", "Own data centre"
    COLOCATION = "colocation", "Colocation"
    CLOUD_REGION = "cloud_region", "Cloud region"


class CoolingMethod(models.TextChoices):
    AIR = "air", "Air"
    REAR_DOOR = "rear_door", "Rear-door heat exchanger"
    DIRECT_TO_CHIP = "direct_to_chip", "Direct-to-chip liquid"
    IMMERSION = "immersion", "Immersion"


REGION_CHOICES = [("", "—")] + [(r.key, f"{r.key} ({r.city})") for r in REGIONS.values()]
ASHRAE_CHOICES = [
    (c.name, f"{c.name} ({c.allowable_min_c:g}–{c.allowable_max_c:g} °C)")
    for c in fe.ASHRAE_CLASSES.values()
]


class Site(VersionedModel):
    """A data centre, colocation cage or cloud region the plan may use."""

    plan = models.ForeignKey("planner.Plan", on_delete=models.CASCADE, related_name="sites")
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=20, choices=SiteKind.choices, default=SiteKind.COLOCATION)
    # Location: a region key stands for its city; explicit coordinates win over it.
    region_key = models.CharField(
        max_length=20, choices=REGION_CHOICES, blank=True, help_text="Used for network delay."
    )
    latitude = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(-90), MaxValueValidator(90)]
    )
    longitude = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(-180), MaxValueValidator(180)]
    )
    country = models.CharField(
        max_length=2,
        blank=True,
        validators=[country_validator],
        help_text="ISO 3166 two-letter code; residency rules are checked against it.",
    )
    # Space and power.
    racks_available = models.PositiveIntegerField(default=4, validators=in_range(limits.RACKS))
    usable_ru_per_rack = models.PositiveSmallIntegerField(
        default=42, validators=[MinValueValidator(1), MaxValueValidator(60)]
    )
    site_it_capacity_kw = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        validators=in_range(limits.SITE_KW),
        help_text="IT power available to the plan today, before planned upgrades.",
    )
    feeds_per_rack = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1), MaxValueValidator(8)]
    )
    voltage_v = models.DecimalField(
        max_digits=7,
        decimal_places=1,
        default=Decimal("415"),
        validators=in_range(limits.VOLTAGE_V),
    )
    phase = models.PositiveSmallIntegerField(
        choices=[(1, "Single phase"), (3, "Three phase")], default=3
    )
    amperage_a = models.DecimalField(
        max_digits=7,
        decimal_places=1,
        default=Decimal("32"),
        validators=in_range(limits.AMPERAGE_A),
    )
    breaker_derating_pct = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=_pct(fe.DEFAULT_BREAKER_DERATING),
        validators=[MinValueValidator(Decimal("1")), MaxValueValidator(100)],
    )
    power_factor = models.DecimalField(
        max_digits=4,
        decimal_places=2,
        default=Decimal(str(fe.DEFAULT_POWER_FACTOR)),
        validators=[MinValueValidator(Decimal("0.5")), MaxValueValidator(1)],
    )
    # Cooling.
    cooling_method = models.CharField(
        max_length=20, choices=CoolingMethod.choices, default=CoolingMethod.AIR
    )
    cooling_capacity_per_rack_kw = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        validators=in_range(limits.COOLING_PER_RACK_KW),
    )
    cooling_capacity_site_kw = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        validators=in_range(limits.SITE_KW),
    )
    ashrae_class = models.CharField(max_length=2, choices=ASHRAE_CHOICES, default="A2")
    pue = models.DecimalField(
        max_digits=4,
        decimal_places=2,
        default=Decimal(str(fe.DEFAULT_PUE)),
        validators=[MinValueValidator(1), MaxValueValidator(4)],
    )
    delta_t_f = models.DecimalField(
        max_digits=5,
        decimal_places=1,
        default=Decimal(str(fe.DEFAULT_DELTA_T_F)),
        validators=in_range(limits.DELTA_T_F),
    )
    # Costs (USD).
    power_usd_per_kwh = models.DecimalField(
        max_digits=8,
        decimal_places=4,
        default=Decimal(str(fe.DEFAULT_POWER_USD_PER_KWH)),
        validators=in_range(limits.POWER_USD_PER_KWH),
    )
    facility_usd_per_kw_month = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        default=Decimal(str(te.DEFAULT_COLOCATION_USD_PER_KW_MONTH)),
        validators=[MinValueValidator(0)],
        help_text="Colocation rent, or the owned hall's allocated cost, per IT kW and month.",
    )
    staff_usd_per_month = models.DecimalField(
        max_digits=12, decimal_places=2, default=Decimal("0"), validators=[MinValueValidator(0)]
    )
    power_ready_date = models.DateField(
        null=True,
        blank=True,
        validators=date_in_range(),
        help_text="When the base capacity is energised for the plan.",
    )
    # Rack make-up.
    servers_per_rack = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=in_range(limits.SERVERS_PER_RACK),
        help_text="Empty packs the densest that power, cooling and RU allow.",
    )
    switches_per_rack = models.PositiveSmallIntegerField(
        default=1, validators=in_range(limits.DEVICES_PER_RACK)
    )
    switch_power_kw = models.DecimalField(
        max_digits=6,
        decimal_places=2,
        default=Decimal("0"),
        validators=in_range(limits.SWITCH_POWER_KW),
    )
    pdus_per_rack = models.PositiveSmallIntegerField(
        default=2, validators=in_range(limits.DEVICES_PER_RACK)
    )
    notes = models.TextField(blank=True, max_length=NOTES_MAX_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["plan", "name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["plan", "name"], name="unique_site_name_per_plan"),
            range_constraint(
                "servers_per_rack",
                limits.SERVERS_PER_RACK,
                name="site_servers_per_rack_in_range",
                nullable=True,
            ),
            range_constraint(
                "cooling_capacity_per_rack_kw",
                limits.COOLING_PER_RACK_KW,
                name="site_cooling_per_rack_in_range",
                nullable=True,
            ),
            date_constraint("power_ready_date", name="site_power_ready_date_in_range"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors = {}
        if (self.latitude is None) != (self.longitude is None):
            errors["longitude"] = "Give both latitude and longitude, or neither."
        if self.kind == SiteKind.CLOUD_REGION and not self.region_key and self.latitude is None:
            errors["region_key"] = "A cloud region needs a region key or coordinates."
        if errors:
            raise ValidationError(errors)


class PowerUpgrade(models.Model):
    """A dated increase of a site's IT power ("+400 kW on 2027-03-01")."""

    site = models.ForeignKey(Site, on_delete=models.CASCADE, related_name="upgrades")
    ready_date = models.DateField(validators=date_in_range())
    added_kw = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        validators=[MinValueValidator(Decimal("0.01")), *in_range(limits.SITE_KW)[1:]],
    )
    note = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["site", "ready_date", "pk"]
        constraints = [
            date_constraint("ready_date", name="power_upgrade_ready_date_in_range", nullable=False)
        ]

    def __str__(self) -> str:
        return f"+{self.added_kw:g} kW on {self.ready_date.isoformat()}"


class ResidencyRule(models.Model):
    """Where one workload's data may be processed: countries and/or regions (EU, EEA)."""

    workload = models.OneToOneField(
        "planner.Workload", on_delete=models.CASCADE, related_name="residency"
    )
    allowed = models.CharField(
        max_length=200,
        blank=True,
        help_text="Comma-separated ISO countries or regions, e.g. 'EU, CH'. Empty: anywhere.",
    )

    def __str__(self) -> str:
        return self.allowed or "anywhere"

    @property
    def tokens(self) -> list[str]:
        return [t.strip().upper() for t in self.allowed.split(",") if t.strip()]


class PlacementDecision(VersionedModel):
    """The consultant's placement settings for a plan and the option they chose, with why."""

    plan = models.OneToOneField(
        "planner.Plan", on_delete=models.CASCADE, related_name="placement_decision"
    )
    network_share_pct = models.PositiveSmallIntegerField(
        default=25,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="Share of the tightest TTFT target the network round trip may take.",
    )
    control_requirement = models.PositiveSmallIntegerField(
        default=3, validators=[MaxValueValidator(5)], help_text="0 (none) to 5 (full control)."
    )
    chosen_kind = models.CharField(
        max_length=20, choices=[(k, k) for k in OPTION_KINDS], blank=True
    )
    chosen_key = models.CharField(max_length=60, blank=True)
    chosen_label = models.CharField(max_length=200, blank=True)
    reason = models.TextField(blank=True)
    scores = models.JSONField(
        default=dict, blank=True, help_text="The comparison as it stood when the choice was made."
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.chosen_label or "undecided"

    def clean(self) -> None:
        """The recorded comparison is an object (what ``placement_choice_save`` stores)."""
        if not isinstance(self.scores, dict):
            raise ValidationError({"scores": "The recorded comparison must be an object."})


class TcoSettings(VersionedModel):
    """Capex and cloud inputs of the TCO that sizing cannot tell; every one editable.

    Blank cloud figures take the catalog (cheapest on-demand offering of the chosen
    accelerator, and its 1-/3-year offerings) or, failing that, the engine defaults.
    """

    plan = models.OneToOneField(
        "planner.Plan", on_delete=models.CASCADE, related_name="tco_settings"
    )
    horizon_months = models.PositiveSmallIntegerField(
        default=te.DEFAULT_HORIZON_MONTHS,
        validators=[MinValueValidator(12), MaxValueValidator(120)],
    )
    server_price_usd = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=(
            "Price of one server. Blank: the plan's supplier offer, else the catalog's dated "
            "list price of the platform."
        ),
    )
    network_usd = models.DecimalField(
        max_digits=14, decimal_places=2, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    storage_usd = models.DecimalField(
        max_digits=14, decimal_places=2, default=Decimal("0"), validators=[MinValueValidator(0)]
    )
    install_usd = models.DecimalField(
        max_digits=14, decimal_places=2, default=Decimal("0"), validators=[MinValueValidator(0)]
    )
    shipping_and_duties_usd = models.DecimalField(
        max_digits=14, decimal_places=2, default=Decimal("0"), validators=[MinValueValidator(0)]
    )
    # Blank: the BOM's support line, else the engine default (servers only).
    maintenance_pct_per_year = percent_field(None)
    spares_pct = percent_field(te.DEFAULT_SPARES_FRACTION)
    residual_pct = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=_pct(te.DEFAULT_RESIDUAL_FRACTION),
        validators=[MinValueValidator(0), MaxValueValidator(Decimal("99"))],
    )
    lifetime_months = models.PositiveSmallIntegerField(
        default=te.DEFAULT_LIFETIME_MONTHS,
        validators=[MinValueValidator(12), MaxValueValidator(120)],
    )
    idle_power_pct = percent_field(te.DEFAULT_IDLE_POWER_FRACTION)
    cost_of_capital_pct = percent_field(te.DEFAULT_COST_OF_CAPITAL)
    on_demand_usd_per_gpu_h = models.DecimalField(
        max_digits=10, decimal_places=4, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    commit_1yr_discount_pct = percent_field(None, limits.CLOUD_DISCOUNT_PCT)
    commit_3yr_discount_pct = percent_field(None, limits.CLOUD_DISCOUNT_PCT)
    spot_discount_pct = percent_field(te.DEFAULT_SPOT_DISCOUNT, limits.CLOUD_DISCOUNT_PCT)
    spot_share_pct = percent_field(te.DEFAULT_SPOT_SHARE)
    annual_cloud_price_decline_pct = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=_pct(te.DEFAULT_ANNUAL_CLOUD_PRICE_DECLINE),
        validators=[MinValueValidator(0), MaxValueValidator(90)],
    )
    growth_pct_per_month = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=Decimal("0"),
        validators=[MinValueValidator(-50), MaxValueValidator(50)],
    )
    cloud_providers = models.JSONField(
        default=list,
        blank=True,
        help_text="Cloud providers the client would use; empty compares every provider "
        "listing the accelerator.",
    )
    cloud_keeps_spares = models.BooleanField(
        default=False,
        help_text="Rent the owned fleet's N+1 spares and headroom in the cloud options too.",
    )

    def __str__(self) -> str:
        return f"TCO settings of plan {self.plan_id}"

    def clean(self) -> None:
        """Providers are a short list of names (the form offers the catalog's)."""
        providers = self.cloud_providers
        if (
            not isinstance(providers, list)
            or len(providers) > 50
            or not all(isinstance(p, str) and 0 < len(p) <= 60 for p in providers)
        ):
            raise ValidationError(
                {"cloud_providers": 'Give a list of cloud provider names, e.g. ["aws"].'}
            )


TcoStatus = JobStatus  # the status of every background job


class TcoResultsField(models.JSONField):
    """A run's results, read in the current shape whatever shape they were stored in.

    Runs stored before amounts were named ``…_amount`` carry ``…_usd`` keys holding the plan's
    currency; :func:`~planner.facility.tco_results.upgrade_tco_results` renames them as the
    row is read (the stored JSON is left as it is)."""

    def from_db_value(self, value, expression, connection):
        return upgrade_tco_results(super().from_db_value(value, expression, connection))


class TcoRun(Job):
    """One TCO computation of a plan, stored against the SHA-256 hash of its inputs.

    ``inputs`` is the canonical JSON of the engine inputs (what the task computes from, in
    USD); ``results`` holds the options' cash flows, the tornado and the Monte Carlo bands
    with money as decimal strings (cents) in ``results["currency"]`` (the plan's), under
    ``…_amount`` keys, and ``basis`` says where each input came from. One
    run per plan and input hash (a constraint, so two simultaneous clicks make one run).
    """

    job_task = "planner.facility.tasks.tco_run_task"

    plan = models.ForeignKey("planner.Plan", on_delete=models.CASCADE, related_name="tco_runs")
    input_hash = models.CharField(max_length=64, db_index=True)
    inputs = models.JSONField()
    basis = models.JSONField(default=list, blank=True)
    results = TcoResultsField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-requested_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["plan", "input_hash"], name="unique_tco_run_per_inputs")
        ]

    def __str__(self) -> str:
        return f"TCO run {self.pk} of plan {self.plan_id} ({self.status})"


class WorkloadSiteSplit(VersionedModel):
    """The consultant's split of one workload's replicas over the plan's sites.

    ``shares`` maps a site id (as a string) to its share of the workload's replicas in
    percent; the shares sum to 100. Without a split the replicas follow the users' regions
    (each region to the nearest site within the round-trip budget, ``engine.pooling``).
    """

    workload = models.OneToOneField(
        "planner.Workload", on_delete=models.CASCADE, related_name="site_split"
    )
    shares = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return ", ".join(f"site {k}: {v} %" for k, v in self.shares.items()) or "by users"

    def clean(self) -> None:
        shares = self.shares or {}
        if not isinstance(shares, dict) or not all(
            isinstance(v, int | float) and 0 <= v <= 100 for v in shares.values()
        ):
            raise ValidationError({"shares": "Each site's share is a percentage, 0 to 100."})
        if shares and abs(sum(shares.values()) - 100) > 1e-6:
            raise ValidationError(
                {"shares": f"The shares add up to {sum(shares.values()):g} %, not 100 %."}
            )
