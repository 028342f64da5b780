"""Sourcing pages. Thin: check the organisation and role, call a selector or service, render.

Plan pages live under /plans/<plan_id>/sourcing/…; suppliers, offers, FX and tariffs under
/suppliers/… and /sourcing/…. Every object is read through the current organisation, so
another organisation's ids are a 404; viewers read, owners and consultants change.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone

from catalog.csv_io import CatalogImportError, read_csv_text
from planner import chartdefs, freshness
from planner.engine.errors import CatalogGapError
from planner.facility.deployment import plan_deployment
from planner.facility.services import deployment_summary
from planner.permissions import can_edit, editor_required, member_required, require_editor
from planner.selectors import plans_with_client
from planner.tenancy import org_object_or_404
from planner.versioning import StaleEditError
from sourcing import selectors, services
from sourcing.charts import gantt_figure
from sourcing.forms import (
    BomLineAddForm,
    BomLineForm,
    FxImportForm,
    FxRateForm,
    MeasureDecisionForm,
    OfferForm,
    PurchaseOrderCreateForm,
    PurchaseOrderForm,
    SourcingSettingsForm,
    SupplierForm,
    TariffFilterForm,
)
from sourcing.models import FxRate, OfferPriceBreak, Supplier

# htmx 2 does not swap 4xx answers by default; ours carry the form with its errors.
HTMX_CONFIG = (
    '{"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},'
    '{"code":"400","swap":true},{"code":"[45]..","swap":false,"error":true}]}'
)


def _status(form) -> int:
    return 400 if form is not None and form.is_bound and form.errors else 200


def _post_only(request: HttpRequest) -> HttpResponse | None:
    return None if request.method == "POST" else HttpResponseNotAllowed(["POST"])


# ---------------------------------------------------------------------------------------------
# Bill of materials
# ---------------------------------------------------------------------------------------------


def _line_initial(line) -> dict:
    return {
        "quantity": line.quantity,
        "pinned_offer": line.pinned_offer_id,
        "hs_code": line.hs_code,
    }


def _bom_context(request, plan, *, add_form=None, line_forms=None) -> dict:
    settings = services.sourcing_settings_get(plan=plan)
    offers = list(selectors.offer_list(organisation=request.organisation))
    line_forms = line_forms or {}
    rows = []
    for line in selectors.bom_line_list(plan=plan):
        line_offers = selectors.offers_for_line(offers, line)
        form = line_forms.get(line.pk) or BomLineForm(
            offers=line_offers, initial=_line_initial(line), prefix=f"line{line.pk}", record=line
        )
        rows.append({"line": line, "form": form, "offer_count": len(line_offers)})
    groups = services.bom_site_groups(plan=plan, items=rows, line_of=lambda row: row["line"])
    last = selectors.plan_event_list(plan=plan).filter(kind="bom").first()
    try:
        deployment, catalog_gap = plan_deployment(plan=plan), ""
    except CatalogGapError as gap:
        deployment, catalog_gap = None, str(gap)
    return {
        "plan": plan,
        "section": "sourcing",
        "tab": "bom",
        "settings": settings,
        "rows": rows,
        "groups": groups,
        "plan_subtotal": services.bom_plan_subtotal(groups),
        "add_form": add_form or BomLineAddForm(prefix="add", plan=plan),
        "deployments": deployment.per_workload if deployment else [],
        "deployment": deployment,
        "summary": deployment_summary(plan=plan),
        "catalog_gap": catalog_gap,
        "last_event": last,
        "fresh": freshness.bom_freshness(plan),
        "bom_option": services.bom_option_shown(plan=plan),
        "can_edit": can_edit(request),
        "htmx_config": HTMX_CONFIG,
    }


def _bom_response(request, plan, *, status: int = 200, **kwargs) -> HttpResponse:
    template = "sourcing/bom.html"
    if request.htmx:
        template += "#bom-section"
    return render(request, template, _bom_context(request, plan, **kwargs), status=status)


@member_required
def bom_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The plan's bill of materials."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    return _bom_response(request, plan)


@editor_required
def bom_generate_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    if refused := _post_only(request):
        return refused
    try:
        changes = services.bom_generate(plan=plan, user=request.user)
    except services.SourcingError as exc:
        messages.error(request, str(exc))
    else:
        if changes:
            messages.success(request, "Regenerated. Changes: " + "; ".join(changes))
        else:
            messages.success(request, "Bill of materials generated; hand-made lines kept.")
    return redirect("sourcing:bom", plan_id=plan.pk)


@editor_required
def bom_line_add_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    if refused := _post_only(request):
        return refused
    form = BomLineAddForm(request.POST, prefix="add", plan=plan)
    if form.is_valid():
        data = form.cleaned_data
        try:
            services.bom_line_add(
                plan=plan, user=request.user, description=data["description"].strip(),
                quantity=data["quantity"], reason=data["reason"], part=data["part"],
                server=data["server"], service=data["service"], hs_code=data["hs_code"],
                site=data["site"],
            )  # fmt: skip
        except services.SourcingError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Line added; it stays when the BOM is regenerated.")
            if request.htmx:
                return _bom_response(request, plan)
            return redirect("sourcing:bom", plan_id=plan.pk)
    return _bom_response(request, plan, status=400, add_form=form)


@editor_required
def bom_line_edit_view(request: HttpRequest, plan_id: int, line_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    line = org_object_or_404(request, selectors.bom_line_list(plan=plan), pk=line_id)
    if refused := _post_only(request):
        return refused
    offers = selectors.offers_for_line(
        list(selectors.offer_list(organisation=request.organisation)), line
    )
    form = BomLineForm(
        request.POST, offers=offers, initial=_line_initial(line), prefix=f"line{line.pk}",
        record=line,
    )  # fmt: skip
    if not form.is_valid():
        return _bom_response(request, plan, status=400, line_forms={line.pk: form})
    try:
        changes = services.bom_line_update(
            line=line, user=request.user, quantity=form.cleaned_data["quantity"],
            pinned_offer=form.cleaned_data["pinned_offer"], hs_code=form.cleaned_data["hs_code"],
        )  # fmt: skip
    except StaleEditError as exc:
        form.add_stale_error(exc)
        return _bom_response(request, plan, status=400, line_forms={line.pk: form})
    if changes:
        messages.success(request, f"{line.description}: {', '.join(changes)}.{form.merge_note}")
    if request.htmx:
        return _bom_response(request, plan)
    return redirect("sourcing:bom", plan_id=plan.pk)


@editor_required
def bom_line_remove_view(request: HttpRequest, plan_id: int, line_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    line = org_object_or_404(request, selectors.bom_line_list(plan=plan), pk=line_id)
    if refused := _post_only(request):
        return refused
    services.bom_line_remove(line=line, user=request.user)
    messages.success(request, f"{line.description} removed.")
    if request.htmx:
        return _bom_response(request, plan)
    return redirect("sourcing:bom", plan_id=plan.pk)


@member_required
def settings_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """How the plan is sourced; editors change it, viewers read it."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    settings = services.sourcing_settings_get(plan=plan)
    form = SourcingSettingsForm(request.POST or None, instance=settings)
    if request.method == "POST":
        require_editor(request)
        if form.is_valid():
            changed = form.changed_data
            try:
                form.save()
            except StaleEditError as exc:
                form.add_stale_error(exc)
            else:
                if changed:
                    services.event_record(
                        plan=plan, user=request.user, kind="settings",
                        message="Sourcing settings changed: " + ", ".join(
                            f"{form.fields[n].label or n} = {form.cleaned_data[n]}" for n in changed
                        ) + ".",
                    )  # fmt: skip
                messages.success(request, "Sourcing settings saved." + form.merge_note)
                return redirect("sourcing:settings", plan_id=plan.pk)
    power_ready, source = services.power_ready_date(plan=plan, settings=settings)
    context = {
        "plan": plan, "section": "sourcing", "tab": "settings", "form": form,
        "can_edit": can_edit(request), "facility_power_ready": power_ready,
        "power_source": source,
    }  # fmt: skip
    return render(request, "sourcing/settings.html", context, status=_status(form))


# ---------------------------------------------------------------------------------------------
# Landed cost and timeline
# ---------------------------------------------------------------------------------------------


def _measure_forms(request, plan, report, posted=None) -> list:
    """One decision form per conditional measure of the landed cost (editors only); ``posted``
    is the bound form of the measure just posted, shown with its errors."""
    if not can_edit(request):
        return []
    stored = {d.measure: d for d in plan.measure_decisions.all()}
    out = []
    for i, m in enumerate(report.conditional_measures):
        if posted is not None and posted.measure == m.name:
            out.append((m, posted))
            continue
        row = stored.get(m.name) or services.measure_decision_get(plan=plan, measure=m.name)
        form = MeasureDecisionForm(instance=row, prefix=f"measure-{i}")
        form.measure = m.name
        out.append((m, form))
    return out


def _landed_cost_page(request, plan, *, posted=None, status: int = 200) -> HttpResponse:
    report = services.landed_cost_report(plan=plan, organisation=request.organisation)
    context = {
        "plan": plan, "section": "sourcing", "tab": "landed", "report": report,
        "fresh": freshness.landed_cost_freshness(plan, report=report),
        "settings": services.sourcing_settings_get(plan=plan), "can_edit": can_edit(request),
        "bom_option": services.bom_option_shown(plan=plan),
        "measure_forms": _measure_forms(request, plan, report, posted),
    }  # fmt: skip
    return render(request, "sourcing/landed_cost.html", context, status=status)


@member_required
def landed_cost_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The chosen offer per line, its alternative, and landed cost per line and shipment."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    return _landed_cost_page(request, plan)


@editor_required
def measure_decision_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Decide a conditional duty for the plan (applies / does not apply with the reason /
    unconfirmed); bad input comes back at the field, the page answering 400."""
    if (refused := _post_only(request)) is not None:
        return refused
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    report = services.landed_cost_report(plan=plan, organisation=request.organisation)
    name = request.POST.get("measure", "")
    known = [m.name for m in report.conditional_measures]
    if name not in known:
        messages.error(request, "No conditional duty of that name is in force on the plan.")
        return _landed_cost_page(request, plan, status=400)
    row = services.measure_decision_get(plan=plan, measure=name)
    form = MeasureDecisionForm(request.POST, instance=row, prefix=f"measure-{known.index(name)}")
    form.measure = name
    if form.is_valid():
        try:
            row = services.measure_decision_save(
                plan=plan, decision=form.save(commit=False), user=request.user
            )
        except StaleEditError as exc:
            form.add_stale_error(exc)
        else:
            messages.success(request, f"{name}: {row.get_decision_display()}." + form.merge_note)
            return redirect("sourcing:landed_cost", plan_id=plan.pk)
    return _landed_cost_page(request, plan, posted=form, status=400)


@member_required
def timeline_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Go-live by the critical path, a Gantt chart, and the slips that moved it."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    timeline = services.timeline_report(plan=plan, organisation=request.organisation)
    figure = None
    if timeline.slips:
        slipped = {s.key for s in timeline.slips.responsible + timeline.slips.absorbed}
        # The same definition as the PDF's Gantt, from the same section shape.
        gantt = chartdefs.timeline_gantt(timeline.section())
        if gantt is not None:
            figure = gantt_figure(gantt, slipped_keys=frozenset(slipped))
    context = {
        "plan": plan, "section": "sourcing", "tab": "timeline", "timeline": timeline,
        "summary": deployment_summary(plan=plan),
        "figure_json": figure, "flags": selectors.open_flag_list(plan=plan),
        "fresh": freshness.timeline_freshness(plan),
        "settings": services.sourcing_settings_get(plan=plan), "can_edit": can_edit(request),
        "bom_option": services.bom_option_shown(plan=plan),
    }  # fmt: skip
    return render(request, "sourcing/timeline.html", context)


@editor_required
def check_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Run the daily check for this plan now."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    if refused := _post_only(request):
        return refused
    flags = services.sourcing_check_plan(plan=plan)
    messages.info(request, f"Checked: {len(flags)} open flag(s).")
    return redirect("sourcing:timeline", plan_id=plan.pk)


# ---------------------------------------------------------------------------------------------
# Purchase orders and history
# ---------------------------------------------------------------------------------------------


@member_required
def order_list_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    suppliers = selectors.supplier_list(organisation=request.organisation)
    form = PurchaseOrderCreateForm(request.POST or None, suppliers=suppliers)
    if request.method == "POST":
        require_editor(request)
        if form.is_valid():
            try:
                order = services.purchase_order_create(
                    plan=plan, organisation=request.organisation,
                    supplier=form.cleaned_data["supplier"], user=request.user,
                    logistics_owner=form.cleaned_data["logistics_owner"].strip(),
                )  # fmt: skip
            except services.SourcingError as exc:
                form.add_error("supplier", str(exc))
            else:
                messages.success(request, f"{order.reference} created.")
                return redirect("sourcing:order_detail", plan_id=plan.pk, order_id=order.pk)
    orders = list(selectors.purchase_order_list(plan=plan))
    rows = [{"order": o, "cross_border": services.order_is_cross_border(o)} for o in orders]
    context = {
        "plan": plan, "section": "sourcing", "tab": "orders", "rows": rows, "form": form,
        "can_edit": can_edit(request),
        "fresh": freshness.bom_derived_freshness(plan, freshness.ORDERS),
    }  # fmt: skip
    return render(request, "sourcing/orders.html", context, status=_status(form))


@member_required
def order_detail_view(request: HttpRequest, plan_id: int, order_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    order = org_object_or_404(request, selectors.purchase_order_list(plan=plan), pk=order_id)
    cross_border = services.order_is_cross_border(order)
    form = PurchaseOrderForm(request.POST or None, instance=order, cross_border=cross_border)
    if request.method == "POST":
        require_editor(request)
        if form.is_valid():
            values = {n: form.cleaned_data[n] for n in form.changed_data}
            order.refresh_from_db()  # compare against what is stored, not the bound form
            try:
                words = services.purchase_order_update(
                    order=order, changes=values, user=request.user
                )
            except StaleEditError as exc:
                form.add_stale_error(exc)
            else:
                messages.success(
                    request,
                    ("Saved: " + "; ".join(words) if words else "No change.") + form.merge_note,
                )
                return redirect("sourcing:order_detail", plan_id=plan.pk, order_id=order.pk)
        order.refresh_from_db()
    landed, landed_error = services.purchase_order_landed_cost(order=order, plan=plan)
    events = [e for e in selectors.plan_event_list(plan=plan) if e.data.get("order") == order.pk]
    context = {
        "plan": plan, "section": "sourcing", "tab": "orders", "order": order, "form": form,
        "cross_border": cross_border, "landed": landed, "landed_error": landed_error,
        "events": events, "can_edit": can_edit(request),
    }  # fmt: skip
    return render(request, "sourcing/order_detail.html", context, status=_status(form))


@member_required
def history_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    context = {
        "plan": plan, "section": "sourcing", "tab": "history",
        "events": selectors.plan_event_list(plan=plan)[:500],
    }  # fmt: skip
    return render(request, "sourcing/history.html", context)


# ---------------------------------------------------------------------------------------------
# Suppliers and offers
# ---------------------------------------------------------------------------------------------


@member_required
def supplier_list_view(request: HttpRequest) -> HttpResponse:
    form = SupplierForm(request.POST or None, organisation=request.organisation)
    if request.method == "POST":
        require_editor(request)
        if form.is_valid():
            supplier = form.save(commit=False)
            supplier.organisation = request.organisation
            supplier.save()
            messages.success(request, f"Supplier {supplier} added; add its offers next.")
            return redirect("sourcing:supplier_detail", supplier_id=supplier.pk)
    suppliers = selectors.supplier_list(organisation=request.organisation)
    context = {"form": form, "suppliers": suppliers, "can_edit": can_edit(request)}
    return render(request, "sourcing/suppliers.html", context, status=_status(form))


@member_required
def supplier_detail_view(request: HttpRequest, supplier_id: int) -> HttpResponse:
    supplier = org_object_or_404(request, Supplier, pk=supplier_id)
    form = SupplierForm(request.POST or None, instance=supplier, organisation=request.organisation)
    if request.method == "POST":
        require_editor(request)
        if form.is_valid():
            try:
                form.save()
            except StaleEditError as exc:
                form.add_stale_error(exc)
            else:
                messages.success(request, f"Supplier {supplier} saved.{form.merge_note}")
                return redirect("sourcing:supplier_detail", supplier_id=supplier.pk)
    offers = selectors.offer_list(organisation=request.organisation).filter(supplier=supplier)
    context = {
        "supplier": supplier, "form": form, "offers": offers, "today": timezone.localdate(),
        "can_edit": can_edit(request),
    }  # fmt: skip
    return render(request, "sourcing/supplier_detail.html", context, status=_status(form))


@transaction.atomic
def _save_offer(form: OfferForm) -> None:
    offer = form.save()
    offer.price_breaks.all().delete()
    for qty, price in form.cleaned_data["price_breaks_text"]:
        OfferPriceBreak.objects.create(offer=offer, min_qty=qty, unit_price=price)


@editor_required
def offer_create_view(request: HttpRequest, supplier_id: int) -> HttpResponse:
    supplier = org_object_or_404(request, Supplier, pk=supplier_id)
    form = OfferForm(request.POST or None, initial={"origin_country": supplier.country})
    form.instance.supplier = supplier
    if request.method == "POST" and form.is_valid():
        _save_offer(form)
        messages.success(request, "Offer saved.")
        return redirect("sourcing:supplier_detail", supplier_id=supplier.pk)
    context = {"supplier": supplier, "form": form, "offer": None}
    return render(request, "sourcing/offer_form.html", context, status=_status(form))


@editor_required
def offer_edit_view(request: HttpRequest, offer_id: int) -> HttpResponse:
    offer = org_object_or_404(
        request, selectors.offer_list(organisation=request.organisation), pk=offer_id
    )
    form = OfferForm(request.POST or None, instance=offer)
    if request.method == "POST" and form.is_valid():
        try:
            _save_offer(form)
        except StaleEditError as exc:
            form.add_stale_error(exc)
        else:
            messages.success(request, "Offer saved." + form.merge_note)
            return redirect("sourcing:supplier_detail", supplier_id=offer.supplier_id)
    context = {"supplier": offer.supplier, "form": form, "offer": offer}
    return render(request, "sourcing/offer_form.html", context, status=_status(form))


@editor_required
def offer_delete_view(request: HttpRequest, offer_id: int) -> HttpResponse:
    offer = org_object_or_404(
        request, selectors.offer_list(organisation=request.organisation), pk=offer_id
    )
    if refused := _post_only(request):
        return refused
    if offer.order_lines.exists():
        messages.error(request, "This offer is on a purchase order and cannot be deleted.")
    else:
        offer.delete()
        messages.success(request, "Offer deleted.")
    return redirect("sourcing:supplier_detail", supplier_id=offer.supplier_id)


# ---------------------------------------------------------------------------------------------
# Reference data: FX rates and tariffs
# ---------------------------------------------------------------------------------------------


@member_required
def fx_view(request: HttpRequest) -> HttpResponse:
    """FX rates: everyone reads; staff (catalog maintainers) add rates or import a CSV."""
    form = FxRateForm(request.POST or None) if request.method == "POST" else FxRateForm()
    import_form = FxImportForm()
    import_errors = []
    status = 200
    if request.method == "POST":
        if not request.user.is_staff:
            raise PermissionDenied("Only catalog maintainers (staff) can change FX rates.")
        if "file" in request.FILES or request.POST.get("action") == "import":
            form = FxRateForm()
            import_form = FxImportForm(request.POST, request.FILES)
            if import_form.is_valid():
                try:
                    text = read_csv_text(import_form.cleaned_data["file"].read())
                except CatalogImportError as exc:
                    import_form.add_error("file", str(exc))
                else:
                    result = services.fx_rates_import(text=text)
                    if not result.errors:
                        messages.success(
                            request,
                            f"FX rates imported: {result.created} new, {result.updated} updated.",
                        )
                        return redirect("sourcing:fx")
                    import_errors = result.errors
            status = 400
        elif form.is_valid():
            FxRate.objects.update_or_create(
                from_currency=form.cleaned_data["from_currency"],
                to_currency=form.cleaned_data["to_currency"],
                as_of=form.cleaned_data["as_of"],
                defaults={"rate": form.cleaned_data["rate"], "source": form.cleaned_data["source"]},
            )
            messages.success(request, "FX rate saved.")
            return redirect("sourcing:fx")
        else:
            status = 400
    context = {
        "form": form, "import_form": import_form, "import_errors": import_errors,
        "rates": selectors.fx_rate_list()[:300], "is_staff": request.user.is_staff,
    }  # fmt: skip
    return render(request, "sourcing/fx.html", context, status=status)


@member_required
def tariff_list_view(request: HttpRequest) -> HttpResponse:
    """The tariff rules with their measures and sources (staff edit them in the admin)."""
    filters = TariffFilterForm(request.GET)
    country = filters.cleaned_data["destination"] if filters.is_valid() else ""
    rules = selectors.tariff_rule_list()
    if country:
        rules = rules.filter(destination=country)
    context = {
        "rules": rules, "destination": country, "filter_errors": filters.errors.get("destination"),
        "destinations": selectors.tariff_rule_list().values_list("destination", flat=True)
        .distinct().order_by("destination"),
        "valuations": selectors.customs_valuation_rules(),
        "admin_url": reverse("admin:sourcing_tariffrule_changelist"),
    }  # fmt: skip
    return render(request, "sourcing/tariffs.html", context, status=400 if filters.errors else 200)
