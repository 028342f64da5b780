"""Forms of the client-review pages (consultant and client side)."""

from __future__ import annotations

from django import forms
from django.utils import timezone

from planner.input_rules import ROW_ID_MAX, InputForm
from planner.sharing import checklist
from planner.sharing.models import DecisionKind, Section
from planner.validation import IsoDateInput, date_in_range

LATEST = "latest"


class PublishForm(InputForm):
    note = forms.CharField(
        required=False, max_length=300, label="What changed (shown to the client)"
    )
    with_open_items = forms.BooleanField(
        required=False,
        label="Publish with these open items",
        help_text="The revision then lists them for the client.",
    )

    def __init__(self, *args, **kwargs) -> None:
        # Shares the page with the link form: distinct ids, same field names.
        kwargs.setdefault("auto_id", "id_publish_%s")
        super().__init__(*args, **kwargs)


class ShareLinkForm(InputForm):
    revision = forms.ChoiceField(label="Shows")
    expires_at = forms.DateTimeField(
        required=False,
        label="Expires",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d"],
        help_text="Empty: the link works until you revoke it.",
    )
    note = forms.CharField(required=False, max_length=200, label="Note (for you)")

    def __init__(self, *args, revision_numbers: list[int], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["revision"].choices = [(LATEST, "Latest published revision")] + [
            (str(n), f"Revision {n}") for n in revision_numbers
        ]

    def clean_expires_at(self):
        value = self.cleaned_data.get("expires_at")
        if value is not None and value <= timezone.now():
            raise forms.ValidationError("The expiry must be in the future.")
        return value


class CommentForm(InputForm):
    section = forms.ChoiceField(choices=Section.choices, initial=Section.GENERAL)
    author_name = forms.CharField(max_length=120, label="Your name")
    body = forms.CharField(
        max_length=4000, label="Comment", widget=forms.Textarea(attrs={"rows": 3})
    )
    email = forms.EmailField(
        required=False,
        max_length=254,
        label="Your e-mail (optional)",
        help_text="Only the consultant sees it: their reply is e-mailed to you, with a link "
        "to forget your address.",
        error_messages={"invalid": "Enter an e-mail address such as name@example.com."},
    )


class ReplyForm(InputForm):
    """A consultant's reply under a client comment: the comment's own rules (length, no NUL)."""

    body = forms.CharField(
        max_length=4000,
        label="Your reply",
        widget=forms.Textarea,
        error_messages={"required": "Write a reply.", "max_length": "At most 4,000 characters."},
    )


class DecisionForm(InputForm):
    revision_number = forms.IntegerField(
        widget=forms.HiddenInput, min_value=1, max_value=ROW_ID_MAX
    )
    kind = forms.ChoiceField(
        choices=DecisionKind.choices, widget=forms.RadioSelect, label="Your decision"
    )
    name = forms.CharField(max_length=120, label="Your name")
    note = forms.CharField(
        required=False,
        max_length=4000,
        label="Note (say what should change when you ask for changes)",
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    def clean(self):
        data = super().clean()
        if (
            data.get("kind") == DecisionKind.CHANGES_REQUESTED
            and not (data.get("note") or "").strip()
        ):
            self.add_error("note", "Say what should change.")
        return data


class SignOffForm(InputForm):
    item_key = forms.ChoiceField(
        choices=[(key, title) for key, title in checklist.ITEM_TITLES.items()], label="Item"
    )
    name = forms.CharField(max_length=120, label="Signed by")
    signed_on = forms.DateField(
        label="Date",
        widget=IsoDateInput(),
        initial=timezone.localdate,
        validators=date_in_range(),
    )
    note = forms.CharField(
        required=False, max_length=2000, label="Evidence or note",
        widget=forms.Textarea(attrs={"rows": 2}),
    )  # fmt: skip
    withdraw = forms.BooleanField(required=False, label="Withdraw the current sign-off")

    def clean_signed_on(self):
        value = self.cleaned_data["signed_on"]
        if not checklist.signed_on_is_valid(value, timezone.localdate()):
            raise forms.ValidationError("The sign-off date cannot be in the future.")
        return value
