from django.urls import path
from django.views.generic import RedirectView

from catalog import views

app_name = "catalog"

urlpatterns = [
    path(
        "",
        RedirectView.as_view(pattern_name="catalog:list", permanent=False),
        {"kind_key": "accelerators"},
        name="index",
    ),
    path("compare/", views.catalog_compare, name="compare"),
    path("import/", views.catalog_import_new, name="import"),
    path("import/<int:import_id>/", views.catalog_import_detail, name="import_detail"),
    path("import/<int:import_id>/status/", views.catalog_import_status, name="import_status"),
    path("import/<int:import_id>/retry/", views.catalog_import_retry, name="import_retry"),
    path("<slug:kind_key>/", views.catalog_list, name="list"),
    path("<slug:kind_key>/export.csv", views.catalog_export, name="export"),
    path("<slug:kind_key>/<str:lookup>/", views.catalog_detail, name="detail"),
]
