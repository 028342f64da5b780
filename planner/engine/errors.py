"""The errors the engine raises for input it cannot compute with.

Every engine entry point checks its inputs and raises a subclass of
:class:`EngineInputError` with one sentence saying what is wrong and why; callers (views,
services, the API) show that sentence next to the section instead of failing. Anything else
the engine raises is a bug.
"""

from __future__ import annotations

import math

__all__ = ["CatalogGapError", "EngineInputError", "require_finite", "require_range"]


class EngineInputError(ValueError):
    """An input is missing, out of range or inconsistent; the message says which and why."""


class CatalogGapError(EngineInputError):
    """A figure the computation needs is not published in the catalog.

    Attributes:
        item: What lacks the figure (e.g. the accelerator's name).
        figure: Which figure is missing (e.g. "TDP").
    """

    def __init__(self, message: str, *, item: str = "", figure: str = "") -> None:
        super().__init__(message)
        self.item = item
        self.figure = figure


def require_finite(name: str, value: float) -> float:
    """``value`` as a float, or EngineInputError when it is not a finite number."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise EngineInputError(f"{name} must be a number, not {value!r}.") from None
    if not math.isfinite(number):
        raise EngineInputError(f"{name} must be a finite number, not {value!r}.")
    return number


def require_range(name: str, value: float, low: float, high: float, *, reason: str = "") -> float:
    """``value`` when ``low ≤ value ≤ high``, else EngineInputError naming the range and why."""
    number = require_finite(name, value)
    if not low <= number <= high:
        why = f" ({reason})" if reason else ""
        raise EngineInputError(f"{name} must be between {low:g} and {high:g}{why}, not {value!r}.")
    return number
