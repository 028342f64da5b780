"""The operations & security form (``planner.models.OperationsPlan``)."""

from django import forms

from planner.input_rules import InputModelForm
from planner.models import OperationsPlan
from planner.models.operations import TOPICS
from planner.versioning import VersionedFormMixin


class OperationsPlanForm(VersionedFormMixin, InputModelForm):
    class Meta:
        model = OperationsPlan
        fields = [f"{key}_{part}" for key, _ in TOPICS for part in ("owner", "how")] + ["notes"]
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}

    def topic_rows(self) -> list[tuple[str, str, forms.BoundField, forms.BoundField]]:
        """(key, label, owner field, tool field) per concern, in the guide's order."""
        return [(key, label, self[f"{key}_owner"], self[f"{key}_how"]) for key, label in TOPICS]
