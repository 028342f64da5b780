"""Where the TCO's hardware figures come from: supplier offers, the BOM, the catalog.

Reads only (no modelling): for each server platform the plan buys, the plan's own supplier
offer (pinned on its BOM line, else the cheapest valid one before duties), else the catalog's
dated, sourced list price, else nothing (the TCO then asks for a price rather than borrowing
another platform's). Network capex is the BOM's network lines priced the same way; the
maintenance rate is the BOM's support line against the servers' price. Offers in another
currency are converted to USD at the dated rate on the order date, and the rate is named.

Every function takes a plan already fetched through ``planner.selectors.plan_get`` (which
checked the organisation), and offers are read for that plan's organisation only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from catalog.models import ServerPlatform
from planner.engine import landed_cost as lc
from planner.engine.deployment import Deployment
from planner.models import Plan

NETWORK_CATEGORIES = ("nic", "switch", "optic", "cable")


@dataclass(frozen=True, slots=True)
class Priced:
    """One amount in USD and the sentence saying where it came from."""

    usd: float
    words: str


@dataclass(frozen=True)
class HardwarePrices:
    """Per-platform server prices, BOM network capex and support rate, with their basis.

    Attributes:
        servers: Server platform slug (or deployment server name) → price of one server, or
            ``None`` when neither an offer nor a sourced list price exists.
        network: Network capex from the BOM, ``None`` without BOM network lines.
        network_unpriced: Descriptions of BOM network lines that have no usable offer.
        support_per_server_year: The BOM support line per server and year, ``None`` without.
        fx: One sentence per FX rate used.
    """

    servers: dict[str, Priced | None]
    network: Priced | None
    network_unpriced: tuple[str, ...]
    support_per_server_year: Priced | None
    fx: tuple[str, ...] = field(default_factory=tuple)


class _Fx:
    """Converts offer amounts to USD on one date and remembers the rates it used."""

    def __init__(self, table: lc.FxTable, on: date) -> None:
        self.table, self.on, self.used = table, on, {}

    def usd(self, amount: Decimal, currency: str) -> float:
        converted = self.table.convert(lc.Money(amount, currency), "USD", self.on)
        if currency != "USD":
            self.used[currency] = (
                f"1 {currency} = {converted.rate:.4f} USD (rate of "
                f"{converted.rate_date:%Y-%m-%d}, used for offers in {currency})."
            )
        return float(converted.amount)


def _offer_price(offers, quantity: int, fx: _Fx, pinned_id: int | None, on: date):
    """(USD for ``quantity``, the offer) of the pinned or cheapest offer valid on ``on``."""
    from sourcing import selectors as ss  # sourcing imports planner; read it lazily

    usable = [o for o in offers if o.pk == pinned_id or o.valid_until >= on]
    priced = []
    for offer in usable:
        try:
            qty, unit, _ = lc.price_for_quantity(ss.offer_to_engine(offer, part_key=""), quantity)
            total = fx.usd(unit * qty, offer.currency)
        except lc.LandedCostError:
            continue  # no FX rate for its currency: not usable here
        if offer.pk == pinned_id:
            return total, offer
        priced.append((total, offer.lead_time_days, offer.pk, offer))
    if not priced:
        return None
    best = min(priced, key=lambda p: p[:3])
    return best[0], best[3]


def _offer_words(offer, quantity: int, total_usd: float) -> str:
    return (
        f"{offer.supplier.name} offer of {offer.quoted_on:%Y-%m-%d} "
        f"({offer.unit_price:,.0f} {offer.currency} a unit, valid to "
        f"{offer.valid_until:%Y-%m-%d}; {total_usd / quantity:,.0f} USD each for {quantity})"
    )


def hardware_prices(*, plan: Plan, deployments: Sequence[Deployment]) -> HardwarePrices:
    """The plan's server prices, BOM network capex and support rate (see the module doc)."""
    from sourcing import selectors as ss
    from sourcing.services import sourcing_settings_get, valuation_date

    on = valuation_date(sourcing_settings_get(plan=plan))
    fx = _Fx(ss.fx_table(), on)
    offers = list(ss.offer_list(organisation=plan.organisation))
    lines = [line for line in ss.bom_line_list(plan=plan) if line.quantity > 0]

    counts: dict[str, int] = {}
    for d in deployments:
        counts[d.server_slug or d.server_name] = counts.get(d.server_slug or d.server_name, 0) + (
            d.servers
        )
    platforms = {p.slug: p for p in ServerPlatform.objects.filter(slug__in=list(counts))}
    servers: dict[str, Priced | None] = {}
    for key, count in counts.items():
        platform = platforms.get(key)
        servers[key] = _server_price(platform, key, count, offers, lines, fx, on)

    network_usd, network_words, unpriced = 0.0, [], []
    support = None
    for line in lines:
        kind = line.part_key.split(":")[0]
        if kind in NETWORK_CATEGORIES:
            found = _offer_price(
                ss.offers_for_line(offers, line), line.quantity, fx, line.pinned_offer_id, on
            )
            if found is None:
                unpriced.append(line.description)
                continue
            network_usd += found[0]
            network_words.append(f"{line.quantity} × {line.description} {found[0]:,.0f} USD")
        elif line.service == "support":
            found = _offer_price(
                ss.offers_for_line(offers, line), line.quantity, fx, line.pinned_offer_id, on
            )
            if found is not None:
                total, offer = found
                support = Priced(
                    total / line.quantity,
                    f"support contract: {_offer_words(offer, line.quantity, total)}, "
                    "taken as per server and year",
                )
    network = None
    if network_words or unpriced:
        network = Priced(network_usd, "; ".join(network_words))
    return HardwarePrices(servers, network, tuple(unpriced), support, tuple(fx.used.values()))


def _server_price(platform, key, count, offers, lines, fx, on) -> Priced | None:
    name = str(platform) if platform else key
    if platform is not None:
        own = [o for o in offers if o.server_id == platform.pk]
        pinned = next((ln.pinned_offer_id for ln in lines if ln.server_id == platform.pk), None)
        found = _offer_price(own, count, fx, pinned, on)
        if found is not None:
            total, offer = found
            return Priced(
                total / count,
                f"{name}: the plan's supplier offer, {_offer_words(offer, count, total)}.",
            )
        if platform.list_price_usd is not None:
            dated = (
                f"as of {platform.list_price_as_of:%Y-%m-%d}"
                if platform.list_price_as_of
                else "undated"
            )
            return Priced(
                float(platform.list_price_usd),
                f"{name}: catalog list price {platform.list_price_usd:,.0f} USD ({dated}; "
                f"source: {platform.list_price_source or platform.source}). No supplier offer.",
            )
    return None
