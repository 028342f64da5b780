"""Sourcing models: the bill of materials, suppliers and offers, tariffs, FX rates, purchase
orders, the plan's sourcing history and the flags the daily check raises.

Tenant data (organisation-owned): suppliers and their offers; everything hanging off a plan
(BOM lines, settings, purchase orders, history, flags). Reference data maintained by staff:
tariff rules with their extra measures, customs valuation rules and FX rates.

Models hold data only: the arithmetic is in ``planner.engine`` (bom, landed_cost,
critical_path), called through ``sourcing.services``.
"""

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q

from planner.engine import limits
from planner.engine import quote as quote_engine
from planner.engine.landed_cost import MINOR_UNITS
from planner.input_rules import NOTES_MAX_LENGTH
from planner.money import format_money
from planner.validation import date_constraint, date_in_range, in_range, range_constraint
from planner.versioning import VersionedModel

country_validator = RegexValidator(
    r"^[A-Z]{2}$", "Use an ISO 3166 two-letter country code, e.g. NL."
)


def validate_currency(value: str) -> None:
    """Accept only the ISO 4217 codes the landed-cost engine knows."""
    if value not in MINOR_UNITS:
        raise ValidationError(
            f"Unknown currency {value!r}: use an ISO 4217 code such as EUR, USD or GBP."
        )


def currency_field(**kwargs) -> models.CharField:
    return models.CharField(max_length=3, validators=[validate_currency], **kwargs)


def money_field(*, limit: limits.Limit | None = None, **kwargs) -> models.DecimalField:
    """Exact money (no float), never negative, within ``limit`` when given (its reason shown
    with a refusal); the currency sits in a sibling field."""
    validators = in_range(limit) if limit else [MinValueValidator(0)]
    return models.DecimalField(max_digits=18, decimal_places=4, validators=validators, **kwargs)


class Incoterm(models.TextChoices):
    """Incoterms 2020 (ICC wall chart, reference C6)."""

    EXW = "EXW", "EXW — ex works"
    FCA = "FCA", "FCA — free carrier"
    CPT = "CPT", "CPT — carriage paid to"
    CIP = "CIP", "CIP — carriage and insurance paid to"
    DAP = "DAP", "DAP — delivered at place"
    DPU = "DPU", "DPU — delivered at place unloaded"
    DDP = "DDP", "DDP — delivered duty paid"
    FAS = "FAS", "FAS — free alongside ship"
    FOB = "FOB", "FOB — free on board"
    CFR = "CFR", "CFR — cost and freight"
    CIF = "CIF", "CIF — cost, insurance and freight"


class ShippingMode(models.TextChoices):
    AIR = "air", "Air"
    SEA = "sea", "Sea"


class OfferStrategy(models.TextChoices):
    CHEAPEST = "cheapest", "Cheapest valid offer (landed)"
    FASTEST = "fastest", "Fastest valid offer"


class SparesMode(models.TextChoices):
    PERCENT = "percent", "A percentage of each line"
    N_PLUS_1 = "n_plus_1", "N+1 (one spare per part)"
    NONE = "none", "No spares"


class Allocation(models.TextChoices):
    VALUE = "value", "By value"
    WEIGHT = "weight", "By weight"
    QUANTITY = "quantity", "By quantity"
    EQUAL = "equal", "Equally"


class Service(models.TextChoices):
    INSTALLATION = "installation", "Installation"
    BURN_IN = "burn-in", "Burn-in test"
    SUPPORT = "support", "Support contract"


# ---------------------------------------------------------------------------------------------
# Per-plan settings and the bill of materials
# ---------------------------------------------------------------------------------------------


class SourcingSettings(VersionedModel):
    """How a plan is sourced: where to, how to choose offers, spares, schedule assumptions."""

    plan = models.OneToOneField(
        "planner.Plan", on_delete=models.CASCADE, related_name="sourcing_settings"
    )
    destination_country = models.CharField(
        max_length=2,
        validators=[country_validator],
        help_text="Where the hardware is imported (the site's country), e.g. NL.",
    )
    order_date = models.DateField(
        null=True,
        blank=True,
        validators=date_in_range(),
        help_text="When the purchase orders go out; empty = today.",
    )
    offer_strategy = models.CharField(
        max_length=10, choices=OfferStrategy.choices, default=OfferStrategy.CHEAPEST
    )
    spares_mode = models.CharField(
        max_length=10, choices=SparesMode.choices, default=SparesMode.PERCENT
    )
    spares_pct = models.DecimalField(
        "spares %",
        max_digits=5,
        decimal_places=2,
        default=5,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
    )
    leaf_radix = models.PositiveSmallIntegerField(
        "switch ports",
        default=64,
        validators=in_range(limits.LEAF_RADIX),
        help_text="Ports per leaf/spine switch (an even number).",
    )
    servers_per_rack = models.PositiveSmallIntegerField(
        default=4,
        validators=in_range(limits.SERVERS_PER_RACK),
        help_text="Used when the sizing gives no rack count (SuperPOD racks hold 4 DGX, ref A2).",
    )
    storage_per_server = models.PositiveSmallIntegerField(
        "drives per server",
        default=2,
        validators=in_range(limits.DRIVES_PER_SERVER),
        help_text="Local NVMe drives for the model-weight cache.",
    )
    installation_days = models.PositiveSmallIntegerField(
        default=10, validators=in_range(limits.PROJECT_DAYS)
    )
    burn_in_days = models.PositiveSmallIntegerField(
        default=7, validators=in_range(limits.PROJECT_DAYS)
    )
    shipping_mode = models.CharField(
        max_length=3, choices=ShippingMode.choices, default=ShippingMode.AIR
    )
    brokerage_per_shipment = money_field(
        default=0, help_text="Customs broker and handling per shipment, in the plan currency."
    )
    allocation = models.CharField(
        "allocate shared charges",
        max_length=10,
        choices=Allocation.choices,
        default=Allocation.VALUE,
    )
    power_ready_on = models.DateField(
        "power ready on",
        null=True,
        blank=True,
        validators=date_in_range(),
        help_text="Overrides the facility's power-ready date when set.",
    )
    bom_generated_at = models.DateTimeField(null=True, blank=True)
    bom_inputs_hash = models.CharField(
        max_length=64, blank=True, help_text="Hash of the inputs the generated lines came from."
    )
    checked_at = models.DateTimeField(null=True, blank=True)
    checked_go_live = models.DateField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "sourcing settings"
        constraints = [
            range_constraint(
                "servers_per_rack",
                limits.SERVERS_PER_RACK,
                name="sourcing_servers_per_rack_in_range",
            ),
            date_constraint("order_date", name="sourcing_order_date_in_range"),
            date_constraint("power_ready_on", name="sourcing_power_ready_on_in_range"),
        ]

    def __str__(self) -> str:
        return f"Sourcing settings of {self.plan}"

    def clean(self) -> None:
        if self.leaf_radix and self.leaf_radix % 2:
            raise ValidationError({"leaf_radix": "Switch ports must be an even number."})


class LineOrigin(models.TextChoices):
    GENERATED = "generated", "Generated"
    MANUAL = "manual", "Added by hand"
    OVERRIDE = "override", "Quantity set by hand"


class BomLine(VersionedModel):
    """One row of a plan's bill of materials, linked to what offers are for.

    Generated lines keep what the generator said (``generated_quantity``, ``generated_reason``,
    ``drivers``) so that regenerating can say what changed; an override keeps the hand-set
    ``quantity`` (0 = removed by hand).
    """

    plan = models.ForeignKey("planner.Plan", on_delete=models.CASCADE, related_name="bom_lines")
    site = models.ForeignKey(
        "facility.Site",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="bom_lines",
        help_text="The site the units go to (landed into its country); empty = plan-wide.",
    )
    part_key = models.CharField(max_length=200)
    category = models.CharField(max_length=40)
    description = models.CharField(max_length=200)
    quantity = models.PositiveIntegerField(validators=in_range(limits.QUANTITY))
    reason = models.TextField(blank=True)
    origin = models.CharField(
        max_length=10, choices=LineOrigin.choices, default=LineOrigin.GENERATED
    )
    generated_quantity = models.PositiveIntegerField(
        null=True, blank=True, validators=in_range(limits.QUANTITY)
    )
    generated_reason = models.TextField(blank=True)
    drivers = models.JSONField(default=list, blank=True)
    part = models.ForeignKey(
        "catalog.Part", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    server = models.ForeignKey(
        "catalog.ServerPlatform", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    accelerator = models.ForeignKey(
        "catalog.Accelerator", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    service = models.CharField(max_length=20, choices=Service.choices, blank=True)
    hs_code = models.CharField(max_length=14, blank=True, help_text="HS code in the destination.")
    pinned_offer = models.ForeignKey(
        "sourcing.Offer", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["plan", "position", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["plan", "site", "part_key"],
                name="unique_bom_part_per_plan_site",
                nulls_distinct=False,
            ),
            range_constraint("quantity", limits.QUANTITY, name="bom_line_quantity_in_range"),
        ]

    def __str__(self) -> str:
        return f"{self.quantity} × {self.description}"

    @property
    def removed(self) -> bool:
        """A generated line the consultant set to zero."""
        return self.origin == LineOrigin.OVERRIDE and self.quantity == 0

    @property
    def item_label(self) -> str:
        """What offers for this line are for."""
        item = self.server or self.part or self.accelerator
        if item:
            return str(item)
        return self.get_service_display() if self.service else ""


# ---------------------------------------------------------------------------------------------
# Suppliers and offers (organisation data)
# ---------------------------------------------------------------------------------------------


class Supplier(VersionedModel):
    """A distributor or vendor an organisation buys from."""

    organisation = models.ForeignKey(
        "planner.Organisation", on_delete=models.CASCADE, related_name="suppliers"
    )
    name = models.CharField(max_length=200)
    country = models.CharField(max_length=2, validators=[country_validator])
    contact_name = models.CharField(max_length=200, blank=True)
    contact_email = models.EmailField(blank=True)
    phone = models.CharField(max_length=60, blank=True)
    website = models.URLField(blank=True)
    notes = models.TextField(blank=True, max_length=NOTES_MAX_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["organisation", "name"], name="unique_supplier_name_per_organisation"
            )
        ]

    def __str__(self) -> str:
        return self.name


class Offer(VersionedModel):
    """A supplier's dated quote for one catalog item (a part, a server, an accelerator or a
    service): price with breaks, minimum order, lead time, origin, Incoterm and validity."""

    supplier = models.ForeignKey(Supplier, on_delete=models.CASCADE, related_name="offers")
    part = models.ForeignKey(
        "catalog.Part", null=True, blank=True, on_delete=models.PROTECT, related_name="offers"
    )
    server = models.ForeignKey(
        "catalog.ServerPlatform",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="offers",
    )
    accelerator = models.ForeignKey(
        "catalog.Accelerator",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="offers",
    )
    service = models.CharField(max_length=20, choices=Service.choices, blank=True)
    term_years = models.PositiveSmallIntegerField(
        "term (years)",
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(10)],
        help_text="A support contract: the years its price buys, paid once. Empty = a yearly "
        "price, paid each year.",
    )
    supplier_sku = models.CharField("supplier SKU", max_length=120, blank=True)
    unit_price = money_field(help_text="Price per unit in the offer's currency.")
    currency = currency_field()
    minimum_order_qty = models.PositiveIntegerField(
        "minimum order",
        default=1,
        validators=[MinValueValidator(1), *in_range(limits.QUANTITY)[1:]],
    )
    lead_time_days = models.PositiveIntegerField(
        "lead time (days)",
        validators=in_range(limits.LEAD_TIME_DAYS),
        help_text="Days from order to ready at the Incoterm's place.",
    )
    quoted_on = models.DateField(
        validators=date_in_range(), help_text="Date the price and lead time were quoted."
    )
    valid_until = models.DateField(validators=date_in_range())
    origin_country = models.CharField(
        max_length=2,
        validators=[country_validator],
        help_text="Country of origin (where the goods were made), e.g. CN: drives duties by origin.",
    )
    ship_from_country = models.CharField(
        "ship-from country",
        max_length=2,
        blank=True,
        validators=[country_validator],
        help_text=(
            "Country the goods are dispatched from, e.g. NL for stock in Venlo: decides whether "
            "a customs border is crossed. Blank = the supplier's country."
        ),
    )
    incoterm = models.CharField(max_length=3, choices=Incoterm.choices, default=Incoterm.FCA)
    freight_per_unit = money_field(
        default=0, help_text="Estimated international freight per unit, offer currency."
    )
    unit_weight_kg = models.DecimalField(
        "unit weight (kg)",
        max_digits=10,
        decimal_places=3,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
    )
    notes = models.TextField(blank=True, max_length=NOTES_MAX_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["supplier__name", "pk"]
        constraints = [
            models.CheckConstraint(
                name="offer_for_exactly_one_item",
                condition=(
                    Q(part__isnull=False, server__isnull=True, accelerator__isnull=True, service="")
                    | Q(
                        part__isnull=True,
                        server__isnull=False,
                        accelerator__isnull=True,
                        service="",
                    )
                    | Q(
                        part__isnull=True,
                        server__isnull=True,
                        accelerator__isnull=False,
                        service="",
                    )
                    | (
                        Q(part__isnull=True, server__isnull=True, accelerator__isnull=True)
                        & ~Q(service="")
                    )
                ),
            ),
            models.CheckConstraint(
                name="offer_valid_after_quote", condition=Q(valid_until__gte=models.F("quoted_on"))
            ),
            date_constraint("quoted_on", name="offer_quoted_on_in_range", nullable=False),
            date_constraint("valid_until", name="offer_valid_until_in_range", nullable=False),
        ]

    def __str__(self) -> str:
        # The BOM's offer choices and the admin show this: money as every page writes it.
        return (
            f"{self.supplier}: {self.item_label} at {format_money(self.unit_price, self.currency)}"
        )

    @property
    def item_label(self) -> str:
        item = self.server or self.part or self.accelerator
        return str(item) if item else self.get_service_display()

    def clean(self) -> None:
        targets = [self.part_id, self.server_id, self.accelerator_id, self.service or None]
        if sum(t is not None for t in targets) != 1:
            raise ValidationError(
                "An offer is for exactly one part, server, accelerator or service."
            )
        if self.quoted_on and self.valid_until and self.valid_until < self.quoted_on:
            raise ValidationError({"valid_until": "An offer cannot expire before it was quoted."})
        if self.term_years and self.service != Service.SUPPORT:
            raise ValidationError({"term_years": "Only a support contract has a term."})

    @property
    def term_words(self) -> str:
        """What a support offer's price buys, as the quote says it (``""`` for goods)."""
        if self.service != Service.SUPPORT:
            return ""
        if self.term_years and self.term_years > 1:
            return f"{self.term_years} years, paid once"
        return "one year, renewed yearly"

    @property
    def term_months(self) -> int | None:
        """The months a support offer's price buys (12 for a yearly price); None otherwise."""
        if self.service != Service.SUPPORT:
            return None
        return 12 * (self.term_years or 1)


class OfferPriceBreak(models.Model):
    """From ``min_qty`` units upward the unit price is ``unit_price`` (offer currency)."""

    offer = models.ForeignKey(Offer, on_delete=models.CASCADE, related_name="price_breaks")
    min_qty = models.PositiveIntegerField(
        validators=[MinValueValidator(1), *in_range(limits.QUANTITY)[1:]]
    )
    unit_price = money_field()

    class Meta:
        ordering = ["offer", "min_qty"]
        constraints = [
            models.UniqueConstraint(fields=["offer", "min_qty"], name="unique_break_per_offer")
        ]

    def __str__(self) -> str:
        return f"from {self.min_qty}: {self.unit_price}"


# ---------------------------------------------------------------------------------------------
# Reference data: tariffs, customs valuation, FX
# ---------------------------------------------------------------------------------------------


class TariffRule(models.Model):
    """Duty and import VAT/GST for an HS-code prefix imported into one country, dated."""

    hs_prefix = models.CharField(
        "HS prefix", max_length=14, help_text="HS/HTS digits; the longest matching prefix wins."
    )
    destination = models.CharField(max_length=2, validators=[country_validator])
    duty_pct = models.DecimalField("duty %", max_digits=7, decimal_places=3)
    vat_pct = models.DecimalField("import VAT/GST %", max_digits=7, decimal_places=3)
    vat_recoverable = models.BooleanField("VAT recoverable", default=True)
    surcharge_on_duty_pct = models.DecimalField(
        "surcharge on duty %", max_digits=7, decimal_places=3, default=0
    )
    valid_from = models.DateField(validators=date_in_range())
    valid_to = models.DateField(null=True, blank=True, validators=date_in_range())
    description = models.CharField(max_length=200, blank=True)
    source = models.TextField()
    as_of = models.DateField(null=True, blank=True, validators=date_in_range())
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["destination", "hs_prefix", "valid_from"]
        constraints = [
            models.UniqueConstraint(
                fields=["hs_prefix", "destination", "valid_from"], name="unique_tariff_rule"
            )
        ]

    def __str__(self) -> str:
        return f"HS {self.hs_prefix} into {self.destination} from {self.valid_from}"


class TariffMeasure(models.Model):
    """An extra duty on a rule (e.g. Section 301 by origin), dated, with its stacking rule."""

    rule = models.ForeignKey(TariffRule, on_delete=models.CASCADE, related_name="measures")
    name = models.CharField(max_length=200)
    origin_countries = models.CharField(
        max_length=200, blank=True, help_text="Comma-separated ISO codes; empty = every origin."
    )
    pct = models.DecimalField("%", max_digits=7, decimal_places=3)
    start = models.DateField(validators=date_in_range())
    end = models.DateField(null=True, blank=True, validators=date_in_range())
    stacks = models.BooleanField(default=True)
    not_stacked_on = models.CharField(
        max_length=400, blank=True, help_text="Names of measures this one does not stack on (;)."
    )
    condition = models.CharField(
        max_length=300, blank=True, help_text="Applies only when confirmed (e.g. covered chips)."
    )
    coverage_confirmed = models.BooleanField(
        default=True,
        help_text=(
            "Untick when no source confirms the HS line is on this measure's list: the duty is "
            "then shown as unknown (confirm), never 0 %. Tick it once confirmed, with the source."
        ),
    )
    source = models.TextField(blank=True)

    class Meta:
        ordering = ["rule", "start", "name"]

    def __str__(self) -> str:
        return f"{self.name} {self.pct} %"


class CustomsBasis(models.TextChoices):
    CIF = "CIF", "CIF (goods + freight + insurance)"
    TRANSACTION_VALUE = "TRANSACTION_VALUE", "Transaction value (excl. international freight)"
    CIF_PLUS_LANDING = "CIF_PLUS_LANDING", "CIF + landing charge"


class CustomsValuation(models.Model):
    """How a destination values imports for duty and VAT (reference C5)."""

    destination = models.CharField(max_length=2, unique=True, validators=[country_validator])
    basis = models.CharField(max_length=20, choices=CustomsBasis.choices)
    landing_charge_pct = models.DecimalField(max_digits=6, decimal_places=3, default=0)
    vat_base_includes_inland_freight = models.BooleanField(default=False)
    source = models.TextField()

    class Meta:
        ordering = ["destination"]

    def __str__(self) -> str:
        return f"{self.destination}: {self.basis}"


class FxRate(models.Model):
    """``1 from_currency = rate to_currency`` as published on ``as_of``."""

    from_currency = currency_field()
    to_currency = currency_field()
    rate = models.DecimalField(max_digits=20, decimal_places=10, validators=[MinValueValidator(0)])
    as_of = models.DateField(validators=date_in_range())
    source = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-as_of", "from_currency", "to_currency"]
        constraints = [
            models.UniqueConstraint(
                fields=["from_currency", "to_currency", "as_of"], name="unique_fx_rate_per_day"
            ),
            models.CheckConstraint(name="fx_rate_positive", condition=Q(rate__gt=0)),
        ]

    def __str__(self) -> str:
        return f"1 {self.from_currency} = {self.rate} {self.to_currency} ({self.as_of})"

    def clean(self) -> None:
        if self.from_currency and self.from_currency == self.to_currency:
            raise ValidationError({"to_currency": "Give two different currencies."})
        if self.rate is not None and self.rate <= 0:
            raise ValidationError({"rate": "A rate must be above zero."})


# ---------------------------------------------------------------------------------------------
# Purchase orders
# ---------------------------------------------------------------------------------------------


class OrderStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    ORDERED = "ordered", "Ordered"
    SHIPPED = "shipped", "Shipped"
    IN_CUSTOMS = "in_customs", "In customs"
    DELIVERED = "delivered", "Delivered"
    INSTALLED = "installed", "Installed"


# (status, expected field, actual field), in order.
ORDER_STEPS = (
    (OrderStatus.ORDERED, "ordered_expected", "ordered_actual"),
    (OrderStatus.SHIPPED, "shipped_expected", "shipped_actual"),
    (OrderStatus.IN_CUSTOMS, "customs_expected", "customs_actual"),
    (OrderStatus.DELIVERED, "delivered_expected", "delivered_actual"),
    (OrderStatus.INSTALLED, "installed_expected", "installed_actual"),
)


class PurchaseOrder(VersionedModel):
    """An order to one supplier; it ships as one consignment (a shipment for landed cost)."""

    plan = models.ForeignKey(
        "planner.Plan", on_delete=models.CASCADE, related_name="purchase_orders"
    )
    supplier = models.ForeignKey(Supplier, on_delete=models.PROTECT, related_name="orders")
    reference = models.CharField(max_length=60)
    status = models.CharField(
        max_length=12, choices=OrderStatus.choices, default=OrderStatus.PLANNED
    )
    destination_country = models.CharField(max_length=2, validators=[country_validator])
    shipping_mode = models.CharField(
        max_length=3, choices=ShippingMode.choices, default=ShippingMode.AIR
    )
    logistics_owner = models.CharField(
        max_length=200,
        blank=True,
        help_text="Named owner for logistics, customs and tariffs (required across borders).",
    )
    charges_currency = currency_field(help_text="Currency of freight, insurance and brokerage.")
    freight = money_field(default=0, help_text="International freight for the whole order.")
    insurance = money_field(
        null=True, blank=True, help_text="Cargo insurance; empty = 0.3 % of 110 % of the value."
    )
    brokerage = money_field(default=0, help_text="Customs broker and handling fees.")
    inland_freight = money_field(default=0, help_text="Transport from the border to the site.")
    allocation = models.CharField(
        "allocate shared charges", max_length=10, choices=Allocation.choices, default="value"
    )
    ordered_expected = models.DateField(null=True, blank=True, validators=date_in_range())
    ordered_actual = models.DateField(null=True, blank=True, validators=date_in_range())
    shipped_expected = models.DateField(null=True, blank=True, validators=date_in_range())
    shipped_actual = models.DateField(null=True, blank=True, validators=date_in_range())
    customs_expected = models.DateField(null=True, blank=True, validators=date_in_range())
    customs_actual = models.DateField(null=True, blank=True, validators=date_in_range())
    delivered_expected = models.DateField(null=True, blank=True, validators=date_in_range())
    delivered_actual = models.DateField(null=True, blank=True, validators=date_in_range())
    installed_expected = models.DateField(null=True, blank=True, validators=date_in_range())
    installed_actual = models.DateField(null=True, blank=True, validators=date_in_range())
    notes = models.TextField(blank=True, max_length=NOTES_MAX_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["plan", "reference"]
        constraints = [
            models.UniqueConstraint(fields=["plan", "reference"], name="unique_po_per_plan"),
            *(
                date_constraint(field, name=f"po_{field}_in_range")
                for _, expected, actual in ORDER_STEPS
                for field in (expected, actual)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reference} ({self.supplier})"

    @property
    def is_open(self) -> bool:
        return self.status != OrderStatus.INSTALLED

    def steps(self) -> list[dict]:
        """Each step with its expected and actual date and days late (for the page)."""
        out = []
        for status, expected_field, actual_field in ORDER_STEPS:
            expected, actual = getattr(self, expected_field), getattr(self, actual_field)
            late = (actual - expected).days if expected and actual else None
            out.append(
                {
                    "status": status,
                    "label": status.label,
                    "expected": expected,
                    "actual": actual,
                    "late_days": late if late and late > 0 else None,
                }
            )
        return out


class PurchaseOrderLine(models.Model):
    """A BOM line ordered from the order's supplier at one of its offers."""

    order = models.ForeignKey(PurchaseOrder, on_delete=models.CASCADE, related_name="lines")
    bom_line = models.ForeignKey(
        BomLine, null=True, blank=True, on_delete=models.SET_NULL, related_name="order_lines"
    )
    offer = models.ForeignKey(Offer, on_delete=models.PROTECT, related_name="order_lines")
    description = models.CharField(max_length=200)
    quantity = models.PositiveIntegerField(
        validators=[MinValueValidator(1), *in_range(limits.QUANTITY)[1:]]
    )
    hs_code = models.CharField(max_length=14, blank=True)

    class Meta:
        ordering = ["order", "pk"]

    def __str__(self) -> str:
        return f"{self.quantity} × {self.description}"


# ---------------------------------------------------------------------------------------------
# History and flags
# ---------------------------------------------------------------------------------------------


class PlanEvent(models.Model):
    """One change to a plan's sourcing, kept for ever: the history is append-only."""

    plan = models.ForeignKey(
        "planner.Plan", on_delete=models.CASCADE, related_name="sourcing_events"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=40)
    message = models.TextField()
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.kind}: {self.message}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise ValidationError("Plan history is append-only: events cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValidationError("Plan history is append-only: events cannot be deleted.")


class FlagKind(models.TextChoices):
    SLIP = "slip", "Slip"
    OVERDUE = "overdue", "Overdue step"
    OFFER_EXPIRING = "offer_expiring", "Offer expiring"
    OFFER_EXPIRED = "offer_expired", "Offer expired"


class SourcingFlag(models.Model):
    """Something the daily check found (a slip, an overdue step, an expiring offer)."""

    plan = models.ForeignKey(
        "planner.Plan", on_delete=models.CASCADE, related_name="sourcing_flags"
    )
    kind = models.CharField(max_length=20, choices=FlagKind.choices)
    key = models.CharField(max_length=200, help_text="What the flag is about, for de-duplication.")
    message = models.TextField()
    first_seen = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField(auto_now=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["resolved_at", "kind", "-last_seen"]
        constraints = [
            models.UniqueConstraint(fields=["plan", "key"], name="unique_flag_per_plan_key")
        ]

    def __str__(self) -> str:
        return self.message


# ---------------------------------------------------------------------------------------------
# The consultancy's quote: markups, services and fees, payment terms, validity
# ---------------------------------------------------------------------------------------------

markup_validators = in_range(limits.MARKUP_PCT)


def markup_field(*args, **kwargs) -> models.DecimalField:
    return models.DecimalField(*args, max_digits=7, decimal_places=2,
                               validators=markup_validators, **kwargs)  # fmt: skip


DEFAULT_DELIVERY_TERMS = (
    "Delivered to the site, duties paid (DDP, Incoterms 2020); installed and burnt in as quoted."
)
DEFAULT_WARRANTY_TERMS = (
    "The manufacturers' warranty on every part, passed to the client from acceptance."
)


def default_payment_milestones() -> list[dict[str, str]]:
    """A new quote's payment milestones (the consultant changes them on the quote page)."""
    return [
        {"pct": "40", "when": "on order"},
        {"pct": "50", "when": "on delivery"},
        {"pct": "10", "when": "on acceptance after burn-in"},
    ]


class QuoteSettings(VersionedModel):
    """How a plan is sold: markups on landed cost and the quote's commercial terms (payment
    milestones, delivery, warranty, how long the quote holds).

    Markups: a line's own (``line_markups``, by part key) over its category's
    (``category_markups``) over ``markup_pct`` (planner.engine.quote).
    """

    plan = models.OneToOneField(
        "planner.Plan", on_delete=models.CASCADE, related_name="quote_settings"
    )
    markup_pct = markup_field(
        "global markup %", default=0, help_text="On landed cost, for lines and categories "
        "without their own markup."
    )  # fmt: skip
    category_markups = models.JSONField(default=dict, blank=True)
    line_markups = models.JSONField(default=dict, blank=True)
    # The quote's one set of commercial terms (payment, delivery, warranty, validity): entered
    # here once, printed from here on every page of the quote (planner.pdf.context).
    payment_milestones = models.JSONField(
        default=default_payment_milestones,
        help_text="Shares of the total and when each falls due; they add up to 100 %.",
    )
    payment_due_days = models.PositiveSmallIntegerField(
        "invoices payable within (days)",
        default=30,
        validators=in_range(limits.PAYMENT_DUE_DAYS),
    )
    delivery_terms = models.CharField(
        max_length=300,
        default=DEFAULT_DELIVERY_TERMS,
        help_text="Where and how the goods are delivered, as printed on the quote.",
    )
    warranty_terms = models.CharField(
        max_length=300,
        default=DEFAULT_WARRANTY_TERMS,
        help_text="The warranty the client gets, as printed on the quote.",
    )
    validity_days = models.PositiveSmallIntegerField(
        "quote valid for (days)",
        default=30,
        validators=in_range(limits.QUOTE_VALIDITY_DAYS),
        help_text="From the publication date; never past the earliest supplier offer's expiry.",
    )

    class Meta:
        verbose_name_plural = "quote settings"

    def __str__(self) -> str:
        return f"Quote settings of {self.plan}"

    def milestones(self) -> tuple[quote_engine.PaymentMilestone, ...]:
        """The payment milestones, checked (they add up to 100 %).

        Raises:
            QuoteError: Stored milestones that are not a schedule.
        """
        rows = self.payment_milestones if isinstance(self.payment_milestones, list) else []
        try:
            parsed = [
                quote_engine.PaymentMilestone(Decimal(str(r["pct"])), str(r["when"])) for r in rows
            ]
        except (ArithmeticError, KeyError, TypeError) as exc:
            raise quote_engine.QuoteError("Give each milestone a percentage and an event.") from exc
        return quote_engine.check_milestones(parsed)

    def clean(self) -> None:
        """The payment milestones add up to 100 %; each map's markups are percentages within
        the global markup's bounds, as text."""
        try:
            self.milestones()
        except quote_engine.QuoteError as exc:
            raise ValidationError({"payment_milestones": str(exc)}) from exc
        low, high = markup_validators[0].limit_value, markup_validators[1].limit_value
        for name in ("category_markups", "line_markups"):
            markups = getattr(self, name)
            message = (
                f"Give an object of names to markups in %, from {low} to {high} "
                '(e.g. {"Network": "12.5"}).'
            )
            if not isinstance(markups, dict) or len(markups) > 2_000:
                raise ValidationError({name: message})
            for key, value in markups.items():
                try:
                    pct = Decimal(str(value)) if isinstance(value, str | int) else None
                except ArithmeticError:
                    pct = None
                if len(key) > 200 or pct is None or not pct.is_finite() or not low <= pct <= high:
                    raise ValidationError({name: f"{key[:40]}: {message}"})


class FeeKind(models.TextChoices):
    DESIGN = "design", "Design"
    INSTALLATION = "installation", "Installation"
    PROJECT_MANAGEMENT = "project_management", "Project management"
    SUPPORT = "support", "Support"
    OTHER = "other", "Other fee"


class FeeUnit(models.TextChoices):
    DAYS = "days", "days"
    YEARS = "years", "years"
    LUMP_SUM = "lump sum", "lump sum"


class QuoteFee(VersionedModel):
    """A service or fee the consultancy sells on the quote, at its own price (plan currency)."""

    plan = models.ForeignKey("planner.Plan", on_delete=models.CASCADE, related_name="quote_fees")
    kind = models.CharField(max_length=20, choices=FeeKind.choices)
    description = models.CharField(max_length=200)
    quantity = models.DecimalField(
        max_digits=8, decimal_places=2, default=1, validators=in_range(limits.FEE_QUANTITY)
    )
    unit = models.CharField(max_length=10, choices=FeeUnit.choices, default=FeeUnit.DAYS)
    unit_price = money_field(
        limit=limits.FEE_UNIT_PRICE, help_text="Sell price per unit, in the plan currency."
    )
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["plan", "position", "pk"]

    def __str__(self) -> str:
        return f"{self.description}: {self.quantity} {self.unit} at {self.unit_price}"

    def clean(self) -> None:
        if self.kind == FeeKind.SUPPORT and self.unit != FeeUnit.YEARS:
            raise ValidationError({"unit": "Support is sold in years."})
        years = self.unit == FeeUnit.YEARS and self.quantity is not None
        if years and (self.quantity != int(self.quantity) or not 1 <= self.quantity <= 10):
            raise ValidationError({"quantity": "Give whole years, from 1 to 10."})
        if self.unit == FeeUnit.LUMP_SUM and self.quantity is not None and self.quantity != 1:
            raise ValidationError({"quantity": "A lump sum has quantity 1."})


class MeasureDecisionChoice(models.TextChoices):
    UNCONFIRMED = "unconfirmed", "Unconfirmed (exposure shown, an open item)"
    APPLIES = "applies", "Applies (charged in the landed cost)"
    DOES_NOT_APPLY = "does_not_apply", "Does not apply (0 %, reason required)"


class MeasureDecision(VersionedModel):
    """The consultant's decision on a conditional duty (end use, exemption, quota) for a plan:
    it applies (charged), it does not (0 %, with the reason, e.g. the end-use certificate), or
    it is unconfirmed (left out of the landed cost, its exposure shown, an open item).

    One decision per measure name and plan: it holds for every line the measure is in force on.
    """

    plan = models.ForeignKey(
        "planner.Plan", on_delete=models.CASCADE, related_name="measure_decisions"
    )
    measure = models.CharField(
        max_length=200, help_text="The measure's legal name, as in the tariff table."
    )
    decision = models.CharField(
        max_length=20,
        choices=MeasureDecisionChoice.choices,
        default=MeasureDecisionChoice.UNCONFIRMED,
    )
    reason = models.CharField(
        max_length=300,
        blank=True,
        help_text="Why: required when it does not apply (e.g. the end-use certificate reference).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["plan", "measure"]
        constraints = [
            models.UniqueConstraint(
                fields=["plan", "measure"], name="unique_measure_decision_per_plan"
            ),
            models.CheckConstraint(
                name="measure_not_applying_has_reason",
                condition=~Q(decision="does_not_apply") | ~Q(reason=""),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.measure}: {self.get_decision_display()}"

    def clean(self) -> None:
        self.reason = (self.reason or "").strip()
        if self.decision == MeasureDecisionChoice.DOES_NOT_APPLY and not self.reason:
            raise ValidationError(
                {
                    "reason": "Say why it does not apply (e.g. the end-use certificate "
                    "reference): the cost sheet prints it."
                }
            )
