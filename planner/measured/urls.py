"""URLs of a workload's measurements, included under /plans/<plan_id>/."""

from django.urls import path

from planner.measured import views

app_name = "measured"

urlpatterns = [
    path(
        "workloads/<int:workload_id>/measured/",
        views.measurements_view,
        name="measurements",
    ),
    path(
        "workloads/<int:workload_id>/measured/sweeps/<int:sweep_id>/",
        views.sweep_detail_view,
        name="sweep_detail",
    ),
    path(
        "workloads/<int:workload_id>/measured/sweeps/<int:sweep_id>/correction/",
        views.sweep_correction_view,
        name="sweep_correction",
    ),
    path(
        "workloads/<int:workload_id>/measured/sweeps/<int:sweep_id>/delete/",
        views.sweep_delete_view,
        name="sweep_delete",
    ),
    path(
        "workloads/<int:workload_id>/measured/uploads/<int:job_id>/",
        views.sweep_import_view,
        name="sweep_import",
    ),
    path("workloads/<int:workload_id>/traffic/", views.logs_view, name="logs"),
    path(
        "fleet-notices/<int:notice_id>/dismiss/",
        views.fleet_notice_dismiss_view,
        name="fleet_notice_dismiss",
    ),
    path(
        "workloads/<int:workload_id>/traffic/<int:job_id>/",
        views.log_detail_view,
        name="log_detail",
    ),
]
