"""Typed contexts of the PDF documents, built from a revision's snapshot (never the live plan).

Each builder takes the snapshot dict (``planner.sharing.snapshot``) plus the revision's
publication facts and returns a frozen dataclass the template reads. Documents go to clients,
so the snapshot's texts are read in plain words, their sources in ``head.sources``
(:func:`planner.sharing.citations.client_snapshot`). Money stays ``Decimal``
here; it is rounded to cents only by :func:`money_text` when shown.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from planner import chartdefs, labels
from planner.engine import quote as quote_engine
from planner.labels import LINE_LABELS, label
from planner.money import format_money
from planner.pdf import svg
from planner.sharing import checklist as checklist_rules
from planner.sharing import schema
from planner.sharing.citations import client_snapshot
from planner.sharing.schema import Snapshot


def money_text(amount: Decimal | str | None, currency: str = "") -> str:
    """``1234.5`` → ``"1,234.50 EUR"``, ``"1,235 JPY"`` (:func:`planner.money.format_money`)."""
    return format_money(amount, currency)


def client_view(snapshot: dict | Snapshot, *, audience: str = "client") -> Snapshot:
    """The typed client copy of a snapshot: plain words, sources in an appendix, and what a
    client may not see (suppliers, the consultant's instructions) taken out — the one place
    every client surface reads a snapshot through (:func:`client_snapshot`). The internal cost
    sheet asks for ``audience="internal"``: plain words, suppliers kept.

    Any stored schema version is read (``planner.sharing.schema.load`` upgrades older ones).
    """
    if isinstance(snapshot, Snapshot):
        if getattr(snapshot, "audience", None) == audience:
            return snapshot
        snapshot = snapshot.model_dump(mode="json")
    return schema.load(client_snapshot(snapshot, audience=audience))


def _date(value: str | None) -> date | None:
    return date.fromisoformat(value[:10]) if value else None


def _amount(money: schema.Money | None) -> Decimal | None:
    return money.amount if money else None


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
    open_items: tuple[schema.OpenItem, ...] = ()  # published with results not current: which


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
        open_items=tuple(snapshot.open_items),
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
    priced: bool = True  # False: no offer, no rule or no rate — shown "not priced", never 0
    site: str = ""  # the site the units go to ("" = plan-wide, or a revision before sites)


@dataclass(frozen=True)
class CostSheetContext:
    """The consultancy's internal cost sheet: suppliers, buy prices, landed cost, markups.

    Never shown to a client (not a share-link document kind); the client's quote is
    :class:`QuoteContext`, in sell prices only.
    """

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
    total_vat_not_recoverable: Decimal
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
    unpriced_lines: int = 0  # lines left out of the totals (the totals are then incomplete)
    # the snapshot's quote.sell (markups, margin); unavailable in revisions without one
    sell: schema.Sell = field(default_factory=lambda: schema.Sell(available=False))
    vat_treatment: str = ""
    # conditional duties left out of the landed cost: (line, measure) and their total exposure
    measures_to_confirm: tuple[tuple[str, schema.MeasureToConfirm], ...] = ()
    exposure_to_confirm: Decimal = Decimal(0)
    # conditional duties the consultant decided: (line, measure), with the reason
    measures_decided: tuple[tuple[str, schema.MeasureDecided], ...] = ()

    @property
    def offers_expired(self) -> bool:
        """True when an offer in the quote expired before the quote's date."""
        return self.valid_until < self.quote_date


def _publication_date(head: dict, quote: schema.Quote) -> date | None:
    """The quote's date: the revision's publication date (the snapshot's date for older
    callers without one) — never the day the document happens to be rendered."""
    published = head.get("published_at")
    if published is not None:
        return published.date() if isinstance(published, datetime) else published
    return _date(quote.date)


def _valid_until(quote: schema.Quote, quote_date: date | None) -> date | None:
    return _date(quote.valid_until) or quote_date


def cost_sheet_context(snapshot: dict | Snapshot, **head) -> CostSheetContext:
    """The internal cost sheet of a revision: BOM lines with suppliers, landed cost, totals,
    markups and margin, lead times and terms."""
    snap = client_view(snapshot, audience="internal")
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
                priced=row.is_priced,
                site=row.site,
            )
        )

    def total(name: str) -> Decimal:
        return _amount(bom.totals.get(name)) or Decimal(0)

    leads = [x.lead_time_days for x in lines if x.lead_time_days is not None]
    quote_date = _publication_date(head, quote)
    return CostSheetContext(
        head=document_head(snap, title="Internal cost sheet", **head),
        number=quote.number,
        quote_date=quote_date,
        valid_until=_valid_until(quote, quote_date),
        lines=tuple(lines),
        totals_by_currency=tuple((t.currency, t.amount) for t in bom.totals_by_currency),
        total_goods=total("goods"),
        total_freight=total("freight") + total("insurance") + total("brokerage"),
        total_duty=total("duty"),
        total_vat=total("vat"),
        total_vat_recoverable=total("vat_recoverable"),
        total_vat_not_recoverable=_amount(bom.vat_not_recoverable) or Decimal(0),
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
        unpriced_lines=bom.unpriced_count,
        sell=quote.sell or schema.Sell(available=False),
        vat_treatment=snap.plan.client.vat_treatment,
        measures_to_confirm=tuple(
            (row.description + (f" ({row.site})" if row.site else ""), m)
            for row in bom.lines
            for m in row.measures_to_confirm
        ),
        exposure_to_confirm=_amount(bom.exposure_to_confirm) or Decimal(0),
        measures_decided=tuple(
            (row.description + (f" ({row.site})" if row.site else ""), m)
            for row in bom.lines
            for m in row.measures_decided
        ),
    )


@dataclass(frozen=True)
class SellLine:
    """One line of the client's quote: quantity, unit sell price and amount (None = not
    priced)."""

    position: int
    description: str
    quantity: int
    unit_sell: Decimal | None
    sell: Decimal | None
    lead_time_days: int | None
    site: str = ""  # the site the units go to ("" = plan-wide, or a revision before sites)
    category: str = ""


@dataclass(frozen=True)
class FeeLine:
    description: str
    quantity: Decimal
    unit: str
    unit_price: Decimal
    amount: Decimal


@dataclass(frozen=True)
class QuoteContext:
    """The client's quote: sell prices only (no supplier, no buy price, no margin)."""

    head: DocumentHead
    number: str
    quote_date: date | None
    valid_until: date | None
    lines: tuple[SellLine, ...]  # the hardware, delivered
    fees: tuple[FeeLine, ...]
    goods_total: Decimal  # the hardware lines (priced ones)
    fees_total: Decimal  # services and fees: the BOM's service lines and the fees
    total: Decimal
    unpriced_lines: int
    payment_terms: str  # the free text of a revision published before commercial terms
    terms: tuple[str, ...]  # the organisation's general terms
    longest_lead_time_days: int | None
    go_live: date | None
    target_go_live: date | None
    power_ready: date | None
    destination: str
    available: bool
    reason: str = ""
    deployment: schema.Deployment | None = None  # servers, GPUs, power, racks as planned
    service_lines: tuple[SellLine, ...] = ()  # BOM services (installation, burn-in, support)
    # payment milestones, delivery, warranty: the one source every page of the quote prints
    commercial: schema.CommercialTerms | None = None
    vat_treatment: str = ""  # the client's VAT treatment in words ("" in older revisions)
    vat_not_recoverable: Decimal = Decimal(0)  # VAT the client bears, at cost
    total_to_client: Decimal | None = None  # total + vat_not_recoverable
    buys_hardware: bool = True  # False: the chosen option (the public cloud) buys none
    option_text: str = ""  # what the BOM buys, in one sentence

    @property
    def complete(self) -> bool:
        return self.unpriced_lines == 0

    @property
    def offers_expired(self) -> bool:
        return bool(self.valid_until and self.quote_date and self.valid_until < self.quote_date)


def _sell(snap: Snapshot) -> schema.Sell:
    """The quote's sell side (sold at landed cost in revisions from before markups)."""
    return snap.quote.sell or schema.Sell.at_landed_cost(snap.bom)


def quote_context(snapshot: dict | Snapshot, **head) -> QuoteContext:
    """The client's quote of a revision: sell prices, services and fees, payment terms,
    validity, lead times; dated by the revision's publication."""
    snap = client_view(snapshot)
    bom, quote, timeline = snap.bom, snap.quote, snap.timeline
    sell = _sell(snap)
    # Without a priced BOM there is nothing to sell line by line (services and fees remain).
    sell_lines = sell.lines if bom.available else []
    every_line = [
        SellLine(
            position=i, description=row.description, quantity=row.quantity,
            unit_sell=row.unit_sell, sell=row.sell,
            lead_time_days=bom.lines[i - 1].lead_time_days if i <= len(bom.lines) else None,
            site=bom.lines[i - 1].site if i <= len(bom.lines) else "",
            category=row.category or (bom.lines[i - 1].category if i <= len(bom.lines) else ""),
        )
        for i, row in enumerate(sell_lines, start=1)
    ]  # fmt: skip
    # Services bought with the hardware go with the fees, not under "Hardware, delivered".
    # (numbered in the order printed: the hardware, then the services)
    grouped = [x for x in every_line if x.category != quote_engine.SERVICE_CATEGORY]
    grouped += [x for x in every_line if x.category == quote_engine.SERVICE_CATEGORY]
    grouped = [replace(x, position=i) for i, x in enumerate(grouped, start=1)]
    lines = tuple(x for x in grouped if x.category != quote_engine.SERVICE_CATEGORY)
    service_lines = tuple(x for x in grouped if x.category == quote_engine.SERVICE_CATEGORY)
    hardware_total, services_total = quote_engine.group_sells(
        (x.category, x.sell) for x in every_line
    )
    fees = tuple(FeeLine(f.description, f.quantity, f.unit, f.unit_price, f.amount)
                 for f in sell.fees)  # fmt: skip
    leads = [x.lead_time_days for x in every_line if x.lead_time_days is not None]
    quote_date = _publication_date(head, quote)
    return QuoteContext(
        head=document_head(snap, title="Quote", **head),
        number=quote.number,
        quote_date=quote_date,
        valid_until=_valid_until(quote, quote_date),
        lines=lines,
        service_lines=service_lines,
        fees=fees,
        goods_total=hardware_total,
        fees_total=services_total + sell.fees_total,
        total=sell.total_sell,
        unpriced_lines=sell.unpriced_lines,
        payment_terms="" if sell.commercial_terms else sell.payment_terms,
        commercial=sell.commercial_terms,
        terms=tuple(quote.terms),
        longest_lead_time_days=max(leads) if leads else None,
        go_live=_date(timeline.go_live),
        target_go_live=_date(snap.plan.target_go_live),
        power_ready=_date(timeline.power_ready),
        destination=bom.destination,
        buys_hardware=bom.buys_hardware,
        option_text=bom.option_text,
        available=bom.available and sell.available,
        reason=(bom.reason or "") or (sell.reason or ""),
        deployment=snap.deployment if snap.deployment.available else None,
        vat_treatment=sell.vat_treatment or snap.plan.client.vat_treatment,
        vat_not_recoverable=sell.vat_not_recoverable,
        total_to_client=sell.client_total,
    )


# --- Checklist -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChecklistContext:
    head: DocumentHead
    items: tuple[schema.ChecklistItem, ...]
    counts: dict[str, int]


def checklist_items(snapshot: dict | Snapshot) -> list[schema.ChecklistItem]:
    """The frozen checklist of a snapshot (evaluated now for snapshots that lack one)."""
    snap = schema.load(snapshot)
    if snap.checklist:
        return list(snap.checklist)
    return [
        schema.ChecklistItem.model_validate(item.as_dict())
        for item in checklist_rules.evaluate(snap.model_dump(mode="json"))
    ]


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
    workloads: tuple[schema.WorkloadSnap, ...]
    placement: schema.Placement
    sites: tuple[schema.Site, ...]
    tco: schema.Tco
    # (category, quantity, sell amount of its priced lines or None, lines not priced)
    bom_by_category: tuple[tuple[str, int, Decimal | None, int], ...]
    bom_total_net: Decimal | None
    bom_unpriced_lines: int
    timeline: schema.Timeline
    checklist: tuple[schema.ChecklistItem, ...]
    risks: tuple[str, ...]
    charts: dict[str, Chart] = field(default_factory=dict)
    operations: schema.Operations | None = None
    # Per site of a multi-site revision: (site, into, servers, racks, sell of its priced
    # lines, lines not priced); empty for revisions before sites.
    bom_by_site: tuple[tuple[str, str, int, int, Decimal | None, int], ...] = ()


_KINDS_OF_PLACEMENT = {
    "public_cloud": ("cloud_on_demand", "cloud_committed", "cloud_spot_mix"),
    "cloud": ("cloud_on_demand", "cloud_committed", "cloud_spot_mix"),
    # the one owned option of the deployment (kind: its sites' kind)
    "owned_dc": ("owned", "colocation"),
    "colocation": ("colocation", "owned"),
    "hybrid": ("hybrid",),
}


def headline_option(
    tco: schema.Tco | dict, placement: schema.Placement | dict
) -> schema.TcoOption | None:
    """The TCO option whose figures head a document: the one the placement chose.

    The chosen placement's own option (same key: a site, the hybrid); a chosen public cloud
    is its cheapest cloud option; a chosen kind without a TCO option (edge) has none. While
    nothing is chosen there is no headline option (never the cheapest: the quote prices the
    owned deployment, :func:`quoted_option`, and documents say that no option is chosen).
    """
    if isinstance(tco, dict):
        tco = schema.Tco.model_validate(tco)
    if isinstance(placement, dict):
        placement = schema.Placement.model_validate(placement)
    if not tco.available:
        return None
    key, kind = placement.chosen_key or "", placement.chosen_kind or ""
    if not (key or kind):
        return None
    same = next(  # a chosen site of the deployment leads with the deployment's one option
        (
            o
            for o in tco.options
            if key == o.key
            or (o.kind != "hybrid" and key in (_site_key(p) for p in _option_sites(o)))
        ),
        None,
    )
    if same is not None:
        return same
    wanted = _KINDS_OF_PLACEMENT.get(kind, ())
    matches = [o for o in tco.options if o.kind in wanted]
    # the cheapest by NPV (an option without one, as in old snapshots, last)
    return (
        min(matches, key=lambda o: (o.npv_amount is None, o.npv_amount or Decimal(0)))
        if matches
        else None
    )


def workload_costs(option: schema.TcoOption | None, workloads) -> tuple[dict, ...]:
    """Each workload's own cost per request in ``option`` (its share of the option's cost by
    accelerator-seconds), in the plan's order: ``{"name", "cost_per_request_amount",
    "input_amount_per_million_tokens", "output_amount_per_million_tokens"}``, amounts in the
    run's currency (``tco.currency``). Empty for a run
    made before workloads had their own figures (the option's one figure is shown then)."""
    if option is None or not option.workloads:
        return ()
    rows = []
    for w in workloads:
        cost = option.workload_cost(w.id)
        rows.append(
            {
                "name": w.name,
                "cost_per_request_amount": cost.cost_per_request_amount if cost else None,
                "input_amount_per_million_tokens": cost.input_amount_per_million_tokens
                if cost
                else None,
                "output_amount_per_million_tokens": cost.output_amount_per_million_tokens
                if cost
                else None,
            }
        )
    return tuple(rows)


def quoted_option(tco: schema.Tco | dict) -> schema.TcoOption | None:
    """The TCO option the quote prices while no option is chosen: the owned deployment (the
    BOM is generated from it), ``None`` without a finished TCO or an owned option."""
    if isinstance(tco, dict):
        tco = schema.Tco.model_validate(tco)
    if not tco.available:
        return None
    return next((o for o in tco.options if o.key == "owned"), None) or next(
        (o for o in tco.options if o.kind in ("owned", "colocation")), None
    )


def _option_sites(option: schema.TcoOption) -> list:
    """The per-site parts of the deployment's one owned option (none on other options)."""
    return list(getattr(option, "sites", None) or ())


def _site_key(part: Any) -> str:
    return part.get("key", "") if isinstance(part, dict) else getattr(part, "key", "")


def report_charts(snapshot: dict | Snapshot) -> dict[str, Chart]:
    """The report's charts as static SVG (only those the snapshot has data for)."""
    snap = schema.load(snapshot)
    charts: dict[str, Chart] = {}
    tco = snap.tco
    cur = tco.currency or "USD"
    if tco.available and (cumulative := chartdefs.tco_cumulative(tco)) is not None:
        charts["cumulative"] = Chart("cumulative", "Cumulative cost by option",
            svg.line_chart([str(m) for m in cumulative.x],
                           [svg.Series(x.label, list(x.values_amount)) for x in cumulative.lines],
                           title=cumulative.title, y_label=cumulative.y_label,
                           x_label=cumulative.x_label, label_every=6))  # fmt: skip
        cheapest = tco.cheapest_option
        if cheapest and cheapest.lines_amount:
            by_year: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
            for line, values in cheapest.lines_amount.items():
                for i, v in enumerate(values):
                    by_year[line][i // 12 + 1] += float(v)
            years = sorted({y for v in by_year.values() for y in v})
            stacks = [svg.Series(label(line, LINE_LABELS), [by_year[line].get(y, 0.0) for y in years])
                      for line in by_year]  # fmt: skip
            charts["yearly"] = Chart("yearly", f"Yearly cost of {cheapest.label}",
                svg.stacked_bar_chart([f"Year {y}" for y in years], stacks,
                                      title=f"Cost per year — {cheapest.label} ({cur})",
                                      y_label=cur))  # fmt: skip
        if (fan := chartdefs.tco_monte_carlo(tco)) is not None:
            bands = [svg.Band(f"{b.label} P10–P90", list(b.p10_amount), list(b.p50_amount),
                              list(b.p90_amount)) for b in fan.bands]  # fmt: skip
            charts["bands"] = Chart("bands", "Monte Carlo bands",
                svg.band_chart([str(m) for m in fan.x], bands, title=fan.title, y_label=fan.y_label,
                               x_label=fan.x_label, label_every=6))  # fmt: skip
        if (tornado := chartdefs.tco_tornado(tco.tornado, cur)) is not None:
            charts["tornado"] = Chart("tornado", "Sensitivity", svg.tornado_chart(tornado))
    if (gantt := chartdefs.timeline_gantt(snap.timeline)) is not None:  # the page's definition
        bars = [
            svg.GanttBar(t.label, t.start, t.finish, t.critical, tuple(
                svg.GanttSegment(s.stage, s.start, s.finish,
                                 chartdefs.GANTT_STAGES.get(s.kind, ("", svg.PALETTE[0]))[1],
                                 s.critical)
                for s in t.segments))
            for t in gantt.tasks
        ]  # fmt: skip
        marks = [(m.when, m.label, m.kind) for m in gantt.milestones]
        charts["gantt"] = Chart("gantt", "Timeline",
                                svg.gantt_chart(bars, title=gantt.title, milestones=marks))  # fmt: skip
    hourly = [w for w in snap.workloads if w.replicas_by_hour]
    if hourly:
        stacks = [svg.Series(w.name, [float(v) for v in w.replicas_by_hour]) for w in hourly]
        charts["replicas"] = Chart("replicas", "Replicas by hour",
            svg.stacked_bar_chart([f"{h:02d}" for h in range(24)], stacks,
                                  title="Replicas needed by hour of day (UTC)",
                                  y_label="replicas", x_label="hour"))  # fmt: skip
    bom = snap.bom
    if bom.available and bom.lines:
        # The client's figures: quoted (sell) amounts, never buy prices.
        sell = _sell(snap)
        categories: dict[str, float] = defaultdict(float)
        for i, line in enumerate(sell.lines):
            if line.sell is not None:  # an unpriced line is no bar at 0: left out, said
                category = line.category or bom.lines[i].category
                categories[category] += float(line.sell)
        names = sorted(categories, key=lambda c: -categories[c])
        only = ", priced lines only" if sell.unpriced_lines else ""
        if names:
            charts["bom"] = Chart("bom", "Quoted hardware by category",
                svg.stacked_bar_chart(names, [svg.Series("", [categories[c] for c in names])],
                                      title=f"Quoted hardware by category ({bom.currency}{only})",
                                      y_label=bom.currency))  # fmt: skip
    return charts


def _risks(snap: Snapshot, checklist: list[schema.ChecklistItem]) -> list[str]:
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
                risks.append(f"{site.name} — {check.title} ({check.status}): {check.reason}")
    if snap.tco.stale:
        risks.append("The TCO run predates the latest changes to the plan.")
    for problem in snap.bom.problems:
        risks.append(f"Sourcing: {problem}")
    for item in checklist:
        if item.status == checklist_rules.MISSING:
            risks.append(f"Checklist: {item.title} — missing.")
    return risks


def _what(workloads: list[schema.WorkloadSnap], deployment: schema.Deployment) -> str:
    """Each workload with its own need; the pooled deployment holds them all (its servers,
    never a sum of the workloads')."""
    what = "; ".join(
        f"{w.name} ({w.model_name}"
        + (
            f", needs {w.chosen.accelerators} × {w.chosen.accelerator_name}"
            if w.chosen
            else ", not sized yet"
        )
        + ")"
        for w in workloads
    )
    pooled = labels.pooled_into(deployment.servers) if deployment.available else ""
    return f"{what} — {pooled}" if what and pooled else what


def report_context(snapshot: dict | Snapshot, **head) -> ReportContext:
    """The plan report: summary, workloads, placement, facility, TCO, BOM, timeline, risks."""
    snap = client_view(snapshot)
    tco, timeline, placement, bom = snap.tco, snap.timeline, snap.placement, snap.bom
    chosen = headline_option(tco, placement)  # the chosen option's, not the cheapest's
    undecided = not (placement.chosen_key or placement.chosen_kind)
    quoted = quoted_option(tco) if undecided else None
    sites = snap.sites.sites
    where = placement.chosen_label or "No option chosen" + (
        f" (sites entered: {', '.join(s.name for s in sites)})" if sites else ""
    )
    # What the client reads is the quote's sell side (planner.engine.quote), not buy prices.
    sell = _sell(snap)
    categories: dict[str, list] = defaultdict(lambda: [0, None, 0])
    for i, line in enumerate(sell.lines):
        category = line.category or (bom.lines[i].category if i < len(bom.lines) else "")
        row = categories[category]
        row[0] += line.quantity
        if line.sell is not None:
            row[1] = (row[1] or Decimal(0)) + line.sell
        else:
            row[2] += 1
    by_site: dict[str, list] = {s.site: [None, 0] for s in bom.sites}
    for i, line in enumerate(sell.lines):
        site = (bom.lines[i].site if i < len(bom.lines) else "") or ""
        if site in by_site:
            if line.sell is not None:
                by_site[site][0] = (by_site[site][0] or Decimal(0)) + line.sell
            else:
                by_site[site][1] += 1
    bom_by_site = tuple(
        (s.site, s.destination, s.servers, s.racks, *by_site[s.site])
        for s in bom.sites
        if s.servers or s.racks
    )
    has_sell = bom.available and sell.available
    items = checklist_items(snap)
    return ReportContext(
        head=document_head(snap, title="Plan report", **head),
        summary={
            "what": _what(snap.workloads, snap.deployment) or "no workloads yet",
            "where": where,
            "placement_reason": placement.reason,
            "cost_per_request_amount": chosen.cost_per_request_amount if chosen else None,
            "cost_per_million_amount": chosen.cost_per_million_output_tokens_amount
            if chosen
            else None,
            "headline_label": chosen.label if chosen else "",
            # each workload its own figure (runs before that: the option's one, above)
            "per_workload": workload_costs(chosen, snap.workloads),
            "quoted_per_workload": workload_costs(quoted, snap.workloads),
            # No option chosen: said so, with the owned option the quote prices, labelled.
            "no_option_chosen": undecided,
            "quoted_label": quoted.label if quoted else "",
            "quoted_cost_per_request_amount": quoted.cost_per_request_amount if quoted else None,
            "currency": tco.currency or "USD",
            "fx": getattr(tco, "fx", None) or {},
            "go_live": timeline.go_live,
            "target_go_live": snap.plan.target_go_live,
            "quote_total": sell.total_sell if has_sell else None,
            "unpriced_lines": sell.unpriced_lines,
            "deployment": snap.deployment if snap.deployment.available else None,
        },
        workloads=tuple(snap.workloads),
        placement=placement,
        sites=tuple(sites),
        tco=tco,
        bom_by_category=tuple(
            (name, qty, amount, n) for name, (qty, amount, n) in sorted(categories.items())
        ),
        bom_total_net=sell.goods_sell if has_sell else None,  # sell, priced lines
        bom_unpriced_lines=sell.unpriced_lines,
        timeline=timeline,
        checklist=tuple(items),
        risks=tuple(_risks(snap, items)),
        charts=report_charts(snap),
        operations=snap.operations,
        bom_by_site=bom_by_site if len(bom_by_site) > 1 else (),
    )
