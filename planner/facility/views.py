"""Pages of a plan's sites, placement and TCO. Thin: fetch through selectors, call services.

Every view first fetches the plan through ``org_object_or_404`` (the organisation's plan or a
404), then the object inside that plan. Viewers read; owners and consultants change.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from planner import freshness, jobs
from planner import selectors as plan_selectors
from planner.engine.errors import CatalogGapError
from planner.facility import charts, selectors, services
from planner.facility.deployment import physical_sites, plan_deployment
from planner.facility.forms import (
    PlacementChoiceForm,
    PlacementSettingsForm,
    SiteForm,
    SiteSplitForm,
    TcoSettingsForm,
)
from planner.facility.models import Site, TcoRun
from planner.permissions import can_edit, editor_required, member_required, require_editor
from planner.selectors import plans_with_client, workloads_with_choices
from planner.tenancy import org_object_or_404
from planner.versioning import StaleEditError

# --- Sites ------------------------------------------------------------------------------------


@member_required
@require_GET
def site_list_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    return _site_list_page(request, org_object_or_404(request, plans_with_client(), pk=plan_id))


def _split_forms(request, plan, deployment, bound) -> list:
    """One split form per workload of the deployment, for editors with two sites or more."""
    if not can_edit(request) or deployment is None or len(deployment.sites) < 2:
        return []
    workloads = {w.pk: w for w in plan_selectors.workload_list(plan=plan)}
    forms = []
    for choice in deployment.choices:
        if bound is not None and bound.workload.pk == choice.workload_id:
            forms.append(bound)
            continue
        workload = workloads[choice.workload_id]
        split = services.site_split_for_edit(workload=workload)
        forms.append(SiteSplitForm(workload=workload, sites=deployment.sites, record=split))
    return forms


def _site_list_page(request, plan, *, bound=None, status=200) -> HttpResponse:
    try:
        deployment, catalog_gap = plan_deployment(plan=plan), ""
    except CatalogGapError as gap:
        deployment, catalog_gap = None, str(gap)
    rows = [
        (site, services.site_evaluate(plan=plan, site=site, deployment=deployment))
        for site in selectors.site_list(plan=plan)
    ]
    return render(
        request,
        "facility/site_list.html",
        {
            "plan": plan,
            "rows": rows,
            "summary": services.deployment_summary(plan=plan),
            "deployments": deployment.per_workload if deployment else [],
            "deployment": deployment,
            "split_forms": _split_forms(request, plan, deployment, bound),
            # The TCO and BOM computed for another deployment than the one shown here.
            "stale_results": freshness.stale_upstream(plan),
            "catalog_gap": catalog_gap,
            "section": "sites",
            "can_edit": can_edit(request),
        },
        status=status,
    )


@editor_required
@require_POST
def site_split(request: HttpRequest, plan_id: int, workload_id: int) -> HttpResponse:
    """Set (or clear) how one workload's replicas are split over the plan's sites."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    workload = org_object_or_404(request, workloads_with_choices(), plan=plan, pk=workload_id)
    split = services.site_split_for_edit(workload=workload)
    sites = physical_sites(plan=plan)
    form = SiteSplitForm(request.POST, workload=workload, sites=sites, record=split)
    if form.is_valid():
        try:
            services.site_split_save(split=split, shares=form.shares())
        except StaleEditError as exc:
            form.add_stale_error(exc)
        else:
            how = "set by hand" if form.shares() else "back to its users' regions"
            messages.success(request, f"Split of {workload.name} {how}.{form.merge_note}")
            return redirect("facility:site_list", plan_id=plan.pk)
    return _site_list_page(request, plan, bound=form, status=400)


def _site_form(data, *, plan, site, **kwargs) -> SiteForm:
    """The site form in the plan's currency and the site's units."""
    return SiteForm(
        data,
        plan=plan,
        usd_rate=services.plan_usd_rate(plan),
        units=services.site_units_of(site),
        **kwargs,
    )


def _site_page(request, plan, form, site, evaluation, *, saved=None, status=200):
    context = {
        "plan": plan,
        "form": form,
        "site": site,
        "evaluation": evaluation,
        "saved": saved,
        "section": "sites",
        "can_edit": can_edit(request),
    }
    if request.htmx:
        return render(request, "facility/site.html#live", context)
    return render(request, "facility/site.html", context, status=status)


@editor_required
@require_http_methods(["GET", "POST"])
def site_create(request: HttpRequest, plan_id: int) -> HttpResponse:
    """A new site. With htmx every change previews the checks without saving."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    form = _site_form(request.POST or None, plan=plan, site=Site(plan=plan))
    evaluation = None
    if request.method == "POST":
        if form.is_valid():
            if not request.htmx:
                site = services.site_save(
                    plan=plan,
                    site=form.save(commit=False),
                    upgrades=form.cleaned_data["upgrades"],
                )
                messages.success(request, f"Site {site.name} added.")
                return redirect("facility:site_detail", plan_id=plan.pk, site_id=site.pk)
            site, upgrades = services.site_preview(
                plan=plan, site=form.save(commit=False), upgrades=form.cleaned_data["upgrades"]
            )
            evaluation = services.site_evaluate(plan=plan, site=site, upgrades=upgrades)
        return _site_page(request, plan, form, None, evaluation, status=400)
    return _site_page(request, plan, form, None, None)


@member_required
@require_http_methods(["GET", "POST"])
def site_detail(request: HttpRequest, plan_id: int, site_id: int) -> HttpResponse:
    """The site's checks, summary and rack elevations; editors change it in place (htmx
    saves each valid change and swaps the checks; without JavaScript the form posts)."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    site = org_object_or_404(request, selectors.sites_with_upgrades(), plan=plan, pk=site_id)
    if request.method == "POST":
        require_editor(request)
        form = _site_form(request.POST, plan=plan, site=site, instance=site)
        if form.is_valid():
            try:
                site = services.site_save(
                    plan=plan,
                    site=form.save(commit=False),
                    upgrades=form.cleaned_data["upgrades"],
                )
            except StaleEditError as exc:
                form.add_stale_error(exc)
            else:
                if not request.htmx:
                    messages.success(request, f"Site {site.name} saved.{form.merge_note}")
                    return redirect("facility:site_detail", plan_id=plan.pk, site_id=site.pk)
                form.refresh_version()  # the page's hidden version follows each autosave
                evaluation = services.site_evaluate(plan=plan, site=site)
                return _site_page(request, plan, form, site, evaluation, saved=True)
        # The form changed the instance; the checks show the saved one.
        site = org_object_or_404(request, selectors.sites_with_upgrades(), plan=plan, pk=site_id)
        evaluation = services.site_evaluate(plan=plan, site=site)
        return _site_page(request, plan, form, site, evaluation, saved=False, status=400)
    form = _site_form(None, plan=plan, site=site, instance=site)
    evaluation = services.site_evaluate(plan=plan, site=site)
    return _site_page(request, plan, form, site, evaluation)


@editor_required
@require_POST
def site_delete(request: HttpRequest, plan_id: int, site_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    site = org_object_or_404(request, selectors.sites_with_upgrades(), plan=plan, pk=site_id)
    services.site_delete(site=site)
    messages.success(request, f"Site {site.name} deleted.")
    return redirect("facility:site_list", plan_id=plan.pk)


# --- Placement --------------------------------------------------------------------------------


@member_required
@require_http_methods(["GET", "POST"])
def placement_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The scored comparison; editors set residency and budget, and record the choice."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    decision = (
        services.placement_decision_for_edit(plan=plan)
        if can_edit(request)
        else selectors.placement_decision_get(plan=plan)
    )
    workloads = list(plan_selectors.workload_list(plan=plan))
    rules = selectors.residency_rules(plan=plan)
    initial = {
        "network_share_pct": decision.network_share_pct,
        "control_requirement": decision.control_requirement,
    }
    action = request.POST.get("action") if request.method == "POST" else None
    settings_form = PlacementSettingsForm(
        request.POST if action == "settings" else None,
        initial=initial,
        workloads=workloads,
        rules=rules,
        record=decision,
    )
    evaluation = services.placement_evaluate(plan=plan, decision=decision)
    options = evaluation.result.options if evaluation.result else ()
    choice_form = PlacementChoiceForm(
        request.POST if action == "choose" else None,
        initial={"option": decision.chosen_key, "reason": decision.reason},
        options=options,
        record=decision,
    )
    status = 200
    if request.method == "POST":
        require_editor(request)
        try:
            if action == "settings" and settings_form.is_valid():
                services.placement_settings_save(
                    plan=plan,
                    network_share_pct=settings_form.cleaned_data["network_share_pct"],
                    control_requirement=settings_form.cleaned_data["control_requirement"],
                    residency=settings_form.residency_values(),
                    decision=decision,
                )
                messages.success(
                    request,
                    "Placement settings saved; the scores are updated." + settings_form.merge_note,
                )
                return redirect("facility:placement", plan_id=plan.pk)
            if action == "choose" and evaluation.result and choice_form.is_valid():
                decided = services.placement_choice_save(
                    plan=plan,
                    user=request.user,
                    option_key=choice_form.cleaned_data["option"],
                    reason=choice_form.cleaned_data["reason"],
                    evaluation=evaluation,
                    decision=decision,
                )
                messages.success(
                    request, f"Placement recorded: {decided.chosen_label}.{choice_form.merge_note}"
                )
                return redirect("facility:placement", plan_id=plan.pk)
        except StaleEditError as exc:
            (settings_form if action == "settings" else choice_form).add_stale_error(exc)
        status = 400
    return render(
        request,
        "facility/placement.html",
        {
            "plan": plan,
            "section": "placement",
            "decision": decision,
            "evaluation": evaluation,
            "settings_form": settings_form,
            "choice_form": choice_form,
            "can_edit": can_edit(request),
            "fresh": freshness.placement_freshness(plan),
        },
        status=status,
    )


# --- TCO --------------------------------------------------------------------------------------


def _tco_context(request, plan, state: services.TcoState) -> dict:
    run = state.run
    figures = {}
    if run is not None and run.status == "succeeded" and run.results:
        option = request.GET.get("option")
        figures = charts.tco_run_figures(run, stack_option=option)
    return {
        "plan": plan,
        "run": run,
        "stale": state.stale,
        "fresh": freshness.tco_freshness(plan, state=state),
        "not_ready": state.not_ready,
        "inputs": state.inputs if state.ready else None,
        "figures": figures,
        "section": "tco",
        "can_edit": can_edit(request),
    }


@member_required
@require_http_methods(["GET", "POST"])
def tco_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """TCO inputs, the latest run (progress or results with charts) and whether it is stale."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    settings = (
        services.tco_settings_for_edit(plan=plan)
        if can_edit(request)
        else selectors.tco_settings_get(plan=plan)
    )
    form = TcoSettingsForm(
        request.POST or None, instance=settings, usd_rate=services.plan_usd_rate(plan)
    )
    status = 200
    if request.method == "POST":
        require_editor(request)
        if form.is_valid():
            try:
                services.tco_settings_save(
                    plan=plan, settings=form.save(commit=False), changed=form.has_changed()
                )
            except StaleEditError as exc:
                form.add_stale_error(exc)
            else:
                messages.success(
                    request, "TCO inputs saved. Run the TCO to see their effect." + form.merge_note
                )
                return redirect("facility:tco", plan_id=plan.pk)
        status = 400
    state = services.tco_state(plan=plan)
    context = _tco_context(request, plan, state) | {
        "form": form,
        "summary": services.deployment_summary(plan=plan),
    }
    return render(request, "facility/tco.html", context, status=status)


@editor_required
@require_POST
def tco_run(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Queue a TCO run for the plan's current inputs (or reuse the run with the same hash)."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    try:
        run, created = services.tco_run_request(plan=plan, user=request.user)
    except services.TcoNotReady as exc:
        messages.error(request, str(exc))
        return redirect("facility:tco", plan_id=plan.pk)
    run.refresh_from_db()
    if run.queue_unavailable:
        messages.warning(request, jobs.QUEUE_UNAVAILABLE)
    elif not created:
        messages.info(
            request,
            "The plan's inputs have not changed since the last run: showing that run "
            "instead of computing it again.",
        )
    return redirect("facility:tco", plan_id=plan.pk)


@member_required
@require_GET
def tco_status(request: HttpRequest, plan_id: int, run_id: int) -> HttpResponse:
    """The polled run partial; answers 286 (stop polling) once the run has finished."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    run = org_object_or_404(request, TcoRun, plan=plan, pk=run_id)
    jobs.job_expire_if_lost(run)
    state = services.tco_state(plan=plan).of_run(run)
    # A finished run also replaces the page's "TCO run queued" notice (out of band).
    context = _tco_context(request, plan, state) | {"finished_notice": True}
    response = render(request, "facility/tco.html#run", context)
    if run.is_finished:
        return HttpResponseStopPolling(response.content)
    return response
