"""Forms of the organisation pages."""

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from planner.models import Client, Organisation, Plan, Role, VatRecovery
from planner.validation import IsoDateInput
from planner.versioning import VersionedFormMixin


class InviteForm(forms.Form):
    """An owner invites a person by e-mail; they join when they accept the e-mailed link."""

    email = forms.EmailField(label="E-mail")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.CONSULTANT)


class InvitationSignupForm(UserCreationForm):
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


class MemberRoleForm(VersionedFormMixin, forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class OrganisationSwitchForm(forms.Form):
    organisation = forms.IntegerField(min_value=1)


class ClientForm(VersionedFormMixin, forms.ModelForm):
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


class PlanForm(VersionedFormMixin, forms.ModelForm):
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


class ApiTokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. 'CI sizing checks'."
    )


class QuoteTermsForm(VersionedFormMixin, forms.ModelForm):
    class Meta:
        model = Organisation
        fields = ["quote_terms", "quote_validity_days"]
        widgets = {"quote_terms": forms.Textarea(attrs={"rows": 6})}
        labels = {"quote_validity_days": "Quotes valid for (days)"}

    def clean_quote_validity_days(self) -> int:
        days = self.cleaned_data["quote_validity_days"]
        if not 1 <= days <= 365:
            raise forms.ValidationError("Between 1 and 365 days.")
        return days
