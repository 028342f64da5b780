"""Login throttling with django-axes: one limit per user at an address, another per address.

Axes counts failed sign-ins in the database (not the cache, so a cache outage neither opens
nor closes the door) for each lockout parameter set and compares the largest count with one
limit. We want two limits:

- ``LOGIN_FAILURE_LIMIT_PER_USER``: failures for one username from one client address. This
  stops password guessing without letting anyone lock a colleague out from elsewhere.
- ``LOGIN_FAILURE_LIMIT_PER_ADDRESS``: failures from one client address whatever the
  username (credential stuffing), higher because an office shares one address.

:class:`LoginThrottleHandler` scales the per-address count onto the per-user limit, so axes'
single comparison enforces both. The client address is :func:`planner.client_ip.rate_limit_address`
(the trusted-proxy setting, IPv6 by /64), the same as share links use.
"""

from __future__ import annotations

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

# The order LoginThrottleHandler.get_failures reads the counts in (settings.AXES_LOCKOUT_PARAMETERS).
LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]


class LoginThrottleHandler(AxesDatabaseHandler):
    """Axes' database handler with a per-user-and-address and a per-address limit."""

    def get_failures(self, request: HttpRequest, credentials: dict | None = None) -> int:
        """Failures as axes compares them with ``AXES_FAILURE_LIMIT`` (the per-user limit).

        Returns the per-user-and-address count, or the per-address count scaled so that it
        reaches the per-user limit exactly when it reaches the per-address limit.
        """
        user_at_address, address = (
            attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
            for attempts in self.get_user_attempts(request, credentials)
        )
        per_user = settings.LOGIN_FAILURE_LIMIT_PER_USER
        per_address = settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS
        return max(user_at_address, address * per_user // per_address)


def lockout_response(
    request: HttpRequest, original_response=None, credentials: dict | None = None
) -> HttpResponse:
    """The sign-in page with the lock-out message and when to try again (429)."""
    cool_off = get_cool_off(request)
    minutes = max(1, round(cool_off.total_seconds() / 60)) if cool_off else None
    username = (credentials or {}).get("username") or request.POST.get("username", "")
    context = {
        "form": AuthenticationForm(request, initial={"username": username}),
        "locked_out": True,
        "cool_off_minutes": minutes,
        "next": request.POST.get("next", request.GET.get("next", "")),
    }
    body = render_to_string("registration/login.html", context, request=request)
    return HttpResponse(body, status=429)
