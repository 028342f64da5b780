"""The operations & security section of a plan: owners and tools, spares and support."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from planner.models import OperationsPlan
from planner.operations_forms import OperationsPlanForm
from planner.permissions import member_required, require_editor
from planner.selectors import plans_with_client
from planner.tenancy import org_object_or_404
from planner.versioning import StaleEditError
from sourcing.models import BomLine, Service, SourcingSettings


def bom_spares_and_support(plan) -> dict:
    """The BOM's spares policy and support lines, as the section shows them beside the answers."""

    settings = SourcingSettings.objects.filter(plan=plan).first()
    support = BomLine.objects.filter(plan=plan, service=Service.SUPPORT).order_by("position")
    return {
        "spares": (
            None
            if settings is None
            else settings.get_spares_mode_display()
            + (f" ({settings.spares_pct} %)" if settings.spares_mode == "percent" else "")
        ),
        "support": [f"{line.quantity} × {line.description}" for line in support],
    }


@member_required
@require_http_methods(["GET", "POST"])
def operations_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    instance = OperationsPlan.objects.filter(plan=plan).first() or OperationsPlan(plan=plan)
    form = OperationsPlanForm(request.POST or None, instance=instance)
    if request.method == "POST":
        require_editor(request)
        if form.is_valid():
            try:
                form.save()
            except StaleEditError as exc:
                form.add_stale_error(exc)
            else:
                messages.success(request, "Operations & security saved." + form.merge_note)
                return redirect("operations", plan_id=plan.pk)
    context = {
        "plan": plan,
        "form": form,
        "section": "operations",
        "answered": sum(row["filled"] for row in instance.answers()),
        "bom": bom_spares_and_support(plan),
    }
    return render(request, "planner/operations.html", context, status=400 if form.errors else 200)
