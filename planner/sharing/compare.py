"""Two revisions side by side: what changed, and what it did to cost, go-live and capacity.

Plain Python over two snapshots (``planner.sharing.snapshot``); no Django.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from planner.money import format_money

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


def _money_amount(money: dict | None) -> Decimal | None:
    return Decimal(money["amount"]) if money else None


def _fmt_money(amount: Decimal | None, currency: str) -> str:
    return format_money(amount, currency)


def _direction(before, after) -> str:
    if before is None or after is None or before == after:
        return "same"
    return "up" if after > before else "down"


def _capacity(s: dict) -> dict[str, int]:
    totals = {"replicas": 0, "accelerators": 0, "servers": 0}
    for w in s.get("workloads") or []:
        for key in totals:
            totals[key] += ((w.get("chosen") or {}).get(key)) or 0
    return totals


def _cheapest(s: dict) -> dict | None:
    tco = s.get("tco") or {}
    if not tco.get("available"):
        return None
    return next((o for o in tco.get("options", []) if o["key"] == tco.get("cheapest")), None)


def _impacts(a: dict, b: dict) -> list[Impact]:
    impacts = []
    ccy_a = (a.get("bom") or {}).get("currency") or a["plan"]["currency"]
    ccy_b = (b.get("bom") or {}).get("currency") or b["plan"]["currency"]
    net_a = _money_amount((a.get("bom") or {}).get("total_net"))
    net_b = _money_amount((b.get("bom") or {}).get("total_net"))
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
    cheap_a, cheap_b = _cheapest(a), _cheapest(b)
    per_a = Decimal(cheap_a["cost_per_request_usd"]) if cheap_a and cheap_a.get(
        "cost_per_request_usd") else None  # fmt: skip
    per_b = Decimal(cheap_b["cost_per_request_usd"]) if cheap_b and cheap_b.get(
        "cost_per_request_usd") else None  # fmt: skip
    impacts.append(
        Impact(
            "Cost per request (cheapest option), USD",
            _text(per_a),
            _text(per_b),
            f"{per_b - per_a:+.6f}" if per_a is not None and per_b is not None else "—",
            _direction(per_a, per_b),
        )
    )
    go_a = (a.get("timeline") or {}).get("go_live")
    go_b = (b.get("timeline") or {}).get("go_live")
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
    cap_a, cap_b = _capacity(a), _capacity(b)
    for key, label in (("accelerators", "Accelerators"), ("servers", "Servers"),
                       ("replicas", "Replicas")):  # fmt: skip
        impacts.append(
            Impact(
                label,
                str(cap_a[key]),
                str(cap_b[key]),
                f"{cap_b[key] - cap_a[key]:+d}",
                _direction(cap_a[key], cap_b[key]),
            )
        )
    return impacts


def _workload_changes(a: dict, b: dict) -> list[Change]:
    changes = []
    before = {w["name"]: w for w in a.get("workloads") or []}
    after = {w["name"]: w for w in b.get("workloads") or []}
    for name in before.keys() - after.keys():
        changes.append(Change("Workloads", name, "present", "removed"))
    for name in after.keys() - before.keys():
        changes.append(Change("Workloads", name, "—", "added"))
    for name in sorted(before.keys() & after.keys()):
        wa, wb = before[name], after[name]
        for key, label in WORKLOAD_FIELDS:
            if wa.get(key) != wb.get(key):
                changes.append(Change(name, label, _text(wa.get(key)), _text(wb.get(key))))
        ca, cb = wa.get("chosen") or {}, wb.get("chosen") or {}
        for key, label in CHOSEN_FIELDS:
            if ca.get(key) != cb.get(key):
                changes.append(Change(name, label, _text(ca.get(key)), _text(cb.get(key))))
    return changes


def _bom_changes(a: dict, b: dict) -> list[Change]:
    changes = []
    lines_a = {x["description"]: x for x in (a.get("bom") or {}).get("lines", [])}
    lines_b = {x["description"]: x for x in (b.get("bom") or {}).get("lines", [])}
    for desc in sorted(lines_a.keys() | lines_b.keys()):
        la, lb = lines_a.get(desc), lines_b.get(desc)
        if la is None:
            changes.append(Change("BOM", desc, "—", f"added, {lb['quantity']}"))
        elif lb is None:
            changes.append(Change("BOM", desc, str(la["quantity"]), "removed"))
        else:
            if la["quantity"] != lb["quantity"]:
                changes.append(Change("BOM", f"{desc}: quantity", str(la["quantity"]),
                                      str(lb["quantity"])))  # fmt: skip
            if la.get("supplier") != lb.get("supplier"):
                changes.append(Change("BOM", f"{desc}: supplier", _text(la.get("supplier")),
                                      _text(lb.get("supplier"))))  # fmt: skip
    return changes


def _site_changes(a: dict, b: dict) -> list[Change]:
    sa = {s["name"]: s for s in (a.get("sites") or {}).get("sites", [])}
    sb = {s["name"]: s for s in (b.get("sites") or {}).get("sites", [])}
    changes = []
    for name in sorted(sa.keys() | sb.keys()):
        x, y = sa.get(name), sb.get(name)
        if x is None or y is None:
            changes.append(Change("Sites", name, "—" if x is None else "present",
                                  "added" if x is None else "removed"))  # fmt: skip
            continue
        for key, label in (("status", "Facility checks"), ("power_ready_date", "Power ready"),
                           ("racks_needed", "Racks needed")):  # fmt: skip
            if x.get(key) != y.get(key):
                changes.append(Change(name, label, _text(x.get(key)), _text(y.get(key))))
    return changes


def _checklist_changes(a: dict, b: dict) -> list[Change]:
    ca = {i["key"]: i for i in a.get("checklist") or []}
    changes = []
    for item in b.get("checklist") or []:
        old = ca.get(item["key"])
        if old and old["status"] != item["status"]:
            changes.append(Change("Checklist", item["title"], old["status_label"],
                                  item["status_label"]))  # fmt: skip
    return changes


def compare(before: dict[str, Any], after: dict[str, Any]) -> Comparison:
    """Headline impacts and the list of changes from ``before`` to ``after``.

    Args:
        before: The older revision's snapshot.
        after: The newer revision's snapshot.
    """
    result = Comparison(before.get("revision_number") or 0, after.get("revision_number") or 0)
    result.impacts = _impacts(before, after)
    pa, pb = before.get("plan", {}), after.get("plan", {})
    for key, label in (("name", "Plan name"), ("currency", "Currency"),
                       ("target_go_live", "Target go-live")):  # fmt: skip
        if pa.get(key) != pb.get(key):
            result.changes.append(Change("Plan", label, _text(pa.get(key)), _text(pb.get(key))))
    result.changes += _workload_changes(before, after)
    result.changes += _site_changes(before, after)
    result.changes += _bom_changes(before, after)
    result.changes += _checklist_changes(before, after)
    return result
