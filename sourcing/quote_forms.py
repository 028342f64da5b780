"""Forms of the plan's quote: markups (global, per category, per line), payment terms and
validity; services and fees."""

from __future__ import annotations

from decimal import Decimal

from django import forms

from planner.labels import CATEGORY_LABELS, label
from planner.versioning import VersionedFormMixin
from sourcing.models import QuoteFee, QuoteSettings, markup_validators

MARKUP_HELP = "Blank = the global markup."


def _markup_field(label: str, help_text: str = "") -> forms.DecimalField:
    return forms.DecimalField(
        label=label, required=False, max_digits=7, decimal_places=2,
        validators=markup_validators, help_text=help_text,
    )  # fmt: skip


class QuoteSettingsForm(VersionedFormMixin, forms.ModelForm):
    """Global markup, one optional markup per BOM category and per BOM line, terms."""

    class Meta:
        model = QuoteSettings
        fields = ["markup_pct", "payment_terms", "validity_days"]
        widgets = {"payment_terms": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, categories=(), lines=(), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.categories = list(categories)
        self.lines = list(lines)  # (part key, description)
        stored_categories = self.instance.category_markups or {}
        stored_lines = self.instance.line_markups or {}
        for category in self.categories:
            name = f"category_{category}"
            self.fields[name] = _markup_field(
                f"Markup % on {label(category, CATEGORY_LABELS)}", MARKUP_HELP
            )
            self.initial.setdefault(name, stored_categories.get(category))
        for key, description in self.lines:
            name = f"line_{key}"
            self.fields[name] = _markup_field(
                f"Markup % on {description}", "Blank = its category's, else the global markup."
            )
            self.initial.setdefault(name, stored_lines.get(key))

    def clean(self) -> dict:
        cleaned = super().clean()
        by_category = {
            c: str(cleaned[f"category_{c}"])
            for c in self.categories
            if cleaned.get(f"category_{c}") is not None
        }
        by_line = {
            k: str(cleaned[f"line_{k}"])
            for k, _ in self.lines
            if cleaned.get(f"line_{k}") is not None
        }
        self.instance.category_markups = by_category
        self.instance.line_markups = by_line
        return cleaned


class QuoteFeeForm(VersionedFormMixin, forms.ModelForm):
    """A service or fee on the quote (support in whole years, a lump sum as quantity 1)."""

    class Meta:
        model = QuoteFee
        fields = ["kind", "description", "quantity", "unit", "unit_price"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["quantity"].initial = Decimal(1)
        self.fields["unit_price"].label = "Unit price (sell)"
