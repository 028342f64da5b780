"""Network delay between users and a site, from great-circle distance.

Light in fibre travels at about c / 1.47 ≈ 200 km per ms (refractive index of silica ≈ 1.47),
and real routes are longer than the great circle: a route factor of 1.5 is a common planning
figure (measured internet paths are typically 1.3-2× the geodesic; e.g. Singla et al., "The
Internet at the Speed of Light", HotNets 2014, report a median stretch of about 1.5-2 for the
fibre path before protocol overheads). A round trip crosses the route twice, plus a fixed
allowance for switching, queueing and last-mile access.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "EARTH_RADIUS_KM",
    "FIBRE_KM_PER_MS",
    "REGIONS",
    "Region",
    "RegionLatency",
    "flag_regions",
    "haversine_km",
    "rtt_ms",
]

EARTH_RADIUS_KM = 6371.0088  # IUGG mean Earth radius
FIBRE_KM_PER_MS = 200.0  # ≈ c / 1.47 in silica fibre
DEFAULT_ROUTE_FACTOR = 1.5  # fibre path / great circle (module docstring)
DEFAULT_OVERHEAD_MS = 5.0  # switching, queueing and access network, per round trip


@dataclass(frozen=True, slots=True)
class Region:
    """A well-known region with a representative city.

    Attributes:
        key: Region key, e.g. "eu-west".
        city: City whose coordinates stand for the region.
        lat: Latitude in degrees (north positive).
        lon: Longitude in degrees (east positive).
    """

    key: str
    city: str
    lat: float
    lon: float


REGIONS: Mapping[str, Region] = {
    r.key: r
    for r in (
        Region("us-east", "Ashburn, Virginia", 39.04, -77.49),
        Region("us-central", "Council Bluffs, Iowa", 41.26, -95.86),
        Region("us-west", "The Dalles, Oregon", 45.60, -121.18),
        Region("ca-central", "Montréal", 45.50, -73.57),
        Region("sa-east", "São Paulo", -23.55, -46.63),
        Region("eu-west", "Dublin", 53.35, -6.26),
        Region("eu-west-2", "London", 51.51, -0.13),
        Region("eu-central", "Frankfurt", 50.11, 8.68),
        Region("eu-north", "Stockholm", 59.33, 18.07),
        Region("eu-south", "Milan", 45.46, 9.19),
        Region("me-central", "Dubai", 25.20, 55.27),
        Region("af-south", "Johannesburg", -26.20, 28.05),
        Region("ap-south", "Mumbai", 19.08, 72.88),
        Region("ap-southeast", "Singapore", 1.35, 103.82),
        Region("ap-northeast", "Tokyo", 35.68, 139.69),
        Region("ap-east", "Hong Kong", 22.32, 114.17),
        Region("ap-southeast-2", "Sydney", -33.87, 151.21),
    )
}


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance between two points, in km (haversine formula).

    Args:
        lat1: Latitude of the first point, degrees.
        lon1: Longitude of the first point, degrees.
        lat2: Latitude of the second point, degrees.
        lon2: Longitude of the second point, degrees.

    Returns:
        Distance in km on a sphere of radius :data:`EARTH_RADIUS_KM`.
    """
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi = phi2 - phi1
    dlmb = math.radians(lon2 - lon1)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


def rtt_ms(
    distance_km: float,
    route_factor: float = DEFAULT_ROUTE_FACTOR,
    overhead_ms: float = DEFAULT_OVERHEAD_MS,
) -> float:
    """Round-trip time over fibre: 2 × distance × route factor / 200 km/ms + overhead.

    Args:
        distance_km: Great-circle distance in km.
        route_factor: Fibre route length / great-circle distance (default 1.5).
        overhead_ms: Fixed switching and access allowance per round trip, ms.

    Returns:
        Round-trip time in ms.
    """
    return 2.0 * distance_km * route_factor / FIBRE_KM_PER_MS + overhead_ms


@dataclass(frozen=True, slots=True)
class RegionLatency:
    """Network delay from one user region to a site.

    Attributes:
        region: Region key.
        distance_km: Great-circle distance to the site.
        rtt_ms: Round-trip time.
        share: Share of users in the region (0-1), as given.
        breaks_ttft: True when the round trip alone exceeds the TTFT target.
        note: One sentence for the plan.
    """

    region: str
    distance_km: float
    rtt_ms: float
    share: float
    breaks_ttft: bool
    note: str


def flag_regions(
    site_lat: float,
    site_lon: float,
    user_regions: Mapping[str, float],
    ttft_target_ms: float,
    route_factor: float = DEFAULT_ROUTE_FACTOR,
    overhead_ms: float = DEFAULT_OVERHEAD_MS,
    regions: Mapping[str, Region] = REGIONS,
) -> list[RegionLatency]:
    """Network delay per user region and whether it alone breaks the TTFT target.

    A first token needs at least one round trip (request in, token out), so a region whose
    RTT is at or above the TTFT target cannot meet it whatever the GPUs do (seed guide: "users
    far from the cluster add network delay no GPU can remove").

    Args:
        site_lat: Site latitude, degrees.
        site_lon: Site longitude, degrees.
        user_regions: Region key -> share of users (0-1).
        ttft_target_ms: TTFT target in ms.
        route_factor: Fibre route factor.
        overhead_ms: Fixed RTT allowance.
        regions: Region catalogue (default :data:`REGIONS`).

    Returns:
        One :class:`RegionLatency` per user region, in the order given.

    Raises:
        KeyError: For a region key not in ``regions``.
    """
    result = []
    for key, share in user_regions.items():
        region = regions[key]
        distance = haversine_km(site_lat, site_lon, region.lat, region.lon)
        rtt = rtt_ms(distance, route_factor, overhead_ms)
        breaks = rtt >= ttft_target_ms
        note = f"{region.city}: {distance:,.0f} km, RTT {rtt:,.0f} ms " + (
            f"alone breaks the {ttft_target_ms:,.0f} ms TTFT target"
            if breaks
            else f"leaves {ttft_target_ms - rtt:,.0f} ms of the TTFT target for serving"
        )
        result.append(RegionLatency(key, distance, rtt, share, breaks, note))
    return result
