"""Filter forms for the catalog lists, built from each kind's declared filters."""

from django import forms
from django.core.exceptions import FieldDoesNotExist
from django.db.models import Q, QuerySet

from catalog.kinds import CatalogKind


def _choice_labels(kind: CatalogKind, name: str) -> dict:
    """The labels of a field's choices (``{"on_demand": "On demand"}``), if it has any."""
    try:
        return dict(kind.model._meta.get_field(name).flatchoices)
    except FieldDoesNotExist:  # a lookup across a relation, e.g. accelerator__slug
        return {}


def filter_form_class(kind: CatalogKind, queryset: QuerySet) -> type[forms.Form]:
    """A form with one field per filter; choice options come from the rows themselves."""
    fields: dict[str, forms.Field] = {}
    for spec in kind.filters:
        if spec.kind == "search":
            fields[spec.name] = forms.CharField(
                label=spec.label,
                required=False,
                max_length=100,
                widget=forms.TextInput(attrs={"type": "search", "placeholder": "Type to filter"}),
            )
        elif spec.kind == "choice":
            labels = _choice_labels(kind, spec.fields[0])
            values = (
                queryset.exclude(**{spec.fields[0]: ""})
                .exclude(**{f"{spec.fields[0]}__isnull": True})
                .values_list(spec.fields[0], flat=True)
                .distinct()
                .order_by(spec.fields[0])
            )
            fields[spec.name] = forms.ChoiceField(
                label=spec.label,
                required=False,
                choices=[("", "Any")] + [(v, labels.get(v, v)) for v in values],
            )
        elif spec.kind == "min":
            fields[spec.name] = forms.FloatField(
                label=spec.label,
                required=False,
                min_value=0,
                widget=forms.NumberInput(attrs={"step": "any", "min": "0"}),
            )
        else:
            raise ValueError(f"unknown filter kind {spec.kind!r}")
    return type(f"{kind.model.__name__}FilterForm", (forms.Form,), fields)


def filter_queryset(kind: CatalogKind, queryset: QuerySet, cleaned: dict) -> QuerySet:
    """Apply the valid filter values; empty values filter nothing."""
    for spec in kind.filters:
        value = cleaned.get(spec.name)
        if value in (None, ""):
            continue
        if spec.kind == "search":
            query = Q()
            for name in spec.fields:
                query |= Q(**{f"{name}__icontains": value})
            queryset = queryset.filter(query)
        elif spec.kind == "choice":
            queryset = queryset.filter(**{spec.fields[0]: value})
        elif spec.kind == "min":
            queryset = queryset.filter(**{f"{spec.fields[0]}__gte": value})
    return queryset


def sort_queryset(kind: CatalogKind, queryset: QuerySet, sort: str) -> tuple[QuerySet, str]:
    """Order by a sortable column (``name`` or ``-name``); unknown keys keep the default."""
    allowed = {c.attr for c in kind.columns if c.sortable}
    if sort.lstrip("-") in allowed:
        return queryset.order_by(sort, "pk"), sort
    return queryset, ""
