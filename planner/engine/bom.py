"""Bill of materials generated from the chosen deployment configurations.

Contract: :func:`generate_bom` turns one or more :class:`DeploymentInput` (what the sizing step
chose: server platform, server count, accelerators, NICs, racks, PDUs, storage) into
:class:`BomLine` rows - servers, accelerators, NICs, leaf/spine switches, optics, cables, racks,
PDUs, storage, spares and services - each with the arithmetic that produced it in ``reason``.
:func:`regenerate` re-runs the generator after the sizing changed while keeping what a
consultant typed by hand, and lists the changes in plain words.

Quantities are whole units (``int``). No money here: prices come from offers
(:mod:`planner.engine.landed_cost`). No Django import.

Fabric rule: a deployment whose replicas each fit one server (single-node tensor
parallelism, the usual case for inference) gets a front-end Ethernet network only (one NIC per
server); a deployment with a replica spanning servers gets a scale-out fabric, rail-optimised
with one NIC per accelerator. Either network is sized the same way:

* all NIC ports fit on one switch (``ports <= leaf_radix``) → a single leaf tier, no spine;
* otherwise a two-tier leaf/spine Clos: each leaf uses half its ports down (to NICs) and half
  up (to spines), so it is non-blocking when full; ``leaves = ceil(ports / (radix / 2))``,
  ``spines = ceil(leaves × radix / 2 / radix)``; a two-tier fabric holds at most
  ``radix × radix / 2`` NIC ports (each spine port goes to a different leaf).
* every link has one cable and an optic at each end; a server whose NIC cages take
  multi-port modules (a DGX H100/H200/B200: four OSFP cages serving eight single-port 400G
  ConnectX-7, each cage one twin-port 2×400G OSFP module — NVIDIA DGX BasePOD reference
  architecture, Core Components; DGX B200 user guide, Network Ports) takes
  ``ceil(NIC ports ÷ ports per cage)`` modules per server at its end, not one per link.

Fit rule (:class:`LinkParts`): the NIC, optics and cable of a link run at the port speed of
the switch it ends on, and each pluggable's form factor fits the cage it plugs into
(:func:`form_factor_fits`); a server platform that ships with its own NICs gets no NIC line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_CEILING, Decimal
from typing import Literal

from planner.engine.errors import EngineInputError

__all__ = [
    "BomError",
    "FORM_FACTOR_FITS",
    "OpticPart",
    "form_factor_fits",
    "BomLine",
    "DeploymentInput",
    "FabricPlan",
    "FabricSpec",
    "GeneratedBom",
    "LinkParts",
    "SiteSubtotal",
    "SparesPolicy",
    "ServicesPolicy",
    "generate_bom",
    "plan_fabric",
    "plan_subtotal",
    "regenerate",
    "site_subtotals",
]

LineOrigin = Literal["generated", "manual", "override"]


class BomError(EngineInputError):
    """Raised when a deployment cannot be turned into a bill of materials."""


# Which module form factors a cage takes. OSFP is its own mechanical family (OSFP MSA rev 5.0:
# not QSFP-compatible); a QSFP-family cage takes its own generation and the earlier ones
# (QSFP112 MSA: backward compatible with QSFP56/QSFP28; SFF-8665 QSFP28, SFF-8636
# management), and a QSFP-DD cage takes QSFP modules (QSFP-DD MSA rev 6.0: backward
# compatible with QSFP28/56/112).
FORM_FACTOR_FITS: dict[str, frozenset[str]] = {
    "OSFP": frozenset({"OSFP"}),
    "QSFP-DD": frozenset({"QSFP-DD", "QSFP112", "QSFP56", "QSFP28"}),
    "QSFP112": frozenset({"QSFP112", "QSFP56", "QSFP28"}),
    "QSFP56": frozenset({"QSFP56", "QSFP28"}),
    "QSFP28": frozenset({"QSFP28"}),
}


def form_factor_fits(cage: str, module: str) -> bool:
    """True when a module of form factor ``module`` plugs into a ``cage`` port; an unstated
    form factor ("") on either side cannot be shown to fit."""
    return bool(cage and module) and module in FORM_FACTOR_FITS.get(cage, frozenset({cage}))


@dataclass(frozen=True, slots=True)
class OpticPart:
    """A transceiver the server end of a link may need: its slug, speed per port, ports per
    module (2 for a twin-port 2×400G OSFP) and form factor."""

    slug: str
    gbps: int | None
    ports: int
    form_factor: str


@dataclass(frozen=True, slots=True)
class DeploymentInput:
    """One chosen configuration at one site.

    Attributes:
        key: Short identifier of the deployment (e.g. ``"fra-1"``), used in error messages.
        server_slug: Catalog slug of the server platform (e.g. ``"dgx-h100"``).
        server_name: Display name of the platform (e.g. ``"NVIDIA DGX H100"``).
        servers: Number of servers (units).
        accelerators_per_server: Accelerators in each server (units).
        accelerator_slug: Catalog slug of the accelerator; needed when sold separately.
        accelerators_sold_separately: True when the accelerators are bought as separate parts
            (e.g. PCIe cards for a barebone chassis), False when the server includes them.
        nics_per_server: Scale-out NICs per server (units). ``None`` means one per accelerator
            (rail-optimised fabric).
        racks: Number of racks (units).
        pdus_per_rack: Rack PDUs per rack; 2 for A/B feeds.
        storage_per_server: Storage drives per server (units), 0 for none.
        storage_slug: Catalog slug of the drive.
        site: Site name, prefixed to each reason so merged lines say where units go.
        scale_out: True when a replica spans servers (tensor parallelism across servers
            needs the rail-optimised scale-out fabric, one NIC per accelerator); False for
            single-server replicas, which only need a front-end Ethernet network (one NIC
            per server by default) for requests and management.
        pdu_slug: Catalog slug of the PDU matching the site's voltage, phase and breaker.
        pdu_description: Its description ("Rack PDU, 3-phase 208 V 30 A").
        nics_included_gbps: Port speed of the NICs the server platform ships with (e.g. a
            DGX's ConnectX-7 at 400 Gb/s); such a server gets no NIC line. ``None``: the NICs
            are bought as parts.
        nics_included_form_factor: The cage of those NICs' scale-out ports (a DGX: OSFP).
        nics_included_ports_per_cage: NIC ports each such cage serves (a DGX: 2, one
            twin-port 2×400G module per cage).
        front_end_form_factor: The cage of the server's own front-end ports (a DGX: QSFP112),
            when it ships with them.
        site_key: Key of the site the units go to (e.g. ``"site-12"``); the lines it yields
            belong to that site and are never merged with another site's (each site is
            bought, shipped and landed on its own). ``""`` = no site entered.
    """

    key: str
    server_slug: str
    server_name: str
    servers: int
    accelerators_per_server: int
    racks: int
    accelerator_slug: str = ""
    accelerators_sold_separately: bool = False
    nics_per_server: int | None = None
    pdus_per_rack: int = 2
    storage_per_server: int = 0
    storage_slug: str = "nvme-drive"
    site: str = ""
    scale_out: bool = True
    pdu_slug: str = "rack"
    pdu_description: str = "Rack PDU"
    site_key: str = ""
    nics_included_gbps: int | None = None
    nics_included_form_factor: str = ""
    nics_included_ports_per_cage: int = 1
    front_end_form_factor: str = ""

    @property
    def effective_nics_per_server(self) -> int:
        """NICs per server: given, else one per accelerator (scale-out, rail-optimised) or one
        front-end NIC per server."""
        if self.nics_per_server is not None:
            return self.nics_per_server
        return self.accelerators_per_server if self.scale_out else 1


@dataclass(frozen=True, slots=True)
class LinkParts:
    """The parts of one network's links, each with the port speed it runs at (Gb/s).

    Fit rule: the NIC, the optics and the cable of a link run at the port speed of the switch
    the link ends on. A speed of ``None`` is a part with no speed of its own (a passive fibre
    cable carries any rate its transceivers drive).

    Attributes:
        nic_key: Part key of the NIC bought for this network (``"nic:<slug>"``).
        nic_description: Its line description.
        nic_gbps: NIC port speed.
        switch_slug: Catalog slug of the switch (the same model serves as leaf and spine).
        switch_port_gbps: Switch port speed.
        optic_slug: Catalog slug of the transceiver at each end of a link.
        optic_gbps: Transceiver speed.
        cable_slug: Catalog slug of the cable of a link.
        cable_gbps: Cable speed, ``None`` for a passive fibre.
        tier: Prefix of the switch descriptions (``"Front-end "`` or ``""``).
        nic_form_factor: Cage of the NIC's ports (``OSFP``, ``QSFP112``, ``QSFP28`` …).
        switch_form_factor: Cage of the switch's ports.
        optic_form_factor: Form factor of the transceiver.
    """

    nic_key: str
    nic_description: str
    nic_gbps: int | None
    switch_slug: str
    switch_port_gbps: int | None
    optic_slug: str
    optic_gbps: int | None
    cable_slug: str
    cable_gbps: int | None = None
    tier: str = ""
    nic_form_factor: str = ""
    switch_form_factor: str = ""
    optic_form_factor: str = ""

    def mismatches(
        self,
        included_nic_gbps: int | None = None,
        server_cage: str | None = None,
        server_optic: OpticPart | None = None,
    ) -> list[str]:
        """What does not fit, in words; empty when every link part runs at the switch port
        speed and every pluggable fits its cage. ``included_nic_gbps``: the speed of the NICs
        the server ships with (no NIC is bought), which may run a port slower but not faster
        than they are rated; ``server_cage``: their cage (``None``: the bought NIC's);
        ``server_optic``: the module at the server end when it is not the link's optic."""
        port = self.switch_port_gbps
        found: list[str] = []
        if port is None:
            return [f"{self.switch_slug} has no port speed"]
        cage = self.nic_form_factor if server_cage is None else server_cage
        at_server = server_optic or OpticPart(
            self.optic_slug, self.optic_gbps, 1, self.optic_form_factor
        )
        # The cable is a fibre that plugs into the transceivers (MPO), not into a cage.
        if not form_factor_fits(self.switch_form_factor, self.optic_form_factor):
            found.append(
                f"optic {self.optic_slug} {self.optic_form_factor or 'form factor not stated'} "
                f"does not fit the switch port ({self.switch_form_factor or 'not stated'})"
            )
        if not form_factor_fits(cage, at_server.form_factor):
            found.append(
                f"optic {at_server.slug} {at_server.form_factor or 'form factor not stated'} "
                f"does not fit the server's NIC port ({cage or 'not stated'})"
            )
        if server_optic is not None and server_optic.gbps != port:
            found.append(f"optic {server_optic.slug} {server_optic.gbps}G ≠ switch port {port}G")
        if included_nic_gbps is not None:
            if included_nic_gbps < port:
                found.append(
                    f"the server's own {included_nic_gbps}G NICs are slower than the "
                    f"{port}G switch ports"
                )
        elif self.nic_gbps != port:
            found.append(f"NIC {self.nic_gbps}G ≠ switch port {port}G")
        if self.optic_gbps != port:
            found.append(f"optic {self.optic_slug} {self.optic_gbps}G ≠ switch port {port}G")
        if self.cable_gbps is not None and self.cable_gbps != port:
            found.append(f"cable {self.cable_slug} {self.cable_gbps}G ≠ switch port {port}G")
        return found


# Defaults: a 400G scale-out fabric (one 400G NIC per GPU, as in the 8 x 400G HGX systems
# of catalog/data/servers.csv) and a 100G front-end Ethernet network (catalog/data/parts.csv).
SCALE_OUT_400G = LinkParts(
    "nic:scale-out",
    "Scale-out NIC",
    400,
    "switch-64p",
    400,
    "optic-400g",
    400,
    "fibre-cable",
    nic_form_factor="OSFP",
    switch_form_factor="OSFP",
    optic_form_factor="OSFP",
)
# The module a twin-port OSFP cage takes (a DGX H100/H200/B200's compute fabric): one 2×400G
# twin-port OSFP transceiver per cage (NVIDIA MMA4Z00-NS-FLT, 800G twin-port 2×400G).
TWIN_PORT_400G_OSFP = OpticPart("optic-2x400g-osfp", 400, 2, "OSFP")
FRONT_END_100G = LinkParts(
    "nic:nic-eth-front-end",
    "Front-end Ethernet NIC",
    100,
    "switch-eth-front-end",
    100,
    "optic-100g-qsfp28",
    100,
    "fibre-cable",
    tier="Front-end ",
    nic_form_factor="QSFP28",
    switch_form_factor="QSFP28",
    optic_form_factor="QSFP28",
)


@dataclass(frozen=True, slots=True)
class FabricSpec:
    """Switch radix and the link parts of the scale-out and the front-end networks.

    Attributes:
        leaf_radix: Ports per switch (e.g. 64 × 400G). Leaves use half down, half up.
        scale_out: Parts of the rail-optimised fabric (replicas spanning servers).
        front_end: Parts of the front-end network (single-server replicas).
        server_optics: Multi-port transceivers for servers whose NIC cages serve several ports
            (chosen by form factor, ports per module and speed).
    """

    leaf_radix: int = 64
    scale_out: LinkParts = SCALE_OUT_400G
    front_end: LinkParts = FRONT_END_100G
    server_optics: tuple[OpticPart, ...] = (TWIN_PORT_400G_OSFP,)


@dataclass(frozen=True, slots=True)
class SparesPolicy:
    """How many spares to buy.

    Attributes:
        mode: ``"percent"`` = ``ceil(quantity × percent / 100)`` per line; ``"n_plus_1"`` = one
            spare per part line; ``"none"`` = no spares.
        percent: Spare percentage for ``"percent"`` mode (e.g. ``Decimal("5")`` for 5 %).
        categories: Line categories that get spares.
    """

    mode: Literal["percent", "n_plus_1", "none"] = "percent"
    percent: Decimal = Decimal("5")
    categories: tuple[str, ...] = ("accelerator", "nic", "optic", "cable", "storage", "pdu")


@dataclass(frozen=True, slots=True)
class ServicesPolicy:
    """Service lines, one each, quantity = servers (per-server services)."""

    installation: bool = True
    burn_in: bool = True
    support: bool = True


@dataclass(frozen=True, slots=True)
class BomLine:
    """One row of the bill of materials.

    Attributes:
        part_key: Stable key of the part (``"<kind>:<slug>"``), the join key for offers.
        category: server, accelerator, nic, switch, optic, cable, rack, pdu, storage, spares,
            service, or anything a consultant types on a manual line.
        description: Short human-readable name (e.g. ``"Leaf switch (64-port)"``).
        quantity: Whole units.
        reason: The arithmetic behind the quantity, e.g. ``"8 servers × 8 NICs"``.
        drivers: The inputs behind the quantity as (name, value) pairs, used to explain changes.
        origin: ``"generated"``, ``"manual"`` (added by hand) or ``"override"`` (a hand-set
            quantity for a generated part_key).
        site: Key of the site the line belongs to (``DeploymentInput.site_key``); ``""`` for
            plan-wide lines (services, lines of a plan without a site).
    """

    part_key: str
    category: str
    description: str
    quantity: int
    reason: str
    drivers: tuple[tuple[str, int], ...] = ()
    origin: LineOrigin = "generated"
    site: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """(site, part_key): a part appears once per site; plan-wide lines have site ``""``."""
        return (self.site, self.part_key)


@dataclass(frozen=True, slots=True)
class FabricPlan:
    """Sizing of the scale-out fabric for one deployment (all counts in units)."""

    nic_ports: int
    tiers: int
    leaves: int
    spines: int
    server_links: int
    spine_links: int

    @property
    def links(self) -> int:
        """All links, NIC-to-leaf plus leaf-to-spine."""
        return self.server_links + self.spine_links


@dataclass(frozen=True, slots=True)
class GeneratedBom:
    """Output of :func:`generate_bom`: the lines and the fabric plan of each deployment."""

    lines: tuple[BomLine, ...]
    fabrics: tuple[tuple[str, FabricPlan], ...] = field(default=())


def plan_fabric(nic_ports: int, spec: FabricSpec) -> FabricPlan:
    """Size a one- or two-tier fabric for ``nic_ports`` NIC ports.

    Args:
        nic_ports: NIC ports to connect (units).
        spec: Switch radix and part slugs.

    Returns:
        Leaf/spine counts and link counts.

    Raises:
        BomError: If the radix is not an even number ≥ 2 or the ports exceed a two-tier fabric.
    """
    radix = spec.leaf_radix
    if radix < 2 or radix % 2:
        raise BomError(f"Leaf radix must be an even number of ports ≥ 2, got {radix}.")
    if nic_ports < 0:
        raise BomError(f"NIC port count cannot be negative, got {nic_ports}.")
    if nic_ports == 0:
        return FabricPlan(0, 0, 0, 0, 0, 0)
    if nic_ports <= radix:
        # All ports fit on one switch: single tier, no spine needed.
        return FabricPlan(nic_ports, 1, 1, 0, nic_ports, 0)
    down = radix // 2  # half down / half up → non-blocking leaf (1:1)
    max_ports = radix * down  # each spine port reaches a distinct leaf → ≤ radix leaves
    if nic_ports > max_ports:
        raise BomError(
            f"{nic_ports} NIC ports exceed a two-tier fabric of {radix}-port switches "
            f"(maximum {max_ports}); plan a three-tier fabric or larger switches by hand."
        )
    leaves = math.ceil(nic_ports / down)
    uplinks = leaves * down
    spines = math.ceil(uplinks / radix)
    return FabricPlan(nic_ports, 2, leaves, spines, nic_ports, uplinks)


def _check_deployment(d: DeploymentInput) -> None:
    for name in ("servers", "accelerators_per_server", "racks", "pdus_per_rack"):
        if getattr(d, name) < 0:
            raise BomError(f"Deployment {d.key}: {name} cannot be negative.")
    if d.storage_per_server < 0 or d.effective_nics_per_server < 0:
        raise BomError(f"Deployment {d.key}: per-server counts cannot be negative.")


def _server_optic(
    d: DeploymentInput, spec: FabricSpec, net: LinkParts, cage: str, per_module: int
) -> OpticPart:
    """The multi-port module the server's NIC cages take, at the link's port speed."""
    for optic in spec.server_optics:
        fits = form_factor_fits(cage, optic.form_factor)
        if fits and optic.ports == per_module and optic.gbps == net.switch_port_gbps:
            return optic
    raise BomError(
        f"Deployment {d.key}: no {per_module}-port {cage or '(form factor not stated)'} "
        f"transceiver at {net.switch_port_gbps}G in the catalog for the server's NIC cages."
    )


def _deployment_lines(d: DeploymentInput, spec: FabricSpec) -> tuple[list[BomLine], FabricPlan]:
    _check_deployment(d)
    s, a, n = d.servers, d.accelerators_per_server, d.effective_nics_per_server
    at = f"{d.site}: " if d.site else ""
    lines: list[BomLine] = []
    net = spec.scale_out if d.scale_out else spec.front_end
    server_cage: str | None = None  # None: the bought NIC's cage
    server_optic: OpticPart | None = None  # None: the link's optic at the server end too
    per_module = 1  # NIC ports one server-end module serves
    if d.nics_included_gbps is not None:
        server_cage = d.nics_included_form_factor if d.scale_out else d.front_end_form_factor
        if d.scale_out and d.nics_included_ports_per_cage > 1:
            per_module = d.nics_included_ports_per_cage
            server_optic = _server_optic(d, spec, net, server_cage, per_module)
    misfit = net.mismatches(d.nics_included_gbps, server_cage, server_optic)
    if misfit:
        raise BomError(f"Deployment {d.key}: the network parts do not fit: {'; '.join(misfit)}.")
    switch_slug, tier = net.switch_slug, net.tier
    server_desc = d.server_name + (
        " (without accelerators)" if d.accelerators_sold_separately else ""
    )
    lines.append(
        BomLine(
            f"server:{d.server_slug}",
            "server",
            server_desc,
            s,
            f"{at}{s} servers",
            (("servers", s),),
        )
    )
    if d.accelerators_sold_separately and a:
        if not d.accelerator_slug:
            raise BomError(
                f"Deployment {d.key}: accelerators sold separately need accelerator_slug."
            )
        lines.append(
            BomLine(
                f"accelerator:{d.accelerator_slug}",
                "accelerator",
                f"Accelerator {d.accelerator_slug}",
                s * a,
                f"{at}{s} servers × {a} accelerators",
                (("servers", s), ("accelerators per server", a)),
            )
        )
    nic_reason = f"{at}{s} servers × {n} NICs"
    if d.nics_per_server is None:
        nic_reason += (
            " (one per accelerator, rail-optimised: a replica spans servers)"
            if d.scale_out
            else " (front-end network: every replica fits one server)"
        )
    if d.nics_included_gbps is None:
        lines.append(
            BomLine(
                net.nic_key,
                "nic",
                net.nic_description,
                s * n,
                nic_reason,
                (("servers", s), ("NICs per server", n)),
            )
        )
    fabric = plan_fabric(s * n, spec)
    ports = (("servers", s), ("NICs per server", n), ("leaf radix", spec.leaf_radix))
    if fabric.tiers == 1:
        lines.append(
            BomLine(
                f"switch:{switch_slug}:leaf",
                "switch",
                f"{tier}Leaf switch ({spec.leaf_radix}-port)".capitalize(),
                1,
                f"{at}{fabric.nic_ports} NIC ports fit one {spec.leaf_radix}-port switch",
                ports,
            )
        )
    elif fabric.tiers == 2:
        down = spec.leaf_radix // 2
        lines.append(
            BomLine(
                f"switch:{switch_slug}:leaf",
                "switch",
                f"{tier}Leaf switch ({spec.leaf_radix}-port)".capitalize(),
                fabric.leaves,
                f"{at}ceil({fabric.nic_ports} NIC ports ÷ {down} down-ports per leaf)",
                ports,
            )
        )
        lines.append(
            BomLine(
                f"switch:{switch_slug}:spine",
                "switch",
                f"{tier}Spine switch ({spec.leaf_radix}-port)".capitalize(),
                fabric.spines,
                f"{at}ceil({fabric.leaves} leaves × {down} uplinks ÷ {spec.leaf_radix} ports per spine)",
                ports,
            )
        )
    if fabric.links:
        link_text = f"{fabric.server_links} NIC–leaf"
        if fabric.spine_links:
            link_text += f" + {fabric.spine_links} leaf–spine"
        if server_optic is None:
            lines.append(
                BomLine(
                    f"optic:{net.optic_slug}",
                    "optic",
                    "Optical transceiver",
                    2 * fabric.links,
                    f"{at}{fabric.links} links ({link_text}) × 2 optics",
                    ports,
                )
            )
        else:
            # The switch end of every link and both ends of leaf–spine links take one optic
            # each; the server end takes one multi-port module per cage (a DGX: one twin-port
            # 2×400G OSFP per two links, NVIDIA DGX BasePOD reference architecture).
            switch_end = fabric.server_links + 2 * fabric.spine_links
            spine_text = f" + {fabric.spine_links} leaf–spine × 2" if fabric.spine_links else ""
            lines.append(
                BomLine(
                    f"optic:{net.optic_slug}",
                    "optic",
                    "Optical transceiver",
                    switch_end,
                    f"{at}{fabric.server_links} NIC–leaf links × 1 at the switch{spine_text}",
                    ports,
                )
            )
            cages = math.ceil(n / per_module)
            lines.append(
                BomLine(
                    f"optic:{server_optic.slug}",
                    "optic",
                    f"Optical transceiver, {per_module}-port (server end)",
                    s * cages,
                    f"{at}{s} servers × {cages} {server_cage} cages ({n} NIC ports, "
                    f"{per_module} per module)",
                    (("servers", s), ("NICs per server", n), ("ports per cage", per_module)),
                )
            )
        lines.append(
            BomLine(
                f"cable:{net.cable_slug}",
                "cable",
                "Fibre cable",
                fabric.links,
                f"{at}{fabric.links} links ({link_text}) × 1 cable",
                ports,
            )
        )
    lines.append(
        BomLine("rack:42u", "rack", "Rack", d.racks, f"{at}{d.racks} racks", (("racks", d.racks),))
    )
    if d.pdus_per_rack:
        feeds = " (A/B feeds)" if d.pdus_per_rack == 2 else ""
        lines.append(
            BomLine(
                f"pdu:{d.pdu_slug}",
                "pdu",
                d.pdu_description,
                d.racks * d.pdus_per_rack,
                f"{at}{d.racks} racks × {d.pdus_per_rack} PDUs{feeds}",
                (("racks", d.racks), ("PDUs per rack", d.pdus_per_rack)),
            )
        )
    if d.storage_per_server:
        lines.append(
            BomLine(
                f"storage:{d.storage_slug}",
                "storage",
                "Storage drive",
                s * d.storage_per_server,
                f"{at}{s} servers × {d.storage_per_server} drives",
                (("servers", s), ("drives per server", d.storage_per_server)),
            )
        )
    return [replace(line, site=d.site_key) for line in lines], fabric


def _spare_lines(lines: Iterable[BomLine], policy: SparesPolicy) -> list[BomLine]:
    if policy.mode == "none":
        return []
    if policy.mode == "percent" and policy.percent < 0:
        raise BomError(f"Spare percentage cannot be negative, got {policy.percent}.")
    spares: list[BomLine] = []
    for line in lines:
        if line.category not in policy.categories or line.quantity <= 0:
            continue
        if policy.mode == "percent":
            # Rounded up so that a small line still gets a spare (InvenTree BomItem "overage").
            qty = int(
                (Decimal(line.quantity) * policy.percent / 100).to_integral_value(ROUND_CEILING)
            )
            reason = f"{policy.percent} % of {line.quantity}, rounded up"
        else:
            qty, reason = 1, "N+1: one spare per part"
        if qty:
            spares.append(
                BomLine(
                    f"spare:{line.part_key}",
                    "spares",
                    f"Spare {line.description}",
                    qty,
                    reason,
                    ((line.description, line.quantity),),
                    site=line.site,
                )
            )
    return spares


def _service_lines(servers: int, policy: ServicesPolicy) -> list[BomLine]:
    wanted = (
        (policy.installation, "service:installation", "Installation"),
        (policy.burn_in, "service:burn-in", "Burn-in test"),
        (policy.support, "service:support", "Support contract"),
    )
    return [
        BomLine(key, "service", desc, servers, f"{servers} servers", (("servers", servers),))
        for on, key, desc in wanted
        if on and servers
    ]


def _merge(lines: Iterable[BomLine]) -> list[BomLine]:
    """Sum lines that share a site and part_key (several platforms at one site), joining
    their reasons; lines of different sites stay apart."""
    merged: dict[tuple[str, str], BomLine] = {}
    for line in lines:
        old = merged.get(line.key)
        if old is None:
            merged[line.key] = line
            continue
        drivers = dict(old.drivers)
        for name, value in line.drivers:
            drivers[name] = drivers.get(name, 0) + value
        merged[line.key] = replace(
            old,
            quantity=old.quantity + line.quantity,
            reason=f"{old.reason} + {line.reason}",
            drivers=tuple(drivers.items()),
        )
    return list(merged.values())


def generate_bom(
    deployments: Sequence[DeploymentInput],
    *,
    fabric: FabricSpec | None = None,
    spares: SparesPolicy | None = None,
    services: ServicesPolicy | None = None,
) -> GeneratedBom:
    """Generate the bill of materials for the chosen deployments.

    Each deployment gets its own fabric. Lines for the same part at one site are summed (two
    platforms at one site share its rack and PDU lines); each site keeps its own lines. Spares
    are computed per site on the summed lines; services are plan-wide with quantity = servers.

    Args:
        deployments: The chosen configurations.
        fabric: Switch radix and link parts (default 64-port switches).
        spares: Spares policy (default 5 % on consumable/field-replaceable parts).
        services: Which service lines to add (default all three).

    Returns:
        The lines (parts, then spares, then services) and each deployment's fabric plan.

    Raises:
        BomError: On negative counts, missing accelerator slug, or a fabric too large.
    """
    fabric = fabric or FabricSpec()
    spares = spares or SparesPolicy()
    services = services or ServicesPolicy()
    parts: list[BomLine] = []
    plans: list[tuple[str, FabricPlan]] = []
    for d in deployments:
        lines, plan = _deployment_lines(d, fabric)
        parts.extend(lines)
        plans.append((d.key, plan))
    parts = [line for line in _merge(parts) if line.quantity > 0]
    total_servers = sum(d.servers for d in deployments)
    out = parts + _spare_lines(parts, spares) + _service_lines(total_servers, services)
    return GeneratedBom(tuple(out), tuple(plans))


def _driver_changes(old: BomLine, new: BomLine) -> str:
    before, after = dict(old.drivers), dict(new.drivers)
    parts = [
        f"{name} {before.get(name, 0)} → {after.get(name, 0)}"
        for name in dict.fromkeys([*before, *after])
        if before.get(name, 0) != after.get(name, 0)
    ]
    return ", ".join(parts) if parts else f"{old.reason} → {new.reason}"


def regenerate(
    previous_lines: Sequence[BomLine],
    manual_lines: Sequence[BomLine],
    new_generated: Sequence[BomLine],
) -> tuple[tuple[BomLine, ...], tuple[str, ...]]:
    """Replace the generated lines with a new generation, keeping the consultant's edits.

    Args:
        previous_lines: The generated lines of the previous run (as generated, before
            overrides).
        manual_lines: Lines entered by hand: ``origin="manual"`` lines are kept as they are;
            ``origin="override"`` lines fix the quantity of the generated line with the same
            part_key.
        new_generated: The lines of the new run (:attr:`GeneratedBom.lines`).

    Returns:
        ``(lines, changes)``: the generated lines with overrides applied followed by the manual
        lines, and human-readable changes such as ``"Scale-out NIC: 64 → 128 (servers 8 → 16)"``,
        ``"added …"``, ``"removed …"``.
    """
    before = {line.key: line for line in previous_lines}
    after = {line.key: line for line in new_generated}
    overrides = {line.key: line for line in manual_lines if line.origin == "override"}
    changes: list[str] = []
    out: list[BomLine] = []
    for key, new in after.items():
        old = before.get(key)
        override = overrides.get(key)
        if old is None:
            changes.append(f"added {new.description}: {new.quantity} ({new.reason})")
        elif old.quantity != new.quantity:
            changes.append(
                f"{new.description}: {old.quantity} → {new.quantity} ({_driver_changes(old, new)})"
            )
        if override is not None:
            if old is None or old.quantity != new.quantity:
                changes.append(
                    f"{new.description}: manual quantity {override.quantity} kept "
                    f"(generated {new.quantity})"
                )
            out.append(
                replace(
                    new,
                    quantity=override.quantity,
                    origin="override",
                    reason=f"manual override (generated: {new.quantity}, {new.reason})",
                )
            )
        else:
            out.append(new)
    for key, old in before.items():
        if key not in after:
            changes.append(f"removed {old.description}: {old.quantity} ({old.reason})")
    for key, override in overrides.items():
        if key not in after:
            changes.append(
                f"{override.description}: manual quantity {override.quantity} kept although the "
                "generator no longer produces this part"
            )
            out.append(override)
    out.extend(line for line in manual_lines if line.origin == "manual")
    return tuple(out), tuple(changes)


@dataclass(frozen=True, slots=True)
class SiteSubtotal:
    """Units of one site's lines (``site`` ``""``: the plan-wide lines).

    Attributes:
        site: The lines' site key.
        lines: Lines counted (units > 0).
        servers: Servers bought for the site (spare parts excluded: the deployment's N+1
            servers are already in the server line).
        racks: Racks for the site.
    """

    site: str
    lines: int
    servers: int
    racks: int


def site_subtotals(lines: Iterable[BomLine]) -> tuple[SiteSubtotal, ...]:
    """Per-site line, server and rack counts, in the order the sites first appear."""
    totals: dict[str, list[int]] = {}
    for line in lines:
        counts = totals.setdefault(line.site, [0, 0, 0])
        if line.quantity <= 0:
            continue
        counts[0] += 1
        if line.category == "server":
            counts[1] += line.quantity
        elif line.category == "rack":
            counts[2] += line.quantity
    return tuple(SiteSubtotal(site, *counts) for site, counts in totals.items())


def plan_subtotal(subtotals: Iterable[SiteSubtotal]) -> SiteSubtotal:
    """The plan's counts: the sum of its sites' subtotals."""
    subtotals = list(subtotals)
    return SiteSubtotal(
        "",
        sum(t.lines for t in subtotals),
        sum(t.servers for t in subtotals),
        sum(t.racks for t in subtotals),
    )
