"""Forms of the site, placement and TCO pages. Every default is shown with its source."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal, InvalidOperation

from django import forms

from catalog.models import CloudOffering
from planner.engine import facility as fe
from planner.engine import limits
from planner.engine import tco as te
from planner.engine.limits import DATE_MAX, DATE_MIN
from planner.facility.models import CoolingMethod, Site, TcoSettings
from planner.input_rules import InputForm, InputModelForm
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
        f"Empty: the catalog's 1-year price, else {te.DEFAULT_COMMIT_1YR_DISCOUNT:.0%} "
        "(AWS Savings Plans, via Epoch AI)."
    ),
    "commit_3yr_discount_pct": (
        f"Empty: the catalog's 3-year price, else {te.DEFAULT_COMMIT_3YR_DISCOUNT:.0%} "
        "(AWS Savings Plans, via Epoch AI)."
    ),
    "spot_discount_pct": (
        f"{te.DEFAULT_SPOT_DISCOUNT:.0%}: planner assumption; AWS quotes up to 90 %."
    ),
    "spot_share_pct": f"{te.DEFAULT_SPOT_SHARE:.0%}: planner assumption (interruptible share).",
    "annual_cloud_price_decline_pct": "0 %: base case flat (SemiAnalysis tracks the declines).",
    "growth_pct_per_month": "0 %: demand as sized, no growth.",
    "cloud_providers": (
        "none ticked: every provider listing the accelerator, each on its own price list "
        "(on-demand, 1-year, 3-year, spot; whole instances), cheapest first as the reference."
    ),
    "cloud_keeps_spares": (
        "off: the cloud rents the replicas the load needs, without N+1 spares and headroom "
        "(the provider's SLA replaces them)."
    ),
}

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


class SiteForm(VersionedFormMixin, InputModelForm):
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
        }
        widgets = {
            "power_ready_date": IsoDateInput(),
            "notes": forms.Textarea(attrs={"rows": 2}),
        }

    def __init__(self, *args, plan, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.plan = plan
        for name, source in SITE_DEFAULT_SOURCES.items():
            self.fields[name].help_text = f"Default {source}"
        if self.instance.pk and not self.is_bound:
            self.initial["upgrades"] = "\n".join(
                f"+{u.added_kw.normalize():f} kW on {u.ready_date.isoformat()}"
                + (f" {u.note}" if u.note else "")
                for u in self.instance.upgrades.all()
            )

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


class TcoSettingsForm(VersionedFormMixin, InputModelForm):
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

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        providers = sorted(set(CloudOffering.objects.values_list("provider", flat=True).distinct()))
        self.fields["cloud_providers"].choices = [(p, p) for p in providers]
        for name, source in TCO_DEFAULT_SOURCES.items():
            self.fields[name].help_text = f"Default {source}"


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
