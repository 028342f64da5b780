"""Display of money: rounded only here, with its currency and, for a converted amount, the
rate and date it used."""

from decimal import Decimal

from django import template

from planner.engine.landed_cost import ConvertedAmount, Money, round_money

register = template.Library()


@register.filter
def money(value, currency: str = "") -> str:
    """``Money``/``ConvertedAmount`` (or a Decimal with ``currency``) as ``"12,345.67 EUR"``."""
    if value is None or value == "":
        return "—"
    if isinstance(value, Money | ConvertedAmount):
        amount, currency = value.amount, value.currency
    else:
        amount = Decimal(value)
    if not currency:
        return f"{amount:,.2f}"
    return f"{round_money(amount, currency):,} {currency}"


@register.filter
def fx_note(value) -> str:
    """``"1 USD = 0.9200 EUR on 2026-03-02"`` for a converted amount, "" without conversion."""
    if not isinstance(value, ConvertedAmount) or value.source.currency == value.currency:
        return ""
    return (
        f"{value.source.amount:,.2f} {value.source.currency} at 1 {value.source.currency} = "
        f"{value.rate:.4f} {value.currency} on {value.rate_date}"
    )
