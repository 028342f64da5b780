"""Organisation data in the Django admin: read-only, and only the staff member's own.

Staff who maintain the shared catalog are not members of every organisation: the admin must
show them no other organisation's plans, suppliers, imports or people. Every admin class of a
model owned by an organisation derives from :class:`TenantAdmin` (or, for inlines,
:class:`TenantInline`), which

- lists and opens only rows of organisations the user is a member of (superusers: all);
- never adds, changes or deletes: the app's own pages are where organisation data is
  written, with their validation and history (and an admin "add" page for these models
  cannot build a valid row anyway);
- (with ``admin.RelatedOnlyFieldListFilter`` in ``list_filter``) offers filters only over the
  values the user can see.

Every admin class of the project, tenant data or shared reference data, derives from
:class:`InputRulesAdmin` or :class:`InputRulesInline`: what staff type goes through the same
input rules as the app's own forms (``planner.input_rules``).
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from planner.input_rules import InputModelForm


class InputRulesAdmin(admin.ModelAdmin):
    """An admin whose add and change forms go through the shared input rules."""

    form = InputModelForm


class InputRulesInline(admin.TabularInline):
    """An inline whose rows go through the shared input rules."""

    form = InputModelForm


class TenantAdmin(InputRulesAdmin):
    """Read-only admin for a model owned by an organisation, scoped by membership.

    ``organisation_path`` is the lookup from the model to its ``Organisation`` ("" when the
    model is ``Organisation`` itself). ``superuser_can_edit`` lets superusers (never other
    staff) add, change and delete, for the few models that have no page of their own.
    """

    organisation_path = "organisation"
    superuser_can_edit = False

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        prefix = f"{self.organisation_path}__" if self.organisation_path else ""
        return queryset.filter(**{f"{prefix}memberships__user": request.user}).distinct()

    def _superuser_edit(self, request: HttpRequest) -> bool:
        return self.superuser_can_edit and request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._superuser_edit(request)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._superuser_edit(request)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._superuser_edit(request)


class TenantInline(InputRulesInline):
    """An inline of organisation data shown under a :class:`TenantAdmin`: read-only."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
