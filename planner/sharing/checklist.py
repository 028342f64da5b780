"""The guide's pre-purchase checklist, evaluated from a plan snapshot (plain Python, no Django).

Source: the consultancy guide's "Pre-purchase checklist". Each item is a list of facts read
from the snapshot (``planner.sharing.snapshot``): every fact that fails is named in
``failing``, and the item is done only when none fails. A few facts live outside the plan (a
load test was run and passed): those are completed by a hand sign-off (name and date). A
sign-off on any other item is shown as a note; it never turns a failing fact into done.

Statuses:
    ``done``: every fact holds, and the hand-confirmed fact (if any) is signed off.
    ``sign_off``: every fact the plan shows holds; the hand-confirmed fact waits for a person.
    ``missing``: at least one fact fails (``failing`` says which).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from planner.engine.shown import quantity
from planner.labels import count_range, headroom_rule
from planner.money import format_money
from planner.templatetags.planner_numbers import fixed

logger = logging.getLogger(__name__)

DONE = "done"
SIGN_OFF = "sign_off"
MISSING = "missing"
STATUS_LABELS = {DONE: "Done", SIGN_OFF: "Needs sign-off", MISSING: "Not done"}

# Autoscaling signals that follow memory (the guide: scale on memory, not GPU utilisation).
MEMORY_SIGNAL_WORDS = ("kv_cache", "memory", "hbm")


@dataclass(frozen=True, slots=True)
class ChecklistItem:
    """One checklist item as evaluated.

    Attributes:
        key: Stable identifier (sign-offs refer to it).
        title: The item as the guide words it.
        status: ``done``, ``sign_off`` or ``missing``.
        evidence: Sentences saying what in the plan was looked at, and what it showed.
        failing: The facts that fail, one sentence each (empty when none fails).
        manual_part: What a person must confirm by hand ("" when the plan tells it all).
        sign_off: The standing sign-off (``{"name", "date", "note"}``) or ``None``.
    """

    key: str
    title: str
    status: str
    evidence: tuple[str, ...]
    failing: tuple[str, ...] = ()
    manual_part: str = ""
    sign_off: dict[str, str] | None = None

    @property
    def status_label(self) -> str:
        return STATUS_LABELS[self.status]

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["evidence"] = list(self.evidence)
        data["failing"] = list(self.failing)
        data["status_label"] = self.status_label
        return data


@dataclass
class _Finding:
    """What the plan tells about one item: what was seen, and which facts fail."""

    evidence: list[str] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)

    def fail(self, fact: str) -> None:
        self.failing.append(fact)


def _available(section: Any) -> bool:
    return isinstance(section, dict) and section.get("available", False)


def _no_workloads() -> _Finding:
    return _Finding(failing=["The plan has no workloads yet."])


def _latency_and_concurrency(s: dict) -> _Finding:
    workloads = s.get("workloads") or []
    if not workloads:
        return _no_workloads()
    found = _Finding()
    for w in workloads:
        if w.get("ttft_ms") and w.get("tpot_ms"):
            target = (
                f"TTFT {quantity(w['ttft_ms'], 'ms')} and TPOT {quantity(w['tpot_ms'], 'ms')} "
                f"at p{w['percentile']}"
            )
        elif w.get("e2e_s"):
            target = f"{w['e2e_s']} s per request at p{w['percentile']}"
        else:
            target = ""
        if w.get("peak_concurrency"):
            peak = f"peak {w['peak_concurrency']} concurrent requests"
        elif w.get("peak_requests_per_s"):
            peak = f"peak {quantity(w['peak_requests_per_s'], 'requests/s')}"
        else:
            peak = ""
        if not target:
            found.fail(f"{w['name']}: no latency target.")
        if not peak:
            found.fail(f"{w['name']}: no peak load (or a peak of 0).")
        if target and peak:
            rule = ""
            if w.get("headroom_pct") is not None:  # the rule its replicas are sized by
                rule = f"; replicas {headroom_rule(w['headroom_pct'], w.get('n_plus_one'))}"
            found.evidence.append(f"{w['name']}: {target}; {peak}{rule}.")
    return found


def _memory_footprint(s: dict) -> _Finding:
    workloads = s.get("workloads") or []
    if not workloads:
        return _no_workloads()
    found = _Finding()
    for w in workloads:
        chosen, memory = w.get("chosen"), w.get("memory")
        if not chosen:
            found.fail(f"{w['name']}: no configuration chosen in sizing yet.")
        elif not memory:
            found.fail(
                f"{w['name']}: {chosen['accelerator_name']} chosen, but its memory breakdown "
                "could not be computed."
            )
        else:
            found.evidence.append(
                f"{w['name']}: {chosen['accelerator_name']} TP{chosen['tensor_parallel']} — "
                f"weights {memory['weights_gb_per_gpu']:.1f} GB, KV cache "
                f"{memory['kv_budget_gb_per_gpu']:.1f} GB of {memory['capacity_gb_per_gpu']:.0f}"
                f" GB per GPU; {memory['max_concurrent_sequences']} concurrent sequences fit "
                f"per replica ({memory['kv_cache_bytes_per_token'] / 1024:.0f} KiB per token)."
            )
    return found


def chosen_tco_option(s: dict) -> tuple[dict | None, str]:
    """The TCO option of the placement the plan chose, and a sentence saying how it was found.

    The option every document heads with (``planner.pdf.context.headline_option``): a chosen
    site's option (the pooled deployment's one owned option for a site of it), the hybrid,
    or the cheapest option of a chosen kind. ``(None, reason)`` when the plan has no
    finished TCO or no placement chosen.
    """
    tco = s.get("tco")
    if not _available(tco):
        return None, (tco or {}).get("reason") or "No finished TCO run."
    placement = s.get("placement") or {}
    key, kind = placement.get("chosen_key") or "", placement.get("chosen_kind") or ""
    if not key and not kind:
        return None, "No placement chosen yet, so no option to take the cost from."
    # the one rule every document uses; pdf.context imports this module at its top (a cycle)
    from planner.pdf.context import headline_option

    typed = headline_option(tco, placement)
    option = typed.model_dump() if typed is not None else None  # the rules read plain dicts
    if option is not None:
        if option["key"] == key:
            return option, f"the chosen placement, {option['label']}"
        part = next((p for p in option.get("sites") or () if p.get("key") == key), None)
        if part is not None:  # a site of the pooled deployment: the deployment's one option
            label = placement.get("chosen_label") or part.get("label") or key
            return option, (
                f"the chosen placement, {label}, part of the one owned deployment "
                f"{option['label']} (this site's share: {part.get('servers', 0)} servers)"
            )
        return option, f"the chosen {kind.replace('_', ' ')} placement, {option['label']}"
    label = placement.get("chosen_label") or key
    return None, f"The TCO run has no option for the chosen placement ({label}); re-run it."


def workload_cost_target(w: dict, tco: dict | None) -> tuple[float | None, str]:
    """A snapshot workload's cost-per-request target in the TCO run's currency, and why a set
    target cannot be compared ("" otherwise).

    Snapshots store it in the plan's currency; older ones stored
    ``cost_per_request_target_usd``, converted here at the run's dated USD → currency rate.
    """
    if w.get("cost_per_request_target_problem"):
        return None, w["cost_per_request_target_problem"]
    if w.get("cost_per_request_target") not in (None, ""):
        return float(w["cost_per_request_target"]), ""
    legacy = w.get("cost_per_request_target_usd")
    if legacy in (None, ""):
        return None, ""
    rate = ((tco or {}).get("fx") or {}).get("rate") or "1"
    return float(legacy) * float(rate), ""


def workload_cost_per_request(option: dict | None, workload_id: object) -> float | None:
    """The workload's own cost per request in ``option`` (a TCO option as a plain dict), in
    the run's currency: its share of the option's cost by accelerator-seconds over its
    requests. A run made before workloads had their own figures gives the option's one cost
    per request; ``None`` without a figure."""
    if option is None:
        return None
    rows = option.get("workloads") or []
    if rows:
        row = next((r for r in rows if str(r.get("key")) == str(workload_id)), None)
        value = row.get("cost_per_request_amount") if row else None
    else:
        value = option.get("cost_per_request_amount")
    return float(value) if value else None  # in the run's currency


def _cost_per_request(s: dict) -> _Finding:
    workloads = s.get("workloads") or []
    if not workloads:
        return _no_workloads()
    found = _Finding()
    tco = s.get("tco") or {}
    currency = tco.get("currency") or (s.get("plan") or {}).get("currency") or ""
    option, how = chosen_tco_option(s)
    if option is None:
        found.fail(f"No cost per request to compare with: {how}")
    elif option.get("workloads"):
        costs = {w["name"]: workload_cost_per_request(option, w.get("id")) for w in workloads}
        found.evidence.append(
            f"Cost per request of {how}, each workload's own (the option's cost split by "
            "accelerator-seconds): "
            + ", ".join(
                f"{name} {fixed(cost, 5)} {currency}" if cost is not None else f"{name} none"
                for name, cost in costs.items()
            )
            + "."
        )
    elif option.get("cost_per_request_amount"):
        cost = float(option["cost_per_request_amount"])  # in the run's currency
        found.evidence.append(f"Cost per request of {how}: {fixed(cost, 5)} {currency}.")
    if tco.get("stale"):
        found.fail("The TCO run predates the latest changes to the plan; re-run it.")
    for w in workloads:
        cost = workload_cost_per_request(option, w.get("id"))
        if option is not None and cost is None:
            found.fail(
                f"{w['name']}: the TCO gives {option['label']} no cost per request for it "
                "(no request volume)."
            )
            continue
        target, problem = workload_cost_target(w, tco)
        if problem:
            found.fail(f"{w['name']}: {problem}.")
            continue
        if target is None:
            found.fail(f"{w['name']}: no cost-per-request target.")
            continue
        # Rounded half-up as the pages show the same figures (floatformat), not as Python's
        # float formatting does (0.002375 is "0.00237" there, "0.00238" on every page).
        shown = f"target {fixed(target, 5)} {currency} per request"
        if cost is None:
            found.evidence.append(f"{w['name']}: {shown}.")
        elif cost <= target:
            found.evidence.append(f"{w['name']}: {shown}, met ({fixed(cost, 5)}).")
        else:
            found.fail(
                f"{w['name']}: {shown}, not met ({fixed(cost, 5)}, {(cost / target - 1):.0%} over)."
            )
    return found


def _power_cooling_space(s: dict) -> _Finding:
    sites = s.get("sites")
    if not _available(sites) or not sites.get("sites"):
        return _Finding(failing=["No site with power, cooling and rack figures in the plan."])
    found = _Finding()
    go_live = (s.get("timeline") or {}).get("go_live") or (s.get("plan") or {}).get(
        "target_go_live"
    )
    rows = sites["sites"]
    chosen_key = (s.get("placement") or {}).get("chosen_key") or ""
    chosen = [site for site in rows if f"site-{site.get('id')}" == chosen_key]
    deployed = [site for site in rows if site.get("deployed_servers")]
    if deployed:
        # The pooled deployment's sites (planner.facility.deployment): every site it puts
        # servers at must have its power, cooling and space, not only the chosen one.
        unused = [site["name"] for site in rows if site not in deployed]
        found.evidence.append(
            "The deployment uses "
            + ", ".join(
                f"{site['name']} ({n} server{'' if n == 1 else 's'})"
                for site in deployed
                for n in (site["deployed_servers"],)
            )
            + (f"; not used: {', '.join(unused)}." if unused else ".")
        )
        rows = deployed
    elif chosen:  # revisions from before the snapshot recorded the deployment per site
        others = [site["name"] for site in rows if site not in chosen]
        if others:
            found.evidence.append(
                f"The plan places the fleet at {chosen[0]['name']}; not used: {', '.join(others)}."
            )
        rows = chosen
    for site in rows:
        checks = site.get("checks") or []
        if not checks:
            found.fail(f"{site['name']}: no checks (no sized servers yet).")
            continue
        failed = [c["title"] for c in checks if c["status"] == "fail"]
        warned = [c["title"] for c in checks if c["status"] == "warn"]
        ready = site.get("power_ready_date")
        text = f"{site['name']}: {len(checks)} checks, "
        text += f"{len(failed)} failed" if failed else "all passing"
        text += f" ({len(warned)} with a warning: {', '.join(warned)})" if warned else ""
        text += f"; power ready {ready}." if ready else "; no power-ready date."
        found.evidence.append(text)
        for title in failed:
            found.fail(f"{site['name']}: the check '{title}' fails.")
        if not ready:
            found.fail(f"{site['name']}: no confirmed power-ready date.")
        elif go_live and ready > go_live:
            found.fail(f"{site['name']}: power is ready {ready}, after go-live ({go_live}).")
    return found


def _is_memory_signal(name: str) -> bool:
    return any(word in (name or "").lower() for word in MEMORY_SIGNAL_WORDS)


def _autoscaling(s: dict) -> _Finding:
    workloads = s.get("workloads") or []
    if not workloads:
        return _no_workloads()
    found = _Finding()
    for w in workloads:
        a = w.get("autoscaling")
        if not a:
            found.fail(f"{w['name']}: no autoscaling recommendation (choose a size).")
            continue
        if not _is_memory_signal(a.get("primary_signal", "")):
            found.fail(f"{w['name']}: scales on {a.get('primary_signal')}, not on memory.")
        up, down = a.get("scale_up_kv_usage"), a.get("scale_down_kv_usage")
        if up is None or down is None:
            found.fail(f"{w['name']}: no scale-up and scale-down thresholds.")
            continue
        found.evidence.append(
            f"{w['name']}: scale on {a['primary_signal']} above {up:.0%}, down when one "
            f"replica fewer would stay below {down:.0%} (then {a['secondary_signal']} ≥ {a['scale_up_queue_depth']}), "
            f"{count_range(a['min_replicas'], a['max_replicas'], 'replica')}."
        )
    return found


def _operations(s: dict) -> dict:
    ops = s.get("operations")
    return ops if _available(ops) else {}


def _monitoring_spares_support(s: dict) -> _Finding:
    found = _Finding()
    ops = _operations(s)
    if not ops:
        found.fail("The operations & security section is not filled in.")
    else:
        for row in ops.get("answers", []):
            if row.get("filled"):
                found.evidence.append(f"{row['label']}: {row['summary']}")
            else:
                found.fail(f"Operations & security: {row['label']} has no owner and tool.")
    bom = s.get("bom")
    if not _available(bom):
        found.fail("No priced BOM: spares and support cannot be read from the plan.")
        return found
    mode = bom.get("spares_mode")
    if mode == "none":
        found.fail("Sourcing buys no spares.")
    else:
        found.evidence.append(
            f"Spares: {bom.get('spares_mode_label', mode)}"
            + (f" ({bom['spares_pct']} %)." if mode == "percent" else ".")
        )
    support = [line for line in bom.get("lines", []) if line.get("service") == "support"]
    if support:
        found.evidence.append(
            "Support: " + ", ".join(f"{x['quantity']} × {x['description']}" for x in support) + "."
        )
    else:
        found.fail("No support contract in the BOM.")
    return found


def measures_to_confirm(bom: dict) -> list[str]:
    """One sentence per conditional duty (end use, exemption, quota) a BOM line leaves out of
    its landed cost: "confirm", with what it would cost if it applies (never a silent 0 %)."""
    out = []
    for row in bom.get("lines", []):
        for m in row.get("measures_to_confirm") or ():
            where = f" for {row['site']}" if row.get("site") else ""
            exposure = m["exposure"]
            out.append(
                f"Confirm {m['name']} ({Decimal(m['pct']).normalize():f} %) on "
                f"{row['description']}{where}: {m['condition']}. If it applies it adds "
                f"{format_money(exposure['amount'], exposure['currency'])}."
            )
    return out


def measures_decided(bom: dict) -> list[str]:
    """One sentence per conditional duty the consultant decided (no longer open): charged, or
    0 % with the stated reason."""
    out = []
    for row in bom.get("lines", []):
        for m in row.get("measures_decided") or ():
            where = f" for {row['site']}" if row.get("site") else ""
            if m["applies"]:
                duty = m["duty"]
                what = (
                    f"applies, {format_money(duty['amount'], duty['currency'])} in the landed cost"
                )
            else:
                what = "does not apply (0 %)"
            reason = f": {m['reason']}" if m.get("reason") else ""
            out.append(f"{m['name']} on {row['description']}{where} {what}{reason}.")
    return out


def _logistics_owner(s: dict) -> _Finding:
    orders = s.get("purchase_orders")
    bom = s.get("bom")
    found = _Finding()
    cross = []
    if _available(orders):
        cross = [o for o in orders.get("orders", []) if o.get("cross_border")]
        for order in cross:
            owner = (order.get("logistics_owner") or "").strip()
            if owner:
                found.evidence.append(f"{order['reference']}: {owner}.")
            else:
                found.fail(f"{order['reference']} crosses a border with no logistics owner.")
    ordered = {o["supplier"] for o in cross}
    if not _available(bom):
        found.fail("No priced BOM: the shipments cannot be read from the plan.")
        return found
    for fact in measures_to_confirm(bom):
        found.fail(fact)
    found.evidence += measures_decided(bom)
    for shipment in bom.get("shipments", []):
        if shipment.get("cross_border") and shipment["supplier"] not in ordered:
            found.fail(
                f"{shipment['key']} crosses a border and has no purchase order with a named "
                "logistics owner yet."
            )
    if not cross and not found.failing:
        found.evidence.append("No cross-border shipment in the plan.")
    return found


@dataclass(frozen=True, slots=True)
class _Rule:
    key: str
    title: str
    evaluate: Callable[[dict], _Finding]
    manual_part: str = ""


RULES: tuple[_Rule, ...] = (
    _Rule(
        "latency_concurrency",
        "A written latency target per request type, and a peak concurrency estimate.",
        _latency_and_concurrency,
    ),
    _Rule(
        "memory_footprint",
        "The model's memory footprint, including cache for concurrent requests.",
        _memory_footprint,
    ),
    _Rule(
        "cost_per_request",
        "A cost-per-request target, not just a hardware budget.",
        _cost_per_request,
    ),
    _Rule(
        "power_cooling_space",
        "Confirmed power, cooling and rack space, with dates.",
        _power_cooling_space,
    ),
    _Rule(
        "autoscaling",
        "An autoscaling signal tied to memory behavior, tested under load.",
        _autoscaling,
        manual_part="A load test of the signal has been run and signed off (its report).",
    ),
    _Rule(
        "monitoring_spares_support",
        "A plan for monitoring, replacement parts and support.",
        _monitoring_spares_support,
    ),
    _Rule(
        "logistics_owner",
        "A named owner for logistics, customs and tariffs on every cross-border shipment.",
        _logistics_owner,
    ),
)
ITEM_KEYS = tuple(rule.key for rule in RULES)
ITEM_TITLES = {rule.key: rule.title for rule in RULES}


def evaluate(snapshot: dict[str, Any]) -> list[ChecklistItem]:
    """Every checklist item evaluated from a snapshot and its ``sign_offs``.

    Args:
        snapshot: A plan snapshot (``planner.sharing.snapshot.plan_snapshot``); sections may
            be missing or ``{"available": false}``.

    Returns:
        One :class:`ChecklistItem` per rule, in the guide's order.
    """
    sign_offs = snapshot.get("sign_offs") or {}
    items = []
    for rule in RULES:
        try:
            finding = rule.evaluate(snapshot)
        except (KeyError, TypeError, ValueError):
            # Never the exception's text in a published checklist: logged, and signed by hand.
            logger.exception("checklist rule %s could not read the snapshot", rule.key)
            finding = _Finding(failing=["The plan could not be read for this item."])
        sign_off = sign_offs.get(rule.key)
        if finding.failing:
            status = MISSING  # a sign-off is a note here: it never outweighs a failing fact
        elif rule.manual_part and not sign_off:
            status = SIGN_OFF
        else:
            status = DONE
        items.append(
            ChecklistItem(
                key=rule.key,
                title=rule.title,
                status=status,
                evidence=tuple(finding.evidence),
                failing=tuple(finding.failing),
                manual_part=rule.manual_part,
                sign_off=sign_off,
            )
        )
    return items


def summary(items: list[ChecklistItem] | list[dict]) -> dict[str, int]:
    """Counts per status."""
    counts = dict.fromkeys(STATUS_LABELS, 0)
    for item in items:
        counts[item["status"] if isinstance(item, dict) else item.status] += 1
    return counts


def signed_on_is_valid(value: date, today: date) -> bool:
    """A sign-off date may not be in the future."""
    return value <= today
