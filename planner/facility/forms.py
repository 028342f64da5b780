"""Forms of the site, placement and TCO pages. Every default is shown with its source."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django import forms
from django.core.exceptions import ValidationError

from catalog.models import CloudOffering
from planner.engine import cloud_regions as cr
from planner.engine import facility as fe
from planner.engine import limits
from planner.engine import tco as te
from planner.engine import units as eu
from planner.engine.limits import DATE_MAX, DATE_MIN
from planner.facility.models import CoolingMethod, Site, TcoSettings
from planner.input_rules import InputForm, InputModelForm
from planner.money import UsdRate
from planner.validation import DATE_MESSAGE, IsoDateInput
from planner.versioning import VersionedFormMixin

COOLING_LABELS = dict(CoolingMethod.choices)  # "rear_door" → "Rear-door heat exchanger"

# Default and its source for each field, shown next to it (values are the engine constants).
SITE_DEFAULT_SOURCES: dict[str, str] = {
    "usable_ru_per_rack": "42U: engine default (a standard 42U rack).",
    "feeds_per_rack": (
        "2 (A+B): engine default; each side must carry the whole rack (NEC continuous-load "
        "rule, NFPA 70, 2023; NVIDIA DGX H100/H200 User Guide)."
    ),
    "voltage_v": "415 V: engine default (European three-phase, line-to-line).",
    "phase": (
        "Three phase: engine default; capacity √3 × V × A × derating (NetBox documentation, "
        "power feeds)."
    ),
    "amperage_a": "32 A: engine default breaker rating of one feed.",
    "breaker_derating_pct": (
        f"{fe.DEFAULT_BREAKER_DERATING:.0%}: NEC continuous-load rule (NFPA 70, 2023); NetBox's "
        "default maximum utilisation of a power feed is 80 % too."
    ),
    "power_factor": (
        f"{fe.DEFAULT_POWER_FACTOR:g}: NetBox convention W = VA (NetBox documentation, power "
        "feeds); 0.9-1.0."
    ),
    "cooling_method": " · ".join(
        f"{COOLING_LABELS.get(e.method, e.method)}: comfortable ≤ {e.comfortable_kw:g} kW/rack"
        + (f", limit {e.practical_limit_kw:g}" if e.practical_limit_kw else ", no stated limit")
        for e in fe.COOLING_ENVELOPES.values()
    )
    + " (Uptime Institute survey 2023; Schneider Electric 2024).",
    "ashrae_class": (
        "A2: engine default; allowable inlet ranges of the ASHRAE TC 9.9 (2021) thermal guidelines."
    ),
    "pue": (
        f"{fe.DEFAULT_PUE:g}: enterprise/colocation 1.5-1.6, Uptime average 1.58 in 2023; "
        f"warns above {fe.PUE_WARN_ABOVE:g} (Uptime Institute survey 2023)."
    ),
    "delta_t_f": (
        f"{fe.DEFAULT_DELTA_T_F:g} °F: typical server air temperature rise (insideHPC, Dell, 2011)."
    ),
    "power_usd_per_kwh": (
        f"{fe.DEFAULT_POWER_USD_PER_KWH:g} USD/kWh: US industrial 2023 average (EIA "
        "Electric Power Annual 2023, via Epoch AI); EU non-household ≈ 0.20 EUR/kWh (Eurostat H2 2023)."
    ),
    "facility_usd_per_kw_month": (
        f"{te.DEFAULT_COLOCATION_USD_PER_KW_MONTH:g} USD/kW-month: CBRE US wholesale H2 2024 "
        "$184.06 (CBRE North America Data Center Trends); global average $217 Q1 2025."
    ),
    "staff_usd_per_month": "0: no credible public benchmark; enter per client.",
    "switch_power_kw": "0: engine default (not counted); enter your top-of-rack switch's draw.",
}

TCO_DEFAULT_SOURCES: dict[str, str] = {
    "horizon_months": f"{te.DEFAULT_HORIZON_MONTHS} months: design range 36-60.",
    "server_price_usd": (
        "Empty: the plan's supplier offer for the platform, else the catalog's dated, sourced "
        "list price (none for a platform without one: then enter the quoted price)."
    ),
    "network_usd": (
        "Empty: the BOM's network lines (NICs, switches, optics, cables) priced from the "
        f"offers; without a BOM the fallback {te.DEFAULT_NETWORK_SHARE_OF_CAPEX:.0%} of cluster "
        "cost (a training-cluster ratio from Epoch AI's cost model)."
    ),
    "maintenance_pct_per_year": (
        "Empty: the BOM's support line against the server price, else "
        f"{te.DEFAULT_MAINTENANCE_FRACTION_PER_YEAR:.0%} of server capex a year (hardware "
        "maintenance 10-12 % of purchase price, librarytechnology.org/document/7428)."
    ),
    "spares_pct": f"{te.DEFAULT_SPARES_FRACTION:.0%}: planner assumption (no public benchmark).",
    "residual_pct": f"{te.DEFAULT_RESIDUAL_FRACTION:.0%}: zero residual value (Epoch AI's cost model).",
    "lifetime_months": (
        f"{te.DEFAULT_LIFETIME_MONTHS} months: 5-year straight line (Epoch AI); 3-6 "
        "years plausible (Amazon annual report 2024, server useful lives)."
    ),
    "idle_power_pct": (
        f"{te.DEFAULT_IDLE_POWER_FRACTION:.0%} of design draw at zero load: derived from Epoch "
        "AI's 0.75 × TDP average."
    ),
    "cost_of_capital_pct": (
        f"{te.DEFAULT_COST_OF_CAPITAL:.0%}: planner assumption; set it per client."
    ),
    "on_demand_usd_per_gpu_h": "Empty: the catalog's cheapest on-demand offering.",
    "commit_1yr_discount_pct": (
        "Empty: each provider's listed 1-year price, else a hyperscaler's sourced discount ("
        + ", ".join(f"{p} {d[0]:.0%}" for p, d in cr.SOURCED_COMMIT_DISCOUNTS.items())
        + ", Epoch AI); neoclouds none unless listed. Entered: replaces both."
    ),
    "commit_3yr_discount_pct": (
        "Empty: each provider's listed 3-year price, else a hyperscaler's sourced discount ("
        + ", ".join(f"{p} {d[1]:.0%}" for p, d in cr.SOURCED_COMMIT_DISCOUNTS.items())
        + ", Epoch AI); neoclouds none unless listed. Entered: replaces both."
    ),
    "spot_discount_pct": (
        f"{te.DEFAULT_SPOT_DISCOUNT:.0%}: planner assumption; AWS quotes up to 90 %."
    ),
    "spot_share_pct": f"{te.DEFAULT_SPOT_SHARE:.0%}: planner assumption (interruptible share).",
    "annual_cloud_price_decline_pct": "0 %: base case flat (SemiAnalysis tracks the declines).",
    "growth_pct_per_month": "0 %: demand as sized, no growth.",
    "cloud_providers": (
        "none ticked: every provider listing the accelerator (community marketplaces left "
        "out), each on its own price list in the region serving each user region (on-demand, "
        "1-year, 3-year, spot; whole instances); break-even against the cheapest option."
    ),
    "cloud_keeps_spares": (
        "off: the cloud rents the replicas the load needs, without N+1 spares and headroom "
        "(the provider's SLA replaces them)."
    ),
}


# --- Shown in the plan's currency and the site's units ----------------------------------------
#
# The site's and the TCO's prices are stored in USD and the air temperature rise in °F, the
# units the engines and the API take (their names say so: ``power_usd_per_kwh``,
# ``delta_t_f``). A page form shows and takes them in the plan's currency (at the TCO's dated
# rate) and in the site's units, converting in the form only: storing each amount with its own
# currency would rename the fields, change the API's contract and make every engine input a
# conversion, for no figure a consultant sees. A value the consultant did not change is stored
# as it was (the shown figure is rounded, so converting it back could move the stored one by
# a fraction of a cent): an unchanged form saves nothing new.


UNITS_SHOWN = "units_shown"
# Site prices: (field, unit after the currency, label with the currency).
SITE_MONEY_FIELDS = (
    ("power_usd_per_kwh", "/kWh", "Energy price ({}/kWh)"),
    ("facility_usd_per_kw_month", " per kW-month", "Space/capacity ({} per kW-month)"),
    ("staff_usd_per_month", "/month", "Staff ({}/month)"),
)
TCO_MONEY_FIELDS = (
    ("server_price_usd", "", "Server price ({} per server)"),
    ("network_usd", "", "Network capex ({})"),
    ("storage_usd", "", "Storage capex ({})"),
    ("install_usd", "", "Installation ({})"),
    ("shipping_and_duties_usd", "", "Shipping and duties ({})"),
    (
        "on_demand_usd_per_gpu_h",
        " per accelerator-hour",
        "On-demand price ({} per accelerator-hour)",
    ),
)


def _prices_in(rate: UsdRate | None, plan_currency: str) -> str:
    if rate is not None:
        return rate.currency
    if plan_currency == "USD":
        return "USD"
    return f"USD: no USD → {plan_currency} rate on file yet, add it under FX rates"


def converted_default(rate: UsdRate, usd: float, per: str, places: int) -> str:
    """A USD default as shown: ``"0.0741 EUR/kWh at 1 USD = 0.926784 EUR (2025-01-02)"``,
    grouped as every figure is (``"27,463.25 JPY per kW-month"``)."""
    when = f" ({rate.rate_date})" if rate.rate_date else ""
    figure = rate.from_usd(Decimal(str(usd)), places).normalize()
    return f"{figure:,f} {rate.currency}{per} at 1 USD = {rate.rate} {rate.currency}{when}"


@dataclass(frozen=True)
class ShownAs:
    """How one stored field is shown: in ``unit``, by ``show`` (stored → shown) and ``store``
    (typed → stored), both rounded to the field's decimal places."""

    unit: str
    stored_unit: str
    show: Callable[[Decimal], Decimal]
    store: Callable[[Decimal], Decimal]


def _places(field: forms.Field) -> int:
    return field.decimal_places if getattr(field, "decimal_places", None) is not None else 2


def _money_shown(rate: UsdRate, places: int, per: str) -> ShownAs:
    return ShownAs(
        unit=rate.currency + per,
        stored_unit="USD" + per,
        show=lambda usd: rate.from_usd(usd, places),
        store=lambda amount: rate.to_usd(amount, places),
    )


def _delta_t_shown(units: eu.SiteUnits, places: int) -> ShownAs:
    step = Decimal(1).scaleb(-places)
    if units.imperial:
        return ShownAs("°F", "°F", lambda f: f, lambda f: f)
    return ShownAs(
        unit="°C",
        stored_unit="°F",
        show=lambda f: Decimal(eu.celsius_delta_from_fahrenheit_delta(float(f))).quantize(
            step, ROUND_HALF_UP
        ),
        store=lambda c: Decimal(eu.fahrenheit_delta_from_celsius_delta(float(c))).quantize(
            step, ROUND_HALF_UP
        ),
    )


class ShownFieldsMixin:
    """Fields stored in one unit, shown and typed in another (see the note above).

    Call :meth:`show_field` from ``__init__`` for each such field. The stored value it was
    loaded with is kept; :meth:`_clean_fields` turns a typed value back into the stored unit,
    or keeps the stored value when the figure shown was posted back unchanged. A converted
    value out of the model field's range is refused next to the field, in both units.
    """

    def show_field(self, name: str, shown: ShownAs, label: str) -> None:
        if not hasattr(self, "_shown_as"):
            self._shown_as: dict[str, tuple[ShownAs, Decimal | None, Decimal | None]] = {}
        field = self.fields[name]
        field.label = label
        stored = self.get_initial_for_field(field, name)
        stored = None if stored in (None, "") else Decimal(str(stored))
        figure = None if stored is None else shown.show(stored)
        self.initial[name] = figure
        self._shown_as[name] = (shown, stored, figure)

    def _show_money(self, rate: UsdRate, fields) -> None:
        """Label the (field, unit, label) ``fields`` with the plan's currency and, when it is
        not USD, show and take them in it."""
        for name, per, label in fields:
            if rate.currency == "USD":
                self.fields[name].label = label.format("USD")
            else:
                shown = _money_shown(rate, _places(self.fields[name]), per)
                self.show_field(name, shown, label.format(rate.currency))

    def _tracked(self) -> list[str]:
        # The units the form was shown in say how to read it; they are not a value of the row.
        return [name for name in super()._tracked() if name != UNITS_SHOWN]

    def _clean_fields(self) -> None:
        super()._clean_fields()
        for name, (shown, stored, figure) in getattr(self, "_shown_as", {}).items():
            if name not in self.cleaned_data:
                continue  # refused already
            typed = self.cleaned_data[name]
            if typed is None or shown.unit == shown.stored_unit:
                continue
            if figure is not None and typed == figure:
                self.cleaned_data[name] = stored  # unchanged: the stored value, exactly
                continue
            value = shown.store(typed)
            try:
                self._meta.model._meta.get_field(name).run_validators(value)
            except ValidationError as exc:
                self.add_error(
                    name,
                    f"{typed:f} {shown.unit} is {value:f} {shown.stored_unit}. "
                    + " ".join(exc.messages),
                )
                continue
            self.cleaned_data[name] = value


_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_KW = re.compile(r"\+?\s*(\d+(?:[.,]\d+)?)\s*kW\b", re.IGNORECASE)


def parse_upgrades(text: str) -> list[tuple[date, Decimal, str]]:
    """Parse one upgrade per line, e.g. ``+400 kW on 2027-03-01 new transformer``.

    Returns:
        (ready date, added kW, note) per non-empty line.

    Raises:
        forms.ValidationError: Naming the first bad line.
    """
    upgrades = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        found_date, found_kw = _DATE.search(line), _KW.search(line)
        problem = f"Line {number}: write the added kW and the date, e.g. '+400 kW on 2027-03-01'."
        if not (found_date and found_kw):
            raise forms.ValidationError(problem)
        try:
            ready = date.fromisoformat(found_date.group(1))
            added = Decimal(found_kw.group(1).replace(",", "."))
        except (ValueError, InvalidOperation):
            raise forms.ValidationError(
                f"Line {number}: {found_date.group(1)} is not a date."
            ) from None
        if not added.is_finite() or added <= 0:
            raise forms.ValidationError(f"Line {number}: the added power must be above 0 kW.")
        if added > limits.SITE_KW.high:
            raise forms.ValidationError(f"Line {number}: {limits.SITE_KW.message()}")
        if not DATE_MIN <= ready <= DATE_MAX:
            raise forms.ValidationError(f"Line {number}: {DATE_MESSAGE}")
        note = _KW.sub("", _DATE.sub("", line)).strip()
        note = re.sub(r"^(on|from)\b\s*", "", note, flags=re.IGNORECASE).strip(" -–,;")
        upgrades.append((ready, added, note[:200]))
    return upgrades


class SiteForm(ShownFieldsMixin, VersionedFormMixin, InputModelForm):
    """A site with its planned power upgrades as text, one per line."""

    upgrades = forms.CharField(
        label="Planned power upgrades",
        required=False,
        max_length=10_000,  # a hundred lines, as many upgrades as the API takes
        widget=forms.Textarea(
            attrs={"rows": 3, "placeholder": "+400 kW on 2027-03-01 new transformer"}
        ),
        help_text="One per line: added kW and the date it is energised.",
    )

    class Meta:
        model = Site
        fields = [
            "name", "kind", "region_key", "latitude", "longitude", "country",
            "racks_available", "usable_ru_per_rack", "site_it_capacity_kw", "upgrades",
            "power_ready_date", "feeds_per_rack", "voltage_v", "phase", "amperage_a",
            "breaker_derating_pct", "power_factor", "cooling_method",
            "cooling_capacity_per_rack_kw", "cooling_capacity_site_kw", "ashrae_class", "pue",
            "delta_t_f", "servers_per_rack", "switches_per_rack", "switch_power_kw",
            "pdus_per_rack", "power_usd_per_kwh", "facility_usd_per_kw_month",
            "staff_usd_per_month", "notes",
        ]  # fmt: skip
        labels = {
            "region_key": "Region",
            "usable_ru_per_rack": "Usable RU per rack",
            "pdus_per_rack": "PDUs per rack",
            "site_it_capacity_kw": "IT capacity today (kW)",
            "voltage_v": "Voltage (V)",
            "amperage_a": "Breaker (A)",
            "breaker_derating_pct": "Breaker derating (%)",
            "cooling_capacity_per_rack_kw": "Cooling per rack (kW)",
            "cooling_capacity_site_kw": "Cooling, whole site (kW)",
            "ashrae_class": "ASHRAE class",
            "pue": "PUE",
            "delta_t_f": "Air ΔT (°F)",
            "power_usd_per_kwh": "Power price (USD/kWh)",
            "facility_usd_per_kw_month": "Space/capacity (USD per kW-month)",
            "staff_usd_per_month": "Staff (USD/month)",
            "switch_power_kw": "Switch draw (kW)",
            # The input is when the base capacity is energised; the plan's power-ready date is
            # derived from it and the upgrades (shown beside the checks), never typed twice.
            "power_ready_date": "Base capacity energised on",
        }
        help_texts = {
            "power_ready_date": "When the base capacity is energised. The plan's power-ready "
            "date is the first day base capacity and upgrades carry its load.",
        }
        widgets = {
            "power_ready_date": IsoDateInput(),
            "notes": forms.Textarea(attrs={"rows": 2}),
        }

    def __init__(
        self,
        *args,
        plan,
        usd_rate: UsdRate | None = None,
        units: eu.SiteUnits | None = None,
        **kwargs,
    ) -> None:
        """``usd_rate`` shows the prices in the plan's currency, ``units`` the air temperature
        rise in the site's units (the page passes both; without them the stored USD and °F,
        as the API takes them)."""
        super().__init__(*args, **kwargs)
        self.plan = plan
        self.usd_rate = usd_rate
        for name, source in SITE_DEFAULT_SOURCES.items():
            self.fields[name].help_text = f"Default {source}"
        if usd_rate is not None:
            self._show_money(usd_rate, SITE_MONEY_FIELDS)
        if usd_rate is not None and usd_rate.currency != "USD":
            # The default converted, then its source's figure as the source publishes it.
            per = {name: unit for name, unit, _ in SITE_MONEY_FIELDS}
            for name, usd in (
                ("power_usd_per_kwh", fe.DEFAULT_POWER_USD_PER_KWH),
                ("facility_usd_per_kw_month", te.DEFAULT_COLOCATION_USD_PER_KW_MONTH),
            ):
                shown = converted_default(usd_rate, usd, per[name], _places(self.fields[name]))
                self.fields[name].help_text = f"Default {shown}, from {SITE_DEFAULT_SOURCES[name]}"
        self.units = units
        if units is not None:
            posted = self.data.get(self.add_prefix(UNITS_SHOWN)) if self.is_bound else None
            if posted in (eu.METRIC.name, eu.IMPERIAL.name):  # the units the page showed
                units = eu.IMPERIAL if posted == eu.IMPERIAL.name else eu.METRIC
            self.units = units
            self.fields[UNITS_SHOWN] = forms.ChoiceField(
                choices=[(u.name, u.name) for u in (eu.METRIC, eu.IMPERIAL)],
                required=False,
                initial=units.name,
                widget=forms.HiddenInput,
            )
            shown = _delta_t_shown(units, _places(self.fields["delta_t_f"]))
            self.show_field("delta_t_f", shown, f"Air ΔT ({shown.unit})")
            if not units.imperial:
                self.fields["delta_t_f"].help_text = (
                    f"Default {units.delta_t(fe.DEFAULT_DELTA_T_F)}: typical server air "
                    "temperature rise (insideHPC, Dell, 2011)."
                )
        if self.instance.pk and not self.is_bound:
            self.initial["upgrades"] = "\n".join(
                f"+{u.added_kw.normalize():f} kW on {u.ready_date.isoformat()}"
                + (f" {u.note}" if u.note else "")
                for u in self.instance.upgrades.all()
            )

    @property
    def prices_in(self) -> str:
        """The currency the running costs are typed in, and why it is USD on a plan that is
        not (its rate is missing)."""
        return _prices_in(self.usd_rate, getattr(self.plan, "currency", "USD"))

    def clean_country(self) -> str:
        return self.cleaned_data["country"].upper()

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        clash = Site.objects.filter(plan=self.plan, name__iexact=name)
        if self.instance.pk:
            clash = clash.exclude(pk=self.instance.pk)
        if clash.exists():
            raise forms.ValidationError("This plan already has a site with this name.")
        return name

    def clean_upgrades(self) -> list[tuple[date, Decimal, str]]:
        return parse_upgrades(self.cleaned_data.get("upgrades") or "")


class PlacementSettingsForm(VersionedFormMixin, InputForm):
    """Network budget, control need and each workload's residency rule."""

    network_share_pct = forms.IntegerField(
        label="Network share of the TTFT target (%)",
        min_value=1,
        max_value=100,
        help_text="Default 25 %: planner assumption; the rest is left for prefill and queueing.",
    )
    control_requirement = forms.IntegerField(
        label="Control the client needs (0-5)",
        min_value=0,
        max_value=5,
        help_text="Default 3. Own data centre gives 5, colocation and hybrid 4, edge 3, cloud 2.",
    )

    def __init__(self, *args, workloads, rules, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.workloads = list(workloads)
        for w in self.workloads:
            rule = rules.get(w.pk)
            self.fields[f"residency_{w.pk}"] = forms.CharField(
                label=f"Where '{w.name}' may run",
                required=False,
                max_length=200,
                initial=rule.allowed if rule else "",
                help_text="Countries or regions, comma-separated (e.g. 'EU, CH'); empty: anywhere.",
            )

    def residency_fields(self):
        return [self[f"residency_{w.pk}"] for w in self.workloads]

    def clean(self) -> dict:
        cleaned = super().clean()
        for w in self.workloads:
            name = f"residency_{w.pk}"
            tokens = [t.strip().upper() for t in (cleaned.get(name) or "").split(",") if t.strip()]
            bad = [t for t in tokens if not re.fullmatch(r"[A-Z]{2,4}", t)]
            if bad:
                self.add_error(name, f"Use ISO country codes or region names: {', '.join(bad)}.")
            else:
                cleaned[name] = ", ".join(tokens)
        return cleaned

    def residency_values(self) -> dict[int, str]:
        return {w.pk: self.cleaned_data[f"residency_{w.pk}"] for w in self.workloads}


class PlacementChoiceForm(VersionedFormMixin, InputForm):
    """The option the consultant chooses and why."""

    option = forms.ChoiceField(label="Chosen option")
    reason = forms.CharField(
        label="Reason",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=4000,
        help_text="What decided it; this goes into the plan report.",
    )

    def __init__(self, *args, options, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["option"].choices = [(o.key, o.label) for o in options]

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if len(reason) < 10:
            raise forms.ValidationError("Say in a sentence why this option was chosen.")
        return reason


class TcoSettingsForm(ShownFieldsMixin, VersionedFormMixin, InputModelForm):
    # Ticked from the providers in the catalog (choices set per form), stored as a JSON list.
    cloud_providers = forms.MultipleChoiceField(
        label="Cloud providers the client would use",
        choices=(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    class Meta:
        model = TcoSettings
        fields = (
            list(TCO_DEFAULT_SOURCES)[:2]
            + ["storage_usd", "install_usd", "shipping_and_duties_usd"]
            + list(TCO_DEFAULT_SOURCES)[2:]
        )
        labels = {
            "server_price_usd": "Server price (USD per server)",
            "network_usd": "Network capex (USD)",
            "storage_usd": "Storage capex (USD)",
            "install_usd": "Installation (USD)",
            "shipping_and_duties_usd": "Shipping and duties (USD)",
            "maintenance_pct_per_year": "Maintenance (% of server capex a year)",
            "spares_pct": "Spares (% of hardware)",
            "residual_pct": "Residual value (%)",
            "idle_power_pct": "Idle power (% of design draw)",
            "cost_of_capital_pct": "Cost of capital (% a year)",
            "on_demand_usd_per_gpu_h": "On-demand price (USD per accelerator-hour)",
            "commit_1yr_discount_pct": "1-year commitment discount (%)",
            "commit_3yr_discount_pct": "3-year commitment discount (%)",
            "spot_discount_pct": "Spot discount (%)",
            "spot_share_pct": "Share run on spot (%)",
            "annual_cloud_price_decline_pct": "Cloud price decline (% a year)",
            "growth_pct_per_month": "Demand growth (% a month)",
            "cloud_keeps_spares": "Rent N+1 spares and headroom in the cloud too",
        }

    def __init__(self, *args, usd_rate: UsdRate | None = None, **kwargs) -> None:
        """``usd_rate`` shows the prices in the plan's currency (the page passes it; without
        it the stored USD, as the API takes them)."""
        super().__init__(*args, **kwargs)
        self.usd_rate = usd_rate
        providers = sorted(set(CloudOffering.objects.values_list("provider", flat=True).distinct()))
        self.fields["cloud_providers"].choices = [(p, p) for p in providers]
        for name, source in TCO_DEFAULT_SOURCES.items():
            self.fields[name].help_text = f"Default {source}"
        if usd_rate is not None:
            self._show_money(usd_rate, TCO_MONEY_FIELDS)


class SiteSplitForm(VersionedFormMixin, InputForm):
    """A consultant's split of one workload's replicas over the plan's sites, in percent.

    All fields empty: the replicas follow the users' regions (the default). Otherwise the
    shares, empty ones counting as 0, must add up to 100.
    """

    def __init__(self, *args, workload, sites, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.workload = workload
        self.sites = list(sites)
        shares = (self.record.shares if self.record is not None else None) or {}
        for site in self.sites:
            self.fields[f"share_{site.pk}"] = forms.IntegerField(
                label=f"{site.name} (%)",
                required=False,
                min_value=0,
                max_value=100,
                initial=shares.get(str(site.pk)),
            )

    def share_fields(self):
        return [self[f"share_{s.pk}"] for s in self.sites]

    def clean(self) -> dict:
        cleaned = super().clean()
        values = {s.pk: cleaned.get(f"share_{s.pk}") for s in self.sites}
        if self.errors or all(v is None for v in values.values()):
            return cleaned
        total = sum(v or 0 for v in values.values())
        if total != 100:
            raise forms.ValidationError(
                f"The shares add up to {total} %, not 100 %: give every site its share of "
                f"'{self.workload.name}', or leave them all empty to follow the users' regions."
            )
        return cleaned

    def shares(self) -> dict[str, int]:
        """Site id (string) → percent; empty when the split follows the users' regions."""
        values = {str(s.pk): self.cleaned_data.get(f"share_{s.pk}") for s in self.sites}
        if all(v is None for v in values.values()):
            return {}
        return {k: v or 0 for k, v in values.items() if v}
