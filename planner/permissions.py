"""View decorators: who may see what. Templates never decide permissions."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


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
        if not request.membership.can_edit:
            raise PermissionDenied("Viewers can read plans but not change them.")
        return view(request, *args, **kwargs)

    return wrapped
