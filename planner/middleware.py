"""Attach the signed-in user's current organisation and membership to the request."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from planner.selectors import membership_current

SESSION_ORGANISATION_KEY = "organisation_id"


class CurrentOrganisationMiddleware:
    """Sets ``request.membership`` and ``request.organisation`` (None when signed out).

    A user may belong to several organisations; the session remembers which one is current,
    and falls back to the first membership when the remembered one is gone.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.membership = None
        request.organisation = None
        if request.user.is_authenticated:
            membership = membership_current(
                user=request.user,
                organisation_id=request.session.get(SESSION_ORGANISATION_KEY),
            )
            if membership is not None:
                request.membership = membership
                request.organisation = membership.organisation
        return self.get_response(request)
