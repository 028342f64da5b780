"""URLs of the whole site."""

from django.contrib import admin
from django.urls import include, path

from planner.views import organisation, plans

admin.site.site_header = "Inference Planner administration"
admin.site.site_title = "Inference Planner admin"

urlpatterns = [
    path("", organisation.home, name="home"),
    path("organisation/", organisation.organisation_detail, name="organisation"),
    path("organisation/switch/", organisation.organisation_switch, name="organisation_switch"),
    path(
        "organisation/members/<int:membership_id>/",
        organisation.member_edit,
        name="member_edit",
    ),
    path("clients/", plans.client_list_view, name="client_list"),
    path("clients/<int:client_id>/", plans.client_edit, name="client_edit"),
    path("plans/", plans.plan_list_view, name="plan_list"),
    path("plans/new/", plans.plan_create, name="plan_create"),
    path("plans/<int:plan_id>/", plans.plan_detail, name="plan_detail"),
    path("plans/<int:plan_id>/edit/", plans.plan_edit, name="plan_edit"),
    path("catalog/", include("catalog.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
]
