"""Number filters: ``quantity``, the way every page writes a figure with its unit, and fast
``floatformat`` / ``intcomma`` equivalents for long tables.

``{{ x|quantity:"req/s" }}`` → ``31.1 req/s``; ``{{ n|quantity:"server" }}`` → ``1 server``;
``{{ days|quantity:"d" }}`` → ``90 d``; ``{{ b|quantity:"#" }}`` → ``61`` (a whole count). The
rules (grouping, decimals by magnitude, plurals, a space before the unit) are
:func:`planner.engine.shown.quantity`, which the engine's own sentences use too.

The fast filters:

Django's ``floatformat`` goes through the localisation machinery for every cell; the sizing
table shows a hundred rows of five figures on every htmx recompute, where that was a tenth of
the request's CPU. These give the identical output for plain numbers in our English locales
(ROUND_HALF_UP, "." as the decimal mark, "," grouping), which a test checks against Django's.
"""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django import template
from django.contrib.humanize.templatetags.humanize import intcomma
from django.template.defaultfilters import floatformat

from planner.engine import shown

register = template.Library()


@register.filter
def quantity(value, unit: str = "") -> str:
    """``value`` with ``unit`` as people write it (see :func:`planner.engine.shown.quantity`)."""
    return shown.quantity(value, unit)


def _field(row, name: str):
    return row.get(name) if isinstance(row, dict) else getattr(row, name, None)


@register.filter
def check_figure(row, which: str = "value") -> str:
    """A facility check's ``value`` or ``limit`` with its unit: ``{{ c|check_figure }}`` →
    ``1 server``, ``{{ c|check_figure:"limit" }}`` → ``35.5 kW`` (:func:`shown.measure`).

    A row from before the figures were stored shown (an older snapshot) has the figure as text
    ("1.0", "1,234", "never") and its unit beside it: the figure is read back and measured.
    """
    if written := _field(row, f"{which}_shown"):
        return written
    text = _field(row, which)
    if text in (None, "", "—"):
        return "—"
    try:
        figure = float(str(text).replace(",", ""))
    except ValueError:
        return str(text)  # "never", "no limit": words, without a unit
    return shown.measure(figure, _field(row, "unit") or "", _field(row, "status") or "")


def _rounded(value, digits: int) -> Decimal | None:
    try:
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        _, digits_of, exponent = number.as_tuple()
        if not number.is_finite() or len(digits_of) + abs(exponent) > 200:
            return None  # floatformat returns such a value as it is: let it answer
        rounded = number.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    except (InvalidOperation, TypeError, ValueError):
        return None
    return abs(rounded) if rounded == 0 else rounded  # no "-0", as floatformat


@register.filter
def fixed(value, digits: int = 0) -> str:
    """``value|floatformat:digits`` (digits ≥ 0): e.g. 12.345 → "12.3" for 1."""
    rounded = _rounded(value, int(digits))
    if rounded is None or not rounded.is_finite():
        return floatformat(value, digits)  # text, None, infinity: Django's own answer
    return f"{rounded:f}"


@register.filter
def grouped(value, digits: int = 0) -> str:
    """``value|floatformat:digits|intcomma``: e.g. 12345.6 → "12,346" for 0."""
    rounded = _rounded(value, int(digits))
    if rounded is None or not rounded.is_finite():
        return intcomma(floatformat(value, digits))
    return f"{rounded:,f}"
