"""Where to run inference: the seed's decision table as a scored, explained comparison.

The seed guide (``shared/seed/000_4392533e8c6391dc.txt``, "Where to run inference")
compares public cloud, owned or colocated data centres, edge/on-device and hybrid by data
location, economics, latency, reliability and control. :func:`score_placement` turns that
table into numbers a consultant can defend:

* **residency** – a gate: an option with a location outside a workload's allowed countries
  or regions is *ineligible*, with the reason (it still gets scores, ranked last);
* **steadiness** – from the 24-hour traffic profile (mean ÷ peak and coefficient of
  variation): steady traffic favours owned capacity, bursty traffic favours the cloud, a
  steady base with bursts favours hybrid;
* **latency** – worst round trip from any user region to the option (given as an input; the
  network module computes it) against the network share of the latency budget;
* **cost** – cost per million tokens per option (given as an input; may be missing);
* **control** – how much control over hardware, data and change the plan requires.

Each criterion scores 0-5 with a one-sentence explanation; the total is the weighted mean of
the criteria that could be scored (weights adjustable). The mapping constants below are the
planner's own reading of the seed table, named so the UI can show and change them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from planner.engine import demand
from planner.engine.errors import EngineInputError
from planner.engine.network import haversine_km, rtt_ms

__all__ = [
    "RegionAssignment",
    "cloud_region_per_user_region",
    "BURSTY_MEAN_TO_PEAK",
    "CRITERIA",
    "DEFAULT_CONTROL_LEVEL",
    "DEFAULT_WEIGHTS",
    "EDGE_MAX_ACCELERATORS_PER_REPLICA",
    "EDGE_MAX_WEIGHTS_GB",
    "OPTION_KINDS",
    "SEED_DECISION_TABLE",
    "STEADY_MEAN_TO_PEAK",
    "CriterionScore",
    "Location",
    "OptionScore",
    "PlacementInputs",
    "PlacementOption",
    "PlacementResult",
    "ResidencyRule",
    "TrafficSteadiness",
    "edge_misfit",
    "score_placement",
    "traffic_steadiness",
]

OptionKind = Literal["public_cloud", "owned_dc", "colocation", "edge", "hybrid"]
OPTION_KINDS: tuple[str, ...] = ("public_cloud", "owned_dc", "colocation", "edge", "hybrid")
CRITERIA: tuple[str, ...] = ("residency", "steadiness", "latency", "cost", "control")

# Seed guide, "Where to run inference": (fits when, watch out for) per option.
SEED_DECISION_TABLE: dict[str, tuple[str, str]] = {
    "public_cloud": (
        "Demand is uncertain, you are validating a product, you need to start fast",
        "Continuous workloads can become the largest line in your bill",
    ),
    "owned_dc": (
        "Steady, high-volume traffic; data must stay in place; you want cost control",
        "Lead times for hardware, power and cooling",
    ),
    "colocation": (
        "Steady, high-volume traffic; data must stay in place; you want cost control",
        "Lead times for hardware, power and cooling",
    ),
    "edge": (
        "Response time is critical or connectivity is limited",
        "Smaller models, fleet management",
    ),
    "hybrid": (
        "Steady base load on owned hardware, bursts elsewhere",
        "Operational complexity across environments",
    ),
}

DEFAULT_WEIGHTS: dict[str, float] = {c: 1.0 for c in CRITERIA}  # planner default: equal weights

# Control each option gives over hardware, data and change, 0-5 (planner reading of the seed:
# owned/colocated for "cost control" and "data must stay in place").
DEFAULT_CONTROL_LEVEL: dict[str, int] = {
    "owned_dc": 5,
    "colocation": 4,
    "hybrid": 4,
    "edge": 3,
    "public_cloud": 2,
}

# Mean ÷ peak of the daily profile at which traffic counts as fully steady / fully bursty
# (planner assumption; a 24/7 service with a mild daily swing sits near 0.85).
STEADY_MEAN_TO_PEAK = 0.85
BURSTY_MEAN_TO_PEAK = 0.40
# Edge hardware (seed table: "smaller models"): edge servers carry one or two PCIe cards of at
# most 48 GB (L4 24 GB, L40S / RTX 6000 Ada 48 GB; NVIDIA-Certified edge systems), so the
# edge option is for models whose weights fit 48 GB and whose replica needs at most 2 cards.
EDGE_MAX_WEIGHTS_GB = 48.0
EDGE_MAX_ACCELERATORS_PER_REPLICA = 2
CONTROL_SHORTFALL_PENALTY = 2.0  # points lost per level of control missing (planner assumption)
MAX_SCORE = 5.0


@dataclass(frozen=True, slots=True)
class Location:
    """Where an option holds or processes data.

    Attributes:
        country: ISO 3166-1 alpha-2 code (``DE``, ``US``).
        region: Economic or legal region (``EU``, ``EEA``), optional.
    """

    country: str
    region: str = ""


@dataclass(frozen=True, slots=True)
class PlacementOption:
    """One candidate place to run the plan.

    Attributes:
        key: Stable identifier.
        kind: ``public_cloud``, ``owned_dc``, ``colocation``, ``edge`` or ``hybrid``.
        label: Display name ("AWS eu-central-1", "Frankfurt colo").
        locations: Every location the option would process data in (hybrid lists both).
        worst_rtt_ms: Worst round trip from any user region to the option, ms; ``None`` if
            not computed.
        cost_per_million_tokens_amount: Cost per million tokens in
            :attr:`PlacementInputs.cost_currency`; ``None`` if not known.
        control_level: Control the option gives, 0-5; ``None`` uses
            :data:`DEFAULT_CONTROL_LEVEL`.
        workload_locations: Workload name → the locations that process its data, for an
            option that runs each workload in its own places (a hybrid: each workload's base
            site and its burst region); a residency rule then checks its workload's
            locations only. Empty: every rule checks every location.
    """

    key: str
    kind: OptionKind
    label: str
    locations: tuple[Location, ...]
    worst_rtt_ms: float | None = None
    cost_per_million_tokens_amount: float | None = None
    control_level: int | None = None
    workload_locations: Mapping[str, tuple[Location, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in OPTION_KINDS:
            raise EngineInputError(f"unknown option kind {self.kind!r}")


@dataclass(frozen=True, slots=True)
class ResidencyRule:
    """Where one workload's data may be processed.

    A location satisfies the rule if its country is in ``allowed_countries`` or its region in
    ``allowed_regions`` (case-insensitive). A rule with both sets empty allows anywhere.

    Attributes:
        workload: Workload name.
        allowed_countries: ISO alpha-2 codes.
        allowed_regions: Region names (``EU``).
    """

    workload: str
    allowed_countries: frozenset[str] = frozenset()
    allowed_regions: frozenset[str] = frozenset()

    def allows(self, location: Location) -> bool:
        """Whether ``location`` satisfies this rule."""
        if not self.allowed_countries and not self.allowed_regions:
            return True
        countries = {c.upper() for c in self.allowed_countries}
        regions = {r.upper() for r in self.allowed_regions}
        return location.country.upper() in countries or (
            bool(location.region) and location.region.upper() in regions
        )


@dataclass(frozen=True, slots=True)
class PlacementInputs:
    """Everything the placement comparison needs.

    Attributes:
        options: Candidate options.
        daily_profile: 24 relative traffic values, hour 0-23 (any scale, e.g. requests/s).
        residency_rules: One rule per restricted workload.
        rtt_budget_ms: Share of the time-to-first-token target the network may take, ms.
        control_requirement: Control the plan needs, 0 (none) to 5 (full).
        weights: Criterion → weight; missing criteria take :data:`DEFAULT_WEIGHTS`.
        model_weights_gb: Weights of the plan's largest model at its precision, GB (1e9
            bytes), None when unknown; edge options need it within
            :data:`EDGE_MAX_WEIGHTS_GB`.
        accelerators_per_replica: The plan's widest replica (accelerators), None when
            unknown; edge options need it within :data:`EDGE_MAX_ACCELERATORS_PER_REPLICA`.
        cost_currency: The currency of the options' costs (the TCO run's), named in the cost
            reasons; required when any option has a cost.
    """

    options: tuple[PlacementOption, ...]
    daily_profile: tuple[float, ...]
    residency_rules: tuple[ResidencyRule, ...] = ()
    rtt_budget_ms: float = 200.0
    control_requirement: int = 3
    weights: Mapping[str, float] = field(default_factory=dict)
    model_weights_gb: float | None = None
    accelerators_per_replica: int | None = None
    cost_currency: str = ""


@dataclass(frozen=True, slots=True)
class TrafficSteadiness:
    """Shape of the daily profile.

    Attributes:
        mean_to_peak: Mean ÷ peak (1 = flat).
        coefficient_of_variation: Standard deviation ÷ mean (0 = flat).
        base_to_peak: Minimum ÷ peak, the share a steady base could cover.
        peak_hour: Hour of the peak, 0-23.
        steadiness: 0 (bursty) to 1 (steady), from mean ÷ peak between
            :data:`BURSTY_MEAN_TO_PEAK` and :data:`STEADY_MEAN_TO_PEAK`.
    """

    mean_to_peak: float
    coefficient_of_variation: float
    base_to_peak: float
    peak_hour: int
    steadiness: float


@dataclass(frozen=True, slots=True)
class CriterionScore:
    """Score of one option on one criterion.

    Attributes:
        criterion: One of :data:`CRITERIA`.
        score: 0-5, or ``None`` when the input is missing (left out of the total).
        weight: Weight used in the total.
        explanation: One sentence.
    """

    criterion: str
    score: float | None
    weight: float
    explanation: str


@dataclass(frozen=True, slots=True)
class OptionScore:
    """The comparison row of one option.

    Attributes:
        key: Option key.
        label: Option label.
        kind: Option kind.
        eligible: False when a residency rule is violated.
        ineligible_reasons: One sentence per violated rule.
        criteria: Scores per criterion, in :data:`CRITERIA` order.
        weighted_total: Weighted mean of the scored criteria, 0-5.
        missing: Criteria without a score.
        flags: Warnings (e.g. round trip alone exceeds the budget).
        fits_when: Seed table "fits when".
        watch_out: Seed table "watch out for".
        rank: 1 = best; ineligible options rank after every eligible one.
    """

    key: str
    label: str
    kind: str
    eligible: bool
    ineligible_reasons: tuple[str, ...]
    criteria: tuple[CriterionScore, ...]
    weighted_total: float
    missing: tuple[str, ...]
    flags: tuple[str, ...]
    fits_when: str
    watch_out: str
    rank: int

    def score(self, criterion: str) -> float | None:
        """Score on ``criterion``.

        Raises:
            KeyError: If the criterion is unknown.
        """
        for c in self.criteria:
            if c.criterion == criterion:
                return c.score
        raise KeyError(criterion)


@dataclass(frozen=True, slots=True)
class PlacementResult:
    """Ranked comparison.

    Attributes:
        options: Rows sorted by rank.
        steadiness: Traffic shape used.
        weights: Weights used.
    """

    options: tuple[OptionScore, ...]
    steadiness: TrafficSteadiness
    weights: Mapping[str, float]

    def by_key(self, key: str) -> OptionScore:
        """Row of option ``key``.

        Raises:
            KeyError: If there is no such option.
        """
        for o in self.options:
            if o.key == key:
                return o
        raise KeyError(key)

    @property
    def best(self) -> OptionScore | None:
        """Best eligible option, or ``None`` if none is eligible."""
        return next((o for o in self.options if o.eligible), None)


def traffic_steadiness(daily_profile: Sequence[float]) -> TrafficSteadiness:
    """Measure how steady a 24-hour traffic profile is.

    Args:
        daily_profile: 24 non-negative values (any unit).

    Returns:
        Mean ÷ peak, coefficient of variation, base ÷ peak, peak hour and a 0-1 steadiness.

    Raises:
        ValueError: If the profile does not have 24 values, has a negative value or is all zero.
    """
    p = np.asarray(daily_profile, dtype=float)
    if p.shape != (24,):
        raise EngineInputError(f"daily_profile needs 24 values, got {p.size}")
    if (p < 0).any() or p.max() <= 0:
        raise EngineInputError("daily_profile must be non-negative with a positive peak")
    peak, mean = float(p.max()), float(p.mean())
    mean_to_peak = demand.mean_to_peak(daily_profile)
    cv = float(p.std()) / mean  # coefficient of variation, population std
    steadiness = (mean_to_peak - BURSTY_MEAN_TO_PEAK) / (STEADY_MEAN_TO_PEAK - BURSTY_MEAN_TO_PEAK)
    return TrafficSteadiness(
        mean_to_peak=mean_to_peak,
        coefficient_of_variation=cv,
        base_to_peak=float(p.min()) / peak,
        peak_hour=int(p.argmax()),
        steadiness=float(np.clip(steadiness, 0.0, 1.0)),
    )


def _steadiness_score(kind: str, t: TrafficSteadiness) -> tuple[float, str]:
    s = t.steadiness
    shape = f"mean/peak {t.mean_to_peak:.2f}, CV {t.coefficient_of_variation:.2f}"
    if kind in ("owned_dc", "colocation"):
        return MAX_SCORE * s, (
            f"Owned capacity pays back on steady load ({shape}): "
            + ("the traffic is steady." if s >= 0.5 else "idle hours would be paid for.")
        )
    if kind == "public_cloud":
        return MAX_SCORE - 3.0 * s, (
            f"The cloud follows bursty or uncertain demand best ({shape}); "
            + ("steady load makes it the largest bill." if s >= 0.5 else "the traffic swings.")
        )
    if kind == "hybrid":
        return 2.0 + 3.0 * (1.0 - abs(s - 0.5) * 2.0), (
            f"Hybrid suits a steady base with bursts ({shape}); the base is "
            f"{t.base_to_peak:.0%} of peak."
        )
    return (
        3.0,
        f"Edge capacity is sized per site or device, so the daily shape ({shape}) is neutral.",
    )


def _latency_score(option: PlacementOption, budget_ms: float) -> tuple[float | None, str, str]:
    if option.worst_rtt_ms is None:
        return None, "No round-trip time was given for this option.", ""
    rtt = option.worst_rtt_ms
    score = MAX_SCORE * float(np.clip(1.0 - rtt / budget_ms, 0.0, 1.0))
    if rtt > budget_ms:
        flag = f"Worst round trip {rtt:.0f} ms alone exceeds the {budget_ms:.0f} ms network budget."
        return 0.0, flag, flag
    return (
        score,
        f"Worst round trip {rtt:.0f} ms uses {rtt / budget_ms:.0%} of the {budget_ms:.0f} ms "
        "network budget.",
        "",
    )


def _cost_score(
    option: PlacementOption, cheapest: float | None, currency: str
) -> tuple[float | None, str]:
    cost = option.cost_per_million_tokens_amount
    if cost is None or cheapest is None:
        return None, "No cost per million tokens was given for this option."
    if cost <= 0:
        return MAX_SCORE, f"{cost:.2f} {currency} per million tokens."
    return (
        MAX_SCORE * cheapest / cost,  # relative to the cheapest eligible option
        f"{cost:.2f} {currency} per million tokens against {cheapest:.2f} for the cheapest option.",
    )


def _control_score(option: PlacementOption, required: int) -> tuple[float, str]:
    level = (
        option.control_level
        if option.control_level is not None
        else DEFAULT_CONTROL_LEVEL[option.kind]
    )
    shortfall = max(0, required - level)
    score = max(0.0, MAX_SCORE - CONTROL_SHORTFALL_PENALTY * shortfall)
    if shortfall:
        return score, f"Gives control level {level} of the {required} the plan requires."
    return score, f"Gives control level {level}, meeting the required {required}."


def _residency(option: PlacementOption, rules: Sequence[ResidencyRule]) -> tuple[str, ...]:
    reasons = []
    for rule in rules:
        where = option.workload_locations.get(rule.workload, option.locations)
        bad = [loc for loc in where if not rule.allows(loc)]
        if bad:
            where = ", ".join(
                f"{loc.country}{'/' + loc.region if loc.region else ''}" for loc in bad
            )
            allowed = ", ".join(sorted(rule.allowed_countries | rule.allowed_regions))
            reasons.append(
                f"Workload '{rule.workload}' may only run in {allowed}, but {option.label} "
                f"processes data in {where}."
            )
    return tuple(reasons)


def edge_misfit(inputs: PlacementInputs) -> str | None:
    """Why the plan's models do not fit edge hardware, or None when they do (or are unknown)."""
    if inputs.model_weights_gb is not None and inputs.model_weights_gb > EDGE_MAX_WEIGHTS_GB:
        return (
            f"The largest model's weights ({inputs.model_weights_gb:,.0f} GB) do not fit edge "
            f"hardware (at most {EDGE_MAX_WEIGHTS_GB:g} GB per edge card)."
        )
    wide = inputs.accelerators_per_replica
    if wide is not None and wide > EDGE_MAX_ACCELERATORS_PER_REPLICA:
        return (
            f"A replica needs {wide} accelerators; an edge server holds at most "
            f"{EDGE_MAX_ACCELERATORS_PER_REPLICA}."
        )
    return None


def score_placement(inputs: PlacementInputs) -> PlacementResult:
    """Score every option on every criterion and rank them.

    Args:
        inputs: Options, traffic profile, residency rules, latency budget, control need and
            weights.

    Returns:
        A :class:`PlacementResult`, best eligible option first.

    Raises:
        ValueError: On a bad profile, a negative weight, a non-positive latency budget, or
            costs without their currency.
    """
    if inputs.rtt_budget_ms <= 0:
        raise EngineInputError("rtt_budget_ms must be positive")
    if not inputs.cost_currency and any(
        o.cost_per_million_tokens_amount is not None for o in inputs.options
    ):
        raise EngineInputError("options with a cost need cost_currency (the costs' currency)")
    weights = {**DEFAULT_WEIGHTS, **dict(inputs.weights)}
    if any(w < 0 for w in weights.values()) or set(weights) - set(CRITERIA):
        raise EngineInputError(f"weights must be non-negative and among {CRITERIA}")
    shape = traffic_steadiness(inputs.daily_profile)

    residency = {o.key: _residency(o, inputs.residency_rules) for o in inputs.options}
    misfit = edge_misfit(inputs)
    costs = [
        o.cost_per_million_tokens_amount
        for o in inputs.options
        if o.cost_per_million_tokens_amount is not None and not residency[o.key]
    ]
    cheapest = min(costs) if costs else None

    rows: list[OptionScore] = []
    for option in inputs.options:
        reasons = residency[option.key]
        fit_reasons = (misfit,) if misfit and option.kind == "edge" else ()
        scored: list[tuple[str, float | None, str]] = [
            (
                "residency",
                0.0 if reasons else MAX_SCORE,
                reasons[0]
                if reasons
                else (
                    "Every location satisfies the workloads' residency rules."
                    if inputs.residency_rules
                    else "No residency rules apply."
                ),
            ),
            ("steadiness", *_steadiness_score(option.kind, shape)),
        ]
        lat, lat_text, flag = _latency_score(option, inputs.rtt_budget_ms)
        scored.append(("latency", lat, lat_text))
        scored.append(("cost", *_cost_score(option, cheapest, inputs.cost_currency)))
        scored.append(("control", *_control_score(option, inputs.control_requirement)))

        criteria = tuple(CriterionScore(name, s, weights[name], text) for name, s, text in scored)
        counted = [(c.score, c.weight) for c in criteria if c.score is not None]
        total_w = sum(w for _, w in counted)
        total = sum(s * w for s, w in counted) / total_w if total_w else 0.0
        fits, watch = SEED_DECISION_TABLE[option.kind]
        rows.append(
            OptionScore(
                key=option.key,
                label=option.label,
                kind=option.kind,
                eligible=not reasons and not fit_reasons,
                ineligible_reasons=reasons + fit_reasons,
                criteria=criteria,
                weighted_total=total,
                missing=tuple(c.criterion for c in criteria if c.score is None),
                flags=(flag,) if flag else (),
                fits_when=fits,
                watch_out=watch,
                rank=0,
            )
        )
    rows.sort(key=lambda r: (not r.eligible, -r.weighted_total, r.key))
    ranked = tuple(replace(r, rank=i + 1) for i, r in enumerate(rows))
    return PlacementResult(options=ranked, steadiness=shape, weights=weights)


@dataclass(frozen=True, slots=True)
class RegionAssignment:
    """Where one user region's traffic is served in the cloud.

    Attributes:
        user_region: The users' region key.
        cloud_region: The cloud region serving them.
        rtt_ms: Round trip between the two, ms.
    """

    user_region: str
    cloud_region: str
    rtt_ms: float


def cloud_region_per_user_region(
    user_regions: Sequence[str],
    coordinates: Mapping[str, tuple[float, float]],
    allowed: Sequence[str],
) -> tuple[RegionAssignment, ...]:
    """Each user region is served from the allowed cloud region with the shortest round trip
    (great circle, light in fibre with the route factor: ``network.rtt_ms``); ties go to the
    earlier allowed region.

    Raises:
        EngineInputError: No allowed region, or a region without coordinates.
    """
    if not allowed:
        raise EngineInputError("No cloud region is allowed.")
    out = []
    for user in user_regions:
        if user not in coordinates:
            raise EngineInputError(f"No coordinates for user region {user!r}.")
        lat, lon = coordinates[user]
        best = min(
            allowed,
            key=lambda k: (rtt_ms(haversine_km(lat, lon, *coordinates[k])), allowed.index(k)),
        )
        out.append(RegionAssignment(user, best, rtt_ms(haversine_km(lat, lon, *coordinates[best]))))
    return tuple(out)
