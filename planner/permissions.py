"""View decorators: who may see what. Templates never decide permissions."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

# The one refusal of a viewer (a member who reads but does not change), for pages and the API.
VIEWER_MESSAGE = "Viewers can read plans but not change them."


def can_edit(request: HttpRequest) -> bool:
    """The current member may change the organisation's data (owner or consultant)."""
    membership = getattr(request, "membership", None)
    return membership is not None and membership.can_edit


def require_editor(request: HttpRequest) -> None:
    """Refuse a viewer: PermissionDenied (403, the message on the page) unless an editor."""
    if not can_edit(request):
        raise PermissionDenied(VIEWER_MESSAGE)


def member_required(view: Callable) -> Callable:
    """Signed in and a member of an organisation (``request.organisation`` is set)."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.organisation is None:
            return render(request, "no_organisation.html", status=403)
        return view(request, *args, **kwargs)

    return wrapped


def owner_required(view: Callable) -> Callable:
    """A member whose role in the current organisation is owner."""

    @member_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.membership.is_owner:
            raise PermissionDenied("Only an owner of the organisation can do this.")
        return view(request, *args, **kwargs)

    return wrapped


def staff_member_required(view: Callable) -> Callable:
    """A member who is also staff (a catalog maintainer)."""

    @member_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_staff:
            raise PermissionDenied("Only catalog maintainers (staff) can import catalog data.")
        return view(request, *args, **kwargs)

    return wrapped


def editor_required(view: Callable) -> Callable:
    """A member who may change plans (owner or consultant, not viewer)."""

    @member_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        require_editor(request)
        return view(request, *args, **kwargs)

    return wrapped
