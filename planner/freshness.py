"""Whether each stored result of a plan is still computed from the plan's current inputs.

A plan stores some results it derived from its inputs: the chosen configuration's replica
plan (``Workload.chosen_*``, hashed by :func:`chosen_inputs_hash`), the TCO run
(``TcoRun.input_hash``, :func:`tco_inputs_hash`) and the generated bill-of-materials lines
(``SourcingSettings.bom_inputs_hash``, :func:`bom_inputs_hash`). The landed cost and the
timeline are computed live, but from those stored BOM lines: they are as current as the BOM.
Facility checks and placement are computed live from the current inputs on every read.

Each ``*_freshness`` function compares the stored hash with the hash of today's inputs and
says so as a :class:`Freshness` (``current``, ``stale``, ``failed`` or ``missing``, with the
reason in plain words and the URL that recomputes it, a POST). :func:`plan_freshness` lists
all of them for the plan; publishing refuses while any is not current.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

from django.apps import apps
from django.urls import reverse

from planner import selectors as plan_selectors
from planner import sizing
from planner.computed import computed_across_requests
from planner.engine import bom as bom_engine
from planner.engine.errors import EngineInputError
from planner.engine.landed_cost import NOT_PRICED
from planner.facility import selectors as fsel
from planner.facility import services as fsvc
from planner.facility.models import TcoStatus
from planner.labels import count
from planner.models import Plan, Workload
from planner.money import format_money

# sourcing.services imports this module at its top: the one import cycle of these two, which
# works because neither reads the other's names before both have loaded (``from sourcing
# import services`` takes the module from sys.modules while it loads).
from sourcing import services as ssvc  # noqa: E402  (after the cycle's note)

CURRENT, STALE, FAILED, MISSING = "current", "stale", "failed", "missing"
STATES = (CURRENT, STALE, FAILED, MISSING)

# The result kinds a plan stores or derives from stored results, in the order they build on
# each other (recompute URLs use these names).
CHOSEN, TCO, BOM, LANDED_COST, TIMELINE = "chosen", "tco", "bom", "landed_cost", "timeline"
RECOMPUTABLE = (CHOSEN, TCO, BOM, LANDED_COST, TIMELINE)
# Results read from those and recomputed with them (their banners offer the TCO's or the
# BOM's recompute): placement ranks with the TCO run's costs, the quote and the purchase
# orders are the BOM lines priced or ordered.
PLACEMENT, QUOTE, ORDERS = "placement", "quote", "orders"


@dataclass(frozen=True)
class Freshness:
    """One stored result and whether the plan's current inputs still give it."""

    kind: str
    label: str
    state: str
    reason: str = ""
    recompute_url: str = ""
    key: str = ""  # distinguishes results of one kind (e.g. one per workload)

    @property
    def is_current(self) -> bool:
        return self.state == CURRENT

    @property
    def state_label(self) -> str:
        if self.kind == "option" and self.state == MISSING:
            return "not chosen"
        if self.kind == "facility_check":
            return "failing"
        if self.kind == "measure":
            return "to confirm"
        return {
            CURRENT: "current",
            STALE: "stale",
            FAILED: "failed",
            MISSING: "not computed",
        }[self.state]

    def as_item(self) -> dict[str, str]:
        """The open item a revision published with it stores (no URL: clients cannot act)."""
        return {"kind": self.kind, "label": self.label, "state": self.state, "reason": self.reason}


def _sha256(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _recompute_url(plan: Plan, kind: str) -> str:
    return reverse("plan_recompute", args=[plan.pk, kind])


# --- Input hashes -------------------------------------------------------------------------------


def chosen_inputs_hash(workload: Workload) -> str:
    """The hash of the sizing inputs the chosen replica plan is computed from."""

    return sizing.workload_inputs_hash(workload)


def tco_inputs_hash(plan: Plan) -> str:
    """The hash of the TCO engine inputs of the plan (raises ``TcoNotReady``)."""

    return fsvc.tco_inputs_build(plan=plan).input_hash


def bom_hash_of(inputs, fabric, spares) -> str:
    """The hash of the BOM engine's inputs (deployments, fabric, spares policy)."""
    return _sha256(
        {
            "deployments": [asdict(d) for d in inputs],
            "fabric": asdict(fabric),
            "spares": asdict(spares),
        }
    )


def bom_inputs_hash(plan: Plan) -> str:
    """The hash of what the plan's BOM would be generated from now (raises ``SourcingError``)."""

    settings = ssvc.sourcing_settings_get(plan=plan)
    return bom_hash_of(
        ssvc._deployment_inputs(plan, settings),
        ssvc._fabric(settings),
        bom_engine.SparesPolicy(mode=settings.spares_mode, percent=settings.spares_pct),
    )


def _bom_inputs_hash_now(plan: Plan) -> tuple[str | None, str]:
    """``bom_inputs_hash(plan)``, or None and why it cannot be computed; kept by the process
    across requests until anything is written (``computed_across_requests``)."""

    def build() -> tuple[str | None, str]:
        try:
            return bom_inputs_hash(plan), ""
        except (ssvc.SourcingError, EngineInputError) as exc:
            return None, str(exc)

    return computed_across_requests(("bom_inputs_hash", plan.pk), build)


# --- One function per result kind ---------------------------------------------------------------


def chosen_freshness(workload: Workload) -> Freshness:
    """The workload's chosen configuration (re-planned on every save of the workload)."""
    label = f"Chosen configuration of {workload.name}"
    key = f"workload-{workload.pk}"
    if not workload.has_choice:  # only the consultant can choose: nothing to recompute
        return Freshness(CHOSEN, label, MISSING, "No configuration chosen in sizing yet.", "", key)
    if workload.chosen_problem:
        return Freshness(CHOSEN, label, FAILED, workload.chosen_problem, "", key)
    if workload.chosen_inputs_hash != chosen_inputs_hash(workload):
        return Freshness(
            CHOSEN,
            label,
            STALE,
            "Its replicas were planned for other sizing inputs.",
            _recompute_url(workload.plan, CHOSEN),
            key,
        )
    return Freshness(CHOSEN, label, CURRENT, "", "", key)


def tco_freshness(plan: Plan, *, state=None) -> Freshness:
    """The latest TCO run against the plan's current TCO inputs."""

    label = "TCO"
    url = _recompute_url(plan, TCO)
    state = state or fsvc.tco_state(plan=plan)
    run = state.run
    if run is None:
        reason = state.not_ready or "The TCO has not been run yet."
        return Freshness(TCO, label, MISSING, reason, url if state.ready else "")
    if not state.ready:
        return Freshness(TCO, label, STALE, f"The TCO cannot be run now: {state.not_ready}", "")
    if state.stale:
        return Freshness(TCO, label, STALE, "The TCO inputs changed since the last run.", url)
    if run.status == TcoStatus.FAILED:
        return Freshness(TCO, label, FAILED, f"The last run failed: {run.error}", url)
    if run.status != TcoStatus.SUCCEEDED:
        return Freshness(TCO, label, STALE, "The run for the current inputs is still running.", "")
    return Freshness(TCO, label, CURRENT, "", url)


def bom_freshness(plan: Plan) -> Freshness:
    """The generated bill-of-materials lines against what sizing would generate now."""

    label = "Bill of materials"
    url = _recompute_url(plan, BOM)
    settings = ssvc.sourcing_settings_get(plan=plan)
    if settings.bom_generated_at is None:
        return Freshness(BOM, label, MISSING, "The bill of materials has not been generated.", url)
    current, refusal = _bom_inputs_hash_now(plan)
    if current is None:
        return Freshness(BOM, label, FAILED, f"It cannot be generated now: {refusal}", url)
    if settings.bom_inputs_hash != current:
        return Freshness(
            BOM,
            label,
            STALE,
            "Generated from other sizing or sourcing settings (servers, racks, spares, "
            "fabric) or for another chosen option; regenerate it (hand-made lines and "
            "hand-set quantities are kept)." + _bom_changes_text(plan),
            url,
        )
    return Freshness(BOM, label, CURRENT, "", url)


def _bom_changes_text(plan: Plan, shown: int = 3) -> str:
    """What regenerating the BOM changes: the servers per site the deployment needs against
    those the BOM holds, else the first line changes ("" when it cannot say)."""

    try:
        pending = ssvc.bom_pending_changes(plan=plan)
    except (ssvc.SourcingError, EngineInputError):
        return ""
    if pending.servers:
        parts = [
            f"{count(needed, 'server')} {'at ' + name if name else 'plan-wide'} "
            f"(the bill of materials holds {held})"
            for name, needed, held in pending.servers
        ]
        n = len(pending.changes)
        return (
            f" The deployment now needs {'; '.join(parts)}; regenerating changes "
            f"{count(n, 'line')}."
        )
    if not pending.changes:
        return ""
    more = len(pending.changes) - shown
    text = "; ".join(pending.changes[:shown]) + (f"; and {more} more" if more > 0 else "")
    return f" Regenerating it changes: {text}."


def bom_derived_freshness(plan: Plan, kind: str, *, bom: Freshness | None = None) -> Freshness:
    """The quote (``QUOTE``) or the purchase orders (``ORDERS``): the stored BOM lines priced
    or ordered, so as current as the BOM; the banner says what regenerating it changes and
    offers the BOM page's own regenerate (the same POST)."""
    label, verb = {QUOTE: ("Quote", "prices"), ORDERS: ("Purchase orders", "order from")}[kind]
    bom = bom or bom_freshness(plan)
    if bom.is_current or bom.state == MISSING:  # no BOM: the page says there is nothing yet
        return Freshness(kind, label, CURRENT, "", bom.recompute_url)
    reason = f"They {verb}" if kind == ORDERS else f"It {verb}"
    reason += f" a bill of materials that is {bom.state_label}: {bom.reason}"
    return Freshness(kind, label, bom.state, reason, bom.recompute_url)


def placement_freshness(plan: Plan, *, tco: Freshness | None = None) -> Freshness:
    """The placement ranking: its costs are the latest TCO run's, so it is as current as that
    run against the plan's current deployment and TCO inputs (``tco_inputs_hash``); the
    banner offers the TCO's recompute. Without any run it ranks without costs (it says so)."""
    tco = tco or tco_freshness(plan)
    label = "Placement"
    if tco.is_current or tco.state == MISSING:
        return Freshness(PLACEMENT, label, CURRENT, "", tco.recompute_url)
    reason = f"Its options are ranked with the costs of a TCO run that is {tco.state_label}: "
    return Freshness(PLACEMENT, label, tco.state, reason + tco.reason, tco.recompute_url)


def stale_upstream(plan: Plan, *, chosen: bool = False) -> list[Freshness]:
    """The stale or failed TCO and BOM (and, with ``chosen``, stale chosen configurations):
    the banners of a page that shows what they were computed from (the overview, the sites)."""

    items = []
    if chosen:  # a failed choice is said in its workload's row
        items += [chosen_freshness(w) for w in plan_selectors.workload_list(plan=plan)]
        items = [i for i in items if i.state == STALE]
    if apps.is_installed("planner.facility"):
        items.append(tco_freshness(plan))
    if apps.is_installed("sourcing"):
        items.append(bom_freshness(plan))
    return [i for i in items if i.state in (STALE, FAILED)]


def _from_bom(kind: str, label: str, bom: Freshness, plan: Plan) -> Freshness | None:
    """The landed cost and timeline are priced from the BOM lines: a BOM not current is theirs."""
    if bom.is_current:
        return None
    reason = {
        STALE: "Priced from a bill of materials generated from old inputs.",
        FAILED: "Priced from a bill of materials that cannot be generated now.",
        MISSING: "There is no bill of materials to price yet.",
    }[bom.state]
    return Freshness(kind, label, bom.state, reason, _recompute_url(plan, kind))


def landed_cost_freshness(plan: Plan, *, bom: Freshness | None = None, report=None) -> Freshness:
    """The landed cost: as current as the BOM it prices; failed when lines cannot be priced."""

    label = "Landed cost"
    bom = bom or bom_freshness(plan)
    if (derived := _from_bom(LANDED_COST, label, bom, plan)) is not None:
        return derived
    url = _recompute_url(plan, LANDED_COST)
    try:
        report = report or ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
    except (ssvc.SourcingError, EngineInputError) as exc:
        return Freshness(LANDED_COST, label, FAILED, f"It cannot be priced: {exc}", url)
    if report.unpriced_lines:
        n = report.unpriced_lines
        # The lines by their description (a shipment's key names its supplier: a revision
        # published with this item shows the reason to the client).
        reason = f"{n} line{'s' if n != 1 else ''} not priced: " + "; ".join(
            _unpriced_words(report)
        )
        return Freshness(LANDED_COST, label, FAILED, reason, "")
    return Freshness(LANDED_COST, label, CURRENT, "", url)


def _unpriced_words(report) -> list[str]:
    """Each BOM line without a landed cost, by description and site, with why in fixed words."""
    out = []
    for cost in report.lines:
        if cost.landed is not None and cost.landed.priced or cost.service_cost is not None:
            continue
        if cost.landed is not None and cost.landed.status in NOT_PRICED:
            why = cost.landed.status
        elif cost.problem in ("no offer", "no HS code — duty unknown", "every offer has expired"):
            why = cost.problem
        else:
            why = "no landed cost (see the landed cost page)"
        site = f" ({cost.line.site.name})" if cost.line.site_id else ""
        out.append(f"{cost.line.description}{site}: {why}")
    return out


def timeline_freshness(plan: Plan, *, bom: Freshness | None = None, report=None) -> Freshness:
    """The go-live timeline: as current as the BOM it schedules; failed when it cannot be built."""

    label = "Timeline"
    bom = bom or bom_freshness(plan)
    if (derived := _from_bom(TIMELINE, label, bom, plan)) is not None:
        return derived
    url = _recompute_url(plan, TIMELINE)
    try:
        result = ssvc.timeline_report(plan=plan, organisation=plan.organisation, report=report)
    except (ssvc.SourcingError, EngineInputError) as exc:
        return Freshness(TIMELINE, label, FAILED, f"It cannot be scheduled: {exc}", url)
    if result.slips is None and result.nothing_to_ship:  # the cloud: nothing to schedule
        return Freshness(TIMELINE, label, CURRENT, "", url)
    if result.slips is None:
        return Freshness(TIMELINE, label, FAILED, result.problem, "")
    return Freshness(TIMELINE, label, CURRENT, "", url)


def plan_freshness(plan: Plan) -> list[Freshness]:
    """Every stored result of the plan (and those priced from them) with its state."""

    items = [chosen_freshness(w) for w in plan_selectors.workload_list(plan=plan)]
    if apps.is_installed("planner.facility"):
        items.append(tco_freshness(plan))
    if apps.is_installed("sourcing"):
        bom = bom_freshness(plan)
        report = None
        if bom.is_current:
            try:
                report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
            except (ssvc.SourcingError, EngineInputError):
                report = None  # landed_cost_freshness says why
        items += [
            bom,
            landed_cost_freshness(plan, bom=bom, report=report),
            timeline_freshness(plan, bom=bom, report=report),
        ]
    return items


OPTION = "option"
# Facts of the plan that keep it from a plain publish (not results to recompute): a site
# failing a facility check, a conditional duty still to confirm.
FACILITY_CHECK, MEASURE = "facility_check", "measure"


def option_choice(plan: Plan) -> Freshness | None:
    """The plan's option choice as an open item when none is saved (``None`` once chosen, or
    for a plan without workloads): until the consultant chooses an option under Placement,
    documents say "no option chosen" and the quote prices the owned deployment."""
    if not apps.is_installed("planner.facility") or not plan.workloads.exists():
        return None

    decision = fsel.placement_decision_get(plan=plan)
    if decision.chosen_kind == "edge":
        # The BOM buys the chosen option's hardware (``ssvc.bom_option``: the owned
        # deployment, the hybrid's base, none for the cloud); the edge has no option of its
        # own, so its revision must say the quote is not of that option.
        return Freshness(
            OPTION,
            "Quote of the chosen option",
            FAILED,
            f"The chosen option is {decision.chosen_label or decision.chosen_kind}, but the "
            "bill of materials and the quote price the owned deployment: the quote is not of "
            "the chosen option.",
        )
    if decision.chosen_key or decision.chosen_kind:
        return None
    return Freshness(
        OPTION,
        "Option chosen",
        MISSING,
        "No option chosen: choose one under Placement (owned, cloud or hybrid). Until then "
        "the documents say no option is chosen and the quote prices the owned deployment.",
    )


def facility_failures(plan: Plan) -> list[Freshness]:
    """One open item per site whose facility check fails for the servers the plan puts there
    (e.g. 11 racks needed, 10 available; one feed that cannot carry the rack alone)."""
    if not apps.is_installed("planner.facility"):
        return []

    try:
        deployment = fsvc.plan_deployment(plan=plan)
    except EngineInputError:
        return []  # a catalog gap: the sites cannot be checked (the site pages and TCO say so)
    items = []
    for site in fsel.site_list(plan=plan):
        report = fsvc.site_evaluate(plan=plan, site=site, deployment=deployment).report
        failing = [c for c in report.checks if c.status == "fail"] if report else []
        if failing:
            items.append(
                Freshness(
                    FACILITY_CHECK,
                    f"Facility check of {site.name}",
                    FAILED,
                    " ".join(f"{c.title}: {c.reason}" for c in failing),
                    key=f"site-{site.pk}",
                )
            )
    return items


def measures_to_confirm(plan: Plan) -> list[Freshness]:
    """One open item per BOM line whose landed cost leaves out a conditional duty (end use,
    exemption, quota) that nobody has confirmed or excluded, with its exposure."""
    if not apps.is_installed("sourcing"):
        return []

    try:
        report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
    except (ssvc.SourcingError, EngineInputError):
        return []  # the landed cost's own item says why
    items = []
    for cost in report.lines_to_confirm:
        site = f" ({cost.line.site.name})" if cost.line.site_id else ""
        for m in cost.landed.measures_to_confirm:
            items.append(
                Freshness(
                    MEASURE,
                    f"Duty to confirm on {cost.line.description}{site}",
                    MISSING,
                    f"{m.name} ({m.pct.normalize():f} %) depends on what the plan does not "
                    f"hold ({m.condition}); it is not in the landed cost. If it applies it adds "
                    f"{format_money(m.exposure.amount, m.exposure.currency)}.",
                    key=f"line-{cost.line.pk}-{m.name}",
                )
            )
    return items


def open_items(plan: Plan) -> list[Freshness]:
    """The results that are not current (what publishing lists and refuses on)."""
    return [item for item in plan_freshness(plan) if not item.is_current]


# --- Recompute -----------------------------------------------------------------------------------


class RecomputeError(ValueError):
    """A result that cannot be recomputed now; the message says why."""


def _changed_inputs(old: Any, new: Any, path: str = "", depth: int = 3) -> list[str]:
    """The dotted names of the inputs that differ between two canonical snapshots."""
    if old == new:
        return []
    if depth and isinstance(old, dict) and isinstance(new, dict):
        changed = []
        for key in sorted(set(old) | set(new)):
            name = f"{path}.{key}" if path else str(key)
            changed += _changed_inputs(old.get(key), new.get(key), name, depth - 1)
        return changed
    return [path or "inputs"]


def _input_words(name: str) -> str:
    """An input's dotted key in words for the plan's history: ``"inputs.horizon_months"`` →
    ``"horizon months"``, ``"fx.rate_date"`` → ``"fx rate date"`` (the keys stay in the data)."""
    return name.removeprefix("inputs.").replace(".", " ").replace("_", " ")


def _when(moment) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC" if moment else "the last run"


def _record(*, plan: Plan, user, before: Freshness, section: str, why: str, result: str, data):
    """Append the recompute to the plan's history (the sourcing app keeps it) when it was due."""
    if before.is_current or not apps.is_installed("sourcing"):
        return

    message = f"{section} recomputed: it was {before.state_label} ({why}); {result}."
    ssvc.event_record(
        plan=plan,
        user=user,
        kind="recomputed",
        message=message,
        data={"section": before.kind, "was": before.state, "reason": why, **data},
    )


def _tco_recompute(*, plan: Plan, user, inline: bool) -> str:
    """Run the TCO for the current inputs; a stale or failed one is recorded in the history."""

    state = fsvc.tco_state(plan=plan)
    before = tco_freshness(plan, state=state)
    old = state.run
    try:
        if inline:  # the demo builder: computed here, same request as the page's
            run = fsvc.tco_run_sync(plan=plan, user=user)
            created = old is None or run.pk != old.pk or old.status != run.status
        else:
            run, created = fsvc.tco_run_request(plan=plan, user=user)
    except fsvc.TcoNotReady as exc:
        raise RecomputeError(str(exc)) from exc
    data: dict[str, Any] = {"run": run.pk, "status": run.status}
    if old is None:
        why = before.reason
    else:
        since = old.finished_at or old.created_at
        changed = _changed_inputs(old.inputs, run.inputs) if old.pk != run.pk else []
        why = f"its inputs changed since the run of {_when(since)}"
        if changed:
            shown = ", ".join(_input_words(name) for name in changed[:6]) + (
                f" and {len(changed) - 6} more" if len(changed) > 6 else ""
            )
            why += f": {shown}"
        elif before.state == FAILED:
            why = before.reason
        data.update(previous_run=old.pk, since=since.isoformat() if since else "", changed=changed)
    _record(
        plan=plan, user=user, before=before, section="TCO", why=why,
        result=f"run #{run.pk} {run.status}", data=data,
    )  # fmt: skip
    return "TCO run queued for the current inputs." if created else "The TCO is up to date."


def recompute(*, plan: Plan, kind: str, user, inline: bool = False) -> str:
    """Recompute one kind of stored result from the plan's current inputs.

    The chosen configurations are re-planned (same accelerator, precision and TP); the TCO
    is run (queued, or computed here when ``inline``) for the current inputs; the BOM is
    regenerated, which also brings the landed cost and the timeline priced from it up to
    date. A result that was not current is recorded in the plan's history: which section,
    why it was stale and what it is now.

    Returns:
        What was done, in plain words.

    Raises:
        RecomputeError: The kind is unknown or its inputs cannot be computed with (the
            domain error's message).
    """
    if kind == CHOSEN:
        replanned = 0
        for workload in plan_selectors.workload_list(plan=plan):
            before = chosen_freshness(workload)
            if workload.has_choice and before.state == STALE:
                sizing.chosen_replan(workload)
                workload.save()
                replanned += 1
                _record(
                    plan=plan, user=user, before=before, section=before.label,
                    why="its sizing inputs changed since it was planned",
                    result=f"{workload.chosen_replicas} replicas", data={"workload": workload.pk},
                )  # fmt: skip
        return f"Re-planned {replanned} chosen configuration{'s' if replanned != 1 else ''}."
    if kind == TCO:
        return _tco_recompute(plan=plan, user=user, inline=inline)
    if kind in (BOM, LANDED_COST, TIMELINE):
        before = bom_freshness(plan)
        generated_at = ssvc.sourcing_settings_get(plan=plan).bom_generated_at
        try:
            changes = ssvc.bom_generate(plan=plan, user=user)
        except ssvc.SourcingError as exc:
            raise RecomputeError(str(exc)) from exc
        why = before.reason
        if before.state == STALE:
            why = f"its inputs changed since it was generated at {_when(generated_at)}"
        _record(
            plan=plan, user=user, before=before, section=before.label, why=why,
            result=f"{len(changes)} line change{'s' if len(changes) != 1 else ''}",
            data={"changes": list(changes)},
        )  # fmt: skip
        done = "Bill of materials regenerated"
        return done + (": " + "; ".join(changes) + "." if changes else "; nothing changed.")
    raise RecomputeError("Unknown result.")
