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
from typing import Any

from django.core.exceptions import PermissionDenied
from ninja import Field, Schema
from pydantic import ConfigDict, model_validator

from planner import selectors
from planner.models import ApiToken, Membership, Plan
from planner.permissions import VIEWER_MESSAGE
from planner.versioning import LOADED_VERSION, VERSIONING_FIELDS, _as_posted

MAX_PK = 2**31 - 1  # PostgreSQL integer: larger ids cannot exist (and would fail the query)

ERROR_TEXT = {
    400: "A field is invalid (messages per field, the page's own), the body is not JSON, or "
    "an id in the path is out of range.",
    401: "No session of a member and no valid Bearer token.",
    403: "A viewer (or a token of one) tried to change something, or a session request "
    "failed the CSRF check.",
    404: "No such object in your organisation (another organisation's ids read the same).",
    409: "The object changed since the `version` you sent; the message names the fields.",
    500: "Unexpected fault (logged).",
}
ALWAYS = (400, 401, 403, 500)


def op(ok: dict, *extra: int) -> dict:
    """An endpoint's ``response=`` (its success schema and every error status it may answer,
    in the one error shape) and ``openapi_extra`` saying when each error is answered."""
    from planner.api import ErrorOut  # defined before this module is imported

    codes = (*ALWAYS, *extra)
    return {
        "response": ok | {code: ErrorOut for code in codes},
        "openapi_extra": {"responses": {code: {"description": ERROR_TEXT[code]} for code in codes}},
    }


class InSchema(Schema):
    """A request body: unknown fields are refused (a typo must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _encodable(self):
        """Text the database can store: no lone surrogates (JSON allows them, UTF-8 not)."""

        def bad(value: Any) -> bool:
            if isinstance(value, str):
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    return True
                return False
            if isinstance(value, dict):
                return any(bad(k) or bad(v) for k, v in value.items())
            if isinstance(value, list | tuple):
                return any(bad(v) for v in value)
            if isinstance(value, Schema):
                return bad(value.model_dump())
            return False

        if bad(self.model_dump()):
            raise ValueError("Text must be valid Unicode (a lone surrogate was sent).")
        return self


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
    """The organisation's plan, or DoesNotExist (a 404) for any other."""
    return selectors.plan_get(organisation=request.organisation, plan_id=plan_id)


def posted_value(value: Any) -> Any:
    """A JSON value as a browser would post it into the matching form field."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def sent_fields(payload: Schema) -> dict[str, Any]:
    """The fields the request sent (a PATCH changes only those), without its ``version``."""
    return payload.model_dump(exclude_unset=True, exclude={"version"})


class FormErrors(Exception):
    """A form refused the data: ``errors`` is field → messages, in the API's field names."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("invalid")
        self.errors = errors


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
            }
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
