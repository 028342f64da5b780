"""Template filters of the client-review pages and PDFs (display formatting only)."""

from decimal import Decimal, InvalidOperation

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from planner import labels
from planner.money import NOT_PRICED
from planner.pdf.context import money_text

register = template.Library()


@register.filter
def money(value, currency: str = "") -> str:
    """An exact amount (Decimal, str or ``{"amount", "currency"}``) shown to cents."""
    if isinstance(value, dict):
        return money_text(value.get("amount"), value.get("currency", currency))
    if hasattr(value, "amount") and hasattr(value, "currency"):  # schema.Money
        return money_text(value.amount, value.currency or currency)
    try:
        return money_text(value, currency)
    except (InvalidOperation, ValueError, TypeError):
        return "—"


@register.filter
def money_or_unpriced(value, currency: str = "") -> str:
    """Like ``money``, but a missing amount is "not priced" (never 0.00 or a bare dash)."""
    if value is None or value == "":
        return NOT_PRICED
    return money(value, currency)


@register.simple_tag
def incomplete_total(unpriced: int) -> str:
    """``incomplete: 2 lines not priced`` — what a total says instead of a false sum."""
    return f"incomplete: {labels.count(int(unpriced), 'line')} not priced"


@register.simple_tag
def amount(value, currency: str = "USD", digits: int = 2) -> str:
    """A TCO figure in its (the plan's) currency with ``digits`` decimals, or an em dash."""
    if value in (None, ""):
        return "—"
    try:
        return f"{Decimal(str(value)):,.{int(digits)}f} {currency or 'USD'}"
    except (InvalidOperation, ValueError):
        return "—"


@register.filter
def usd(value, digits: int = 2) -> str:
    """A USD figure with ``digits`` decimals, or an em dash."""
    if value in (None, ""):
        return "—"
    try:
        return f"{Decimal(str(value)):,.{int(digits)}f} USD"
    except (InvalidOperation, ValueError):
        return "—"


@register.filter
def get(mapping, key):
    """``mapping[key]`` in a template (``None`` when absent)."""
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.filter
def pct(value, digits: int = 0) -> str:
    if value in (None, ""):
        return "—"
    return f"{float(value) * 100:.{int(digits)}f} %"


@register.filter
def replicas(value) -> str:
    """``1 replica``, ``3 replicas``."""
    return labels.count(int(value), "replica")


@register.filter
def servers(value) -> str:
    """``1 server``, ``2 servers``."""
    return labels.count(int(value), "server")


@register.filter
def pooled_into(servers) -> str:
    """``pooled into the deployment's 6 servers`` (``""`` without a deployment)."""
    return labels.pooled_into(servers)


@register.simple_tag
def replica_range(low, high) -> str:
    """``1 replica``, ``3–5 replicas``."""
    return labels.count_range(int(low), int(high), "replica")


@register.simple_tag
def svg_figure(chart) -> SafeString:
    """``<figure>`` of a report chart (planner.pdf.svg, drawn for the PDF at its own size) on
    the web page: a labelled region with a keyboard stop, in which the chart scrolls sideways
    on a phone at a width where its text stays readable (``static/css/sharing.css``)."""
    if not chart:
        return mark_safe("")
    return format_html(
        '<figure class="svg-chart" tabindex="0" role="region" aria-label="{} (chart; scrolls '
        'sideways on a narrow screen)"><div class="svg-chart-body">{}</div></figure>',
        chart.title,
        mark_safe(chart.svg),  # planner.pdf.svg escapes every label it draws (svg.esc)
    )
