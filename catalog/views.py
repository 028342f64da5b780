"""Catalog pages: lists with live filters, detail, compare, CSV export and import."""

from decimal import Decimal

from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from catalog import selectors
from catalog.csv_io import CatalogImportError, export_rows, read_csv_text
from catalog.filters import filter_form_class, filter_queryset, sort_queryset
from catalog.forms import CatalogUploadForm, CompareForm
from catalog.kinds import FIELD_LABELS, KINDS, CatalogKind
from catalog.models import CatalogImport
from catalog.services import catalog_import_create
from planner import jobs
from planner.charts import accelerator_compare_figure
from planner.permissions import member_required, staff_member_required
from planner.tenancy import org_object_or_404

UNIT_SUFFIXES = (
    ("_gbytes_per_s_per_direction", "GB/s per direction"),
    ("_usd_per_hour", "USD/h"),
    ("_per_hour", "USD/h"),
    ("_tflops", "TFLOPS"),
    ("_tops", "TOPS"),
    ("_tbps", "TB/s"),
    ("_gbps", "Gb/s"),
    ("_usd", "USD"),
    ("_kw", "kW"),
    ("_gb", "GB"),
    ("_tb", "TB"),
    ("_w", "W"),
    ("_b", "billion"),
)
HIDDEN_DETAIL_FIELDS = {"id", "notes", "source", "as_of", "updated_at", "slug"}


def display_cell(value) -> tuple[str, bool]:
    """Text for a table cell and whether it is a number (numbers align right).

    Money (Decimal) is rounded to cents only here, for display; floats lose trailing zeros.
    """
    if value is None or value == "":
        return "", False
    if isinstance(value, bool):
        return ("yes" if value else "no"), False
    if isinstance(value, Decimal):
        return f"{value:,.2f}", True
    if isinstance(value, int):
        return f"{value:,}", True
    if isinstance(value, float):
        if value.is_integer():
            return f"{int(value):,}", True
        return f"{value:,.4f}".rstrip("0").rstrip("."), True
    if hasattr(value, "isoformat"):
        return value.isoformat(), False
    return str(value), False


def _cell_value(row, attr: str):
    """A column's value, with a choice field's label ("On demand") instead of its key."""
    display = getattr(row, f"get_{attr}_display", None)
    return display() if display and getattr(row, attr) else getattr(row, attr)


def _kind_or_404(key: str) -> CatalogKind:
    try:
        return KINDS[key]
    except KeyError:
        raise Http404("No such catalog list.") from None


def _unit_for(field_name: str) -> str:
    for suffix, unit in UNIT_SUFFIXES:
        if field_name.endswith(suffix):
            return unit
    return ""


def _filtered(kind: CatalogKind, request: HttpRequest):
    base = selectors.catalog_queryset(kind)
    form = filter_form_class(kind, base)(request.GET or None)
    rows = base
    if form.is_bound and form.is_valid():
        rows = filter_queryset(kind, base, form.cleaned_data)
    rows, sort = sort_queryset(kind, rows, request.GET.get("sort", ""))
    return form, rows, sort


@member_required
@require_GET
def catalog_list(request: HttpRequest, kind_key: str) -> HttpResponse:
    """A catalog list; an htmx request gets only the results partial."""
    kind = _kind_or_404(kind_key)
    form, rows, sort = _filtered(kind, request)
    rows = list(rows)
    query = request.GET.copy()
    query.pop("sort", None)
    context = {
        "kind": kind,
        "kinds": KINDS.values(),
        "form": form,
        "table": [
            (
                getattr(row, kind.lookup),
                [display_cell(_cell_value(row, c.attr)) for c in kind.columns],
            )
            for row in rows
        ],
        "link_column": next(
            i for i, c in enumerate(kind.columns) if c.attr in ("name", "instance_type")
        ),
        "sort": sort,
        "query_without_sort": query.urlencode(),
        "total": selectors.catalog_queryset(kind).count(),
    }
    template = "catalog/list.html"
    if request.htmx and not request.htmx.boosted:
        template += "#results"
    return render(request, template, context)


@member_required
@require_GET
def catalog_export(request: HttpRequest, kind_key: str) -> HttpResponse:
    """The filtered list as CSV, in the same columns the import reads."""
    kind = _kind_or_404(kind_key)
    _, rows, _ = _filtered(kind, request)
    response = HttpResponse(export_rows(kind, rows), content_type="text/csv; charset=utf-8")
    stamp = timezone.now().strftime("%Y%m%d")
    response["Content-Disposition"] = f'attachment; filename="{kind.key}-{stamp}.csv"'
    return response


@member_required
@require_GET
def catalog_detail(request: HttpRequest, kind_key: str, lookup: str) -> HttpResponse:
    kind = _kind_or_404(kind_key)
    try:
        item = selectors.catalog_item_get(kind, lookup)
    except (ObjectDoesNotExist, ValueError, ValidationError):
        raise Http404(f"No such {kind.item_name}.") from None
    fields = []
    for model_field in kind.model._meta.fields:
        if model_field.name in HIDDEN_DETAIL_FIELDS:
            continue
        value = getattr(item, model_field.name)
        display = getattr(item, f"get_{model_field.name}_display", None)
        label = FIELD_LABELS.get(model_field.name)
        fields.append(
            {
                "label": label or model_field.verbose_name,
                "value": display() if display and value else value,
                "unit": "" if label else _unit_for(model_field.name),  # labels carry the unit
                "related": value if model_field.is_relation else None,
            }
        )
    context = {"kind": kind, "kinds": KINDS.values(), "item": item, "fields": fields}
    if kind.price_field:
        context["price_history"] = selectors.price_history(item, kind.price_field)
    if kind.key == "accelerators":
        context["servers"] = item.servers.all()
        context["offerings"] = item.cloud_offerings.order_by("usd_per_hour")
    return render(request, "catalog/detail.html", context)


@member_required
@require_GET
def catalog_compare(request: HttpRequest) -> HttpResponse:
    """2-4 accelerators side by side with a bandwidth-against-compute chart."""
    form = CompareForm(request.GET or None)
    context = {"form": form, "kinds": KINDS.values()}
    if form.is_bound and form.is_valid():
        accelerators = selectors.accelerators_by_slug(form.cleaned_data["a"])
        cheapest = selectors.cheapest_on_demand_by_accelerator([a.pk for a in accelerators])
        columns = []
        for accelerator in accelerators:
            offering = cheapest.get(accelerator.pk)
            bf16 = accelerator.bf16_dense_tflops
            columns.append(
                {
                    "accelerator": accelerator,
                    # Ops per byte at BF16: TFLOPS / (TB/s) = FLOP per byte (roofline ridge).
                    "ridge_flop_per_byte": (
                        bf16 / accelerator.memory_bandwidth_tbps if bf16 else None
                    ),
                    "cheapest_offering": offering,
                }
            )
        context["columns"] = columns
        context["figure_json"] = accelerator_compare_figure(
            accelerators, precision=form.cleaned_data["precision"]
        )
    return render(request, "catalog/compare.html", context)


@staff_member_required
@require_http_methods(["GET", "POST"])
def catalog_import_new(request: HttpRequest) -> HttpResponse:
    form = CatalogUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            text = read_csv_text(upload.read())
        except CatalogImportError as exc:
            form.add_error("file", str(exc))
        else:
            job = catalog_import_create(
                organisation=request.organisation,
                user=request.user,
                kind_key=form.cleaned_data["kind"],
                filename=upload.name,
                csv_text=text,
            )
            job.refresh_from_db()
            if job.queue_unavailable:
                messages.warning(request, jobs.QUEUE_UNAVAILABLE)
            else:
                messages.info(request, f"{upload.name} queued for import.")
            return redirect("catalog:import_detail", import_id=job.pk)
    imports = selectors.catalog_import_list(organisation=request.organisation)[:20]
    return render(
        request,
        "catalog/import.html",
        {"form": form, "imports": imports, "kinds": KINDS.values()},
        status=400 if form.is_bound and form.errors else 200,
    )


def _import_checked(request: HttpRequest, import_id: int) -> CatalogImport:
    """The organisation's import (or a 404); a running one whose worker stopped reporting is
    marked failed first, so every page of it tells the truth about the job."""
    job = org_object_or_404(
        request, CatalogImport.objects.select_related("created_by"), pk=import_id
    )
    jobs.job_expire_if_lost(job)
    return job


def _import_context(request: HttpRequest, job) -> dict:
    return {"job": job, "kinds": KINDS.values(), "can_retry": request.user.is_staff}


@member_required
@require_GET
def catalog_import_detail(request: HttpRequest, import_id: int) -> HttpResponse:
    job = _import_checked(request, import_id)
    return render(request, "catalog/import_detail.html", _import_context(request, job))


@staff_member_required
@require_POST
def catalog_import_retry(request: HttpRequest, import_id: int) -> HttpResponse:
    """Run an import again whose job failed or is stuck (not one whose rows were rejected)."""
    job = _import_checked(request, import_id)
    if job.error or jobs.job_is_stuck(job):
        jobs.job_retry(job)
        job.refresh_from_db()
    if job.queue_unavailable:
        messages.warning(request, jobs.QUEUE_UNAVAILABLE)
    return redirect("catalog:import_detail", import_id=job.pk)


@member_required
@require_GET
def catalog_import_status(request: HttpRequest, import_id: int) -> HttpResponse:
    """The polled status partial; answers 286 (stop polling) once the import has finished."""
    job = _import_checked(request, import_id)
    response = render(request, "catalog/import_detail.html#status", _import_context(request, job))
    if job.is_finished:
        stop = HttpResponseStopPolling(response.content)
        return stop
    return response
