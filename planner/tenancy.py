"""Whose data a page may read: the one look-up of an organisation's object by id.

Every view that reads a row by an id from the URL calls :func:`org_object_or_404`. It scopes
the query by the current organisation itself, so a view cannot forget to, and another
organisation's id reads exactly like a missing one (404, never 403: the answer must not tell
that the row exists). The route from a model to its organisation comes from the schema (the
required foreign keys that lead to ``Organisation``), not from a list kept by hand.
"""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured, ObjectDoesNotExist
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest

from planner.models import Organisation

M = TypeVar("M", bound=Model)


@cache
def organisation_paths(model: type[Model]) -> tuple[str, ...]:
    """The lookups from ``model`` to the organisation that owns its rows.

    The shortest routes over required (non-null) foreign keys; a model with two such routes
    (a purchase order's plan and its supplier) gets both, and a row must belong to the
    organisation along every one. ``("",)`` for ``Organisation`` itself.
    """
    if model is Organisation:
        return ("",)
    frontier: list[tuple[type[Model], str]] = [(model, "")]
    seen = {model}
    while frontier:
        found, following = [], []
        for current, prefix in frontier:
            for field in current._meta.get_fields():
                if not (field.many_to_one or field.one_to_one) or not field.concrete:
                    continue
                if field.null:
                    continue  # a route that may be missing cannot own the row
                path = f"{prefix}__{field.name}" if prefix else field.name
                if field.related_model is Organisation:
                    found.append(path)
                elif field.related_model not in seen:
                    seen.add(field.related_model)
                    following.append((field.related_model, path))
        if found:
            return tuple(found)
        frontier = following
    raise ImproperlyConfigured(
        f"{model._meta.label} is not organisation data: no required foreign key leads to "
        "an organisation."
    )


def org_object_or_404(
    request_or_organisation: HttpRequest | Organisation | None,
    queryset_or_model: QuerySet[M] | type[M],
    **lookup: Any,
) -> M:
    """The current organisation's row that matches ``lookup``, or Http404.

    ``queryset_or_model``: a model, or a queryset that says what to load with the row
    (``select_related``); either way the organisation's scope is added here. The 404's
    message names the model ("No such site."), the same for a missing row and for another
    organisation's.
    """
    if isinstance(request_or_organisation, Organisation | None):
        organisation = request_or_organisation
    else:
        organisation = getattr(request_or_organisation, "organisation", None)
    if isinstance(queryset_or_model, QuerySet):
        queryset = queryset_or_model
    else:
        queryset = queryset_or_model._default_manager.all()
    model = queryset.model
    if organisation is None:  # signed out or in no organisation: nothing is theirs
        raise Http404(f"No such {model._meta.verbose_name}.")
    scope = {
        (f"{path}__pk" if path else "pk"): organisation.pk for path in organisation_paths(model)
    }
    try:
        return queryset.filter(**scope).get(**lookup)
    except ObjectDoesNotExist:
        raise Http404(f"No such {model._meta.verbose_name}.") from None
