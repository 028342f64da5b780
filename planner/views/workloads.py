"""Workloads of a plan and their sizing: candidates, explanation, choice, charts."""

from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from catalog.models import Accelerator
from catalog.selectors import catalog_version_pinned
from planner import charts, freshness, sizing
from planner.cost_target import cost_target_compare
from planner.engine import limits
from planner.engine.errors import CatalogGapError, EngineInputError
from planner.engine.sweep import cost_order
from planner.facility.deployment import workload_deployments
from planner.facility.services import plan_shown_in
from planner.labels import SERVING_STACK_CHOICES, workload_stack_label
from planner.models import Workload, WorkloadKind
from planner.permissions import can_edit, editor_required, member_required, require_editor
from planner.selectors import plans_with_client, workloads_with_choices
from planner.tenancy import org_object_or_404
from planner.traffic_forms import TrafficPreviewForm
from planner.versioning import StaleEditError
from planner.workload_forms import WorkloadForm

SORTS = {
    "cost": cost_order,  # the engine's one ranking, the same as the "cheapest" badge's
    "accelerators": lambda c: (c.accelerators is None, c.accelerators or 0),
    "throughput": lambda c: -c.output_tokens_per_s_per_replica,
    "ttft": lambda c: (c.ttft_ms is None, c.ttft_ms or 0),
    "tpot": lambda c: (c.tpot_ms is None, c.tpot_ms or 0),
    "batch": lambda c: -c.batch_per_replica,
}
# The sizing table's toggles and sort, carried together by every link, autosave and choice.
TABLE_PARAMS = ("show", "precisions", "tp", "sort", "stacks")


def _table_params(request: HttpRequest) -> QueryDict:
    """The table's toggles: from the query string, or, for an htmx request that carries none
    (the workload form's autosave, a row's detail), from the page's URL, where the toggles
    push their state; so a change of the workload keeps the table as the consultant set it."""
    if any(name in request.GET for name in TABLE_PARAMS) or not request.htmx:
        return request.GET
    return QueryDict(urlsplit(request.htmx.current_url or "").query)


def _table_query(params: QueryDict) -> str:
    """``?show=all&tp=all`` for the toggles that are set, or ``""``."""
    kept = {name: params[name] for name in TABLE_PARAMS if params.get(name)}
    return f"?{urlencode(kept)}" if kept else ""


def short_name(name: str) -> str:
    """The accelerator's name without the parenthesised note ("B200 (HGX/DGX, per GPU)")."""
    return name.split(" (")[0]


def _bad_request_status(request: HttpRequest, form) -> int:
    """400 for a full-page post with errors; 200 for htmx, which only swaps 2xx answers."""
    if form.is_bound and form.errors and not request.htmx:
        return 400
    return 200


@editor_required
@require_http_methods(["GET", "POST"])
def workload_add(request: HttpRequest, plan_id: int) -> HttpResponse:
    """A new workload; choosing a use case fills lengths and targets from its preset."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    kind = request.GET.get("kind") or request.POST.get("preset") or WorkloadKind.CHAT
    if kind not in WorkloadKind.values:
        kind = WorkloadKind.CHAT
    initial = {"kind": kind, "name": WorkloadKind(kind).label, **WorkloadForm.preset_initial(kind)}
    applying_preset = "apply_preset" in request.POST
    form = WorkloadForm(
        None if applying_preset or request.method == "GET" else request.POST,
        instance=Workload.new_in(plan),
        initial=initial,
    )
    if request.method == "POST" and not applying_preset and form.is_valid():
        workload = form.save()
        messages.success(request, f"{workload.name} added. Pick a configuration below.")
        target = reverse("workload_sizing", args=[plan.pk, workload.pk])
        return HttpResponseClientRedirect(target) if request.htmx else redirect(target)
    context = {"plan": plan, "form": form, "section": "overview", "kinds": WorkloadKind.choices}
    template = "planner/workload_add.html"
    if request.htmx and request.method == "GET":
        template += "#add-form"
    return render(request, template, context, status=_bad_request_status(request, form))


@member_required
@require_POST
def traffic_preview(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The traffic helper's answer for the figures typed so far (nothing is saved).

    The add-workload and sizing pages post their form here as the helper is typed (htmx) and
    swap the answer in; a problem with a helper field is said in the answer.
    """
    org_object_or_404(request, plans_with_client(), pk=plan_id)
    form = TrafficPreviewForm(request.POST)
    form.is_valid()
    return render(request, "planner/_traffic_result.html", {"form": form, "preview": True})


@editor_required
@require_POST
def workload_delete(request: HttpRequest, plan_id: int, workload_id: int) -> HttpResponse:
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    name = workload.name
    workload.delete()
    if request.htmx:
        return HttpResponse("")  # the row is swapped out
    messages.success(request, f"{name} removed.")
    return redirect("plan_detail", plan_id=plan_id)


def _sizing_context(request: HttpRequest, workload: Workload, form) -> dict:
    params = _table_params(request)
    all_precisions = params.get("precisions") == "all"
    show = params.get("show") or "feasible"
    every_tp = params.get("tp") == "all"
    sort = params.get("sort") or "cost"
    compare_stacks = params.get("stacks") == "all"
    result = sizing.workload_sweep(
        workload, all_precisions=all_precisions, compare_stacks=compare_stacks
    )
    candidates = list(result.candidates)
    feasible_count = len(result.feasible)
    if show == "feasible":
        candidates = [c for c in candidates if c.feasible]
    if sort in SORTS:
        feasible = sorted((c for c in candidates if c.feasible), key=SORTS[sort])
        candidates = feasible + [c for c in candidates if not c.feasible]
    chosen_key = sizing.chosen_key(workload)
    if not every_tp:
        # One row per accelerator, precision and serving kind: its first (best by the sort)
        # configuration, and the chosen configuration's row always, so that it can be seen
        # and re-chosen.
        seen: set[tuple[str, str, bool, bool, str]] = set()
        kept = []
        for c in candidates:
            # A candidate sized by a load test (planner.measured) keeps its own row.
            measured = (c.provenance or "").startswith("measured")
            group = (c.accelerator_slug, c.precision, c.feasible, measured, c.serving,
                     c.serving_stack)  # fmt: skip
            if group not in seen or sizing.candidate_key(c) == chosen_key:
                seen.add(group)
                kept.append(c)
        candidates = kept
    chosen_row = next((c for c in candidates if sizing.candidate_key(c) == chosen_key), None)
    selected_key = (
        request.GET.get("candidate")
        or chosen_key
        or (sizing.candidate_key(result.best) if result.best else None)
    )
    selected = sizing.candidate_find(result, selected_key) if selected_key else None
    context = {
        "plan": workload.plan,
        "workload": workload,
        "form": form,
        "section": "overview",
        "candidates": [
            (sizing.candidate_key(c), c, short_name(c.accelerator_name)) for c in candidates
        ],
        "every_tp": "all" if every_tp else "",
        "cloud_only": {
            slug
            for slug, spec in sizing.accelerator_specs().items()
            if spec.vendor in Accelerator.CLOUD_ONLY_VENDORS
        },
        # Reversed once, not once per row: the table is on the hot path of every change.
        "detail_url_prefix": reverse(
            "candidate_detail", args=[workload.plan_id, workload.pk, "KEY"]
        ).removesuffix("KEY/"),
        "choose_url": reverse("workload_choose", args=[workload.plan_id, workload.pk])
        + _table_query(params),
        "rechoose": _rechoose(workload, chosen_row),
        "table_query": _table_query(params),
        "can_edit": can_edit(request),
        "feasible_count": feasible_count,
        "fleet_warning": _fleet_warning(result.feasible),
        "total_count": len(result.candidates),
        "best_key": sizing.candidate_key(result.best) if result.best else None,
        "chosen_key": chosen_key,
        "show": show,
        "sort": sort,
        "precisions": "all" if all_precisions else "",
        "stacks": "all" if compare_stacks else "",
        "stack_label": workload_stack_label(workload),
        "target": sizing.engine_workload(workload),
        "network": sizing.workload_network_delay(workload),
        "usd_shown": plan_shown_in(workload.plan),
    }
    context.update(_detail_context(workload, selected, context["usd_shown"]))
    if chosen_key and workload.has_choice:
        chosen = sizing.candidate_find(result, chosen_key)
        context["chosen_second_opinion_url"] = _second_opinion_url(workload, chosen, line=True)
    return context


def _second_opinion_url(workload: Workload, candidate, *, line: bool = False) -> str | None:
    """Where the page loads the peer's figures for ``candidate`` after it is shown (None when
    switched off or infeasible): the peer's first call on a GPU system takes seconds, so the
    page and its autosave never wait for it."""
    if not settings.SECOND_OPINION or candidate is None or not candidate.feasible:
        return None
    url = reverse(
        "candidate_second_opinion",
        args=[workload.plan_id, workload.pk, sizing.candidate_key(candidate)],
    )
    return f"{url}?line=chosen" if line else url


def _rechoose(workload: Workload, row) -> bool:
    """Whether the chosen configuration's stored fleet differs from its row in the table (the
    inputs, the catalog or a load test changed since it was planned): choosing it again stores
    the row's figures."""
    if row is None or not row.feasible:
        return False
    stored = (workload.chosen_replicas, workload.chosen_accelerators, workload.chosen_servers)
    return stored != (row.replicas, row.accelerators, row.servers)


def _fleet_warning(feasible) -> int | None:
    """The smallest feasible fleet when it is larger than any cluster built (a typo?)."""
    smallest = min((c.accelerators for c in feasible if c.accelerators), default=None)
    return smallest if smallest and smallest > limits.FLEET_ACCELERATORS_WARN else None


def _detail_context(workload: Workload, candidate, usd_shown=None) -> dict:
    # Cloud-rate prices are the catalog's USD; the page shows them in the plan's currency.
    usd_shown = usd_shown or plan_shown_in(workload.plan)
    if candidate is None:
        return {"detail": None, "usd_shown": usd_shown}
    detail = sizing.candidate_detail(workload, candidate)
    context = {
        "detail": detail,
        "usd_shown": usd_shown,
        "selected_key": sizing.candidate_key(candidate),
        "memory_figure": charts.memory_breakdown_figure(detail),
        "second_opinion_url": _second_opinion_url(workload, candidate),
    }
    target = sizing.engine_workload(workload)
    if detail.batch_curve:
        context["latency_figure"] = charts.latency_throughput_figure(
            detail, ttft_target_ms=target.ttft_ms, tpot_target_ms=target.tpot_ms
        )
    if candidate.feasible and (workload.peak_concurrency or workload.peak_requests_per_s):
        # The autoscaling bounds are this chart's fewest and most replicas (one computation).
        by_hour = (
            detail.autoscaling.replicas_by_hour
            if detail.autoscaling is not None
            else sizing.replicas_by_hour(workload, candidate)
        )
        context["replicas_figure"] = charts.replicas_by_hour_figure(list(by_hour))
    return context


@member_required
@require_http_methods(["GET", "POST"])
def workload_sizing(request: HttpRequest, plan_id: int, workload_id: int) -> HttpResponse:
    """The workload's form beside its candidates; every valid change recomputes at once."""
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    if request.method == "POST":
        require_editor(request)
    form = WorkloadForm(request.POST or None, instance=workload)
    with catalog_version_pinned():
        saved = False
        if request.method == "POST" and form.is_valid():
            try:
                # re-plans the chosen replicas
                workload = sizing.workload_save(workload=form.save(commit=False))
            except StaleEditError as exc:
                form.add_stale_error(exc)
            else:
                saved = True
        if saved:
            if not request.htmx:
                messages.success(
                    request, "Workload saved; candidates recomputed." + form.merge_note
                )
                if workload.chosen_problem:
                    messages.error(request, workload.chosen_problem)
                url = reverse("workload_sizing", args=[plan_id, workload.pk])
                return redirect(url + _table_query(request.GET))
            form.refresh_version()  # the page's hidden version follows each autosave
        elif request.method == "POST":
            # Keep the stored workload for the candidates; the form keeps what was typed.
            workload.refresh_from_db()
        try:
            context = _sizing_context(request, workload, form)
            if not request.htmx:  # the TCO's staleness check is too dear for every autosave
                context["cost_target"] = cost_target_compare(plan=workload.plan, workload=workload)
                # Its cost per request is the TCO's: the TCO's banner when that run is stale
                # (asked only then, so a current plan's page reads nothing more).
                if context["cost_target"].stale:
                    context["stale_results"] = [freshness.tco_freshness(workload.plan)]
        except EngineInputError as exc:
            # A stored value outside today's ranges (saved before they existed): say which.
            context = {
                "plan": workload.plan,
                "workload": workload,
                "form": form,
                "section": "overview",
                "sizing_error": str(exc),
                "candidates": [],
            }
    chosen = freshness.chosen_freshness(workload)
    context["fresh"] = chosen if chosen.state == freshness.STALE else None  # failed: shown below
    template = "planner/workload_sizing.html"
    if request.htmx and request.htmx.target in ("sizing-results", "candidates"):
        template += "#results"
    return render(request, template, context, status=_bad_request_status(request, form))


@member_required
def candidate_detail_view(
    request: HttpRequest, plan_id: int, workload_id: int, key: str
) -> HttpResponse:
    """Why one candidate is (in)feasible; htmx swaps it into the detail panel."""
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    all_precisions = key.split("|")[1:2] != [workload.precision]
    with catalog_version_pinned():
        result = sizing.workload_sweep(
            workload,
            all_precisions=all_precisions,
            compare_stacks=sizing.is_compared_key(key),
        )
        candidate = sizing.candidate_find(result, key)
        if candidate is None:
            raise Http404("No such candidate.")
        if not request.htmx:
            url = reverse("workload_sizing", args=[plan_id, workload_id])
            return redirect(f"{url}?candidate={key}&show=all&precisions=all#detail")
        detail = _detail_context(workload, candidate)
    context = {"workload": workload, "plan": workload.plan, **detail}
    context["chosen_key"] = sizing.chosen_key(workload)
    context["table_query"] = _table_query(_table_params(request))
    return render(request, "planner/workload_sizing.html#detail", context)


@member_required
@require_http_methods(["GET"])
def candidate_second_opinion_view(
    request: HttpRequest, plan_id: int, workload_id: int, key: str
) -> HttpResponse:
    """aiconfigurator's figures beside the planner's for one candidate: the detail panel's
    section, or with ``?line=chosen`` the chosen configuration's one-line summary. Loaded by
    htmx once the panel is shown; without JavaScript a link opens it."""
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    with catalog_version_pinned():
        result = sizing.workload_sweep(
            workload,
            all_precisions=key.split("|")[1:2] != [workload.precision],
            compare_stacks=sizing.is_compared_key(key),
        )
        candidate = sizing.candidate_find(result, key)
        if candidate is None or not candidate.feasible:
            raise Http404("No such feasible candidate.")
        opinion = sizing.candidate_second_opinion(workload, candidate)
    if opinion is None:
        raise Http404("The second opinion is switched off.")
    if request.GET.get("line") == "chosen":
        template = "planner/_second_opinion_line.html"
    elif request.htmx:
        template = "planner/_second_opinion.html"
    else:
        template = "planner/second_opinion_page.html"  # the link, without JavaScript
    context = {
        "workload": workload,
        "plan": workload.plan,
        "second_opinion": opinion,
        "candidate": candidate,
    }
    return render(request, template, context)


@editor_required
@require_POST
def workload_choose(request: HttpRequest, plan_id: int, workload_id: int) -> HttpResponse:
    """Save a candidate as the workload's configuration."""
    workload = org_object_or_404(request, workloads_with_choices(), plan_id=plan_id, pk=workload_id)
    key = request.POST.get("candidate", "")
    precision = key.split("|")[1] if key.count("|") >= 2 else ""
    result = sizing.workload_sweep(
        workload,
        all_precisions=precision != workload.precision,
        compare_stacks=sizing.is_compared_key(key),
    )
    candidate = sizing.candidate_find(result, key)
    url = reverse("workload_sizing", args=[plan_id, workload_id]) + _table_query(request.GET)
    if candidate is not None and candidate.compared:
        stack = dict(SERVING_STACK_CHOICES)[candidate.serving_stack]
        messages.error(
            request,
            f"That configuration is sized for {stack}, shown for comparison: set the "
            f"workload's serving stack to {stack} to choose it.",
        )
        return redirect(url)
    if candidate is None or not candidate.feasible:
        reason = candidate.infeasible_reason if candidate else "it is not a candidate any more"
        messages.error(request, f"That configuration cannot be chosen: {reason}.")
        return redirect(url)
    sizing.workload_choose(workload=workload, candidate=candidate)
    messages.success(
        request,
        f"Chosen: {candidate.accelerators} × {candidate.accelerator_name} "
        f"({candidate.precision.upper()}, {candidate.layout})."
        if not candidate.disaggregated
        else f"Chosen: {candidate.label}, {candidate.accelerators} accelerators.",
    )
    try:
        workload_deployments(plan=workload.plan)
    except CatalogGapError as gap:
        # Sizing needs no power figure; sites, TCO and sourcing do: say so now.
        messages.warning(request, f"Sites, placement, TCO and sourcing cannot use it yet. {gap}")
    return redirect(url)
