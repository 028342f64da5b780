"""Reads for sourcing. Tenant rows (suppliers, offers) are always read through the
organisation; plan rows through a plan the caller already fetched for its organisation.
Reference rows (tariffs, valuation, FX) are loaded into the engine's frozen dataclasses."""

from __future__ import annotations

from datetime import date

from django.apps import apps
from django.db.models import Max, Prefetch, Q, QuerySet

from planner.engine import landed_cost as lc
from planner.models import Organisation, Plan
from sourcing.models import (
    BomLine,
    CustomsValuation,
    FxRate,
    Offer,
    PlanEvent,
    PurchaseOrder,
    PurchaseOrderLine,
    SourcingFlag,
    Supplier,
    TariffMeasure,
    TariffRule,
)

# ---------------------------------------------------------------------------------------------
# Suppliers and offers (tenant data)
# ---------------------------------------------------------------------------------------------


def supplier_list(*, organisation: Organisation) -> QuerySet[Supplier]:
    return Supplier.objects.filter(organisation=organisation)


def offer_list(*, organisation: Organisation) -> QuerySet[Offer]:
    """Every offer of the organisation's suppliers, with what it is for and its breaks."""
    return (
        Offer.objects.filter(supplier__organisation=organisation)
        .select_related("supplier", "part", "server", "accelerator")
        .prefetch_related("price_breaks")
    )


def offer_get(*, organisation: Organisation, offer_id: int) -> Offer:
    """One offer of the organisation; raises Offer.DoesNotExist for any other."""
    return offer_list(organisation=organisation).get(pk=offer_id)


def offers_for_line(offers: list[Offer], line: BomLine) -> list[Offer]:
    """The offers (already loaded for the organisation) that are for the line's item."""
    if line.server_id:
        return [o for o in offers if o.server_id == line.server_id]
    if line.part_id:
        return [o for o in offers if o.part_id == line.part_id]
    if line.accelerator_id:
        return [o for o in offers if o.accelerator_id == line.accelerator_id]
    if line.service:
        return [o for o in offers if o.service == line.service]
    return []


def offer_to_engine(offer: Offer, *, part_key: str) -> lc.Offer:
    """An offer row as the engine's :class:`~planner.engine.landed_cost.Offer`."""
    return lc.Offer(
        supplier=offer.supplier.name,
        part_key=part_key,
        unit_price=offer.unit_price,
        currency=offer.currency,
        lead_time_days=offer.lead_time_days,
        quoted_on=offer.quoted_on,
        valid_until=offer.valid_until,
        origin_country=offer.origin_country,
        incoterm=offer.incoterm,
        price_breaks=tuple(
            lc.PriceBreak(b.min_qty, b.unit_price) for b in offer.price_breaks.all()
        ),
        minimum_order_qty=offer.minimum_order_qty,
        freight_per_unit=offer.freight_per_unit,
        offer_id=str(offer.pk),
        ship_from=offer.ship_from_country or offer.supplier.country,
    )


# ---------------------------------------------------------------------------------------------
# Plan rows
# ---------------------------------------------------------------------------------------------


def bom_line_list(*, plan: Plan) -> QuerySet[BomLine]:
    return BomLine.objects.filter(plan=plan).select_related(
        "site", "part", "server", "accelerator", "pinned_offer"
    )


def bom_line_get(*, plan: Plan, line_id: int) -> BomLine:
    """One line of the plan's BOM; raises BomLine.DoesNotExist for any other."""
    return bom_line_list(plan=plan).get(pk=line_id)


def purchase_order_list(*, plan: Plan) -> QuerySet[PurchaseOrder]:
    lines = PurchaseOrderLine.objects.select_related("offer", "offer__supplier", "bom_line")
    return (
        PurchaseOrder.objects.filter(plan=plan)
        .select_related("supplier")
        .prefetch_related(
            Prefetch("lines", queryset=lines),
            Prefetch("lines__offer__price_breaks"),
        )
    )


def purchase_order_get(*, plan: Plan, order_id: int) -> PurchaseOrder:
    """One purchase order of the plan; raises PurchaseOrder.DoesNotExist for any other."""
    return purchase_order_list(plan=plan).get(pk=order_id)


def plan_event_list(*, plan: Plan) -> QuerySet[PlanEvent]:
    return PlanEvent.objects.filter(plan=plan).select_related("user")


def open_flag_list(*, plan: Plan) -> QuerySet[SourcingFlag]:
    return SourcingFlag.objects.filter(plan=plan, resolved_at__isnull=True)


def plans_with_sourcing() -> QuerySet[Plan]:
    """Plans that have a BOM or purchase orders (what the daily check looks at)."""
    return Plan.objects.filter(
        Q(bom_lines__isnull=False) | Q(purchase_orders__isnull=False)
    ).distinct()


def facility_power_ready_date(*, plan: Plan) -> date | None:
    """The latest power-ready date of the plan's sites, when the facility app is installed.

    Read defensively: ``planner.facility`` may not be installed, or its Site may lack dates.
    """
    if not apps.is_installed("planner.facility"):
        return None
    config = next(c for c in apps.get_app_configs() if c.name == "planner.facility")
    try:
        site_model = config.get_model("Site")
    except LookupError:
        return None
    try:
        return site_model.objects.filter(plan=plan).aggregate(d=Max("power_ready_date"))["d"]
    except Exception:  # the helper's model may differ; the override field still works
        return None


# ---------------------------------------------------------------------------------------------
# Reference data as engine dataclasses
# ---------------------------------------------------------------------------------------------


def _measure(m: TariffMeasure) -> lc.ExtraMeasure:
    return lc.ExtraMeasure(
        name=m.name,
        origin_countries=tuple(
            c.strip().upper() for c in m.origin_countries.split(",") if c.strip()
        ),
        pct=m.pct,
        start=m.start,
        end=m.end,
        stacks=m.stacks,
        not_stacked_on=tuple(n.strip() for n in m.not_stacked_on.split(";") if n.strip()),
        condition=m.condition,
        source=m.source,
        coverage_confirmed=m.coverage_confirmed,
    )


def tariff_rules(*, destination: str | None = None) -> tuple[lc.TariffRule, ...]:
    """Tariff rules (optionally for one destination) as engine rules with their measures."""
    rows = TariffRule.objects.prefetch_related("measures")
    if destination:
        rows = rows.filter(destination=lc.normalise_country(destination))
    return tuple(
        lc.TariffRule(
            hs_prefix=r.hs_prefix,
            destination=r.destination,
            duty_pct=r.duty_pct,
            vat_pct=r.vat_pct,
            vat_recoverable=r.vat_recoverable,
            extra_measures=tuple(_measure(m) for m in r.measures.all()),
            valid_from=r.valid_from,
            valid_to=r.valid_to,
            surcharge_on_duty_pct=r.surcharge_on_duty_pct,
            description=r.description,
            source=r.source,
        )
        for r in rows
    )


def customs_valuation_rules() -> dict[str, lc.ValuationRule]:
    """Customs value basis per destination: the stored rows over the engine's defaults."""
    rules = dict(lc.CUSTOMS_VALUE_BASIS)
    for row in CustomsValuation.objects.all():
        rules[row.destination] = lc.ValuationRule(
            row.basis,
            landing_charge_pct=row.landing_charge_pct,
            vat_base_includes_inland_freight=row.vat_base_includes_inland_freight,
            source=row.source,
        )
    return rules


def fx_table() -> lc.FxTable:
    """Every stored FX rate."""
    return lc.FxTable(
        tuple(
            lc.FxRate(r.from_currency, r.to_currency, r.rate, r.as_of, r.source)
            for r in FxRate.objects.all()
        )
    )


def fx_rate_list() -> QuerySet[FxRate]:
    return FxRate.objects.all()


def tariff_rule_list() -> QuerySet[TariffRule]:
    return TariffRule.objects.prefetch_related("measures")


# ---------------------------------------------------------------------------------------------
# Currencies the planner can convert
# ---------------------------------------------------------------------------------------------

# The catalog's list prices and the cloud price lists are in US dollars: a plan in USD needs
# no exchange rate for them, so USD is always convertible.
BASE_CURRENCY = "USD"


def convertible_currencies() -> frozenset[str]:
    """ISO codes a plan may be priced in: the base currency and every currency with a stored
    FX rate (either side of the pair), among the codes the landed-cost engine knows."""
    stored = set(FxRate.objects.values_list("from_currency", flat=True))
    stored |= set(FxRate.objects.values_list("to_currency", flat=True))
    return frozenset(c for c in stored | {BASE_CURRENCY} if c in lc.MINOR_UNITS)


def currency_problem(code: str) -> str:
    """Why ``code`` cannot be a plan's currency, or "" when it can (one sentence)."""
    if code not in lc.MINOR_UNITS:
        return f"Unknown currency {code!r}: use an ISO 4217 code such as EUR, USD or GBP."
    if code not in convertible_currencies():
        return (
            f"No exchange rate is stored for {code}: add one on the FX rates page, or use "
            f"{BASE_CURRENCY} or a currency that has a rate."
        )
    return ""


def missing_fx_rates(*, plan: Plan, organisation: Organisation) -> list[str]:
    """The exchange rates the plan's prices need and the FX table lacks, one phrase each.

    The plan's BOM lines are priced from their offers in the plan currency on the valuation
    date (the order date, else today); purchase orders' charges in their own currency on
    theirs. Each currency pair without a rate dated on or before that day is listed once,
    e.g. ``"USD → JPY on or before 2026-07-01"``; an unknown plan currency is one phrase too.
    """
    from sourcing import services  # services import selectors

    if plan.currency not in lc.MINOR_UNITS:
        return [f"plan currency {plan.currency!r} is not an ISO 4217 code the planner knows"]
    settings = services.sourcing_settings_get(plan=plan)
    as_of = services.valuation_date(settings)
    offers = list(offer_list(organisation=organisation))
    needed: set[tuple[str, date]] = set()
    for line in bom_line_list(plan=plan):
        if line.quantity:
            needed |= {(o.currency, as_of) for o in offers_for_line(offers, line)}
    for order in PurchaseOrder.objects.filter(plan=plan):
        needed.add((order.charges_currency, order.ordered_actual or as_of))
    fx = fx_table()
    missing = []
    for currency, on in sorted(needed):
        try:
            fx.rate(currency, plan.currency, on)
        except lc.LandedCostError:
            missing.append(f"{currency} → {plan.currency} on or before {on:%Y-%m-%d}")
    return missing
