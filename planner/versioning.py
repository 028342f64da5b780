"""Optimistic concurrency for edit forms: a row version, a stale-edit error and a form mixin.

Two people may load the same row into a form; the second save must not silently revert the
first. The contract:

- A :class:`VersionedModel` row carries ``version``. Every ``save()`` of an existing row bumps
  it in the database (``version = version + 1``), so any change, by a form or not, makes the
  forms loaded before it stale.
- A :class:`VersionedFormMixin` form carries, as hidden fields, the version it was loaded
  from and the values it showed (signed with :mod:`django.core.signing`). When it is posted
  and the row has changed since:

  * fields changed meanwhile that the user did not touch are merged: the stored value is
    kept (the posted value is replaced by it before validation);
  * fields both changed, to different values, refuse the save: the form is invalid, with a
    message naming each field, the value saved meanwhile and the user's value, and the
    user's values stay in the form. Its hidden fields then carry the current version, so
    saving again deliberately keeps the user's values.

- Saving is race-free: the form's row is saved with a conditional
  ``UPDATE … SET version = v + 1 WHERE pk = … AND version = v`` first (on PostgreSQL the
  updated row stays locked until commit, so a concurrent save of the same version updates
  nothing). When it updates nothing, :class:`StaleEditError` is raised; the JSON API maps it
  to 409 (``planner.api``) and views show it next to the form.

Pages that autosave through htmx (workload, site) swap the answer's hidden fields and the
merged fields' inputs into the page out of band (``templates/includes/version_fields.html``)
and serialise their requests (``hx-sync``), so one person's consecutive autosaves never
conflict and a stale tab cannot put back a value it loaded.

A form posted without the hidden version (an old page, a script, the Django admin) is saved
as before, last write wins. ``QuerySet.update`` and ``bulk_update`` do not bump the version.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

from django import forms
from django.core import signing
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F
from django.utils.functional import cached_property

LOADED_VERSION = "loaded_version"
LOADED_VALUES = "loaded_values"
VERSIONING_FIELDS = (LOADED_VERSION, LOADED_VALUES)


@dataclass(frozen=True)
class StaleChange:
    """One field both people changed: its name, label and the two values as displayed."""

    field: str
    label: str
    theirs: str
    yours: str


class StaleEditError(Exception):
    """A save based on a version of the row that is no longer the stored one.

    Attributes:
        model: The model's verbose name ("workload").
        pk: The row's primary key.
        changes: One :class:`StaleChange` per conflicting field (the value saved
            meanwhile and the user's value); empty when the conflict was only detected at the database (two saves of
            the same version at the same moment).
    """

    def __init__(self, *, model: str, pk: Any, changes: list[StaleChange] | None = None) -> None:
        self.model = model
        self.pk = pk
        self.changes = list(changes or [])
        super().__init__(self.message)

    @property
    def message(self) -> str:
        if not self.changes:
            return (
                f"Someone else saved this {self.model} at the same moment, so nothing of yours "
                "was saved. Your values are kept below: save again to see what changed."
            )
        listed = "; ".join(f"{c.label}: now {c.theirs}, yours {c.yours}" for c in self.changes)
        return (
            f"Someone else changed this {self.model} while you were editing it, so it was not "
            f"saved. Changed meanwhile: {listed}. Your values are kept below: save again to "
            "keep yours, or change them back."
        )

    def as_error_dict(self) -> dict[str, list[str]]:
        """The API's error shape: ``{"__all__": [message]}`` plus one entry per field."""
        return {"__all__": [self.message]} | {
            c.field: [f"Changed meanwhile to {c.theirs}; yours {c.yours}."] for c in self.changes
        }


class VersionedModel(models.Model):
    """Abstract base: a ``version`` bumped atomically by every save of an existing row."""

    version = models.PositiveIntegerField(
        default=1, editable=False, help_text="Bumped by every save; edit forms carry it."
    )

    class Meta:
        abstract = True

    def save(self, *args, **kwargs) -> None:
        expected = self.__dict__.pop("_version_expected", None)
        if self._state.adding or self.pk is None:
            return super().save(*args, **kwargs)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "version" not in update_fields:
            kwargs["update_fields"] = [*update_fields, "version"]
        if expected is None:
            # Last write wins (admin, scripts): the bump rides in the row's own UPDATE.
            self.version = F("version") + 1
            super().save(*args, **kwargs)
            self.refresh_from_db(fields=["version"])
            return None
        # One conditional UPDATE ... WHERE version = expected (see _do_update): no race
        # between a check and the write, and no extra round trip. A refused update is
        # reported after save() returns, not raised inside it: an exception inside
        # Model.save_base() would mark the caller's whole transaction for rollback.
        # (post_save still fires for a refused save; no receiver in the project uses it.)
        self.__dict__["_version_where"] = expected
        self.version = expected + 1
        super().save(*args, **kwargs)
        if self.__dict__.pop("_version_refused", False):
            self.version = expected
            raise StaleEditError(model=self._meta.verbose_name, pk=self.pk)
        return None

    def _do_update(self, base_qs, using, pk_val, values, update_fields, forced_update):
        expected = self.__dict__.pop("_version_where", None)
        if expected is None:
            return super()._do_update(base_qs, using, pk_val, values, update_fields, forced_update)
        filtered = base_qs.filter(version=expected)
        if not super()._do_update(filtered, using, pk_val, values, update_fields, True):
            # Say "updated" so that Django does not INSERT; save() raises StaleEditError.
            self.__dict__["_version_refused"] = True
        return True


def _jsonable(value: Any) -> Any:
    """A prepared form value as JSON: rows by pk, dates in ISO, decimals as text."""
    if isinstance(value, models.Model):
        return value.pk
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def _comparable(field: forms.Field, value: Any) -> Any:
    """The field's Python value of ``value`` (posted or prepared), for comparing two of them."""
    try:
        python = field.to_python(value)
    except (ValidationError, TypeError, ValueError):
        return ("unparsed", str(value))
    if isinstance(python, models.Model):
        return python.pk
    if isinstance(python, list | tuple):
        return [v.pk if isinstance(v, models.Model) else v for v in python]
    if python in (None, ""):
        return None
    return python


def _same(field: forms.Field, a: Any, b: Any) -> bool:
    return _comparable(field, a) == _comparable(field, b)


def _display(field: forms.Field, value: Any) -> str:
    """How a value reads in a message: a choice's label, yes/no, "—" for empty."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value in (None, "", []):
        return "—"
    if isinstance(field, forms.ModelChoiceField):
        try:
            return str(field.to_python(value))
        except ValidationError:
            return str(value)
    if isinstance(field, forms.ChoiceField):
        for key, label in field.choices:
            if isinstance(label, list | tuple):  # an optgroup
                for sub_key, sub_label in label:
                    if str(sub_key) == str(value):
                        return str(sub_label)
            elif str(key) == str(value):
                return str(label)
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def _as_posted(field: forms.Field, value: Any) -> str | list[str]:
    """A prepared value the way its widget posts it (the inverse of ``value_from_datadict``)."""
    if isinstance(field.widget, forms.CheckboxInput):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, list | tuple) and isinstance(field.widget, forms.SelectMultiple):
        return [str(v) for v in value]
    return str(value)


class VersionedFormMixin:
    """Adds the loaded version and values to an edit form and checks them when it is posted.

    Put it first in the bases of a ``ModelForm`` (the row is ``instance``) or of a plain
    form that edits one row (pass it as ``record=``). The form's row is then saved with the
    version check by its next ``save()``. After a successful save that re-renders the same
    form (htmx autosave), call :meth:`refresh_version` so the page's hidden fields carry the
    new version. ``merged_fields`` lists the labels of fields taken from a save made
    meanwhile.
    """

    def __new__(cls, *args, **kwargs):
        # The constructor's own arguments (subclasses take extra keywords such as ``plan``),
        # to build an unbound copy over the stored row later.
        form = super().__new__(cls)
        form._clone_args = args[2:]
        form._clone_kwargs = {k: v for k, v in kwargs.items() if k not in ("data", "files")}
        return form

    def __init__(self, *args, record: VersionedModel | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.record = record if record is not None else getattr(self, "instance", None)
        self.merged_fields: list[str] = []
        self._merged_names: list[str] = []
        self.stale_changes: list[StaleChange] = []
        self._base_version: int | None = None
        self._versioned = isinstance(self.record, VersionedModel) and self.record.pk is not None
        if self._versioned:
            self.fields[LOADED_VERSION] = forms.IntegerField(
                widget=forms.HiddenInput, required=False
            )
            self.fields[LOADED_VALUES] = forms.CharField(widget=forms.HiddenInput, required=False)
            self.initial[LOADED_VERSION] = self.record.version
            # Callable: evaluated when rendered, after the subclass has set its initial values.
            self.initial[LOADED_VALUES] = self._signed_values

    @cached_property
    def changed_data(self) -> list[str]:
        return [name for name in super().changed_data if name not in VERSIONING_FIELDS]

    # --- The values as shown ------------------------------------------------------------------

    def _tracked(self) -> list[str]:
        return [
            name
            for name, field in self.fields.items()
            if name not in VERSIONING_FIELDS and not field.disabled
        ]

    def _shown_values(self) -> dict[str, Any]:
        """What an unbound form shows for each tracked field (prepared, as JSON)."""
        return {name: _jsonable(self[name].value()) for name in self._tracked()}

    def _salt(self) -> str:
        return f"planner.versioning:{self.record._meta.label}:{self.record.pk}"

    def _signed_values(self) -> str:
        return signing.dumps(self._shown_values(), salt=self._salt(), compress=True)

    def _current_form(self):
        """An unbound copy of this form over the stored row: what a fresh load shows."""
        return type(self)(*((None, None) + self._clone_args), **self._clone_kwargs)

    # --- The check ------------------------------------------------------------------------------

    def _posted(self, name: str) -> Any:
        return self[name].data

    def _set_posted(self, data, name: str, value: Any) -> None:
        key = self.add_prefix(name)
        if isinstance(value, list) and hasattr(data, "setlist"):
            data.setlist(key, value)
        else:
            data[key] = value

    def _version_check(self) -> None:
        """Compare the loaded, the stored and the posted values; merge or record conflicts."""
        self._base_version = None
        self.merged_fields, self._merged_names, self.stale_changes = [], [], []
        if not (self._versioned and self.is_bound):
            return
        try:
            loaded_version = int(self.data.get(self.add_prefix(LOADED_VERSION)) or "")
        except ValueError:
            return  # posted without a version: saved as before (last write wins)
        current_version = self.record.version
        self._base_version = current_version
        if loaded_version == current_version:
            return
        current = self._current_form()
        stored = current._shown_values()
        try:
            loaded = signing.loads(
                self.data.get(self.add_prefix(LOADED_VALUES)) or "", salt=self._salt()
            )
        except signing.BadSignature:
            loaded = None  # unknown: every field the user's value differs in is a conflict
        data = self.data.copy()
        for name in self._tracked():
            field = self.fields[name]
            posted = self._posted(name)
            if _same(field, stored.get(name), posted):
                continue  # nothing to do: the user's value is what is stored now
            theirs = loaded is None or not _same(field, loaded.get(name), stored.get(name))
            mine = loaded is None or not _same(field, loaded.get(name), posted)
            if theirs and mine:
                self.stale_changes.append(
                    StaleChange(
                        field=name,
                        label=str(field.label or name),
                        theirs=_display(field, stored.get(name)),
                        yours=_display(field, posted),
                    )
                )
            elif theirs:
                self._set_posted(data, name, _as_posted(field, stored.get(name)))
                self.merged_fields.append(str(field.label or name))
                self._merged_names.append(name)
        # From now on the form stands on the stored version: a refused form saved again
        # keeps the user's values; a merged one is saved against this version.
        self._set_posted(data, LOADED_VERSION, str(current_version))
        self._set_posted(data, LOADED_VALUES, current._signed_values())
        self.data = data

    def full_clean(self) -> None:
        self._version_check()
        super().full_clean()
        if self.stale_changes:
            self.add_error(None, self.stale_error().message)
            for change in self.stale_changes:
                self.add_error(change.field, f"Changed meanwhile to {change.theirs}.")
        elif self._base_version is not None and not self._errors:
            self.record._version_expected = self._base_version

    @property
    def merge_note(self) -> str:
        """The sentence for the success message: which fields were taken from another save."""
        if not self.merged_fields:
            return ""
        return f" Kept the changes saved meanwhile to: {', '.join(self.merged_fields)}."

    @property
    def merged_widgets(self) -> list[str]:
        """The merged fields' inputs, showing the stored values, to swap into a page that
        saves through htmx (out of band): its inputs must not keep the values it loaded."""
        return [self[name].as_widget(attrs={"hx-swap-oob": "true"}) for name in self._merged_names]

    def stale_error(self) -> StaleEditError | None:
        """The conflict found when the form was cleaned, as the service-level error."""
        if not self.stale_changes:
            return None
        return StaleEditError(
            model=self.record._meta.verbose_name, pk=self.record.pk, changes=self.stale_changes
        )

    def add_stale_error(self, exc: StaleEditError) -> None:
        """Show a save refused at the database (a concurrent save of the same version)."""
        self.add_error(None, exc.message)

    def refresh_version(self) -> None:
        """After a save, make the hidden fields carry the saved row's version and values."""
        if not (self._versioned and self.is_bound):
            return
        data = self.data.copy()
        self._set_posted(data, LOADED_VERSION, str(self.record.version))
        self._set_posted(data, LOADED_VALUES, self._current_form()._signed_values())
        self.data = data
