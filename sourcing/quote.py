"""The consultancy's quote of a plan: sell prices from the landed cost, services and fees.

Reads the plan's quote settings and fees (plan rows: the caller fetched the plan for its
organisation), prices the snapshot's BOM lines through :mod:`planner.engine.quote`, and
returns the JSON-safe ``sell`` part of a revision's snapshot. Buy prices stay in the
snapshot's ``bom`` (shown on the internal cost sheet only); the client's quote and share page
read ``sell``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction

from planner.engine import quote as quote_engine
from planner.engine.errors import EngineInputError
from planner.models import Plan
from sourcing.models import QuoteFee, QuoteSettings  # noqa: F401 - QuoteFee for callers


def quote_settings_get(*, plan: Plan) -> QuoteSettings:
    """The plan's quote settings (created on first use with the defaults, and the validity the
    organisation gives new quotes)."""
    settings, created = QuoteSettings.objects.get_or_create(
        plan=plan, defaults={"validity_days": plan.organisation.quote_validity_days}
    )
    if created:  # the stored values (Decimal("0.00"), not the default 0): one snapshot text
        settings.refresh_from_db()
    return settings


def quote_fee_list(*, plan: Plan):
    return QuoteFee.objects.filter(plan=plan)


def quote_fee_get(*, plan: Plan, fee_id: int) -> QuoteFee:
    """One fee of the plan; raises QuoteFee.DoesNotExist for any other."""
    return QuoteFee.objects.get(plan=plan, pk=fee_id)


@transaction.atomic
def quote_fee_delete(*, fee: QuoteFee) -> None:
    fee.delete()


def markups_of(settings: QuoteSettings) -> quote_engine.Markups:
    def pairs(data: dict) -> tuple[tuple[str, Decimal], ...]:
        return tuple(sorted((str(k), Decimal(str(v))) for k, v in (data or {}).items()))

    return quote_engine.Markups(
        global_pct=settings.markup_pct,
        by_category=pairs(settings.category_markups),
        by_line=pairs(settings.line_markups),
    )


def _amount(money: dict | None) -> Decimal | None:
    return Decimal(money["amount"]) if money else None


def commercial_terms(
    settings: QuoteSettings, total: Decimal | None, currency: str
) -> dict[str, Any]:
    """The quote's one set of commercial terms, JSON-safe: every page of the quote prints
    these (payment milestones with their amounts of ``total`` when it is known, delivery,
    warranty, validity).

    Raises:
        QuoteError: Stored milestones that are not a schedule.
    """
    milestones = settings.milestones()
    schedule = quote_engine.payment_schedule(milestones, total or Decimal(0), currency)
    return {
        "payment": [
            {
                "pct": f"{d.pct.normalize():f}",
                "when": d.when,
                "amount": None if total is None else str(d.amount),
            }
            for d in schedule
        ],
        "payment_due_days": settings.payment_due_days,
        "delivery": settings.delivery_terms,
        "warranty": settings.warranty_terms,
        "validity_days": settings.validity_days,
    }


def quote_sell(*, plan: Plan, bom: dict[str, Any]) -> dict[str, Any]:
    """The sell side of the quote from a snapshot's ``bom`` section (JSON-safe, exact)."""
    settings = quote_settings_get(plan=plan)
    currency = plan.currency
    markups = markups_of(settings)
    lines = []
    if bom.get("available"):
        for row in bom.get("lines", []):
            priced = bool(row.get("priced", row.get("landed_net") is not None))
            quantity = row.get("quantity_ordered") or row["quantity"]
            cost = _amount(row.get("landed_net")) if priced else None
            vat_kept = (_amount(row.get("vat_not_recoverable")) or Decimal(0)) if priced else 0
            lines.append(
                quote_engine.CostLine(
                    key=row.get("part_key") or row["description"], category=row["category"],
                    description=row["description"], quantity=quantity, cost=cost,
                    vat_not_recoverable=Decimal(vat_kept),
                )
            )  # fmt: skip
    try:
        sold = [quote_engine.sell_line(x, markups, currency) for x in lines]
        fees = [
            quote_engine.Fee(f.kind, f.description, f.quantity, f.unit, f.unit_price)
            for f in quote_fee_list(plan=plan)
        ]
        totals = quote_engine.quote_totals(sold, fees, currency)
        # amounts per milestone only of a complete total (a partial one would mislead)
        terms = commercial_terms(settings, totals.total_sell if totals.complete else None, currency)
    except EngineInputError as exc:  # e.g. the plan currency is unknown
        return {"available": False, "reason": str(exc)}
    return {
        "available": True,
        "currency": currency,
        "markup_pct": str(settings.markup_pct),
        "validity_days": settings.validity_days,
        "commercial_terms": terms,
        "lines": [
            {
                "key": x.key,
                "category": x.category,
                "description": x.description,
                "quantity": x.quantity,
                "markup_pct": str(x.markup_pct),
                "markup_source": x.markup_source,
                "cost": None if x.cost is None else str(x.cost),
                "unit_sell": None if x.unit_sell is None else str(x.unit_sell),
                "sell": None if x.sell is None else str(x.sell),
            }
            for x in sold
        ],  # fmt: skip
        "fees": [
            {
                "kind": f.kind,
                "description": f.description,
                "quantity": str(f.quantity),
                "unit": f.unit,
                "unit_price": str(f.unit_price),
                "amount": str(f.amount(currency)),
            }
            for f in fees
        ],  # fmt: skip
        "goods_sell": str(totals.goods_sell),
        "fees_total": str(totals.fees),
        "total_sell": str(totals.total_sell),
        "goods_cost": str(totals.goods_cost),
        "margin": str(totals.margin),
        "unpriced_lines": totals.unpriced_lines,
        "vat_not_recoverable": str(totals.vat_not_recoverable),
        "has_vat_cost": bool(totals.vat_not_recoverable),
        "vat_recovery_pct": str(plan.client.vat_recovery_pct),
        "vat_treatment": plan.client.vat_treatment,
        "total_to_client": str(totals.total_to_client),
    }
