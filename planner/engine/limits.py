"""The range every planning input must stay in, and why; one table for forms, models and engine.

A value outside its range is a typing slip (a year 1 go-live, forty 9s of servers) or a
request the model was never validated for; the reason is shown with the refusal. Forms and
models build their validators from these (``planner.validation``); the engine's entry points
check them again (:func:`Limit.check`), so a caller that skips the forms gets the same answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

from planner.engine.errors import EngineInputError

__all__ = ["DATE_MAX", "DATE_MIN", "DATE_REASON", "Limit", "check_date", "finite_or_none"]

# Plans are for deployments in this century: a date outside it is a slip (year 1, 9999).
DATE_MIN = date(2000, 1, 1)
DATE_MAX = date(2100, 12, 31)
DATE_REASON = "plans are for deployments between 2000 and 2100"


@dataclass(frozen=True, slots=True)
class Limit:
    """An inclusive range ``low``-``high`` in ``unit`` and the reason for it."""

    low: float
    high: float
    unit: str
    reason: str

    def message(self) -> str:
        """ "Between 0 and 90 %: <reason>." (the sentence shown with a refusal)."""
        unit = f" {self.unit}" if self.unit else ""
        return f"Between {_figure(self.low)} and {_figure(self.high)}{unit}: {self.reason}."

    def check(self, name: str, value: float | None) -> float | None:
        """``value`` as a float when inside the range (None passes), else EngineInputError."""
        if value is None:
            return None
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise EngineInputError(f"{name} must be a number, not {value!r}.") from None
        if not math.isfinite(number) or not self.low <= number <= self.high:
            raise EngineInputError(f"{name} is {value!r}. {self.message()}")
        return number


def _figure(value: float) -> str:
    """1000000 → "1,000,000"; 0.0001 → "0.0001" (no exponent in a sentence)."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:f}".rstrip("0")


def check_date(name: str, value: date | None) -> date | None:
    """``value`` when between DATE_MIN and DATE_MAX (None passes), else EngineInputError."""
    if value is not None and not DATE_MIN <= value <= DATE_MAX:
        raise EngineInputError(
            f"{name} is {value.isoformat()}. Give a date between {DATE_MIN.isoformat()} and "
            f"{DATE_MAX.isoformat()}: {DATE_REASON}."
        )
    return value


# --- Workloads ---------------------------------------------------------------------------------
INPUT_TOKENS = Limit(1, 2_000_000, "tokens", "no catalogued model reads more than 2 million")
OUTPUT_TOKENS = Limit(1, 1_000_000, "tokens", "no catalogued model writes more than 1 million")
TTFT_MS = Limit(1, 600_000, "ms", "a first token later than 10 minutes is batch work: set a "
                "request time target instead")  # fmt: skip
TPOT_MS = Limit(1, 60_000, "ms", "a token a minute is far slower than any served model")
E2E_S = Limit(1, 604_800, "s", "a request that may take longer than a week is not planned here")
PEAK_CONCURRENCY = Limit(1, 10_000_000, "requests", "beyond ten million concurrent requests a "
                         "deployment is planned region by region")  # fmt: skip
PEAK_REQUESTS_PER_S = Limit(0.0001, 1_000_000, "requests/s", "beyond a million requests a "
                            "second a deployment is planned region by region")  # fmt: skip
# In the plan's currency: the bounds only catch typing slips.
COST_PER_REQUEST = Limit(0.000001, 1_000, "per request", "a request costs between a millionth "
                         "and a thousand units of the plan's currency")  # fmt: skip
# The traffic helper (planner.engine.demand.traffic_from_users).
ACTIVE_USERS = Limit(1, 10_000_000_000, "users", "more people than are on Earth is a typing slip")
CONCURRENT_USERS = Limit(1, 1_000_000_000, "users", "a billion people in a session at the same "
                         "moment is a typing slip")  # fmt: skip
SESSIONS_PER_USER = Limit(0.01, 10_000, "sessions", "ten thousand sessions per user in a period "
                          "is a machine, not a person: give its requests/s directly")  # fmt: skip
REQUESTS_PER_SESSION = Limit(1, 100_000, "requests", "a session sends at least one request")
THINK_TIME_S = Limit(0, 86_400, "s", "a pause longer than a day ends the session")
BUSIEST_HOUR_PCT = Limit(4.2, 100, "%", "a day spread evenly puts 1/24 (4.2 %) of its requests "
                         "in each hour; all of them in one hour is 100 %")  # fmt: skip
ENGINE_REQUEST_S = Limit(0.001, 604_800, "s", "a week is the longest request planned")
# A fleet larger than the largest clusters built (about 100,000 accelerators) is read as a slip.
FLEET_ACCELERATORS_WARN = 100_000
# Cold start of a replica (planner.engine.autoscaling.cold_start).
WEIGHTS_READ_GB_PER_S = Limit(0.01, 1_000, "GB/s", "from a slow network share (10 MB/s) to "
                              "many NVMe drives striped (1 TB/s)")  # fmt: skip
ENGINE_START_S = Limit(0, 3_600, "s", "a serving engine that takes over an hour to start after "
                       "its weights are read is broken, not slow")  # fmt: skip
HEADROOM_PCT = Limit(0, 90, "%", "headroom is capacity kept free at peak; at 90 % ten times "
                     "the replicas the load needs are bought")  # fmt: skip
# The engine's own bound on a latency target (batch time targets become TTFT/TPOT targets).
ENGINE_LATENCY_MS = Limit(0.001, 604_800_000, "ms", "a week is the longest request planned")

# --- Sites -------------------------------------------------------------------------------------
SITE_KW = Limit(0, 1_000_000, "kW", "a gigawatt is beyond any single site")
COOLING_PER_RACK_KW = Limit(0.1, 500, "kW", "a rack needs some cooling to hold a server, and "
                            "immersion tanks top out near 200 kW")  # fmt: skip
SERVERS_PER_RACK = Limit(1, 60, "servers", "a rack has at most 60 usable RU")
RACKS = Limit(0, 100_000, "racks", "a hundred thousand racks is beyond any single site")
DEVICES_PER_RACK = Limit(0, 16, "", "a rack has room for at most 16 switches or PDUs")
SWITCH_POWER_KW = Limit(0, 50, "kW", "a top-of-rack switch draws well under 50 kW")
VOLTAGE_V = Limit(1, 1_000, "V", "low-voltage feeds are at most 1000 V")
AMPERAGE_A = Limit(1, 1_000, "A", "a rack feed's breaker is at most 1000 A")
DELTA_T_F = Limit(1, 100, "°F", "server air rises between 1 and 100 °F")
POWER_USD_PER_KWH = Limit(0, 10, "USD/kWh", "no grid tariff reaches 10 USD per kWh")
# The TCO's cloud prices (planner.engine.tco.CloudPricing takes the same 0-1 as a fraction).
CLOUD_DISCOUNT_PCT = Limit(0, 100, "%", "a discount takes off part of the on-demand price, "
                           "at most all of it (spot reaches about 90 %)")  # fmt: skip

# --- Sourcing ----------------------------------------------------------------------------------
# A markup is what the consultancy adds to its landed cost; selling below cost is a discount,
# which a quote states as such, never as a negative markup.
MARKUP_PCT = Limit(0, 1_000, "%", "a markup adds to the landed cost (a negative one would be an "
                   "unstated discount) and more than ten times the cost is a typing slip")  # fmt: skip
QUANTITY = Limit(0, 1_000_000, "units", "a million units of one item is beyond any plan")
# The quote's services and fees and its commercial terms (sourcing.models.QuoteFee,
# QuoteSettings); the payment milestones are checked by planner.engine.quote.check_milestones.
FEE_QUANTITY = Limit(0.01, 10_000, "units", "a fee is sold in days, whole years or one lump "
                     "sum, and ten thousand days is forty working years")  # fmt: skip
# Money is stored with 14 digits before the point (sourcing.models.money_field).
FEE_UNIT_PRICE = Limit(0, 99_999_999_999_999, "in the plan's currency", "a fee adds to the "
                       "quote (a discount is never a negative fee) and money is stored with 14 "
                       "digits")  # fmt: skip
PAYMENT_DUE_DAYS = Limit(0, 365, "days", "from payable on receipt to a year after the invoice; "
                         "longer is financing, not payment terms")  # fmt: skip
QUOTE_VALIDITY_DAYS = Limit(1, 365, "days", "a quote is valid for at most a year")
LEAD_TIME_DAYS = Limit(0, 3_650, "days", "a lead time beyond ten years is not a quote")
PROJECT_DAYS = Limit(0, 365, "days", "installation or burn-in longer than a year is not planned")
LEAF_RADIX = Limit(2, 1_024, "ports", "switches have between 2 and 1024 ports")
DRIVES_PER_SERVER = Limit(0, 64, "drives", "a server holds at most 64 drives")


def finite_or_none(data):
    """``data`` with every NaN or infinite float replaced by None, recursively through dicts,
    lists and tuples: the engine's "unbounded" (e.g. TTFT when requests queue without bound)
    is not a number JSON can carry."""
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, dict):
        return {k: finite_or_none(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [finite_or_none(v) for v in data]
    return data
