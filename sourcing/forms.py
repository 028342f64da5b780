"""Forms of the sourcing pages. Bad input comes back next to the field, with what was typed."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal, InvalidOperation

from django import forms
from django.utils import timezone

from catalog.models import Accelerator, Part, ServerPlatform
from planner.engine import limits
from planner.facility.deployment import PHYSICAL_KINDS
from planner.facility.models import Site
from planner.input_rules import InputForm, InputModelForm
from planner.validation import IsoDateInput, date_in_range, in_range
from planner.versioning import VersionedFormMixin
from sourcing.models import (
    ORDER_STEPS,
    FxRate,
    MeasureDecision,
    Offer,
    PurchaseOrder,
    Service,
    SourcingSettings,
    Supplier,
    validate_currency,
)

DATE = IsoDateInput()
HS_RE = re.compile(r"^[0-9][0-9.\s]{3,13}$")
NOT_NEGATIVE = {"min_value": "Cannot be negative."}
MAX_PRICE = 10**14  # money_field: 18 digits, 4 after the point


def _upper(value: str) -> str:
    return (value or "").strip().upper()


def _hs(value: str) -> str:
    value = (value or "").strip()
    if value and (not HS_RE.match(value) or len(re.sub(r"\D", "", value)) < 4):
        raise forms.ValidationError("Give an HS code of at least 4 digits, e.g. 8471.50.")
    return value


def _currency(value: str) -> str:
    value = _upper(value)
    try:
        validate_currency(value)
    except forms.ValidationError:
        raise
    except Exception as exc:  # django.core.exceptions.ValidationError
        raise forms.ValidationError(exc.messages) from exc
    return value


def _no_negatives(form: forms.ModelForm) -> None:
    for f in form.fields.values():
        if isinstance(f, forms.DecimalField | forms.IntegerField):
            f.error_messages["min_value"] = "Cannot be negative."


class SourcingSettingsForm(VersionedFormMixin, InputModelForm):
    class Meta:
        model = SourcingSettings
        fields = [
            "destination_country", "order_date", "offer_strategy", "shipping_mode",
            "spares_mode", "spares_pct", "leaf_radix", "servers_per_rack", "storage_per_server",
            "installation_days", "burn_in_days", "brokerage_per_shipment", "allocation",
            "power_ready_on",
        ]  # fmt: skip
        widgets = {"order_date": DATE, "power_ready_on": DATE}
        help_texts = {
            "servers_per_rack": "Used when the sizing gives no rack count (NVIDIA DGX SuperPOD "
            "racks hold 4 DGX systems).",
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _no_negatives(self)

    def clean_destination_country(self) -> str:
        return _upper(self.cleaned_data["destination_country"])


class BomLineForm(VersionedFormMixin, InputForm):
    """Quantity (an override on a generated line), the pinned offer and the HS code."""

    quantity = forms.IntegerField(
        min_value=0, error_messages=NOT_NEGATIVE, validators=in_range(limits.QUANTITY)
    )
    pinned_offer = forms.ModelChoiceField(
        queryset=Offer.objects.none(), required=False, empty_label="automatic choice"
    )
    hs_code = forms.CharField(label="HS code", required=False, max_length=14)

    def __init__(self, *args, offers, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["pinned_offer"].queryset = Offer.objects.filter(
            pk__in=[o.pk for o in offers]
        ).select_related("supplier", "part", "server", "accelerator")

    def clean_hs_code(self) -> str:
        return _hs(self.cleaned_data["hs_code"])


class BomLineAddForm(InputForm):
    """A line added by hand: a catalog part or server, a service, or a described item."""

    part = forms.ModelChoiceField(queryset=Part.objects.all(), required=False)
    server = forms.ModelChoiceField(
        label="or server", queryset=ServerPlatform.objects.all(), required=False
    )
    service = forms.ChoiceField(
        label="or service", choices=[("", "---------"), *Service.choices], required=False
    )
    description = forms.CharField(max_length=200, required=False)
    quantity = forms.IntegerField(
        min_value=1,
        error_messages={"min_value": "At least 1."},
        validators=in_range(limits.QUANTITY),
    )
    reason = forms.CharField(max_length=300, required=False)
    hs_code = forms.CharField(label="HS code", required=False, max_length=14)
    site = forms.ModelChoiceField(
        label="for site",
        queryset=Site.objects.none(),
        required=False,
        empty_label="plan-wide",
        help_text="The site the units go to: landed into its country and shipped with it.",
    )

    def __init__(self, *args, plan=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if plan is not None:  # only this plan's own sites (tenancy: the plan is scoped)
            self.fields["site"].queryset = Site.objects.filter(
                plan=plan, kind__in=PHYSICAL_KINDS
            ).order_by("pk")

    def clean_hs_code(self) -> str:
        return _hs(self.cleaned_data["hs_code"])

    def clean(self) -> dict:
        cleaned = super().clean()
        picked = [n for n in ("part", "server", "service") if cleaned.get(n)]
        if len(picked) > 1:
            self.add_error(picked[1], "Pick one item: a part, a server or a service.")
        elif not picked and not (cleaned.get("description") or "").strip():
            self.add_error("part", "Pick a part, a server or a service, or describe the item.")
        return cleaned


class SupplierForm(VersionedFormMixin, InputModelForm):
    website = forms.URLField(required=False, assume_scheme="https", max_length=200)  # the model's

    class Meta:
        model = Supplier
        fields = ["name", "country", "contact_name", "contact_email", "phone", "website", "notes"]
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, organisation, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.organisation = organisation

    def clean_country(self) -> str:
        return _upper(self.cleaned_data["country"])

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        clash = Supplier.objects.filter(organisation=self.organisation, name__iexact=name)
        if self.instance.pk:
            clash = clash.exclude(pk=self.instance.pk)
        if clash.exists():
            raise forms.ValidationError("A supplier with this name already exists.")
        return name


def item_choices() -> list[tuple[str, list[tuple[str, str]]]]:
    """What an offer can be for, grouped: parts, servers, accelerators, services."""
    return [
        ("Parts", [(f"part:{p.pk}", f"{p.name} ({p.get_category_display()})") for p in Part.objects.all()]),
        ("Servers", [(f"server:{s.pk}", str(s)) for s in ServerPlatform.objects.all()]),
        ("Accelerators (sold separately)", [(f"accelerator:{a.pk}", str(a)) for a in Accelerator.objects.all()]),
        ("Services", [(f"service:{v}", label) for v, label in Service.choices]),
    ]  # fmt: skip


def parse_price_breaks(text: str) -> list[tuple[int, Decimal]]:
    """``"10: 1200, 50: 1100.50"`` → ``[(10, 1200), (50, 1100.50)]``.

    Raises:
        forms.ValidationError: A pair that is not ``quantity: price`` with quantity ≥ 1 and
            price ≥ 0, or a quantity given twice.
    """
    breaks, seen = [], set()
    for chunk in filter(None, (c.strip() for c in re.split(r"[,;\n]", text or ""))):
        qty_text, sep, price_text = chunk.partition(":")
        try:
            qty, price = int(qty_text.strip()), Decimal(price_text.strip())
        except (ValueError, InvalidOperation):
            raise forms.ValidationError(
                f"{chunk!r} is not 'quantity: unit price' (e.g. 10: 1200)."
            ) from None
        if not sep or qty < 1 or not price.is_finite() or price < 0:
            raise forms.ValidationError(
                f"{chunk!r}: the quantity must be at least 1 and the price cannot be negative."
            )
        if qty > limits.QUANTITY.high or price >= MAX_PRICE:
            raise forms.ValidationError(
                f"{chunk!r}: quantities are at most {limits.QUANTITY.high:,g} "
                f"({limits.QUANTITY.reason}) and prices below {MAX_PRICE:,}."
            )
        if qty in seen:
            raise forms.ValidationError(f"Quantity {qty} is given twice.")
        seen.add(qty)
        breaks.append((qty, price))
    return sorted(breaks)


class OfferForm(VersionedFormMixin, InputModelForm):
    item = forms.ChoiceField(label="Offer for")
    price_breaks_text = forms.CharField(
        label="Price breaks",
        required=False,
        max_length=2_000,  # fifty breaks, as many as the API takes
        help_text="quantity: unit price, comma-separated, e.g. 10: 1200, 50: 1100",
    )

    class Meta:
        model = Offer
        fields = [
            "item", "supplier_sku", "unit_price", "term_years", "currency", "price_breaks_text",
            "minimum_order_qty", "lead_time_days", "quoted_on", "valid_until", "origin_country",
            "ship_from_country", "incoterm", "freight_per_unit", "unit_weight_kg", "notes",
        ]  # fmt: skip
        widgets = {
            "quoted_on": DATE,
            "valid_until": DATE,
            "notes": forms.Textarea(attrs={"rows": 2}),
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["item"].choices = [("", "---------"), *item_choices()]
        _no_negatives(self)
        self.fields["minimum_order_qty"].error_messages["min_value"] = "At least 1."
        for name in ("quoted_on", "valid_until"):  # the range first, then the order of the two
            self.fields[name].validators += date_in_range()
        offer = self.instance
        if offer.pk:
            for kind in ("part", "server", "accelerator"):
                if getattr(offer, f"{kind}_id"):
                    self.initial["item"] = f"{kind}:{getattr(offer, f'{kind}_id')}"
            if offer.service:
                self.initial["item"] = f"service:{offer.service}"
            self.initial["price_breaks_text"] = ", ".join(
                f"{b.min_qty}: {b.unit_price.normalize():f}" for b in offer.price_breaks.all()
            )

    def clean_currency(self) -> str:
        return _currency(self.cleaned_data["currency"])

    def clean_origin_country(self) -> str:
        return _upper(self.cleaned_data["origin_country"])

    def clean_ship_from_country(self) -> str:
        return _upper(self.cleaned_data["ship_from_country"])

    def clean_quoted_on(self) -> date:
        quoted = self.cleaned_data["quoted_on"]
        if quoted > timezone.localdate():
            raise forms.ValidationError("An offer cannot be quoted in the future.")
        return quoted

    def clean_price_breaks_text(self) -> list[tuple[int, Decimal]]:
        return parse_price_breaks(self.cleaned_data["price_breaks_text"])

    def clean(self) -> dict:
        cleaned = super().clean()
        quoted, valid = cleaned.get("quoted_on"), cleaned.get("valid_until")
        if quoted and valid and valid < quoted:
            self.add_error("valid_until", "An offer cannot expire before it was quoted.")
        return cleaned

    def _post_clean(self) -> None:
        # Set the item before the model's own validation (exactly one target).
        kind, _, value = (self.cleaned_data.get("item") or "").partition(":")
        offer = self.instance
        offer.part = Part.objects.filter(pk=value).first() if kind == "part" else None
        offer.server = ServerPlatform.objects.filter(pk=value).first() if kind == "server" else None
        offer.accelerator = (
            Accelerator.objects.filter(pk=value).first() if kind == "accelerator" else None
        )
        offer.service = value if kind == "service" else ""
        super()._post_clean()


class FxRateForm(InputModelForm):
    class Meta:
        model = FxRate
        fields = ["from_currency", "to_currency", "rate", "as_of", "source"]
        widgets = {"as_of": DATE}

    def clean_from_currency(self) -> str:
        return _currency(self.cleaned_data["from_currency"])

    def clean_to_currency(self) -> str:
        return _currency(self.cleaned_data["to_currency"])

    def clean_rate(self) -> Decimal:
        rate = self.cleaned_data["rate"]
        if rate <= 0:
            raise forms.ValidationError("A rate must be above zero.")
        return rate

    def clean_as_of(self) -> date:
        as_of = self.cleaned_data["as_of"]
        if as_of > timezone.localdate():
            raise forms.ValidationError("A rate cannot be dated in the future.")
        return as_of


class TariffFilterForm(InputForm):
    """The tariff list's destination filter: empty (all) or a two-letter country code."""

    destination = forms.CharField(required=False, max_length=2, strip=True)

    def clean_destination(self) -> str:
        value = _upper(self.cleaned_data["destination"])
        if value and not re.fullmatch(r"[A-Z]{2}", value):
            raise forms.ValidationError("Use a two-letter ISO 3166 country code, e.g. NL.")
        return value


class FxImportForm(InputForm):
    file = forms.FileField(
        label="CSV file", help_text="Columns: from_currency,to_currency,rate,as_of[,source]"
    )


class PurchaseOrderCreateForm(InputForm):
    supplier = forms.ModelChoiceField(queryset=Supplier.objects.none())
    logistics_owner = forms.CharField(
        max_length=200,
        required=False,
        help_text="Who owns logistics, customs and tariffs for this shipment.",
    )

    def __init__(self, *args, suppliers, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["supplier"].queryset = suppliers


class PurchaseOrderForm(VersionedFormMixin, InputModelForm):
    class Meta:
        model = PurchaseOrder
        fields = [
            "status", "logistics_owner", "shipping_mode", "destination_country",
            "charges_currency", "freight", "insurance", "brokerage", "inland_freight",
            "allocation", *(f for _, e, a in ORDER_STEPS for f in (e, a)), "notes",
        ]  # fmt: skip
        widgets = {
            **{f: DATE for _, e, a in ORDER_STEPS for f in (e, a)},
            "notes": forms.Textarea(attrs={"rows": 2}),
        }

    def __init__(self, *args, cross_border: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.cross_border = cross_border
        _no_negatives(self)

    def clean_destination_country(self) -> str:
        return _upper(self.cleaned_data["destination_country"])

    def clean_charges_currency(self) -> str:
        return _currency(self.cleaned_data["charges_currency"])

    def clean(self) -> dict:
        cleaned = super().clean()
        if self.cross_border and not (cleaned.get("logistics_owner") or "").strip():
            self.add_error(
                "logistics_owner",
                "A cross-border shipment needs a named owner for logistics, customs and tariffs.",
            )
        today = timezone.localdate()
        previous = None
        for status, _, actual in ORDER_STEPS:
            value = cleaned.get(actual)
            if not value:
                continue
            if value > today:
                self.add_error(actual, "An actual date cannot be in the future.")
            elif previous and value < previous[1]:
                self.add_error(
                    actual, f"Cannot be before the {previous[0].label.lower()} date {previous[1]}."
                )
            previous = (status, value)
        return cleaned


class MeasureDecisionForm(VersionedFormMixin, InputModelForm):
    """The plan's decision on one conditional duty: applies, does not apply (with the reason,
    e.g. the end-use certificate reference) or unconfirmed."""

    class Meta:
        model = MeasureDecision
        fields = ["decision", "reason"]
        widgets = {"decision": forms.RadioSelect}
