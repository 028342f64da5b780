"""URLs of the whole site."""

from django.contrib import admin
from django.urls import include, path

from planner.api import api
from planner.views import (
    calibration,
    freshness,
    invitations,
    operations,
    organisation,
    plans,
    workloads,
)

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
    path(
        "organisation/invitations/<int:invitation_id>/revoke/",
        organisation.invitation_revoke_view,
        name="invitation_revoke",
    ),
    path("invitations/<str:token>/", invitations.invitation_accept_view, name="invitation_accept"),
    path("organisation/tokens/", organisation.api_tokens, name="api_tokens"),
    path("organisation/quote-terms/", organisation.quote_terms, name="quote_terms"),
    path("organisation/serving-stack/", organisation.serving_defaults, name="serving_defaults"),
    path("clients/", plans.client_list_view, name="client_list"),
    path("clients/<int:client_id>/", plans.client_edit, name="client_edit"),
    path("plans/", plans.plan_list_view, name="plan_list"),
    path("plans/new/", plans.plan_create, name="plan_create"),
    path("plans/import/", plans.plan_import_view, name="plan_import"),
    path("plans/<int:plan_id>/export/", plans.plan_export_view, name="plan_export"),
    path("plans/<int:plan_id>/", plans.plan_detail, name="plan_detail"),
    path("plans/<int:plan_id>/edit/", plans.plan_edit, name="plan_edit"),
    path(
        "plans/<int:plan_id>/recompute/<str:kind>/",
        freshness.plan_recompute,
        name="plan_recompute",
    ),
    path("plans/<int:plan_id>/operations/", operations.operations_view, name="operations"),
    path("plans/<int:plan_id>/", include("planner.facility.urls")),
    path("plans/<int:plan_id>/", include("planner.measured.urls")),
    path("plans/<int:plan_id>/workloads/new/", workloads.workload_add, name="workload_add"),
    path(
        "plans/<int:plan_id>/workloads/traffic-preview/",
        workloads.traffic_preview,
        name="workload_traffic_preview",
    ),
    path(
        "plans/<int:plan_id>/workloads/<int:workload_id>/",
        workloads.workload_sizing,
        name="workload_sizing",
    ),
    path(
        "plans/<int:plan_id>/workloads/<int:workload_id>/delete/",
        workloads.workload_delete,
        name="workload_delete",
    ),
    path(
        "plans/<int:plan_id>/workloads/<int:workload_id>/choose/",
        workloads.workload_choose,
        name="workload_choose",
    ),
    path(
        "plans/<int:plan_id>/workloads/<int:workload_id>/candidates/<str:key>/",
        workloads.candidate_detail_view,
        name="candidate_detail",
    ),
    path(
        "plans/<int:plan_id>/workloads/<int:workload_id>/candidates/<str:key>/second-opinion/",
        workloads.candidate_second_opinion_view,
        name="candidate_second_opinion",
    ),
    path("calibration/", calibration.calibration_page, name="calibration"),
    path("catalog/", include("catalog.urls")),
    path("", include("sourcing.urls")),
    path("", include("planner.sharing.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", api.urls),
    path("admin/", admin.site.urls),
]
