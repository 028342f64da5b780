"""Django admin for catalog maintainers (staff): the shared catalog. CSV import lives at
/catalog/import/; an import's file is its organisation's (planner.admin_tenancy)."""

from django.contrib import admin
from django.contrib.contenttypes.admin import GenericTabularInline

from catalog.csv_io import price_point_record
from catalog.kinds import KINDS
from catalog.models import (
    Accelerator,
    CatalogImport,
    CloudOffering,
    ModelArchitecture,
    Part,
    PricePoint,
    ServerPlatform,
)
from planner.admin_tenancy import InputRulesAdmin, TenantAdmin
from planner.input_rules import InputModelForm


class PricePointInline(GenericTabularInline):
    model = PricePoint
    form = InputModelForm
    extra = 0
    can_delete = False
    readonly_fields = ("field", "value_usd", "as_of", "source", "recorded_at")
    fields = readonly_fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class PricedAdmin(InputRulesAdmin):
    """Keeps the old price in the history when staff change a price here."""

    price_field = ""
    inlines = [PricePointInline]

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        price_point_record(item=obj, field=self.price_field)


@admin.register(Accelerator)
class AcceleratorAdmin(InputRulesAdmin):
    list_display = [c.attr for c in KINDS["accelerators"].columns] + ["as_of"]
    list_filter = ["vendor", "memory_type"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ("vendor", "name")}


@admin.register(ModelArchitecture)
class ModelArchitectureAdmin(InputRulesAdmin):
    list_display = [c.attr for c in KINDS["models"].columns]
    list_filter = ["attention_kind"]
    search_fields = ["name", "slug"]


@admin.register(ServerPlatform)
class ServerPlatformAdmin(PricedAdmin):
    price_field = "list_price_usd"
    list_display = [c.attr for c in KINDS["servers"].columns] + ["list_price_usd"]
    list_filter = ["vendor", "cooling"]
    search_fields = ["name", "vendor"]


@admin.register(Part)
class PartAdmin(PricedAdmin):
    price_field = "unit_price_usd"
    list_display = [c.attr for c in KINDS["parts"].columns]
    list_filter = ["category"]
    search_fields = ["name", "slug"]


@admin.register(CloudOffering)
class CloudOfferingAdmin(PricedAdmin):
    price_field = "usd_per_hour"
    list_display = [
        "provider",
        "instance_type",
        "accelerator",
        "accelerators",
        "region",
        "price_model",
        "usd_per_hour",
        "as_of",
    ]
    # a regional listing (e.g. an EU region for EU users) is one more row: same provider and
    # instance, its own region; the TCO prices each user region at its area's listing
    list_filter = ["provider", "price_model", "region"]
    search_fields = ["instance_type", "accelerator_text", "region"]


@admin.register(CatalogImport)
class CatalogImportAdmin(TenantAdmin):
    """An uploaded file belongs to its organisation: maintainers see their own imports only,
    read-only (imports are made at /catalog/import/, where the file is validated)."""

    list_display = ["filename", "kind", "organisation", "status", "created_at", "finished_at"]
    list_filter = ["status", "kind"]
