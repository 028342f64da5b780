"""Clients and plans: list, create, edit, and the plan's overview page."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from planner import freshness, labels, selectors
from planner.facility.services import deployment_summary
from planner.forms import ClientForm, PlanFileForm, PlanForm
from planner.measured.notices import open_fleet_notices
from planner.models import Client
from planner.permissions import can_edit, editor_required, member_required, require_editor
from planner.portable import plan_export_json
from planner.selectors import plans_with_client
from planner.services import plan_save
from planner.tenancy import org_object_or_404
from planner.versioning import StaleEditError


def _status(form) -> int:
    return 400 if form.is_bound and form.errors else 200


@member_required
@require_http_methods(["GET", "POST"])
def client_list_view(request: HttpRequest) -> HttpResponse:
    form = ClientForm(request.POST or None, organisation=request.organisation)
    if request.method == "POST":
        require_editor(request)
        if form.is_valid():
            client = form.save(commit=False)
            client.organisation = request.organisation
            client.save()
            messages.success(request, f"Client {client} added.")
            return redirect("client_list")
    clients = selectors.client_list(organisation=request.organisation)
    return render(
        request, "planner/clients.html", {"form": form, "clients": clients}, status=_status(form)
    )


@editor_required
@require_http_methods(["GET", "POST"])
def client_edit(request: HttpRequest, client_id: int) -> HttpResponse:
    client = org_object_or_404(request, Client, pk=client_id)
    form = ClientForm(request.POST or None, instance=client, organisation=request.organisation)
    if request.method == "POST" and form.is_valid():
        try:
            form.save()
        except StaleEditError as exc:
            form.add_stale_error(exc)
        else:
            messages.success(request, f"Client {client} saved.{form.merge_note}")
            return redirect("client_list")
    return render(
        request, "planner/client_edit.html", {"form": form, "client": client}, status=_status(form)
    )


@member_required
def plan_list_view(request: HttpRequest) -> HttpResponse:
    form = None
    if can_edit(request):  # viewers get no import form
        form = PlanFileForm(organisation=request.organisation, user=request.user)
    return _plan_list_render(request, form)


def _plan_list_render(request: HttpRequest, import_form: PlanFileForm | None) -> HttpResponse:
    plans = selectors.plan_list(organisation=request.organisation)
    return render(
        request,
        "planner/plans.html",
        {"plans": plans, "import_form": import_form},
        status=_status(import_form) if import_form is not None else 200,
    )


@editor_required
@require_POST
def plan_import_view(request: HttpRequest) -> HttpResponse:
    """A plan file uploaded on the plans list, rebuilt as a new plan (all or nothing)."""
    form = PlanFileForm(
        request.POST, request.FILES, organisation=request.organisation, user=request.user
    )
    plan = form.save() if form.is_valid() else None
    if plan is None:
        return _plan_list_render(request, form)
    messages.success(request, f"Plan file imported as {plan.name}.")
    return redirect("plan_detail", plan_id=plan.pk)


@member_required
@require_GET
def plan_export_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The plan's portable file, as a download named after the plan and today's date."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    filename = f"{slugify(plan.name) or 'plan'}-{timezone.localdate().isoformat()}.json"
    response = HttpResponse(plan_export_json(plan), content_type="application/json")
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


@editor_required
@require_http_methods(["GET", "POST"])
def plan_create(request: HttpRequest) -> HttpResponse:
    form = PlanForm(request.POST or None, organisation=request.organisation)
    if request.method == "POST" and form.is_valid():
        plan = plan_save(
            plan=form.save(commit=False),
            new_client=form.cleaned_data.get("new_client") or "",
            organisation=request.organisation,
            user=request.user,
        )
        messages.success(request, f"Plan {plan.name} created. Add its workloads next.")
        return redirect("plan_detail", plan_id=plan.pk)
    return render(
        request, "planner/plan_form.html", {"form": form, "plan": None}, status=_status(form)
    )


@editor_required
@require_http_methods(["GET", "POST"])
def plan_edit(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    form = PlanForm(request.POST or None, instance=plan, organisation=request.organisation)
    if request.method == "POST" and form.is_valid():
        try:
            plan_save(
                plan=form.save(commit=False),
                new_client=form.cleaned_data.get("new_client") or "",
                organisation=request.organisation,
                user=request.user,
            )
        except StaleEditError as exc:
            form.add_stale_error(exc)
        else:
            messages.success(request, "Plan saved." + form.merge_note)
            return redirect("plan_detail", plan_id=plan.pk)
    return render(
        request, "planner/plan_form.html", {"form": form, "plan": plan}, status=_status(form)
    )


@member_required
def plan_detail(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The plan's overview: its workloads and what has been chosen for each."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    workloads = selectors.workload_list(plan=plan)
    summary = deployment_summary(plan=plan)
    context = {
        "plan": plan,
        "workloads": workloads,
        "section": "overview",
        "summary": summary,
        # Beside each workload's own need: the deployment pools them (never their sum).
        "pooled_into": labels.pooled_into(summary.servers) if summary.deployment else "",
        "stale_results": freshness.stale_upstream(plan, chosen=True),
        "fleet_notices": open_fleet_notices(plan=plan),
    }
    return render(request, "planner/plan_detail.html", context)
