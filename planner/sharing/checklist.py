"""The seed's pre-purchase checklist, evaluated from a plan snapshot (plain Python, no Django).

Source: the consultancy guide's "Pre-purchase checklist" (shared/seed, lines 92-100). Each
item looks at the parts of the snapshot that can tell (``planner.sharing.snapshot``) and
says what it found. Where the plan cannot tell — a load test, a monitoring plan — the item
needs a hand sign-off (name and date). A sign-off completes what the plan cannot show; it
never overrides a failure the plan does show.

Statuses:
    ``done``: the plan shows it, and any part that needs a person is signed off.
    ``sign_off``: nothing in the plan contradicts it, but a person must confirm it.
    ``missing``: the plan shows it is not there (or not good enough) yet.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

from planner.labels import count_range

logger = logging.getLogger(__name__)

DONE = "done"
SIGN_OFF = "sign_off"
MISSING = "missing"
STATUS_LABELS = {DONE: "Done", SIGN_OFF: "Needs sign-off", MISSING: "Missing"}


@dataclass(frozen=True, slots=True)
class ChecklistItem:
    """One checklist item as evaluated.

    Attributes:
        key: Stable identifier (sign-offs refer to it).
        title: The item as the seed words it.
        status: ``done``, ``sign_off`` or ``missing``.
        evidence: Sentences saying what in the plan was looked at, and what it showed.
        manual_part: What a person must confirm by hand ("" when the plan tells it all).
        sign_off: The standing sign-off (``{"name", "date", "note"}``) or ``None``.
    """

    key: str
    title: str
    status: str
    evidence: tuple[str, ...]
    manual_part: str = ""
    sign_off: dict[str, str] | None = None

    @property
    def status_label(self) -> str:
        return STATUS_LABELS[self.status]

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["evidence"] = list(self.evidence)
        data["status_label"] = self.status_label
        return data


@dataclass
class _Finding:
    """What the plan tells about one item: ``ok`` True/False, or None when it cannot tell."""

    ok: bool | None
    evidence: list[str] = field(default_factory=list)


def _available(section: Any) -> bool:
    return isinstance(section, dict) and section.get("available", False)


def _latency_and_concurrency(s: dict) -> _Finding:
    workloads = s.get("workloads") or []
    if not workloads:
        return _Finding(False, ["The plan has no workloads yet."])
    found = _Finding(True)
    for w in workloads:
        if w.get("ttft_ms") and w.get("tpot_ms"):
            target = f"TTFT {w['ttft_ms']} ms and TPOT {w['tpot_ms']} ms at p{w['percentile']}"
        elif w.get("e2e_s"):
            target = f"{w['e2e_s']} s per request at p{w['percentile']}"
        else:
            target = ""
        if w.get("peak_concurrency"):
            peak = f"peak {w['peak_concurrency']} concurrent requests"
        elif w.get("peak_requests_per_s"):
            peak = f"peak {w['peak_requests_per_s']:g} requests/s"
        else:
            peak = ""
        if not target or not peak:
            found.ok = False
            missing = " and no ".join(
                x for x, have in (("latency target", target), ("peak load", peak)) if not have
            )
            found.evidence.append(f"{w['name']}: no {missing}.")
        else:
            found.evidence.append(f"{w['name']}: {target}; {peak}.")
    return found


def _memory_footprint(s: dict) -> _Finding:
    workloads = s.get("workloads") or []
    if not workloads:
        return _Finding(False, ["The plan has no workloads yet."])
    found = _Finding(True)
    for w in workloads:
        chosen, memory = w.get("chosen"), w.get("memory")
        if not chosen:
            found.ok = False
            found.evidence.append(f"{w['name']}: no configuration chosen in sizing yet.")
        elif not memory:
            found.ok = False
            found.evidence.append(
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


def _cost_per_request(s: dict) -> _Finding:
    tco = s.get("tco")
    if not _available(tco):
        reason = (tco or {}).get("reason") or "No TCO result."
        return _Finding(False, [f"No cost per request yet: {reason} Run the TCO."])
    options = [o for o in tco.get("options", []) if o.get("cost_per_request_usd")]
    if not options:
        return _Finding(False, ["The TCO run gives no cost per request (no request volume)."])
    cheapest = tco.get("cheapest")
    evidence = [
        f"{o['label']}: {float(o['cost_per_request_usd']):.5f} USD per request"
        + (" (cheapest)" if o["key"] == cheapest else "")
        + "."
        for o in options
    ]
    if tco.get("stale"):
        evidence.append("The TCO run predates the latest changes to the plan; re-run it.")
    return _Finding(None if tco.get("stale") else True, evidence)


def _power_cooling_space(s: dict) -> _Finding:
    sites = s.get("sites")
    if not _available(sites) or not sites.get("sites"):
        return _Finding(False, ["No site with power, cooling and rack figures in the plan."])
    found = _Finding(True)
    go_live = (s.get("timeline") or {}).get("go_live") or (s.get("plan") or {}).get(
        "target_go_live"
    )
    for site in sites["sites"]:
        checks = site.get("checks") or []
        if not checks:
            found.ok = False
            found.evidence.append(f"{site['name']}: no checks (no sized servers yet).")
            continue
        failed = [c["title"] for c in checks if c["status"] == "fail"]
        warned = [c["title"] for c in checks if c["status"] == "warn"]
        ready = site.get("power_ready_date")
        text = f"{site['name']}: {len(checks)} checks, "
        text += f"{len(failed)} failed ({', '.join(failed)})" if failed else "none failed"
        text += f", {len(warned)} warnings" if warned else ""
        text += f"; power ready {ready}." if ready else "; no power-ready date."
        found.evidence.append(text)
        if failed or not ready:
            found.ok = False
        elif go_live and ready > go_live:
            found.ok = False
            found.evidence.append(f"{site['name']}: power is ready after go-live ({go_live}).")
    # One site that passes is enough for the plan to proceed with it.
    if any(
        site.get("checks")
        and not any(c["status"] == "fail" for c in site["checks"])
        and site.get("power_ready_date")
        and not (go_live and site["power_ready_date"] > go_live)
        for site in sites["sites"]
    ):
        found.ok = True
    return found


def _autoscaling(s: dict) -> _Finding:
    workloads = s.get("workloads") or []
    if not workloads:
        return _Finding(False, ["The plan has no workloads yet."])
    found = _Finding(True)
    for w in workloads:
        a = w.get("autoscaling")
        if not a:
            found.ok = False
            found.evidence.append(f"{w['name']}: no autoscaling recommendation (choose a size).")
        else:
            found.evidence.append(
                f"{w['name']}: scale on {a['primary_signal']} above "
                f"{a['scale_up_kv_usage']:.0%} (then {a['secondary_signal']} ≥ "
                f"{a['scale_up_queue_depth']}), "
                f"{count_range(a['min_replicas'], a['max_replicas'], 'replica')}."
            )
    return found


def _monitoring_spares_support(s: dict) -> _Finding:
    bom = s.get("bom")
    if not _available(bom):
        return _Finding(None, ["No priced BOM: spares and support cannot be read from the plan."])
    found = _Finding(True)
    mode = bom.get("spares_mode")
    if mode == "none":
        found.ok = False
        found.evidence.append("Sourcing buys no spares.")
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
        found.ok = False
        found.evidence.append("No support contract in the BOM.")
    return found


def _logistics_owner(s: dict) -> _Finding:
    orders = s.get("purchase_orders")
    bom = s.get("bom")
    found = _Finding(True)
    cross = []
    if _available(orders):
        cross = [o for o in orders.get("orders", []) if o.get("cross_border")]
        for order in cross:
            owner = (order.get("logistics_owner") or "").strip()
            if owner:
                found.evidence.append(f"{order['reference']} ({order['supplier']}): {owner}.")
            else:
                found.ok = False
                found.evidence.append(
                    f"{order['reference']} ({order['supplier']}) crosses a border with no "
                    "logistics owner."
                )
    ordered = {o["supplier"] for o in cross}
    pending = []
    if _available(bom):
        pending = [
            x
            for x in bom.get("shipments", [])
            if x.get("cross_border") and x["supplier"] not in ordered
        ]
    if pending and found.ok is not False:
        found.ok = None
        found.evidence.append(
            "Not ordered yet, cross-border: "
            + ", ".join(x["key"] for x in pending)
            + " — name the owner on the purchase order."
        )
    if not cross and not pending:
        if not _available(bom):
            return _Finding(None, ["No priced BOM: shipments cannot be read from the plan."])
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
        manual_part="The signal has been tested under load (load-test report).",
    ),
    _Rule(
        "monitoring_spares_support",
        "A plan for monitoring, replacement parts and support.",
        _monitoring_spares_support,
        manual_part="A monitoring plan exists (metrics, alerts, on-call).",
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
        One :class:`ChecklistItem` per rule, in the seed's order.
    """
    sign_offs = snapshot.get("sign_offs") or {}
    items = []
    for rule in RULES:
        try:
            finding = rule.evaluate(snapshot)
        except (KeyError, TypeError, ValueError):
            # Never the exception's text in a published checklist: logged, and signed by hand.
            logger.exception("checklist rule %s could not read the snapshot", rule.key)
            finding = _Finding(None, ["The plan could not be read for this item."])
        sign_off = sign_offs.get(rule.key)
        if finding.ok is False:
            status = MISSING
        elif (finding.ok is None or rule.manual_part) and not sign_off:
            status = SIGN_OFF
        else:
            status = DONE
        items.append(
            ChecklistItem(
                key=rule.key,
                title=rule.title,
                status=status,
                evidence=tuple(finding.evidence),
                manual_part=rule.manual_part
                or ("Confirm by hand: the plan cannot tell." if finding.ok is None else ""),
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
