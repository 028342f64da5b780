"""Admin for sites, placement decisions and TCO runs (read mostly; pages are the UI)."""

from django.contrib import admin

from planner.facility.models import PlacementDecision, PowerUpgrade, Site, TcoRun, TcoSettings


class PowerUpgradeInline(admin.TabularInline):
    model = PowerUpgrade
    extra = 0


@admin.register(Site)
class SiteAdmin(admin.ModelAdmin):
    list_display = ["name", "plan", "kind", "racks_available", "site_it_capacity_kw"]
    list_filter = ["kind", "cooling_method"]
    inlines = [PowerUpgradeInline]


@admin.register(TcoRun)
class TcoRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "plan", "status", "progress", "attempts", "worker", "heartbeat_at"]
    list_filter = ["status"]
    readonly_fields = ["input_hash", "inputs", "results", "basis"]


admin.site.register(PlacementDecision)
admin.site.register(TcoSettings)
