"""Two revisions side by side: what changed, and what it did to cost, go-live and the pooled
deployment (servers, accelerators, kW, racks).

Plain Python over two typed snapshots (``planner.sharing.schema``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from planner.money import format_money
from planner.sharing import schema
from planner.sharing.schema import Money, Snapshot

WORKLOAD_FIELDS = (
    ("model_name", "Model"),
    ("precision", "Precision"),
    ("input_tokens_mean", "Prompt tokens (mean)"),
    ("output_tokens_mean", "Output tokens (mean)"),
    ("ttft_ms", "TTFT target, ms"),
    ("tpot_ms", "TPOT target, ms"),
    ("e2e_s", "Request time target, s"),
    ("peak_concurrency", "Peak concurrency"),
    ("peak_requests_per_s", "Peak requests/s"),
    ("headroom_pct", "Headroom, %"),
    ("n_plus_one", "N+1"),
)
CHOSEN_FIELDS = (
    ("accelerator_name", "Accelerator"),
    ("precision", "Chosen precision"),
    ("tensor_parallel", "Tensor parallel"),
    ("replicas", "Replicas"),
    ("accelerators", "Accelerators"),
    ("servers", "Servers"),
)


@dataclass(frozen=True, slots=True)
class Change:
    """One changed value: where, what, before and after (display strings)."""

    area: str
    label: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Impact:
    """A headline figure of both revisions and the difference (``delta`` as display text)."""

    label: str
    before: str
    after: str
    delta: str
    direction: str  # "up", "down" or "same"


@dataclass
class Comparison:
    """Everything the compare page shows."""

    before_number: int
    after_number: int
    impacts: list[Impact] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)


def _text(value: Any) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _money_amount(money: Money | None) -> Decimal | None:
    return money.amount if money else None


def _fmt_money(amount: Decimal | None, currency: str) -> str:
    return format_money(amount, currency)


def _direction(before, after) -> str:
    if before is None or after is None or before == after:
        return "same"
    return "up" if after > before else "down"


def _per_request(s: Snapshot, workload_id: int | None) -> Decimal | None:
    """The workload's own cost per request in the cheapest option (a run before workloads
    had their own figures: the option's one)."""
    cheapest = s.tco.cheapest_option
    if cheapest is None:
        return None
    if cheapest.workloads:
        cost = cheapest.workload_cost(workload_id) if workload_id is not None else None
        value = cost.cost_per_request_amount if cost else None
    else:
        value = cheapest.cost_per_request_amount
    return None if value is None else Decimal(str(value))


def _impacts(a: Snapshot, b: Snapshot) -> list[Impact]:
    impacts = []
    ccy_a = a.bom.currency or a.plan.currency
    ccy_b = b.bom.currency or b.plan.currency
    net_a = _money_amount(a.bom.total_net)
    net_b = _money_amount(b.bom.total_net)
    delta = (
        f"{net_b - net_a:+,.2f} {ccy_b}"
        if net_a is not None and net_b is not None and ccy_a == ccy_b
        else "—"
    )
    impacts.append(
        Impact(
            "Landed cost (net of recoverable VAT)",
            _fmt_money(net_a, ccy_a),
            _fmt_money(net_b, ccy_b),
            delta,
            _direction(net_a, net_b) if ccy_a == ccy_b else "same",
        )
    )
    # Each run's amounts are in its own currency (the plan's when it ran; USD for old runs).
    tco_a, tco_b = a.tco.currency, b.tco.currency
    same = tco_a == tco_b
    # each workload its own figure; a revision whose runs have none compares the option's one
    per_workload = [(w.id, f" of {w.name}") for w in (b.workloads or a.workloads)]
    if not any(o.workloads for o in (*a.tco.options, *b.tco.options)):
        per_workload = [(None, "")]
    for workload_id, of in per_workload:
        per_a, per_b = _per_request(a, workload_id), _per_request(b, workload_id)
        impacts.append(
            Impact(
                f"Cost per request{of} (cheapest option), {tco_b}",
                _text(per_a) + ("" if same or per_a is None else f" {tco_a}"),
                _text(per_b),
                f"{per_b - per_a:+.6f}"
                if same and per_a is not None and per_b is not None
                else "—",
                _direction(per_a, per_b) if same else "same",
            )
        )
    go_a, go_b = a.timeline.go_live, b.timeline.go_live
    days = (date.fromisoformat(go_b) - date.fromisoformat(go_a)).days if go_a and go_b else None
    impacts.append(
        Impact(
            "Go-live",
            _text(go_a),
            _text(go_b),
            "—" if days is None else f"{days:+d} days",
            "same" if not days else ("up" if days > 0 else "down"),
        )
    )
    impacts += _deployment_impacts(a.deployment, b.deployment)
    return impacts


# The pooled deployment's totals as the snapshot recorded them (never summed from workloads:
# pooling shares servers and spares between workloads, so per-workload counts do not add up).
DEPLOYMENT_FIGURES = (
    ("servers", "Servers", "{:d}"),
    ("accelerators_installed", "Accelerators installed", "{:d}"),
    ("accelerators_used", "Accelerators used at peak", "{:d}"),
    ("it_load_kw", "IT load, kW", "{:.1f}"),
    ("racks", "Racks", "{:d}"),
)


def _deployment_impacts(a: schema.Deployment, b: schema.Deployment) -> list[Impact]:
    """Servers, accelerators, kW and racks of both revisions' pooled deployments ("—" for a
    revision that recorded none: older revisions, or nothing sized yet)."""
    impacts = []
    for key, label, fmt in DEPLOYMENT_FIGURES:
        x = getattr(a, key) if a.available else None
        y = getattr(b, key) if b.available else None
        both = x is not None and y is not None
        impacts.append(
            Impact(
                label,
                "—" if x is None else fmt.format(x),
                "—" if y is None else fmt.format(y),
                ("+" if y - x >= 0 else "-") + fmt.format(abs(y - x)) if both else "—",
                _direction(x, y),
            )
        )
    return impacts


def _workload_changes(a: Snapshot, b: Snapshot) -> list[Change]:
    changes = []
    before = {w.name: w for w in a.workloads}
    after = {w.name: w for w in b.workloads}
    for name in before.keys() - after.keys():
        changes.append(Change("Workloads", name, "present", "removed"))
    for name in after.keys() - before.keys():
        changes.append(Change("Workloads", name, "—", "added"))
    for name in sorted(before.keys() & after.keys()):
        wa, wb = before[name], after[name]
        for key, label in WORKLOAD_FIELDS:
            x, y = getattr(wa, key), getattr(wb, key)
            if x != y:
                changes.append(Change(name, label, _text(x), _text(y)))
        for key, label in CHOSEN_FIELDS:
            x = getattr(wa.chosen, key) if wa.chosen else None
            y = getattr(wb.chosen, key) if wb.chosen else None
            if x != y:
                changes.append(Change(name, label, _text(x), _text(y)))
    return changes


def _bom_changes(a: Snapshot, b: Snapshot) -> list[Change]:
    changes = []
    lines_a = {x.description: x for x in a.bom.lines}
    lines_b = {x.description: x for x in b.bom.lines}
    for desc in sorted(lines_a.keys() | lines_b.keys()):
        la, lb = lines_a.get(desc), lines_b.get(desc)
        if la is None:
            changes.append(Change("BOM", desc, "—", f"added, {lb.quantity}"))
        elif lb is None:
            changes.append(Change("BOM", desc, str(la.quantity), "removed"))
        else:
            if la.quantity != lb.quantity:
                changes.append(Change("BOM", f"{desc}: quantity", str(la.quantity),
                                      str(lb.quantity)))  # fmt: skip
            if la.supplier != lb.supplier:
                changes.append(Change("BOM", f"{desc}: supplier", _text(la.supplier),
                                      _text(lb.supplier)))  # fmt: skip
    return changes


def _site_changes(a: Snapshot, b: Snapshot) -> list[Change]:
    sa = {s.name: s for s in a.sites.sites}
    sb = {s.name: s for s in b.sites.sites}
    changes = []
    for name in sorted(sa.keys() | sb.keys()):
        x, y = sa.get(name), sb.get(name)
        if x is None or y is None:
            changes.append(Change("Sites", name, "—" if x is None else "present",
                                  "added" if x is None else "removed"))  # fmt: skip
            continue
        for key, label in (("status", "Facility checks"), ("power_ready_date", "Power ready"),
                           ("racks_needed", "Racks needed")):  # fmt: skip
            if getattr(x, key) != getattr(y, key):
                changes.append(Change(name, label, _text(getattr(x, key)),
                                      _text(getattr(y, key))))  # fmt: skip
    return changes


def _checklist_changes(a: Snapshot, b: Snapshot) -> list[Change]:
    ca = {i.key: i for i in a.checklist}
    changes = []
    for item in b.checklist:
        old = ca.get(item.key)
        if old and old.status != item.status:
            changes.append(Change("Checklist", item.title, old.status_label,
                                  item.status_label))  # fmt: skip
    return changes


def _open_item_changes(a: Snapshot, b: Snapshot) -> list[Change]:
    before = {i.label: i for i in a.open_items}
    after = {i.label: i for i in b.open_items}
    changes = []
    for label in sorted(before.keys() | after.keys()):
        x, y = before.get(label), after.get(label)
        if (x.state if x else None) != (y.state if y else None):
            changes.append(Change("Open items", label, x.state if x else "current",
                                  y.state if y else "current"))  # fmt: skip
    return changes


def compare(before: dict[str, Any] | Snapshot, after: dict[str, Any] | Snapshot) -> Comparison:
    """Headline impacts and the list of changes from ``before`` to ``after``.

    Args:
        before: The older revision's snapshot (stored dict of any schema version, or typed).
        after: The newer revision's snapshot.
    """
    a, b = schema.load(before), schema.load(after)
    result = Comparison(a.revision_number or 0, b.revision_number or 0)
    result.impacts = _impacts(a, b)
    for key, label in (("name", "Plan name"), ("currency", "Currency"),
                       ("target_go_live", "Target go-live")):  # fmt: skip
        x, y = getattr(a.plan, key), getattr(b.plan, key)
        if x != y:
            result.changes.append(Change("Plan", label, _text(x), _text(y)))
    result.changes += _workload_changes(a, b)
    result.changes += _site_changes(a, b)
    result.changes += _bom_changes(a, b)
    result.changes += _checklist_changes(a, b)
    result.changes += _open_item_changes(a, b)
    return result
