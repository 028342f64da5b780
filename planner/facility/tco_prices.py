"""Where the TCO's hardware figures come from: supplier offers, the BOM, the catalog.

Reads only (no modelling): for each server platform the plan buys, the plan's own supplier
offer (pinned on its BOM line, else the cheapest valid one before duties), else the catalog's
dated, sourced list price, else nothing (the TCO then asks for a price rather than borrowing
another platform's). Network capex is the BOM's network lines priced the same way; the
maintenance rate is the BOM's support line against the servers' price. Offers in another
currency are converted to USD at the dated rate on the order date, and the rate is named.

Every function takes a plan already fetched through ``planner.tenancy.org_object_or_404``
(which checked the organisation), and offers are read for that plan's organisation only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from catalog.models import CloudOffering, PriceModel, ServerPlatform
from planner.engine import cloud_regions as cr
from planner.engine import demand
from planner.engine import landed_cost as lc
from planner.engine import tco as te
from planner.engine.deployment import Deployment
from planner.engine.shown import USD_SHOWN, ShownIn
from planner.models import Plan

NETWORK_CATEGORIES = ("nic", "switch", "optic", "cable")


@dataclass(frozen=True, slots=True)
class Priced:
    """One amount in USD and the sentence saying where it came from."""

    usd: float
    words: str


@dataclass(frozen=True)
class HardwarePrices:
    """Per-platform server prices, BOM network capex and support rate, with their basis.

    Attributes:
        servers: Server platform slug (or deployment server name) → price of one server, or
            ``None`` when neither an offer nor a sourced list price exists.
        network: Network capex from the BOM, ``None`` without BOM network lines.
        network_unpriced: Descriptions of BOM network lines that have no usable offer.
        support_per_server_year: The BOM support line per server and year, ``None`` without.
        fx: One sentence per FX rate used.
    """

    servers: dict[str, Priced | None]
    network: Priced | None
    network_unpriced: tuple[str, ...]
    support_per_server_year: Priced | None
    fx: tuple[str, ...] = field(default_factory=tuple)


class _Fx:
    """Converts offer amounts to USD on one date and remembers the rates it used."""

    def __init__(self, table: lc.FxTable, on: date) -> None:
        self.table, self.on, self.used = table, on, {}

    def usd(self, amount: Decimal, currency: str) -> float:
        converted = self.table.convert(lc.Money(amount, currency), "USD", self.on)
        if currency != "USD":
            self.used[currency] = (
                f"1 {currency} = {converted.rate:.4f} USD (rate of "
                f"{converted.rate_date:%Y-%m-%d}, used for offers in {currency})."
            )
        return float(converted.amount)


def _offer_price(offers, quantity: int, fx: _Fx, pinned_id: int | None, on: date):
    """(USD for ``quantity``, the offer) of the pinned or cheapest offer valid on ``on``."""
    from sourcing import selectors as ss  # sourcing imports planner; read it lazily

    usable = [o for o in offers if o.pk == pinned_id or o.valid_until >= on]
    priced = []
    for offer in usable:
        try:
            qty, unit, _ = lc.price_for_quantity(ss.offer_to_engine(offer, part_key=""), quantity)
            total = fx.usd(unit * qty, offer.currency)
        except lc.LandedCostError:
            continue  # no FX rate for its currency: not usable here
        if offer.pk == pinned_id:
            return total, offer
        priced.append((total, offer.lead_time_days, offer.pk, offer))
    if not priced:
        return None
    best = min(priced, key=lambda p: p[:3])
    return best[0], best[3]


def _offer_words(offer, quantity: int, total_usd: float, shown: ShownIn) -> str:
    return (
        f"{offer.supplier.name} offer of {offer.quoted_on:%Y-%m-%d} "
        f"({offer.unit_price:,.0f} {offer.currency} a unit, valid to "
        f"{offer.valid_until:%Y-%m-%d}; {shown.money(total_usd / quantity)} each for {quantity})"
    )


def hardware_prices(
    *, plan: Plan, deployments: Sequence[Deployment], shown: ShownIn = USD_SHOWN
) -> HardwarePrices:
    """The plan's server prices, BOM network capex and support rate (see the module doc).

    Amounts are USD; their sentences write the price the TCO takes in ``shown`` (the plan's
    currency), beside the offer's own price in its own currency."""
    # sourcing sits above facility (.importlinter) until the TCO moves above it
    from sourcing import selectors as ss
    from sourcing.services import sourcing_settings_get, valuation_date

    on = valuation_date(sourcing_settings_get(plan=plan))
    fx = _Fx(ss.fx_table(), on)
    offers = list(ss.offer_list(organisation=plan.organisation))
    lines = [line for line in ss.bom_line_list(plan=plan) if line.quantity > 0]

    counts: dict[str, int] = {}
    for d in deployments:
        counts[d.server_slug or d.server_name] = counts.get(d.server_slug or d.server_name, 0) + (
            d.servers
        )
    platforms = {p.slug: p for p in ServerPlatform.objects.filter(slug__in=list(counts))}
    servers: dict[str, Priced | None] = {}
    for key, count in counts.items():
        platform = platforms.get(key)
        servers[key] = _server_price(platform, key, count, offers, lines, fx, on, shown)

    network_usd, network_words, unpriced = 0.0, [], []
    support = None
    for line in lines:
        kind = line.part_key.split(":")[0]
        if kind in NETWORK_CATEGORIES:
            found = _offer_price(
                ss.offers_for_line(offers, line), line.quantity, fx, line.pinned_offer_id, on
            )
            if found is None:
                unpriced.append(line.description)
                continue
            network_usd += found[0]
            network_words.append(f"{line.quantity} × {line.description} {shown.money(found[0])}")
        elif line.service == "support":
            found = _offer_price(
                ss.offers_for_line(offers, line), line.quantity, fx, line.pinned_offer_id, on
            )
            if found is not None:
                total, offer = found
                support = Priced(
                    total / line.quantity,
                    f"support contract: {_offer_words(offer, line.quantity, total, shown)}, "
                    "taken as per server and year",
                )
    network = None
    if network_words or unpriced:
        network = Priced(network_usd, "; ".join(network_words))
    return HardwarePrices(servers, network, tuple(unpriced), support, tuple(fx.used.values()))


def _server_price(platform, key, count, offers, lines, fx, on, shown) -> Priced | None:
    name = str(platform) if platform else key
    if platform is not None:
        own = [o for o in offers if o.server_id == platform.pk]
        pinned = next((ln.pinned_offer_id for ln in lines if ln.server_id == platform.pk), None)
        found = _offer_price(own, count, fx, pinned, on)
        if found is not None:
            total, offer = found
            return Priced(
                total / count,
                f"{name}: the plan's supplier offer, {_offer_words(offer, count, total, shown)}.",
            )
        if platform.list_price_usd is not None:
            dated = (
                f"as of {platform.list_price_as_of:%Y-%m-%d}"
                if platform.list_price_as_of
                else "undated"
            )
            return Priced(
                float(platform.list_price_usd),
                f"{name}: catalog list price {platform.list_price_usd:,.0f} USD ({dated}; "
                f"source: {platform.list_price_source or platform.source}). No supplier offer.",
            )
    return None


# --- Cloud: per provider, from its own price list ------------------------------------------------


def cloud_gpus_by_hour(workload, deployment: Deployment) -> tuple[float, ...] | None:
    """GPUs a cloud provider must run each hour for the workload's load, month 1.

    The chosen replica's capacity with neither headroom nor the N+1 spare (the provider's SLA
    replaces them): replicas per hour × accelerators per replica. ``None`` when the choice was
    saved without its operating point (the TCO then rents what the owned fleet runs).
    """

    summary = workload.chosen_summary or {}
    batch = summary.get("batch_per_replica") or 0.0
    rate = summary.get("requests_per_s_per_replica") or 0.0
    if not (batch and rate) or not (workload.peak_concurrency or workload.peak_requests_per_s):
        return None
    load = demand.PeakLoad(
        peak_concurrency=workload.peak_concurrency,
        peak_requests_per_s=workload.peak_requests_per_s,
        tensor_parallel=deployment.tensor_parallel,
        accelerators_per_server=deployment.accelerators_per_server,
        batch_per_replica=float(batch),
        requests_per_s_per_replica=float(rate),
        headroom_pct=0.0,
        n_plus_one=False,
    )
    profile = [float(v) for v in (workload.daily_profile or [1.0] * 24)]
    per_replica = float(deployment.tensor_parallel)
    decode = deployment.replicas - deployment.prefill_replicas
    if deployment.prefill_tensor_parallel and decode > 0:
        # Disaggregated: each decode replica brings its share of the prefill pool along.
        per_replica *= deployment.accelerators / (decode * deployment.tensor_parallel)
    return tuple(float(r * per_replica) for r in demand.replicas_by_hour(load, profile))


@dataclass(frozen=True)
class ProviderChoice:
    """The providers compared, what the catalog offers, and where each price came from.

    Attributes:
        providers: ``planner.engine.tco.CloudProvider`` per provider compared: those whose
            listings serve every user region in its own area first, then by on-demand price
            per accelerator-hour (the first prices the owned fleet's bursts).
        available: Providers listing the accelerator, cheapest on-demand per accelerator first.
        sources: One sentence per price taken, and what was assumed.
        listings: Provider key → the rented instance's listings, region by region (for the
            bursts of a site, priced in the region serving its users).
    """

    providers: tuple  # of planner.engine.tco.CloudProvider
    available: tuple[str, ...]
    sources: tuple[str, ...]
    listings: dict[str, tuple[cr.Listing, ...]] = field(default_factory=dict)


def _key(provider: str) -> str:
    from django.utils.text import slugify

    return slugify(provider) or "provider"


def _code(region: str) -> str:
    return region.strip().split(" ")[0].split("/")[0].strip().lower()


def _is_marketplace(offering: CloudOffering) -> bool:
    """A community-marketplace listing (hosts run by individuals, no SLA), e.g. RunPod's
    Community Cloud: named so in the instance of the catalog row."""
    return "community" in offering.instance_type.lower()


def _match(rows: list[CloudOffering], region: str) -> CloudOffering | None:
    """The row of the same region code, else of the same well-known region, else none."""
    exact = [o for o in rows if _code(o.region) == _code(region)]
    if exact:
        return exact[0]
    key = cr.region_key(region)
    near = [o for o in rows if key is not None and cr.region_key(o.region) == key]
    return near[0] if near else None


def _listings(
    provider: str, rows: list[CloudOffering], commit_pct: tuple[float | None, float | None]
) -> tuple[list[cr.Listing], list[str]]:
    """The instance's listings region by region, and how each commitment price was set.

    A listed 1-/3-year price wins; else a hyperscaler's sourced default discount; a plan-level
    discount entered by hand replaces either (neoclouds still get none unless listed)."""
    by_model: dict[str, list[CloudOffering]] = {}
    for o in rows:
        by_model.setdefault(o.price_model, []).append(o)
    out, words = [], []
    for od in sorted(by_model.get(PriceModel.ON_DEMAND, []), key=lambda o: o.usd_per_hour):
        if od.usd_per_hour <= 0 or any(_code(g.region) == _code(od.region) for g in out):
            continue
        on_demand = float(od.usd_per_hour)
        prices, said = [], []
        for term, model, entered in (
            ("1yr", PriceModel.ONE_YEAR, commit_pct[0]),
            ("3yr", PriceModel.THREE_YEAR, commit_pct[1]),
        ):
            row = _match(by_model.get(model, []), od.region)
            price, default = cr.committed_price(
                provider, on_demand, None if row is None else float(row.usd_per_hour), term
            )
            months = cr.COMMIT_TERMS[term]
            if price is not None and entered is not None:
                price = on_demand * (1 - entered / 100)  # the plan's own discount wins
                said.append(f"{months}-month {entered:g} % off on-demand (entered by hand)")
            elif price is not None and default is not None:
                said.append(
                    f"{months}-month {price:,.2f} USD/instance-hour ({default:.0%} off "
                    f"on-demand: sourced default for {provider}, none listed)"
                )
            elif price is not None:
                said.append(f"{months}-month {price:,.2f} USD/instance-hour (listed)")
            prices.append(price)
        spot = _match(by_model.get(PriceModel.SPOT, []), od.region)
        out.append(
            cr.Listing(
                od.region.strip(),
                on_demand,
                prices[0],
                prices[1],
                None if spot is None else float(spot.usd_per_hour),
            )
        )
        words.append(
            f"{od.region.strip() or 'region not stated'}: on-demand {on_demand:,.2f} USD/instance-hour"
            + (f" as of {od.as_of:%Y-%m-%d}" if od.as_of else " (undated)")
            + (
                f"; commitments {', '.join(said)}"
                if said
                else "; no commitment listed, none assumed"
            )
            + (
                f"; spot {spot.usd_per_hour:,.2f} USD/instance-hour"
                + (f" ({spot.region.strip()})" if spot.region.strip() else "")
                if spot
                else "; no spot listed"
            )
        )
    return out, words


def _flags(name: str, served: Sequence[cr.RegionalListing], area_of) -> tuple[str, ...]:
    """What the listings serving the users do not meet, in words (none when they do)."""
    flags = []
    for r in served:
        area = area_of.get(r.user_region, r.user_region)
        if r.user_region and r.in_area is False:
            flags.append(
                f"No {area}-region listing for {name} in the catalog: {r.user_region} users "
                f"({r.share:.0%}) priced at {r.listing.region}; data residency and latency for "
                f"{area} users are not met."
            )
    unstated = [r for r in served if r.user_region and r.in_area is None]
    if unstated:
        who = ", ".join(
            f"{r.user_region} ({area_of.get(r.user_region, r.user_region)})" for r in unstated
        )
        flags.append(
            f"{name}: the catalog's listing names no region, so data residency for {who} "
            "users is not confirmed."
        )
    return tuple(flags)


def _regions_label(served: Sequence[cr.RegionalListing]) -> str:
    regions = list(dict.fromkeys(r.listing.region or "region not stated" for r in served))
    if len(regions) == 1:
        return "" if regions[0] == "region not stated" else f" ({regions[0]})"
    return (
        " ("
        + "; ".join(
            f"{r.user_region} users: {r.listing.region or 'region not stated'}" for r in served
        )
        + ")"
    )


def cloud_providers(
    *,
    deployments: Sequence[Deployment],
    chosen: Sequence[str],
    user_regions: Mapping[str, float] | None = None,
    area_of: Mapping[str, str] | None = None,
    commit_pct: tuple[float | None, float | None] = (None, None),
) -> ProviderChoice:
    """Each provider's own on-demand, 1-year, 3-year and spot prices for the plan's
    accelerator, in the region serving each user region.

    Per provider one instance shape is rented: the one whose listings serve the largest share
    of users in their own area (``user_regions``: region key → share; ``area_of``: region
    key → country or legal region), then the lowest on-demand price per accelerator. Each user
    region pays that instance's listing in its area (``planner.engine.cloud_regions``); where
    there is none the option is priced at the nearest listing and flagged. Commitments: a
    listed price, else a hyperscaler's sourced default discount (``commit_pct``, the plan's
    own 1-/3-year discounts in %, replaces both), else none. Community-marketplace listings
    are left out when the provider has others. ``chosen`` names the providers allowed; empty
    compares every provider listing the accelerator. Plans mixing accelerators get no
    providers (the per-GPU comparison applies, labelled).
    """
    user_regions = dict(user_regions or {})
    area_of = dict(area_of or {})
    slugs = sorted({d.accelerator_slug for d in deployments})
    if len(slugs) != 1:
        return ProviderChoice(
            (),
            (),
            (
                "The plan mixes accelerators, so clouds are compared per GPU-hour at the "
                "cheapest listing rather than per provider and instance.",
            ),
        )
    offerings = [
        o
        for o in CloudOffering.objects.filter(accelerator__slug=slugs[0]).order_by("pk")
        if o.price_model != PriceModel.CAPACITY_BLOCK
    ]
    on_demand = [
        o for o in offerings if o.price_model == PriceModel.ON_DEMAND and o.usd_per_hour > 0
    ]
    cheapest: dict[str, float] = {}
    for o in on_demand:
        per = float(o.usd_per_accelerator_hour)
        cheapest[o.provider] = min(cheapest.get(o.provider, per), per)
    available = tuple(sorted(cheapest, key=lambda p: cheapest[p]))
    wanted = [p for p in available if p in chosen] if chosen else list(available)
    sources: list[str] = []
    missing = [p for p in chosen if p not in cheapest]
    if missing:
        sources.append(
            f"{', '.join(missing)}: no on-demand listing of this accelerator in the catalog."
        )
    found = []  # (sort key, provider, listings, words)
    for name in wanted:
        rows = [o for o in offerings if o.provider == name]
        market = [o for o in rows if _is_marketplace(o)]
        if market and len(market) < len(rows):
            rows = [o for o in rows if not _is_marketplace(o)]
            sources.append(
                f"{name}: community-marketplace listings ({', '.join(sorted({o.instance_type for o in market}))}) "
                "are left out (hosts run by individuals, no SLA); its other listings are priced."
            )
        candidates = []
        for instance in dict.fromkeys(o.instance_type for o in rows):
            mine = [o for o in rows if o.instance_type == instance]
            listings, words = _listings(name, mine, commit_pct)
            if not listings:
                continue
            served = cr.listing_per_user_region(listings, user_regions, area_of)
            od, one, three, spot = cr.blended_prices(served)
            gpus = mine[0].accelerators
            covered = sum(r.share for r in served if r.in_area)
            candidates.append(((-covered, od / gpus, gpus), instance, gpus, served, listings, words,
                               (od, one, three, spot)))  # fmt: skip
        if not candidates:
            continue
        rank, instance, gpus, served, listings, words, (od, one, three, spot) = min(
            candidates, key=lambda c: c[0]
        )
        label = f"{name} {instance}" + _regions_label(served)
        flags = _flags(f"{name} {instance}", served, area_of)
        provider = te.CloudProvider(
            key=_key(name),
            label=label,
            gpus_per_instance=gpus,
            on_demand_usd_per_instance_h=od,
            commit_1yr_usd_per_instance_h=one,
            commit_3yr_usd_per_instance_h=three,
            spot_usd_per_instance_h=spot,
            flags=flags,
        )
        used = {r.listing.region for r in served}
        sources.append(
            f"{label}: {gpus} accelerator(s) per instance; "
            + "; ".join(w for g, w in zip(listings, words, strict=True) if g.region in used)
            + (
                "; "
                + ", ".join(f"{r.user_region} users {r.share:.0%}" for r in served)
                + " of the load, each at its region's price"
                if len(served) > 1
                else ""
            )
            + "."
        )
        found.append(((bool(flags), rank[1]), provider, listings))
    found.sort(key=lambda f: f[0])
    if any(p.commit_1yr_usd_per_instance_h is not None for _, p, _ in found) or any(
        p.commit_3yr_usd_per_instance_h is not None for _, p, _ in found
    ):
        sources.append(
            "Commitments are bought for 12 or 36 months, billed monthly whether used or not "
            "(no upfront); where a hyperscaler lists no price the default discount is "
            f"{cr.COMMIT_DISCOUNT_SOURCE}: "
            + ", ".join(
                f"{p} {one:.0%} (1-year) / {three:.0%} (3-year)"
                for p, (one, three) in cr.SOURCED_COMMIT_DISCOUNTS.items()
            )
            + ". Neoclouds and marketplaces get none unless listed."
        )
    return ProviderChoice(
        tuple(p for _, p, _ in found),
        available,
        tuple(sources),
        {p.key: tuple(g) for _, p, g in found},
    )


def accelerator_seconds_per_request(workload) -> tuple[float | None, float | None]:
    """(Prefill, decode) accelerator-seconds one request takes on the chosen configuration,
    as the sizing modelled them at its operating point (planner.engine.performance
    ``accelerator_seconds_per_request``); ``(None, None)`` for a choice saved without them."""
    summary = workload.chosen_summary or {}
    prefill = summary.get("prefill_accelerator_s_per_request")
    decode = summary.get("decode_accelerator_s_per_request")
    if prefill is None or decode is None or prefill < 0 or decode < 0:
        return None, None
    return float(prefill), float(decode)
