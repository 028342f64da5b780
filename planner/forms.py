"""Forms of the organisation pages."""

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from planner.input_rules import ROW_ID_MAX, InputForm, InputModelForm, InputRulesMixin
from planner.models import Client, Organisation, Plan, Role, VatRecovery
from planner.models.organisations import payment_lines
from planner.portable import MAX_BYTES, PortableError, plan_document_parse, plan_import
from planner.validation import IsoDateInput
from planner.versioning import VersionedFormMixin


class InviteForm(InputForm):
    """An owner invites a person by e-mail; they join when they accept the e-mailed link."""

    email = forms.EmailField(label="E-mail")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.CONSULTANT)


class InvitationSignupForm(InputRulesMixin, UserCreationForm):
    """A new account for the invited address (the e-mail is the invitation's, not typed)."""

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ["username", "first_name", "last_name"]

    def __init__(self, *args, email: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.email = email

    def clean(self):
        cleaned = super().clean()
        # Only the link's holder sees this, and the link went to this address.
        if User.objects.filter(email__iexact=self.email).exists():
            raise forms.ValidationError(
                "An account with this e-mail address exists already: sign in to accept."
            )
        return cleaned

    def save(self, commit: bool = True) -> User:
        user = super().save(commit=False)
        user.email = self.email
        if commit:
            user.save()
        return user


class MemberRoleForm(VersionedFormMixin, InputForm):
    role = forms.ChoiceField(choices=Role.choices)


class OrganisationSwitchForm(InputForm):
    organisation = forms.IntegerField(min_value=1, max_value=ROW_ID_MAX)


class ClientForm(VersionedFormMixin, InputModelForm):
    class Meta:
        model = Client
        fields = [
            "name",
            "country",
            "contact_name",
            "contact_email",
            "vat_recovery",
            "vat_recoverable_pct",
            "notes",
        ]
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, organisation, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.organisation = organisation
        # The range is checked in clean() with a message that names the rule, not the browser's.
        pct = self.fields["vat_recoverable_pct"]
        pct.validators = [v for v in pct.validators if not hasattr(v, "limit_value")]

    def clean(self) -> dict:
        cleaned = super().clean()
        recovery, pct = cleaned.get("vat_recovery"), cleaned.get("vat_recoverable_pct")
        if recovery == VatRecovery.PARTIAL:
            if pct is None:
                if "vat_recoverable_pct" not in self.errors:
                    self.add_error(
                        "vat_recoverable_pct",
                        "Enter the share of VAT the client recovers (between 0 and 100 %).",
                    )
            elif not 0 < pct < 100:
                self.add_error(
                    "vat_recoverable_pct",
                    "A partial recovery is more than 0 and less than 100 %: choose None for "
                    "0 % or Full for 100 %.",
                )
        elif recovery and pct is not None:
            self.add_error(
                "vat_recoverable_pct",
                "Leave the percentage empty unless the recovery is partial.",
            )
        return cleaned

    def clean_country(self) -> str:
        return self.cleaned_data["country"].upper()

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        clash = Client.objects.filter(organisation=self.organisation, name__iexact=name)
        if self.instance.pk:
            clash = clash.exclude(pk=self.instance.pk)
        if clash.exists():
            raise forms.ValidationError("A client with this name already exists.")
        return name


class PlanForm(VersionedFormMixin, InputModelForm):
    """A plan for an existing client, or for a new client named here."""

    new_client = forms.CharField(
        label="…or a new client",
        required=False,
        max_length=200,
        help_text="Creates the client with this name.",
    )

    class Meta:
        model = Plan
        fields = ["name", "client", "new_client", "currency", "target_go_live", "notes"]
        widgets = {
            "target_go_live": IsoDateInput(),
            "notes": forms.Textarea(attrs={"rows": 3}),
        }

    def __init__(self, *args, organisation, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.organisation = organisation
        self.fields["client"].queryset = Client.objects.filter(organisation=organisation)
        self.fields["client"].required = False
        # No maxlength: a browser would cut "banana" to "ban"; clean_currency says what's wrong.
        currency = self.fields["currency"]
        currency.widget.attrs.pop("maxlength", None)
        currency.validators = [v for v in currency.validators if not hasattr(v, "limit_value")]

    def clean_currency(self) -> str:
        code = self.cleaned_data["currency"].strip().upper()
        from sourcing.selectors import currency_problem  # sourcing holds the FX rates

        if problem := currency_problem(code):
            raise forms.ValidationError(problem)
        return code

    def clean(self) -> dict:
        cleaned = super().clean()
        new_name = (cleaned.get("new_client") or "").strip()
        if not cleaned.get("client") and not new_name:
            self.add_error("client", "Pick a client or name a new one.")
        elif cleaned.get("client") and new_name:
            self.add_error("new_client", "Pick an existing client or name a new one, not both.")
        elif (
            new_name
            and Client.objects.filter(
                organisation=self.organisation, name__iexact=new_name
            ).exists()
        ):
            self.add_error("new_client", "A client with this name already exists; pick it above.")
        return cleaned

    def _post_clean(self) -> None:
        # The model's clean() checks client and organisation agree: set both first.
        self.instance.organisation = self.organisation
        super()._post_clean()


class ApiTokenForm(InputForm):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. 'CI sizing checks'."
    )


class ServingDefaultsForm(VersionedFormMixin, InputModelForm):
    """The serving stack, version and KV-cache dtype new workloads of the organisation take."""

    class Meta:
        model = Organisation
        fields = [
            "default_serving_stack",
            "default_serving_stack_version",
            "default_kv_cache_dtype",
        ]
        labels = {
            "default_serving_stack": "Serving stack",
            "default_serving_stack_version": "Stack version",
            "default_kv_cache_dtype": "KV-cache dtype",
        }


class QuoteTermsForm(VersionedFormMixin, InputModelForm):
    class Meta:
        model = Organisation
        fields = ["quote_terms", "quote_validity_days"]
        widgets = {"quote_terms": forms.Textarea(attrs={"rows": 6})}
        labels = {"quote_validity_days": "New quotes valid for (days)"}

    def clean_quote_terms(self) -> str:
        terms = self.cleaned_data["quote_terms"]
        stated = payment_lines(terms)
        if stated:
            raise forms.ValidationError(
                f"'{stated[0][:60]}' states payment: the payment milestones are set once on "
                "each plan's quote page, so remove it here."
            )
        return terms

    def clean_quote_validity_days(self) -> int:
        days = self.cleaned_data["quote_validity_days"]
        if not 1 <= days <= 365:
            raise forms.ValidationError("Between 1 and 365 days.")
        return days


class PlanFileForm(InputForm):
    """A portable plan file to rebuild as a new plan of the organisation (all or nothing)."""

    ERRORS_SHOWN = 10  # a hostile file can hold thousands of bad rows: the first few say enough

    file = forms.FileField(
        label="Plan file",
        help_text=(
            f"A .json plan file exported from a plan's overview, at most "
            f"{MAX_BYTES // 1_000_000} MB, as for the API (a plan of 30 BOM lines is about "
            "60 KB; the limit turns a wrong file away before it is parsed). A file with any "
            "error imports nothing."
        ),
        widget=forms.FileInput(attrs={"accept": ".json,application/json"}),
    )

    def __init__(self, *args, organisation: Organisation, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.organisation, self.user = organisation, user
        self.document: dict | None = None

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_BYTES:  # before reading it into memory
            raise forms.ValidationError(
                f"The file is larger than {MAX_BYTES // 1_000_000} MB: it is not a plan file."
            )
        try:
            self.document = plan_document_parse(upload.read())
        except PortableError as exc:
            raise forms.ValidationError(self._messages(exc)) from None
        return upload

    def save(self) -> Plan | None:
        """The imported plan, or None with the importer's refusals on the file field."""
        try:
            return plan_import(self.document, organisation=self.organisation, user=self.user)
        except PortableError as exc:
            for message in self._messages(exc):
                self.add_error("file", message)
            return None

    def _messages(self, exc: PortableError) -> list[str]:
        messages = [
            message if where in ("file", "format", "version") else f"{_place(where)}: {message}"
            for where, texts in exc.errors.items()
            for message in texts
        ]
        shown = messages[: self.ERRORS_SHOWN]
        if len(messages) > len(shown):
            shown.append(f"… and {len(messages) - len(shown)} more problems.")
        return shown


def _place(where: str) -> str:
    """A place in a plan file in words: ``bom_lines[3].part_key`` → "BOM line 4, part key"."""
    words = []
    for part in where.split("."):
        name, _, index = part.partition("[")
        name = name.replace("_", " ").replace("bom ", "BOM ")
        if index:
            name = f"{name.removesuffix('s')} {int(index.rstrip(']')) + 1}"
        words.append(name)
    text = ", ".join(words)
    return text[:1].upper() + text[1:]
