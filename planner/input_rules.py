"""The input rules every form and API body shares for text: no control characters.

A NUL byte cannot be stored by PostgreSQL (a 500 where a form forgot it); the other C0 and
C1 control characters and DEL are never typed by a person, break the PDF and CSV exports
and hide text from a reader. A single-line field refuses all of them; a multi-line one
(a ``Textarea``) keeps tab, line feed and carriage return. Lengths and ranges come from the
fields themselves (``max_length``, ``planner.validation.in_range``).

Forms get the rule by construction: every project form derives from :class:`InputForm` or
:class:`InputModelForm` (or puts :class:`InputRulesMixin` first in its bases);
``tests/input/test_input_rules_walk.py`` fails on one that does not, on a text field without a
maximum length and on a number without a lower and an upper bound. The API documents the
same rule as a ``pattern`` on its strings (:data:`SINGLE_LINE_PATTERN`) and checks it in
``planner.api.common.InSchema``.
"""

from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError

# C0 controls, DEL and C1 controls; tab, LF and CR are allowed where text has lines.
_SINGLE_LINE_BAD = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_MULTI_LINE_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

# The same rules as JSON-schema patterns (ECMA-262 and Python both read \xNN escapes).
SINGLE_LINE_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]*$"
MULTI_LINE_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$"


def control_character(value: str, *, multiline: bool) -> str | None:
    """The first control character ``value`` may not hold, or None."""
    found = (_MULTI_LINE_BAD if multiline else _SINGLE_LINE_BAD).search(value)
    return found.group() if found else None


def control_character_message(character: str) -> str:
    if character == "\x00":
        return "Null characters are not allowed."
    if character in "\t\n\r":
        return "Keep this to one line (no tabs or line breaks)."
    return f"Remove the control character U+{ord(character):04X}: it cannot be typed or printed."


class NoControlCharacters:
    """A field validator: refuses text holding a control character, naming it."""

    code = "control_characters"

    def __init__(self, *, multiline: bool) -> None:
        self.multiline = multiline

    def __call__(self, value) -> None:
        if not isinstance(value, str):
            return
        character = control_character(value, multiline=self.multiline)
        if character is not None:
            raise ValidationError(control_character_message(character), code=self.code)

    def __eq__(self, other) -> bool:
        return isinstance(other, NoControlCharacters) and other.multiline == self.multiline


def is_multiline(field: forms.Field) -> bool:
    return isinstance(field.widget, forms.Textarea)


# A row's id or number as the database's integer holds it: a larger one cannot exist.
ROW_ID_MAX = 2**31 - 1
# Free text kept with a row (notes, terms): about ten printed pages; the API says the same.
NOTES_MAX_LENGTH = 20_000


class InputRulesMixin:
    """Puts the shared text rule on every text field of a form (declared or from a model).

    The rule is added when the form is built and again before it is cleaned, so a field a
    subclass adds in its own ``__init__`` after ``super().__init__()`` gets it too. Each bound
    form deep-copies its fields, so adding the validator never leaks into the class's
    ``base_fields`` or another form.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.apply_input_rules()

    def apply_input_rules(self) -> None:
        for field in self.fields.values():
            if isinstance(field, forms.CharField):
                rule = NoControlCharacters(multiline=is_multiline(field))
                if rule not in field.validators:
                    field.validators.append(rule)

    def full_clean(self) -> None:
        self.apply_input_rules()
        super().full_clean()


class InputForm(InputRulesMixin, forms.Form):
    """The base of every plain form of the project: the shared input rules built in."""


class InputModelForm(InputRulesMixin, forms.ModelForm):
    """The base of every model form of the project: the shared input rules built in."""
