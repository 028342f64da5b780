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

from planner.engine.landed_cost import LandedCostError, Money
from planner.models import Plan, Workload

# The snapshot imports this module: the one cycle of the two, which loads in either order as
# both import the other as a module and read its names only when called.
from planner.sharing import snapshot
from planner.sharing.checklist import chosen_tco_option, workload_cost_per_request
from sourcing import selectors as ss
from sourcing.services import sourcing_settings_get, valuation_date


@dataclass(frozen=True, slots=True)
class TargetInPlanCurrency:
    """A workload's target in its plan's currency.

    Attributes:
        amount: The target, or None when not set or not convertible.
        problem: Why a set target could not be converted ("" otherwise).
    """

    amount: Decimal | None
    problem: str = ""


def cost_target_in_plan_currency(workload: Workload) -> TargetInPlanCurrency:
    """``workload``'s target in its plan's currency.

    A target is stored with the currency it was entered in (the plan's at the time); one in
    another currency (the plan's currency changed since) is converted at the plan's dated
    rate, the rate the TCO uses (:func:`planner.facility.services.tco_fx`).
    """
    target = workload.cost_per_request_target
    if target is None:
        return TargetInPlanCurrency(None)
    plan = workload.plan
    stored = workload.cost_per_request_target_currency or plan.currency
    if stored == plan.currency:
        return TargetInPlanCurrency(target)
    on = valuation_date(sourcing_settings_get(plan=plan))
    try:
        converted = ss.fx_table().convert(Money(target, stored), plan.currency, on)
    except LandedCostError:
        return TargetInPlanCurrency(
            None,
            f"the target was entered in {stored} and there is no rate into {plan.currency} on "
            f"or before {on:%Y-%m-%d}: enter it again in {plan.currency}",
        )
    return TargetInPlanCurrency(converted.amount.quantize(Decimal("0.000001")))


@dataclass(frozen=True, slots=True)
class CostTargetComparison:
    """The target, the cost it is compared with, and whether it is met, in ``currency``.

    Attributes:
        target: The workload's target in the plan's currency, or None when not set.
        cost: The workload's own cost per request in the chosen option (plan currency): its
            share of the option's cost by accelerator-seconds over its requests; None when
            there is none.
        currency: The plan's currency (the TCO's results are in it).
        source: Which option the cost is from, or why there is no cost.
        stale: The TCO run predates the plan's latest changes.
        problem: Why a set target cannot be compared ("" otherwise).
        met: True/False when both are known, else None.
    """

    target: Decimal | None
    cost: float | None
    currency: str
    source: str
    stale: bool = False
    problem: str = ""

    @property
    def met(self) -> bool | None:
        if self.target is None or self.cost is None:
            return None
        return self.cost <= float(self.target)

    @property
    def over_pct(self) -> float | None:
        if self.met is not False:
            return None
        return (self.cost / float(self.target) - 1) * 100  # type: ignore[operator]


def cost_target_compare(*, plan: Plan, workload: Workload) -> CostTargetComparison:
    """Compare ``workload``'s target with the plan's chosen option (a TCO run must exist).

    Both are in the plan's currency: the TCO's results are converted into it when stored.
    """
    tco, placement = snapshot.plan_tco_and_placement(plan)
    option, how = chosen_tco_option({"tco": tco, "placement": placement})
    cost = workload_cost_per_request(option, workload.pk)  # this workload's own
    if option is not None and cost is None:
        how = (
            f"the TCO gives {option['label']} no cost per request for {workload.name} "
            "(no request volume)"
        )
    target = cost_target_in_plan_currency(workload)
    return CostTargetComparison(
        target=target.amount,
        cost=cost,
        currency=tco.get("currency") or plan.currency,
        source=how,
        stale=bool(tco.get("stale")),
        problem=target.problem,
    )
