"""Template context: the current organisation and membership."""

from django.http import HttpRequest


def organisation(request: HttpRequest) -> dict:
    return {
        "current_organisation": getattr(request, "organisation", None),
        "current_membership": getattr(request, "membership", None),
    }
