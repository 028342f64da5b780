"""Sourcing URLs: plan pages under /plans/<plan_id>/sourcing/, organisation data under
/suppliers/, reference data under /sourcing/."""

from django.urls import path

from sourcing import quote_views, views

app_name = "sourcing"

P = "plans/<int:plan_id>/sourcing/"

urlpatterns = [
    path(P, views.bom_view, name="bom"),
    path(P + "bom/generate/", views.bom_generate_view, name="bom_generate"),
    path(P + "bom/add/", views.bom_line_add_view, name="bom_line_add"),
    path(P + "bom/<int:line_id>/", views.bom_line_edit_view, name="bom_line_edit"),
    path(P + "bom/<int:line_id>/remove/", views.bom_line_remove_view, name="bom_line_remove"),
    path(P + "settings/", views.settings_view, name="settings"),
    path(P + "landed-cost/", views.landed_cost_view, name="landed_cost"),
    path(P + "landed-cost/measures/", views.measure_decision_view, name="measure_decision"),
    path(P + "timeline/", views.timeline_view, name="timeline"),
    path(P + "check/", views.check_view, name="check"),
    path(P + "orders/", views.order_list_view, name="orders"),
    path(P + "orders/<int:order_id>/", views.order_detail_view, name="order_detail"),
    path(P + "history/", views.history_view, name="history"),
    path(P + "quote/", quote_views.quote_view, name="quote"),
    path(P + "quote/fees/", quote_views.quote_fee_add_view, name="quote_fee_add"),
    path(
        P + "quote/fees/<int:fee_id>/delete/",
        quote_views.quote_fee_delete_view,
        name="quote_fee_delete",
    ),  # fmt: skip
    path("suppliers/", views.supplier_list_view, name="suppliers"),
    path("suppliers/<int:supplier_id>/", views.supplier_detail_view, name="supplier_detail"),
    path("suppliers/<int:supplier_id>/offers/new/", views.offer_create_view, name="offer_create"),
    path("suppliers/offers/<int:offer_id>/", views.offer_edit_view, name="offer_edit"),
    path("suppliers/offers/<int:offer_id>/delete/", views.offer_delete_view, name="offer_delete"),
    path("sourcing/fx/", views.fx_view, name="fx"),
    path("sourcing/tariffs/", views.tariff_list_view, name="tariffs"),
]
