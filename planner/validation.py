"""Django validators, form widgets and check constraints built from ``planner.engine.limits``.

One source for every range: a model or plain form field takes ``in_range(limit)`` (its
refusal carries the reason), a date field ``date_in_range()``, the database
``range_constraint(...)`` / ``date_constraint(...)``, and every date input ``IsoDateInput``
(``<input type=date>`` shows only yyyy-mm-dd: any other format renders as empty, and an
unchanged save would erase the date).
"""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError
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


def _bound(value: float) -> int | Decimal:
    """A limit's bound as a validator compares it: 0.01 as Decimal("0.01"), because the float
    0.01 is slightly more than 0.01 and would refuse a decimal field's 0.01 at the bound."""
    return int(value) if float(value).is_integer() else Decimal(str(value))


def in_range(limit: Limit) -> list:
    """Min and max validators whose message gives the range and the reason."""
    message = limit.message().replace("%", "%%")  # Django formats messages with %
    return [
        MinValueValidator(_bound(limit.low), message=message),
        MaxValueValidator(_bound(limit.high), message=message),
    ]


def date_in_range() -> list:
    """Validators keeping a date between 2000-01-01 and 2100-12-31, with the reason."""
    return [
        MinValueValidator(DATE_MIN, message=DATE_MESSAGE),
        MaxValueValidator(DATE_MAX, message=DATE_MESSAGE),
    ]


class RangeCheckConstraint(models.CheckConstraint):
    """A database check that a field stays in ``[low, high]`` (or is NULL when nullable).

    The database enforces it on every write. Model validation (``full_clean``, run by every
    ModelForm) checks the same bounds in Python instead of Django's default, which asks the
    database with one ``SELECT`` and a savepoint per constraint: with a dozen ranges on a
    workload that tripled the queries of each htmx autosave. It deconstructs as a plain
    ``CheckConstraint``, so migrations do not see a difference.
    """

    def __init__(self, *, field: str, low, high, nullable: bool, **kwargs) -> None:
        self.field_name, self.low, self.high, self.nullable = field, low, high, nullable
        condition = Q(**{f"{field}__gte": low, f"{field}__lte": high})
        if nullable:
            condition |= Q(**{f"{field}__isnull": True})
        super().__init__(condition=condition, **kwargs)

    def validate(self, model, instance, exclude=None, using=None) -> None:
        if exclude and self.field_name in exclude:
            return
        value = getattr(instance, model._meta.get_field(self.field_name).attname)
        if value is None:
            return  # NULL passes a nullable check; a NOT NULL field is refused elsewhere
        if not (self.low <= value <= self.high):
            raise ValidationError(
                self.get_violation_error_message(), code=self.violation_error_code
            )

    def deconstruct(self):
        _, args, kwargs = super().deconstruct()
        return "django.db.models.CheckConstraint", args, kwargs

    def clone(self):
        _, args, kwargs = super().deconstruct()
        kwargs.pop("condition")
        return type(self)(
            *args,
            field=self.field_name,
            low=self.low,
            high=self.high,
            nullable=self.nullable,
            **kwargs,
        )


def range_constraint(
    field: str, limit: Limit, *, name: str, nullable: bool = False
) -> models.CheckConstraint:
    """A database check that ``field`` stays within ``limit`` (NULL allowed when nullable)."""
    return RangeCheckConstraint(
        field=field,
        low=_number(limit.low),
        high=_number(limit.high),
        nullable=nullable,
        name=name,
        violation_error_message=(
            f"{field.replace('_', ' ').capitalize()}: {limit.message()}".replace("%", "%%")
        ),
    )


def date_constraint(field: str, *, name: str, nullable: bool = True) -> models.CheckConstraint:
    """A database check that the date ``field`` is between 2000-01-01 and 2100-12-31."""
    return RangeCheckConstraint(
        field=field,
        low=DATE_MIN,
        high=DATE_MAX,
        nullable=nullable,
        name=name,
        violation_error_message=DATE_MESSAGE,
    )
