"""How an engine's sentences and every page write numbers: amounts in a currency, quantities.

The engines compute in USD (catalog, cloud and site prices are USD); the plan's documents
show every amount in the plan's currency at one dated rate (the TCO's, stored with its run).
Figures stay USD and are converted where they are stored; sentences the engines write (a
check's reason, an option's notes) are converted as they are written, with this.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

# A unit that is an English noun (``server``, ``replica``, ``token``) counts whole things and
# takes a plural; any other unit is a symbol (``d``, ``ms``, ``req/s``, ``kW``, ``%``).
_NOUN = re.compile(r"[a-z]{3,}")
# ``quantity(x, WHOLE)``: a whole count with no unit, under a heading that names it.
WHOLE = "#"


def plural(noun: str) -> str:
    """``server`` → ``servers``, ``batch`` → ``batches``, ``delivery`` → ``deliveries``."""
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


def _digits_for(magnitude: float) -> int:
    """Decimals a reader needs at this size: three significant figures, never more than two
    decimals at 1 or above and none at 100 or above (31.1111 → 31.1, 0.5058 → 0.51)."""
    if magnitude >= 100:
        return 0
    if magnitude >= 10:
        return 1
    if magnitude >= 1:
        return 2
    return max(2, 1 - math.floor(math.log10(magnitude)))  # two significant figures


def number(value) -> str:
    """``value`` grouped by thousands with the decimals its size needs, no trailing zeros:
    ``1200`` → ``"1,200"``, ``31.1111`` → ``"31.1"``, ``12.0`` → ``"12"``; ``"—"`` when empty."""
    try:
        exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value))
    except (InvalidOperation, ValueError, TypeError):
        return "—"
    if not exact.is_finite():
        return "—"
    digits = 0 if exact == exact.to_integral_value() else _digits_for(float(abs(exact)))
    rounded = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    text = f"{abs(rounded) if rounded == 0 else rounded:,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def quantity(value, unit: str = "") -> str:
    """A number as every page writes it, with its unit after a space.

    A noun unit counts whole things, singular for one: ``quantity(1, "server")`` →
    ``"1 server"``, ``quantity(61.8, "request")`` → ``"61 requests"`` (a fraction of a
    request is not one held). A symbol keeps the decimals the size needs:
    ``quantity(31.1111, "req/s")`` → ``"31.1 req/s"``, ``quantity(90, "d")`` → ``"90 d"``.
    ``unit=WHOLE`` is a whole count alone (``"61"``); no unit, the number alone. Empty or
    non-numeric values are ``"—"``.
    """
    if value is None or value == "" or number(value) == "—":
        return "—"
    if unit == WHOLE or _NOUN.fullmatch(unit or ""):
        count = math.floor(Decimal(str(value)))
        text = f"{count:,d}"
        return text if unit == WHOLE else f"{text} {unit if count == 1 else plural(unit)}"
    return f"{number(value)} {unit}" if unit else number(value)


def singular(noun: str) -> str:
    """``servers`` → ``server``, ``batches`` → ``batch``, ``deliveries`` → ``delivery``: the
    inverse of :func:`plural` for the nouns the engines name their units with."""
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    if noun.endswith(("ches", "shes", "sses", "xes", "zes")):
        return noun[:-2]
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


def measure(value, unit: str, status: str = "") -> str:
    """A checked figure with its unit, whatever the unit's form: the one way a check's value
    and its limit read.

    A symbol unit goes through :func:`quantity` (``measure(15.12, "kW")`` → ``"15.1 kW"``). A
    unit that starts with a plural noun counts whole things in the right number, the rest of
    the phrase after it: ``measure(1.0, "servers")`` → ``"1 server"``, ``measure(28,
    "days of slack")`` → ``"28 days of slack"``. An infinite figure reads as words without a
    unit: ``"never"`` for a failing check (unreachable), ``"no limit"`` otherwise (unbounded).
    """
    try:
        if math.isinf(float(value)):
            return "never" if status == "fail" else "no limit"
    except (TypeError, ValueError):
        return "—"
    head, _, rest = (unit or "").partition(" ")
    if _NOUN.fullmatch(head) and head.endswith("s"):
        counted = quantity(value, singular(head))
        return f"{counted} {rest}" if rest and counted != "—" else counted
    return quantity(value, unit)


@dataclass(frozen=True, slots=True)
class ShownIn:
    """Write amounts as ``currency`` at 1 USD = ``rate`` ``currency``."""

    currency: str = "USD"
    rate: float = 1.0

    def money(self, usd: float, places: int = 0) -> str:
        """``usd`` converted and printed with grouping, e.g. ``"1,688 EUR"``."""
        return f"{usd * self.rate:,.{places}f} {self.currency}"

    def per(self, usd: float, unit: str, places: int = 2) -> str:
        """A price per ``unit``, e.g. ``"0.083 EUR/kWh"``."""
        return f"{self.money(usd, places)}/{unit}"


USD_SHOWN = ShownIn()
