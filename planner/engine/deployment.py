"""What a plan deploys: per workload, the chosen accelerators packed into servers.

The facility, TCO and sourcing modules all start from this. When the catalog has no server
platform for the chosen accelerator (or the platform lacks a figure), the server's power and
height are estimated and the estimate says so in ``assumptions``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from planner.engine.errors import CatalogGapError, EngineInputError

# Server power when the catalog has no platform figure: host base + n × (accelerator power +
# its share of the platform). Host base: a two-socket host (two ~350 W CPUs, memory, drives,
# fans) at about 1.0 kW (planner assumption). Platform share per accelerator on an SXM/OAM
# baseboard (NVSwitch, one scale-out NIC per GPU, fans): DGX H100 10.2 kW max − 8 × 700 W −
# 1.0 kW host = 4.6 kW, 0.45 kW per GPU (facility_tco_sourcing.md A2); the same share gives a
# GB200 NVL72 72 × (1.2 + 0.45) = 119 kW, against the ≈120 kW NVIDIA quotes (A2). A PCIe card
# adds its slot's share of fans and riser, about 0.05 kW (planner assumption).
HOST_BASE_KW = 1.0
BASEBOARD_SHARE_KW_PER_ACCELERATOR = 0.45
PCIE_SHARE_KW_PER_ACCELERATOR = 0.05
# Systems with 8 or more accelerators sit on a switched baseboard; 32 or more are rack-scale
# (NVL72: 18 compute trays and 9 switch trays in one liquid-cooled rack, A2), whose hosts
# (Grace CPUs in the trays) are inside the per-accelerator share.
BASEBOARD_ACCELERATORS = 8
RACK_SCALE_ACCELERATORS = 32
RACK_SCALE_RACK_UNITS = 48  # one full rack (MGX/NVL72 racks are 48U class)
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
        prefill_tensor_parallel: Disaggregated serving: accelerators per prefill replica
            (``tensor_parallel`` is then the decode replica's), else None.
        prefill_replicas: Disaggregated serving: prefill replicas among ``replicas`` (both
            pools, each with its own N+1 spare), else 0.
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
    prefill_tensor_parallel: int | None = None
    prefill_replicas: int = 0

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

    Without a platform figure: host base power + n × (accelerator power + platform share)
    (constants above); a rack-scale system (≥ 32 accelerators, e.g. GB200 NVL72) is one rack.

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
    n = accelerators_per_server
    rack_scale = n >= RACK_SCALE_ACCELERATORS
    if platform_power_kw:
        power_kw = platform_power_kw
    elif accelerator_tdp_w:
        gpu_kw = accelerator_tdp_w / 1000
        if rack_scale:
            power_kw = n * (gpu_kw + BASEBOARD_SHARE_KW_PER_ACCELERATOR)
            assumptions.append(
                f"rack-scale system: power estimated as {n} × ({accelerator_tdp_w:g} W + "
                f"{BASEBOARD_SHARE_KW_PER_ACCELERATOR * 1000:g} W platform share) = "
                f"{power_kw:.1f} kW for the rack (GB200 NVL72: about 120 kW, liquid-cooled)"
            )
        else:
            share = (
                BASEBOARD_SHARE_KW_PER_ACCELERATOR
                if n >= BASEBOARD_ACCELERATORS
                else PCIE_SHARE_KW_PER_ACCELERATOR
            )
            power_kw = HOST_BASE_KW + n * (gpu_kw + share)
            assumptions.append(
                f"server power estimated as {HOST_BASE_KW:g} kW host + {n} × "
                f"({accelerator_tdp_w:g} W + {share * 1000:g} W platform share) = "
                f"{power_kw:.2f} kW"
            )
    else:
        raise CatalogGapError(
            f"The catalog publishes neither the server's power nor {accelerator_name}'s TDP, "
            "so the server's power cannot be estimated.",
            item=accelerator_name,
            figure="TDP",
        )
    if not math.isfinite(power_kw):
        raise EngineInputError(
            f"{n} accelerators of {accelerator_tdp_w:g} W give a server power too large to plan."
        )
    if platform_rack_units:
        rack_units = platform_rack_units
    elif rack_scale:
        rack_units = RACK_SCALE_RACK_UNITS
        assumptions.append(
            f"rack-scale system: one whole rack ({rack_units}U), one system per rack"
        )
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
