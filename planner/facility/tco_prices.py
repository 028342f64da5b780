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

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from catalog.models import CloudOffering, PriceModel, ServerPlatform
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
    """The providers compared, what the catalog offers, and where each price came from."""

    providers: tuple  # of planner.engine.tco.CloudProvider
    available: tuple[str, ...]
    sources: tuple[str, ...]


def _key(provider: str) -> str:
    from django.utils.text import slugify

    return slugify(provider) or "provider"


def cloud_providers(*, deployments: Sequence[Deployment], chosen: Sequence[str]) -> ProviderChoice:
    """Each provider's own on-demand, 1-year, 3-year and spot price for the plan's accelerator.

    Per provider the instance shape with the lowest on-demand price per accelerator is rented;
    its commitment and spot prices are that same instance's (same region when listed there).
    ``chosen`` names the providers the client would use; empty compares every provider
    listing the accelerator. Cheapest on-demand per accelerator first (the reference).
    Plans mixing accelerators get no providers (the per-GPU comparison applies, labelled).
    """

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
    offerings = list(CloudOffering.objects.filter(accelerator__slug=slugs[0]).order_by("pk"))
    best: dict[str, CloudOffering] = {}
    for o in offerings:
        if o.price_model != PriceModel.ON_DEMAND or o.usd_per_hour <= 0:
            continue
        now = best.get(o.provider)
        if now is None or (o.usd_per_accelerator_hour, o.accelerators) < (
            now.usd_per_accelerator_hour,
            now.accelerators,
        ):
            best[o.provider] = o
    available = tuple(sorted(best, key=lambda p: best[p].usd_per_accelerator_hour))
    wanted = [p for p in available if p in chosen] if chosen else list(available)
    sources: list[str] = []
    missing = [p for p in chosen if p not in best]
    if missing:
        sources.append(
            f"{', '.join(missing)}: no on-demand listing of this accelerator in the catalog."
        )
    providers = []
    for name in wanted:
        od = best[name]

        def same(model: str, od=od, name=name):
            rows = [
                o
                for o in offerings
                if o.provider == name
                and o.instance_type == od.instance_type
                and o.price_model == model
            ]
            exact = [o for o in rows if o.region == od.region]
            return (exact or rows or [None])[0]

        one, three, spot = same(PriceModel.ONE_YEAR), same(PriceModel.THREE_YEAR), same("spot")
        label = f"{name} {od.instance_type}" + (f" ({od.region})" if od.region else "")
        providers.append(
            te.CloudProvider(
                key=_key(name),
                label=label,
                gpus_per_instance=od.accelerators,
                on_demand_usd_per_instance_h=float(od.usd_per_hour),
                commit_1yr_usd_per_instance_h=None if one is None else float(one.usd_per_hour),
                commit_3yr_usd_per_instance_h=None if three is None else float(three.usd_per_hour),
                spot_usd_per_instance_h=None if spot is None else float(spot.usd_per_hour),
            )
        )
        listed = ", ".join(
            f"{what} {o.usd_per_hour:,.2f}"
            + (f" ({o.region})" if o.region and o.region != od.region else "")
            for what, o in (("1-year", one), ("3-year", three), ("spot", spot))
            if o is not None
        )
        sources.append(
            f"{label}: {od.accelerators} accelerator(s) per instance, on-demand "
            f"{od.usd_per_hour:,.2f} USD/instance-hour"
            + (f" as of {od.as_of:%Y-%m-%d}" if od.as_of else " (undated)")
            + (
                f"; {listed} from the same price list"
                if listed
                else "; no commitment or spot price listed, so none is assumed"
            )
            + "."
        )
    return ProviderChoice(tuple(providers), available, tuple(sources))


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
