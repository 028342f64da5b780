"""Accepting an invitation: the page the e-mailed link opens (signed in or not)."""

from django.contrib import messages
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from planner.forms import InvitationSignupForm
from planner.invitations import InvitationError, invitation_accept, invitation_get_pending
from planner.middleware import SESSION_ORGANISATION_KEY

PRIVATE_HEADERS = {
    "X-Robots-Tag": "noindex, nofollow",
    "Referrer-Policy": "same-origin",  # the token URL never leaves the site
    "Cache-Control": "private, no-store",
}


def _private(response: HttpResponse) -> HttpResponse:
    for name, value in PRIVATE_HEADERS.items():
        response[name] = value
    return response


def _joined(request: HttpRequest, invitation, user) -> HttpResponse:
    try:
        membership = invitation_accept(invitation=invitation, user=user)
    except InvitationError:
        return _private(render(request, "invitation_invalid.html", status=404))
    request.session[SESSION_ORGANISATION_KEY] = membership.organisation_id
    messages.success(request, f"You joined {membership.organisation}.")
    return redirect("home")


@require_http_methods(["GET", "POST"])
def invitation_accept_view(request: HttpRequest, token: str) -> HttpResponse:
    """Join through an invitation link: accept as the signed-in user, or create an account.

    A wrong, expired, revoked or used link gives one plain page (404).
    """
    invitation = invitation_get_pending(token=token)
    if invitation is None:
        return _private(render(request, "invitation_invalid.html", status=404))
    signup = None
    if request.user.is_authenticated:
        if request.method == "POST":
            return _joined(request, invitation, request.user)
    else:
        signup = InvitationSignupForm(request.POST or None, email=invitation.email)
        if request.method == "POST" and signup.is_valid():
            user = signup.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return _joined(request, invitation, user)
    context = {"invitation": invitation, "form": signup}
    status = 400 if signup is not None and signup.is_bound and signup.errors else 200
    return _private(render(request, "invitation_accept.html", context, status=status))
