"""The errors the engine raises for input it cannot compute with.

Every engine entry point checks its inputs and raises a subclass of
:class:`EngineInputError` with one sentence saying what is wrong and why; callers (views,
services, the API) show that sentence next to the section instead of failing. Anything else
the engine raises is a bug.
"""

from __future__ import annotations

__all__ = ["CatalogGapError", "EngineInputError"]


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
