"""The consultancy's quote: sell prices from landed cost with markups, plus services and fees.

Markups are percentages on the landed cost net of recoverable VAT (the consultancy's buy
price). The most specific one applies: a line's own markup, else its category's, else the
global one (a cost-plus quote, e.g. Horngren, *Cost Accounting*, ch. 12, "cost-plus
pricing"). The unit sell price is rounded half up to the currency's minor unit and the line
amount is unit price × quantity, so every amount the client reads multiplies and adds up as
printed. A line without a landed cost has no sell price: it is "not priced", never 0.

The margin is the markup on unit prices at the same rounding, ``(unit sell − unit cost) ×
quantity`` with both unit prices in minor units, so a 0 % markup is a margin of exactly 0
(rounding a unit price is not a margin). BOM lines of the ``service`` category (installation,
burn-in, support) are services: the quote groups them with the consultancy's own fees, not
with the hardware.

VAT the client cannot recover (a VAT-exempt or partly exempt buyer) is inside the landed cost
but is not marked up: a line's markup applies to its cost less that VAT, and the VAT is added
to the client's total at cost (a tax passed on, not a sale). Quote total to the client =
sell prices + fees + VAT the client cannot recover; the cost basis (goods cost + that VAT) is
then the landed cost, the TCO capex.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from planner.engine.errors import EngineInputError
from planner.engine.landed_cost import round_money
from planner.engine.limits import MARKUP_PCT

HUNDRED = Decimal(100)
# BOM lines of this category are services bought for the client (planner.engine.bom).
SERVICE_CATEGORY = "service"


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
    def is_service(self) -> bool:
        return self.category == SERVICE_CATEGORY

    def margin_in(self, currency: str) -> Decimal | None:
        """(unit sell − unit cost) × quantity, both unit prices in minor units: 0 at 0 %. The
        cost is without the VAT the client cannot recover (passed on at cost, not a margin)."""
        if self.sell is None or self.cost is None or not self.quantity:
            return None
        unit_cost = round_money((self.cost - self.vat_not_recoverable) / self.quantity, currency)
        return (self.unit_sell - unit_cost) * self.quantity


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
    """Sums of a quote. ``goods_sell`` and ``goods_cost`` cover every priced BOM line
    (hardware and BOM services); ``hardware_sell`` + ``services_sell`` = ``goods_sell``, and
    ``services_and_fees`` = ``services_sell`` + ``fees`` is what the quote prints under
    "Services and fees"."""

    goods_sell: Decimal  # priced lines only
    fees: Decimal
    total_sell: Decimal
    goods_cost: Decimal  # priced lines only, without the VAT the client cannot recover
    margin: Decimal  # on goods, at unit-price rounding (0 at a 0 % markup)
    unpriced_lines: int
    hardware_sell: Decimal = Decimal(0)  # priced hardware lines
    services_sell: Decimal = Decimal(0)  # priced BOM service lines
    vat_not_recoverable: Decimal = Decimal(0)  # priced lines only, at cost
    total_to_client: Decimal = Decimal(0)  # total_sell + vat_not_recoverable

    @property
    def services_and_fees(self) -> Decimal:
        return self.services_sell + self.fees

    @property
    def complete(self) -> bool:
        return self.unpriced_lines == 0


def sell_line(line: CostLine, markups: Markups, currency: str) -> SellLine:
    """A line's sell price: unit cost × (1 + markup), rounded to minor units, × quantity."""
    if line.quantity < 0:
        raise QuoteError(f"Quantity of {line.description} cannot be negative.")
    if line.vat_not_recoverable < 0 or (
        line.cost is not None and line.vat_not_recoverable > line.cost
    ):
        raise QuoteError(
            f"The VAT not recoverable on {line.description} must lie between 0 and its cost."
        )
    pct, source = markups.for_line(line.key, line.category)
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
    hardware_sell, services_sell = group_sells((x.category, x.sell) for x in priced)
    goods_sell = hardware_sell + services_sell
    vat = round_money(sum((x.vat_not_recoverable for x in priced), Decimal(0)), currency)
    goods_cost = sum((x.cost - x.vat_not_recoverable for x in priced), Decimal(0))
    margin = sum((x.margin_in(currency) or Decimal(0) for x in priced), Decimal(0))
    fee_total = sum((f.amount(currency) for f in fees), Decimal(0))
    unpriced = sum(1 for x in lines if x.sell is None and x.quantity)
    total = goods_sell + fee_total
    return QuoteTotals(goods_sell, fee_total, total, goods_cost, margin, unpriced,
                       hardware_sell, services_sell, vat, total + vat)  # fmt: skip


def group_sells(lines: Iterable[tuple[str, Decimal | None]]) -> tuple[Decimal, Decimal]:
    """``(hardware, services)``: the sell amounts of priced lines ``(category, sell)``, BOM
    services (:data:`SERVICE_CATEGORY`) apart from the hardware; unpriced lines add nothing."""
    hardware = services = Decimal(0)
    for category, sell in lines:
        if sell is None:
            continue
        if category == SERVICE_CATEGORY:
            services += sell
        else:
            hardware += sell
    return hardware, services


# --- Payment milestones ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PaymentMilestone:
    """A share of the quote's total and the event it falls due on (e.g. 40 % on order)."""

    pct: Decimal
    when: str


@dataclass(frozen=True, slots=True)
class PaymentDue:
    pct: Decimal
    when: str
    amount: Decimal


def check_milestones(milestones: Iterable[PaymentMilestone]) -> tuple[PaymentMilestone, ...]:
    """The milestones, refused unless each is above 0 % with an event and they add up to 100 %.

    Raises:
        QuoteError: In one sentence a consultant can act on.
    """
    milestones = tuple(milestones)
    if not milestones:
        raise QuoteError("Give at least one payment milestone, e.g. '100 % on delivery'.")
    for m in milestones:
        if not m.pct.is_finite() or not 0 < m.pct <= HUNDRED:
            raise QuoteError(
                f"A milestone of {m.pct} % is refused: each is above 0 and at most 100 %."
            )
        if not m.when.strip():
            raise QuoteError(f"Say when the {m.pct} % falls due, e.g. 'on delivery'.")
    total = sum((m.pct for m in milestones), Decimal(0))
    if total != HUNDRED:
        raise QuoteError(
            f"The payment milestones add up to {total.normalize():f} %; they must add up to 100 %."
        )
    return milestones


def payment_schedule(
    milestones: Iterable[PaymentMilestone], total: Decimal, currency: str
) -> tuple[PaymentDue, ...]:
    """Each milestone's amount of ``total``: ``total × pct / 100`` rounded half up to minor
    units, the last milestone taking what rounding leaves, so the amounts add up to the total."""
    milestones = check_milestones(milestones)
    due, paid = [], Decimal(0)
    for i, m in enumerate(milestones):
        if i == len(milestones) - 1:
            amount = total - paid
        else:
            amount = round_money(total * m.pct / HUNDRED, currency)
        paid += amount
        due.append(PaymentDue(m.pct, m.when, amount))
    return tuple(due)


_MILESTONE_LINE = re.compile(r"^(\d{1,3}(?:[.,]\d{1,2})?)\s*%\s*(.*?)[\s.;,]*$")


def milestone_words(m: PaymentMilestone) -> str:
    """``"40 % on order"``: how a milestone is printed and typed."""
    return f"{m.pct.normalize():f} % {m.when}"


def parse_milestones(text: str) -> tuple[PaymentMilestone, ...]:
    """Milestones typed one a line (``"40 % on order"``), checked (:func:`check_milestones`).

    Raises:
        QuoteError: A line that does not start with a percentage, or milestones that do not
            add up to 100 %.
    """
    milestones = []
    for number, line in enumerate((x.strip() for x in text.splitlines()), start=1):
        if not line:
            continue
        match = _MILESTONE_LINE.match(line)
        if not match:
            raise QuoteError(
                f"Line {number} ('{line[:40]}'): start each milestone with its percentage, "
                "e.g. '50 % on delivery'."
            )
        pct = Decimal(match.group(1).replace(",", "."))
        milestones.append(PaymentMilestone(pct, match.group(2)))
    return check_milestones(milestones)
