"""The plan's quote page: markups, payment terms, validity, services and fees, and the sell
prices they give (the client's quote shows these only)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from planner import freshness
from planner.permissions import can_edit, editor_required, member_required, require_editor
from planner.selectors import plans_with_client
from planner.sharing.snapshot import _bom as snapshot_bom
from planner.tenancy import org_object_or_404
from planner.versioning import StaleEditError
from sourcing import quote, selectors, services
from sourcing.models import QuoteFee
from sourcing.quote_forms import QuoteFeeForm, QuoteSettingsForm


def _settings_form(request, plan, data=None):
    lines = [x for x in selectors.bom_line_list(plan=plan) if x.quantity]
    categories = sorted({x.category for x in lines})
    return QuoteSettingsForm(
        data, instance=quote.quote_settings_get(plan=plan), categories=categories,
        # A part at several sites has one markup (keyed by part, as the quote applies it).
        lines=list({x.part_key: x.description for x in lines}.items()),
    )  # fmt: skip


def _page(request, plan, *, form=None, fee_form=None, status=200) -> HttpResponse:
    report = services.landed_cost_report(plan=plan, organisation=request.organisation)
    bom = snapshot_bom(plan, report)
    sell = quote.quote_sell(plan=plan, bom=bom)
    if sell.get("available") and bom.get("available"):
        # Each sold line is the BOM's line of the same position: the page groups them by the
        # site they go to, as the client's quote PDF does (a part at two sites is two rows).
        for line, row in zip(sell["lines"], bom["lines"], strict=True):
            line["site"] = row.get("site", "")
    context = {
        "plan": plan, "section": "sourcing", "tab": "quote", "can_edit": can_edit(request),
        "form": form or _settings_form(request, plan), "fee_form": fee_form or QuoteFeeForm(),
        "fees": quote.quote_fee_list(plan=plan), "sell": sell,
        "fresh": freshness.bom_derived_freshness(plan, freshness.QUOTE),
        "bom_option": services.bom_option_shown(plan=plan),
    }  # fmt: skip
    return render(request, "sourcing/quote.html", context, status=status)


@member_required
def quote_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Markups and terms (editors change them), and the sell prices they give."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    if request.method != "POST":
        return _page(request, plan)
    require_editor(request)
    form = _settings_form(request, plan, request.POST)
    if form.is_valid():
        try:
            form.save()
        except StaleEditError as exc:
            form.add_stale_error(exc)
        else:
            messages.success(request, "Quote settings saved." + form.merge_note)
            return redirect("sourcing:quote", plan_id=plan.pk)
    return _page(request, plan, form=form, status=400)


@editor_required
@require_POST
def quote_fee_add_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    fee_form = QuoteFeeForm(request.POST, instance=quote.QuoteFee(plan=plan))
    if not fee_form.is_valid():
        return _page(request, plan, fee_form=fee_form, status=400)
    fee = fee_form.save(commit=False)
    fee.position = quote.quote_fee_list(plan=plan).count()
    fee.save()
    messages.success(request, f"Added {fee.description}.")
    return redirect("sourcing:quote", plan_id=plan.pk)


@editor_required
@require_POST
def quote_fee_delete_view(request: HttpRequest, plan_id: int, fee_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    fee = org_object_or_404(request, QuoteFee, plan=plan, pk=fee_id)
    quote.quote_fee_delete(fee=fee)
    messages.success(request, f"Removed {fee.description}.")
    return redirect("sourcing:quote", plan_id=plan.pk)
