"""The currency an engine's sentences write amounts in.

The engines compute in USD (catalog, cloud and site prices are USD); the plan's documents
show every amount in the plan's currency at one dated rate (the TCO's, stored with its run).
Figures stay USD and are converted where they are stored; sentences the engines write (a
check's reason, an option's notes) are converted as they are written, with this.
"""

from __future__ import annotations

from dataclasses import dataclass


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
