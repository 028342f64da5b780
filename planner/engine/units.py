"""Units a consultant reads, by the site's country.

The facility engine computes heat in BTU/h, airflow in CFM and the servers' air temperature
rise in °F, because its sources (ASHRAE TC 9.9, Dell via insideHPC) state their formulas so.
A site outside the US is read in metric (kW of heat and cooling, m³/h of air, °C); only a site
in a country that has not adopted the metric system reads imperial (BTU/h, tons, CFM, °F), with
the metric figure beside it. Computations stay in the engine's units: this module only converts
a figure for display, one function per unit, each from a cited constant.

No Django import: the engine's sentences, the services' tables and the template filter
(:mod:`planner.templatetags.planner_units`) all print through :class:`SiteUnits`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BTU_PER_H_PER_TON",
    "BTU_PER_H_PER_W",
    "IMPERIAL",
    "IMPERIAL_COUNTRIES",
    "METRIC",
    "M3_PER_H_PER_CFM",
    "SiteUnits",
    "celsius_delta_from_fahrenheit_delta",
    "fahrenheit_delta_from_celsius_delta",
    "fahrenheit_from_celsius",
    "kw_from_btu_per_h",
    "m3_per_h_from_cfm",
    "site_units",
    "tons_from_btu_per_h",
]

# 1 W of IT load = 3.412 BTU/h of heat (1 BTU/h = 0.29307107 W, NIST SP 811 (2008) B.8,
# rounded as ASHRAE and the vendors' sizing guides print it). The heat check multiplies by it
# and the metric display divides by it, so a site's heat in kW is exactly its IT load.
BTU_PER_H_PER_W = 3.412
# 1 ton of refrigeration = 12,000 BTU/h (NIST SP 811 (2008) B.8, "ton of refrigeration").
BTU_PER_H_PER_TON = 12_000.0
# 1 ft = 0.3048 m exactly (international yard and pound, 1959; NIST SP 811 B.8), so
# 1 ft³/min = 0.3048³ m³ × 60 min/h = 1.69901079552 m³/h.
M3_PER_H_PER_CFM = 0.3048**3 * 60.0
# A temperature interval of 1 °F is 5/9 K = 5/9 °C exactly (NIST SP 811 (2008) 4.2.1.1).
CELSIUS_PER_FAHRENHEIT_DEGREE = 5.0 / 9.0
# Countries that have not adopted the metric system for everyday and trade use: the United
# States, Liberia and Myanmar (CIA World Factbook, appendix G "Weights and Measures").
IMPERIAL_COUNTRIES = frozenset({"US", "LR", "MM"})


def kw_from_btu_per_h(btu_per_h: float) -> float:
    """Heat in kW from BTU/h (the engine's 3.412 BTU/h per W)."""
    return btu_per_h / BTU_PER_H_PER_W / 1000.0


def tons_from_btu_per_h(btu_per_h: float) -> float:
    """Tons of refrigeration from BTU/h."""
    return btu_per_h / BTU_PER_H_PER_TON


def m3_per_h_from_cfm(cfm: float) -> float:
    """Airflow in m³/h from cubic feet per minute."""
    return cfm * M3_PER_H_PER_CFM


def celsius_delta_from_fahrenheit_delta(delta_f: float) -> float:
    """A temperature difference in °C (= K) from °F."""
    return delta_f * CELSIUS_PER_FAHRENHEIT_DEGREE


def fahrenheit_delta_from_celsius_delta(delta_c: float) -> float:
    """A temperature difference in °F from °C (= K)."""
    return delta_c / CELSIUS_PER_FAHRENHEIT_DEGREE


def fahrenheit_from_celsius(celsius: float) -> float:
    """A temperature in °F from °C (°F = °C × 9/5 + 32, NIST SP 811 (2008) 4.2.1.1)."""
    return celsius / CELSIUS_PER_FAHRENHEIT_DEGREE + 32.0


@dataclass(frozen=True, slots=True)
class SiteUnits:
    """How a site's heat, airflow and temperatures read: metric, or imperial with metric beside.

    Every method takes the engine's figure (BTU/h, CFM, °F of rise, °C) and returns it printed.
    """

    imperial: bool = False

    @property
    def name(self) -> str:
        return "imperial" if self.imperial else "metric"

    def heat(self, btu_per_h: float) -> str:
        """Heat to reject: ``"34.1 kW"``; imperial ``"116,349 BTU/h (9.7 tons, 34.1 kW)"``."""
        kw = f"{kw_from_btu_per_h(btu_per_h):,.1f} kW"
        if not self.imperial:
            return kw
        tons = tons_from_btu_per_h(btu_per_h)
        return f"{btu_per_h:,.0f} BTU/h ({tons:,.1f} tons, {kw})"

    def airflow(self, cfm: float) -> str:
        """Cooling air: ``"2,725 m³/h"``; imperial ``"1,604 CFM (2,725 m³/h)"``."""
        metric = f"{m3_per_h_from_cfm(cfm):,.0f} m³/h"
        return f"{cfm:,.0f} CFM ({metric})" if self.imperial else metric

    def delta_t(self, delta_f: float) -> str:
        """An air temperature rise: ``"11.1 °C"``; imperial ``"20 °F (11.1 °C)"``."""
        metric = f"{celsius_delta_from_fahrenheit_delta(delta_f):.1f} °C"
        return f"{delta_f:g} °F ({metric})" if self.imperial else metric

    def temperature(self, celsius: float) -> str:
        """A temperature: ``"35 °C"``; imperial ``"95 °F (35 °C)"``."""
        metric = f"{celsius:g} °C"
        return f"{fahrenheit_from_celsius(celsius):.0f} °F ({metric})" if self.imperial else metric

    def quantity(self, value: float, unit: str) -> tuple[float, str]:
        """A check's figure in the engine's ``unit`` as this site reads it: (value, unit).

        Metric turns BTU/h into kW and CFM into m³/h; imperial turns °C into °F. Other units
        (kW, racks, days) come back as they are.
        """
        if not self.imperial and unit == "BTU/h":
            return kw_from_btu_per_h(value), "kW"
        if not self.imperial and unit == "CFM":
            return m3_per_h_from_cfm(value), "m³/h"
        if self.imperial and unit == "°C":
            return fahrenheit_from_celsius(value), "°F"
        return value, unit

    @property
    def delta_t_unit(self) -> str:
        """The unit the air temperature rise is entered in on this site's form."""
        return "°F" if self.imperial else "°C"


METRIC = SiteUnits(imperial=False)
IMPERIAL = SiteUnits(imperial=True)


def site_units(country: str) -> SiteUnits:
    """The units a site in ``country`` (ISO 3166 alpha-2; blank or unknown: metric) reads."""
    return IMPERIAL if (country or "").strip().upper() in IMPERIAL_COUNTRIES else METRIC
