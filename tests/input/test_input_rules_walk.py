"""Every form of the project goes through the shared input rules (``planner.input_rules``).

The walk imports every module of planner, sourcing and catalog, collects every form class
defined there and fails on one that bypasses the rules: a form without
:class:`~planner.input_rules.InputRulesMixin`, a free-text field without a maximum length, or
a number field without both a lower and an upper bound (on the form field, or on the model
field a ModelForm validates through). A field that has a reason not to is named in
:data:`ALLOWED` with that reason; a new form gets the rules by deriving from
``InputForm``/``InputModelForm``, and this test says so when it does not. The admin's forms
(every project admin and inline) go through the same rules.

Fields a form adds in its own ``__init__`` are not seen here (a class has none of them); they
get the text rule when the form is cleaned (``InputRulesMixin.full_clean``) and are declared
with their length or range in the form (the traffic log's columns, the quote's markups, the
site split's shares, the residency rules).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator

from planner.input_rules import InputRulesMixin
from planner.validation import RangeCheckConstraint

PACKAGES = ("planner", "sourcing", "catalog")
# Not walked: migrations (no forms), production settings (they require the deployment's
# environment) and any test package.
SKIPPED = (".migrations", ".settings.production", ".tests")

# Fields without a length or a range, each with why (form class.field: reason).
ALLOWED: dict[str, str] = {
    "InvitationSignupForm.password1": "Django's password field: hashed, never stored or shown",
    "InvitationSignupForm.password2": "Django's password field: hashed, never stored or shown",
    "ClientForm.vat_recoverable_pct": "clean() keeps it above 0 and below 100 % (or empty)",
}

NUMBER_FIELDS = (forms.IntegerField, forms.DecimalField, forms.FloatField)


def _modules():
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        yield package
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            if any(skip in info.name for skip in SKIPPED):
                continue
            yield importlib.import_module(info.name)


def project_forms() -> list[type[forms.BaseForm]]:
    """Every form class defined in the project (not imported from Django or a library)."""
    found = {}
    for module in _modules():
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, forms.BaseForm) and value.__module__.startswith(PACKAGES):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


FORMS = project_forms()


def _model_field(form_class, name):
    model = getattr(getattr(form_class, "_meta", None), "model", None)
    if model is None:
        return None
    try:
        return model._meta.get_field(name)
    except Exception:  # a declared field the model does not have
        return None


def _bounds(form_class, name, field) -> tuple[bool, bool]:
    """Whether the field refuses values below some minimum and above some maximum."""
    validators = list(field.validators)
    model_field = _model_field(form_class, name)
    if model_field is not None and name not in form_class.declared_fields:
        validators += list(model_field._validators)  # the explicit ones, not the backend's
    low = getattr(field, "min_value", None) is not None or any(
        isinstance(v, MinValueValidator) for v in validators
    )
    high = getattr(field, "max_value", None) is not None or any(
        isinstance(v, MaxValueValidator) for v in validators
    )
    # A decimal's digits bound it: money is stored to 14 digits before the point in any
    # currency, where a fixed amount could not be a domain limit.
    high = high or getattr(field, "max_digits", None) is not None
    if model_field is not None:  # a database check the model's validation runs too
        for constraint in model_field.model._meta.constraints:
            if isinstance(constraint, RangeCheckConstraint) and constraint.field_name == name:
                low = high = True
    return low, high


def field_problems(form_class) -> list[str]:
    problems = []
    for name, field in form_class.base_fields.items():
        where = f"{form_class.__name__}.{name}"
        if where in ALLOWED:
            continue
        # Every text field, e-mail and URL ones too (choice fields are not text fields: their
        # value must be one of the choices).
        if isinstance(field, forms.CharField) and field.max_length is None:
            problems.append(f"{where}: text without a maximum length")
        if isinstance(field, NUMBER_FIELDS):
            low, high = _bounds(form_class, name, field)
            if not (low and high):
                missing = " and ".join(
                    side for side, ok in (("lower", low), ("upper", high)) if not ok
                )
                problems.append(f"{where}: number without a {missing} bound")
    return problems


def test_the_walk_finds_the_project_forms():
    names = {f.__name__ for f in FORMS}
    # One from each app and kind: a plain form, a model form, a versioned form, a sign-up.
    assert {"ReplyForm", "PlanForm", "QuoteSettingsForm", "CompareForm"} <= names
    assert {"InvitationSignupForm", "SiteForm", "TrafficLogForm"} <= names
    assert len(FORMS) >= 40


@pytest.mark.parametrize("form_class", FORMS, ids=lambda f: f.__name__)
def test_every_form_has_the_input_rules(form_class):
    assert issubclass(form_class, InputRulesMixin), (
        f"{form_class.__module__}.{form_class.__name__} does not go through the shared input "
        "rules: derive it from planner.input_rules.InputForm or InputModelForm."
    )


@pytest.mark.parametrize("form_class", FORMS, ids=lambda f: f.__name__)
def test_every_field_has_its_length_or_range(form_class):
    assert field_problems(form_class) == []


def test_every_allowance_names_a_real_field():
    fields = {f"{f.__name__}.{name}" for f in FORMS for name in f.base_fields}
    assert set(ALLOWED) - fields == set()


def _project_admins():
    """Every admin (and its inlines) of a project model registered on the admin site."""
    from django.contrib import admin

    for model, model_admin in admin.site._registry.items():
        if model.__module__.startswith(PACKAGES):
            yield f"{model.__name__} admin", model_admin
            for inline in model_admin.inlines:
                yield f"{model.__name__} admin, {inline.__name__}", inline


def test_every_admin_form_has_the_input_rules():
    admins = list(_project_admins())
    assert len(admins) >= 30  # the walk sees the project's admins
    bypassing = [name for name, a in admins if not issubclass(a.form, InputRulesMixin)]
    assert bypassing == [], "derive them from planner.admin_tenancy.InputRulesAdmin/Inline"
