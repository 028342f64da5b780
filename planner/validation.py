"""Django validators, form widgets and check constraints built from ``planner.engine.limits``.

One source for every range: a model or plain form field takes ``in_range(limit)`` (its
refusal carries the reason), a date field ``date_in_range()``, the database
``range_constraint(...)`` / ``date_constraint(...)``, and every date input ``IsoDateInput``
(``<input type=date>`` shows only yyyy-mm-dd: any other format renders as empty, and an
unchanged save would erase the date).
"""

from __future__ import annotations

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from planner.engine.limits import DATE_MAX, DATE_MIN, DATE_REASON, Limit

ISO_DATE = "%Y-%m-%d"
DATE_MESSAGE = (
    f"Give a date between {DATE_MIN.isoformat()} and {DATE_MAX.isoformat()}: {DATE_REASON}."
)


class IsoDateInput(forms.DateInput):
    """``<input type=date>`` with its value as yyyy-mm-dd, the only format it can show."""

    input_type = "date"

    def __init__(self, attrs=None) -> None:
        super().__init__(attrs=attrs, format=ISO_DATE)


def _number(value: float):
    return int(value) if float(value).is_integer() else value


def in_range(limit: Limit) -> list:
    """Min and max validators whose message gives the range and the reason."""
    message = limit.message().replace("%", "%%")  # Django formats messages with %
    return [
        MinValueValidator(_number(limit.low), message=message),
        MaxValueValidator(_number(limit.high), message=message),
    ]


def date_in_range() -> list:
    """Validators keeping a date between 2000-01-01 and 2100-12-31, with the reason."""
    return [
        MinValueValidator(DATE_MIN, message=DATE_MESSAGE),
        MaxValueValidator(DATE_MAX, message=DATE_MESSAGE),
    ]


def range_constraint(
    field: str, limit: Limit, *, name: str, nullable: bool = False
) -> models.CheckConstraint:
    """A database check that ``field`` stays within ``limit`` (NULL allowed when nullable)."""
    condition = Q(**{f"{field}__gte": _number(limit.low), f"{field}__lte": _number(limit.high)})
    if nullable:
        condition |= Q(**{f"{field}__isnull": True})
    return models.CheckConstraint(
        condition=condition,
        name=name,
        violation_error_message=(
            f"{field.replace('_', ' ').capitalize()}: {limit.message()}".replace("%", "%%")
        ),
    )


def date_constraint(field: str, *, name: str, nullable: bool = True) -> models.CheckConstraint:
    """A database check that the date ``field`` is between 2000-01-01 and 2100-12-31."""
    condition = Q(**{f"{field}__gte": DATE_MIN, f"{field}__lte": DATE_MAX})
    if nullable:
        condition |= Q(**{f"{field}__isnull": True})
    return models.CheckConstraint(
        condition=condition, name=name, violation_error_message=DATE_MESSAGE
    )
