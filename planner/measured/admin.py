"""Load tests, traffic logs and their settings: organisation data, shown read-only to staff of
the owning organisation only (planner.admin_tenancy); the workload's pages are the UI."""

from django.contrib import admin

from planner.admin_tenancy import TenantAdmin
from planner.measured.models import (
    LoadTestSweep,
    LogColumnMapping,
    MeasuredSettings,
    TrafficLogImport,
)


@admin.register(LoadTestSweep)
class LoadTestSweepAdmin(TenantAdmin):
    list_display = [
        "workload",
        "accelerator",
        "precision",
        "tensor_parallel",
        "tool",
        "measured_on",
    ]
    list_filter = ["tool"]


@admin.register(TrafficLogImport)
class TrafficLogImportAdmin(TenantAdmin):
    list_display = ["file_name", "workload", "status", "progress", "applied_type", "requested_at"]
    list_filter = ["status"]
    exclude = ["file"]  # the raw log never leaves the organisation's pages


@admin.register(LogColumnMapping)
class LogColumnMappingAdmin(TenantAdmin):
    list_display = ["name", "organisation", "log_format"]


@admin.register(MeasuredSettings)
class MeasuredSettingsAdmin(TenantAdmin):
    list_display = ["organisation", "raw_log_retention_days"]
