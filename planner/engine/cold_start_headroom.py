"""Whether a plan's headroom covers the load's rise while a new replica starts (cold start):
one rule for the engine's autoscaling advice and the client's words (``planner.labels``)."""

from __future__ import annotations

import math


def headroom_absorbs(spike_headroom_pct: float, headroom_pct: float) -> bool:
    """Whether the capacity kept free at peak covers the load's rise while a replica starts."""
    return spike_headroom_pct <= headroom_pct


def headroom_needed_pct(spike_headroom_pct: float) -> int:
    """The whole-percent headroom that covers that rise (rounded up)."""
    return math.ceil(spike_headroom_pct)
