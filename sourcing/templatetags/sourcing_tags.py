"""Display of money: rounded only here, with its currency and, for a converted amount, the
rate and date it used."""

from django import template

from planner.engine.landed_cost import ConvertedAmount, Money
from planner.money import format_money

register = template.Library()


@register.filter
def money(value, currency: str = "") -> str:
    """``Money``/``ConvertedAmount`` (or a Decimal with ``currency``) as ``"12,345.67 EUR"``
    (:func:`planner.money.format_money`: the currency's minor units, e.g. ``"1,235 JPY"``)."""
    if isinstance(value, Money | ConvertedAmount):
        return format_money(value.amount, value.currency)
    return format_money(value, currency)


@register.filter
def fx_note(value) -> str:
    """``"1 USD = 0.9200 EUR on 2026-03-02"`` for a converted amount, "" without conversion."""
    if not isinstance(value, ConvertedAmount) or value.source.currency == value.currency:
        return ""
    return (
        f"{format_money(value.source.amount, value.source.currency)} at 1 {value.source.currency} = "
        f"{value.rate:.4f} {value.currency} on {value.rate_date}"
    )
