"""Forms of the organisation pages."""

from django import forms

from planner.models import Role


class MemberAddForm(forms.Form):
    email = forms.EmailField(label="E-mail")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.CONSULTANT)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class OrganisationSwitchForm(forms.Form):
    organisation = forms.IntegerField(min_value=1)
