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
from decimal import Decimal
from typing import Any

from planner import chartdefs
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


def client_view(snapshot: dict | Snapshot) -> Snapshot:
    """The typed client copy of a snapshot: plain words, sources in an appendix.

    Any stored schema version is read (``planner.sharing.schema.load`` upgrades older ones).
    """
    if isinstance(snapshot, Snapshot):
        return (
            snapshot
            if snapshot.sources
            else schema.load(client_snapshot(snapshot.model_dump(mode="json")))
        )
    return schema.load(client_snapshot(snapshot))


def _client_dict(snapshot: dict | Snapshot) -> dict[str, Any]:
    """The client copy as validated JSON data (the builders below read it by key)."""
    return client_view(snapshot).model_dump(mode="json")


def _amount(money: dict | None) -> Decimal | None:
    return Decimal(money["amount"]) if money else None


def _line_priced(row: dict) -> bool:
    """A BOM line of a snapshot has a landed cost (older snapshots lack the ``priced`` flag)."""
    return bool(row.get("priced", row.get("landed_net") is not None)) and bool(
        row.get("landed_net")
    )


def _unpriced_lines(bom: dict) -> int:
    """How many lines the snapshot's totals leave out (counted again for older snapshots)."""
    if not bom.get("available"):
        return 0
    counted = sum(1 for row in bom.get("lines", []) if not _line_priced(row))
    return max(counted, int(bom.get("unpriced_lines") or 0))


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
    open_items: tuple[dict[str, Any], ...] = ()  # published with results not current: which


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
        open_items=tuple(snapshot.get("open_items") or ()),
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
    sell: dict = field(default_factory=dict)  # the snapshot's quote.sell (markups, margin)

    @property
    def offers_expired(self) -> bool:
        """True when an offer in the quote expired before the quote's date."""
        return self.valid_until < self.quote_date


def _publication_date(head: dict, quote: dict) -> date | None:
    """The quote's date: the revision's publication date (the snapshot's date for older
    callers without one) — never the day the document happens to be rendered."""
    published = head.get("published_at")
    if published is not None:
        return published.date() if isinstance(published, datetime) else published
    return _date(quote.get("date"))


def _valid_until(quote: dict, quote_date: date | None) -> date | None:
    return _date(quote.get("valid_until")) or quote_date


def cost_sheet_context(snapshot: dict, **head) -> CostSheetContext:
    """The internal cost sheet of a revision: BOM lines with suppliers, landed cost, totals,
    markups and margin, lead times and terms."""
    snapshot = _client_dict(snapshot)
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
                priced=_line_priced(row),
                site=row.get("site") or "",
            )
        )
    totals = bom.get("totals") or {}

    def total(name: str) -> Decimal:
        return _amount(totals.get(name)) or Decimal(0)

    leads = [x.lead_time_days for x in lines if x.lead_time_days is not None]
    quote_date = _publication_date(head, quote)
    return CostSheetContext(
        head=document_head(snapshot, title="Internal cost sheet", **head),
        number=quote.get("number", ""),
        quote_date=quote_date,
        valid_until=_valid_until(quote, quote_date),
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
        unpriced_lines=_unpriced_lines(bom),
        sell=quote.get("sell") or {},
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
    lines: tuple[SellLine, ...]
    fees: tuple[FeeLine, ...]
    goods_total: Decimal
    fees_total: Decimal
    total: Decimal
    unpriced_lines: int
    payment_terms: str
    terms: tuple[str, ...]
    longest_lead_time_days: int | None
    go_live: date | None
    target_go_live: date | None
    power_ready: date | None
    destination: str
    available: bool
    reason: str = ""

    @property
    def complete(self) -> bool:
        return self.unpriced_lines == 0

    @property
    def offers_expired(self) -> bool:
        return bool(self.valid_until and self.quote_date and self.valid_until < self.quote_date)


def _sell_of_old_snapshot(bom: dict) -> dict:
    """Revisions published before quotes had markups: sold at landed cost, no fees."""
    lines = [
        {"description": r["description"], "quantity": r.get("quantity_ordered") or r["quantity"],
         "unit_sell": None, "sell": r["landed_net"]["amount"] if _line_priced(r) else None}
        for r in bom.get("lines", [])
    ]  # fmt: skip
    total = sum((Decimal(x["sell"]) for x in lines if x["sell"] is not None), Decimal(0))
    return {"available": bool(bom.get("available")), "lines": lines, "fees": [],
            "goods_sell": str(total), "fees_total": "0", "total_sell": str(total),
            "unpriced_lines": _unpriced_lines(bom), "payment_terms": ""}  # fmt: skip


def quote_context(snapshot: dict, **head) -> QuoteContext:
    """The client's quote of a revision: sell prices, services and fees, payment terms,
    validity, lead times; dated by the revision's publication."""
    snapshot = _client_dict(snapshot)
    bom = snapshot.get("bom") or {}
    quote = snapshot.get("quote") or {}
    timeline = snapshot.get("timeline") or {}
    sell = quote.get("sell") or _sell_of_old_snapshot(bom)
    bom_rows = bom.get("lines", [])
    lines = []
    # Without a priced BOM there is nothing to sell line by line (services and fees remain).
    sell_lines = sell.get("lines", []) if bom.get("available") else []
    for i, row in enumerate(sell_lines, start=1):
        lead = bom_rows[i - 1].get("lead_time_days") if i <= len(bom_rows) else None
        site = (bom_rows[i - 1].get("site") or "") if i <= len(bom_rows) else ""
        lines.append(SellLine(
            position=i, description=row["description"], quantity=row["quantity"],
            unit_sell=Decimal(row["unit_sell"]) if row.get("unit_sell") else None,
            sell=Decimal(row["sell"]) if row.get("sell") is not None else None,
            lead_time_days=lead, site=site,
        ))  # fmt: skip
    fees = tuple(
        FeeLine(f["description"], Decimal(f["quantity"]), f["unit"], Decimal(f["unit_price"]),
                Decimal(f["amount"]))
        for f in sell.get("fees", [])
    )  # fmt: skip
    leads = [x.lead_time_days for x in lines if x.lead_time_days is not None]
    quote_date = _publication_date(head, quote)
    return QuoteContext(
        head=document_head(snapshot, title="Quote", **head),
        number=quote.get("number", ""),
        quote_date=quote_date,
        valid_until=_valid_until(quote, quote_date),
        lines=tuple(lines),
        fees=fees,
        goods_total=Decimal(sell.get("goods_sell") or 0),
        fees_total=Decimal(sell.get("fees_total") or 0),
        total=Decimal(sell.get("total_sell") or 0),
        unpriced_lines=int(sell.get("unpriced_lines") or 0),
        payment_terms=sell.get("payment_terms", ""),
        terms=tuple(quote.get("terms", [])),
        longest_lead_time_days=max(leads) if leads else None,
        go_live=_date(timeline.get("go_live")),
        target_go_live=_date(snapshot["plan"].get("target_go_live")),
        power_ready=_date(timeline.get("power_ready")),
        destination=bom.get("destination", ""),
        available=bool(bom.get("available")) and bool(sell.get("available", True)),
        reason=bom.get("reason", "") or sell.get("reason", ""),
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


def checklist_context(snapshot: dict, **head) -> ChecklistContext:
    snapshot = _client_dict(snapshot)
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
    # (category, quantity, sell amount of its priced lines or None, lines not priced)
    bom_by_category: tuple[tuple[str, int, Decimal | None, int], ...]
    bom_total_net: Decimal | None
    bom_unpriced_lines: int
    timeline: dict
    checklist: tuple[dict, ...]
    risks: tuple[str, ...]
    charts: dict[str, Chart] = field(default_factory=dict)
    operations: dict = field(default_factory=dict)
    # Per site of a multi-site revision: (site, into, servers, racks, sell of its priced
    # lines, lines not priced); empty for revisions before sites.
    bom_by_site: tuple[tuple[str, str, int, int, Decimal | None, int], ...] = ()


def _cheapest_option(tco: dict) -> dict | None:
    if not tco.get("available"):
        return None
    return next((o for o in tco.get("options", []) if o["key"] == tco.get("cheapest")), None)


def headline_option(tco: dict, placement: dict) -> dict | None:
    """The TCO option whose figures head a document: the one the placement chose.

    The chosen placement's own option (same key: a site, the hybrid); a chosen public cloud
    is its cheapest cloud option; a chosen kind without a TCO option (edge) has none. Only
    while nothing is chosen is it the cheapest option, and its label says which it is.
    """
    if not tco.get("available"):
        return None
    options = tco.get("options", [])
    key, kind = placement.get("chosen_key") or "", placement.get("chosen_kind") or ""
    if not (key or kind):
        return _cheapest_option(tco)
    same = next((o for o in options if o["key"] == key), None)
    if same is not None:
        return same
    wanted = {
        "public_cloud": ("cloud_on_demand", "cloud_committed", "cloud_spot_mix"),
        "owned_dc": ("owned",),
        "colocation": ("colocation",),
        "hybrid": ("hybrid",),
    }.get(kind, ())
    matches = [o for o in options if o["kind"] in wanted]
    return min(matches, key=lambda o: Decimal(o["npv_usd"])) if matches else None


def report_charts(snapshot: dict | Snapshot) -> dict[str, Chart]:
    """The report's charts as static SVG (only those the snapshot has data for)."""
    if isinstance(snapshot, Snapshot):
        snapshot = snapshot.model_dump(mode="json")
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
        if (tornado := chartdefs.tco_tornado(tco.get("tornado") or [])) is not None:
            charts["tornado"] = Chart("tornado", "Sensitivity", svg.tornado_chart(tornado))
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
        # The client's figures: quoted (sell) amounts, never buy prices.
        sell = (snapshot.get("quote") or {}).get("sell") or _sell_of_old_snapshot(bom)
        categories: dict[str, float] = defaultdict(float)
        for i, line in enumerate(sell.get("lines", [])):
            if line.get("sell") is not None:  # an unpriced line is no bar at 0: left out, said
                category = line.get("category") or bom["lines"][i]["category"]
                categories[category] += float(Decimal(line["sell"]))
        names = sorted(categories, key=lambda c: -categories[c])
        only = ", priced lines only" if sell.get("unpriced_lines") else ""
        if names:
            charts["bom"] = Chart("bom", "Quoted hardware by category",
                svg.stacked_bar_chart(names, [svg.Series("", [categories[c] for c in names])],
                                      title=f"Quoted hardware by category ({bom['currency']}{only})",
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
    snapshot = _client_dict(snapshot)
    tco = snapshot.get("tco") or {}
    timeline = snapshot.get("timeline") or {}
    placement = snapshot.get("placement") or {}
    cheapest = headline_option(tco, placement)  # the chosen option's, not the cheapest's
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
    # What the client reads is the quote's sell side (planner.engine.quote), not buy prices.
    sell = (snapshot.get("quote") or {}).get("sell") or _sell_of_old_snapshot(bom)
    bom_rows = bom.get("lines", [])
    categories: dict[str, list] = defaultdict(lambda: [0, None, 0])
    for i, line in enumerate(sell.get("lines", [])):
        category = line.get("category") or (bom_rows[i]["category"] if i < len(bom_rows) else "")
        row = categories[category]
        row[0] += line["quantity"]
        if line.get("sell") is not None:
            row[1] = (row[1] or Decimal(0)) + Decimal(line["sell"])
        else:
            row[2] += 1
    by_site: dict[str, list] = {s["site"]: [None, 0] for s in bom.get("sites", [])}
    for i, line in enumerate(sell.get("lines", [])):
        site = (bom_rows[i].get("site") if i < len(bom_rows) else "") or ""
        if site in by_site:
            if line.get("sell") is not None:
                by_site[site][0] = (by_site[site][0] or Decimal(0)) + Decimal(line["sell"])
            else:
                by_site[site][1] += 1
    bom_by_site = tuple(
        (s["site"], s.get("destination", ""), s.get("servers", 0), s.get("racks", 0),
         *by_site[s["site"]])
        for s in bom.get("sites", [])
        if s.get("servers") or s.get("racks")
    )  # fmt: skip
    unpriced = int(sell.get("unpriced_lines") or 0)
    has_sell = bool(bom.get("available")) and bool(sell.get("available", True))
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
            "quote_total": Decimal(sell["total_sell"]) if has_sell else None,
            "unpriced_lines": unpriced,
        },
        workloads=tuple(workloads),
        placement=placement,
        sites=tuple(sites),
        tco=tco,
        bom_by_category=tuple(
            (name, qty, amount, n) for name, (qty, amount, n) in sorted(categories.items())
        ),
        bom_total_net=Decimal(sell["goods_sell"]) if has_sell else None,  # sell, priced lines
        bom_unpriced_lines=unpriced,
        timeline=timeline,
        checklist=tuple(items),
        risks=tuple(_risks(snapshot, items)),
        charts=report_charts(snapshot),
        operations=snapshot.get("operations") or {},
        bom_by_site=bom_by_site if len(bom_by_site) > 1 else (),
    )
