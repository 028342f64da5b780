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

from planner.computed import computed_across_requests
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


@dataclass(frozen=True, slots=True)
class _ChosenOptionCost:
    """What the comparison reads of the TCO run and the plan's chosen placement."""

    cost: float | None  # the workload's own cost per request in the chosen option
    source: str  # which option, or why there is none
    option_label: str | None  # None without a chosen option
    currency: str  # the run's ("" without a finished run)
    stale: bool


def _chosen_option_cost(plan: Plan, workload_id: int) -> _ChosenOptionCost:
    """Kept by the process across requests until anything is written (the snapshot's TCO
    section is the run's whole results, read and checked on every view of the sizing page)."""

    def build() -> _ChosenOptionCost:
        tco, placement = snapshot.plan_tco_and_placement(plan)
        option, how = chosen_tco_option({"tco": tco, "placement": placement})
        return _ChosenOptionCost(
            cost=workload_cost_per_request(option, workload_id),  # this workload's own
            source=how,
            option_label=None if option is None else option["label"],
            currency=tco.get("currency") or "",
            stale=bool(tco.get("stale")),
        )

    return computed_across_requests(("cost_target_option", plan.pk, workload_id), build)


def cost_target_compare(*, plan: Plan, workload: Workload) -> CostTargetComparison:
    """Compare ``workload``'s target with the plan's chosen option (a TCO run must exist).

    Both are in the plan's currency: the TCO's results are converted into it when stored.
    """
    chosen = _chosen_option_cost(plan, workload.pk)
    how = chosen.source
    if chosen.option_label is not None and chosen.cost is None:
        how = (
            f"the TCO gives {chosen.option_label} no cost per request for {workload.name} "
            "(no request volume)"
        )
    target = cost_target_in_plan_currency(workload)
    return CostTargetComparison(
        target=target.amount,
        cost=chosen.cost,
        currency=chosen.currency or plan.currency,
        source=how,
        stale=chosen.stale,
        problem=target.problem,
    )
