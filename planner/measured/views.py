"""Pages of a workload's load tests: attach a sweep, see it against the model, remove it.

Thin: fetch the workload through ``org_object_or_404`` (the organisation's or a 404), then call
:mod:`planner.measured.services`. Viewers read; owners and consultants change.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseClientRefresh

from catalog.models import Accelerator
from catalog.selectors import catalog_version_pinned
from planner import jobs, sizing
from planner.engine.load_test import (
    MAX_ERROR_RATE,
    TOOLS,
    LoadTestFormatError,
    measured_replicas,
    model_correction,
)
from planner.facility.services import plan_shown_in
from planner.measured import charts, logs, notices, services
from planner.measured.forms import RetentionForm, SweepUploadForm, TrafficLogForm
from planner.measured.models import (
    FleetNotice,
    LoadTestImport,
    LoadTestSweep,
    LogColumnMapping,
    MeasuredSettings,
    TrafficLogImport,
)
from planner.permissions import can_edit, editor_required, member_required, require_editor
from planner.selectors import workloads_with_choices
from planner.tenancy import org_object_or_404
from planner.versioning import StaleEditError


@member_required
@require_http_methods(["GET", "POST"])
def measurements_view(request: HttpRequest, plan_id: int, workload_id: int) -> HttpResponse:
    """The workload's load tests and the form that attaches one to a candidate."""
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    initial = {}
    key = request.GET.get("candidate", "")
    if key.count("|") == 2:
        slug, precision, tp = key.split("|")
        initial = {"precision": precision, "tensor_parallel": tp}
        accelerator = Accelerator.objects.filter(slug=slug).first()
        if accelerator is not None:
            initial["accelerator"] = accelerator.pk
    else:
        initial = {"precision": workload.precision}
    form = SweepUploadForm(request.POST or None, request.FILES or None, initial=initial)
    status = 200
    if request.method == "POST":
        require_editor(request)
        if form.is_valid():
            files = form.cleaned_data["files"]
            data = form.cleaned_data
            try:
                if sum(f.size for f in files) > services.INLINE_SWEEP_BYTES:
                    job = services.sweep_import_request(
                        workload=workload, files=files, user=request.user,
                        candidate={k: data[k] for k in (
                            "accelerator", "precision", "tensor_parallel", "serving_stack",
                            "stack_version", "measured_on",
                        )},
                    )  # fmt: skip
                    return redirect(
                        "measured:sweep_import", plan_id=plan_id, workload_id=workload.pk,
                        job_id=job.pk,
                    )  # fmt: skip
                test = services.read_files(files)
            except LoadTestFormatError as exc:
                form.add_error("files", str(exc))
            else:
                with catalog_version_pinned():
                    sweep = services.sweep_attach(
                        workload=workload,
                        test=test,
                        file_names=[f.name for f in files],
                        accelerator=form.cleaned_data["accelerator"],
                        precision=form.cleaned_data["precision"],
                        tensor_parallel=form.cleaned_data["tensor_parallel"],
                        serving_stack=form.cleaned_data["serving_stack"],
                        stack_version=form.cleaned_data["stack_version"],
                        measured_on=form.cleaned_data["measured_on"],
                        user=request.user,
                    )
                messages.success(request, f"Load test attached ({len(test.points)} points).")
                return redirect(
                    "measured:sweep_detail", plan_id=plan_id, workload_id=workload.pk,
                    sweep_id=sweep.pk,
                )  # fmt: skip
        status = 400
    with catalog_version_pinned():
        measurements = services.workload_measurements(workload)
    return render(
        request,
        "measured/measurements.html",
        {
            "plan": workload.plan,
            "workload": workload,
            "section": "overview",
            "form": form,
            "measurements": list(measurements.values()),
            "tools": list(TOOLS.values()),
            "max_error_pct": f"{MAX_ERROR_RATE * 100:g}",
            "can_edit": can_edit(request),
        },
        status=status,
    )


def _replicas(workload, candidate):
    return candidate.replicas if candidate is not None and candidate.feasible else None


@member_required
def sweep_detail_view(
    request: HttpRequest, plan_id: int, workload_id: int, sweep_id: int
) -> HttpResponse:
    """One sweep: its capacity at the target, replicas measured and modelled, the model's error."""
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    sweep = org_object_or_404(
        request, LoadTestSweep.objects.select_related("accelerator"), workload=workload, pk=sweep_id
    )
    with catalog_version_pinned():
        measurement = services.workload_measurements(workload)[sweep.candidate_key]
        rows = services.comparison(workload, sweep)
        key = sweep.candidate_key
        modelled = sizing.candidate_find(
            sizing.workload_sweep(workload, all_precisions=True, measured=False), key
        )
        measured = sizing.candidate_find(sizing.workload_sweep(workload, all_precisions=True), key)
    plan_by_measurement = None
    capacity = measurement.capacity
    has_peak = workload.peak_concurrency or workload.peak_requests_per_s
    if capacity.feasible and has_peak and modelled is not None:
        plan_by_measurement = measured_replicas(
            capacity,
            tensor_parallel=sweep.tensor_parallel,
            accelerators_per_server=modelled.accelerators_per_server,
            peak_concurrency=workload.peak_concurrency,
            peak_requests_per_s=workload.peak_requests_per_s,
            headroom_pct=float(workload.headroom_pct),
            n_plus_one=workload.n_plus_one,
        )
    return render(
        request,
        "measured/sweep_detail.html",
        {
            "plan": workload.plan,
            "workload": workload,
            "section": "overview",
            "sweep": sweep,
            "measurement": measurement,
            "usd_shown": plan_shown_in(workload.plan),  # cloud rates: catalog USD → plan's
            "rows": rows,
            "figure": charts.measured_vs_modelled_figure(rows) if rows else None,
            "modelled": modelled,
            "measured": measured,
            "modelled_replicas": _replicas(workload, modelled),
            "plan_by_measurement": plan_by_measurement,
            "correction": model_correction(rows) if rows else None,
            "max_error_pct": f"{MAX_ERROR_RATE * 100:g}",
            "can_edit": can_edit(request),
        },
    )


@editor_required
@require_POST
def sweep_correction_view(
    request: HttpRequest, plan_id: int, workload_id: int, sweep_id: int
) -> HttpResponse:
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    sweep = org_object_or_404(
        request, LoadTestSweep.objects.select_related("accelerator"), workload=workload, pk=sweep_id
    )
    enabled = request.POST.get("enabled") == "1"
    with catalog_version_pinned():
        services.sweep_set_correction(sweep, enabled, user=request.user)
    messages.success(
        request,
        "Neighbouring candidates now use the measured correction."
        if enabled
        else "Neighbouring candidates are modelled again.",
    )
    return redirect(
        "measured:sweep_detail", plan_id=plan_id, workload_id=workload_id, sweep_id=sweep.pk
    )


@editor_required
@require_POST
def sweep_delete_view(
    request: HttpRequest, plan_id: int, workload_id: int, sweep_id: int
) -> HttpResponse:
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    sweep = org_object_or_404(
        request, LoadTestSweep.objects.select_related("accelerator"), workload=workload, pk=sweep_id
    )
    with catalog_version_pinned():
        services.sweep_delete(sweep, user=request.user)
    messages.success(request, "Load test removed; the candidate is modelled again.")
    return redirect("measured:measurements", plan_id=plan_id, workload_id=workload_id)


@editor_required
@require_POST
def fleet_notice_dismiss_view(request: HttpRequest, plan_id: int, notice_id: int) -> HttpResponse:
    """Take a fleet-change notice off the overview (the plan's history keeps it)."""
    notice = org_object_or_404(request, FleetNotice.objects.all(), plan_id=plan_id, pk=notice_id)
    notices.fleet_notice_dismiss(notice=notice, user=request.user)
    if request.htmx:
        return HttpResponse("")  # the notice is swapped out
    return redirect("plan_detail", plan_id=plan_id)


def _retention_form(request: HttpRequest, data=None) -> RetentionForm | None:
    if not (request.membership and request.membership.role == "owner"):
        return None
    row, _ = MeasuredSettings.objects.get_or_create(organisation=request.organisation)
    return RetentionForm(data, instance=row)


@member_required
@require_http_methods(["GET", "POST"])
def logs_view(request: HttpRequest, plan_id: int, workload_id: int) -> HttpResponse:
    """The workload's traffic logs and the upload form with its column mapping."""
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    logs.logs_purge_expired(organisation=request.organisation)
    saved = LogColumnMapping.objects.filter(organisation=request.organisation)
    form = TrafficLogForm(request.POST or None, request.FILES or None, saved=saved)
    retention = _retention_form(request)
    status = 200
    if request.method == "POST":
        require_editor(request)
        if "raw_log_retention_days" in request.POST and retention is not None:
            retention = _retention_form(request, request.POST)
            if retention.is_valid():
                try:
                    retention.save()
                except StaleEditError as exc:
                    retention.add_stale_error(exc)
                else:
                    messages.success(request, "Retention saved.")
                    return redirect("measured:logs", plan_id=plan_id, workload_id=workload.pk)
            form = TrafficLogForm(saved=saved)
        elif form.is_valid():
            data = form.cleaned_data
            if data["save_as"]:
                LogColumnMapping.objects.update_or_create(
                    organisation=request.organisation, name=data["save_as"],
                    defaults={"log_format": data["fmt"], "columns": data["columns"]},
                )  # fmt: skip
            job = logs.log_import_request(
                workload=workload, upload=data["file"], log_format=data["fmt"],
                columns=data["columns"], user=request.user,
            )  # fmt: skip
            return redirect(
                "measured:log_detail", plan_id=plan_id, workload_id=workload.pk, job_id=job.pk
            )
        status = 400
    return render(
        request,
        "measured/logs.html",
        {
            "plan": workload.plan,
            "workload": workload,
            "section": "overview",
            "form": form,
            "retention": retention,
            "imports": TrafficLogImport.objects.filter(
                organisation=request.organisation, workload=workload
            ),
            "note": logs.workload_traffic_note(workload),
            "can_edit": can_edit(request),
        },
        status=status,
    )


@member_required
@require_http_methods(["GET", "POST"])
def log_detail_view(request: HttpRequest, plan_id: int, workload_id: int, job_id: int):
    """One import: its progress, or its figures and charts per request type; fill the workload."""
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    job = org_object_or_404(request, TrafficLogImport, workload=workload, pk=job_id)
    jobs.job_expire_if_lost(job)
    error = ""
    if request.method == "POST":
        require_editor(request)
        try:
            with catalog_version_pinned():
                logs.log_apply(
                    job=job, request_type=request.POST.get("request_type", ""), user=request.user
                )
        except ValueError as exc:
            error = f"Not filled: {exc}."
        else:
            messages.success(request, logs.workload_traffic_note(workload))
            return redirect("workload_sizing", plan_id=plan_id, workload_id=workload.pk)
    chosen = request.GET.get("type") or ("all" if "all" in job.result else "")
    profile = job.result.get(chosen)
    figures = {}
    if profile:
        figures = {
            "traffic-input": charts.length_histogram_figure(
                profile["input_histogram"], what="input"
            ),
            "traffic-output": charts.length_histogram_figure(
                profile["output_histogram"], what="output"
            ),
            "traffic-daily": charts.daily_profile_figure(profile["daily_profile"]),
        }
        if profile["weekly_requests"]:
            figures["traffic-weekly"] = charts.weekly_figure(profile["weekly_requests"])
    context = {
        "plan": workload.plan,
        "workload": workload,
        "section": "overview",
        "job": job,
        "types": sorted(job.result),
        "chosen": chosen,
        "profile": profile,
        "period": logs.period(profile) if profile else "",
        "shares": logs.region_shares(profile) if profile else {},
        "figures": figures,
        "error": error,
        "can_edit": can_edit(request),
    }
    if request.htmx and not job.is_finished:
        return render(request, "measured/log_detail.html#status", context)
    if request.htmx:
        return HttpResponseClientRefresh()
    return render(request, "measured/log_detail.html", context, status=400 if error else 200)


@member_required
def sweep_import_view(request: HttpRequest, plan_id: int, workload_id: int, job_id: int):
    """A large sweep being read by a worker: its progress, then its sweep or its problem."""
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    job = org_object_or_404(request, LoadTestImport, workload=workload, pk=job_id)
    jobs.job_expire_if_lost(job)
    if job.sweep_id and job.status == "succeeded":
        target = reverse("measured:sweep_detail", args=[plan_id, workload.pk, job.sweep_id])
        if request.htmx:
            return HttpResponseClientRedirect(target)
        return redirect(target)
    context = {"plan": workload.plan, "workload": workload, "section": "overview", "job": job}
    if request.htmx:
        return render(request, "measured/sweep_import.html#status", context)
    return render(request, "measured/sweep_import.html", context)
