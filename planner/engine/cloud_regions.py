"""Cloud prices as a buyer pays them: the listing per user region, and commitment discounts.

A provider's price list differs by region. Users in one area (the EU, the US...) are served
from a listing in their own area when the catalog has one; otherwise from the nearest listing
elsewhere, and that choice is flagged (data residency and latency for those users are not
met), never silently priced in another area. An option serving several user regions pays
each region's listing for that region's share of the load.

A hyperscaler whose list shows no 1- or 3-year price for the instance is priced at the sourced
default discount off its on-demand price (``SOURCED_COMMIT_DISCOUNTS``); a listed price wins.
Neoclouds and marketplaces get a commitment only when one is listed.

Sources: ``shared/reference/facility_tco_sourcing.md`` part B3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from planner.engine.errors import EngineInputError
from planner.engine.network import REGIONS, haversine_km, rtt_ms

__all__ = [
    "COMMIT_DISCOUNT_SOURCE",
    "COMMIT_TERMS",
    "PROVIDER_REGIONS",
    "SOURCED_COMMIT_DISCOUNTS",
    "Listing",
    "RegionalListing",
    "blended_prices",
    "committed_price",
    "listing_per_user_region",
    "region_key",
]

# Provider region code -> the well-known region (network.REGIONS) it stands in, from the
# providers' public region lists: docs.aws.amazon.com/global-infrastructure/latest/regions,
# cloud.google.com/compute/docs/regions-zones, learn.microsoft.com/azure/reliability/regions-list
# fmt: off
PROVIDER_REGIONS: Mapping[str, str] = {
    # AWS
    "us-east-1": "us-east", "us-east-2": "us-east", "us-west-1": "us-west",
    "us-west-2": "us-west", "ca-central-1": "ca-central", "sa-east-1": "sa-east",
    "eu-west-1": "eu-west", "eu-west-2": "eu-west-2", "eu-west-3": "eu-central",
    "eu-central-1": "eu-central", "eu-north-1": "eu-north", "eu-south-1": "eu-south",
    "eu-south-2": "eu-south", "me-central-1": "me-central", "af-south-1": "af-south",
    "ap-south-1": "ap-south", "ap-southeast-1": "ap-southeast", "ap-northeast-1": "ap-northeast",
    "ap-east-1": "ap-east", "ap-southeast-2": "ap-southeast-2", "ap-southeast-4": "ap-southeast-2",
    # GCP
    "us-central1": "us-central", "us-east1": "us-east", "us-east4": "us-east",
    "us-east5": "us-east", "us-south1": "us-central", "us-west1": "us-west",
    "us-west2": "us-west", "us-west4": "us-west", "northamerica-northeast1": "ca-central",
    "southamerica-east1": "sa-east", "europe-west1": "eu-central", "europe-west2": "eu-west-2",
    "europe-west3": "eu-central", "europe-west4": "eu-central", "europe-west9": "eu-central",
    "europe-north1": "eu-north", "europe-west8": "eu-south", "asia-south1": "ap-south",
    "asia-southeast1": "ap-southeast", "asia-northeast1": "ap-northeast", "asia-east2": "ap-east",
    "australia-southeast1": "ap-southeast-2",
    # Azure
    "eastus": "us-east", "eastus2": "us-east", "centralus": "us-central",
    "southcentralus": "us-central", "northcentralus": "us-central", "westus": "us-west",
    "westus2": "us-west", "westus3": "us-west", "canadacentral": "ca-central",
    "brazilsouth": "sa-east", "northeurope": "eu-west", "westeurope": "eu-central",
    "germanywestcentral": "eu-central", "francecentral": "eu-central", "swedencentral": "eu-north",
    "italynorth": "eu-south", "uksouth": "eu-west-2", "uaenorth": "me-central",
    "southafricanorth": "af-south", "centralindia": "ap-south", "southeastasia": "ap-southeast",
    "japaneast": "ap-northeast", "eastasia": "ap-east", "australiaeast": "ap-southeast-2",
}
# fmt: on

# Fraction off on-demand for a (1-year, 3-year) commitment when the list shows none: Epoch AI's
# defaults, epoch-research/training-cost-trends training_cost_trends/constants.py (ref B3).
SOURCED_COMMIT_DISCOUNTS: Mapping[str, tuple[float, float]] = {
    "AWS": (0.41, 0.64),
    "GCP": (0.37, 0.56),
    "Azure": (0.25, 0.49),
}
COMMIT_DISCOUNT_SOURCE = (
    "Epoch AI's default committed-use discounts, from its open training-cost model "
    "(https://github.com/epoch-research/training-cost-trends)"
)
# Term in months of each commitment, as bought: billed monthly over the term, no upfront
# (AWS Savings Plans "No Upfront", GCP committed-use discounts and Azure reservations billed
# monthly), owed whether used or not.
COMMIT_TERMS: Mapping[str, int] = {"1yr": 12, "3yr": 36}


def region_key(region: str) -> str | None:
    """The well-known region a provider's region code stands in, ``None`` when unknown or not
    stated. Catalog regions carry notes ("us-east-1 (use1-az6)", "centralus/eastus"): the
    first code is taken."""
    code = region.strip().split(" ")[0].split("/")[0].strip().lower()
    return PROVIDER_REGIONS.get(code)


def committed_price(
    provider: str, on_demand: float, listed: float | None, term: str
) -> tuple[float | None, float | None]:
    """(Price per instance-hour, the default discount used or ``None``) of a commitment.

    A listed price wins; else a hyperscaler's sourced default discount off on-demand
    (``on_demand × (1 − discount)``); else none (neoclouds and marketplaces).
    """
    if term not in COMMIT_TERMS:
        raise EngineInputError(f"unknown commitment term {term!r}")
    if listed is not None:
        return listed, None
    discounts = SOURCED_COMMIT_DISCOUNTS.get(provider)
    if discounts is None:
        return None, None
    discount = discounts[0 if term == "1yr" else 1]
    return on_demand * (1.0 - discount), discount


@dataclass(frozen=True, slots=True)
class Listing:
    """One region's prices for one instance of one provider, per instance-hour (USD).

    Attributes:
        region: The provider's region code as listed ("" when the list names none).
        on_demand: On-demand price.
        commit_1yr: 1-year commitment price (listed or defaulted), ``None`` without.
        commit_3yr: 3-year commitment price (listed or defaulted), ``None`` without.
        spot: Spot price, ``None`` where spot is not offered.
    """

    region: str
    on_demand: float
    commit_1yr: float | None = None
    commit_3yr: float | None = None
    spot: float | None = None


@dataclass(frozen=True, slots=True)
class RegionalListing:
    """The listing serving one user region.

    Attributes:
        user_region: The users' region key (network.REGIONS).
        share: Their share of the load (0-1).
        listing: The listing priced for them.
        in_area: True when the listing is in the users' own area (country or legal region,
            e.g. the EU); False when it is elsewhere (residency and latency not met); ``None``
            when the list names no region (not confirmed).
    """

    user_region: str
    share: float
    listing: Listing
    in_area: bool | None


def listing_per_user_region(
    listings: Sequence[Listing],
    user_shares: Mapping[str, float],
    area_of: Mapping[str, str],
) -> tuple[RegionalListing, ...]:
    """The listing that serves each user region.

    Per user region: a listing in the users' own area (``area_of`` maps a region key to its
    country or legal region), the nearest by round trip (``network.rtt_ms``), then the
    cheapest on-demand; else a listing naming no region (not confirmed); else the nearest
    listing elsewhere (flagged). Shares are normalised; none given, every listing's region
    counts as unknown users and the cheapest on-demand listing serves them.

    Raises:
        EngineInputError: No listing, or a negative share.
    """
    if not listings:
        raise EngineInputError("need at least one cloud listing")
    if any(v < 0 for v in user_shares.values()):
        raise EngineInputError("user region shares must be ≥ 0")
    total = sum(user_shares.values())
    if not total:
        best = min(listings, key=lambda g: g.on_demand)
        return (RegionalListing("", 1.0, best, None),)
    placed = [(g, region_key(g.region)) for g in listings]
    out = []
    for user, share in user_shares.items():
        if not share:
            continue
        here = REGIONS.get(user)

        def distance(key: str | None, here=here) -> float:
            if key is None or here is None:
                return float("inf")
            there = REGIONS[key]
            return rtt_ms(haversine_km(here.lat, here.lon, there.lat, there.lon))

        area = area_of.get(user)
        same = [(g, k) for g, k in placed if k is not None and area and area_of.get(k) == area]
        unstated = [g for g, k in placed if k is None]
        if same:
            g = min(same, key=lambda p: (distance(p[1]), p[0].on_demand))[0]
            out.append(RegionalListing(user, share / total, g, True))
        elif unstated:
            g = min(unstated, key=lambda g: g.on_demand)
            out.append(RegionalListing(user, share / total, g, None))
        else:
            g = min(placed, key=lambda p: (distance(p[1]), p[0].on_demand))[0]
            out.append(RegionalListing(user, share / total, g, False))
    return tuple(out)


def blended_prices(
    served: Sequence[RegionalListing],
) -> tuple[float, float | None, float | None, float | None]:
    """(On-demand, 1-year, 3-year, spot) per instance-hour of an option serving every user
    region from its listing: Σ share × price. A commitment or spot price is ``None`` unless
    every serving listing has one (a mix would not be one contract)."""

    def mean(attr: str) -> float | None:
        values = [getattr(r.listing, attr) for r in served]
        if any(v is None for v in values):
            return None
        return sum(r.share * v for r, v in zip(served, values, strict=True))

    on_demand = mean("on_demand")
    assert on_demand is not None  # every listing has an on-demand price
    return on_demand, mean("commit_1yr"), mean("commit_3yr"), mean("spot")
