"""Money as people read it: one function for every page, share page and PDF.

Amounts stay exact ``Decimal`` everywhere else; they are rounded only here, half up to the
currency's minor unit (:func:`planner.engine.landed_cost.round_money`, ISO 4217: cents for
EUR, whole yen for JPY) and grouped by Babel (CLDR data) in one style: the number, then the
ISO code — ``"1,234,568 JPY"``, ``"12,345.67 EUR"``. The minor units are the engine's, so the
figure printed is the figure the totals add up.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext

from babel.numbers import format_currency, format_decimal

from planner.engine.landed_cost import MINOR_UNITS, round_money
from planner.engine.shown import ShownIn

LOCALE = "en"  # grouping with "," and "." for decimals, as the rest of the app prints numbers
NOT_PRICED = "not priced"


def _pattern(digits: int) -> str:
    return "#,##0" + ("." + "0" * digits if digits else "")


def format_money(amount, currency: str = "") -> str:
    """``amount`` in ``currency`` for display, e.g. ``"1,234,568 JPY"``; "—" when empty.

    Without a currency (or with a code the planner does not know) the amount is shown with
    two decimals and no code, never a guess at one.
    """
    if amount is None or amount == "":
        return "—"
    try:
        value = Decimal(str(amount))
    except (InvalidOperation, ValueError):
        return "—"
    if not value.is_finite():
        return "—"
    with localcontext() as ctx:  # room for every digit of a large amount when rounding
        ctx.prec = max(ctx.prec, value.adjusted() + 10)
        if currency not in MINOR_UNITS:
            rounded = value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
            rounded = rounded.copy_abs() if rounded.is_zero() else rounded
            return format_decimal(rounded, format=_pattern(2), locale=LOCALE)
        rounded = round_money(value, currency)
        rounded = rounded.copy_abs() if rounded.is_zero() else rounded  # no "-0.00"
        return format_currency(
            rounded, currency, format=_pattern(MINOR_UNITS[currency]) + " ¤¤", locale=LOCALE,
            currency_digits=False,
        )  # fmt: skip


@dataclass(frozen=True)
class UsdRate:
    """1 USD = ``rate`` ``currency`` on ``rate_date``: how USD-stored inputs are shown.

    The engines compute in USD (catalog, cloud and site prices); a consultant reads and types
    the plan's currency. A form shows a stored USD amount with :meth:`from_usd` and stores
    what was typed with :meth:`to_usd`, both rounded half up to the field's decimal places.
    """

    currency: str
    rate: Decimal
    rate_date: str | None = None

    @property
    def shown_in(self) -> ShownIn:
        """The same rate for the engines' sentences."""
        return ShownIn(self.currency, float(self.rate))

    def from_usd(self, usd: Decimal, places: int) -> Decimal:
        """``usd`` in the plan's currency, to ``places`` decimals."""
        return (Decimal(usd) * self.rate).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)

    def to_usd(self, amount: Decimal, places: int) -> Decimal:
        """An amount typed in the plan's currency back in USD, to ``places`` decimals."""
        return (Decimal(amount) / self.rate).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)
