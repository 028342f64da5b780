"""URLs of the whole site."""

from django.contrib import admin
from django.urls import include, path

from planner import views

admin.site.site_header = "Inference Planner administration"
admin.site.site_title = "Inference Planner admin"

urlpatterns = [
    path("", views.home, name="home"),
    path("organisation/", views.organisation_detail, name="organisation"),
    path("organisation/switch/", views.organisation_switch, name="organisation_switch"),
    path("organisation/members/<int:membership_id>/", views.member_edit, name="member_edit"),
    path("catalog/", include("catalog.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
]
