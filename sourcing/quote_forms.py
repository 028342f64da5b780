"""Forms of the plan's quote: markups (global, per category, per line), the commercial terms
(payment milestones, delivery, warranty, validity); services and fees."""

from __future__ import annotations

from decimal import Decimal

from django import forms

from planner.engine import quote as quote_engine
from planner.input_rules import InputModelForm
from planner.labels import CATEGORY_LABELS, label
from planner.versioning import VersionedFormMixin
from sourcing.models import QuoteFee, QuoteSettings, markup_validators

MARKUP_HELP = "Blank = the global markup."


def _markup_field(label: str, help_text: str = "") -> forms.DecimalField:
    return forms.DecimalField(
        label=label, required=False, max_digits=7, decimal_places=2,
        validators=markup_validators, help_text=help_text,
    )  # fmt: skip


class QuoteSettingsForm(VersionedFormMixin, InputModelForm):
    """Global markup, one optional markup per BOM category and per BOM line, and the quote's
    one set of commercial terms (payment milestones, delivery, warranty, validity)."""

    payment_milestones = forms.CharField(
        label="Payment milestones",
        max_length=5_000,  # twenty milestones of a line each, as many as the API takes
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One a line: a percentage of the total, then the event it falls due on "
        "(on order, on delivery, on acceptance...); they add up to 100 %.",
    )

    class Meta:
        model = QuoteSettings
        fields = [
            "markup_pct", "payment_due_days", "delivery_terms", "warranty_terms",
            "validity_days",
        ]  # fmt: skip

    field_order = ["markup_pct", "payment_milestones", "payment_due_days", "delivery_terms",
                   "warranty_terms", "validity_days"]  # fmt: skip

    def __init__(self, *args, categories=(), lines=(), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        try:
            stored = self.instance.milestones()
        except quote_engine.QuoteError:
            stored = ()
        self.initial.setdefault(
            "payment_milestones", "\n".join(quote_engine.milestone_words(m) for m in stored)
        )
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

    def clean_payment_milestones(self) -> str:
        text = self.cleaned_data["payment_milestones"]
        try:
            milestones = quote_engine.parse_milestones(text)
        except quote_engine.QuoteError as exc:
            raise forms.ValidationError(str(exc)) from exc
        self.instance.payment_milestones = [
            {"pct": f"{m.pct.normalize():f}", "when": m.when} for m in milestones
        ]
        return text

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


class QuoteFeeForm(VersionedFormMixin, InputModelForm):
    """A service or fee on the quote (support in whole years, a lump sum as quantity 1)."""

    class Meta:
        model = QuoteFee
        fields = ["kind", "description", "quantity", "unit", "unit_price"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["quantity"].initial = Decimal(1)
        self.fields["unit_price"].label = "Unit price (sell)"
