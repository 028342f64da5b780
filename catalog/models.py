"""Catalog models: what a plan is built from.

Units are in field names. Every figure that can go stale carries ``source`` and ``as_of``.
Catalog rows are shared reference data maintained by staff, not tenant data.
"""

from django.contrib.contenttypes.fields import GenericForeignKey, GenericRelation
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models

from planner.models.jobs import Job, JobStatus
from planner.validation import date_in_range

# Slugs of the reference data keep version dots ("llama-3.1-8b"), which SlugField refuses.
catalog_slug_validator = RegexValidator(
    r"^[a-z0-9][a-z0-9._-]*$",
    "Use lower-case letters, digits, dots, hyphens and underscores only.",
)


def catalog_slug_field(max_length: int) -> models.CharField:
    return models.CharField(max_length=max_length, unique=True, validators=[catalog_slug_validator])


class Sourced(models.Model):
    """Where a row's figures come from and how current they are."""

    notes = models.TextField(blank=True)
    source = models.TextField(help_text="Where the figures come from (document, page, commit).")
    as_of = models.DateField(
        null=True,
        blank=True,
        validators=date_in_range(),
        help_text="Date the figures were read or published.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class PricePoint(models.Model):
    """One observed price of a catalog row, kept when the price changes."""

    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    object_id = models.PositiveBigIntegerField()
    item = GenericForeignKey("content_type", "object_id")
    field = models.CharField(max_length=50, help_text="Which price field, e.g. usd_per_hour.")
    value_usd = models.DecimalField(max_digits=16, decimal_places=8)
    as_of = models.DateField(null=True, blank=True)
    source = models.TextField(blank=True)
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-as_of", "-recorded_at"]
        indexes = [models.Index(fields=["content_type", "object_id", "field"])]

    def __str__(self) -> str:
        return f"{self.field} = {self.value_usd} USD as of {self.as_of or 'unknown date'}"


class Accelerator(Sourced):
    """One accelerator chip or card; figures per chip (see data README)."""

    slug = catalog_slug_field(60)
    vendor = models.CharField(max_length=60)
    name = models.CharField(max_length=120)
    form_factor = models.CharField(max_length=120, blank=True)
    memory_gb = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0.1)])
    memory_type = models.CharField(max_length=40, blank=True)
    memory_bandwidth_tbps = models.FloatField(validators=[MinValueValidator(0.001)])
    bf16_dense_tflops = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0)])
    fp8_dense_tflops = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0)])
    int8_dense_tops = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0)])
    fp4_dense_tflops = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0)])
    tdp_w = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0)])
    scale_up_interconnect = models.CharField(max_length=120, blank=True)
    scale_up_bw_gbytes_per_s_per_direction = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0)]
    )
    pcie_gen = models.PositiveSmallIntegerField(null=True, blank=True)
    launch_year = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["vendor", "name"]

    def __str__(self) -> str:
        return f"{self.vendor} {self.name}"

    # TPUs, Trainium and Inferentia are offered only as cloud services: nothing to buy or rack.
    CLOUD_ONLY_VENDORS = ("Google", "AWS")

    @property
    def is_cloud_only(self) -> bool:
        return self.vendor in self.CLOUD_ONLY_VENDORS

    @property
    def precisions(self) -> list[str]:
        """Precisions with a published dense figure (what sizing can use)."""
        figures = {
            "bf16": self.bf16_dense_tflops,
            "fp8": self.fp8_dense_tflops,
            "int8": self.int8_dense_tops,
            "fp4": self.fp4_dense_tflops,
        }
        return [name for name, value in figures.items() if value]


class Cooling(models.TextChoices):
    AIR = "air", "Air"
    LIQUID = "liquid", "Liquid"


class FormFactor(models.TextChoices):
    """Pluggable form factors of network ports and the modules that plug into them; which
    module fits which cage is the BOM engine's rule (``planner.engine.bom.FORM_FACTOR_FITS``)."""

    OSFP = "OSFP", "OSFP"
    QSFP_DD = "QSFP-DD", "QSFP-DD"
    QSFP112 = "QSFP112", "QSFP112"
    QSFP56 = "QSFP56", "QSFP56"
    QSFP28 = "QSFP28", "QSFP28"


def form_factor_field(help_text: str) -> models.CharField:
    return models.CharField(
        max_length=10, choices=FormFactor.choices, blank=True, help_text=help_text
    )


class ServerPlatform(Sourced):
    """A server (or rack-scale system) that holds a number of accelerators."""

    slug = catalog_slug_field(120)
    vendor = models.CharField(max_length=80)
    name = models.CharField(max_length=160)
    accelerator = models.ForeignKey(
        Accelerator, null=True, blank=True, on_delete=models.PROTECT, related_name="servers"
    )
    accelerator_text = models.CharField(max_length=160, blank=True)
    accelerators_per_server = models.PositiveSmallIntegerField(null=True, blank=True)
    rack_units = models.PositiveSmallIntegerField(null=True, blank=True)
    max_power_kw = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0)])
    cooling = models.CharField(max_length=10, choices=Cooling.choices, blank=True)
    network_ports = models.CharField(max_length=200, blank=True)
    # A platform sold with its NICs (e.g. a DGX's ConnectX-7) gets none added to its BOM.
    nics_included_gbps = models.PositiveIntegerField(
        null=True, blank=True, help_text="Port speed of the NICs the platform ships with (Gb/s)."
    )
    nics_included_source = models.TextField(
        blank=True, help_text="Where the included NICs are stated (document, page)."
    )
    nics_included_form_factor = form_factor_field(
        "Cage of the included NICs' scale-out ports (a DGX H100/B200: OSFP)."
    )
    nics_included_ports_per_cage = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="NIC ports each such cage serves (a DGX: 2, one twin-port module per cage).",
    )
    front_end_form_factor = form_factor_field(
        "Cage of the platform's own front-end ports (a DGX H100/B200: QSFP112)."
    )
    list_price_usd = models.DecimalField(
        max_digits=14, decimal_places=2, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    # The price has its own date and source: it is read from other documents than the specs.
    list_price_as_of = models.DateField(
        null=True, blank=True, validators=date_in_range(), help_text="Date the price was quoted."
    )
    list_price_source = models.TextField(
        blank=True, help_text="Where the price comes from (document, page, commit)."
    )
    price_history = GenericRelation(PricePoint)

    class Meta:
        ordering = ["vendor", "name"]

    def __str__(self) -> str:
        return f"{self.vendor} {self.name}"


class PartCategory(models.TextChoices):
    NIC = "nic", "NIC"
    SWITCH = "switch", "Switch"
    OPTIC = "optic", "Optic / transceiver"
    CABLE = "cable", "Cable"
    STORAGE = "storage", "Storage"
    RACK = "rack", "Rack"
    PDU = "pdu", "PDU"


class Part(Sourced):
    """Everything else a build needs: network, storage, racks and power distribution."""

    slug = catalog_slug_field(120)
    category = models.CharField(max_length=20, choices=PartCategory.choices)
    vendor = models.CharField(max_length=80, blank=True)
    name = models.CharField(max_length=160)
    hs_code = models.CharField(
        max_length=12, blank=True, help_text="Harmonized System code used for tariffs."
    )
    ports = models.PositiveSmallIntegerField(null=True, blank=True)
    port_speed_gbps = models.PositiveIntegerField(null=True, blank=True)
    form_factor = form_factor_field(
        "A NIC's or switch's port cage, or the module form factor of a transceiver."
    )
    rack_units = models.PositiveSmallIntegerField(null=True, blank=True)
    power_w = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0)])
    capacity_tb = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0)])
    rating_kw = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0)])
    unit_price_usd = models.DecimalField(
        max_digits=14, decimal_places=2, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    price_history = GenericRelation(PricePoint)

    class Meta:
        ordering = ["category", "name"]

    def __str__(self) -> str:
        return self.name


class ModelArchitecture(Sourced):
    """What sizing needs from a model's config.json and model card."""

    slug = catalog_slug_field(80)
    name = models.CharField(max_length=120)
    params_total_b = models.FloatField(validators=[MinValueValidator(0.001)])
    params_active_b = models.FloatField(validators=[MinValueValidator(0.001)])
    num_hidden_layers = models.PositiveIntegerField()
    hidden_size = models.PositiveIntegerField()
    intermediate_size = models.PositiveIntegerField(null=True, blank=True)
    moe_intermediate_size = models.PositiveIntegerField(null=True, blank=True)
    num_attention_heads = models.PositiveIntegerField()
    num_key_value_heads = models.PositiveIntegerField()
    head_dim = models.PositiveIntegerField()
    vocab_size = models.PositiveIntegerField()
    max_position_embeddings = models.PositiveIntegerField()
    num_experts = models.PositiveIntegerField(null=True, blank=True)
    num_shared_experts = models.PositiveIntegerField(null=True, blank=True)
    experts_per_token = models.PositiveIntegerField(null=True, blank=True)
    # Leading layers with a dense FFN before the MoE layers start (HF config
    # first_k_dense_replace; DeepSeek-V3/R1: 3 of 61).
    first_k_dense_replace = models.PositiveIntegerField(null=True, blank=True)
    attention_kind = models.CharField(
        max_length=120, help_text="MHA, GQA, MLA, or a sliding-window variant as in the config."
    )
    sliding_window = models.PositiveIntegerField(null=True, blank=True)
    kv_lora_rank = models.PositiveIntegerField(null=True, blank=True)
    q_lora_rank = models.PositiveIntegerField(null=True, blank=True)
    qk_rope_head_dim = models.PositiveIntegerField(null=True, blank=True)
    v_head_dim = models.PositiveIntegerField(null=True, blank=True)
    gated_mlp = models.BooleanField(default=True)
    tie_word_embeddings = models.BooleanField(default=False)

    class Meta:
        ordering = ["name"]
        verbose_name = "model architecture"

    def __str__(self) -> str:
        return self.name

    @property
    def is_moe(self) -> bool:
        return bool(self.num_experts)

    def clean(self) -> None:
        errors = {}
        if (
            self.params_active_b
            and self.params_total_b
            and (self.params_active_b > self.params_total_b)
        ):
            errors["params_active_b"] = "Active parameters cannot exceed total parameters."
        if (
            self.num_key_value_heads
            and self.num_attention_heads
            and (self.num_key_value_heads > self.num_attention_heads)
        ):
            errors["num_key_value_heads"] = "KV heads cannot exceed attention heads."
        if (
            self.experts_per_token
            and self.num_experts
            and (self.experts_per_token > self.num_experts)
        ):
            errors["experts_per_token"] = "Experts per token cannot exceed the number of experts."
        if self.attention_kind.startswith("MLA") and not self.kv_lora_rank:
            errors["kv_lora_rank"] = "MLA models need their latent size (kv_lora_rank)."
        if errors:
            raise ValidationError(errors)


class PriceModel(models.TextChoices):
    ON_DEMAND = "on_demand", "On demand"
    ONE_YEAR = "1yr", "1-year commitment"
    THREE_YEAR = "3yr", "3-year commitment"
    SPOT = "spot", "Spot"
    CAPACITY_BLOCK = "capacity_block", "Capacity block"


class CloudOffering(Sourced):
    """A priced cloud instance: USD per hour for the whole instance."""

    provider = models.CharField(max_length=60)
    instance_type = models.CharField(max_length=120)
    accelerator = models.ForeignKey(
        Accelerator, null=True, blank=True, on_delete=models.PROTECT, related_name="cloud_offerings"
    )
    accelerator_text = models.CharField(max_length=160, blank=True)
    accelerators = models.PositiveSmallIntegerField(validators=[MinValueValidator(1)])
    region = models.CharField(max_length=60, blank=True)
    price_model = models.CharField(max_length=20, choices=PriceModel.choices)
    usd_per_hour = models.DecimalField(
        max_digits=16, decimal_places=8, validators=[MinValueValidator(0)]
    )
    price_history = GenericRelation(PricePoint)

    class Meta:
        ordering = ["provider", "instance_type", "region", "price_model"]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "instance_type", "region", "price_model"],
                name="unique_cloud_offering",
            )
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.instance_type} ({self.region}, {self.get_price_model_display()})"

    @property
    def usd_per_accelerator_hour(self):
        return self.usd_per_hour / self.accelerators


ImportStatus = JobStatus  # the status of every background job


class CatalogImport(Job):
    """An uploaded CSV file and what importing it did. Runs as a Celery task (a job).

    Owned by the organisation of the staff member who uploaded it, so its status page is
    visible to that organisation only. ``message`` and ``errors`` are the import's outcome
    (a file with bad rows is failed with no ``error``: the job worked, the file did not).
    """

    job_task = "catalog.tasks.catalog_import_run"
    status_labels = {JobStatus.SUCCEEDED: "Imported", JobStatus.FAILED: "Rejected"}

    organisation = models.ForeignKey(
        "planner.Organisation", on_delete=models.CASCADE, related_name="catalog_imports"
    )
    created_by = models.ForeignKey(
        "auth.User", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=20)
    filename = models.CharField(max_length=255)
    csv_text = models.TextField()
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.filename} ({self.kind}, {self.status})"
