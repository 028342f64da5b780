"""Typed contexts of the PDF documents, built from a revision's snapshot (never the live plan).

Each builder takes the snapshot (a stored dict of any schema version, read as the typed
:class:`planner.sharing.schema.Snapshot`) plus the revision's publication facts and returns a
frozen dataclass the template reads. Documents go to clients,
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

from planner import chartdefs
from planner.labels import LINE_LABELS, label
from planner.pdf import svg
from planner.sharing import checklist as checklist_rules
from planner.sharing import schema
from planner.sharing.citations import client_snapshot
from planner.sharing.schema import (
    Money,
    Placement,
    Site,
    Snapshot,
    Tco,
    TcoOption,
    Timeline,
    WorkloadSnap,
)

CENT = Decimal("0.01")


def money_text(amount: Decimal | str | None, currency: str = "") -> str:
    """``1234.5`` → ``"1,234.50 EUR"`` (rounded half up to cents, for display only)."""
    if amount is None or amount == "":
        return "—"
    value = Decimal(str(amount)).quantize(CENT, rounding=ROUND_HALF_UP)
    return f"{value:,.2f}" + (f" {currency}" if currency else "")


def _amount(money: Money | None) -> Decimal | None:
    return money.amount if money else None


def client_view(snapshot: dict | Snapshot) -> Snapshot:
    """The typed client copy of a snapshot: plain words, sources in an appendix."""
    if isinstance(snapshot, Snapshot):
        return (
            snapshot
            if snapshot.sources
            else schema.load(client_snapshot(snapshot.model_dump(mode="json")))
        )
    return schema.load(client_snapshot(snapshot))


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
    # Results that were not current when it was published ("publish with these open items").
    open_items: tuple[dict[str, Any], ...] = ()


def document_head(snapshot: Snapshot, *, revision_number: int, published_at, published_by: str,
                  title: str) -> DocumentHead:  # fmt: skip
    plan, client = snapshot.plan, snapshot.plan.client
    contact = ", ".join(x for x in (client.contact_name, client.contact_email) if x)
    return DocumentHead(
        consultancy=snapshot.organisation.name,
        client_name=client.name,
        client_country=client.country,
        client_contact=contact,
        plan_name=plan.name,
        currency=plan.currency,
        revision_number=revision_number,
        published_at=published_at,
        published_by=published_by,
        title=title,
        sources=tuple(snapshot.sources),
        open_items=tuple(item.model_dump() for item in snapshot.open_items),
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


def quote_context(snapshot: dict | Snapshot, **head) -> QuoteContext:
    """The quote of a revision: BOM lines, landed cost, totals, lead times and terms."""
    snap = client_view(snapshot)
    bom, quote, timeline = snap.bom, snap.quote, snap.timeline
    lines = []
    for i, row in enumerate(bom.lines, start=1):
        freight = sum(
            (_amount(getattr(row, k)) or Decimal(0)) for k in ("freight", "insurance", "brokerage")
        )
        lines.append(
            QuoteLine(
                position=i,
                description=row.description,
                supplier=row.supplier or "—",
                origin=row.origin_country,
                incoterm=row.incoterm,
                quantity=row.quantity_ordered or row.quantity,
                unit_price=_amount(row.unit_price),
                unit_currency=row.unit_price.currency if row.unit_price else "",
                goods_original=_amount(row.goods_original),
                goods=_amount(row.goods),
                freight=freight if row.freight else None,
                duty=_amount(row.duty),
                vat=_amount(row.vat),
                landed_net=_amount(row.landed_net),
                lead_time_days=row.lead_time_days,
                status=row.problem or "",
            )
        )

    def total(name: str) -> Decimal:
        return _amount(bom.totals.get(name)) or Decimal(0)

    leads = [x.lead_time_days for x in lines if x.lead_time_days is not None]
    return QuoteContext(
        head=document_head(snap, title="Quote", **head),
        number=quote.number,
        quote_date=_date(quote.date) or date.today(),
        valid_until=_date(quote.valid_until) or date.today(),
        lines=tuple(lines),
        totals_by_currency=tuple((t.currency, t.amount) for t in bom.totals_by_currency),
        total_goods=total("goods"),
        total_freight=total("freight") + total("insurance") + total("brokerage"),
        total_duty=total("duty"),
        total_vat=total("vat"),
        total_vat_recoverable=total("vat_recoverable"),
        total_gross=_amount(bom.total_gross) or Decimal(0),
        total_net=_amount(bom.total_net) or Decimal(0),
        complete=bom.complete,
        problems=tuple(bom.problems),
        as_of=_date(bom.as_of),
        destination=bom.destination,
        longest_lead_time_days=max(leads) if leads else None,
        go_live=_date(timeline.go_live),
        target_go_live=_date(snap.plan.target_go_live),
        power_ready=_date(timeline.power_ready),
        terms=tuple(quote.terms),
        available=bom.available,
        reason=bom.reason or "",
    )


# --- Checklist -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChecklistContext:
    head: DocumentHead
    items: tuple[dict[str, Any], ...]
    counts: dict[str, int]


def checklist_items(snapshot: dict | Snapshot) -> list[dict[str, Any]]:
    """The frozen checklist of a snapshot (evaluated now for snapshots that lack one)."""
    snap = schema.load(snapshot)
    if snap.checklist:
        return [item.model_dump(mode="json") for item in snap.checklist]
    return [item.as_dict() for item in checklist_rules.evaluate(snap.model_dump(mode="json"))]


def checklist_context(snapshot: dict | Snapshot, **head) -> ChecklistContext:
    snap = client_view(snapshot)
    items = checklist_items(snap)
    return ChecklistContext(
        head=document_head(snap, title="Pre-purchase checklist", **head),
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
    workloads: tuple[WorkloadSnap, ...]
    placement: Placement
    sites: tuple[Site, ...]
    tco: Tco
    bom_by_category: tuple[tuple[str, int, Decimal], ...]
    bom_total_net: Decimal | None
    timeline: Timeline
    checklist: tuple[dict, ...]
    risks: tuple[str, ...]
    charts: dict[str, Chart] = field(default_factory=dict)


def headline_option(tco: Tco | dict, placement: Placement | dict) -> TcoOption | None:
    """The TCO option whose figures head a document: the one the placement chose.

    The chosen placement's own option (same key: a site, the hybrid); a chosen public cloud
    is its cheapest cloud option; a chosen kind without a TCO option (edge) has none. Only
    while nothing is chosen is it the cheapest option, and its label says which it is.
    """
    tco = tco if isinstance(tco, Tco) else Tco.model_validate(tco)
    if not isinstance(placement, Placement):
        placement = Placement.model_validate(placement)
    if not tco.available:
        return None
    key, kind = placement.chosen_key or "", placement.chosen_kind or ""
    if not (key or kind):
        return tco.cheapest_option
    same = next((o for o in tco.options if o.key == key), None)
    if same is not None:
        return same
    wanted = {
        "public_cloud": ("cloud_on_demand", "cloud_committed", "cloud_spot_mix"),
        "owned_dc": ("owned",),
        "colocation": ("colocation",),
        "hybrid": ("hybrid",),
    }.get(kind, ())
    matches = [o for o in tco.options if o.kind in wanted and o.npv_usd is not None]
    return min(matches, key=lambda o: o.npv_usd) if matches else None


def report_charts(snapshot: dict | Snapshot) -> dict[str, Chart]:
    """The report's charts as static SVG (only those the snapshot has data for)."""
    snap = schema.load(snapshot)
    charts: dict[str, Chart] = {}
    tco = snap.tco
    if tco.available and tco.options:
        months = [str(m) for m in tco.months]
        series = [
            svg.Series(o.label, [float(v or 0) for v in o.cumulative_usd]) for o in tco.options
        ]
        charts["cumulative"] = Chart("cumulative", "Cumulative cost by option",
            svg.line_chart(months, series, title="Cumulative cost by option (USD)",
                           y_label="USD", x_label="month", label_every=6))  # fmt: skip
        cheapest = tco.cheapest_option
        if cheapest and cheapest.lines_usd:
            by_year: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
            for line, values in cheapest.lines_usd.items():
                for i, v in enumerate(values):
                    by_year[line][i // 12 + 1] += float(v or 0)
            years = sorted({y for v in by_year.values() for y in v})
            stacks = [svg.Series(label(line, LINE_LABELS), [by_year[line].get(y, 0.0) for y in years])
                      for line in by_year]  # fmt: skip
            charts["yearly"] = Chart("yearly", f"Yearly cost of {cheapest.label}",
                svg.stacked_bar_chart([f"Year {y}" for y in years], stacks,
                                      title=f"Cost per year — {cheapest.label} (USD)",
                                      y_label="USD"))  # fmt: skip
        mc = tco.monte_carlo
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
        if (tornado := chartdefs.tco_tornado(tco.tornado)) is not None:
            charts["tornado"] = Chart("tornado", "Sensitivity", svg.tornado_chart(tornado))
    timeline = snap.timeline
    if timeline.tasks:
        bars = [svg.GanttBar(t.name, _date(t.start), _date(t.finish), t.critical)
                for t in timeline.tasks]  # fmt: skip
        charts["gantt"] = Chart("gantt", "Timeline",
            svg.gantt_chart(bars, title="Timeline to go-live",
                            milestone=_date(timeline.go_live),
                            milestone_label="go-live"))  # fmt: skip
    hourly = [w for w in snap.workloads if w.replicas_by_hour]
    if hourly:
        stacks = [svg.Series(w.name, [float(v) for v in w.replicas_by_hour]) for w in hourly]
        charts["replicas"] = Chart("replicas", "Replicas by hour",
            svg.stacked_bar_chart([f"{h:02d}" for h in range(24)], stacks,
                                  title="Replicas needed by hour of day (UTC)",
                                  y_label="replicas", x_label="hour"))  # fmt: skip
    bom = snap.bom
    if bom.available and bom.lines:
        categories: dict[str, float] = defaultdict(float)
        for line in bom.lines:
            categories[line.category] += float(_amount(line.landed_net) or 0)
        names = sorted(categories, key=lambda c: -categories[c])
        charts["bom"] = Chart("bom", "Landed cost by category",
            svg.stacked_bar_chart(names, [svg.Series("", [categories[c] for c in names])],
                                  title=f"Landed cost by category ({bom.currency})",
                                  y_label=bom.currency))  # fmt: skip
    return charts


def _risks(snap: Snapshot, checklist: list[dict]) -> list[str]:
    risks = []
    timeline = snap.timeline
    if timeline.late_against_target_days:
        risks.append(
            f"Go-live {timeline.go_live} is {timeline.late_against_target_days} days after "
            f"the target {timeline.target_go_live}."
        )
    for slip in timeline.slips:
        risks.append(f"{slip.name} slipped {slip.slip_days} days "
                     f"(moves go-live {slip.go_live_delay_days} days).")  # fmt: skip
    for site in snap.sites.sites:
        for check in site.checks:
            if check.status in ("fail", "warn"):
                risks.append(f"{site.name} — {check.title} ({check.status}): "
                             f"{check.reason}")  # fmt: skip
    if snap.tco.stale:
        risks.append("The TCO run predates the latest changes to the plan.")
    for problem in snap.bom.problems:
        risks.append(f"Sourcing: {problem}")
    for item in checklist:
        if item["status"] == checklist_rules.MISSING:
            risks.append(f"Checklist: {item['title']} — missing.")
    return risks


def report_context(snapshot: dict | Snapshot, **head) -> ReportContext:
    """The plan report: summary, workloads, placement, facility, TCO, BOM, timeline, risks."""
    snap = client_view(snapshot)
    tco, timeline, placement, bom = snap.tco, snap.timeline, snap.placement, snap.bom
    cheapest = headline_option(tco, placement)  # the chosen option's, not the cheapest's
    what = "; ".join(
        f"{w.name} ({w.model_name}"
        + (
            f" on {w.chosen.accelerators} × {w.chosen.accelerator_name}"
            if w.chosen
            else ", not sized yet"
        )  # fmt: skip
        + ")"
        for w in snap.workloads
    )
    sites = snap.sites.sites
    where = placement.chosen_label or ", ".join(s.name for s in sites) or "not decided"
    categories: dict[str, list] = defaultdict(lambda: [0, Decimal(0)])
    for line in bom.lines:
        categories[line.category][0] += line.quantity
        categories[line.category][1] += _amount(line.landed_net) or Decimal(0)
    items = checklist_items(snap)
    return ReportContext(
        head=document_head(snap, title="Plan report", **head),
        summary={
            "what": what or "no workloads yet",
            "where": where,
            "placement_reason": placement.reason or "",
            "cost_per_request_usd": cheapest.cost_per_request_usd if cheapest else None,
            "cost_per_million_usd": (
                cheapest.cost_per_million_output_tokens_usd if cheapest else None
            ),
            "cheapest_label": cheapest.label if cheapest else "",
            "go_live": timeline.go_live,
            "target_go_live": snap.plan.target_go_live,
            "total_net": bom.total_net,
        },
        workloads=tuple(snap.workloads),
        placement=placement,
        sites=tuple(sites),
        tco=tco,
        bom_by_category=tuple(
            (name, qty, amount) for name, (qty, amount) in sorted(categories.items())
        ),
        bom_total_net=_amount(bom.total_net),
        timeline=timeline,
        checklist=tuple(items),
        risks=tuple(_risks(snap, items)),
        charts=report_charts(snap),
    )
