"""URLs of a plan's sites, placement and TCO, included under /plans/<plan_id>/."""

from django.urls import path

from planner.facility import views

app_name = "facility"

urlpatterns = [
    path("sites/", views.site_list_view, name="site_list"),
    path("sites/new/", views.site_create, name="site_create"),
    path("sites/<int:site_id>/", views.site_detail, name="site_detail"),
    path("sites/<int:site_id>/delete/", views.site_delete, name="site_delete"),
    path("split/<int:workload_id>/", views.site_split, name="site_split"),
    path("placement/", views.placement_view, name="placement"),
    path("tco/", views.tco_view, name="tco"),
    path("tco/run/", views.tco_run, name="tco_run"),
    path("tco/runs/<int:run_id>/status/", views.tco_status, name="tco_status"),
]
