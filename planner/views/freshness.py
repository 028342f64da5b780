"""One-click recompute of a stored result that went stale (the banner's button)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from planner import freshness
from planner.permissions import editor_required
from planner.selectors import plans_with_client
from planner.tenancy import org_object_or_404

TCO_RUN_NOTICE = "tco-run"


@editor_required
@require_POST
def plan_recompute(request: HttpRequest, plan_id: int, kind: str) -> HttpResponse:
    """Recompute ``kind`` and go back to the page the banner was on (``next``)."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    if kind not in freshness.RECOMPUTABLE:
        messages.error(request, "Unknown result.")
    else:
        try:
            done = freshness.recompute(plan=plan, kind=kind, user=request.user)
            # A queued TCO run's notice is replaced by its outcome when the TCO page's
            # polled run section sees it finish (facility/tco.html#run), not left saying queued.
            messages.success(
                request, done, extra_tags=TCO_RUN_NOTICE if kind == freshness.TCO else ""
            )
        except freshness.RecomputeError as exc:
            messages.error(request, str(exc))
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("plan_detail", args=[plan.pk])
    if request.htmx:
        return HttpResponseClientRedirect(target)
    return redirect(target)
