"""Organisations and memberships: superusers administer them; other staff see only their own
organisations, read-only (planner.admin_tenancy)."""

from django.contrib import admin

from planner.admin_tenancy import TenantAdmin, TenantInline
from planner.models import Membership, Organisation


class MembershipInline(TenantInline):
    model = Membership
    fields = ["user", "role", "created_at"]
    readonly_fields = fields


@admin.register(Organisation)
class OrganisationAdmin(TenantAdmin):
    organisation_path = ""
    superuser_can_edit = True
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ("name",)}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(TenantAdmin):
    superuser_can_edit = True
    list_display = ["user", "organisation", "role", "created_at"]
    list_filter = ["role", ("organisation", admin.RelatedOnlyFieldListFilter)]
    raw_id_fields = ["user", "organisation"]
