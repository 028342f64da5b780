"""Home and organisation pages."""

import re

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from catalog.kinds import KINDS
from catalog.selectors import catalog_import_list, catalog_queryset
from planner import selectors
from planner.forms import (
    ApiTokenForm,
    InviteForm,
    MemberRoleForm,
    OrganisationSwitchForm,
    QuoteTermsForm,
    ServingDefaultsForm,
)
from planner.invitations import (
    InvitationError,
    invitation_create,
    invitation_list_pending,
    invitation_revoke,
)
from planner.labels import stack_label
from planner.middleware import SESSION_ORGANISATION_KEY
from planner.models import ApiToken, Invitation, Membership
from planner.permissions import member_required, owner_required
from planner.services import (
    MembershipError,
    api_token_create,
    api_token_revoke,
    member_change_role,
    member_remove,
)
from planner.tenancy import org_object_or_404
from planner.versioning import StaleEditError


@member_required
def home(request: HttpRequest) -> HttpResponse:
    counts = [(kind, catalog_queryset(kind).count()) for kind in KINDS.values()]
    context = {
        "catalog_counts": counts,
        "recent_imports": catalog_import_list(organisation=request.organisation)[:5],
    }
    return render(request, "home.html", context)


@member_required
@require_http_methods(["GET", "POST"])
def organisation_detail(request: HttpRequest) -> HttpResponse:
    """Members of the current organisation; owners invite people and revoke invitations here."""
    form = InviteForm(request.POST or None)
    if request.method == "POST":
        if not request.membership.is_owner:
            messages.error(request, "Only an owner can invite members.")
            return redirect("organisation")
        if form.is_valid():
            try:
                invitation = invitation_create(
                    organisation=request.organisation,
                    email=form.cleaned_data["email"],
                    role=form.cleaned_data["role"],
                    invited_by=request.user,
                    base_url=request.build_absolute_uri("/")[:-1],
                )
            except InvitationError as exc:
                form.add_error("email", str(exc))
            else:
                # The same answer whether or not the address has an account.
                messages.success(
                    request,
                    f"Invitation sent to {invitation.email}. They join when they accept it "
                    f"(the link is valid until {invitation.expires_at:%d %b %Y}).",
                )
                return redirect("organisation")
    is_owner = request.membership.is_owner
    context = {
        "form": form,
        "members": selectors.membership_list(organisation=request.organisation),
        "my_organisations": selectors.memberships_of_user(user=request.user),
        "invitations": (
            invitation_list_pending(organisation=request.organisation) if is_owner else []
        ),
        "default_stack": stack_label(
            request.organisation.default_serving_stack,
            request.organisation.default_serving_stack_version,
            request.organisation.default_kv_cache_dtype,
        ),
    }
    return render(
        request, "organisation.html", context, status=400 if form.is_bound and form.errors else 200
    )


@owner_required
@require_POST
def invitation_revoke_view(request: HttpRequest, invitation_id: int) -> HttpResponse:
    """Revoke a pending invitation of the current organisation (owners only)."""
    invitation = org_object_or_404(request, Invitation, pk=invitation_id)
    invitation_revoke(invitation=invitation)
    messages.success(request, f"The invitation to {invitation.email} was revoked.")
    return redirect("organisation")


@owner_required
@require_http_methods(["GET", "POST"])
def member_edit(request: HttpRequest, membership_id: int) -> HttpResponse:
    """Change a member's role or remove them (owners only)."""
    membership = org_object_or_404(
        request, Membership.objects.select_related("user"), pk=membership_id
    )
    form = MemberRoleForm(
        request.POST or None, initial={"role": membership.role}, record=membership
    )
    if request.method == "POST":
        try:
            if "remove" in request.POST:
                member_remove(membership=membership)
                messages.success(request, f"{membership.user} removed.")
                return redirect("organisation")
            if form.is_valid():
                member_change_role(membership=membership, role=form.cleaned_data["role"])
                messages.success(
                    request, f"{membership.user} is now {membership.get_role_display()}."
                )
                return redirect("organisation")
        except MembershipError as exc:
            form.add_error(None, str(exc))
        except StaleEditError as exc:
            form.add_stale_error(exc)
    return render(
        request,
        "member_edit.html",
        {"membership": membership, "form": form},
        status=400 if form.is_bound and form.errors else 200,
    )


@member_required
@require_POST
def organisation_switch(request: HttpRequest) -> HttpResponse:
    """Make another of the user's organisations the current one."""
    form = OrganisationSwitchForm(request.POST)
    if form.is_valid():
        chosen = selectors.memberships_of_user(user=request.user).filter(
            organisation_id=form.cleaned_data["organisation"]
        )
        if chosen.exists():
            request.session[SESSION_ORGANISATION_KEY] = form.cleaned_data["organisation"]
            return redirect("home")
    raise Http404("No such organisation.")


@owner_required
@require_http_methods(["GET", "POST"])
def api_tokens(request: HttpRequest) -> HttpResponse:
    """The organisation's API tokens: create one (shown once) or revoke one."""
    form = ApiTokenForm(request.POST or None)
    new_token = None
    if request.method == "POST" and "revoke" in request.POST:
        token_id = request.POST["revoke"]
        if not re.fullmatch(r"[0-9]{1,9}", token_id):  # a hand-made form: no id of ours
            raise Http404("No such token.")
        token = org_object_or_404(request, ApiToken, pk=int(token_id))
        api_token_revoke(token=token)
        messages.success(request, f"Token {token} revoked.")
        return redirect("api_tokens")
    if request.method == "POST" and form.is_valid():
        _, new_token = api_token_create(
            organisation=request.organisation, user=request.user, name=form.cleaned_data["name"]
        )
        form = ApiTokenForm()
    context = {
        "form": form,
        "tokens": selectors.api_token_list(organisation=request.organisation),
        "new_token": new_token,
    }
    return render(
        request, "api_tokens.html", context, status=400 if form.is_bound and form.errors else 200
    )


def _organisation_settings(request: HttpRequest, form_class, template: str, saved: str):
    """An owner's page of organisation-wide settings: the form on the organisation's row,
    saved unless someone saved it since, then back to the organisation page."""
    form = form_class(request.POST or None, instance=request.organisation)
    if request.method == "POST" and form.is_valid():
        try:
            form.save()
        except StaleEditError as exc:
            form.add_stale_error(exc)
        else:
            messages.success(request, saved + form.merge_note)
            return redirect("organisation")
    status = 400 if form.is_bound and form.errors else 200
    return render(request, template, {"form": form}, status=status)


@owner_required
@require_http_methods(["GET", "POST"])
def serving_defaults(request: HttpRequest) -> HttpResponse:
    """The serving stack new workloads are sized for (each workload can change its own)."""
    return _organisation_settings(
        request,
        ServingDefaultsForm,
        "serving_defaults.html",
        "Serving stack saved; new workloads are sized for it, existing ones keep their own.",
    )


@owner_required
@require_http_methods(["GET", "POST"])
def quote_terms(request: HttpRequest) -> HttpResponse:
    """The terms and validity printed on the organisation's quotes."""
    return _organisation_settings(
        request,
        QuoteTermsForm,
        "quote_terms.html",
        "Quote terms saved; they apply to revisions published from now.",
    )
