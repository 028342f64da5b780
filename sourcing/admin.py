"""Django admin: staff maintain tariffs, customs valuation and FX rates here (shared reference
data). Organisation data (suppliers, offers, orders, BOM lines, settings, flags, plan history)
is shown read-only, and only to staff of the owning organisation (planner.admin_tenancy)."""

from django.contrib import admin
from django.db import models

from planner.admin_tenancy import InputRulesAdmin, InputRulesInline, TenantAdmin, TenantInline
from sourcing.models import (
    BomLine,
    CustomsValuation,
    FxRate,
    Offer,
    OfferPriceBreak,
    PlanEvent,
    PurchaseOrder,
    PurchaseOrderLine,
    QuoteFee,
    QuoteSettings,
    SourcingFlag,
    SourcingSettings,
    Supplier,
    TariffMeasure,
    TariffRule,
)


class TariffMeasureInline(InputRulesInline):
    model = TariffMeasure
    extra = 0


@admin.register(TariffRule)
class TariffRuleAdmin(InputRulesAdmin):
    list_display = ("destination", "hs_prefix", "description", "duty_pct", "vat_pct",
                    "vat_recoverable", "valid_from", "valid_to")  # fmt: skip
    list_filter = ("destination", "vat_recoverable")
    search_fields = ("hs_prefix", "description", "source")
    inlines = [TariffMeasureInline]


@admin.register(CustomsValuation)
class CustomsValuationAdmin(InputRulesAdmin):
    list_display = (
        "destination",
        "basis",
        "landing_charge_pct",
        "vat_base_includes_inland_freight",
    )


@admin.register(FxRate)
class FxRateAdmin(InputRulesAdmin):
    list_display = ("as_of", "from_currency", "to_currency", "rate", "source")
    list_filter = ("from_currency", "to_currency")
    date_hierarchy = "as_of"


class PlanTenantAdmin(TenantAdmin):
    organisation_path = "plan__organisation"


class OfferPriceBreakInline(TenantInline):
    model = OfferPriceBreak


@admin.register(Supplier)
class SupplierAdmin(TenantAdmin):
    list_display = ("name", "country", "organisation")
    list_filter = (("organisation", admin.RelatedOnlyFieldListFilter), "country")
    search_fields = ("name",)
    # The supplier form's rule: a website typed without a scheme is https (Django 6's default).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


@admin.register(Offer)
class OfferAdmin(TenantAdmin):
    organisation_path = "supplier__organisation"
    list_display = ("supplier", "item_label", "unit_price", "currency", "lead_time_days",
                    "quoted_on", "valid_until", "origin_country", "ship_from_country", "incoterm")  # fmt: skip
    list_filter = ("currency", "incoterm")
    inlines = [OfferPriceBreakInline]


class PurchaseOrderLineInline(TenantInline):
    model = PurchaseOrderLine


@admin.register(PurchaseOrder)
class PurchaseOrderAdmin(PlanTenantAdmin):
    list_display = ("reference", "plan", "supplier", "status", "logistics_owner")
    list_filter = ("status",)
    inlines = [PurchaseOrderLineInline]


@admin.register(BomLine)
class BomLineAdmin(PlanTenantAdmin):
    list_display = ("plan", "description", "category", "quantity", "origin")
    list_filter = ("origin", "category")


@admin.register(SourcingSettings)
class SourcingSettingsAdmin(PlanTenantAdmin):
    list_display = ("plan", "destination_country", "offer_strategy", "order_date")


@admin.register(SourcingFlag)
class SourcingFlagAdmin(PlanTenantAdmin):
    list_display = ("plan", "kind", "message", "last_seen", "resolved_at")
    list_filter = ("kind",)


@admin.register(PlanEvent)
class PlanEventAdmin(PlanTenantAdmin):
    list_display = ("created_at", "plan", "user", "kind", "message")
    list_filter = ("kind",)
    readonly_fields = ("plan", "created_at", "user", "kind", "message", "data")


@admin.register(QuoteSettings)
class QuoteSettingsAdmin(PlanTenantAdmin):
    list_display = ("plan", "markup_pct", "validity_days")


@admin.register(QuoteFee)
class QuoteFeeAdmin(PlanTenantAdmin):
    list_display = ("plan", "kind", "description", "quantity", "unit", "unit_price")
    list_filter = ("kind",)
