"""Sites, placement decisions and TCO runs: organisation data, shown read-only to staff of the
owning organisation only (planner.admin_tenancy); the plan's pages are the UI."""

from django.contrib import admin

from planner.admin_tenancy import TenantAdmin, TenantInline
from planner.facility.models import PlacementDecision, PowerUpgrade, Site, TcoRun, TcoSettings


class PlanTenantAdmin(TenantAdmin):
    organisation_path = "plan__organisation"


class PowerUpgradeInline(TenantInline):
    model = PowerUpgrade


@admin.register(Site)
class SiteAdmin(PlanTenantAdmin):
    list_display = ["name", "plan", "kind", "racks_available", "site_it_capacity_kw"]
    list_filter = ["kind", "cooling_method"]
    inlines = [PowerUpgradeInline]


@admin.register(TcoRun)
class TcoRunAdmin(PlanTenantAdmin):
    list_display = ["pk", "plan", "status", "progress", "attempts", "worker", "heartbeat_at"]
    list_filter = ["status"]


@admin.register(PlacementDecision)
class PlacementDecisionAdmin(PlanTenantAdmin):
    list_display = ["plan"]


@admin.register(TcoSettings)
class TcoSettingsAdmin(PlanTenantAdmin):
    list_display = ["plan"]
