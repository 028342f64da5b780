"""Money and units as the plan and the site read them.

``from_usd`` turns a USD figure of the engines (a catalog price at cloud rates) into the plan's
currency with the page's :class:`~planner.engine.shown.ShownIn` (the TCO's dated rate), for the
number filters to format: ``{{ c.usd_per_hour|from_usd:usd_shown|grouped:0 }} {{ usd_shown.currency }}/h``.
"""

from django import template

from planner.engine.shown import ShownIn

register = template.Library()


@register.filter
def from_usd(value, shown: ShownIn | None):
    """``value`` (USD) × the rate of ``shown``; empty values and a missing rate pass as they are."""
    if value in (None, "") or not isinstance(shown, ShownIn):
        return value
    try:
        return float(value) * shown.rate
    except (TypeError, ValueError):
        return value
