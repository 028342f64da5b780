"""Typed contexts of the PDF documents, built from a revision's snapshot (never the live plan).

Each builder takes the snapshot dict (``planner.sharing.snapshot``) plus the revision's
publication facts and returns a frozen dataclass the template reads. Documents go to clients,
so the snapshot's texts are read in plain words, their sources in ``head.sources``
(:func:`planner.sharing.citations.client_snapshot`). Money stays ``Decimal``
here; it is rounded to cents only by :func:`money_text` when shown.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from planner.labels import DRIVER_LABELS, LINE_LABELS, label
from planner.pdf import svg
from planner.sharing import checklist as checklist_rules
from planner.sharing.citations import client_snapshot

CENT = Decimal("0.01")


def money_text(amount: Decimal | str | None, currency: str = "") -> str:
    """``1234.5`` → ``"1,234.50 EUR"`` (rounded half up to cents, for display only)."""
    if amount is None or amount == "":
        return "—"
    value = Decimal(str(amount)).quantize(CENT, rounding=ROUND_HALF_UP)
    return f"{value:,.2f}" + (f" {currency}" if currency else "")


def _amount(money: dict | None) -> Decimal | None:
    return Decimal(money["amount"]) if money else None


def _date(value: str | None) -> date | None:
    return date.fromisoformat(value[:10]) if value else None


@dataclass(frozen=True)
class DocumentHead:
    """What every document's header and footer say."""

    consultancy: str
    client_name: str
    client_country: str
    client_contact: str
    plan_name: str
    currency: str
    revision_number: int
    published_at: datetime | None
    published_by: str
    title: str
    sources: tuple[dict[str, Any], ...] = ()  # the appendix: number, title, publisher, date, url


def document_head(snapshot: dict, *, revision_number: int, published_at, published_by: str,
                  title: str) -> DocumentHead:  # fmt: skip
    plan = snapshot["plan"]
    client = plan["client"]
    contact = ", ".join(x for x in (client.get("contact_name"), client.get("contact_email")) if x)
    return DocumentHead(
        consultancy=snapshot["organisation"]["name"],
        client_name=client["name"],
        client_country=client.get("country", ""),
        client_contact=contact,
        plan_name=plan["name"],
        currency=plan["currency"],
        revision_number=revision_number,
        published_at=published_at,
        published_by=published_by,
        title=title,
        sources=tuple(snapshot.get("sources", ())),
    )


# --- Quote ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuoteLine:
    """One BOM line of the quote (amounts exact; the template formats them)."""

    position: int
    description: str
    supplier: str
    origin: str
    incoterm: str
    quantity: int
    unit_price: Decimal | None
    unit_currency: str
    goods_original: Decimal | None
    goods: Decimal | None
    freight: Decimal | None
    duty: Decimal | None
    vat: Decimal | None
    landed_net: Decimal | None
    lead_time_days: int | None
    status: str


@dataclass(frozen=True)
class QuoteContext:
    """Everything the quote shows."""

    head: DocumentHead
    number: str
    quote_date: date
    valid_until: date
    lines: tuple[QuoteLine, ...]
    totals_by_currency: tuple[tuple[str, Decimal], ...]
    total_goods: Decimal
    total_freight: Decimal
    total_duty: Decimal
    total_vat: Decimal
    total_vat_recoverable: Decimal
    total_gross: Decimal
    total_net: Decimal
    complete: bool
    problems: tuple[str, ...]
    as_of: date | None
    destination: str
    longest_lead_time_days: int | None
    go_live: date | None
    target_go_live: date | None
    power_ready: date | None
    terms: tuple[str, ...]
    available: bool
    reason: str = ""

    @property
    def offers_expired(self) -> bool:
        """True when an offer in the quote expired before the quote's date."""
        return self.valid_until < self.quote_date


def quote_context(snapshot: dict, **head) -> QuoteContext:
    """The quote of a revision: BOM lines, landed cost, totals, lead times and terms."""
    snapshot = client_snapshot(snapshot)
    bom = snapshot.get("bom") or {}
    quote = snapshot.get("quote") or {}
    timeline = snapshot.get("timeline") or {}
    lines = []
    for i, row in enumerate(bom.get("lines", []), start=1):
        freight = sum(
            (_amount(row.get(k)) or Decimal(0)) for k in ("freight", "insurance", "brokerage")
        )
        lines.append(
            QuoteLine(
                position=i,
                description=row["description"],
                supplier=row.get("supplier") or "—",
                origin=row.get("origin_country") or "",
                incoterm=row.get("incoterm") or "",
                quantity=row.get("quantity_ordered") or row["quantity"],
                unit_price=_amount(row.get("unit_price")),
                unit_currency=(row.get("unit_price") or {}).get("currency", ""),
                goods_original=_amount(row.get("goods_original")),
                goods=_amount(row.get("goods")),
                freight=freight if row.get("freight") else None,
                duty=_amount(row.get("duty")),
                vat=_amount(row.get("vat")),
                landed_net=_amount(row.get("landed_net")),
                lead_time_days=row.get("lead_time_days"),
                status=row.get("problem") or "",
            )
        )
    totals = bom.get("totals") or {}

    def total(name: str) -> Decimal:
        return _amount(totals.get(name)) or Decimal(0)

    leads = [x.lead_time_days for x in lines if x.lead_time_days is not None]
    return QuoteContext(
        head=document_head(snapshot, title="Quote", **head),
        number=quote.get("number", ""),
        quote_date=_date(quote.get("date")) or date.today(),
        valid_until=_date(quote.get("valid_until")) or date.today(),
        lines=tuple(lines),
        totals_by_currency=tuple(
            (t["currency"], Decimal(t["amount"])) for t in bom.get("totals_by_currency", [])
        ),
        total_goods=total("goods"),
        total_freight=total("freight") + total("insurance") + total("brokerage"),
        total_duty=total("duty"),
        total_vat=total("vat"),
        total_vat_recoverable=total("vat_recoverable"),
        total_gross=_amount(bom.get("total_gross")) or Decimal(0),
        total_net=_amount(bom.get("total_net")) or Decimal(0),
        complete=bool(bom.get("complete")),
        problems=tuple(bom.get("problems", [])),
        as_of=_date(bom.get("as_of")),
        destination=bom.get("destination", ""),
        longest_lead_time_days=max(leads) if leads else None,
        go_live=_date(timeline.get("go_live")),
        target_go_live=_date(snapshot["plan"].get("target_go_live")),
        power_ready=_date(timeline.get("power_ready")),
        terms=tuple(quote.get("terms", [])),
        available=bool(bom.get("available")),
        reason=bom.get("reason", ""),
    )


# --- Checklist -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChecklistContext:
    head: DocumentHead
    items: tuple[dict[str, Any], ...]
    counts: dict[str, int]


def checklist_items(snapshot: dict) -> list[dict[str, Any]]:
    """The frozen checklist of a snapshot (evaluated now for snapshots that lack one)."""
    if snapshot.get("checklist"):
        return list(snapshot["checklist"])
    return [item.as_dict() for item in checklist_rules.evaluate(snapshot)]


def checklist_context(snapshot: dict, **head) -> ChecklistContext:
    snapshot = client_snapshot(snapshot)
    items = checklist_items(snapshot)
    return ChecklistContext(
        head=document_head(snapshot, title="Pre-purchase checklist", **head),
        items=tuple(items),
        counts=checklist_rules.summary(items),
    )


# --- Plan report ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chart:
    """One chart of the report: a title for the list of figures and its SVG."""

    key: str
    title: str
    svg: str


@dataclass(frozen=True)
class ReportContext:
    head: DocumentHead
    summary: dict[str, Any]
    workloads: tuple[dict, ...]
    placement: dict
    sites: tuple[dict, ...]
    tco: dict
    bom_by_category: tuple[tuple[str, int, Decimal], ...]
    bom_total_net: Decimal | None
    timeline: dict
    checklist: tuple[dict, ...]
    risks: tuple[str, ...]
    charts: dict[str, Chart] = field(default_factory=dict)
    operations: dict = field(default_factory=dict)


def _cheapest_option(tco: dict) -> dict | None:
    if not tco.get("available"):
        return None
    return next((o for o in tco.get("options", []) if o["key"] == tco.get("cheapest")), None)


def report_charts(snapshot: dict) -> dict[str, Chart]:
    """The report's charts as static SVG (only those the snapshot has data for)."""
    charts: dict[str, Chart] = {}
    tco = snapshot.get("tco") or {}
    if tco.get("available") and tco.get("options"):
        months = [str(m) for m in tco.get("months", [])]
        series = [
            svg.Series(o["label"], [float(v) for v in o.get("cumulative_usd") or []])
            for o in tco["options"]
        ]
        charts["cumulative"] = Chart("cumulative", "Cumulative cost by option",
            svg.line_chart(months, series, title="Cumulative cost by option (USD)",
                           y_label="USD", x_label="month", label_every=6))  # fmt: skip
        cheapest = _cheapest_option(tco)
        if cheapest and cheapest.get("lines_usd"):
            by_year: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
            for line, values in cheapest["lines_usd"].items():
                for i, v in enumerate(values):
                    by_year[line][i // 12 + 1] += float(v)
            years = sorted({y for v in by_year.values() for y in v})
            stacks = [svg.Series(label(line, LINE_LABELS), [by_year[line].get(y, 0.0) for y in years])
                      for line in by_year]  # fmt: skip
            charts["yearly"] = Chart("yearly", f"Yearly cost of {cheapest['label']}",
                svg.stacked_bar_chart([f"Year {y}" for y in years], stacks,
                                      title=f"Cost per year — {cheapest['label']} (USD)",
                                      y_label="USD"))  # fmt: skip
        mc = tco.get("monte_carlo") or {}
        if mc.get("owned_p50_usd"):
            n = len(mc["owned_p50_usd"])
            bands = [
                svg.Band(f"{name} P10–P90", [float(v) for v in mc[f"{key}_p10_usd"]],
                         [float(v) for v in mc[f"{key}_p50_usd"]],
                         [float(v) for v in mc[f"{key}_p90_usd"]])
                for key, name in (("owned", "Owned"), ("cloud", "Cloud"))
                if mc.get(f"{key}_p50_usd")
            ]  # fmt: skip
            charts["bands"] = Chart("bands", "Monte Carlo bands",
                svg.band_chart([str(i + 1) for i in range(n)], bands,
                               title="Cumulative cost, Monte Carlo P10/P50/P90 (USD)",
                               y_label="USD", x_label="month", label_every=6))  # fmt: skip
        if tco.get("tornado"):
            bars = [svg.RangeBar(label(b["driver"], DRIVER_LABELS), float(b["low_value_usd"]),
                                 float(b["high_value_usd"])) for b in tco["tornado"]]  # fmt: skip
            base = float(tco["tornado"][0]["base_value_usd"])
            charts["tornado"] = Chart("tornado", "Sensitivity",
                svg.range_bar_chart(bars, title="Sensitivity of the owned cost (USD, ±20 %)",
                                    base=base, x_label="net cost, USD"))  # fmt: skip
    timeline = snapshot.get("timeline") or {}
    if timeline.get("tasks"):
        bars = [svg.GanttBar(t["name"], _date(t["start"]), _date(t["finish"]), t["critical"])
                for t in timeline["tasks"]]  # fmt: skip
        charts["gantt"] = Chart("gantt", "Timeline",
            svg.gantt_chart(bars, title="Timeline to go-live",
                            milestone=_date(timeline.get("go_live")),
                            milestone_label="go-live"))  # fmt: skip
    hourly = [w for w in snapshot.get("workloads", []) if w.get("replicas_by_hour")]
    if hourly:
        stacks = [svg.Series(w["name"], [float(v) for v in w["replicas_by_hour"]]) for w in hourly]
        charts["replicas"] = Chart("replicas", "Replicas by hour",
            svg.stacked_bar_chart([f"{h:02d}" for h in range(24)], stacks,
                                  title="Replicas needed by hour of day (UTC)",
                                  y_label="replicas", x_label="hour"))  # fmt: skip
    bom = snapshot.get("bom") or {}
    if bom.get("available") and bom.get("lines"):
        categories: dict[str, float] = defaultdict(float)
        for line in bom["lines"]:
            categories[line["category"]] += float(_amount(line.get("landed_net")) or 0)
        names = sorted(categories, key=lambda c: -categories[c])
        charts["bom"] = Chart("bom", "Landed cost by category",
            svg.stacked_bar_chart(names, [svg.Series("", [categories[c] for c in names])],
                                  title=f"Landed cost by category ({bom['currency']})",
                                  y_label=bom["currency"]))  # fmt: skip
    return charts


def _risks(snapshot: dict, checklist: list[dict]) -> list[str]:
    risks = []
    timeline = snapshot.get("timeline") or {}
    if timeline.get("late_against_target_days"):
        risks.append(
            f"Go-live {timeline['go_live']} is {timeline['late_against_target_days']} days after "
            f"the target {timeline['target_go_live']}."
        )
    for slip in timeline.get("slips", []):
        risks.append(f"{slip['name']} slipped {slip['slip_days']} days "
                     f"(moves go-live {slip['go_live_delay_days']} days).")  # fmt: skip
    for site in (snapshot.get("sites") or {}).get("sites", []):
        for check in site.get("checks", []):
            if check["status"] in ("fail", "warn"):
                risks.append(f"{site['name']} — {check['title']} ({check['status']}): "
                             f"{check['reason']}")  # fmt: skip
    tco = snapshot.get("tco") or {}
    if tco.get("stale"):
        risks.append("The TCO run predates the latest changes to the plan.")
    for problem in (snapshot.get("bom") or {}).get("problems", []):
        risks.append(f"Sourcing: {problem}")
    for item in checklist:
        if item["status"] == checklist_rules.MISSING:
            risks.append(f"Checklist: {item['title']} — missing.")
    return risks


def report_context(snapshot: dict, **head) -> ReportContext:
    """The plan report: summary, workloads, placement, facility, TCO, BOM, timeline, risks."""
    snapshot = client_snapshot(snapshot)
    tco = snapshot.get("tco") or {}
    cheapest = _cheapest_option(tco)
    timeline = snapshot.get("timeline") or {}
    placement = snapshot.get("placement") or {}
    bom = snapshot.get("bom") or {}
    workloads = snapshot.get("workloads", [])
    what = "; ".join(
        f"{w['name']} ({w['model_name']}"
        + (
            f" on {w['chosen']['accelerators']} × {w['chosen']['accelerator_name']}"
            if w.get("chosen")
            else ", not sized yet"
        )  # fmt: skip
        + ")"
        for w in workloads
    )
    sites = (snapshot.get("sites") or {}).get("sites", [])
    where = placement.get("chosen_label") or ", ".join(s["name"] for s in sites) or "not decided"
    categories: dict[str, list] = defaultdict(lambda: [0, Decimal(0)])
    for line in bom.get("lines", []):
        categories[line["category"]][0] += line["quantity"]
        categories[line["category"]][1] += _amount(line.get("landed_net")) or Decimal(0)
    items = checklist_items(snapshot)
    return ReportContext(
        head=document_head(snapshot, title="Plan report", **head),
        summary={
            "what": what or "no workloads yet",
            "where": where,
            "placement_reason": placement.get("reason", ""),
            "cost_per_request_usd": cheapest.get("cost_per_request_usd") if cheapest else None,
            "cost_per_million_usd": (
                cheapest.get("cost_per_million_output_tokens_usd") if cheapest else None
            ),
            "cheapest_label": cheapest["label"] if cheapest else "",
            "go_live": timeline.get("go_live"),
            "target_go_live": snapshot["plan"].get("target_go_live"),
            "total_net": bom.get("total_net"),
        },
        workloads=tuple(workloads),
        placement=placement,
        sites=tuple(sites),
        tco=tco,
        bom_by_category=tuple(
            (name, qty, amount) for name, (qty, amount) in sorted(categories.items())
        ),
        bom_total_net=_amount(bom.get("total_net")),
        timeline=timeline,
        checklist=tuple(items),
        risks=tuple(_risks(snapshot, items)),
        charts=report_charts(snapshot),
        operations=snapshot.get("operations") or {},
    )
