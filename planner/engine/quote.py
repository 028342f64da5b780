"""The consultancy's quote: sell prices from landed cost with markups, plus services and fees.

Markups are percentages on the landed cost net of recoverable VAT (the consultancy's buy
price). The most specific one applies: a line's own markup, else its category's, else the
global one (a cost-plus quote, e.g. Horngren, *Cost Accounting*, ch. 12, "cost-plus
pricing"). The unit sell price is rounded half up to the currency's minor unit and the line
amount is unit price × quantity, so every amount the client reads multiplies and adds up as
printed. A line without a landed cost has no sell price: it is "not priced", never 0.

VAT the client cannot recover (a VAT-exempt or partly exempt buyer) is inside the landed cost
but is not marked up: a line's markup applies to its cost less that VAT, and the VAT is added
to the client's total at cost (a tax passed on, not a sale). Quote total to the client =
sell prices + fees + VAT the client cannot recover; the cost basis (goods cost + that VAT) is
then the landed cost, the TCO capex.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from planner.engine.errors import EngineInputError
from planner.engine.landed_cost import round_money
from planner.engine.limits import MARKUP_PCT

HUNDRED = Decimal(100)


class QuoteError(EngineInputError):
    """Invalid quote input; the message is one clear sentence."""


@dataclass(frozen=True, slots=True)
class Markups:
    """Markup percentages: global, per BOM category and per line (keyed by part key)."""

    global_pct: Decimal = Decimal(0)
    by_category: tuple[tuple[str, Decimal], ...] = ()
    by_line: tuple[tuple[str, Decimal], ...] = ()

    def __post_init__(self) -> None:
        for pct in (self.global_pct, *(p for _, p in self.by_category + self.by_line)):
            if not MARKUP_PCT.low <= pct <= MARKUP_PCT.high:
                raise QuoteError(f"A markup of {pct} % is refused. {MARKUP_PCT.message()}")

    def for_line(self, key: str, category: str) -> tuple[Decimal, str]:
        """``(pct, "line" | "category" | "global")``: the most specific markup."""
        lines, categories = dict(self.by_line), dict(self.by_category)
        if key in lines:
            return lines[key], "line"
        if category in categories:
            return categories[category], "category"
        return self.global_pct, "global"


@dataclass(frozen=True, slots=True)
class CostLine:
    """One BOM line at cost: landed net in the quote currency (None = not priced)."""

    key: str
    category: str
    description: str
    quantity: int
    cost: Decimal | None
    vat_not_recoverable: Decimal = Decimal(0)  # inside ``cost``; passed on without markup


@dataclass(frozen=True, slots=True)
class SellLine:
    key: str
    category: str
    description: str
    quantity: int
    cost: Decimal | None
    markup_pct: Decimal
    markup_source: str
    unit_sell: Decimal | None
    sell: Decimal | None
    vat_not_recoverable: Decimal = Decimal(0)

    @property
    def margin(self) -> Decimal | None:
        if self.sell is None or self.cost is None:
            return None
        return self.sell - (self.cost - self.vat_not_recoverable)


@dataclass(frozen=True, slots=True)
class Fee:
    """A service or fee sold at its own price (no markup): e.g. 12 days of design at 1,200."""

    kind: str
    description: str
    quantity: Decimal
    unit: str
    unit_price: Decimal

    def amount(self, currency: str) -> Decimal:
        return round_money(self.quantity * self.unit_price, currency)


@dataclass(frozen=True, slots=True)
class QuoteTotals:
    goods_sell: Decimal  # priced lines only
    fees: Decimal
    total_sell: Decimal
    goods_cost: Decimal  # priced lines only, without the VAT the client cannot recover
    margin: Decimal  # on goods
    unpriced_lines: int
    vat_not_recoverable: Decimal = Decimal(0)  # priced lines only, at cost
    total_to_client: Decimal = Decimal(0)  # total_sell + vat_not_recoverable

    @property
    def complete(self) -> bool:
        return self.unpriced_lines == 0


def sell_line(line: CostLine, markups: Markups, currency: str) -> SellLine:
    """A line's sell price: unit cost × (1 + markup), rounded to minor units, × quantity."""
    if line.quantity < 0:
        raise QuoteError(f"Quantity of {line.description} cannot be negative.")
    pct, source = markups.for_line(line.key, line.category)
    if line.vat_not_recoverable < 0 or (
        line.cost is not None and line.vat_not_recoverable > line.cost
    ):
        raise QuoteError(
            f"The VAT not recoverable on {line.description} must lie between 0 and its cost."
        )
    unit_sell = sell = None
    if line.cost is not None and line.quantity:
        marked = line.cost - line.vat_not_recoverable
        unit_sell = round_money(marked / line.quantity * (1 + pct / HUNDRED), currency)
        sell = unit_sell * line.quantity
    return SellLine(line.key, line.category, line.description, line.quantity, line.cost, pct,
                    source, unit_sell, sell, line.vat_not_recoverable)  # fmt: skip


def quote_totals(lines: list[SellLine], fees: list[Fee], currency: str) -> QuoteTotals:
    """Sums of the printed amounts; lines without a sell price are counted, not added as 0."""
    priced = [x for x in lines if x.sell is not None]
    goods_sell = sum((x.sell for x in priced), Decimal(0))
    vat = round_money(sum((x.vat_not_recoverable for x in priced), Decimal(0)), currency)
    goods_cost = sum((x.cost - x.vat_not_recoverable for x in priced), Decimal(0))
    fee_total = sum((f.amount(currency) for f in fees), Decimal(0))
    unpriced = sum(1 for x in lines if x.sell is None and x.quantity)
    total = goods_sell + fee_total
    return QuoteTotals(goods_sell, fee_total, total, goods_cost, goods_sell - goods_cost,
                       unpriced, vat, total + vat)  # fmt: skip
