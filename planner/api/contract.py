"""The OpenAPI document as the contract: request bodies state what the server accepts.

Writes go through the pages' forms (``planner.api.common.bound_form``), so the forms hold the
rules; this module reads each body's form and writes its rules into the body's JSON schema:
lengths, ranges (``planner.engine.limits`` through the fields' validators), closed sets as
``enum``, required values that may not be null or blank, and on a create the fields without
a default as ``required``. One source: a rule changed in a form changes the document.

Rules the document cannot state (a rule across fields, a catalog lookup, a step the plan is
not ready for) are refused with 422, shape with 400 (``planner.api.common.SHAPE_CODES``);
``tests/api/test_contract.py`` sends schema-valid requests to every operation and fails on a
400, and schema-invalid ones and fails on an acceptance.

Numbers: a decimal field takes a JSON number, rounded half-even to the field's places (a
binary float such as 0.30000000000000004 is the 0.30 its sender meant), or, where its range
is only its digits, a string of at most those digits and places, read exactly.
"""

from __future__ import annotations

import copy
import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Annotated, Any

from django import forms
from django.core import validators as django_validators
from django.core.exceptions import FieldDoesNotExist
from pydantic import BeforeValidator, Field, Strict, WithJsonSchema
from pydantic_core import PydanticCustomError

from planner.engine.limits import DATE_MAX, DATE_MIN
from planner.input_rules import SINGLE_LINE_PATTERN

# A required text: at least one character that is neither blank nor a control character.
NON_BLANK_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"
# Dates the plans allow (planner.engine.limits.DATE_MIN..DATE_MAX: 2000-01-01 to 2100-12-31).
DATE_PATTERN = r"^(20[0-9]{2}|2100)-"
assert (DATE_MIN.year, DATE_MAX.year) == (2000, 2100), "DATE_PATTERN names these years"

# An address Django's EmailValidator accepts (a dot-atom local part, a dotted domain).
EMAIL_PATTERN = (
    r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$"
)
# An address Django's URLValidator accepts; a missing scheme reads as https (URLField).
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = rf"({_LABEL}\.)+[A-Za-z]{{2,63}}"
_PATH = r"([/?#][^\s\x00-\x1f\x7f-\x9f]*)?$"
URL_PATTERN = rf"^(https?|ftps?)://{_HOST}(:[1-9][0-9]{{0,3}})?{_PATH}"
# No port without a scheme: Python's urlsplit reads "host:535" as the scheme "host".
URL_WITHOUT_SCHEME_PATTERN = rf"^{_HOST}{_PATH}"
# A decimal as text (the server reads it exactly; the field's own digits narrow it).
DECIMAL_TEXT_PATTERN = r"^-?[0-9]{1,16}(\.[0-9]{1,8})?$"

# A JSON number; a numeric string is refused, as the document says (no silent coercion).
Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]


def _whole_number(value: Any) -> Any:
    """A JSON integer (3, or 3.0, which JSON Schema counts as one); not true, "3" or 3.5."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError(
            "json_integer", "Input should be a whole number (a JSON integer)."
        )
    return value


def whole_number(low: int, high: int) -> Any:
    """A JSON integer whose range ``low``..``high`` the document states and the page form
    checks, with the form's message (``WithJsonSchema``: pydantic would write bounds after a
    before-validator as its own ``ge``/``le``, which JSON Schema lacks)."""
    return Annotated[
        int,
        BeforeValidator(_whole_number),
        WithJsonSchema({"type": "integer", "minimum": low, "maximum": high}),
    ]


def stated_range(low: float, high: float) -> Any:
    """A number's range as the document states it, checked by the form it is posted to (so
    a refusal carries the form's message, as on the page)."""
    return Field(json_schema_extra={"minimum": low, "maximum": high})


def _bounds(field: forms.Field, extra=()) -> tuple[float | None, float | None]:
    """The tightest lower and upper bound a numeric form field enforces (with ``extra``
    validators: its model field's, which a model form runs when it saves)."""
    low = getattr(field, "min_value", None)
    high = getattr(field, "max_value", None)
    for validator in [*field.validators, *extra]:
        if isinstance(validator, django_validators.MinValueValidator):
            value = validator.limit_value
            low = value if low is None else max(low, value)
        elif isinstance(validator, django_validators.MaxValueValidator):
            value = validator.limit_value
            high = value if high is None else min(high, value)
    if isinstance(field, forms.DecimalField) and field.max_digits is not None:
        places = field.decimal_places or 0
        # The largest whole number of its digits (a float of 10**14 - 0.0001 rounds up to 10**14,
        # which has one digit too many).
        largest = float(10 ** (field.max_digits - places) - 1)
        high = largest if high is None else min(float(high), largest)
        low = -largest if low is None else max(float(low), -largest)
    whole_field = not isinstance(field, forms.DecimalField | forms.FloatField)
    if isinstance(field, forms.IntegerField) and whole_field:  # (both subclass IntegerField)
        # PostgreSQL integer columns (and the forms' own widgets) stop at 2**31 - 1.
        high = 2**31 - 1 if high is None else min(high, 2**31 - 1)
        low = -(2**31 - 1) if low is None else max(low, -(2**31 - 1))
    return (None if low is None else float(low), None if high is None else float(high))


def decimal_string_pattern(field: forms.DecimalField, model_validators=()) -> str | None:
    """A pattern for the field's exact string form, or None when its range is narrower than
    its digits (a string cannot state 0 to 1,000 in JSON schema; the number can)."""
    if field.max_digits is None or field.decimal_places is None:
        return None
    whole, places = field.max_digits - field.decimal_places, field.decimal_places
    low, high = _bounds(field, model_validators)
    largest = float(10**whole - 1)  # as _bounds states it
    if high is None or high < largest or (low is not None and low not in (0.0, -largest)):
        return None
    sign = "-?" if low is not None and low < 0 else ""
    fraction = rf"(\.[0-9]{{1,{places}}})?" if places else ""
    return rf"^{sign}[0-9]{{1,{whole}}}{fraction}$"


def _flat_choices(field: forms.ChoiceField) -> list[Any]:
    values = []
    for value, label in field.choices:
        if isinstance(label, list | tuple):  # an option group
            values.extend(v for v, _ in label)
        else:
            values.append(value)
    return [v for v in values if v not in ("", None)]


def is_lookup(form: forms.BaseForm, name: str) -> bool:
    """Whether the form's field ``name`` picks among rows or runtime choices (its refusal of
    an unknown value is the domain's: 422)."""
    field = type(form).base_fields.get(name) or form.fields.get(name)
    return field is not None and _is_lookup(field)


def _is_lookup(field: forms.Field) -> bool:
    """A choice among database rows (a catalog part, a supplier) or among choices the form
    fills when it is built (a plan's placement options): a lookup, not a closed set."""
    if hasattr(field, "queryset"):
        return True
    return isinstance(field, forms.ChoiceField) and not _flat_choices(field)


def constrain(node: dict[str, Any], field: forms.Field, model_validators=()) -> None:
    """Writes ``field``'s rules into one property's JSON schema ``node`` (in place)."""
    branches = node.get("anyOf", [node])
    if field.required:  # null would post an empty value, which the form refuses
        kept = [b for b in branches if b.get("type") != "null"]
        if "anyOf" in node and kept:
            node["anyOf"] = branches = kept
    for branch in branches:
        kind = branch.get("type")
        if kind == "string":
            _constrain_string(branch, field, model_validators)
        elif kind == "array" and field.required:
            branch["minItems"] = max(branch.get("minItems", 0), 1)
        elif kind in ("number", "integer"):
            if isinstance(field, forms.ChoiceField) and not _is_lookup(field):
                branch["enum"] = [_as_json_number(v, kind) for v in _flat_choices(field)]
                continue
            low, high = _bounds(field, model_validators)
            if kind == "integer":
                low = None if low is None else -int(-low // 1)  # the next whole number up
                high = None if high is None else int(high // 1)
            if low is not None:
                branch.pop("exclusiveMinimum", None)
                branch["minimum"] = max(branch.get("minimum", low), low)
            if high is not None:
                branch.pop("exclusiveMaximum", None)
                branch["maximum"] = min(branch.get("maximum", high), high)
            if isinstance(field, forms.DecimalField) and field.decimal_places is not None:
                branch.setdefault(
                    "description",
                    f"Rounded half-even to {field.decimal_places} decimal places.",
                )
    if "anyOf" in node:
        node["anyOf"] = [b for b in node["anyOf"] if not b.pop("x-drop", False)]
    if "anyOf" in node and len(node["anyOf"]) == 1:
        only = node.pop("anyOf")[0]
        node.update({k: v for k, v in only.items() if k not in node})


def _as_json_number(value: Any, kind: str) -> int | float:
    return int(value) if kind == "integer" else float(value)


def _constrain_string(branch: dict[str, Any], field: forms.Field, model_validators=()) -> None:
    if isinstance(field, forms.ChoiceField) and not _is_lookup(field):
        values = [str(v) for v in _flat_choices(field)]
        if not field.required:
            values.append("")
        branch.pop("pattern", None)
        branch.pop("maxLength", None)
        branch["enum"] = values
        return
    if isinstance(field, forms.DecimalField):
        pattern = decimal_string_pattern(field, model_validators)
        if pattern:
            branch["pattern"] = pattern
        else:  # the range is narrower than the digits: numbers only (see module doc)
            branch["x-drop"] = True
        return
    if isinstance(field, forms.DateField | forms.DateTimeField):  # (share links' expiry too)
        branch["pattern"] = DATE_PATTERN
        return
    declared = "pattern" in branch  # the API's own (pydantic checks it too): kept as it is
    regexes = [
        v.regex.pattern
        for v in [*field.validators, *model_validators]
        if type(v) is django_validators.RegexValidator and not v.inverse_match and not v.flags
    ]
    if declared:
        pass
    elif regexes:
        branch["pattern"] = regexes[0]
    elif isinstance(field, forms.EmailField):
        branch["pattern"] = EMAIL_PATTERN
    elif isinstance(field, forms.URLField):
        # Without a scheme Django's URLField prepends "https://", which counts to its length.
        length = field.max_length or 2000
        branch.pop("maxLength", None)
        branch["anyOf"] = [
            {"pattern": URL_PATTERN, "maxLength": length},
            {"pattern": URL_WITHOUT_SCHEME_PATTERN, "maxLength": length - len("https://")},
        ]
        if not field.required:
            branch["anyOf"].append({"maxLength": 0})
        return
    if (
        not declared
        and not field.required
        and "pattern" in branch
        and not re.search(branch["pattern"], "")
    ):
        branch["pattern"] = f"^$|{branch['pattern']}"  # left empty: the field is optional
    max_length = getattr(field, "max_length", None)
    if max_length is not None:
        branch["maxLength"] = min(branch.get("maxLength", max_length), max_length)
    if field.required:
        branch["minLength"] = max(branch.get("minLength", 0), 1)
        if "pattern" not in branch or branch["pattern"] == SINGLE_LINE_PATTERN:
            branch["pattern"] = NON_BLANK_PATTERN


def _model_field(form_class: type[forms.BaseForm], name: str):
    """The model's own column behind a model form's field, or None (a form-only field, or a
    name the model uses for a reverse relation, such as a site's upgrades)."""
    model = getattr(getattr(form_class, "_meta", None), "model", None)
    if model is None:
        return None
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        return None
    return field if field.concrete else None


def _model_validators(form_class: type[forms.BaseForm], name: str) -> list:
    field = _model_field(form_class, name)
    return list(field.validators) if field is not None else []


def required_on_create(form_class: type[forms.BaseForm], name: str) -> bool:
    """A field a new row must be given: the form requires it and the model has no default."""
    field = form_class.base_fields.get(name)
    if field is None or not field.required or field.initial not in (None, ""):
        return False
    model_field = _model_field(form_class, name)
    return model_field is None or not model_field.has_default()


def apply_form_contract(schema: dict[str, Any], model: type) -> None:
    """``json_schema_extra`` step: the body's form rules into its schema (see module doc)."""
    form_class = getattr(model, "contract_form", None)
    if form_class is None:
        return
    names = {**getattr(model, "contract_names", {})}
    optional = getattr(model, "contract_optional", frozenset())
    creating = getattr(model, "contract_create", False)
    required = set(schema.get("required", []))
    for name, node in schema.get("properties", {}).items():
        form_name = names.get(name, name)
        if form_name is None:
            continue
        field = form_class.base_fields.get(form_name)
        if field is None:
            continue
        if name in optional:  # the form makes it optional when it is built
            field = copy.copy(field)
            field.required = False
        constrain(node, field, _model_validators(form_class, form_name))
        if creating and name not in optional and required_on_create(form_class, form_name):
            required.add(name)
    if required:
        schema["required"] = sorted(required)


def read_decimal(value: str, field: forms.DecimalField) -> str:
    """A posted number for a decimal field, rounded half-even to its places (module doc)."""
    if field.decimal_places is None:
        return value
    try:
        number = Decimal(value)
    except (InvalidOperation, TypeError):
        return value  # the form says what is wrong with it
    if not number.is_finite():
        return value
    exponent = number.as_tuple().exponent
    if isinstance(exponent, int) and -exponent > field.decimal_places:
        quantum = Decimal(1).scaleb(-field.decimal_places)
        return str(number.quantize(quantum, rounding=ROUND_HALF_EVEN))
    return value
