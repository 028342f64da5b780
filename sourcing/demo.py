"""The demo plan's sourcing: two fictional distributors with offers in EUR and USD, FX rates,
the tariff seed, and — when the workloads have a chosen configuration — a generated BOM, two
purchase orders (one delivered on time, one shipped late) and the daily check's flags.

Appended to ``planner.demo.DEMO_EXTENSIONS`` (after sizing and facility, whose sites give the
destination and the power-ready date). The companies are fictional; each price says next to
it where it comes from: a public list or street price (with the discount assumed), or "no
public price found" where the sources read (../shared/data/servers.csv,
../shared/reference/facility_tco_sourcing.md and the stored public pages) have none.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from django.utils import timezone

from catalog.models import Part, ServerPlatform
from planner.facility.deployment import plan_deployment
from planner.facility.models import PlacementDecision
from sourcing import services
from sourcing.models import (
    BomLine,
    FxRate,
    Offer,
    OfferPriceBreak,
    PurchaseOrder,
    SourcingSettings,
    Supplier,
    TariffRule,
)

D = Decimal
# Dates are relative to the day the demo is built, so its offers are current whenever
# `make run` loads it: the orders were placed about four months ago.
ORDER_DAYS_AGO = 118
FX_SOURCE = "demo figure (fictional) — replace with the ECB euro reference rate of the day"
# (from, to, rate, days before the order date; negative = after it)
DEMO_FX = [
    ("EUR", "USD", D("1.0870"), 3),
    ("EUR", "USD", D("1.0790"), -88),
    ("EUR", "GBP", D("0.8460"), 3),
]


def _order_date() -> date:
    return timezone.localdate() - timedelta(days=ORDER_DAYS_AGO)


def _days_from_order(days: int) -> date:
    """A date ``days`` after the demo's order date (negative: before it)."""
    return _order_date() + timedelta(days=days)


NL_DISTRIBUTOR = {
    "name": "Lowlands Compute Distributie B.V.",
    "country": "NL",
    "contact_name": "Joris van Dijk",
    "contact_email": "joris.vandijk@lowlands-compute.example",
    "notes": "Fictional Dutch distributor for the demo: stock in Venlo, delivers DAP site.",
}
US_DISTRIBUTOR = {
    "name": "Prairie Systems Supply, Inc.",
    "country": "US",
    "contact_name": "Dana Whitfield",
    "contact_email": "dana.whitfield@prairie-systems.example",
    "notes": "Fictional US distributor for the demo: ships FCA Chicago O'Hare.",
}
# Public figures the prices below rest on (the stored copies named in
# ../shared/reference/facility_tco_sourcing.md §B2 unless said otherwise):
# - DGX B200: "$515K" per system, a March 2025 blog post on a DGX B200 delivery
#   (https://vengineer.hatenablog.com/entry/2025/03/16/080000, secondary; NVIDIA publishes no
#   list price and servers.csv has none). 515,000 USD = 473,781 EUR at the demo's 1.0870.
# - 64-port 400G InfiniBand switch: about 36,000 USD (FS.com) against about 50,000 USD from
#   NVIDIA (https://substack.tech-talk-cto.com/p/h100-freakonomics-the-economical, tertiary).
# - Vendor support: about 20 % of the hardware list price per year (DGX H100 example,
#   https://www.supercluster.blog/p/4-nvidia-dgx-h100-hardware, tertiary, low confidence).
# No public price was found for the other parts and services: their figures are the demo's
# own round estimates, marked "no public price found".
DGX_B200_STREET_USD = D("515000")
DGX_B200_STREET_EUR = D("474000")  # 515,000 USD / 1.0870 = 473,781 EUR, to the thousand
# (part slug, unit price, lead days, origin, breaks) — EUR from the Dutch distributor (DAP).
NL_PART_OFFERS = [
    # 36,000 USD (FS.com figure above) / 1.0870 = 33,119 EUR, to the hundred.
    ("switch-ib-64x400g", D("33100"), 56, "TW", ()),
    ("nic-400g", D("1150"), 42, "TW", ((32, D("1090")), (64, D("1040")))),  # no public price found
    ("optic-400g", D("780"), 150, "CN", ((100, D("740")),)),  # no public price found
    ("cable-fiber-mpo", D("95"), 14, "CN", ()),  # no public price found
    ("rack-42u", D("1650"), 21, "NL", ()),  # no public price found
    ("pdu-3ph-415v-32a", D("2200"), 35, "DE", ()),  # no public price found
    ("storage-nvme-7.68tb", D("820"), 28, "KR", ()),  # no public price found
    ("nic-eth-front-end", D("690"), 30, "TW", ((16, D("655")),)),  # no public price found
    ("switch-eth-front-end", D("14800"), 42, "TW", ()),  # no public price found
    # The front-end links' optics run at its switches' 100G; no public price found.
    ("optic-100g-qsfp28", D("120"), 30, "CN", ((100, D("110")),)),
]
# USD from the US distributor (FCA): faster optics (backordered in Europe), and servers.
# Its optics are made in Thailand and its fibre cables in Mexico: into the US they carry no
# Section 301 duty, where China-origin ones have duty "unknown — confirm" (the Ashburn site).
US_PART_OFFERS = [
    ("optic-400g", D("720"), 95, "TH", ((100, D("690")),)),  # no public price found
    ("cable-fiber-mpo", D("118"), 10, "MX", ()),  # no public price found
    ("switch-ib-64x400g", D("36000"), 70, "US", ()),  # the FS.com figure above
    ("pdu-3ph-208v-60a", D("2650"), 21, "US", ()),  # no public price found
    ("pdu-3ph-208v-30a", D("1900"), 21, "US", ()),  # no public price found
    ("switch-eth-front-end", D("16200"), 35, "US", ()),  # no public price found
    ("optic-100g-qsfp28", D("135"), 21, "TH", ()),  # no public price found
]
# Support is sold for a term, paid once (as NVIDIA's partners sell DGX support): 3 years at
# 20 % of the server's street price a year (figure above) = 0.60 × 474,000 = 284,400 EUR per
# server. Installation and burn-in: no public price found (the demo's per-server estimates).
SUPPORT_TERM_YEARS = 3
SERVICES = [
    ("installation", D("2400"), None),
    ("burn-in", D("900"), None),
    ("support", D("0.20") * SUPPORT_TERM_YEARS * DGX_B200_STREET_EUR, SUPPORT_TERM_YEARS),
]
FALLBACK_SERVERS = ("nvidia-dgx-h100", "nvidia-dgx-h200")


def _offer(supplier, *, currency, incoterm, quoted, valid, **values) -> Offer:
    breaks = values.pop("breaks", ())
    offer = Offer.objects.create(
        supplier=supplier, currency=currency, incoterm=incoterm, quoted_on=quoted,
        valid_until=valid, **values,
    )  # fmt: skip
    for qty, price in breaks:
        OfferPriceBreak.objects.create(offer=offer, min_qty=qty, unit_price=price)
    return offer


def _part_offers(nl: Supplier, us: Supplier) -> None:
    parts = {p.slug: p for p in Part.objects.all()}
    quoted, valid = _days_from_order(-14), _days_from_order(150)
    for slug, price, lead, origin, breaks in NL_PART_OFFERS:
        if slug in parts:
            _offer(nl, part=parts[slug], unit_price=price, lead_time_days=lead,
                   origin_country=origin, breaks=breaks, currency="EUR", incoterm="DAP",
                   quoted=quoted, valid=valid)  # fmt: skip
    for slug, price, lead, origin, breaks in US_PART_OFFERS:
        if slug in parts:
            _offer(us, part=parts[slug], unit_price=price, lead_time_days=lead,
                   origin_country=origin, breaks=breaks, currency="USD", incoterm="FCA",
                   quoted=_days_from_order(-10), valid=_days_from_order(160),
                   freight_per_unit=D("6"), unit_weight_kg=D("0.2"))  # fmt: skip
    for service, price, term_years in SERVICES:
        _offer(nl, service=service, unit_price=price, term_years=term_years, lead_time_days=0,
               origin_country="NL", currency="EUR", incoterm="DAP", quoted=quoted,
               valid=valid)  # fmt: skip


def _server_offers(nl: Supplier, us: Supplier, servers) -> None:
    for server in servers:
        if Offer.objects.filter(supplier__in=[nl, us], server=server).exists():
            continue
        # The US distributor: 5 % under the 515,000 USD street price (figure above), to the
        # thousand; the Dutch one at the street price in EUR. The DGX H100/H200 fallbacks (a
        # plan not sized yet) take the same figures: no public price of their own was found.
        # Weight 142.4 kg: NVIDIA's DGX B200 user guide; freight: no public price found.
        _offer(us, server=server, unit_price=D("489000"), lead_time_days=90,
               origin_country="US", freight_per_unit=D("2400"), unit_weight_kg=D("142.4"),
               currency="USD", incoterm="FCA", quoted=_days_from_order(-10),
               valid=_days_from_order(160))  # fmt: skip
        _offer(nl, server=server, unit_price=DGX_B200_STREET_EUR, lead_time_days=140,
               origin_country="TW", currency="EUR", incoterm="DAP",
               quoted=_days_from_order(-14), valid=_days_from_order(150))  # fmt: skip
        # An old quote, expired before the order date: flagged, never used (its price, 2 %
        # under today's, is the demo's own figure).
        _offer(nl, server=server, unit_price=D("464000"), lead_time_days=120,
               origin_country="TW", currency="EUR", incoterm="DAP",
               quoted=_days_from_order(-154), valid=_days_from_order(-64),
               notes="Older quote, kept for comparison.")  # fmt: skip


def _site_country(plan) -> str:
    """The country the demo's orders ship to: the placement's chosen site, else the first."""
    sites = getattr(plan, "sites", None)
    if sites is None:
        return "NL"
    # Read the decision from the database: the plan object may hold an older cached copy.
    chosen = (
        PlacementDecision.objects.filter(plan=plan).values_list("chosen_key", flat=True).first()
        or ""
    ).removeprefix("site-")
    site = (sites.filter(pk=int(chosen)).first() if chosen.isdigit() else None) or (
        sites.exclude(country="").order_by("pk").first()
    )
    return site.country if site and site.country else "NL"


def fx_demo_build(*, plan, user) -> None:
    """The demo's dated exchange rates: before the facility demo, whose TCO converts into the
    plan's EUR (without them its first run is refused and the history shows no stale run)."""
    for src, dst, rate, days_before_order in DEMO_FX:
        FxRate.objects.get_or_create(
            from_currency=src, to_currency=dst, as_of=_days_from_order(-days_before_order),
            defaults={"rate": rate, "source": FX_SOURCE},
        )  # fmt: skip


def sourcing_demo_build(*, plan, user) -> None:
    """Add the demo's sourcing data to ``plan``; safe to call on a plan that already has it."""
    if not TariffRule.objects.exists():
        services.tariffs_load_defaults()
    fx_demo_build(plan=plan, user=user)
    org = plan.organisation
    nl, nl_new = Supplier.objects.get_or_create(
        organisation=org, name=NL_DISTRIBUTOR["name"], defaults=NL_DISTRIBUTOR
    )
    us, _ = Supplier.objects.get_or_create(
        organisation=org, name=US_DISTRIBUTOR["name"], defaults=US_DISTRIBUTOR
    )
    if nl_new:
        _part_offers(nl, us)
    settings = services.sourcing_settings_get(plan=plan)
    SourcingSettings.objects.filter(pk=settings.pk).update(
        destination_country=_site_country(plan), order_date=_order_date(),
        brokerage_per_shipment=D("350"),
    )  # fmt: skip
    if not plan_deployment(plan=plan).servers:
        _server_offers(nl, us, ServerPlatform.objects.filter(slug__in=FALLBACK_SERVERS))
        return  # no chosen configuration yet: suppliers, offers and FX only
    if BomLine.objects.filter(plan=plan).exists():
        return
    services.bom_generate(plan=plan, user=user)
    servers = ServerPlatform.objects.filter(
        pk__in=BomLine.objects.filter(plan=plan, server__isnull=False).values("server")
    )
    _server_offers(nl, us, servers)
    _demo_orders(plan=plan, user=user, nl=nl, us=us)
    services.sourcing_check_plan(plan=plan)


def _demo_orders(*, plan, user, nl: Supplier, us: Supplier) -> None:
    """PO to the Dutch distributor delivered on time; PO to the US one shipped late."""
    orders = []
    for supplier, owner in ((nl, "Joris van Dijk (Lowlands, DAP)"),
                            (us, "Mila Jansen, Northwind Compute Advisory")):  # fmt: skip
        for _ in range(plan.sites.count() + 1):  # one order per site the supplier delivers to
            try:
                orders.append(
                    services.purchase_order_create(
                        plan=plan,
                        organisation=plan.organisation,
                        supplier=supplier,
                        user=user,
                        logistics_owner=owner,
                    )  # fmt: skip
                )
            except services.SourcingError:
                break
    for order in orders:
        order = PurchaseOrder.objects.get(pk=order.pk)
        if order.supplier_id == nl.pk:
            on_time = {
                "ordered_actual": order.ordered_expected,
                "shipped_actual": order.shipped_expected,
                "customs_actual": order.customs_expected,
                "delivered_actual": order.delivered_expected,
            }
            # On time so far: only the steps whose expected date has passed have happened.
            today = timezone.localdate()
            on_time = {k: v for k, v in on_time.items() if v and v <= today}
            services.purchase_order_update(order=order, changes=on_time, user=user)
        else:
            late = {"ordered_actual": order.ordered_expected}
            shipped = order.shipped_expected and order.shipped_expected + timedelta(days=14)
            if shipped and shipped <= timezone.localdate():
                late["shipped_actual"] = shipped  # two weeks late: waited for optics stock
            services.purchase_order_update(order=order, changes=late, user=user)
