"""Landed cost of cross-border hardware purchases: offers, FX, customs value, duty and import VAT.

Contract. Given supplier offers, tariff rules, FX rates and shipments, compute per line and per
shipment (reference: ``facility_tco_sourcing.md`` C7)::

    goods          = unit price (price break for the quantity) × quantity ordered
    customs_value  = goods + freight + insurance              (CIF: EU, UK, JP, SG)
                   = goods                                    (US transaction value, excl.
                                                               international freight/insurance)
                   = (goods + freight + insurance) × 1.01     (IN: CIF + 1 % landing charge)
    duty           = customs_value × (MFN % + Σ applicable extra measures %) [+ surcharge on duty]
    import_vat     = (customs_value + duty [+ inland freight where the destination says]) × VAT %
    landed (gross) = goods + freight + insurance + duty + import_vat + brokerage + inland freight
    landed (net)   = gross − VAT the buyer recovers
    VAT recovered  = VAT × buyer's recovery % (0 when the rule says not recoverable); the rest
                     is a cost to the buyer (a VAT-exempt bank recovers 0 %, Directive
                     2006/112/EC Art. 135(1) and 168; a partly exempt buyer its pro-rata, Art. 173)

Money. Every amount is a ``decimal.Decimal`` with an ISO 4217 currency code (:class:`Money`,
:class:`ConvertedAmount`). Arithmetic is exact; nothing is rounded inside the engine except the
allocation of shared charges, which is done in the currency's minor unit (cents) by the largest
remainder so the shares sum exactly to the charge. Output rounding rule (:func:`round_money`):
``ROUND_HALF_UP`` to the currency's minor unit (cents; 0 decimals for JPY/KRW).

Conversion. Each amount is converted to the plan currency with the most recent rate dated on or
before the valuation date; the converted amount carries the rate and its date.

Unknowns stay unknown. An HS code without a tariff rule gives ``duty=None`` (never 0) and the
status ``"no rule — duty unknown"``; totals are then marked incomplete.

No Django import; rows are loaded by selectors and passed in as frozen dataclasses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from planner.engine import limits
from planner.engine.errors import EngineInputError
from planner.engine.shown import quantity

__all__ = [
    "CUSTOMS_VALUE_BASIS",
    "DEFAULT_INSURANCE_PCT",
    "NOT_PRICED",
    "NO_RULE",
    "NO_VAT_RATE",
    "STANDARD_VAT_PCT",
    "UNCONFIRMED",
    "AllocationMethod",
    "ConvertedAmount",
    "DutyComponent",
    "ExtraMeasure",
    "FxRate",
    "FxTable",
    "LandedCostError",
    "MeasureToConfirm",
    "LandedTotals",
    "LandedCostLine",
    "LineStatus",
    "Money",
    "Offer",
    "OfferChoice",
    "OfferEvaluation",
    "PriceBreak",
    "Shipment",
    "ShipmentLandedCost",
    "ShipmentLine",
    "SupplyRule",
    "TariffRule",
    "ValuationRule",
    "allocate",
    "choose_offer",
    "customs_value",
    "duty_components",
    "find_tariff_rule",
    "landed_totals",
    "normalise_country",
    "normalise_hs",
    "plan_landed_totals",
    "price_for_quantity",
    "round_money",
    "shipment_landed_cost",
    "supply_rule",
]


class LandedCostError(EngineInputError):
    """Invalid input to a landed-cost computation; the message is one clear sentence."""


# ---------------------------------------------------------------------------------------------
# Money and FX
# ---------------------------------------------------------------------------------------------

# ISO 4217 codes the planner accepts, with their minor units (decimals). Source: ISO 4217 list
# (SIX Group, maintenance agency); codes outside this list are rejected as unknown.
MINOR_UNITS: dict[str, int] = {
    "USD": 2, "EUR": 2, "GBP": 2, "CHF": 2, "SEK": 2, "DKK": 2, "NOK": 2, "PLN": 2, "CZK": 2,
    "HUF": 2, "JPY": 0, "KRW": 0, "CNY": 2, "HKD": 2, "TWD": 2, "SGD": 2, "MYR": 2, "THB": 2,
    "VND": 0, "INR": 2, "AUD": 2, "NZD": 2, "CAD": 2, "MXN": 2, "BRL": 2, "ILS": 2, "AED": 2,
    "SAR": 2, "ZAR": 2,
}  # fmt: skip


def _check_currency(code: str) -> str:
    if code not in MINOR_UNITS:
        raise LandedCostError(f"Unknown currency {code!r}: use a supported ISO 4217 code.")
    return code


def round_money(amount: Decimal, currency: str) -> Decimal:
    """Round an amount for output: ROUND_HALF_UP to the currency's minor unit.

    Args:
        amount: Exact amount in ``currency``.
        currency: ISO 4217 code (cents for EUR/USD, whole units for JPY).

    Returns:
        The rounded amount, e.g. ``Decimal("2004.50")``.
    """
    exp = Decimal(1).scaleb(-MINOR_UNITS[_check_currency(currency)])
    return amount.quantize(exp, rounding=ROUND_HALF_UP)


@dataclass(frozen=True, slots=True)
class Money:
    """An exact amount in one currency (ISO 4217 code)."""

    amount: Decimal
    currency: str

    def __post_init__(self) -> None:
        _check_currency(self.currency)
        if not isinstance(self.amount, Decimal):
            raise LandedCostError(
                f"Money amounts must be Decimal, got {type(self.amount).__name__}."
            )

    def __add__(self, other: Money) -> Money:
        if other.currency != self.currency:
            raise LandedCostError(f"Cannot add {other.currency} to {self.currency} without FX.")
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        if other.currency != self.currency:
            raise LandedCostError(f"Cannot subtract {other.currency} from {self.currency}.")
        return Money(self.amount - other.amount, self.currency)

    def times(self, factor: Decimal | int) -> Money:
        """This amount multiplied by a plain number."""
        return Money(self.amount * Decimal(factor), self.currency)

    def rounded(self) -> Decimal:
        """Output value under :func:`round_money`."""
        return round_money(self.amount, self.currency)

    @staticmethod
    def zero(currency: str) -> Money:
        """Zero in ``currency``."""
        return Money(Decimal(0), currency)


@dataclass(frozen=True, slots=True)
class FxRate:
    """``1 from_ccy = rate to_ccy`` as published on ``as_of``."""

    from_ccy: str
    to_ccy: str
    rate: Decimal
    as_of: date
    source: str = ""


@dataclass(frozen=True, slots=True)
class ConvertedAmount:
    """An amount converted to another currency, carrying the rate used and its date.

    Attributes:
        amount: Exact converted amount in ``currency``.
        currency: Target ISO 4217 code.
        rate: Units of ``currency`` per unit of ``source.currency`` (1 when no conversion).
        rate_date: Publication date of the rate used.
        source: The original amount.
    """

    amount: Decimal
    currency: str
    rate: Decimal
    rate_date: date
    source: Money

    @property
    def money(self) -> Money:
        """The converted amount as :class:`Money`."""
        return Money(self.amount, self.currency)


@dataclass(frozen=True, slots=True)
class FxTable:
    """A set of dated FX rates. Inverse rates are derived (1 / rate); no triangulation."""

    rates: tuple[FxRate, ...] = ()

    def rate(self, from_ccy: str, to_ccy: str, on: date) -> tuple[Decimal, date]:
        """Most recent rate dated on or before ``on``.

        Returns:
            ``(rate, rate_date)`` with ``1 from_ccy = rate to_ccy``.

        Raises:
            LandedCostError: Unknown currency, or no rate on or before ``on``.
        """
        _check_currency(from_ccy)
        _check_currency(to_ccy)
        if from_ccy == to_ccy:
            return Decimal(1), on
        best: tuple[Decimal, date] | None = None
        for r in self.rates:
            if r.as_of > on:
                continue
            if (r.from_ccy, r.to_ccy) == (from_ccy, to_ccy):
                candidate = (r.rate, r.as_of)
            elif (r.from_ccy, r.to_ccy) == (to_ccy, from_ccy):
                candidate = (Decimal(1) / r.rate, r.as_of)
            else:
                continue
            if best is None or candidate[1] > best[1]:
                best = candidate
        if best is None:
            raise LandedCostError(f"No FX rate from {from_ccy} to {to_ccy} on or before {on}.")
        return best

    def convert(self, money: Money, to_ccy: str, on: date) -> ConvertedAmount:
        """Convert ``money`` to ``to_ccy`` at the latest rate on or before ``on``."""
        rate, rate_date = self.rate(money.currency, to_ccy, on)
        return ConvertedAmount(money.amount * rate, to_ccy, rate, rate_date, money)


# ---------------------------------------------------------------------------------------------
# Offers and price breaks
# ---------------------------------------------------------------------------------------------

# Incoterms 2020 (ICC wall chart, reference C6): the 11 rules, and who pays main carriage.
INCOTERMS_2020 = frozenset(
    {"EXW", "FCA", "CPT", "CIP", "DAP", "DPU", "DDP", "FAS", "FOB", "CFR", "CIF"}
)
_SELLER_PAYS_CARRIAGE = frozenset({"CPT", "CIP", "CFR", "CIF", "DAP", "DPU", "DDP"})
_SELLER_PAYS_INSURANCE = frozenset({"CIP", "CIF", "DAP", "DPU", "DDP"})
_SELLER_PAYS_IMPORT_TAXES = frozenset({"DDP"})  # DDP: seller is importer of record (C6)


@dataclass(frozen=True, slots=True)
class PriceBreak:
    """From ``min_qty`` units upward the unit price is ``unit_price`` (offer currency)."""

    min_qty: int
    unit_price: Decimal


@dataclass(frozen=True, slots=True)
class Offer:
    """A supplier's dated quote for one part.

    Attributes:
        supplier: Supplier name.
        part_key: BOM part key the offer is for.
        unit_price: Base unit price in ``currency`` (for quantities below every break).
        currency: ISO 4217 code of the quote.
        lead_time_days: Days from order to ready at the named place (Incoterm).
        quoted_on: Date of the quote.
        valid_until: Last day the quote may be used.
        origin_country: ISO 3166 alpha-2 country of origin: where the goods were made. Drives the
            extra duties by origin (e.g. Section 301 on China origin).
        incoterm: Incoterms 2020 rule (default FCA, reference D22).
        price_breaks: Quantity breaks, ``PriceBreak(min_qty, unit_price)``.
        minimum_order_qty: Minimum units per order.
        freight_per_unit: Estimated international freight per unit in ``currency`` (used when
            comparing offers; shipments carry their own freight).
        offer_id: Stable identifier (for pinning).
        ship_from: ISO alpha-2 country the goods are dispatched from: which customs border (if
            any) is crossed, and so whether the supply is an import, a domestic supply or an
            intra-EU supply. Empty = the origin country (callers pass the supplier's country).
    """

    supplier: str
    part_key: str
    unit_price: Decimal
    currency: str
    lead_time_days: int
    quoted_on: date
    valid_until: date
    origin_country: str
    incoterm: str = "FCA"
    price_breaks: tuple[PriceBreak, ...] = ()
    minimum_order_qty: int = 1
    freight_per_unit: Decimal = Decimal(0)
    offer_id: str = ""
    ship_from: str = ""

    @property
    def ship_from_country(self) -> str:
        """Dispatch country (``ship_from``, else the origin), ISO alpha-2."""
        return normalise_country(self.ship_from or self.origin_country)

    @property
    def ident(self) -> str:
        """``offer_id`` or ``"<supplier>/<part_key>"``."""
        return self.offer_id or f"{self.supplier}/{self.part_key}"


# Money amounts above this are typing slips (the database keeps 14 digits before the point).
MAX_AMOUNT = Decimal(10) ** 14


def _check_amount(what: str, amount: Decimal) -> None:
    if not (isinstance(amount, Decimal) and amount.is_finite() and abs(amount) < MAX_AMOUNT):
        raise LandedCostError(f"{what} must be a finite amount below {MAX_AMOUNT:,}, not {amount}.")


def _validate_offer(offer: Offer, as_of: date) -> None:
    _check_currency(offer.currency)
    _check_amount(f"Offer {offer.ident}'s unit price", offer.unit_price)
    _check_amount(f"Offer {offer.ident}'s freight per unit", offer.freight_per_unit)
    for b in offer.price_breaks:
        _check_amount(f"Offer {offer.ident}'s price break", b.unit_price)
        if not 1 <= b.min_qty <= limits.QUANTITY.high:
            raise LandedCostError(
                f"Offer {offer.ident} has a price break from {b.min_qty} units. "
                f"{limits.QUANTITY.message()}"
            )
    if offer.unit_price < 0 or any(b.unit_price < 0 for b in offer.price_breaks):
        raise LandedCostError(f"Offer {offer.ident} has a negative unit price.")
    if offer.freight_per_unit < 0:
        raise LandedCostError(f"Offer {offer.ident} has a negative freight per unit.")
    if offer.minimum_order_qty < 1:
        raise LandedCostError(f"Offer {offer.ident} has a minimum order below 1.")
    if offer.minimum_order_qty > limits.QUANTITY.high:
        raise LandedCostError(f"Offer {offer.ident}'s minimum order: {limits.QUANTITY.message()}")
    if offer.lead_time_days < 0:
        raise LandedCostError(f"Offer {offer.ident} has a negative lead time.")
    if offer.lead_time_days > limits.LEAD_TIME_DAYS.high:
        raise LandedCostError(f"Offer {offer.ident}'s lead time: {limits.LEAD_TIME_DAYS.message()}")
    if offer.quoted_on > as_of:
        raise LandedCostError(
            f"Offer {offer.ident} is quoted on {offer.quoted_on}, after the as-of date {as_of}."
        )
    if offer.valid_until < offer.quoted_on:
        raise LandedCostError(f"Offer {offer.ident} expires before the date it was quoted.")
    if offer.incoterm not in INCOTERMS_2020:
        raise LandedCostError(f"Offer {offer.ident} has an unknown Incoterm {offer.incoterm!r}.")


def price_for_quantity(offer: Offer, quantity: int) -> tuple[int, Decimal, str]:
    """Order quantity and unit price for a requested quantity.

    The minimum order raises the quantity; the price break is the one with the highest
    ``min_qty`` not above the ordered quantity (InvenTree ``SupplierPart.get_price``,
    Odoo ``product.supplierinfo.min_qty``).

    Args:
        offer: The offer.
        quantity: Units needed (≥ 0).

    Returns:
        ``(ordered_qty, unit_price, note)``; ``note`` explains a raised quantity or a break.

    Raises:
        LandedCostError: If ``quantity`` is negative.
    """
    if quantity < 0:
        raise LandedCostError(f"Quantity for {offer.part_key} cannot be negative ({quantity}).")
    if quantity > limits.QUANTITY.high:
        raise LandedCostError(f"Quantity for {offer.part_key}: {limits.QUANTITY.message()}")
    notes = []
    ordered = quantity
    if 0 < quantity < offer.minimum_order_qty:
        ordered = offer.minimum_order_qty
        notes.append(
            f"minimum order {offer.minimum_order_qty} raised the quantity from {quantity} "
            f"to {ordered}"
        )
    unit = offer.unit_price
    applicable = [b for b in offer.price_breaks if b.min_qty <= ordered]
    if applicable:
        brk = max(applicable, key=lambda b: b.min_qty)
        unit = brk.unit_price
        notes.append(f"price break from {brk.min_qty} units: {unit} {offer.currency}")
    return ordered, unit, "; ".join(notes)


# ---------------------------------------------------------------------------------------------
# Tariffs and customs value
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExtraMeasure:
    """An additional duty on top of (or instead of stacking with) the MFN rate.

    Attributes:
        name: Legal name, e.g. ``"Section 301 List 3 (9903.88.03)"``.
        origin_countries: ISO alpha-2 origins it applies to; empty = every origin.
        pct: Additional ad valorem percentage of the customs value.
        start: First day it applies (entry date).
        end: Last day it applies; ``None`` = open-ended.
        stacks: True = added on top of MFN and other measures. False = not cumulated: dropped
            when any measure named in ``not_stacked_on`` (or, if that is empty, any other
            measure) applies to the same line.
        not_stacked_on: Names of measures this one does not stack on (e.g. 122 on 232).
        condition: Non-empty when the measure applies only to some goods or end uses that the
            engine cannot tell (e.g. Section 232 covered chips, data-centre exemption); such a
            measure is applied only when the shipment line confirms it, otherwise a warning.
        source: Where the figure comes from.
        coverage_confirmed: False when no source confirms that the HS line is on the measure's
            list (e.g. Section 301 coverage of complete servers). The line's duty is then
            unknown ("duty unknown — confirm coverage", never 0 %) until the shipment line
            confirms the measure (applied) or excludes it (left out).
    """

    name: str
    origin_countries: tuple[str, ...]
    pct: Decimal
    start: date
    end: date | None = None
    stacks: bool = True
    not_stacked_on: tuple[str, ...] = ()
    condition: str = ""
    source: str = ""
    coverage_confirmed: bool = True

    def in_force(self, on: date) -> bool:
        """True when ``on`` is within [start, end]."""
        return self.start <= on and (self.end is None or on <= self.end)

    def covers_origin(self, origin: str) -> bool:
        """True when goods of ``origin`` are covered."""
        return not self.origin_countries or origin in self.origin_countries


@dataclass(frozen=True, slots=True)
class TariffRule:
    """Duty and import VAT for an HS-code prefix imported into one country.

    Attributes:
        hs_prefix: HS/HTS digits (dots allowed); the longest matching prefix wins.
        destination: ISO alpha-2 importing country.
        duty_pct: MFN ad valorem duty, % of the customs value.
        vat_pct: Import VAT/GST, %.
        vat_recoverable: True when a registered business recovers the import VAT.
        extra_measures: Additional dated duties.
        valid_from: First day the rule applies.
        valid_to: Last day it applies; ``None`` = open-ended.
        surcharge_on_duty_pct: Surcharge as % of the MFN duty (India's Social Welfare Surcharge).
        description: Goods description.
        source: Where the figures come from.
    """

    hs_prefix: str
    destination: str
    duty_pct: Decimal
    vat_pct: Decimal
    vat_recoverable: bool = True
    extra_measures: tuple[ExtraMeasure, ...] = ()
    valid_from: date = date(2000, 1, 1)
    valid_to: date | None = None
    surcharge_on_duty_pct: Decimal = Decimal(0)
    description: str = ""
    source: str = ""

    def valid_on(self, on: date) -> bool:
        """True when ``on`` is within [valid_from, valid_to]."""
        return self.valid_from <= on and (self.valid_to is None or on <= self.valid_to)


CustomsBasis = Literal["CIF", "TRANSACTION_VALUE", "CIF_PLUS_LANDING"]


@dataclass(frozen=True, slots=True)
class ValuationRule:
    """How a destination values imports for duty and VAT.

    Attributes:
        basis: ``"CIF"`` (goods + freight + insurance to the border), ``"TRANSACTION_VALUE"``
            (goods only, international freight and insurance excluded), ``"CIF_PLUS_LANDING"``.
        landing_charge_pct: Added to CIF for ``CIF_PLUS_LANDING`` (India 1 %).
        vat_base_includes_inland_freight: True when transport after the border to the first
            destination is part of the import-VAT base.
        source: Where the rule comes from.
    """

    basis: CustomsBasis
    landing_charge_pct: Decimal = Decimal(0)
    vat_base_includes_inland_freight: bool = False
    source: str = ""


_EU_CIF = ValuationRule(
    "CIF",
    vat_base_includes_inland_freight=True,
    source=(
        "EU customs value = value up to the EU border, UCC Art. 71/72 (vermaascustoms.com, "
        "tudorfreight.com); import-VAT base adds transport to the first destination "
        "(eclear.com EU VAT table) — reference C4/C5"
    ),
)
_EU_MEMBERS = (
    "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE",
    "IT", "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE",
)  # fmt: skip

# Customs value basis per destination (reference C5 and D20).
CUSTOMS_VALUE_BASIS: dict[str, ValuationRule] = {
    **{cc: _EU_CIF for cc in _EU_MEMBERS},
    "US": ValuationRule(
        "TRANSACTION_VALUE",
        source=(
            "19 U.S.C. §1401a(b): international freight and insurance excluded from dutiable "
            "value; CBP 'Proper Deductions of Freight and Other Costs from Customs Value' — "
            "reference C5"
        ),
    ),
    "GB": ValuationRule(
        "CIF",
        vat_base_includes_inland_freight=True,
        source=(
            "UK: CIF to the UK border as in the EU (WTO Valuation Agreement) — not in the "
            "reference store, verify with HMRC Notice 252/702"
        ),
    ),
    "JP": ValuationRule(
        "CIF",
        source=(
            "Japan: CIF; consumption tax on CIF + duty + excise — Japan Customs FAQ 1111 "
            "(customs.go.jp) — reference C4/C5"
        ),
    ),
    "SG": ValuationRule(
        "CIF",
        source=(
            "Singapore: GST on CIF + duty — basis not in the reference store (rate from "
            "gov.sg), verify with Singapore Customs"
        ),
    ),
    "IN": ValuationRule(
        "CIF_PLUS_LANDING",
        landing_charge_pct=Decimal(1),
        source=(
            "India: assessable value = CIF + 1 % landing charge; IGST on AV + BCD + SWS "
            "(paytm.com, cybex.in) — reference C4/C5"
        ),
    ),
}
# Common non-ISO spellings accepted for destinations (ISO 3166-1 alpha-2 is GB, GR).
_COUNTRY_ALIASES = {"UK": "GB", "EL": "GR"}


def normalise_country(code: str) -> str:
    """ISO 3166-1 alpha-2 code, upper case, with UK → GB and EL → GR."""
    code = (code or "").strip().upper()
    return _COUNTRY_ALIASES.get(code, code)


# ---------------------------------------------------------------------------------------------
# Supply rules: import, domestic supply, intra-EU supply
# ---------------------------------------------------------------------------------------------

SupplyRule = Literal["import", "domestic", "intra-EU"]

# The EU customs union and VAT area. Monaco is part of the French VAT and customs territory
# (Council Directive 2006/112/EC Art. 7(1)): a supply between Monaco and France is domestic, one
# between Monaco and another member state is intra-EU. San Marino is in a customs union with the
# EU but outside the VAT area (import VAT applies): not modelled, treated as an import.
EU_VAT_AREA = frozenset((*_EU_MEMBERS, "MC"))
_VAT_TERRITORY = {"MC": "FR"}

# Standard VAT/GST rates for domestic supplies and reverse-charge self-accounting, % (reference
# C4/D21: EU table from eclear.com / European Commission data; UK amavat.eu; JP Japan Customs FAQ
# 1111; SG gov.sg from 1 Jan 2024). A tariff rule's own VAT rate for the HS line takes precedence.
STANDARD_VAT_PCT: dict[str, Decimal] = {
    "DE": Decimal(19), "FR": Decimal(20), "NL": Decimal(21), "IE": Decimal(23),
    "HU": Decimal(27), "DK": Decimal(25), "SE": Decimal(25), "FI": Decimal("25.5"),
    "LU": Decimal(17), "MC": Decimal(20), "GB": Decimal(20), "JP": Decimal(10),
    "SG": Decimal(9),
}  # fmt: skip
SRC_STANDARD_VAT = (
    "Standard VAT: EU table https://eclear.com/knowledge/eu-vat-rates/ (DE 19, FR 20, NL 21, "
    "IE 23 %); UK 20 % amavat.eu; JP 10 % Japan Customs FAQ 1111; SG 9 % gov.sg [reference C4]"
)
SRC_INTRA_EU = (
    "Intra-EU B2B supply of goods: exempt (zero-rated) in the member state of dispatch, "
    "Directive 2006/112/EC Art. 138; the acquisition is taxed in the member state of arrival, "
    "Art. 2(1)(b) and 40, and the customer accounts for the VAT (reverse charge) and deducts it "
    "in the same return; no customs formalities inside the customs union (UCC Art. 4)"
)
SRC_DOMESTIC = (
    "Domestic supply: no customs entry, so no customs duty, import VAT or brokerage; the "
    "supplier charges the destination's VAT, deductible by a VAT-registered buyer "
    "(Directive 2006/112/EC Art. 2(1)(a), 168)"
)


def _vat_territory(country: str) -> str:
    country = normalise_country(country)
    return _VAT_TERRITORY.get(country, country)


def supply_rule(ship_from: str, destination: str) -> SupplyRule:
    """Which rule taxes goods dispatched from ``ship_from`` to a buyer in ``destination``.

    Returns:
        ``"domestic"`` inside one VAT territory (Monaco counts as France), ``"intra-EU"`` between
        two EU VAT-area countries (no customs border), otherwise ``"import"``.
    """
    origin, dest = _vat_territory(ship_from), _vat_territory(destination)
    if origin == dest:
        return "domestic"
    if origin in EU_VAT_AREA and dest in EU_VAT_AREA:
        return "intra-EU"
    return "import"


def normalise_hs(code: str) -> str:
    """HS/HTS code as digits only (``"8471.50.0150"`` → ``"8471500150"``)."""
    digits = re.sub(r"[^0-9]", "", code or "")
    if len(digits) < 4:
        raise LandedCostError(f"HS code {code!r} must have at least 4 digits.")
    return digits


def find_tariff_rule(
    rules: Iterable[TariffRule], hs_code: str, destination: str, on: date
) -> TariffRule | None:
    """The rule for ``hs_code`` into ``destination`` valid on ``on``.

    The longest HS prefix wins; among equals, the latest ``valid_from``.

    Returns:
        The rule, or ``None`` when no rule matches (duty unknown).
    """
    hs = normalise_hs(hs_code)
    destination = normalise_country(destination)
    best: TariffRule | None = None
    for rule in rules:
        prefix = normalise_hs(rule.hs_prefix)
        if (
            normalise_country(rule.destination) != destination
            or not hs.startswith(prefix)
            or not rule.valid_on(on)
        ):
            continue
        if best is None:
            best = rule
            continue
        key = (len(prefix), rule.valid_from)
        if key > (len(normalise_hs(best.hs_prefix)), best.valid_from):
            best = rule
    return best


@dataclass(frozen=True, slots=True)
class DutyComponent:
    """One part of the duty: the MFN rate, an extra measure, or a surcharge on duty."""

    name: str
    pct: Decimal
    amount: Money
    source: str = ""


@dataclass(frozen=True, slots=True)
class MeasureToConfirm:
    """A conditional measure (end use, exemption, quota) in force on a line but not confirmed:
    left out of the duty, shown as "confirm" with what it would cost if it applies.

    Attributes:
        name: Legal name of the measure.
        pct: Its ad valorem rate, % of the customs value.
        condition: What decides whether it applies (e.g. the end use).
        exposure: Extra cost to the buyer if it applies: the duty (customs value × pct) plus
            the import VAT on that duty the buyer cannot recover.
        source: Where the measure comes from.
    """

    name: str
    pct: Decimal
    condition: str
    exposure: Money
    source: str = ""


@dataclass(frozen=True, slots=True)
class MeasureDecided:
    """A conditional measure the consultant decided for the plan (e.g. end use confirmed).

    Attributes:
        name: Legal name of the measure.
        pct: Its ad valorem rate, % of the customs value.
        condition: What decided it (e.g. the end use).
        applies: True: charged in the duty at ``pct``; False: 0 % on this line.
        reason: The consultant's stated reason (required when it does not apply, e.g. the
            end-use certificate reference).
        duty: The duty it adds to the line (customs value × pct; zero when it does not apply).
        source: Where the measure comes from.
    """

    name: str
    pct: Decimal
    condition: str
    applies: bool
    reason: str
    duty: Money
    source: str = ""


def _applicable_measures(
    rule: TariffRule,
    origin: str,
    on: date,
    confirmed: frozenset[str],
    warnings: list[str],
    excluded: frozenset[str] = frozenset(),
    unconfirmed: list[ExtraMeasure] | None = None,
    conditional: list[ExtraMeasure] | None = None,
    not_applying: frozenset[str] = frozenset(),
    decided: list[tuple[ExtraMeasure, bool]] | None = None,
) -> list[ExtraMeasure]:
    candidates = []
    for m in rule.extra_measures:
        if not (m.covers_origin(origin) and m.in_force(on)):
            continue
        if m.name in excluded:
            warnings.append(f"{m.name} left out: confirmed not to cover this line")
            continue
        if not m.coverage_confirmed and m.name not in confirmed:
            # Coverage of the HS line is not confirmed: the duty is unknown, never 0 %.
            if unconfirmed is not None:
                unconfirmed.append(m)
            continue
        if m.condition and m.name in not_applying:
            # Decided for the plan: the condition is not met (e.g. an exempt end use), 0 %.
            warnings.append(f"{m.name} does not apply: decided for the plan ({m.condition})")
            if decided is not None:
                decided.append((m, False))
            continue
        if m.condition and m.name not in confirmed:
            warnings.append(f"{m.name} may apply ({m.condition}); not included unless confirmed")
            if conditional is not None:
                conditional.append(m)
            continue
        if m.condition and decided is not None:
            decided.append((m, True))
        candidates.append(m)
    names = {m.name for m in candidates}
    kept = []
    for m in candidates:
        others = names - {m.name}
        blockers = set(m.not_stacked_on) & others if m.not_stacked_on else others
        if not m.stacks and blockers:
            warnings.append(
                f"{m.name} not applied: does not stack on {', '.join(sorted(blockers))}"
            )
            continue
        kept.append(m)
    return kept


# ---------------------------------------------------------------------------------------------
# Allocation of shared charges
# ---------------------------------------------------------------------------------------------

AllocationMethod = Literal["value", "weight", "quantity", "equal"]


def allocate(total: Money, weights: Sequence[Decimal]) -> tuple[Money, ...]:
    """Split ``total`` in proportion to ``weights`` so that the shares sum exactly to it.

    The total is first rounded to the minor unit (ROUND_HALF_UP); each share gets the floor of
    its exact share in minor units, and the leftover minor units go one each to the largest
    remainders, earliest line first on ties (Hamilton / largest-remainder method; ERPNext and
    Odoo instead push the difference to the last line).

    Args:
        total: The charge to split.
        weights: Non-negative weights, one per line (value, kg, units ...).

    Returns:
        One share per weight, in ``total.currency``.

    Raises:
        LandedCostError: Negative weights, or all weights zero while the total is not zero.
    """
    if total.amount < 0:
        raise LandedCostError("Cannot allocate a negative charge.")
    if any(w < 0 for w in weights):
        raise LandedCostError("Allocation weights cannot be negative.")
    if not weights:
        if total.amount:
            raise LandedCostError(f"Cannot allocate {total.amount} {total.currency} to no lines.")
        return ()
    exp = MINOR_UNITS[total.currency]
    units = int(round_money(total.amount, total.currency).scaleb(exp))
    wsum = sum(weights, Decimal(0))
    if wsum == 0:
        if units:
            raise LandedCostError("Cannot allocate a charge when every allocation weight is zero.")
        return tuple(Money.zero(total.currency) for _ in weights)
    exact = [Decimal(units) * w / wsum for w in weights]
    floors = [int(x) for x in exact]  # weights ≥ 0 so int() is floor
    leftover = units - sum(floors)
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - floors[i]), i))
    for i in order[:leftover]:
        floors[i] += 1
    return tuple(Money(Decimal(f).scaleb(-exp), total.currency) for f in floors)


# ---------------------------------------------------------------------------------------------
# Shipments and results
# ---------------------------------------------------------------------------------------------

NO_RULE = "no rule — duty unknown"
UNCONFIRMED = "duty unknown — confirm coverage"
NO_VAT_RATE = "VAT rate unknown"
LineStatus = Literal[
    "ok",
    "no rule — duty unknown",
    "duty unknown — confirm coverage",
    "VAT rate unknown",
    "DDP — taxes paid by seller",
]
# Statuses whose amounts are unknown: the line is "not priced" and the totals are incomplete.
NOT_PRICED = frozenset({NO_RULE, UNCONFIRMED, NO_VAT_RATE})

# Insurance default: premium % of the insured value, insured value = 110 % of (goods + freight)
# (ICC Incoterms 2020: CIF/CIP cover is at least the price + 10 %, reference C6). The 0.3 %
# premium is a planner assumption (no source in the reference store) — edit per policy.
DEFAULT_INSURANCE_PCT = Decimal("0.3")
_INSURED_VALUE_FACTOR = Decimal("1.10")


@dataclass(frozen=True, slots=True)
class ShipmentLine:
    """One part in a shipment.

    Attributes:
        offer: The chosen offer.
        quantity: Units needed (the minimum order may raise it).
        hs_code: HS/HTS code of the part in the destination country.
        unit_weight_kg: Gross weight per unit in kg (needed for weight allocation).
        confirmed_measures: Names of extra measures confirmed to apply (conditional measures,
            or measures whose list coverage is not confirmed by the seed data).
        excluded_measures: Names of extra measures confirmed not to cover this line.
        not_applying: Conditional measures decided not to apply, as ``(name, reason)`` pairs
            (0 %, the reason shown); a conditional measure in ``confirmed_measures`` applies.
        applying_reasons: ``(name, reason)`` of conditional measures decided to apply.
    """

    offer: Offer
    quantity: int
    hs_code: str
    unit_weight_kg: Decimal | None = None
    confirmed_measures: frozenset[str] = frozenset()
    excluded_measures: frozenset[str] = frozenset()
    not_applying: tuple[tuple[str, str], ...] = ()
    applying_reasons: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Shipment:
    """A consignment into one destination country, with its shared charges.

    Attributes:
        key: Identifier.
        destination: ISO alpha-2 importing country.
        lines: The parts; all lines share one Incoterm.
        freight: International freight paid by the buyer (buyer-paid terms) or the freight
            element included in the price (C- and D-terms, used to value US imports).
        insurance: Cargo insurance; ``None`` = default % of the insured value.
        brokerage: Customs broker and handling fees (not part of the customs value).
        inland_freight: Transport after the border to the site.
        allocation: How freight, insurance, brokerage and inland freight are shared by lines.
        import_on: Expected customs entry date (drives tariff windows); ``None`` = as-of date.
        insurance_pct: Premium % used when ``insurance`` is ``None``.
    """

    key: str
    destination: str
    lines: tuple[ShipmentLine, ...]
    freight: Money
    brokerage: Money
    insurance: Money | None = None
    inland_freight: Money | None = None
    allocation: AllocationMethod = "value"
    import_on: date | None = None
    insurance_pct: Decimal = DEFAULT_INSURANCE_PCT


@dataclass(frozen=True, slots=True)
class LandedCostLine:
    """Landed cost of one shipment line; all amounts in the plan currency unless stated.

    ``duty``, ``vat``, ``landed_cost_gross`` and ``landed_cost_net`` are ``None`` when the
    line is not priced (status in :data:`NOT_PRICED`).

    ``supply_rule`` says which rule taxed the line: ``"import"`` (customs duty and import VAT on
    the customs value), ``"domestic"`` (no duty, no import VAT; ``vat`` is the domestic VAT the
    supplier charges) or ``"intra-EU"`` (no duty, zero-rated; ``vat`` is 0 and
    ``reverse_charge_vat`` is what the buyer self-accounts and deducts, net cash 0).
    ``supply_rule_note`` is the sentence to show.

    ``vat_recovered`` is the part of the VAT paid (or, intra-EU, self-accounted) that the buyer
    deducts at its recovery %; ``vat_not_recovered`` the rest, a cost inside
    ``landed_cost_net``. ``measures_to_confirm`` are conditional measures left out of the duty,
    each with its exposure.
    """

    part_key: str
    supplier: str
    hs_code: str
    origin_country: str
    quantity_requested: int
    quantity_ordered: int
    unit_price: Money
    goods: ConvertedAmount
    freight: ConvertedAmount
    insurance: ConvertedAmount
    brokerage: ConvertedAmount
    inland_freight: ConvertedAmount
    customs_value: Money
    customs_value_basis: str
    duty: Money | None
    duty_components: tuple[DutyComponent, ...]
    vat_base: Money | None
    vat: Money | None
    vat_recoverable: bool
    landed_cost_gross: Money | None
    landed_cost_net: Money | None
    status: LineStatus
    rule_source: str
    notes: tuple[str, ...] = ()
    ship_from: str = ""
    supply_rule: SupplyRule = "import"
    supply_rule_note: str = ""
    reverse_charge_vat: Money | None = None
    vat_recovered: Money | None = None
    vat_not_recovered: Money | None = None
    measures_to_confirm: tuple[MeasureToConfirm, ...] = ()
    measures_decided: tuple[MeasureDecided, ...] = ()

    @property
    def exposure_to_confirm(self) -> Money | None:
        """What the measures still to confirm would add if they all apply (None: none)."""
        if not self.measures_to_confirm:
            return None
        first, *rest = (m.exposure for m in self.measures_to_confirm)
        return sum(rest, first)

    @property
    def priced(self) -> bool:
        """False when duty or VAT is unknown (show "not priced", never 0)."""
        return self.status not in NOT_PRICED


@dataclass(frozen=True, slots=True)
class ShipmentLandedCost:
    """Totals of a shipment in the plan currency.

    ``duty``, ``vat`` and ``vat_recoverable`` are what the buyer pays (DDP lines excluded);
    ``vat`` includes domestic VAT charged by suppliers, ``reverse_charge_vat`` is self-accounted
    (no cash); ``vat_not_recoverable`` is the VAT the buyer bears (inside the net landed cost);
    ``exposure_to_confirm`` sums the lines' unconfirmed conditional measures
    (``measures_to_confirm`` of them). When ``complete`` is False, ``unpriced_lines`` lines are not priced; the duty, VAT
    and landed totals then cover only the priced lines and must be shown as incomplete.
    """

    key: str
    destination: str
    currency: str
    lines: tuple[LandedCostLine, ...]
    goods: Money
    freight: Money
    insurance: Money
    brokerage: Money
    inland_freight: Money
    customs_value: Money
    duty: Money
    vat: Money
    vat_recoverable: Money
    landed_cost_gross: Money
    landed_cost_net: Money
    complete: bool
    warnings: tuple[str, ...] = ()
    valuation_source: str = ""
    unpriced_lines: int = 0
    reverse_charge_vat: Money | None = None
    vat_not_recoverable: Money | None = None
    exposure_to_confirm: Money | None = None
    measures_to_confirm: int = 0


def _weights(lines: Sequence[ShipmentLine], goods: Sequence[Money], method: AllocationMethod):
    if method == "value":
        return [g.amount for g in goods]
    if method == "quantity":
        return [Decimal(line.quantity) for line in lines]
    if method == "equal":
        return [Decimal(1)] * len(lines)
    if method == "weight":
        missing = [line.offer.part_key for line in lines if line.unit_weight_kg is None]
        if missing:
            raise LandedCostError(f"Allocation by weight needs unit_weight_kg for {missing[0]}.")
        return [line.unit_weight_kg * line.quantity for line in lines]  # type: ignore[operator]
    raise LandedCostError(f"Unknown allocation method {method!r}.")


def _check_shipment(shipment: Shipment, as_of: date) -> None:
    if not shipment.lines:
        raise LandedCostError(f"Shipment {shipment.key} has no lines.")
    incoterms = {line.offer.incoterm for line in shipment.lines}
    if len(incoterms) > 1:
        raise LandedCostError(
            f"Shipment {shipment.key} mixes Incoterms {sorted(incoterms)}; split it by Incoterm."
        )
    for line in shipment.lines:
        if line.quantity < 0:
            raise LandedCostError(
                f"Quantity for {line.offer.part_key} cannot be negative ({line.quantity})."
            )
        _validate_offer(line.offer, as_of)
    for name in ("freight", "brokerage", "insurance", "inland_freight"):
        money = getattr(shipment, name)
        if money is not None and money.amount < 0:
            raise LandedCostError(f"Shipment {shipment.key}: {name} cannot be negative.")
    if shipment.insurance_pct < 0:
        raise LandedCostError(f"Shipment {shipment.key}: insurance % cannot be negative.")


def customs_value(
    goods: Money, freight: Money, insurance: Money, valuation: ValuationRule, incoterm: str
) -> Money:
    """Customs value of one line under the destination's basis (reference C5, C7).

    ``freight`` and ``insurance`` are the line's shares: paid by the buyer under E/F-terms, or
    the elements included in the price under C/D-terms.

    Returns:
        CIF: goods + freight + insurance (added only when not already in the price);
        TRANSACTION_VALUE (US): goods without international freight and insurance (deducted
        when the price includes them); CIF_PLUS_LANDING (IN): CIF × (1 + landing %).
    """
    in_price_freight = incoterm in _SELLER_PAYS_CARRIAGE
    in_price_insurance = incoterm in _SELLER_PAYS_INSURANCE
    if valuation.basis == "TRANSACTION_VALUE":
        # 19 U.S.C. §1401a(b): international freight and insurance are not dutiable.
        value = goods
        if in_price_freight:
            value = value - freight
        if in_price_insurance:
            value = value - insurance
        return value
    # UCC Art. 71: transport and insurance up to the border are part of the customs value.
    value = goods
    if not in_price_freight:
        value = value + freight
    if not in_price_insurance:
        value = value + insurance
    if valuation.basis == "CIF_PLUS_LANDING":
        # India: assessable value = CIF + 1 % landing charge (reference C4).
        value = value.times(1 + valuation.landing_charge_pct / 100)
    return value


def duty_components(
    rule: TariffRule,
    value: Money,
    origin: str,
    on: date,
    confirmed: frozenset[str] = frozenset(),
    warnings: list[str] | None = None,
    excluded: frozenset[str] = frozenset(),
    unconfirmed: list[ExtraMeasure] | None = None,
    conditional: list[ExtraMeasure] | None = None,
    not_applying: frozenset[str] = frozenset(),
    decided: list[tuple[ExtraMeasure, bool]] | None = None,
) -> tuple[DutyComponent, ...]:
    """MFN duty, applicable extra measures and any surcharge on duty for one line.

    Args:
        rule: The tariff rule.
        value: Customs value of the line.
        origin: ISO alpha-2 country of origin.
        on: Customs entry date.
        confirmed: Names of measures confirmed to apply (conditional or unconfirmed coverage).
        warnings: Receives a sentence for every measure left out and why.
        excluded: Names of measures confirmed not to cover the line.
        unconfirmed: Receives every measure in force whose coverage is not confirmed; the
            caller must then treat the duty as unknown (the components omit them).
        conditional: Receives every conditional measure in force that is not confirmed (left
            out of the duty; the caller shows it as "confirm" with its exposure).
        not_applying: Names of conditional measures decided not to apply (0 %).
        decided: Receives every conditional measure in force that was decided, with whether it
            applies (in ``confirmed``) or not (in ``not_applying``).

    Returns:
        The components; their sum is the duty (a lower bound when ``unconfirmed`` received any).
    """
    mfn = value.times(rule.duty_pct / 100)  # ad valorem on the customs value (reference C7)
    parts = [DutyComponent("MFN duty", rule.duty_pct, mfn, rule.source)]
    for m in _applicable_measures(
        rule,
        origin,
        on,
        confirmed,
        [] if warnings is None else warnings,
        excluded,
        unconfirmed,
        conditional,
        not_applying,
        decided,
    ):
        parts.append(DutyComponent(m.name, m.pct, value.times(m.pct / 100), m.source))
    if rule.surcharge_on_duty_pct:
        # India SWS: a % of the basic customs duty, not of the value (reference C4).
        surcharge = mfn.times(rule.surcharge_on_duty_pct / 100)
        parts.append(
            DutyComponent("Surcharge on duty", rule.surcharge_on_duty_pct, surcharge, rule.source)
        )
    return tuple(parts)


def _recovery_fraction(vat_recovery_pct: Decimal) -> Decimal:
    if not (
        isinstance(vat_recovery_pct, Decimal)
        and vat_recovery_pct.is_finite()
        and 0 <= vat_recovery_pct <= 100
    ):
        raise LandedCostError(
            f"The buyer's VAT recovery must be between 0 and 100 %, not {vat_recovery_pct}."
        )
    return vat_recovery_pct / 100


def _split_vat(vat: Money, deductible: bool, recovery: Decimal) -> tuple[Money, Money]:
    """``(recovered, not recovered)``: the buyer deducts its recovery share of deductible VAT
    (Directive 2006/112/EC Art. 168, pro-rata Art. 173); the rest is a cost."""
    recovered = vat.times(recovery) if deductible else Money.zero(vat.currency)
    return recovered, vat - recovered


def _pct_words(fraction: Decimal) -> str:
    return f"{(fraction * 100).normalize():f} %"


def _deduction_words(deductible: bool, recovery: Decimal) -> str:
    if not deductible or recovery == 0:
        return " (not recoverable by the buyer: a cost)"
    if recovery == 1:
        return " (deductible)"
    return f" ({_pct_words(recovery)} recoverable by the buyer, the rest a cost)"


def shipment_landed_cost(
    shipment: Shipment,
    *,
    tariffs: Sequence[TariffRule],
    fx: FxTable,
    plan_currency: str,
    as_of: date,
    basis: dict[str, ValuationRule] | None = None,
    vat_recovery_pct: Decimal = Decimal(100),
) -> ShipmentLandedCost:
    """Landed cost of every line of a shipment and of the shipment, in the plan currency.

    Args:
        shipment: The consignment.
        tariffs: Tariff rules to search.
        fx: FX rates; every amount is converted with the latest rate on or before ``as_of``.
        plan_currency: ISO 4217 code of the plan.
        as_of: Valuation date (offers must be quoted on or before it).
        basis: Customs value basis per destination (default :data:`CUSTOMS_VALUE_BASIS`).
        vat_recovery_pct: Share of deductible VAT the buyer recovers, 0-100 (100: fully
            recoverable; 0: VAT-exempt, all VAT is a cost).

    Returns:
        Lines and totals; expired offers and unapplied measures appear as warnings.

    Raises:
        LandedCostError: Negative quantities or charges, unknown currencies, offers quoted after
            ``as_of``, mixed Incoterms, a destination without a valuation rule, missing FX.
    """
    _check_currency(plan_currency)
    _check_shipment(shipment, as_of)
    recovery = _recovery_fraction(vat_recovery_pct)
    valuation = (basis or CUSTOMS_VALUE_BASIS).get(normalise_country(shipment.destination))
    crosses_border = any(
        supply_rule(line.offer.ship_from_country, shipment.destination) == "import"
        for line in shipment.lines
    )
    if valuation is None and crosses_border:
        raise LandedCostError(f"No customs valuation rule for destination {shipment.destination}.")
    valuation = valuation or ValuationRule("CIF", source="no customs entry")
    import_on = shipment.import_on or as_of
    incoterm = shipment.lines[0].offer.incoterm  # one Incoterm per shipment (checked above)
    buyer_pays_freight = incoterm not in _SELLER_PAYS_CARRIAGE
    buyer_pays_insurance = incoterm not in _SELLER_PAYS_INSURANCE
    buyer_pays_taxes = incoterm not in _SELLER_PAYS_IMPORT_TAXES
    warnings: list[str] = []

    def conv(m: Money) -> ConvertedAmount:
        return fx.convert(m, plan_currency, as_of)

    ordered: list[tuple[int, Decimal, str]] = []
    goods_src: list[Money] = []
    for line in shipment.lines:
        qty, unit, note = price_for_quantity(line.offer, line.quantity)
        ordered.append((qty, unit, note))
        goods_src.append(Money(unit * qty, line.offer.currency))
        if line.offer.valid_until < as_of:
            warnings.append(
                f"Offer {line.offer.ident} expired on {line.offer.valid_until} (as of {as_of})."
            )
    goods = [conv(g) for g in goods_src]
    weights = _weights(shipment.lines, [g.money for g in goods], shipment.allocation)

    freight_total = shipment.freight
    if shipment.insurance is not None:
        insurance_total = shipment.insurance
    else:
        # Premium on 110 % of (goods + freight), in the plan currency (reference C6).
        base = sum((g.amount for g in goods), Decimal(0)) + conv(freight_total).amount
        insurance_total = Money(
            base * _INSURED_VALUE_FACTOR * shipment.insurance_pct / 100, plan_currency
        )
    inland_total = shipment.inland_freight or Money.zero(plan_currency)
    dest = normalise_country(shipment.destination)
    rules = [supply_rule(line.offer.ship_from_country, dest) for line in shipment.lines]
    # A customs broker is paid only for lines that cross a customs border.
    broker_weights = [
        w if r == "import" else Decimal(0) for w, r in zip(weights, rules, strict=True)
    ]
    if "import" in rules and not any(broker_weights):
        broker_weights = [Decimal(r == "import") for r in rules]
    brokerage_total = shipment.brokerage
    if "import" not in rules and shipment.brokerage.amount:
        warnings.append(
            f"Brokerage of {quantity(shipment.brokerage.amount, shipment.brokerage.currency)} "
            "not charged: no line of this shipment crosses a customs border."
        )
        brokerage_total = Money.zero(shipment.brokerage.currency)
    shares = {
        "freight": [conv(m) for m in allocate(freight_total, weights)],
        "insurance": [conv(m) for m in allocate(insurance_total, weights)],
        "brokerage": [conv(m) for m in allocate(brokerage_total, broker_weights)],
        "inland": [conv(m) for m in allocate(inland_total, weights)],
    }

    zero = Money.zero(plan_currency)
    results: list[LandedCostLine] = []
    for i, line in enumerate(shipment.lines):
        qty, unit, note = ordered[i]
        notes = [note] if note else []
        g = goods[i].money
        fr, ins = shares["freight"][i].money, shares["insurance"][i].money
        brk, inl = shares["brokerage"][i].money, shares["inland"][i].money
        cv = customs_value(g, fr, ins, valuation, incoterm)
        # What the buyer pays on top of the price.
        paid = g + brk + inl
        if buyer_pays_freight:
            paid = paid + fr
        if buyer_pays_insurance:
            paid = paid + ins

        rule = find_tariff_rule(tariffs, line.hs_code, shipment.destination, import_on)
        kind = rules[i]
        ship_from = line.offer.ship_from_country
        status: LineStatus = "ok"
        duty: Money | None
        vat: Money | None
        vat_base: Money | None
        gross: Money | None
        net: Money | None
        reverse_charge: Money | None = None
        recovered: Money | None = None
        not_recovered: Money | None = None
        to_confirm: tuple[MeasureToConfirm, ...] = ()
        measures_decided: tuple[MeasureDecided, ...] = ()
        components: tuple[DutyComponent, ...] = ()
        basis_label = valuation.basis
        rule_source = rule.source if rule else ""
        if kind != "import":
            # No customs border: no customs value, duty, import VAT or brokerage (reference C4).
            cv, basis_label = zero, "none — no customs entry"
            vat_pct = rule.vat_pct if rule else STANDARD_VAT_PCT.get(_vat_territory(dest))
            label = "domestic supply" if kind == "domestic" else "intra-EU supply"
            duty = zero
            components = (DutyComponent(f"No customs duty ({label})", Decimal(0), zero),)
            rule_source = SRC_DOMESTIC if kind == "domestic" else SRC_INTRA_EU
            if rule is None:
                rule_source += f"; {SRC_STANDARD_VAT}"
            vat_recoverable = rule.vat_recoverable if rule else True
            # VAT base: the price paid to the supplier (delivery it invoices is in the price).
            vat_base = g
            if vat_pct is None:
                status, vat, gross, net = NO_VAT_RATE, None, None, None
                warnings.append(
                    f"{line.offer.part_key}: no VAT rate for {dest} — {label} not priced."
                )
                note = f"{label.capitalize()} ({ship_from} → {dest}): VAT rate unknown"
            elif kind == "domestic":
                vat = vat_base.times(vat_pct / 100)
                recovered, not_recovered = _split_vat(vat, vat_recoverable, recovery)
                gross = paid + vat
                net = gross - recovered
                note = (
                    f"Domestic supply ({ship_from} → {dest}): no customs duty, no import VAT; "
                    f"{dest} VAT {quantity(vat_pct, '%')} charged by the supplier"
                    + _deduction_words(vat_recoverable, recovery)
                )
            else:
                vat = zero
                reverse_charge = vat_base.times(vat_pct / 100)
                # Art. 168: the acquisition VAT is deductible only to the buyer's recovery %;
                # the rest is paid with the return and stays a cost.
                recovered, not_recovered = _split_vat(reverse_charge, vat_recoverable, recovery)
                gross = net = paid + not_recovered
                note = (
                    f"Intra-EU B2B supply ({ship_from} → {dest}): zero-rated, no customs duty; "
                    f"reverse charge — buyer self-accounts {dest} VAT {quantity(vat_pct, '%')} "
                    + (
                        "and deducts it (net cash 0)"
                        if not not_recovered.amount
                        else f"and deducts {_pct_words(recovery if vat_recoverable else 0)} of it"
                    )
                )
            notes.append(note)
        elif rule is None:
            status, duty, vat, vat_base, gross, net = NO_RULE, None, None, None, None, None
            warnings.append(
                f"{line.offer.part_key}: no tariff rule for HS {line.hs_code} into "
                f"{shipment.destination} on {import_on} — duty unknown, total incomplete."
            )
            vat_recoverable = False
            note = f"Import ({ship_from} → {dest}, origin {line.offer.origin_country}): no rule"
        else:
            note = (
                f"Import ({ship_from} → {dest}, origin {line.offer.origin_country}): customs "
                f"duty and import VAT on the {valuation.basis} customs value"
            )
            line_warnings: list[str] = []
            unconfirmed: list[ExtraMeasure] = []
            conditional: list[ExtraMeasure] = []
            decided: list[tuple[ExtraMeasure, bool]] = []
            reasons = dict(line.applying_reasons) | dict(line.not_applying)
            components = duty_components(
                rule, cv, line.offer.origin_country, import_on, line.confirmed_measures,
                line_warnings, line.excluded_measures, unconfirmed, conditional,
                frozenset(name for name, _ in line.not_applying), decided,
            )  # fmt: skip
            charged = {c.name: c.amount for c in components}
            measures_decided = tuple(
                MeasureDecided(
                    m.name, m.pct, m.condition, applies, reasons.get(m.name, ""),
                    charged.get(m.name, zero) if applies else zero, m.source,
                )
                for m, applies in decided
            )  # fmt: skip
            notes.extend(line_warnings)
            warnings.extend(f"{line.offer.part_key}: {w}" for w in line_warnings)
            vat_recoverable = rule.vat_recoverable
            # If it applies: its duty, plus the import VAT on that duty the buyer cannot recover.
            kept_vat = Decimal(1) - (recovery if vat_recoverable else Decimal(0))
            to_confirm = tuple(
                MeasureToConfirm(
                    m.name, m.pct, m.condition,
                    cv.times(m.pct / 100).times(1 + rule.vat_pct / 100 * kept_vat), m.source,
                )
                for m in conditional
            )  # fmt: skip
            if unconfirmed:
                status, duty, vat, vat_base, gross, net = UNCONFIRMED, None, None, None, None, None
                for m in unconfirmed:
                    text = (
                        f"{m.name} ({m.pct} %) may cover HS {line.hs_code} of "
                        f"{line.offer.origin_country} origin on {import_on}: coverage not "
                        "confirmed — duty unknown, confirm it"
                    )
                    notes.append(text)
                    warnings.append(f"{line.offer.part_key}: {text}.")
            else:
                duty = sum((c.amount for c in components), zero)
                vat_base = cv + duty
                if valuation.vat_base_includes_inland_freight:
                    vat_base = vat_base + inl
                vat = vat_base.times(rule.vat_pct / 100)
                if buyer_pays_taxes:
                    gross = paid + duty + vat
                    recovered, not_recovered = _split_vat(vat, vat_recoverable, recovery)
                    if not_recovered.amount:
                        note += _deduction_words(vat_recoverable, recovery)
                else:
                    status = "DDP — taxes paid by seller"
                    notes.append(
                        "DDP: duty and import VAT are paid by the seller (importer of record)"
                    )
                    gross = paid
                    recovered = not_recovered = zero
                net = gross - recovered
        results.append(
            LandedCostLine(
                part_key=line.offer.part_key,
                supplier=line.offer.supplier,
                hs_code=line.hs_code,
                origin_country=line.offer.origin_country,
                quantity_requested=line.quantity,
                quantity_ordered=qty,
                unit_price=Money(unit, line.offer.currency),
                goods=goods[i],
                freight=shares["freight"][i],
                insurance=shares["insurance"][i],
                brokerage=shares["brokerage"][i],
                inland_freight=shares["inland"][i],
                customs_value=cv,
                customs_value_basis=basis_label,
                duty=duty,
                duty_components=components,
                vat_base=vat_base,
                vat=vat,
                vat_recoverable=vat_recoverable,
                landed_cost_gross=gross,
                landed_cost_net=net,
                status=status,
                rule_source=rule_source,
                notes=tuple(notes),
                ship_from=ship_from,
                supply_rule=kind,
                supply_rule_note=note,
                reverse_charge_vat=reverse_charge,
                vat_recovered=recovered,
                vat_not_recovered=not_recovered,
                measures_to_confirm=to_confirm,
                measures_decided=measures_decided,
            )
        )

    def total(values: Iterable[Money | None]) -> Money:
        return sum((v for v in values if v is not None), zero)

    known_taxes = [r for r in results if r.status == "ok"]
    return ShipmentLandedCost(
        key=shipment.key,
        destination=shipment.destination,
        currency=plan_currency,
        lines=tuple(results),
        goods=total(r.goods.money for r in results),
        freight=total(r.freight.money for r in results),
        insurance=total(r.insurance.money for r in results),
        brokerage=total(r.brokerage.money for r in results),
        inland_freight=total(r.inland_freight.money for r in results),
        customs_value=total(r.customs_value for r in results),
        duty=total(r.duty for r in known_taxes),
        vat=total(r.vat for r in known_taxes),
        # Cash to reclaim: reverse-charge VAT is deducted in the return that declares it.
        vat_recoverable=total(r.vat_recovered for r in known_taxes if r.supply_rule != "intra-EU"),
        landed_cost_gross=total(r.landed_cost_gross for r in results),
        landed_cost_net=total(r.landed_cost_net for r in results),
        complete=all(r.priced for r in results),
        warnings=tuple(warnings),
        valuation_source=valuation.source,
        unpriced_lines=sum(not r.priced for r in results),
        reverse_charge_vat=total(r.reverse_charge_vat for r in results),
        vat_not_recoverable=total(r.vat_not_recovered for r in known_taxes),
        exposure_to_confirm=total(r.exposure_to_confirm for r in results),
        measures_to_confirm=sum(len(r.measures_to_confirm) for r in results),
    )


# ---------------------------------------------------------------------------------------------
# Offer choice
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OfferEvaluation:
    """One offer priced as a stand-alone shipment of the needed quantity.

    Attributes:
        offer: The offer.
        landed: Its landed cost (freight = ``offer.freight_per_unit`` × quantity).
        ready_on: Order date + lead time (+ transit days given to :func:`choose_offer`).
        expired: True when ``valid_until`` is before the as-of date.
    """

    offer: Offer
    landed: ShipmentLandedCost
    ready_on: date
    expired: bool

    @property
    def net_cost(self) -> Money:
        """Net landed cost in the plan currency (incomplete when duty is unknown)."""
        return self.landed.landed_cost_net


@dataclass(frozen=True, slots=True)
class OfferChoice:
    """The chosen offer and the best alternative for comparison.

    Attributes:
        strategy: ``"cheapest"``, ``"fastest"`` or ``"pinned"``.
        chosen: The chosen offer's evaluation.
        alternative: Cheapest offer when the choice is not the cheapest, else the fastest other
            offer; ``None`` when there is none.
        evaluations: Every offer, cheapest first.
        warnings: Expired offers skipped, expired pinned offer used, incomplete duty ...
    """

    strategy: str
    chosen: OfferEvaluation
    alternative: OfferEvaluation | None
    evaluations: tuple[OfferEvaluation, ...]
    warnings: tuple[str, ...] = field(default=())


def choose_offer(
    offers: Sequence[Offer],
    *,
    quantity: int,
    hs_code: str,
    destination: str,
    tariffs: Sequence[TariffRule],
    fx: FxTable,
    plan_currency: str,
    as_of: date,
    strategy: Literal["cheapest", "fastest", "pinned"] = "cheapest",
    pinned_offer_id: str | None = None,
    transit_days: int = 0,
    brokerage: Money | None = None,
    vat_recovery_pct: Decimal = Decimal(100),
    confirmed_measures: frozenset[str] = frozenset(),
    not_applying: tuple[tuple[str, str], ...] = (),
) -> OfferChoice:
    """Choose among offers for one part.

    Cheapest = lowest net landed cost among valid offers (ties: earlier ready date); fastest =
    earliest ready date (ties: cheaper). An offer whose landed cost is incomplete (duty
    unknown into ``destination``) comes after every complete one for the cheapest choice. Expired offers are flagged and never chosen unless
    pinned, in which case the choice carries a warning.

    Args:
        offers: Offers for the same part.
        quantity: Units needed.
        hs_code: HS code of the part in ``destination``.
        destination: ISO alpha-2 importing country.
        tariffs: Tariff rules.
        fx: FX rates.
        plan_currency: Plan currency.
        as_of: Order / valuation date.
        strategy: How to choose.
        pinned_offer_id: ``Offer.ident`` to use when ``strategy="pinned"``.
        transit_days: Days added to every lead time for the ready date.
        brokerage: Brokerage per shipment (default zero).
        vat_recovery_pct: The buyer's VAT recovery, 0-100 (VAT it cannot recover is a cost).
        confirmed_measures: Conditional measures decided to apply (see :class:`ShipmentLine`).
        not_applying: Conditional measures decided not to apply, ``(name, reason)``.

    Returns:
        The choice, the alternative and every evaluation.

    Raises:
        LandedCostError: No offers, offers for different parts, no valid offer, unknown pin.
    """
    if not offers:
        raise LandedCostError("No offers to choose from.")
    if len({o.part_key for o in offers}) > 1:
        raise LandedCostError("All offers to compare must be for the same part.")
    if quantity < 0:
        raise LandedCostError(f"Quantity for {offers[0].part_key} cannot be negative ({quantity}).")
    evaluations = []
    for offer in offers:
        _validate_offer(offer, as_of)
        qty, _, _ = price_for_quantity(offer, quantity)
        shipment = Shipment(
            key=f"offer:{offer.ident}",
            destination=destination,
            lines=(
                ShipmentLine(
                    offer,
                    quantity,
                    hs_code,
                    confirmed_measures=confirmed_measures,
                    not_applying=not_applying,
                ),
            ),  # fmt: skip
            freight=Money(offer.freight_per_unit * qty, offer.currency),
            brokerage=brokerage or Money.zero(plan_currency),
        )
        landed = shipment_landed_cost(
            shipment, tariffs=tariffs, fx=fx, plan_currency=plan_currency, as_of=as_of,
            vat_recovery_pct=vat_recovery_pct,
        )  # fmt: skip
        ready = as_of + timedelta(days=offer.lead_time_days + transit_days)
        evaluations.append(OfferEvaluation(offer, landed, ready, offer.valid_until < as_of))

    # An offer whose duty is unknown never wins on price: its total leaves the duty out.
    def cost_key(e: OfferEvaluation):
        return (not e.landed.complete, e.net_cost.amount, e.ready_on, e.offer.ident)

    def speed_key(e: OfferEvaluation):
        return (e.ready_on, not e.landed.complete, e.net_cost.amount, e.offer.ident)

    evaluations.sort(key=cost_key)
    warnings = []
    for e in evaluations:
        if e.expired and not (strategy == "pinned" and e.offer.ident == pinned_offer_id):
            warnings.append(f"Offer {e.offer.ident} expired on {e.offer.valid_until}; not used.")
    valid = [e for e in evaluations if not e.expired]
    if strategy == "pinned":
        pinned = [e for e in evaluations if e.offer.ident == pinned_offer_id]
        if not pinned:
            raise LandedCostError(f"Pinned offer {pinned_offer_id!r} is not among the offers.")
        chosen = pinned[0]
        if chosen.expired:
            warnings.append(
                f"Pinned offer {chosen.offer.ident} expired on {chosen.offer.valid_until}; "
                "used because it is pinned — ask the supplier to re-quote."
            )
    else:
        if not valid:
            raise LandedCostError(
                f"No valid offer for {offers[0].part_key}: every offer expired before {as_of}."
            )
        chosen = min(valid, key=cost_key if strategy == "cheapest" else speed_key)
    others = [e for e in valid if e is not chosen]
    alternative = None
    if others:
        cheapest_other = min(others, key=cost_key)
        fastest_other = min(others, key=speed_key)
        alternative = fastest_other if strategy == "cheapest" else cheapest_other
    if not chosen.landed.complete:
        warnings.append("Duty unknown for the chosen offer: its landed cost is incomplete.")
    return OfferChoice(strategy, chosen, alternative, tuple(evaluations), tuple(warnings))


# ---------------------------------------------------------------------------------------------
# Totals per site and per plan
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LandedTotals:
    """Landed cost of a set of shipments and local (service) purchases, in one currency.

    Attributes:
        net: Landed cost net of recoverable VAT (what the buyer bears).
        gross: Landed cost including all VAT paid.
        vat_recoverable: VAT paid that a VAT-registered buyer deducts.
        reverse_charge_vat: VAT self-accounted on intra-EU acquisitions (deducted: net 0).
        unpriced_lines: Lines whose duty or VAT is unknown (not in the totals).
        complete: True when nothing is unpriced.
        vat_not_recoverable: VAT the buyer cannot recover (a cost, inside ``net``).
        exposure_to_confirm: What the unconfirmed conditional measures would add if they apply.
        measures_to_confirm: How many such measures (one per line and measure).
    """

    net: Money
    gross: Money
    vat_recoverable: Money
    reverse_charge_vat: Money
    unpriced_lines: int
    complete: bool
    vat_not_recoverable: Money
    exposure_to_confirm: Money
    measures_to_confirm: int


def landed_totals(
    shipments: Iterable[ShipmentLandedCost],
    currency: str,
    *,
    local: Iterable[Money] = (),
    unpriced_lines: int = 0,
) -> LandedTotals:
    """Sum shipments' landed cost with locally bought amounts (services carry no import).

    Args:
        shipments: Landed shipments, all in ``currency``.
        currency: The plan currency.
        local: Amounts bought locally (no duty, no import VAT), in ``currency``.
        unpriced_lines: Lines that could not be landed at all (no offer, no shipment result),
            added to the shipments' own unpriced lines.

    Returns:
        The totals; ``complete`` only when no line is unpriced.
    """
    zero = Money.zero(currency)
    net = gross = recoverable = reverse = kept = exposure = zero
    unpriced = unpriced_lines
    to_confirm = 0
    for s in shipments:
        net, gross = net + s.landed_cost_net, gross + s.landed_cost_gross
        recoverable = recoverable + s.vat_recoverable
        reverse = reverse + (s.reverse_charge_vat or zero)
        kept = kept + (s.vat_not_recoverable or zero)
        exposure = exposure + (s.exposure_to_confirm or zero)
        to_confirm += s.measures_to_confirm
        unpriced += s.unpriced_lines
    for amount in local:
        net, gross = net + amount, gross + amount
    return LandedTotals(
        net, gross, recoverable, reverse, unpriced, unpriced == 0, kept, exposure, to_confirm
    )


def plan_landed_totals(sites: Iterable[LandedTotals], currency: str) -> LandedTotals:
    """The plan's landed cost: the sum of its sites' (each site landed into its own country)."""
    zero = Money.zero(currency)
    net = gross = recoverable = reverse = kept = exposure = zero
    unpriced = to_confirm = 0
    for t in sites:
        net, gross = net + t.net, gross + t.gross
        recoverable = recoverable + t.vat_recoverable
        reverse = reverse + t.reverse_charge_vat
        kept = kept + t.vat_not_recoverable
        exposure = exposure + t.exposure_to_confirm
        to_confirm += t.measures_to_confirm
        unpriced += t.unpriced_lines
    return LandedTotals(
        net, gross, recoverable, reverse, unpriced, unpriced == 0, kept, exposure, to_confirm
    )
