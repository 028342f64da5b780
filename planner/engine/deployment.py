"""What a plan deploys: per workload, the chosen accelerators packed into servers.

The facility, TCO and sourcing modules all start from this. When the catalog has no server
platform for the chosen accelerator (or the platform lacks a figure), the server's power and
height are estimated and the estimate says so in ``assumptions``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from planner.engine.errors import CatalogGapError, EngineInputError

# Server power ≈ 1.82 × GPU TDP per GPU for an 8-GPU H100 node (Epoch AI, energy.py;
# shared/reference/facility_tco_sourcing.md A2); applied per accelerator when no figure exists.
SERVER_POWER_PER_ACCELERATOR_TDP = 1.82
# Planner assumption: 8-accelerator systems are 8U (DGX H100; ref A2 lists 8-10U), smaller
# boxes 4U (4 GPUs) or 2U (1-2 GPUs), as in common PCIe chassis.
DEFAULT_RACK_UNITS_BY_ACCELERATORS = ((8, 8), (4, 4), (1, 2))


@dataclass(frozen=True, slots=True)
class Deployment:
    """One workload's hardware as chosen from sizing.

    Attributes:
        workload_id: The workload's id.
        workload_name: Its name, for labels.
        accelerator_slug: Catalog slug of the accelerator.
        accelerator_name: Display name.
        precision: Serving precision (bf16, fp8, ...).
        tensor_parallel: Accelerators per replica.
        replicas: Model replicas at peak (headroom and N+1 included).
        accelerators: Accelerators in total.
        accelerators_per_server: Accelerators in one server.
        servers: Servers in total (accelerators ÷ per server, rounded up).
        server_slug: Catalog slug of the server platform, "" when none was chosen.
        server_name: Display name of the server (or a generic description).
        server_power_kw: Maximum power of one server, kW.
        server_rack_units: Height of one server, rack units.
        accelerator_tdp_w: One accelerator's power, W (None when unpublished).
        assumptions: Sentences saying which figures were estimated and how.
    """

    workload_id: int
    workload_name: str
    accelerator_slug: str
    accelerator_name: str
    precision: str
    tensor_parallel: int
    replicas: int
    accelerators: int
    accelerators_per_server: int
    servers: int
    server_slug: str
    server_name: str
    server_power_kw: float
    server_rack_units: int
    accelerator_tdp_w: float | None
    assumptions: tuple[str, ...] = field(default_factory=tuple)

    @property
    def it_load_kw(self) -> float:
        """Maximum IT power of all servers, kW."""
        return self.servers * self.server_power_kw


def estimate_server(
    *,
    accelerators_per_server: int,
    accelerator_tdp_w: float | None,
    platform_power_kw: float | None,
    platform_rack_units: int | None,
    accelerator_name: str = "the accelerator",
) -> tuple[float, int, tuple[str, ...]]:
    """Power (kW) and height (RU) of one server, from the platform or estimated.

    Returns:
        (power_kw, rack_units, assumptions).

    Raises:
        CatalogGapError: Neither the platform's power nor the accelerator's TDP is published.
        EngineInputError: A figure is negative, not finite or the server holds no accelerator.
    """
    if accelerators_per_server < 1:
        raise EngineInputError(
            f"A server holds at least one accelerator, not {accelerators_per_server}."
        )
    for name, value in (("server power (kW)", platform_power_kw), ("TDP (W)", accelerator_tdp_w)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise EngineInputError(f"The catalog's {name} must be a positive number, not {value}.")
    assumptions: list[str] = []
    if platform_power_kw:
        power_kw = platform_power_kw
    elif accelerator_tdp_w:
        power_kw = (
            SERVER_POWER_PER_ACCELERATOR_TDP * accelerator_tdp_w * accelerators_per_server / 1000
        )
        assumptions.append(
            f"server power estimated as 1.82 × {accelerator_tdp_w:g} W × "
            f"{accelerators_per_server} accelerators = {power_kw:.1f} kW (Epoch AI ratio)"
        )
    else:
        raise CatalogGapError(
            f"The catalog publishes neither the server's power nor {accelerator_name}'s TDP, "
            "so the server's power cannot be estimated.",
            item=accelerator_name,
            figure="TDP",
        )
    if platform_rack_units:
        rack_units = platform_rack_units
    else:
        rack_units = next(
            ru
            for minimum, ru in DEFAULT_RACK_UNITS_BY_ACCELERATORS
            if accelerators_per_server >= minimum
        )
        assumptions.append(f"server height taken as {rack_units}U (planner assumption)")
    return power_kw, rack_units, tuple(assumptions)


def servers_needed(accelerators: int, accelerators_per_server: int) -> int:
    """Servers to hold the accelerators (whole servers)."""
    return math.ceil(accelerators / accelerators_per_server)


def racks_needed(servers: int, servers_per_rack: int) -> int:
    """Racks for ``servers`` at ``servers_per_rack`` each: a partial rack is a rack."""
    if servers_per_rack < 1:
        raise ValueError("servers_per_rack must be ≥ 1")
    return math.ceil(servers / servers_per_rack)
