"""What the plan endpoints share: roles, tenancy look-ups and the bridge to the pages' forms.

Writes go through the same Django forms and services as the pages, so a script gets the
same validation and the same messages as a person typing. The bridge turns a JSON object
into the form's posted data: the stored row's values (as an unbound form shows them) with
the sent fields laid over them, so a PATCH only changes what it sends.

Roles: a session acts with the member's role in the current organisation; an API token
acts with the role its creator has in the token's organisation today (a token whose creator
left, or became a viewer, can only read).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, ClassVar, get_args

from django import forms
from django.core.exceptions import PermissionDenied
from ninja import Field, Schema
from pydantic import ConfigDict, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from planner import selectors
from planner.api.contract import apply_form_contract, is_lookup, read_decimal
from planner.input_rules import (
    MULTI_LINE_PATTERN,
    SINGLE_LINE_PATTERN,
    control_character,
    control_character_message,
    is_multiline,
)
from planner.models import ApiToken, Membership, Plan
from planner.permissions import VIEWER_MESSAGE
from planner.tenancy import org_object_or_404
from planner.versioning import LOADED_VERSION, VERSIONING_FIELDS, _as_posted

MAX_PK = 2**31 - 1  # PostgreSQL integer: larger ids cannot exist (and would fail the query)

ERROR_TEXT = {
    400: "The request's shape is wrong, as this document describes it (a type, a required "
    "field, a length, a range, a closed set, an unknown field), the body is not JSON, or an id "
    "in the path is out of range. Messages per field, the pages' own.",
    401: "No session of a member and no valid Bearer token.",
    403: "A viewer (or a token of one) tried to change something, or a session request "
    "failed the CSRF check.",
    404: "No such object in your organisation (another organisation's ids read the same).",
    409: "The object changed since the `version` you sent; the message names the fields.",
    422: "The request is well formed but a rule of the domain refuses its content, which this "
    "document cannot express: a rule across fields (payment shares that do not add up to "
    "100 %), a catalog slug or other name that is not there, a configuration the engine "
    "cannot size, or a step the plan is not ready for. The message says which.",
    500: "Unexpected fault (logged).",
}
ALWAYS = (400, 401, 403, 422, 500)


def op(ok: dict, *extra: int) -> dict:
    """An endpoint's ``response=`` (its success schema and every error status it may answer,
    in the one error shape) and ``openapi_extra`` saying when each error is answered."""
    from planner.api import ErrorOut  # defined before this module is imported

    codes = (*ALWAYS, *extra)
    return {
        "response": ok | {code: ErrorOut for code in codes},
        "openapi_extra": {"responses": {code: {"description": ERROR_TEXT[code]} for code in codes}},
    }


def _strings(value: Any):
    """Every string in a request value, dict keys included (nested schemas check their own)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _text_rule_schema(schema: dict[str, Any], model: type) -> None:
    """Writes the text rule into the document: each free string gets the pattern that keeps
    control characters out (``planner.input_rules``); strings with their own pattern, a closed
    set or a format are already narrower."""
    apply_form_contract(schema, model)
    multiline = model.multiline() if hasattr(model, "multiline") else frozenset()

    def narrow(node: dict[str, Any], pattern: str) -> None:
        for branch in node.get("anyOf", [node]):
            if branch.get("type") == "string" and not {"pattern", "enum", "const", "format"} & set(
                branch
            ):
                branch["pattern"] = pattern
            if branch.get("type") == "array" and isinstance(branch.get("items"), dict):
                narrow(branch["items"], pattern)
            if branch.get("type") == "object" and isinstance(
                branch.get("additionalProperties"), dict
            ):
                branch["propertyNames"] = {"pattern": SINGLE_LINE_PATTERN}
                narrow(branch["additionalProperties"], pattern)

    for name, node in schema.get("properties", {}).items():
        narrow(node, MULTI_LINE_PATTERN if name in multiline else SINGLE_LINE_PATTERN)


class InSchema(Schema):
    """A request body: unknown fields are refused (a typo must not be silently ignored), and
    its text follows the forms' rule (``planner.input_rules``): valid Unicode and no control
    characters, except tab and line breaks in the fields named in ``multiline_fields``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_text_rule_schema)
    multiline_fields: ClassVar[frozenset[str]] = frozenset()
    # The page's form the body is bound to, whose rules the document states
    # (planner.api.contract); API names that differ from the form's (None: not a form field);
    # True on a create, whose fields without a default are required.
    contract_form: ClassVar[type | None] = None
    contract_names: ClassVar[dict[str, str | None]] = {}
    contract_create: ClassVar[bool] = False
    contract_optional: ClassVar[frozenset[str]] = frozenset()  # a create fills them itself

    @classmethod
    @cache  # per body class: read on every text field of every request
    def multiline(cls) -> frozenset[str]:
        """The fields whose text may hold tabs and line breaks: those named, and those bound
        to a text box (``Textarea``) of the body's form."""
        names = set(cls.multiline_fields)
        if cls.contract_form is not None:
            for name in cls.model_fields:
                field = cls.contract_form.base_fields.get(cls.contract_names.get(name) or name)
                if field is not None and is_multiline(field):
                    names.add(name)
        return frozenset(names)

    @field_validator("*", mode="before")
    @classmethod
    def _json_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """An integer or number field takes a JSON number and a flag true or false, as the
        document says: not true for 1 (which Python reads as 1), 0.0 for false, a numeric
        string, or 3.5 for an integer."""
        if value is None:
            return value  # null: the annotation says whether it may be
        field = cls.model_fields.get(info.field_name or "")
        kinds = {k for k in get_args(field.annotation) or (field.annotation,)} if field else set()
        kinds.discard(type(None))
        if kinds == {int} and isinstance(value, float) and value.is_integer():
            return int(value)  # JSON Schema counts 3.0 as an integer
        if kinds == {int} and (isinstance(value, bool | str | float)):
            raise PydanticCustomError(
                "json_integer", "Input should be a whole number (a JSON integer)."
            )
        if kinds == {bool} and not isinstance(value, bool):
            raise PydanticCustomError("json_boolean", "Input should be true or false.")
        if kinds == {float} and isinstance(value, bool | str):
            raise PydanticCustomError("json_number", "Input should be a number (a JSON number).")
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _text_rules(cls, value: Any, info: ValidationInfo) -> Any:
        multiline = info.field_name in cls.multiline()
        for text in _strings(value):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise PydanticCustomError(
                    "lone_surrogate", "Text must be valid Unicode (a lone surrogate was sent)."
                ) from None
            character = control_character(text, multiline=multiline)
            if character is not None:
                raise PydanticCustomError(
                    "control_characters", control_character_message(character)
                )
        return value


class Versioned(InSchema):
    version: int | None = Field(
        None,
        ge=1,
        le=MAX_PK,
        description="The `version` you read. When another save came in between and changed "
        "a field you send to another value, the edit is refused with 409. Omit it for last "
        "write wins.",
    )


def can_edit(request) -> bool:
    """Owners and consultants write; viewers (and tokens of viewers) only read."""
    if isinstance(request.auth, ApiToken):
        token = request.auth
        if token.created_by_id is None:
            return False
        membership = Membership.objects.filter(
            organisation_id=token.organisation_id, user_id=token.created_by_id
        ).first()
        return membership is not None and membership.can_edit
    membership = getattr(request, "membership", None)
    return membership is not None and membership.can_edit


def require_editor(request) -> None:
    if not can_edit(request):
        raise PermissionDenied(VIEWER_MESSAGE)


def plan_get(request, plan_id: int) -> Plan:
    """The organisation's plan, or a 404 for any other (the pages' one tenancy look-up)."""
    return org_object_or_404(request, selectors.plans_with_client(), pk=plan_id)


class PostedNumber(str):
    """A JSON number as posted text: a decimal field reads it to its places
    (:func:`planner.api.contract.read_decimal`), where a string is read exactly."""


def posted_value(value: Any) -> Any:
    """A JSON value as a browser would post it into the matching form field."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return PostedNumber(repr(value))
    return str(value)


def sent_fields(payload: Schema) -> dict[str, Any]:
    """The fields the request sent (a PATCH changes only those), without its ``version``."""
    return payload.model_dump(exclude_unset=True, exclude={"version"})


# Django's codes for a value of the wrong shape: the OpenAPI document states each of these
# (type, required, length, range, closed choice, text rule), so a schema-valid request never
# meets one. Any other code (a model's clean(), a rule across fields, a lookup) is the
# domain's: 422.
SHAPE_CODES = frozenset(
    {
        "required", "invalid", "max_length", "min_length", "max_value", "min_value",
        "step_size", "max_digits", "max_decimal_places", "max_whole_digits",
        "null_characters_not_allowed", "control_characters", "invalid_choice", "invalid_list",
    }
)  # fmt: skip


class FormErrors(Exception):
    """A form refused the data: ``errors`` is field → messages, in the API's field names;
    ``status`` 400 when a message is about shape (:data:`SHAPE_CODES`), else 422."""

    def __init__(self, errors: dict[str, list[str]], *, status: int = 400) -> None:
        super().__init__("invalid")
        self.errors = errors
        self.status = status


def refusal_status(form) -> int:
    """400 when the form refused a value's shape, 422 when only domain rules refused it.

    A choice among rows (a catalog part, a supplier: ``ModelChoiceField``) is a lookup, not
    a shape: its ``invalid_choice`` is the domain's.
    """
    for name, errors in form.errors.as_data().items():
        lookup = is_lookup(form, name)
        for error in errors:
            if error.code in SHAPE_CODES and not (lookup and error.code == "invalid_choice"):
                return 400
    return 422


def bound_form(
    form_factory: Callable[..., Any],
    *,
    sent: dict[str, Any],
    version: int | None,
    instance: Any,
):
    """The page's form bound to the stored values with ``sent`` (already posted strings) over
    them, checked; raises :class:`FormErrors` or the stale edit as the pages see it."""
    current = form_factory(instance=instance)
    data = {
        name: _as_posted(field, current[name].value())
        for name, field in current.fields.items()
        if name not in VERSIONING_FIELDS and not field.disabled
    }
    data.update(sent)
    for name, value in data.items():
        field = current.fields.get(name)
        if isinstance(value, PostedNumber) and isinstance(field, forms.DecimalField):
            data[name] = read_decimal(value, field)
    if version is not None and instance.pk is not None:
        data[LOADED_VERSION] = str(version)
    form = form_factory(data, instance=instance)
    form.is_valid()
    stale = form.stale_error() if hasattr(form, "stale_error") else None
    if stale is not None:
        raise stale
    if form.errors:
        raise FormErrors(
            {
                name: [str(message) for message in messages]
                for name, messages in form.errors.items()
                if name not in VERSIONING_FIELDS
            },
            status=refusal_status(form),
        )
    return form


def renamed(errors: dict[str, list[str]], names: dict[str, str]) -> dict[str, list[str]]:
    """Form field names → API field names in an error dict."""
    out: dict[str, list[str]] = {}
    for name, messages in errors.items():
        out.setdefault(names.get(name, name), []).extend(messages)
    return out


class JobOut(Schema):
    """A background job's state, as every job endpoint answers it (``planner.models.Job``)."""

    status: str
    progress: float = Field(..., description="0 to 1.")
    progress_message: str
    error: str
    status_url: str = Field(..., description="Poll it until the job is finished.")


def job_out(job, *, status_url: str) -> dict[str, Any]:
    """The fields of :class:`JobOut` for a job row (a TCO run, a document render…)."""
    return {
        "status": job.status,
        "progress": job.progress,
        "progress_message": job.progress_message,
        "error": job.error,
        "status_url": status_url,
    }
