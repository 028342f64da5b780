"""Total cost of ownership: cloud (on-demand, committed, spot mix) against owned, colocated and
hybrid capacity, month by month over a 36-60 month horizon, with sensitivity and Monte Carlo.

Load model. Each workload needs some GPU-hours per month (optionally growing by a fixed
percentage per month) spread over the day by a 24-value profile. Summed over workloads this
gives ``D[m, h]``, the GPUs busy at hour ``h`` of a typical day of month ``m``. Cloud options
pay for the GPU-hours used (``Σ_h D[m, h] × 730/24``); an owned fleet of ``N`` GPUs serves
``min(D, N)`` each hour and sends the rest to cloud on-demand ("overflow").

Cash flows (what is charted and summed): capex and spares when hardware is bought (month 1
and at each refresh after ``lifetime_months``), the residual value credited when a generation
is retired, maintenance, power, facility or colocation rent, staff, cloud bills. Every flow is
dated at the start of its month, so month-1 capex is undiscounted. At the horizon the book
value of the hardware still in service (straight-line to its residual value) is reported as
``terminal_value_usd`` and credited in ``net_cost_usd`` and in the NPV, not in the cumulative
curve; for cloud commitments running past the horizon the owed remainder is a negative
terminal value. Break-even is on the cumulative cash curve, against the reference: the
cheapest cloud option the consultant allowed (every price model of every provider compared,
:func:`reference_option`), not on-demand by default. Provider prices are the listing of the
region serving each user region, with hyperscaler commitments at their sourced discounts
where none is listed (:mod:`planner.engine.cloud_regions`).

Unit costs (USD per million output tokens, per request) use the *amortised* view instead:
straight-line depreciation + a capital charge on book value at the cost of capital + opex.
Each workload gets its own: the option's amortised cost is split by the workloads'
accelerator-seconds (requests × the prefill and the decode seconds a request takes on its
chosen configuration), and its input and output tokens pay the prefill and decode parts.

Money is plain ``float`` (NumPy float64) in USD in the engine, as its ``_usd`` names say: the
catalog, cloud and site prices it takes are USD, and a BOM priced in the plan's currency is
converted into USD by :func:`hardware_from_bom`. The TCO service converts the results into the
plan's currency once, where it stores them (as ``…_amount`` beside their ``currency``), and
quantises them to ``Decimal`` there, as in saleor's ``core/prices.py``.

Sources: ``shared/reference/facility_tco_sourcing.md`` parts B and D ("ref B4" etc.).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from planner.engine.errors import EngineInputError
from planner.engine.facility import DEFAULT_POWER_USD_PER_KWH, DEFAULT_PUE
from planner.engine.shown import USD_SHOWN, ShownIn

__all__ = [
    "DEFAULT_ANNUAL_CLOUD_PRICE_DECLINE",
    "DEFAULT_COLOCATION_USD_PER_KW_MONTH",
    "DEFAULT_COMMIT_1YR_DISCOUNT",
    "DEFAULT_COMMIT_3YR_DISCOUNT",
    "DEFAULT_COST_OF_CAPITAL",
    "DEFAULT_DRIVERS",
    "DRIVER_UNITS",
    "DEFAULT_HORIZON_MONTHS",
    "DEFAULT_IDLE_POWER_FRACTION",
    "DEFAULT_LIFETIME_MONTHS",
    "DEFAULT_MAINTENANCE_FRACTION_PER_YEAR",
    "DEFAULT_NETWORK_SHARE_OF_CAPEX",
    "DEFAULT_RESIDUAL_FRACTION",
    "DEFAULT_SPARES_FRACTION",
    "DEFAULT_SPOT_DISCOUNT",
    "DEFAULT_SPOT_INTERRUPTION_OVERHEAD",
    "DEFAULT_SPOT_SHARE",
    "DEFAULT_UTILISATION",
    "HOURS_PER_MONTH",
    "BomCapex",
    "BomCostLine",
    "CloudPricing",
    "CloudProvider",
    "MonteCarloResult",
    "OptionResult",
    "OwnedHardware",
    "SiteCost",
    "SiteShare",
    "TcoInputs",
    "TcoResult",
    "TornadoBar",
    "ShownIn",
    "UncertaintySpec",
    "WorkloadDemand",
    "WorkloadUnitCost",
    "bom_capex",
    "break_even_month",
    "break_even_utilisation",
    "hourly_cloud_gpus",
    "hardware_from_bom",
    "hourly_demand_gpus",
    "instances_by_hour",
    "hybrid_bases",
    "monte_carlo",
    "npv_usd",
    "run_tco",
    "sensitivity",
]

Progress = Callable[[float, str], None] | None

# --- Defaults (each shown in the UI with its source) ------------------------------------------

HOURS_PER_MONTH = 730.0  # 8,760 h / 12 (ref B4 uses 730 h per month)
DAYS_PER_MONTH = HOURS_PER_MONTH / 24.0
DEFAULT_HORIZON_MONTHS = 60  # design: 36-60 months
DEFAULT_LIFETIME_MONTHS = (
    60  # 5-year straight line, Epoch hardware.py; expose 3-6 yr (ref B2, B7, D12)
)
DEFAULT_RESIDUAL_FRACTION = 0.0  # zero residual (ref D12)
DEFAULT_NETWORK_SHARE_OF_CAPEX = (
    0.19  # fallback only (no BOM): training-cluster interconnect share, Epoch constants.py (B2)
)
# Hardware maintenance "between 10 and 12 percent of the total purchase price" a year
# (librarytechnology.org/document/7428); 10-15 % (philipcrewe.net, 2013). Servers only.
DEFAULT_MAINTENANCE_FRACTION_PER_YEAR = 0.10
DEFAULT_SPARES_FRACTION = 0.03  # planner assumption: no public benchmark in the reference
DEFAULT_IDLE_POWER_FRACTION = 0.30  # [derived] 0.3 + 0.7·u gives 0.75 of max at u≈0.65: Epoch 0.75×TDP, HP typical 60-75 % (ref A2, E)
DEFAULT_COLOCATION_USD_PER_KW_MONTH = 185.0  # CBRE US wholesale H2 2024 $184.06 (ref B2, D11)
DEFAULT_COST_OF_CAPITAL = 0.08  # planner assumption: the reference gives no figure; set per client
DEFAULT_COMMIT_1YR_DISCOUNT = 0.41  # AWS 1-yr, Epoch constants.py (ref B3, D15)
DEFAULT_COMMIT_3YR_DISCOUNT = 0.64  # AWS 3-yr, Epoch constants.py (ref B3, D15)
DEFAULT_SPOT_DISCOUNT = 0.60  # planner assumption; AWS quotes "up to 90 %" (ref B3)
DEFAULT_SPOT_SHARE = 0.30  # planner assumption for interruptible (batch) share
DEFAULT_SPOT_INTERRUPTION_OVERHEAD = 0.15  # planner assumption: re-run work after reclaims
DEFAULT_ANNUAL_CLOUD_PRICE_DECLINE = (
    0.0  # base case flat; SemiAnalysis tracks declines (ref B1, B3)
)
DEFAULT_UTILISATION = 0.50  # inference fleet 50 % (30-70 %) (ref D16)
DEFAULT_STAFF_USD_PER_MONTH = 0.0  # no credible public benchmark (ref B2, F): enter per client
COMMIT_FRACTION_STEPS = 21  # commitment level scanned in 5 % steps of the term's peak
MAX_HYBRID_BASES = 400  # owned bases searched one server at a time up to this many, then spread

DEFAULT_DRIVERS: tuple[str, ...] = (
    "utilisation",
    "power_price",
    "hardware_price",
    "cloud_price",
    "lifetime",
    "discount_rate",
)

DRIVER_UNITS: dict[str, str] = {
    "utilisation": "GPU-h demanded in month 1",
    "power_price": "USD/kWh",
    "hardware_price": "USD per server",
    "cloud_price": "USD/GPU-h",
    "lifetime": "months",
    "discount_rate": "per year",
}


# --- Inputs -----------------------------------------------------------------------------------


def _in_range(name: str, value: float, low: float, high: float) -> None:
    """EngineInputError unless ``low ≤ value ≤ high`` (a finite number)."""
    if not (isinstance(value, int | float) and math.isfinite(value) and low <= value <= high):
        raise EngineInputError(f"{name} must be between {low:g} and {high:g}, not {value!r}")


@dataclass(frozen=True, slots=True)
class WorkloadDemand:
    """Demand of one workload.

    Attributes:
        name: Workload name.
        gpu_hours_per_month: GPU-hours needed in month 1 at the latency target.
        daily_profile: 24 relative load values, hour 0-23 (shape only; normalised to mean 1).
        growth_pct_per_month: Compound growth of demand, % per month.
        output_tokens_per_month: Output tokens served in month 1.
        requests_per_month: Requests served in month 1.
        cloud_gpus_by_hour: GPUs a cloud provider must run in each hour of a month-1 day to
            serve the load (replicas × accelerators, without the owned fleet's N+1 spares and
            headroom: the provider's SLA replaces them); ``None`` rents what the owned fleet
            runs (the profile applied to ``gpu_hours_per_month``).
        input_tokens_per_month: Prompt (input) tokens served in month 1.
        prefill_accelerator_s_per_request: Accelerator-seconds one request's prompt takes on
            the workload's chosen configuration (planner.engine.performance
            ``accelerator_seconds_per_request``); ``None`` when not known.
        decode_accelerator_s_per_request: Accelerator-seconds its output tokens take; with
            the prefill figure it splits the option's cost between workloads and between
            input and output tokens. ``None`` when not known.
        key: The workload's key (its per-workload costs carry it); "" when not needed.
        site_shares: ``(site key, fraction)`` of this workload's load served at each site of
            the pooled deployment (its replicas' split, made by where its users are). Empty:
            the load follows the sites' server shares.
    """

    name: str
    gpu_hours_per_month: float
    daily_profile: tuple[float, ...] = (1.0,) * 24
    growth_pct_per_month: float = 0.0
    output_tokens_per_month: float = 0.0
    requests_per_month: float = 0.0
    cloud_gpus_by_hour: tuple[float, ...] | None = None
    input_tokens_per_month: float = 0.0
    prefill_accelerator_s_per_request: float | None = None
    decode_accelerator_s_per_request: float | None = None
    key: str = ""
    site_shares: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        _in_range("input_tokens_per_month", self.input_tokens_per_month, 0, 1e18)
        for _, share in self.site_shares:
            _in_range("site share", share, 0, 1)
        for name in ("prefill_accelerator_s_per_request", "decode_accelerator_s_per_request"):
            if getattr(self, name) is not None:
                _in_range(name, getattr(self, name), 0, 1e9)
        if len(self.daily_profile) != 24 or not all(
            math.isfinite(v) and v >= 0 for v in self.daily_profile
        ):
            raise EngineInputError("daily_profile needs 24 non-negative values")
        if sum(self.daily_profile) <= 0:
            raise EngineInputError("daily_profile must not be all zero")
        _in_range("gpu_hours_per_month", self.gpu_hours_per_month, 0, 1e12)
        _in_range("growth_pct_per_month", self.growth_pct_per_month, -50, 50)
        _in_range("output_tokens_per_month", self.output_tokens_per_month, 0, 1e18)
        _in_range("requests_per_month", self.requests_per_month, 0, 1e16)
        if self.cloud_gpus_by_hour is not None and (
            len(self.cloud_gpus_by_hour) != 24
            or not all(math.isfinite(v) and 0 <= v <= 1e7 for v in self.cloud_gpus_by_hour)
        ):
            raise EngineInputError("cloud_gpus_by_hour needs 24 values between 0 and 1e7")


@dataclass(frozen=True, slots=True)
class CloudPricing:
    """Cloud prices for the accelerator the plan uses.

    Attributes:
        on_demand_usd_per_gpu_h: On-demand price per GPU-hour.
        commit_1yr_discount: Fraction off on-demand for a 1-year commitment.
        commit_3yr_discount: Fraction off on-demand for a 3-year commitment.
        spot_discount: Fraction off on-demand for spot capacity.
        spot_share: Share of demand run on spot in the spot-mix option.
        spot_interruption_overhead: Extra GPU-hours spent re-running interrupted work, fraction.
        annual_price_decline: Yearly fall of on-demand prices, fraction (compounded monthly).
    """

    on_demand_usd_per_gpu_h: float
    commit_1yr_discount: float = DEFAULT_COMMIT_1YR_DISCOUNT
    commit_3yr_discount: float = DEFAULT_COMMIT_3YR_DISCOUNT
    spot_discount: float = DEFAULT_SPOT_DISCOUNT
    spot_share: float = DEFAULT_SPOT_SHARE
    spot_interruption_overhead: float = DEFAULT_SPOT_INTERRUPTION_OVERHEAD
    annual_price_decline: float = DEFAULT_ANNUAL_CLOUD_PRICE_DECLINE

    def __post_init__(self) -> None:
        _in_range("on_demand_usd_per_gpu_h", self.on_demand_usd_per_gpu_h, 0, 10_000)
        for name in ("commit_1yr_discount", "commit_3yr_discount", "spot_discount", "spot_share"):
            _in_range(name, getattr(self, name), 0, 1)
        _in_range("spot_interruption_overhead", self.spot_interruption_overhead, 0, 10)
        _in_range("annual_price_decline", self.annual_price_decline, 0, 0.9)


@dataclass(frozen=True, slots=True)
class CloudProvider:
    """One provider's own price list for the instance shape the plan would rent.

    Every price is the same provider's, for the same instance: a commitment or spot price is
    never combined with another provider's on-demand price.

    Attributes:
        key: Short key, used in option keys (``cloud_on_demand:<key>``).
        label: Provider and instance, for display.
        gpus_per_instance: Accelerators in one instance (whole instances are rented).
        on_demand_usd_per_instance_h: On-demand price of one instance-hour.
        commit_1yr_usd_per_instance_h: 1-year commitment price, ``None`` if not listed.
        commit_3yr_usd_per_instance_h: 3-year commitment price, ``None`` if not listed.
        spot_usd_per_instance_h: Spot price, ``None`` if not listed.
        flags: Sentences on what this provider's listing does not meet (users served from
            another area's region, a region not stated); a flagged provider is the break-even
            reference only when every provider is flagged.
    """

    key: str
    label: str
    gpus_per_instance: int
    on_demand_usd_per_instance_h: float
    commit_1yr_usd_per_instance_h: float | None = None
    commit_3yr_usd_per_instance_h: float | None = None
    spot_usd_per_instance_h: float | None = None
    flags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _in_range("gpus_per_instance", self.gpus_per_instance, 1, 1_024)
        _in_range("on_demand_usd_per_instance_h", self.on_demand_usd_per_instance_h, 1e-9, 1e5)
        for name in (
            "commit_1yr_usd_per_instance_h",
            "commit_3yr_usd_per_instance_h",
            "spot_usd_per_instance_h",
        ):
            value = getattr(self, name)
            if value is not None:
                _in_range(name, value, 0, self.on_demand_usd_per_instance_h)


@dataclass(frozen=True, slots=True)
class OwnedHardware:
    """The fleet bought for the owned, colocation and hybrid options.

    Attributes:
        server_count: Servers bought (from sizing).
        gpus_per_server: Accelerators per server.
        server_price_usd: Price of one server.
        server_power_kw: Design (maximum) draw of one server, kW.
        network_usd: Network capex; ``None`` applies :data:`DEFAULT_NETWORK_SHARE_OF_CAPEX`.
        network_power_kw: Draw of the network gear, kW.
        storage_usd: Storage capex.
        install_usd: Installation and integration.
        shipping_and_duties_usd: Freight, insurance, duties (landed cost from sourcing).
        other_hardware_amount: Racks, PDUs, spare parts and other goods of the BOM (hardware:
            in the spares base, no maintenance).
        spares_fraction: Spares bought with each generation, fraction of hardware capex.
        maintenance_fraction_per_year: Support and maintenance, fraction of *server* capex a
            year (network and storage gear carry none unless priced into the servers).
        residual_fraction: Value left at end of life, fraction of capex.
        lifetime_months: Depreciation life and refresh interval, months.
        idle_power_fraction: Draw at zero load as a fraction of design draw.
        maintenance_prepaid_months: Months of maintenance bought with each generation (the
            BOM's support contract, in ``install_usd``); maintenance is charged after them.
        support_contracts: The BOM's support (or licence) contracts bought with each
            generation, ``(amount_usd, term_months)``: the first term is in ``install_usd``;
            each renews at its term's end inside the generation's life and the horizon
            (:func:`support_renewals`).
    """

    server_count: int
    gpus_per_server: int
    server_price_usd: float
    server_power_kw: float
    network_usd: float | None = None
    network_power_kw: float = 0.0
    storage_usd: float = 0.0
    install_usd: float = 0.0
    shipping_and_duties_usd: float = 0.0
    spares_fraction: float = DEFAULT_SPARES_FRACTION
    maintenance_fraction_per_year: float = DEFAULT_MAINTENANCE_FRACTION_PER_YEAR
    residual_fraction: float = DEFAULT_RESIDUAL_FRACTION
    lifetime_months: int = DEFAULT_LIFETIME_MONTHS
    idle_power_fraction: float = DEFAULT_IDLE_POWER_FRACTION
    other_hardware_amount: float = 0.0
    maintenance_prepaid_months: int = 0
    support_contracts: tuple[tuple[float, int], ...] = ()

    def __post_init__(self) -> None:
        if self.server_count < 1 or self.gpus_per_server < 1 or self.lifetime_months < 1:
            raise EngineInputError("server_count, gpus_per_server and lifetime_months must be ≥ 1")
        if not 0 <= self.residual_fraction < 1 or not 0 <= self.idle_power_fraction <= 1:
            raise EngineInputError("residual_fraction in [0, 1) and idle_power_fraction in [0, 1]")
        _in_range("server_count", self.server_count, 1, 1_000_000)
        _in_range("gpus_per_server", self.gpus_per_server, 1, 1_024)
        _in_range("lifetime_months", self.lifetime_months, 1, 240)
        _in_range("server_price_usd", self.server_price_usd, 0, 1e9)
        _in_range("server_power_kw", self.server_power_kw, 0, 1_000)
        _in_range("network_power_kw", self.network_power_kw, 0, 1e6)
        if self.network_usd is not None:
            _in_range("network_usd", self.network_usd, 0, 1e12)
        for name in (
            "storage_usd",
            "install_usd",
            "shipping_and_duties_usd",
            "other_hardware_amount",
        ):
            _in_range(name, getattr(self, name), 0, 1e12)
        _in_range("maintenance_prepaid_months", self.maintenance_prepaid_months, 0, 240)
        for amount, term in self.support_contracts:
            _in_range("support contract amount", amount, 0, 1e12)
            _in_range("support contract term (months)", term, 1, 240)
        for name in ("spares_fraction", "maintenance_fraction_per_year"):
            _in_range(name, getattr(self, name), 0, 1)

    @property
    def gpus(self) -> int:
        """Accelerators in the fleet."""
        return self.server_count * self.gpus_per_server

    @property
    def servers_usd(self) -> float:
        """Server capex."""
        return self.server_count * self.server_price_usd

    @property
    def network_capex_usd(self) -> float:
        """Network capex, explicit or from the default share."""
        if self.network_usd is not None:
            return self.network_usd
        # network = 19 % of cluster ⇒ network = servers × 0.19 / 0.81 (Epoch, ref B2)
        share = DEFAULT_NETWORK_SHARE_OF_CAPEX
        return self.servers_usd * share / (1.0 - share)

    @property
    def hardware_usd(self) -> float:
        """Servers + network + storage + other hardware (the base for spares)."""
        return (
            self.servers_usd
            + self.network_capex_usd
            + self.storage_usd
            + self.other_hardware_amount
        )

    @property
    def capex_usd(self) -> float:
        """Everything paid when a generation is bought, spares included."""
        return (
            self.hardware_usd * (1.0 + self.spares_fraction)
            + self.install_usd
            + self.shipping_and_duties_usd
        )

    @property
    def it_kw(self) -> float:
        """Design IT draw of the fleet, kW."""
        return self.server_count * self.server_power_kw + self.network_power_kw


@dataclass(frozen=True, slots=True)
class SiteCost:
    """Running costs of a place the owned fleet can live in; each gives one option.

    Attributes:
        key: Option key (``owned``, ``colocation``, ...).
        label: Display name.
        kind: ``owned`` (own data centre) or ``colocation``.
        facility_usd_per_kw_month: Space/capacity charge per provisioned IT kW and month
            (colocation rent, or the owned hall's allocated cost).
        pue: Power usage effectiveness.
        power_usd_per_kwh: Electricity price.
        staff_usd_per_month: Operations staff attributed to the fleet.
        servers: Servers of the plan's one deployment placed at this site. When any site has
            servers, the sites are not alternatives: one ``owned`` option costs the whole
            deployment, each site's servers at that site's power price, PUE and space, with
            the demand split by the workloads' site shares (else the sites' server shares).
            All zero: each site is one option holding the whole fleet (the comparison of places).
        spare_servers: Of ``servers``, the N+1 spares the deployment keeps at this site; a
            hybrid base here keeps them too (the owned option's rule).
        burst_region: The cloud region serving this site's users, where the hybrid's bursts
            above its base run (a label; "" when not known).
        burst_usd_per_gpu_h: On-demand price per GPU-hour of the listing in ``burst_region``
            that the fleet's bursts above this site's servers pay; ``None``: the reference
            on-demand price (``CloudPricing.on_demand_usd_per_gpu_h``).
        it_load_kw: Design IT load of the ``servers`` placed here with their network gear,
            kW (the site's facility check); ``None``: servers × the fleet's mean draw. Power
            and space are charged on it.
    """

    key: str
    label: str
    kind: Literal["owned", "colocation"] = "colocation"
    facility_usd_per_kw_month: float = DEFAULT_COLOCATION_USD_PER_KW_MONTH
    pue: float = DEFAULT_PUE
    power_usd_per_kwh: float = DEFAULT_POWER_USD_PER_KWH
    staff_usd_per_month: float = DEFAULT_STAFF_USD_PER_MONTH
    servers: int = 0
    spare_servers: int = 0
    burst_region: str = ""
    it_load_kw: float | None = None
    burst_usd_per_gpu_h: float | None = None

    def __post_init__(self) -> None:
        if self.burst_usd_per_gpu_h is not None:
            _in_range("burst_usd_per_gpu_h", self.burst_usd_per_gpu_h, 0, 1e4)
        _in_range("servers", self.servers, 0, 1_000_000)
        _in_range("spare_servers", self.spare_servers, 0, max(self.servers, 0))
        if self.it_load_kw is not None:
            _in_range("it_load_kw", self.it_load_kw, 0, 1e7)
        _in_range("pue", self.pue, 1, 4)
        _in_range("facility_usd_per_kw_month", self.facility_usd_per_kw_month, 0, 100_000)
        _in_range("power_usd_per_kwh", self.power_usd_per_kwh, 0, 10)
        _in_range("staff_usd_per_month", self.staff_usd_per_month, 0, 1e10)


@dataclass(frozen=True, slots=True)
class TcoInputs:
    """Everything one TCO run needs.

    Attributes:
        workloads: Demand per workload.
        cloud: Cloud prices.
        hardware: The owned fleet.
        sites: Owned/colocation sites, one option each.
        horizon_months: Months compared (36-60 typical).
        cost_of_capital: Annual rate for the capital charge in unit costs.
        discount_rate: Annual rate for NPV; ``None`` uses ``cost_of_capital``.
        hybrid_site: Key of the site hosting the hybrid base; ``None`` uses the first site.
        providers: Cloud providers compared one by one (on-demand, 1-year, 3-year and spot
            mix from each one's own list, whole instances). Empty: the single ``cloud``
            pricing per GPU-hour. The first provider's on-demand prices the owned fleet's
            bursts where a site names none (``cloud`` should carry its price); break-even is
            counted against the cheapest cloud option (:func:`reference_option`).
    """

    workloads: tuple[WorkloadDemand, ...]
    cloud: CloudPricing
    hardware: OwnedHardware
    sites: tuple[SiteCost, ...] = (SiteCost("colocation", "Colocation"),)
    horizon_months: int = DEFAULT_HORIZON_MONTHS
    cost_of_capital: float = DEFAULT_COST_OF_CAPITAL
    discount_rate: float | None = None
    hybrid_site: str | None = None
    providers: tuple[CloudProvider, ...] = ()

    def __post_init__(self) -> None:
        if len({p.key for p in self.providers}) != len(self.providers):
            raise EngineInputError("cloud provider keys must be unique")
        if not self.workloads or not self.sites or self.horizon_months < 1:
            raise EngineInputError("need ≥ 1 workload, ≥ 1 site and horizon_months ≥ 1")
        _in_range("horizon_months", self.horizon_months, 1, 240)
        _in_range("cost_of_capital", self.cost_of_capital, 0, 1)
        if self.discount_rate is not None:
            _in_range("discount_rate", self.discount_rate, 0, 1)
        placed = sum(s.servers for s in self.sites)
        if placed and placed != self.hardware.server_count:
            raise EngineInputError(
                f"the sites hold {placed} servers but the fleet has {self.hardware.server_count}"
            )

    def placement(self, site_key: str | None = None) -> tuple[tuple[SiteCost, int], ...]:
        """(site, servers) the owned fleet is costed at: the deployment's sites holding
        servers, or (``site_key`` given, or no site holds servers) one site with them all."""
        placed = tuple((s, s.servers) for s in self.sites if s.servers > 0)
        if placed and site_key is None:
            return placed
        return ((self.site(site_key), self.hardware.server_count),)

    @property
    def pooled(self) -> bool:
        """The sites split one deployment (one owned option) rather than being alternatives."""
        return any(s.servers > 0 for s in self.sites)

    @property
    def npv_rate(self) -> float:
        """Annual discount rate used for NPV."""
        return self.cost_of_capital if self.discount_rate is None else self.discount_rate

    def site(self, key: str | None) -> SiteCost:
        """Site with ``key`` (first site for ``None``).

        Raises:
            KeyError: If no site has that key.
        """
        if key is None:
            return self.sites[0]
        for s in self.sites:
            if s.key == key:
                return s
        raise KeyError(key)


# --- Capex from the priced BOM ----------------------------------------------------------------

BOM_NETWORK_CATEGORIES = ("nic", "switch", "optic", "cable")
# A support line whose offer names no term is priced for one year (renewed yearly).
BOM_SUPPORT_PREPAID_MONTHS = 12


@dataclass(frozen=True, slots=True)
class BomCostLine:
    """One priced line of the BOM, in the plan's currency (plain numbers from the landed cost).

    Attributes:
        category: BOM category (``server``, ``nic``, ``switch``, ``optic``, ``cable``,
            ``storage``, ``rack``, ``pdu``, ``spares``, ``service``...).
        quantity: Units bought.
        goods_amount: The goods at the offer's price (a service: its price).
        landed_amount: Landed cost net of recoverable VAT: the goods plus freight, insurance,
            brokerage and duty (a service: its price). The quote's cost of the line.
        support: The line is the support contract.
        term_months: A support line's term: the months its price buys (12 = a yearly price).
    """

    category: str
    quantity: int
    goods_amount: float
    landed_amount: float
    support: bool = False
    term_months: int = BOM_SUPPORT_PREPAID_MONTHS


@dataclass(frozen=True, slots=True)
class BomCapex:
    """The priced BOM by kind of spend, in the plan's currency.

    Attributes:
        servers: Servers on the server lines.
        server_amount: Server lines' goods.
        network_amount: NICs, switches, optics and cables (goods).
        storage_amount: Storage (goods).
        other_hardware_amount: Racks, PDUs, spare parts and any other goods.
        services_amount: Services bought with the hardware (installation, burn-in, support).
        support_amount: The support contract (part of ``services_amount``).
        shipping_amount: Landed cost less goods: freight, insurance, brokerage and duty.
        support_terms: The support contracts by term, ``(term_months, amount)``, adding up
            to ``support_amount``.
    """

    servers: int
    server_amount: float
    network_amount: float
    storage_amount: float
    other_hardware_amount: float
    services_amount: float
    support_amount: float
    shipping_amount: float
    support_terms: tuple[tuple[int, float], ...] = ()

    @property
    def total_amount(self) -> float:
        """The BOM at landed cost: the quote's cost basis before markup."""
        return (
            self.server_amount
            + self.network_amount
            + self.storage_amount
            + self.other_hardware_amount
            + self.services_amount
            + self.shipping_amount
        )


def bom_capex(lines: Sequence[BomCostLine]) -> BomCapex:
    """Sum the priced BOM lines by kind of spend (each line's landed cost less its goods is
    its shipping: freight, insurance, brokerage and duty)."""
    sums = dict.fromkeys(("server", "network", "storage", "other", "service", "support"), 0.0)
    servers, shipping = 0, 0.0
    terms: dict[int, float] = {}
    for line in lines:
        if line.category == "service":
            kind = "service"
            sums["support"] += line.landed_amount if line.support else 0.0
            if line.support:
                terms[line.term_months] = terms.get(line.term_months, 0.0) + line.landed_amount
        elif line.category == "server":
            kind = "server"
            servers += line.quantity
        elif line.category in BOM_NETWORK_CATEGORIES:
            kind = "network"
        elif line.category == "storage":
            kind = "storage"
        else:
            kind = "other"
        if kind == "service":
            sums[kind] += line.landed_amount
            continue
        sums[kind] += line.goods_amount
        shipping += line.landed_amount - line.goods_amount
    return BomCapex(
        servers=servers,
        server_amount=sums["server"],
        network_amount=sums["network"],
        storage_amount=sums["storage"],
        other_hardware_amount=sums["other"],
        services_amount=sums["service"],
        support_amount=sums["support"],
        shipping_amount=shipping,
        support_terms=tuple(sorted(terms.items())),
    )


def hardware_from_bom(
    hardware: OwnedHardware,
    capex: BomCapex,
    *,
    amount_per_usd: float,
    maintenance_from_support: bool = True,
    base_servers: int | None = None,
) -> OwnedHardware:
    """The owned fleet with the priced BOM as its capex: one generation costs the BOM at
    landed cost, so the owned option's capex is the quote's cost basis.

    Servers, network, storage and other hardware (racks, PDUs, the BOM's spare parts) are the
    hardware; services (installation, burn-in, support) go with the installation; freight,
    insurance, brokerage and duty are the shipping. The BOM's spare parts replace the spares
    fraction (0). The support contract is what is bought: its price, once, for its term (in
    the capex with each generation), renewed at the term's end (:func:`support_renewals`);
    it is the maintenance, so no maintenance rate is charged besides it.

    Args:
        hardware: The fleet as estimated (its count, power, maintenance rate, life...).
        capex: The priced BOM (:func:`bom_capex`), in the plan's currency.
        amount_per_usd: Plan currency per USD, the rate the TCO's results are shown at (the
            engine computes in USD; each amount is divided by it, so the capex shown is the
            BOM's to the cent).
        maintenance_from_support: The maintenance is the support contract and its renewals
            (when the BOM has one); false keeps the fleet's (entered) rate, charged after the
            contract's longest term.
        base_servers: The BOM buys an owned base of this many of the fleet's servers (the
            hybrid's, :func:`run_tco`), not the fleet: its amounts are taken per server for
            the fleet, so a base of that size costs the BOM exactly (every option scales the
            fleet's capex by its servers) and the whole fleet costs it pro rata. ``None``: the
            BOM buys the fleet.

    Raises:
        EngineInputError: The BOM buys another number of servers than the fleet (or the base),
            or the rate is not positive.
    """
    if not amount_per_usd > 0 or not math.isfinite(amount_per_usd):
        raise EngineInputError("the plan currency's rate to USD must be a positive number")
    wanted = hardware.server_count if base_servers is None else base_servers
    if capex.servers != wanted or not 0 < wanted <= hardware.server_count:
        raise EngineInputError(
            f"the BOM buys {capex.servers} servers but the "
            + ("deployment has" if base_servers is None else "hybrid's owned base has")
            + f" {wanted}; regenerate the BOM"
        )
    # USD per plan-currency amount, and the fleet per server the BOM buys (1 for the fleet)
    rate = amount_per_usd / (hardware.server_count / capex.servers)
    maintenance = hardware.maintenance_fraction_per_year
    contracts: tuple[tuple[float, int], ...] = ()
    prepaid = max((term for term, _ in capex.support_terms), default=0)
    if not capex.support_terms and capex.support_amount:
        prepaid = BOM_SUPPORT_PREPAID_MONTHS
    if maintenance_from_support and capex.support_amount:
        contracts = tuple((amount / rate, term) for term, amount in capex.support_terms) or (
            (capex.support_amount / rate, BOM_SUPPORT_PREPAID_MONTHS),
        )
        maintenance, prepaid = 0.0, 0
    return replace(
        hardware,
        server_price_usd=capex.server_amount / capex.servers / amount_per_usd,
        network_usd=capex.network_amount / rate,
        storage_usd=capex.storage_amount / rate,
        other_hardware_amount=capex.other_hardware_amount / rate,
        install_usd=capex.services_amount / rate,
        shipping_and_duties_usd=capex.shipping_amount / rate,
        spares_fraction=0.0,
        maintenance_fraction_per_year=maintenance,
        maintenance_prepaid_months=prepaid,
        support_contracts=contracts,
    )


def support_renewals(
    amount: np.ndarray, term_months: int, life: np.ndarray, months: int
) -> np.ndarray:
    """Renewals of a support contract bought with each generation, shape (paths, months).

    The contract (``amount`` per path, for ``term_months``) is bought with the generation
    (in its capex) and renewed at each term's end inside the generation's life: at age
    ``term``, ``2 × term``... it pays ``amount × covered ÷ term``, ``covered`` = the months
    the renewal runs before the servers retire or the horizon ends, at most a term. Pro-rated,
    not a full term: a vendor extends support by the year (or month) past its first term,
    so a renewal the fleet cannot use is not bought (e.g. 4 years bought inside a 5-year
    horizon: the contract at month 0, one year of it, 1/4 of its price, at month 48).
    """
    life = np.maximum(life.astype(int), 1)[:, None]
    k = np.arange(months)[None, :]
    age = k % life
    renews = (age > 0) & (age % term_months == 0)
    covered = np.minimum(np.minimum(term_months, life - age), months - k)
    return amount[:, None] * renews * covered / term_months


# --- Outputs ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SiteShare:
    """One site's part of the pooled owned option.

    Attributes:
        key: Site key.
        label: Site name.
        servers: Servers placed there.
        lines_total_usd: Horizon total per cost line (capex, power, facility, ...).
        net_cost_usd: The site's cash costs over the horizon net of its terminal value.
        npv_usd: The site's NPV of cost (the option's NPV is the sum over sites).
        spare_servers: Of ``servers``, the N+1 spares.
        burst_region: Hybrid only: the cloud region its load above the base runs in.
    """

    key: str
    label: str
    servers: int
    lines_total_usd: Mapping[str, float]
    net_cost_usd: float
    npv_usd: float
    spare_servers: int = 0
    burst_region: str = ""


@dataclass(frozen=True, slots=True)
class WorkloadUnitCost:
    """One workload's part of an option's amortised cost, and its unit costs.

    Attributes:
        key: The workload's key (:attr:`WorkloadDemand.key`).
        name: Workload name.
        share: Its share of the option's amortised cost over the horizon: its accelerator-
            seconds (prefill + decode) over all workloads'; their GPU-hours when a workload
            has no accelerator-seconds.
        amortised_usd: Amortised cost over the horizon × ``share``.
        cost_per_request_usd: ``amortised_usd`` ÷ its requests; ``None`` without requests.
        cost_per_million_output_tokens_usd: ``amortised_usd`` ÷ its output tokens × 1e6.
        input_usd_per_million_tokens: The prefill part of the option's cost ÷ its input
            tokens × 1e6; ``None`` without input tokens or accelerator-seconds.
        output_usd_per_million_tokens: The decode part ÷ its output tokens × 1e6; likewise.
    """

    key: str
    name: str
    share: float
    amortised_usd: float
    cost_per_request_usd: float | None
    cost_per_million_output_tokens_usd: float | None
    input_usd_per_million_tokens: float | None = None
    output_usd_per_million_tokens: float | None = None


@dataclass(frozen=True, slots=True, eq=False)
class OptionResult:
    """Cash flows and figures of merit of one option.

    Arrays have one value per month of the horizon (index 0 = month 1) and are read-only.

    Attributes:
        key: Option key.
        label: Display name.
        kind: ``cloud_on_demand``, ``cloud_committed``, ``cloud_spot_mix``, ``owned``,
            ``colocation`` or ``hybrid``.
        lines_usd: Monthly cash cost per item (negative = credit).
        monthly_usd: Sum of the lines per month.
        cumulative_usd: Running total of ``monthly_usd``.
        terminal_value_usd: Book value of hardware in service at the horizon (credit), or
            minus the commitment still owed past it.
        net_cost_usd: ``cumulative_usd[-1] − terminal_value_usd``.
        npv_usd: Present value of the costs at the plan's discount rate, net of terminal value.
        break_even_month: First month (1-based) whose cumulative cost is ≤ the reference's
            (the cheapest allowed cloud option, :func:`reference_option`); ``None`` if never
            (and for the reference itself).
        amortised_monthly_usd: Depreciation + capital charge + opex per month.
        cost_per_million_output_tokens_usd: Amortised horizon cost ÷ output tokens × 1e6;
            ``None`` without tokens.
        cost_per_request_usd: Amortised horizon cost ÷ requests; ``None`` without requests.
        owned_gpus: GPUs owned (0 for cloud options).
        mean_utilisation: Served ÷ owned GPU-hours over the horizon; ``None`` for cloud.
        break_even_utilisation: Utilisation above which owning beats on-demand over the
            horizon (flat load); ``None`` for cloud options or if owning never wins.
        notes: Sentences explaining choices (commitment level, hybrid split...).
        base_curve: Hybrid only: ``(owned servers, NPV)`` for every owned base searched.
        input_usd_per_million_tokens: The prefill part of the amortised cost (every
            workload's prefill accelerator-seconds) ÷ all input tokens × 1e6; ``None``
            without input tokens or accelerator-seconds.
        output_usd_per_million_tokens: The decode part ÷ all output tokens × 1e6; ``None``
            likewise.
        workloads: Each workload's part of the cost and its own unit costs
            (:class:`WorkloadUnitCost`), in the order of the inputs.
        flags: A cloud option's provider flags (:attr:`CloudProvider.flags`), also in notes.
    """

    key: str
    label: str
    kind: str
    lines_usd: Mapping[str, np.ndarray]
    monthly_usd: np.ndarray
    cumulative_usd: np.ndarray
    terminal_value_usd: float
    net_cost_usd: float
    npv_usd: float
    break_even_month: int | None
    amortised_monthly_usd: np.ndarray
    cost_per_million_output_tokens_usd: float | None
    cost_per_request_usd: float | None
    owned_gpus: int = 0
    mean_utilisation: float | None = None
    break_even_utilisation: float | None = None
    notes: tuple[str, ...] = ()
    base_curve: tuple[tuple[int, float], ...] = ()
    input_usd_per_million_tokens: float | None = None
    output_usd_per_million_tokens: float | None = None
    site_breakdown: tuple[SiteShare, ...] = ()
    workloads: tuple[WorkloadUnitCost, ...] = ()
    flags: tuple[str, ...] = ()

    @property
    def collapses_to_cloud(self) -> bool:
        """A hybrid whose cheapest owned base is zero servers: it is cloud on-demand."""
        return self.kind == "hybrid" and self.owned_gpus == 0


@dataclass(frozen=True, slots=True, eq=False)
class TcoResult:
    """All options of one run.

    Attributes:
        months: 1..horizon.
        demand_gpu_hours: GPU-hours needed per month.
        peak_gpus: Peak hourly GPUs needed per month.
        output_tokens: Output tokens per month.
        requests: Requests per month.
        options: One :class:`OptionResult` per option.
        discount_rate: Annual NPV rate used.
        reference_key: Key of the break-even reference (the cheapest allowed cloud option).
    """

    months: np.ndarray
    demand_gpu_hours: np.ndarray
    peak_gpus: np.ndarray
    output_tokens: np.ndarray
    requests: np.ndarray
    options: tuple[OptionResult, ...]
    discount_rate: float
    reference_key: str = ""

    @property
    def reference(self) -> OptionResult | None:
        """The cloud option every break-even month is counted against (:func:`reference_option`)."""
        return next((o for o in self.options if o.key == self.reference_key), None)

    def by_key(self, key: str) -> OptionResult:
        """Option ``key``.

        Raises:
            KeyError: If absent.
        """
        for o in self.options:
            if o.key == key:
                return o
        raise KeyError(key)

    @property
    def cheapest(self) -> OptionResult:
        """Option with the lowest NPV of cost."""
        return min(self.options, key=lambda o: o.npv_usd)


@dataclass(frozen=True, slots=True)
class TornadoBar:
    """One driver's swing in a tornado chart.

    Attributes:
        driver: Driver name (one of :data:`DEFAULT_DRIVERS`).
        low_input: Driver value at the low end (in the driver's own unit).
        high_input: Driver value at the high end.
        low_value_usd: Metric with the driver at its low end.
        high_value_usd: Metric with the driver at its high end.
        base_value_usd: Metric at the base case.
        span_usd: ``|high − low|`` (bars are sorted by it).
        unit: Unit of ``low_input``/``high_input``.
    """

    driver: str
    low_input: float
    high_input: float
    low_value_usd: float
    high_value_usd: float
    base_value_usd: float
    span_usd: float
    unit: str = ""


@dataclass(frozen=True, slots=True)
class UncertaintySpec:
    """Triangular distributions (low, mode, high) for the Monte Carlo drivers.

    A mode of ``None`` takes the value from the inputs. Defaults are planner assumptions,
    ranges informed by ref B2/B6/B7/D12/D16.

    Attributes:
        utilisation_factor: Multiplier on demand (hence on owned utilisation).
        power_price_factor: Multiplier on the electricity price.
        hardware_price_factor: Multiplier on capex.
        annual_cloud_price_decline: Yearly fall of cloud prices, fraction.
        lifetime_months: Hardware life, months (3-6 years, ref D12).
    """

    utilisation_factor: tuple[float, float | None, float] = (0.7, 1.0, 1.2)
    power_price_factor: tuple[float, float | None, float] = (0.8, 1.0, 1.4)
    hardware_price_factor: tuple[float, float | None, float] = (0.9, 1.0, 1.2)
    annual_cloud_price_decline: tuple[float, float | None, float] = (0.0, None, 0.25)
    lifetime_months: tuple[float, float | None, float] = (36.0, None, 72.0)


@dataclass(frozen=True, slots=True, eq=False)
class MonteCarloResult:
    """Percentile bands of cumulative cost, owned against cloud on-demand.

    Attributes:
        months: 1..horizon.
        owned_p10_usd, owned_p50_usd, owned_p90_usd: Cumulative owned cost bands per month.
        cloud_p10_usd, cloud_p50_usd, cloud_p90_usd: Cumulative cloud on-demand bands.
        probability_owned_cheaper: Share of paths whose owned net cost at the horizon
            (terminal value credited) is below cloud's.
        site_key: Site the owned fleet was costed at.
        paths: Number of paths.
        seed: Random seed.
    """

    months: np.ndarray
    owned_p10_usd: np.ndarray
    owned_p50_usd: np.ndarray
    owned_p90_usd: np.ndarray
    cloud_p10_usd: np.ndarray
    cloud_p50_usd: np.ndarray
    cloud_p90_usd: np.ndarray
    probability_owned_cheaper: float
    site_key: str
    paths: int
    seed: int | None = None


# --- Small formulas ---------------------------------------------------------------------------


def npv_usd(
    monthly_usd: Sequence[float] | np.ndarray, annual_rate: float, terminal_value_usd: float = 0.0
) -> float:
    """Present value of monthly costs, net of a terminal value received after the last month.

    Month ``k`` (0-based) is discounted by ``(1 + annual_rate) ** (-k / 12)`` (start of
    month); the terminal value by ``(1 + annual_rate) ** (-M / 12)``.

    Args:
        monthly_usd: Cost per month.
        annual_rate: Annual discount rate (0.08 = 8 %).
        terminal_value_usd: Value credited at the horizon.

    Returns:
        Present value of the costs.
    """
    flows = np.asarray(monthly_usd, dtype=float)
    return float(_npv_paths(flows, annual_rate, np.asarray(terminal_value_usd, dtype=float)))


def _npv_paths(flows: np.ndarray, annual_rate: float, terminal: np.ndarray) -> np.ndarray:
    """NPV of costs along the last axis (any leading path axes), terminal credited at month M."""
    k = np.arange(flows.shape[-1])
    factor = (1.0 + annual_rate) ** (-k / 12.0)  # PV = CF / (1+r)^t, t in years
    return flows @ factor - terminal * (1.0 + annual_rate) ** (-flows.shape[-1] / 12.0)


def break_even_month(
    owned_cumulative_usd: Sequence[float] | np.ndarray,
    cloud_cumulative_usd: Sequence[float] | np.ndarray,
) -> int | None:
    """First month (1-based) in which the owned cumulative cost is ≤ the cloud's.

    Args:
        owned_cumulative_usd: Owned cumulative cost per month.
        cloud_cumulative_usd: Cloud cumulative cost per month.

    Returns:
        The month, or ``None`` if owning never catches up within the horizon.
    """
    owned = np.asarray(owned_cumulative_usd, dtype=float)
    cloud = np.asarray(cloud_cumulative_usd, dtype=float)
    tolerance = 1e-9 * np.maximum(1.0, np.abs(cloud))  # float noise, not money
    hits = np.flatnonzero(owned <= cloud + tolerance)
    return int(hits[0]) + 1 if hits.size else None


def hourly_demand_gpus(inputs: TcoInputs) -> np.ndarray:
    """GPUs busy at each hour of a typical day of each month, summed over workloads.

    Args:
        inputs: The run's inputs.

    Returns:
        Array ``(horizon_months, 24)`` of GPUs.
    """
    m = np.arange(inputs.horizon_months)[:, None]
    total = np.zeros((inputs.horizon_months, 24))
    for w in inputs.workloads:
        shape = np.asarray(w.daily_profile, dtype=float)
        shape = shape / shape.mean()  # mean 1, so Σ_h over a month gives the GPU-hours
        growth = (1.0 + w.growth_pct_per_month / 100.0) ** m  # compound monthly growth
        total += w.gpu_hours_per_month * growth / HOURS_PER_MONTH * shape[None, :]
    return total


def _per_month(inputs: TcoInputs, attr: str) -> np.ndarray:
    m = np.arange(inputs.horizon_months)
    return sum(
        (getattr(w, attr) * (1.0 + w.growth_pct_per_month / 100.0) ** m for w in inputs.workloads),
        start=np.zeros(inputs.horizon_months),
    )


def _cloud_price(p0: float | np.ndarray, decline: float | np.ndarray, months: int) -> np.ndarray:
    k = np.arange(months)
    # price falls by `decline` a year, compounded monthly
    return np.asarray(p0, dtype=float)[..., None] * (
        1.0 - np.asarray(decline, dtype=float)[..., None]
    ) ** (k / 12.0)


def _served_gpu_hours(demand: np.ndarray, scale: np.ndarray, gpus: np.ndarray) -> np.ndarray:
    """GPU-hours an owned fleet serves per month, ``Σ_h min(scale·D[m,h], N) × days``.

    Vectorised over paths; the loop runs over months only, to keep memory at (paths × 24).
    """
    out = np.empty((scale.shape[0], demand.shape[0]))
    for m in range(demand.shape[0]):
        busy = scale[:, None] * demand[m][None, :]
        out[:, m] = np.minimum(busy, gpus[:, None]).sum(axis=1) * DAYS_PER_MONTH
    return out


@dataclass(frozen=True, slots=True, eq=False)
class _OwnedPaths:
    gpus: np.ndarray
    lines: dict[str, np.ndarray]
    terminal: np.ndarray
    served: np.ndarray
    demand: np.ndarray
    depreciation: np.ndarray
    capital_charge: np.ndarray


def _it_kw(hw: OwnedHardware, site: SiteCost, servers: np.ndarray) -> np.ndarray:
    """Design IT load of ``servers`` at ``site``, kW: the site's own load (servers and network
    gear, from its facility check) per server placed there, else the fleet's per server."""
    if site.it_load_kw is not None and site.servers > 0:
        return site.it_load_kw * servers / site.servers
    return hw.it_kw * servers / hw.server_count


def _owned_paths(
    demand: np.ndarray,
    *,
    scale: np.ndarray,
    servers: np.ndarray,
    hw: OwnedHardware,
    site: SiteCost,
    capex_factor: np.ndarray,
    lifetime: np.ndarray,
    power_price: np.ndarray,
    cloud_price: np.ndarray,
    cost_of_capital: float,
    spare_servers: int = 0,
) -> _OwnedPaths:
    """Monthly owned cash flows for P paths at once (all per-path arguments have shape (P,)).

    ``spare_servers`` of a non-empty fleet are its N+1 spares: bought, powered and kept, but
    the load runs on the others (what exceeds them bursts to cloud on-demand).
    """
    months = demand.shape[0]
    ratio = servers / hw.server_count  # network, storage, install scale with the fleet
    gpus = servers * hw.gpus_per_server
    serving = np.maximum(servers - spare_servers * (servers > 0), 0.0) * hw.gpus_per_server
    hardware = hw.hardware_usd * ratio * capex_factor
    servers_usd = servers * hw.server_price_usd * capex_factor
    spares = hardware * hw.spares_fraction
    other = (hw.install_usd + hw.shipping_and_duties_usd) * ratio * capex_factor
    cost = hardware + spares + other
    it_kw = _it_kw(hw, site, servers)
    life = np.maximum(lifetime.astype(int), 1)

    k = np.arange(months)[None, :]
    age = k % life[:, None]
    bought = age == 0  # month 1 and every refresh
    # the support bought with a generation covers its first months (it is in the capex)
    maintained = age >= hw.maintenance_prepaid_months
    served = _served_gpu_hours(demand, scale, serving)
    wanted = scale[:, None] * demand.sum(axis=1)[None, :] * DAYS_PER_MONTH
    capacity_h = np.maximum(gpus, 1e-12)[:, None] * HOURS_PER_MONTH
    util = np.where(gpus[:, None] > 0, served / capacity_h, 0.0)
    draw = hw.idle_power_fraction + (1.0 - hw.idle_power_fraction) * util  # linear draw vs load
    ones = np.ones((1, months))
    lines = {
        "capex": (hardware + other)[:, None] * bought,
        "spares": spares[:, None] * bought,
        "residual_value": -(hw.residual_fraction * cost)[:, None] * (bought & (k > 0)),
        # maintenance = % of server capex per year (librarytechnology.org 7428: 10-12 %)
        "maintenance": (servers_usd * hw.maintenance_fraction_per_year / 12.0)[:, None] * maintained
        + sum(
            (
                support_renewals(amount * ratio * capex_factor, term, life, months)
                for amount, term in hw.support_contracts
            ),
            np.zeros((servers.shape[0], months)),
        ),
        # energy = IT kW × load factor × PUE × $/kWh × hours (Epoch energy.py, ref B2)
        "power": it_kw[:, None]
        * draw
        * site.pue
        * power_price[:, None]
        * HOURS_PER_MONTH
        * (servers[:, None] > 0),
        # space = $/kW-month × provisioned IT kW (CBRE, ref B2)
        "facility": (it_kw * site.facility_usd_per_kw_month)[:, None] * ones,
        "staff": (site.staff_usd_per_month * (servers > 0))[:, None] * ones,
        "cloud_overflow": (wanted - served) * cloud_price,
    }
    # book value: straight line from cost to residual over the life (ref B4, D12)
    age_end = months - ((months - 1) // life) * life
    wear = (1.0 - hw.residual_fraction) / life
    terminal = cost * (1.0 - wear * age_end)
    book = cost[:, None] * (1.0 - wear[:, None] * age)
    depreciation = (cost * wear)[:, None] * ones
    capital_charge = book * cost_of_capital / 12.0  # charge on capital tied up
    return _OwnedPaths(gpus, lines, terminal, served, wanted, depreciation, capital_charge)


def _read_only(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


def _unit_costs(
    amortised_total: float, tokens: float, requests: float
) -> tuple[float | None, float | None]:
    # $/Mtok = cost ÷ tokens × 1e6 (ref B5)
    per_mtok = amortised_total / tokens * 1e6 if tokens > 0 else None
    per_req = amortised_total / requests if requests > 0 else None
    return per_mtok, per_req


@dataclass(frozen=True, slots=True, eq=False)
class _WorkloadWork:
    """Each workload's horizon totals and its prefill and decode accelerator-seconds."""

    requests: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    prefill_s: np.ndarray | None  # None: some workload's accelerator-seconds are unknown
    decode_s: np.ndarray | None
    weight: np.ndarray  # what the option's cost is split by


def _workload_work(inputs: TcoInputs) -> _WorkloadWork:
    m = np.arange(inputs.horizon_months)

    def horizon(w: WorkloadDemand, attr: str) -> float:
        return float((getattr(w, attr) * (1.0 + w.growth_pct_per_month / 100.0) ** m).sum())

    ws = inputs.workloads
    requests = np.array([horizon(w, "requests_per_month") for w in ws])
    known = all(
        w.prefill_accelerator_s_per_request is not None
        and w.decode_accelerator_s_per_request is not None
        for w in ws
    )
    prefill = decode = None
    if known:
        # accelerator-s = requests × (input × prefill FLOPs/token ÷ prefill throughput) and
        # requests × output ÷ decode tokens/s per accelerator, per request from the sizing
        prefill = requests * np.array([w.prefill_accelerator_s_per_request for w in ws])
        decode = requests * np.array([w.decode_accelerator_s_per_request for w in ws])
    if known and (prefill + decode).sum() > 0:  # type: ignore[operator]
        weight = prefill + decode  # type: ignore[operator]
    else:
        prefill = decode = None
        weight = np.array([horizon(w, "gpu_hours_per_month") for w in ws])
    return _WorkloadWork(
        requests=requests,
        input_tokens=np.array([horizon(w, "input_tokens_per_month") for w in ws]),
        output_tokens=np.array([horizon(w, "output_tokens_per_month") for w in ws]),
        prefill_s=prefill,
        decode_s=decode,
        weight=weight,
    )


def _per_unit(amount: float, units: float, scale: float = 1.0) -> float | None:
    return amount / units * scale if units > 0 else None


def _workload_unit_costs(
    amortised_total: float, inputs: TcoInputs, work: _WorkloadWork
) -> tuple[tuple[WorkloadUnitCost, ...], float | None, float | None]:
    """Each workload's part of the option's amortised cost, and the option's input and output
    price per million tokens (the prefill and decode parts over all tokens, ref B5)."""
    total = float(work.weight.sum())
    rows = []
    for i, w in enumerate(inputs.workloads):
        share = float(work.weight[i]) / total if total > 0 else 0.0
        cost = amortised_total * share
        per_in = per_out = None
        if work.prefill_s is not None and work.decode_s is not None:
            per_in = _per_unit(
                amortised_total * work.prefill_s[i] / total, work.input_tokens[i], 1e6
            )
            per_out = _per_unit(
                amortised_total * work.decode_s[i] / total, work.output_tokens[i], 1e6
            )
        rows.append(
            WorkloadUnitCost(
                key=w.key,
                name=w.name,
                share=share,
                amortised_usd=cost,
                cost_per_request_usd=_per_unit(cost, work.requests[i]),
                cost_per_million_output_tokens_usd=_per_unit(cost, work.output_tokens[i], 1e6),
                input_usd_per_million_tokens=per_in,
                output_usd_per_million_tokens=per_out,
            )
        )
    if work.prefill_s is None or work.decode_s is None or total <= 0:
        return tuple(rows), None, None
    prefill_part = amortised_total * float(work.prefill_s.sum()) / total
    per_in = _per_unit(prefill_part, float(work.input_tokens.sum()), 1e6)
    per_out = _per_unit(amortised_total - prefill_part, float(work.output_tokens.sum()), 1e6)
    return tuple(rows), per_in, per_out


def _option(
    key: str,
    label: str,
    kind: str,
    lines: Mapping[str, np.ndarray],
    *,
    terminal: float,
    amortised: np.ndarray,
    inputs: TcoInputs,
    tokens: float,
    requests: float,
    cloud_cumulative: np.ndarray | None,
    **extra: object,
) -> OptionResult:
    monthly = sum(lines.values(), start=np.zeros(inputs.horizon_months))
    cumulative = np.cumsum(monthly)
    per_mtok, per_req = _unit_costs(float(amortised.sum()), tokens, requests)
    by_workload, per_in, per_out = _workload_unit_costs(
        float(amortised.sum()), inputs, _workload_work(inputs)
    )
    extra = {
        "input_usd_per_million_tokens": per_in,
        "output_usd_per_million_tokens": per_out,
        "workloads": by_workload,
        **extra,
    }
    return OptionResult(
        key=key,
        label=label,
        kind=kind,
        lines_usd={k: _read_only(v) for k, v in lines.items()},
        monthly_usd=_read_only(monthly),
        cumulative_usd=_read_only(cumulative),
        terminal_value_usd=float(terminal),
        net_cost_usd=float(cumulative[-1] - terminal),
        npv_usd=npv_usd(monthly, inputs.npv_rate, terminal),
        break_even_month=(
            None if cloud_cumulative is None else break_even_month(cumulative, cloud_cumulative)
        ),
        amortised_monthly_usd=_read_only(amortised),
        cost_per_million_output_tokens_usd=per_mtok,
        cost_per_request_usd=per_req,
        **extra,  # type: ignore[arg-type]
    )


def _committed_lines(
    demand: np.ndarray,
    price: np.ndarray,
    discount: float,
    term: int,
    *,
    whole: bool = False,
    unit: str = "GPUs",
    per: str = "GPU-h",
    shown: ShownIn = USD_SHOWN,
) -> tuple[dict[str, np.ndarray], float, list[str]]:
    """Committed capacity per term, the level scanned in 5 % steps of the term's peak
    (``whole``: every whole number of instances up to the peak)."""
    months = demand.shape[0]
    committed = np.zeros(months)
    on_demand = np.zeros(months)
    owed_after = 0.0
    notes = []
    fractions = np.linspace(0.0, 1.0, COMMIT_FRACTION_STEPS)
    for start in range(0, months, term):
        idx = np.arange(start, min(start + term, months))
        peak = demand[idx].max()
        if whole and math.ceil(peak) <= MAX_HYBRID_BASES:
            level = np.arange(math.ceil(peak - 1e-9) + 1, dtype=float)  # whole instances
        elif whole:
            level = np.unique(np.ceil(fractions * peak - 1e-9))
        else:
            level = fractions * peak  # GPUs committed, (F,)
        locked = price[start] * (1.0 - discount)  # price fixed for the term
        fee = level * HOURS_PER_MONTH * locked  # paid whether used or not
        over = np.maximum(demand[idx][None, :, :] - level[:, None, None], 0.0).sum(-1)
        over_usd = over * DAYS_PER_MONTH * price[idx][None, :]
        beyond = start + term - months if start + term > months else 0
        total = fee * (len(idx) + beyond) + over_usd.sum(axis=1)
        best = int(np.argmin(total))
        committed[idx] = fee[best]
        on_demand[idx] = over_usd[best]
        owed_after += fee[best] * beyond
        share = level[best] / peak if peak else 0.0
        notes.append(
            f"Months {start + 1}-{idx[-1] + 1}: commit {level[best]:.{0 if whole else 1}f} "
            f"{unit} ({share:.0%} of peak) at {shown.money(locked, 3)}/{per}."
        )
    if owed_after:
        notes.append(f"{shown.money(owed_after)} of commitment is still owed after the horizon.")
    return {"cloud_committed": committed, "cloud_on_demand": on_demand}, owed_after, notes


def _base_paths(
    inputs: TcoInputs,
    site: SiteCost,
    servers: np.ndarray,
    *,
    demand: np.ndarray | None = None,
    scale: np.ndarray | None = None,
) -> _OwnedPaths:
    """Owned cash flows at base-case prices for one or more fleet sizes (``servers``)."""
    demand = hourly_demand_gpus(inputs) if demand is None else demand
    ones = np.ones(servers.shape[0])
    price = _burst_price(inputs, site)
    return _owned_paths(
        demand,
        scale=ones if scale is None else scale,
        servers=servers.astype(float),
        hw=inputs.hardware,
        site=site,
        capex_factor=ones,
        lifetime=ones * inputs.hardware.lifetime_months,
        power_price=ones * site.power_usd_per_kwh,
        cloud_price=np.broadcast_to(price, (servers.shape[0], inputs.horizon_months)),
        cost_of_capital=inputs.cost_of_capital,
        spare_servers=site.spare_servers,
    )


def _burst_price(inputs: TcoInputs, site: SiteCost) -> np.ndarray:
    """On-demand price per GPU-hour, month by month, that load above the site's servers pays:
    the listing in the region serving its users (``SiteCost.burst_usd_per_gpu_h``), else the
    reference price."""
    start = (
        inputs.cloud.on_demand_usd_per_gpu_h
        if site.burst_usd_per_gpu_h is None
        else site.burst_usd_per_gpu_h
    )
    return _cloud_price(start, inputs.cloud.annual_price_decline, inputs.horizon_months)


def _sum_paths(parts: Sequence[_OwnedPaths]) -> _OwnedPaths:
    """The pooled fleet: the sites' cash flows, fleets and served hours added up."""
    return _OwnedPaths(
        gpus=sum(p.gpus for p in parts),
        lines={k: sum(p.lines[k] for p in parts) for k in parts[0].lines},
        terminal=sum(p.terminal for p in parts),
        served=sum(p.served for p in parts),
        demand=sum(p.demand for p in parts),
        depreciation=sum(p.depreciation for p in parts),
        capital_charge=sum(p.capital_charge for p in parts),
    )


def _placed_paths(
    inputs: TcoInputs,
    placement: Sequence[tuple[SiteCost, int]],
    demand: np.ndarray,
    *,
    scale: np.ndarray,
    capex_factor: np.ndarray | None = None,
    lifetime: np.ndarray | None = None,
    power_factor: np.ndarray | None = None,
    cloud_price: np.ndarray | None = None,
) -> list[_OwnedPaths]:
    """Owned cash flows of each site of the placement, for P paths (arguments of shape (P,)).

    Each site serves the share of the demand its servers hold of the fleet (the deployment
    splits replicas by the users' regions, so load follows servers) and sends what exceeds
    them to cloud on-demand.
    """
    hw = inputs.hardware
    ones = np.ones(scale.shape[0])
    demands = site_demands(inputs, placement, demand)
    shape = (scale.shape[0], inputs.horizon_months)
    return [
        _owned_paths(
            site_demand,
            scale=scale,
            servers=ones * float(servers),
            hw=hw,
            site=site,
            capex_factor=ones if capex_factor is None else capex_factor,
            lifetime=ones * hw.lifetime_months if lifetime is None else lifetime,
            power_price=site.power_usd_per_kwh * (ones if power_factor is None else power_factor),
            cloud_price=(
                np.broadcast_to(_burst_price(inputs, site), shape)
                if cloud_price is None
                else cloud_price
            ),
            cost_of_capital=inputs.cost_of_capital,
        )
        for (site, servers), site_demand in zip(placement, demands, strict=True)
    ]


def site_demands(
    inputs: TcoInputs, placement: Sequence[tuple[SiteCost, int]], demand: np.ndarray
) -> list[np.ndarray]:
    """The part of ``demand`` (months × 24 GPUs) each site of the placement serves.

    Each workload's load goes where its replicas are (``WorkloadDemand.site_shares``, made by
    where its users are), so a workload whose users are all in one region loads only the
    sites serving that region: hour by hour a site gets ``Σ_w share_w × D_w`` of the total.
    Without shares for every workload (or with one site) the load follows the sites' server
    shares.
    """
    total = sum(n for _, n in placement)
    keys = [site.key for site, _ in placement]
    if len(placement) < 2 or not all(w.site_shares for w in inputs.workloads):
        return [demand * (n / total) for _, n in placement]
    parts = _site_loads(inputs, keys, [_owned_load(inputs, w) for w in inputs.workloads])
    whole = parts.sum(axis=0)
    fraction = np.divide(parts, whole, out=np.zeros_like(parts), where=whole > 0)
    return [demand * fraction[i] for i in range(len(keys))]


def _owned_load(inputs: TcoInputs, w: WorkloadDemand) -> np.ndarray:
    """GPUs one workload keeps busy on the owned fleet, (months × 24)."""
    m = np.arange(inputs.horizon_months)[:, None]
    shape = np.asarray(w.daily_profile, dtype=float)
    return (
        w.gpu_hours_per_month
        * (1.0 + w.growth_pct_per_month / 100.0) ** m
        / HOURS_PER_MONTH
        * (shape / shape.mean())[None, :]
    )


def _cloud_load(inputs: TcoInputs, w: WorkloadDemand) -> np.ndarray:
    """GPUs serving one workload's load needs (no N+1 spares or headroom when its operating
    point is known, as :func:`hourly_cloud_gpus`), (months × 24)."""
    if w.cloud_gpus_by_hour is None:
        return _owned_load(inputs, w)
    m = np.arange(inputs.horizon_months)[:, None]
    growth = (1.0 + w.growth_pct_per_month / 100.0) ** m
    return np.asarray(w.cloud_gpus_by_hour, dtype=float)[None, :] * growth


def _site_loads(inputs: TcoInputs, keys: Sequence[str], loads: Sequence[np.ndarray]) -> np.ndarray:
    """Each site's part of the workloads' loads (sites × months × 24), by their site shares."""
    parts = np.zeros((len(keys), inputs.horizon_months, 24))
    for w, load in zip(inputs.workloads, loads, strict=True):
        shares = dict(w.site_shares)
        weight = sum(shares.get(k, 0.0) for k in keys)
        for i, k in enumerate(keys):
            # a share at a site outside the placement goes to the placed sites evenly
            parts[i] += load * (shares.get(k, 0.0) / weight if weight else 1.0 / len(keys))
    return parts


def break_even_utilisation(inputs: TcoInputs, site_key: str | None = None) -> float | None:
    """Average utilisation of the owned fleet above which owning beats cloud on-demand.

    Flat-load model over the horizon: owned net cost ``A + B·u`` (``A`` = capex, spares,
    maintenance, facility, staff and idle power, net of residual and terminal value; ``B`` =
    the load-dependent part of power), cloud cost ``C·u`` (the fleet's GPU-hours at on-demand
    prices). Owning wins above ``u* = A / (C − B)``, the B4 rule
    "owned cost at 100 % ÷ cloud price" extended with load-dependent power.

    Args:
        inputs: Run inputs.
        site_key: Site of the owned fleet (``None``: the deployment's sites, each with its
            servers, or the first site).

    Returns:
        ``u*`` in (0, 1], or ``None`` if owning does not beat renting even at 100 %.
    """
    hw = inputs.hardware
    months = inputs.horizon_months
    placement = inputs.placement(site_key)
    parts = _placed_paths(inputs, placement, hourly_demand_gpus(inputs), scale=np.zeros(1))
    no_load = _sum_paths(parts)
    fixed = sum(v[0].sum() for k, v in no_load.lines.items() if k != "cloud_overflow")
    a = fixed - float(no_load.terminal[0])
    b = sum(
        float(_it_kw(hw, site, np.array([float(n)]))[0])
        * (1.0 - hw.idle_power_fraction)
        * site.pue
        * site.power_usd_per_kwh
        * HOURS_PER_MONTH
        * months
        for site, n in placement
    )
    price = _cloud_price(
        inputs.cloud.on_demand_usd_per_gpu_h, inputs.cloud.annual_price_decline, months
    )
    c = float(hw.gpus * HOURS_PER_MONTH * price.sum())
    if c <= b:
        return None
    u = a / (c - b)  # A + B·u = C·u
    return float(u) if 0.0 < u <= 1.0 else (0.0 if u <= 0 else None)


def hourly_cloud_gpus(inputs: TcoInputs) -> np.ndarray:
    """GPUs a cloud provider runs at each hour of a typical day of each month.

    Workloads with ``cloud_gpus_by_hour`` rent what serving the load needs (no N+1 spares or
    headroom), grown like their demand; the others rent what the owned fleet runs.

    Returns:
        Array ``(horizon_months, 24)`` of GPUs.
    """
    m = np.arange(inputs.horizon_months)[:, None]
    total = np.zeros((inputs.horizon_months, 24))
    for w in inputs.workloads:
        growth = (1.0 + w.growth_pct_per_month / 100.0) ** m  # compound monthly growth
        if w.cloud_gpus_by_hour is not None:
            total += np.asarray(w.cloud_gpus_by_hour, dtype=float)[None, :] * growth
        else:
            shape = np.asarray(w.daily_profile, dtype=float)
            total += w.gpu_hours_per_month * growth / HOURS_PER_MONTH * shape / shape.mean()
    return total


def instances_by_hour(gpus: np.ndarray, gpus_per_instance: int) -> np.ndarray:
    """Whole instances needed to hold ``gpus`` each hour: ⌈GPUs ÷ GPUs per instance⌉."""
    return np.ceil(np.asarray(gpus, dtype=float) / gpus_per_instance - 1e-9)


def _generic_cloud_options(
    inputs: TcoInputs,
    demand: np.ndarray,
    gpu_hours: np.ndarray,
    price: np.ndarray,
    common: dict,
    shown: ShownIn = USD_SHOWN,
) -> list[OptionResult]:
    """On-demand, 1-/3-year and spot-mix options from one per-GPU-hour price (no providers)."""
    cloud = inputs.cloud
    months = inputs.horizon_months
    od_lines = {"cloud_on_demand": gpu_hours * price}  # GPU-hours × $/GPU-h
    on_demand = _option(
        "cloud_on_demand",
        "Cloud on-demand",
        "cloud_on_demand",
        od_lines,
        terminal=0.0,
        amortised=od_lines["cloud_on_demand"],
        cloud_cumulative=None,
        **common,
    )
    od_cum = on_demand.cumulative_usd
    options = [on_demand]
    for term, discount in ((12, cloud.commit_1yr_discount), (36, cloud.commit_3yr_discount)):
        lines, owed, notes = _committed_lines(demand, price, discount, term, shown=shown)
        amortised = sum(lines.values(), start=np.zeros(months))
        options.append(
            _option(
                f"cloud_committed_{term // 12}yr",
                f"Cloud {term // 12}-year commitment",
                "cloud_committed",
                lines,
                terminal=-owed,
                amortised=amortised,  # what is owed after the horizon buys later capacity
                cloud_cumulative=od_cum,
                notes=tuple(notes),
                **common,
            )
        )
    spot_lines = {
        "cloud_on_demand": gpu_hours * (1.0 - cloud.spot_share) * price,
        # spot share re-runs interrupted work: × (1 + overhead) at the spot discount
        "cloud_spot": gpu_hours
        * cloud.spot_share
        * (1.0 + cloud.spot_interruption_overhead)
        * price
        * (1.0 - cloud.spot_discount),
    }
    options.append(
        _option(
            "cloud_spot_mix",
            f"Cloud {cloud.spot_share:.0%} spot",
            "cloud_spot_mix",
            spot_lines,
            terminal=0.0,
            amortised=spot_lines["cloud_on_demand"] + spot_lines["cloud_spot"],
            cloud_cumulative=od_cum,
            **common,
        )
    )
    return options


def _provider_options(
    inputs: TcoInputs,
    provider: CloudProvider,
    cloud_gpus: np.ndarray,
    common: dict,
    shown: ShownIn = USD_SHOWN,
) -> list[OptionResult]:
    """One provider's on-demand, 1-/3-year and spot-mix options, all from its own list.

    Whole instances follow the daily profile hour by hour. Break-even months are set by the
    caller, against the reference (:func:`reference_option`).
    """
    cloud = inputs.cloud
    months = inputs.horizon_months
    instances = instances_by_hour(cloud_gpus, provider.gpus_per_instance)
    instance_hours = instances.sum(axis=1) * DAYS_PER_MONTH
    od = provider.on_demand_usd_per_instance_h
    price = _cloud_price(od, cloud.annual_price_decline, months)  # per instance-hour
    k, name = provider.key, provider.label
    peak = int(instances.max()) if instances.size else 0
    shape = (
        f"{peak} × {provider.gpus_per_instance}-GPU instance(s) at peak, whole instances "
        "hour by hour."
    )
    od_lines = {"cloud_on_demand": instance_hours * price}  # instance-hours × $/instance-h
    on_demand = _option(
        f"cloud_on_demand:{k}",
        f"{name} on-demand",
        "cloud_on_demand",
        od_lines,
        terminal=0.0,
        amortised=od_lines["cloud_on_demand"],
        cloud_cumulative=None,
        notes=(shape, *provider.flags),
        flags=provider.flags,
        **common,
    )
    options = [on_demand]
    for term, committed in (
        (12, provider.commit_1yr_usd_per_instance_h),
        (36, provider.commit_3yr_usd_per_instance_h),
    ):
        if committed is None:
            continue
        lines, owed, notes = _committed_lines(
            instances,
            price,
            1.0 - committed / od,  # the same provider's committed ÷ on-demand price
            term,
            whole=True,
            unit="instances",
            per="instance-h",
            shown=shown,
        )
        options.append(
            _option(
                f"cloud_committed_{term // 12}yr:{k}",
                f"{name} {term // 12}-year commitment",
                "cloud_committed",
                lines,
                terminal=-owed,
                amortised=sum(lines.values(), start=np.zeros(months)),
                cloud_cumulative=None,
                notes=(
                    *notes,
                    f"{term}-month term, billed monthly whether used or not; load above the "
                    "commitment runs on-demand.",
                    *provider.flags,
                ),
                flags=provider.flags,
                **common,
            )
        )
    if provider.spot_usd_per_instance_h is not None:
        spot = _cloud_price(provider.spot_usd_per_instance_h, cloud.annual_price_decline, months)
        spot_lines = {
            "cloud_on_demand": instance_hours * (1.0 - cloud.spot_share) * price,
            # spot share re-runs interrupted work: × (1 + overhead) at the provider's spot price
            "cloud_spot": instance_hours
            * cloud.spot_share
            * (1.0 + cloud.spot_interruption_overhead)
            * spot,
        }
        options.append(
            _option(
                f"cloud_spot_mix:{k}",
                f"{name} {cloud.spot_share:.0%} spot",
                "cloud_spot_mix",
                spot_lines,
                terminal=0.0,
                amortised=spot_lines["cloud_on_demand"] + spot_lines["cloud_spot"],
                cloud_cumulative=None,
                notes=provider.flags,
                flags=provider.flags,
                **common,
            )
        )
    return options


def run_tco(inputs: TcoInputs, progress: Progress = None, shown: ShownIn = USD_SHOWN) -> TcoResult:
    """Cash flows and figures of merit for every option.

    Options: ``cloud_on_demand``, ``cloud_committed_1yr``, ``cloud_committed_3yr``,
    ``cloud_spot_mix`` (with ``inputs.providers``: those of each provider that lists the
    price, keyed ``<option>:<provider key>``), one per site in ``inputs.sites`` (key = site
    key) and ``hybrid``.

    Args:
        inputs: Run inputs.
        progress: Optional ``(fraction, message)`` callback.
        shown: The currency and rate the options' notes write amounts in (figures stay USD).

    Returns:
        A :class:`TcoResult`.
    """
    report = progress or (lambda _f, _m: None)
    report(0.0, "Building demand")
    months = inputs.horizon_months
    demand = hourly_demand_gpus(inputs)
    gpu_hours = demand.sum(axis=1) * DAYS_PER_MONTH
    tokens_m = _per_month(inputs, "output_tokens_per_month")
    requests_m = _per_month(inputs, "requests_per_month")
    tokens, requests = float(tokens_m.sum()), float(requests_m.sum())
    cloud = inputs.cloud
    price = _cloud_price(cloud.on_demand_usd_per_gpu_h, cloud.annual_price_decline, months)
    common = {"inputs": inputs, "tokens": tokens, "requests": requests}

    report(0.1, "Cloud options")
    if inputs.providers:
        cloud_demand = hourly_cloud_gpus(inputs)
        options = [
            option
            for provider in inputs.providers
            for option in _provider_options(inputs, provider, cloud_demand, common, shown)
        ]
    else:
        options = _generic_cloud_options(inputs, demand, gpu_hours, price, common, shown)
    reference = reference_option(inputs, options)
    od_cum = reference.cumulative_usd
    options = [
        replace(
            o,
            break_even_month=(
                None if o is reference else break_even_month(o.cumulative_usd, od_cum)
            ),
        )
        for o in options
    ]

    report(0.4, "Owned and colocation options")
    hw = inputs.hardware
    if inputs.pooled:
        options.append(_pooled_option(inputs, demand, od_cum, common, shown))
    else:
        for site in inputs.sites:
            paths = _base_paths(inputs, site, np.array([hw.server_count]), demand=demand)
            options.append(
                _owned_option(
                    site.key,
                    site.label,
                    site.kind,
                    paths,
                    od_cum,
                    common,
                    break_even_u=break_even_utilisation(inputs, site.key),
                )
            )

    report(0.7, "Hybrid split")
    # With providers the hybrid's base serves the load itself (cloud bursts stand in for the
    # N+1 spares and headroom), so a zero base is exactly the reference on-demand option.
    # A pooled deployment's base keeps its N+1 spares on top (like-for-like with the owned
    # option); the load it serves and bursts is what the cloud would rent.
    options.append(
        _hybrid_option(inputs, cloud_demand if inputs.providers else demand, od_cum, common)
    )
    report(1.0, "Done")
    return TcoResult(
        months=np.arange(1, months + 1),
        demand_gpu_hours=_read_only(gpu_hours),
        peak_gpus=_read_only(demand.max(axis=1)),
        output_tokens=_read_only(tokens_m),
        requests=_read_only(requests_m),
        options=tuple(options),
        discount_rate=inputs.npv_rate,
        reference_key=reference.key,
    )


def reference_option(inputs: TcoInputs, options: Sequence[OptionResult]) -> OptionResult:
    """The break-even reference: of the cloud options compared (every price model of every
    provider the consultant allowed), the one with the lowest NPV of cost. Providers whose
    listing is flagged (users served from another area's region, region not stated) are left
    out unless every provider is flagged. Ties go to the earlier option."""
    flagged = {p.key for p in inputs.providers if p.flags}
    allowed = [o for o in options if o.key.partition(":")[2] not in flagged] or list(options)
    lowest = min(o.npv_usd for o in allowed)
    # ties (within float noise) go to the earlier option: on-demand before a commitment of 0
    return next(o for o in allowed if o.npv_usd <= lowest + 1e-9 * max(1.0, abs(lowest)))


def _pooled_option(
    inputs: TcoInputs,
    demand: np.ndarray,
    od_cum: np.ndarray,
    common: dict,
    shown: ShownIn = USD_SHOWN,
) -> OptionResult:
    """The one owned option of a deployment split over sites, with each site's part."""
    placement = inputs.placement()
    parts = _placed_paths(inputs, placement, demand, scale=np.ones(1))
    breakdown = tuple(
        SiteShare(
            key=site.key,
            label=site.label,
            servers=n,
            lines_total_usd={k: float(v[0].sum()) for k, v in part.lines.items()},
            net_cost_usd=float(sum(v[0].sum() for v in part.lines.values()) - part.terminal[0]),
            npv_usd=npv_usd(sum(part.lines.values())[0], inputs.npv_rate, float(part.terminal[0])),
            spare_servers=site.spare_servers,
        )
        for (site, n), part in zip(placement, parts, strict=True)
    )
    kinds = {site.kind for site, _ in placement}
    kind = kinds.pop() if len(kinds) == 1 else "owned"
    where = ", ".join(f"{site.label} {n}" for site, n in placement)
    option = _owned_option(
        "owned",
        f"Owned deployment ({where} servers)"
        if len(placement) > 1
        else f"Owned at {where} servers",
        kind,
        _sum_paths(parts),
        od_cum,
        common,
        break_even_u=break_even_utilisation(inputs),
        notes=(
            "One deployment over its sites: "
            + "; ".join(
                f"{b.label} {b.servers} servers, NPV {shown.money(b.npv_usd)}" for b in breakdown
            )
            + " (each site at its own power price, PUE and space).",
        ),
    )
    return replace(option, site_breakdown=breakdown)


def _owned_option(
    key: str,
    label: str,
    kind: str,
    paths: _OwnedPaths,
    od_cum: np.ndarray,
    common: dict,
    row: int = 0,
    notes: tuple[str, ...] = (),
    break_even_u: float | None = None,
) -> OptionResult:
    inputs: TcoInputs = common["inputs"]
    lines = {k: v[row] for k, v in paths.lines.items()}
    opex = sum(
        (v for k, v in lines.items() if k not in ("capex", "spares", "residual_value")),
        start=np.zeros(inputs.horizon_months),
    )
    amortised = paths.depreciation[row] + paths.capital_charge[row] + opex
    served, wanted = paths.served[row], paths.demand[row]
    gpus = int(paths.gpus[row])
    capacity = gpus * HOURS_PER_MONTH * inputs.horizon_months
    return _option(
        key,
        label,
        kind,
        lines,
        terminal=float(paths.terminal[row]),
        amortised=amortised,
        cloud_cumulative=od_cum,
        owned_gpus=gpus,
        mean_utilisation=float(served.sum()) / capacity if capacity else None,
        break_even_utilisation=break_even_u,
        notes=notes
        + (
            (
                f"{float((wanted - served).sum()):,.0f} GPU-hours exceed the owned fleet and "
                "run on cloud on-demand.",
            )
            if (wanted - served).sum() > 1e-6
            else ()
        ),
        **common,
    )


def hybrid_bases(server_count: int, peak_gpus: float, gpus_per_server: int) -> np.ndarray:
    """Owned bases the hybrid search tries: every count 0..N servers (N = the fleet, or the
    peak's servers if larger), spread evenly when N exceeds :data:`MAX_HYBRID_BASES`."""
    top = max(server_count, math.ceil(peak_gpus / gpus_per_server - 1e-9))
    if top <= MAX_HYBRID_BASES:
        return np.arange(top + 1)
    return np.unique(np.rint(np.linspace(0, top, MAX_HYBRID_BASES + 1)).astype(int))


def site_base_counts(servers: int, spare_servers: int) -> np.ndarray:
    """Owned bases a hybrid tries at one site of the deployment: none, or one load server and
    more up to the site's whole fleet, each with the site's N+1 spares (a base of ``b`` load
    servers owns ``b + spare_servers``)."""
    return np.array([0, *range(spare_servers + 1, servers + 1)], dtype=int)


def _min_plus(
    curves: Sequence[Mapping[int, tuple[float, tuple[int, ...]]]],
) -> dict[int, tuple[float, tuple[int, ...]]]:
    """Cheapest split of each total over the sites: ``total → (NPV, servers per site)``
    (the sites' costs are independent, so the best total is the sum of the sites' best)."""
    out: dict[int, tuple[float, tuple[int, ...]]] = {0: (0.0, ())}
    for curve in curves:
        step: dict[int, tuple[float, tuple[int, ...]]] = {}
        for total, (npv, split) in out.items():
            for n, (v, _) in curve.items():
                candidate = (npv + v, (*split, n))
                if total + n not in step or candidate[0] < step[total + n][0] - 1e-9:
                    step[total + n] = candidate
        out = step
    return out


def _site_hybrid_option(
    inputs: TcoInputs, demand: np.ndarray, od_cum: np.ndarray, common: dict
) -> OptionResult:
    """The like-for-like hybrid of a pooled deployment: at each site, a base of that site's
    own servers (with its N+1 spares) serving the load of the workloads placed there by
    where their users are, and the load above it in the cloud region serving those users."""
    placement = inputs.placement()
    if len(placement) > 1 and all(w.site_shares for w in inputs.workloads):
        # each site's base serves the load its workloads need (no spares or headroom: the
        # base keeps the site's N+1 spares on top), the rest bursts
        keys = [site.key for site, _ in placement]
        loads = _site_loads(inputs, keys, [_cloud_load(inputs, w) for w in inputs.workloads])
        demands = [loads[i] for i in range(len(keys))]
    else:
        demands = site_demands(inputs, placement, demand)
    per_site = []
    for (site, servers), site_demand in zip(placement, demands, strict=True):
        counts = site_base_counts(servers, site.spare_servers)
        paths = _base_paths(inputs, site, counts, demand=site_demand)
        monthly = sum(paths.lines.values(), start=np.zeros((counts.size, inputs.horizon_months)))
        npvs = _npv_paths(monthly, inputs.npv_rate, paths.terminal)
        per_site.append({int(n): (float(v), (int(n),)) for n, v in zip(counts, npvs, strict=True)})
    totals = _min_plus(per_site)
    curve = tuple((n, totals[n][0]) for n in sorted(totals))
    best_total = min(totals, key=lambda n: (totals[n][0], n))
    split = totals[best_total][1]
    parts = [
        _base_paths(inputs, site, np.array([n]), demand=site_demand)
        for (site, _), n, site_demand in zip(placement, split, demands, strict=True)
    ]
    gpus = inputs.hardware.gpus_per_server
    based = [(site, n) for (site, _), n in zip(placement, split, strict=True) if n]
    if not based:
        label = "Hybrid (collapses to cloud on-demand: best owned base is 0 servers)"
        note = (
            "Hybrid collapses to cloud on-demand: at every site of the deployment the cheapest "
            "owned base is none."
        )
    else:
        where = " + ".join(f"{site.label} {n}" for site, n in based)
        regions = ", ".join(
            dict.fromkeys(site.burst_region for site, _ in based if site.burst_region)
        )
        label = f"Hybrid ({where} servers base + cloud bursts" + (
            f" in {regions})" if regions else ")"
        )
        note = (
            "Owned base per site of the deployment, serving the workloads placed there by "
            "where their users are: "
            + "; ".join(
                f"{site.label} {n} server(s) ({n * gpus} GPUs"
                + (f", {site.spare_servers} of them the N+1 spare" if site.spare_servers else "")
                + ")"
                + (f", bursts in {site.burst_region}" if site.burst_region else "")
                for site, n in based
            )
            + f"; the lowest NPV of the bases searched (0-{sum(n for _, n in placement)} "
            "servers over the sites)."
        )
    option = _owned_option(
        "hybrid", label, "hybrid", _sum_paths(parts), od_cum, common, notes=(note,)
    )
    breakdown = tuple(
        SiteShare(
            key=site.key,
            label=site.label,
            servers=n,
            lines_total_usd={k: float(v[0].sum()) for k, v in part.lines.items()},
            net_cost_usd=float(sum(v[0].sum() for v in part.lines.values()) - part.terminal[0]),
            npv_usd=npv_usd(sum(part.lines.values())[0], inputs.npv_rate, float(part.terminal[0])),
            spare_servers=site.spare_servers if n else 0,
            burst_region=site.burst_region,
        )
        for (site, _), n, part in zip(placement, split, parts, strict=True)
    )
    return replace(
        option,
        base_curve=curve,
        site_breakdown=breakdown,
        break_even_month=None if not based else option.break_even_month,
    )


def _hybrid_option(
    inputs: TcoInputs, demand: np.ndarray, od_cum: np.ndarray, common: dict
) -> OptionResult:
    if inputs.pooled:
        return _site_hybrid_option(inputs, demand, od_cum, common)
    hw = inputs.hardware
    site = inputs.site(inputs.hybrid_site)
    peak = float(demand.max())
    candidates = hybrid_bases(hw.server_count, peak, hw.gpus_per_server)
    paths = _base_paths(inputs, site, candidates, demand=demand)
    monthly = sum(paths.lines.values(), start=np.zeros((candidates.size, inputs.horizon_months)))
    npvs = _npv_paths(monthly, inputs.npv_rate, paths.terminal)
    best = int(np.argmin(npvs))  # ties: the smallest base (argmin takes the first)
    servers = int(candidates[best])
    curve = tuple((int(n), float(v)) for n, v in zip(candidates, npvs, strict=True))
    if servers == 0:
        note = (
            f"Hybrid collapses to cloud on-demand: of {candidates.size} owned bases searched "
            f"(0-{int(candidates[-1])} servers at {site.label}) the cheapest is none."
        )
        label = "Hybrid (collapses to cloud on-demand: best owned base is 0 servers)"
    else:
        share = servers * hw.gpus_per_server / peak if peak else 0.0
        note = (
            f"Owned base of {servers} server(s) ({servers * hw.gpus_per_server} GPUs, "
            f"{share:.0%} of peak) at {site.label}, bursts on cloud on-demand; the lowest NPV "
            f"of {candidates.size} owned bases searched (0-{int(candidates[-1])} servers)."
        )
        label = f"Hybrid ({site.label} base + cloud bursts)"
    option = _owned_option(
        "hybrid",
        label,
        "hybrid",
        paths,
        od_cum,
        common,
        row=best,
        notes=(note,),
    )
    # A collapsed hybrid *is* on-demand: no break-even against itself.
    return replace(
        option,
        base_curve=curve,
        break_even_month=None if servers == 0 else option.break_even_month,
    )


# --- Uncertainty ------------------------------------------------------------------------------


def _apply_driver(inputs: TcoInputs, driver: str, factor: float) -> tuple[TcoInputs, float]:
    """Inputs with one driver multiplied by ``factor``, and the driver's new value."""
    hw, cloud = inputs.hardware, inputs.cloud
    if driver == "utilisation":
        workloads = tuple(
            replace(
                w,
                gpu_hours_per_month=w.gpu_hours_per_month * factor,
                output_tokens_per_month=w.output_tokens_per_month * factor,
                input_tokens_per_month=w.input_tokens_per_month * factor,
                requests_per_month=w.requests_per_month * factor,
                cloud_gpus_by_hour=(
                    None
                    if w.cloud_gpus_by_hour is None
                    else tuple(v * factor for v in w.cloud_gpus_by_hour)
                ),
            )
            for w in inputs.workloads
        )
        base = sum(w.gpu_hours_per_month for w in inputs.workloads)
        return replace(inputs, workloads=workloads), base * factor
    if driver == "power_price":
        sites = tuple(
            replace(s, power_usd_per_kwh=s.power_usd_per_kwh * factor) for s in inputs.sites
        )
        new = replace(inputs, sites=sites)
        placement = new.placement()
        total = sum(n for _, n in placement)
        # the fleet's mean power price, weighted by servers
        return new, sum(site.power_usd_per_kwh * n for site, n in placement) / total
    if driver == "hardware_price":
        new_hw = replace(
            hw,
            server_price_usd=hw.server_price_usd * factor,
            network_usd=None if hw.network_usd is None else hw.network_usd * factor,
            storage_usd=hw.storage_usd * factor,
            other_hardware_amount=hw.other_hardware_amount * factor,
        )
        return replace(inputs, hardware=new_hw), new_hw.server_price_usd
    if driver == "cloud_price":
        new_cloud = replace(cloud, on_demand_usd_per_gpu_h=cloud.on_demand_usd_per_gpu_h * factor)
        providers = tuple(
            replace(
                p,
                on_demand_usd_per_instance_h=p.on_demand_usd_per_instance_h * factor,
                commit_1yr_usd_per_instance_h=_times(p.commit_1yr_usd_per_instance_h, factor),
                commit_3yr_usd_per_instance_h=_times(p.commit_3yr_usd_per_instance_h, factor),
                spot_usd_per_instance_h=_times(p.spot_usd_per_instance_h, factor),
            )
            for p in inputs.providers
        )
        sites = tuple(
            replace(s, burst_usd_per_gpu_h=_times(s.burst_usd_per_gpu_h, factor))
            for s in inputs.sites
        )
        return replace(inputs, cloud=new_cloud, providers=providers, sites=sites), (
            new_cloud.on_demand_usd_per_gpu_h
        )
    if driver == "lifetime":
        life = max(1, round(hw.lifetime_months * factor))
        return replace(inputs, hardware=replace(hw, lifetime_months=life)), float(life)
    if driver == "discount_rate":
        rate = inputs.npv_rate * factor
        return replace(inputs, discount_rate=rate), rate
    raise EngineInputError(f"unknown driver {driver!r}; choose from {DEFAULT_DRIVERS}")


def _times(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


def _reference_cloud_monthly(
    inputs: TcoInputs, scale: np.ndarray, decline: np.ndarray | None = None
) -> np.ndarray:
    """Cloud on-demand cost per month of the reference, for P paths (``scale`` on demand).

    With providers it is the first provider's whole instances, following the daily profile
    hour by hour (as the base case's options); without, GPU-hours at the per-GPU-hour price.
    """
    months = inputs.horizon_months
    decline = (
        np.full(scale.shape[0], inputs.cloud.annual_price_decline) if decline is None else decline
    )
    if not inputs.providers:
        demand = hourly_demand_gpus(inputs)
        price = _cloud_price(
            np.full(scale.shape[0], inputs.cloud.on_demand_usd_per_gpu_h), decline, months
        )
        return scale[:, None] * demand.sum(axis=1)[None, :] * DAYS_PER_MONTH * price
    provider = inputs.providers[0]
    gpus = hourly_cloud_gpus(inputs)
    hours = np.empty((scale.shape[0], months))
    for m in range(months):  # whole instances per hour: ⌈scale·GPUs ÷ GPUs per instance⌉
        hours[:, m] = instances_by_hour(
            scale[:, None] * gpus[m][None, :], provider.gpus_per_instance
        ).sum(axis=1)
    price = _cloud_price(
        np.full(scale.shape[0], provider.on_demand_usd_per_instance_h), decline, months
    )
    return hours * DAYS_PER_MONTH * price


def _savings_npv(inputs: TcoInputs, site_key: str | None) -> float:
    """NPV of cloud on-demand minus NPV of owning (positive = owning saves)."""
    demand = hourly_demand_gpus(inputs)
    one = np.ones(1)
    cloud = _reference_cloud_monthly(inputs, one)[0]
    owned = _sum_paths(_placed_paths(inputs, inputs.placement(site_key), demand, scale=one))
    rate = inputs.npv_rate
    return npv_usd(cloud, rate) - npv_usd(
        sum(owned.lines.values())[0], rate, float(owned.terminal[0])
    )


def sensitivity(
    inputs: TcoInputs,
    drivers: Sequence[str] = DEFAULT_DRIVERS,
    swing: float = 0.2,
    *,
    site_key: str | None = None,
) -> tuple[TornadoBar, ...]:
    """One-at-a-time sensitivity of the NPV saved by owning, for a tornado chart.

    Each driver is multiplied by ``1 − swing`` and ``1 + swing`` (lifetime rounded to whole
    months; utilisation scales demand, tokens and requests together; the power price moves
    at every site) while the others stay at the base case. The metric is NPV(cloud
    on-demand) − NPV(owned): positive means owning saves money. Cloud rents whole instances
    of the reference provider, as in the base case.

    Args:
        inputs: Base-case inputs.
        drivers: Drivers to swing (see :data:`DEFAULT_DRIVERS`).
        swing: Relative swing, e.g. 0.2 for ±20 %.
        site_key: One site holding the whole fleet (``None``: the deployment's sites).

    Returns:
        Bars sorted by span, widest first.

    Raises:
        ValueError: On an unknown driver or a swing outside (0, 1).
    """
    if not 0 < swing < 1:
        raise EngineInputError("swing must be in (0, 1)")
    base = _savings_npv(inputs, site_key)
    bars = []
    for driver in drivers:
        lo_in, lo_value = _apply_driver(inputs, driver, 1.0 - swing)
        hi_in, hi_value = _apply_driver(inputs, driver, 1.0 + swing)
        lo, hi = _savings_npv(lo_in, site_key), _savings_npv(hi_in, site_key)
        bars.append(
            TornadoBar(driver, lo_value, hi_value, lo, hi, base, abs(hi - lo), DRIVER_UNITS[driver])
        )
    return tuple(sorted(bars, key=lambda b: -b.span_usd))


def _triangular(
    rng: np.random.Generator, spec: tuple[float, float | None, float], base: float, size: int
) -> np.ndarray:
    low, mode, high = spec
    mode = base if mode is None else mode
    mode = min(max(mode, low), high)
    if high <= low:
        return np.full(size, float(low))
    return rng.triangular(low, mode, high, size)


def monte_carlo(
    inputs: TcoInputs,
    paths: int = 10_000,
    seed: int | None = 0,
    *,
    uncertainty: UncertaintySpec | None = None,
    site_key: str | None = None,
    progress: Progress = None,
) -> MonteCarloResult:
    """Cumulative-cost bands of owning (at one site) against cloud on-demand.

    Samples, per path, triangular distributions of utilisation (a factor on demand), power
    price, hardware price, annual cloud price decline and hardware lifetime, then computes all
    paths at once with NumPy (no loop over paths). Owned cost includes refreshes when the
    sampled lifetime is shorter than the horizon and cloud overflow when demand exceeds the
    fleet.

    Args:
        inputs: Base-case inputs.
        paths: Number of simulated paths.
        seed: Seed of NumPy's default generator (same seed, same result).
        uncertainty: Distributions; :class:`UncertaintySpec` defaults if ``None``.
        site_key: Site of the owned fleet (first site if ``None``).
        progress: Optional ``(fraction, message)`` callback.

    Returns:
        A :class:`MonteCarloResult`.
    """
    if paths < 1:
        raise EngineInputError("paths must be ≥ 1")
    report = progress or (lambda _f, _m: None)
    spec = uncertainty or UncertaintySpec()
    placement = inputs.placement(site_key)
    hw, cloud = inputs.hardware, inputs.cloud
    months = inputs.horizon_months
    report(0.0, "Sampling drivers")
    rng = np.random.default_rng(seed)
    scale = _triangular(rng, spec.utilisation_factor, 1.0, paths)
    power = _triangular(rng, spec.power_price_factor, 1.0, paths)  # a factor at every site
    capex = _triangular(rng, spec.hardware_price_factor, 1.0, paths)
    decline = _triangular(rng, spec.annual_cloud_price_decline, cloud.annual_price_decline, paths)
    life = np.rint(_triangular(rng, spec.lifetime_months, hw.lifetime_months, paths)).astype(int)

    report(0.2, "Cloud cash flows")
    demand = hourly_demand_gpus(inputs)
    price = _cloud_price(np.full(paths, cloud.on_demand_usd_per_gpu_h), decline, months)
    cloud_cum = np.cumsum(_reference_cloud_monthly(inputs, scale, decline), axis=1)

    report(0.4, "Owned cash flows")
    owned = _sum_paths(
        _placed_paths(
            inputs,
            placement,
            demand,
            scale=scale,
            capex_factor=capex,
            lifetime=life,
            power_factor=power,
            cloud_price=price,
        )
    )
    owned_cum = np.cumsum(sum(owned.lines.values()), axis=1)

    report(0.8, "Percentiles")
    owned_q = np.percentile(owned_cum, [10, 50, 90], axis=0)
    cloud_q = np.percentile(cloud_cum, [10, 50, 90], axis=0)
    cheaper = float(np.mean(owned_cum[:, -1] - owned.terminal < cloud_cum[:, -1]))
    report(1.0, "Done")
    return MonteCarloResult(
        months=np.arange(1, months + 1),
        owned_p10_usd=_read_only(owned_q[0]),
        owned_p50_usd=_read_only(owned_q[1]),
        owned_p90_usd=_read_only(owned_q[2]),
        cloud_p10_usd=_read_only(cloud_q[0]),
        cloud_p50_usd=_read_only(cloud_q[1]),
        cloud_p90_usd=_read_only(cloud_q[2]),
        probability_owned_cheaper=cheaper,
        site_key="owned" if site_key is None and inputs.pooled else placement[0][0].key,
        paths=paths,
        seed=seed,
    )
