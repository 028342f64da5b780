"""A workload's cost-per-request target beside the chosen option's cost per request.

The guide asks for "a cost-per-request target, not just a hardware budget", measured "by
cost per answered request at your latency target". The cost is the TCO's cost per request of
the placement the plan chose (sizing sizes every workload at its latency target, so the TCO
prices a fleet that meets it), read the same way as the checklist reads it
(:func:`planner.sharing.checklist.chosen_tco_option`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from planner.models import Plan, Workload
from planner.sharing.checklist import chosen_tco_option


@dataclass(frozen=True, slots=True)
class CostTargetComparison:
    """The target, the cost it is compared with, and whether it is met.

    Attributes:
        target_usd: The workload's target, or None when not set.
        cost_usd: The chosen option's cost per request, or None when there is none.
        source: Which option the cost is from, or why there is no cost.
        stale: The TCO run predates the plan's latest changes.
        met: True/False when both are known, else None.
    """

    target_usd: Decimal | None
    cost_usd: float | None
    source: str
    stale: bool = False

    @property
    def met(self) -> bool | None:
        if self.target_usd is None or self.cost_usd is None:
            return None
        return self.cost_usd <= float(self.target_usd)

    @property
    def over_pct(self) -> float | None:
        if self.met is not False:
            return None
        return (self.cost_usd / float(self.target_usd) - 1) * 100  # type: ignore[operator]


def cost_target_compare(*, plan: Plan, workload: Workload) -> CostTargetComparison:
    """Compare ``workload``'s target with the plan's chosen option (a TCO run must exist)."""
    from planner.sharing.checklist import tco_amount_usd
    from planner.sharing.snapshot import plan_tco_and_placement

    tco, placement = plan_tco_and_placement(plan)
    option, how = chosen_tco_option({"tco": tco, "placement": placement})
    cost = None
    if option is not None and option.get("cost_per_request_usd"):
        cost = tco_amount_usd(option["cost_per_request_usd"], tco)  # targets are USD
    elif option is not None:
        how = f"the TCO gives {option['label']} no cost per request (no request volume)"
    return CostTargetComparison(
        target_usd=workload.cost_per_request_target_usd,
        cost_usd=cost,
        source=how,
        stale=bool(tco.get("stale")),
    )
