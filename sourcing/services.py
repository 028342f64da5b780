"""Sourcing services: fetch rows, call the engine, store what it says.

* :func:`bom_generate` — the plan's deployments → ``planner.engine.bom`` → BOM rows, keeping the
  consultant's manual lines and overrides (engine ``regenerate``) and logging what changed.
* :func:`landed_cost_report` — offers, tariffs, FX → ``planner.engine.landed_cost`` → the chosen
  offer per line, its alternative, per-shipment landed cost and the plan total.
* :func:`timeline_report` — chosen offers' lead times, lanes, customs, installation, burn-in
  and the facility's power-ready date → ``planner.engine.critical_path`` → go-live, the critical
  path and the slips that moved it.
* Purchase orders with dated steps, an append-only history (:class:`PlanEvent`), the daily
  check that stores flags, tariff seeding and FX import.
"""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.utils import timezone

from catalog.models import Accelerator, Part, ServerPlatform
from planner import freshness
from planner.computed import computed
from planner.engine import bom as bom_engine
from planner.engine import critical_path as cp
from planner.engine import landed_cost as lc
from planner.engine import pooling as po
from planner.engine.deployment import racks_needed
from planner.engine.errors import CatalogGapError
from planner.engine.limits import DATE_MIN, finite_or_none
from planner.engine.tariff_defaults import DEFAULT_TARIFF_RULES
from planner.facility import selectors as facility_selectors
from planner.facility.deployment import UNPLACED_KEY, plan_deployment, site_key
from planner.facility.models import Site
from planner.facility.services import site_evaluate
from planner.labels import count
from planner.models import Plan
from planner.money import format_money
from planner.validation import DATE_MESSAGE
from sourcing import selectors
from sourcing.models import (
    ORDER_STEPS,
    BomLine,
    CustomsValuation,
    FlagKind,
    FxRate,
    LineOrigin,
    MeasureDecision,
    MeasureDecisionChoice,
    Offer,
    OrderStatus,
    PlanEvent,
    PurchaseOrder,
    PurchaseOrderLine,
    SourcingFlag,
    SourcingSettings,
    Supplier,
    TariffMeasure,
    TariffRule,
    validate_currency,
)


class SourcingError(ValueError):
    """A sourcing action that cannot be done; the message says why in one sentence."""


# Catalog parts the generated lines use when the catalog has them (catalog/data/parts.csv);
# otherwise the first part of the category.
DEFAULT_PART_SLUGS = {
    "nic": "nic-400g",
    "switch": "switch-ib-64x400g",
    "optic": "optic-400g",
    "cable": "cable-fiber-mpo",
    "rack": "rack-42u",
    "pdu": "pdu-3ph-415v-32a",
    "storage": "storage-nvme-7.68tb",
}
# The front-end network's parts (single-server replicas need no scale-out fabric).
FRONT_END_PART_SLUGS = {
    "nic": "nic-eth-front-end",
    "switch": "switch-eth-front-end",
    "optic": "optic-100g-qsfp28",
    "cable": "cable-fiber-mpo",
}
# HS codes of items the catalog has no HS field for (reference C1): complete GPU servers
# 8471.50 (CBP NY N360000, 2026); GPU boards/modules 8473.30 (CBP NY N338976, 2024).
DEFAULT_HS_BY_CATEGORY = {"server": "8471.50", "accelerator": "8473.30"}
OFFER_EXPIRY_WARNING_DAYS = 14
# Transit assumed when the engine has no default for a lane (e.g. within Europe by road);
# planner assumption, replace with the forwarder's figure.
FALLBACK_TRANSIT_DAYS = 5


# ---------------------------------------------------------------------------------------------
# History
# ---------------------------------------------------------------------------------------------


def event_record(*, plan: Plan, user, kind: str, message: str, data: dict | None = None) -> None:
    """Append one entry to the plan's sourcing history."""
    PlanEvent.objects.create(
        plan=plan, user=user if getattr(user, "pk", None) else None, kind=kind,
        message=message, data=data or {},
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------------------


def sourcing_settings_get(*, plan: Plan) -> SourcingSettings:
    """The plan's sourcing settings, created with defaults (destination = client's country)."""
    existing = SourcingSettings.objects.filter(plan=plan).first()
    if existing:
        return existing
    country = (plan.client.country or "").upper()
    # Two requests may create the row at once (e.g. two TCO clicks): the loser reads it.
    settings, _ = SourcingSettings.objects.get_or_create(
        plan=plan, defaults={"destination_country": country or "US"}
    )
    return settings


def valuation_date(settings: SourcingSettings) -> date:
    """The order date the offers are valued and scheduled from (today when not set)."""
    return settings.order_date or timezone.localdate()


# ---------------------------------------------------------------------------------------------
# Bill of materials
# ---------------------------------------------------------------------------------------------


def _part(slug: str, category: str) -> Part | None:
    return (
        Part.objects.filter(slug=slug).first()
        or Part.objects.filter(category=category).order_by("pk").first()
    )


def _resolve(part_key: str) -> dict:
    """Catalog links and HS code of a generated part key (``kind:slug[:role]``)."""
    kind, _, rest = part_key.partition(":")
    if kind == "spare":
        return _resolve(rest)
    if kind == "service":
        return {"service": rest}
    if kind == "server":
        server = ServerPlatform.objects.filter(slug=rest).first()
        return {"server": server, "hs_code": DEFAULT_HS_BY_CATEGORY["server"]}
    if kind == "accelerator":
        accelerator = Accelerator.objects.filter(slug=rest).first()
        return {"accelerator": accelerator, "hs_code": DEFAULT_HS_BY_CATEGORY["accelerator"]}
    slug = rest.split(":")[0]
    if kind == "pdu" or slug in FRONT_END_PART_SLUGS.values():
        # A PDU of another voltage or an InfiniBand part is not this part: exact match only.
        part = Part.objects.filter(slug=slug).first()
        return {"part": part, "hs_code": part.hs_code if part else ""}
    part = _part(slug, kind) if kind in DEFAULT_PART_SLUGS else None
    return {"part": part, "hs_code": part.hs_code if part else ""}


@dataclass(frozen=True)
class ServerChoice:
    """The catalog server of a pooled platform and what its BOM needs to know of it."""

    slug: str
    name: str
    accelerators_sold_separately: bool
    nics_included_gbps: int | None = None  # the NICs it ships with (None: bought as parts)
    nics_included_form_factor: str = ""  # their scale-out cage (a DGX: OSFP)
    nics_included_ports_per_cage: int = 1  # NIC ports per cage (a DGX: 2)
    front_end_form_factor: str = ""  # the cage of its own front-end ports (a DGX: QSFP112)


def _server_for(platform) -> ServerChoice:
    """The pooled platform's catalog server: slug, name, whether its accelerators are sold
    separately, and the NICs it ships with (speed, cages)."""
    server = None
    if not platform.key.startswith("generic-"):
        server = ServerPlatform.objects.filter(slug=platform.key).first()
    if server is None:
        server = (
            ServerPlatform.objects.filter(
                accelerator__slug=platform.accelerator_slug,
                accelerators_per_server=platform.accelerators_per_server,
            )
            .order_by("pk")
            .first()
        )
    if server is None:
        slug = f"generic-{platform.accelerator_slug}-x{platform.accelerators_per_server}"
        return ServerChoice(slug, platform.name, False)
    return ServerChoice(
        server.slug,
        str(server),
        server.accelerator_id is None,
        server.nics_included_gbps,
        server.nics_included_form_factor,
        server.nics_included_ports_per_cage or 1,
        server.front_end_form_factor,
    )


_PDU_SLUG = re.compile(r"^pdu-(?P<phase>[13])ph-(?P<volts>\d+)v-(?P<amps>\d+)a$")
# IEC 60038 nominal 400 V covers 380-415 V supplies: a PDU within 5 % of the site's voltage fits.
PDU_VOLTAGE_TOLERANCE = 0.05


def _pdu_for(site) -> tuple[str, str]:
    """(slug, description) of the catalog rack PDU for the site's phase, voltage and breaker.

    A catalog PDU matches on phase and breaker amps, with its voltage within 5 % of the
    site's; without one the line names the site's electrics and links no catalog part.
    """
    volts, phase, amps = float(site.voltage_v), int(site.phase), float(site.amperage_a)
    for part in Part.objects.filter(category="pdu").order_by("slug"):
        match = _PDU_SLUG.match(part.slug)
        if (
            match
            and int(match["phase"]) == phase
            and float(match["amps"]) == amps
            and abs(float(match["volts"]) - volts) <= PDU_VOLTAGE_TOLERANCE * volts
        ):
            return part.slug, part.name
    return (
        f"pdu-{phase}ph-{volts:g}v-{amps:g}a",
        f"Rack PDU, {phase}-phase {volts:g} V {amps:g} A (not in the catalog)",
    )


OWNED, HYBRID, CLOUD = "owned", "hybrid", "cloud"


@dataclass(frozen=True)
class BomOption:
    """The option whose hardware the BOM buys: the one the consultant chose in placement.

    Attributes:
        kind: ``owned`` (the pooled deployment), ``hybrid`` (its owned base per site) or
            ``cloud`` (the public cloud: no hardware).
        chosen: An option is chosen; ``False``: none yet, and the BOM buys the owned
            deployment (publishing lists the choice as an open item).
        label: The chosen option's label ("" when none is chosen).
        base: Hybrid: (site key, servers) of the TCO's hybrid base, the latest finished run's
            (the engine's one computation the TCO page shows and placement ranks).
        base_gpus: Hybrid: the accelerators its base owns (for a run without sites).
    """

    kind: str
    chosen: bool = False
    label: str = ""
    base: tuple[tuple[str, int], ...] = ()
    base_gpus: int = 0

    @property
    def buys_hardware(self) -> bool:
        return self.kind == OWNED or (
            self.kind == HYBRID and (self.base_servers > 0 or self.base_gpus > 0)
        )

    @property
    def base_servers(self) -> int:
        return sum(n for _, n in self.base)

    @property
    def text(self) -> str:
        """What the BOM buys, in one sentence."""
        if not self.chosen:
            return (
                "No option is chosen in placement yet: the bill of materials buys the owned "
                "deployment."
            )
        if self.kind == CLOUD:
            return (
                "The chosen option is the public cloud: the plan buys no hardware, so there is "
                "nothing to ship or install."
            )
        if self.kind == HYBRID and not self.buys_hardware:
            return (
                "The chosen option is the hybrid, whose best owned base is no server: the plan "
                "buys no hardware, so there is nothing to ship or install."
            )
        if self.kind == HYBRID:
            return (
                f"The chosen option is {self.label}: the bill of materials buys its owned base, "
                f"{count(self.base_servers, 'server')}; the load above it bursts to the cloud."
            )
        return f"The bill of materials buys the owned deployment, the chosen option ({self.label})."


def bom_option(*, plan: Plan) -> BomOption:
    """The option the BOM buys the hardware of: the placement the consultant chose.

    Raises:
        SourcingError: The hybrid is chosen but no TCO run has computed its base yet.
    """
    decision = facility_selectors.placement_decision_get(plan=plan)
    key, kind, label = decision.chosen_key, decision.chosen_kind, decision.chosen_label
    if not key and not kind:
        return BomOption(OWNED)
    if kind == "public_cloud":  # a collapsed hybrid is scored as the cloud too
        return BomOption(CLOUD, True, label)
    if key != "hybrid" and kind != "hybrid":
        return BomOption(OWNED, True, label)
    run = facility_selectors.tco_run_latest_finished(plan=plan)
    options = (run.results or {}).get("options") or () if run else ()
    hybrid = next((o for o in options if o.get("kind") == "hybrid"), None)
    if hybrid is None:
        raise SourcingError(
            "The hybrid's owned base comes from the TCO: run the TCO, then generate the bill "
            "of materials."
        )
    base = tuple((p["key"], int(p["servers"])) for p in hybrid.get("sites") or () if p["servers"])
    return BomOption(HYBRID, True, hybrid["label"], base, int(hybrid.get("owned_gpus") or 0))


def bom_option_shown(*, plan: Plan) -> dict:
    """What the BOM buys, for the BOM, quote, landed-cost and timeline pages:
    ``{"text", "buys_hardware"}`` (the text says why when it cannot tell)."""
    try:
        option = bom_option(plan=plan)
    except SourcingError as exc:
        return {"text": str(exc), "buys_hardware": True}
    return {"text": option.text, "buys_hardware": option.buys_hardware}


def _option_deployment(option: BomOption, deployment):
    """The deployment the option buys: the pooled one, or the hybrid's owned base of it."""
    if option.kind != HYBRID:
        return deployment
    base = dict(option.base)
    if not base and len(deployment.pooled.sites) == 1 and deployment.servers:
        # a run without sites (no site entered): its base is on the one pool
        per_server = deployment.accelerators_installed // deployment.servers
        base = {deployment.pooled.sites[0].site_key: option.base_gpus // per_server}
    return replace(deployment, pooled=po.owned_base(deployment.pooled, base))


def _deployment_inputs(plan: Plan, settings: SourcingSettings, option: BomOption | None = None):
    """One BOM input per site and server platform the chosen option buys (:func:`bom_option`):
    the plan's pooled deployment, the hybrid's owned base of it, or none for the cloud.

    Servers (spares included) come from the pooled deployment, racks from the facility
    checks of that site (per server kind, as the site page draws them), PDUs from the site's
    electrics. A plan without a site of its own keeps the settings' servers per rack.
    """
    option = option or bom_option(plan=plan)
    if not option.buys_hardware:
        return []
    try:
        deployment = _option_deployment(option, plan_deployment(plan=plan))
    except CatalogGapError as gap:
        raise SourcingError(str(gap)) from gap
    sites = {site_key(s): s for s in deployment.sites}
    storage_slug = (_part(DEFAULT_PART_SLUGS["storage"], "storage") or Part()).slug
    inputs = []
    for site_pool in deployment.pooled.sites:
        site = sites.get(site_pool.site_key)
        racks_by_kind: dict[str, int] = {}
        pdu_slug, pdu_description = (
            DEFAULT_PART_SLUGS["pdu"],
            "Rack PDU (no site entered: catalog default)",
        )
        if site is not None:
            evaluation = site_evaluate(plan=plan, site=site, deployment=deployment)
            racks_by_kind = {v.rack_type.server_name: v.racks_needed for v in evaluation.rack_views}
            pdu_slug, pdu_description = _pdu_for(site)
        for pool in site_pool.pools:
            platform = pool.platform
            server = _server_for(platform)
            racks = racks_by_kind.get(platform.name)
            if racks is None:
                racks = racks_needed(pool.servers, settings.servers_per_rack)
            inputs.append(
                bom_engine.DeploymentInput(
                    key=f"{site_pool.site_key}/{platform.key}",
                    server_slug=server.slug,
                    server_name=server.name,
                    servers=pool.servers,
                    accelerators_per_server=platform.accelerators_per_server,
                    accelerator_slug=platform.accelerator_slug,
                    accelerators_sold_separately=server.accelerators_sold_separately,
                    racks=racks,
                    storage_per_server=settings.storage_per_server,
                    storage_slug=storage_slug or "nvme-drive",
                    site="" if site_pool.site_key == UNPLACED_KEY else site.name,
                    scale_out=pool.spans_servers,
                    pdu_slug=pdu_slug,
                    pdu_description=pdu_description,
                    site_key="" if site is None else site_pool.site_key,
                    nics_included_gbps=server.nics_included_gbps,
                    nics_included_form_factor=server.nics_included_form_factor,
                    nics_included_ports_per_cage=server.nics_included_ports_per_cage,
                    front_end_form_factor=server.front_end_form_factor,
                )
            )
    return inputs


def _fabric(settings: SourcingSettings) -> bom_engine.FabricSpec:
    """The leaf radix, each network's catalog parts with their port speeds and form factors,
    and the catalog's multi-port transceivers (for servers whose cages take them)."""

    def part(slug: str, category: str) -> Part:
        return _part(slug, category) or Part(slug=slug, category=category)

    def network(slugs: dict, nic_key: str, nic_description: str, tier: str):
        nic, switch = part(slugs["nic"], "nic"), part(slugs["switch"], "switch")
        optic, cable = part(slugs["optic"], "optic"), part(slugs["cable"], "cable")
        return bom_engine.LinkParts(
            nic_key or f"nic:{nic.slug}",
            nic_description,
            nic.port_speed_gbps,
            switch.slug,
            switch.port_speed_gbps,
            optic.slug,
            optic.port_speed_gbps,
            cable.slug,
            cable.port_speed_gbps,
            tier,
            nic_form_factor=nic.form_factor,
            switch_form_factor=switch.form_factor,
            optic_form_factor=optic.form_factor,
        )

    multi_port = Part.objects.filter(category="optic", ports__gt=1).order_by("slug")
    return bom_engine.FabricSpec(
        leaf_radix=settings.leaf_radix,
        scale_out=network(DEFAULT_PART_SLUGS, "nic:scale-out", "Scale-out NIC", ""),
        front_end=network(FRONT_END_PART_SLUGS, "", "Front-end Ethernet NIC", "Front-end "),
        server_optics=tuple(
            bom_engine.OpticPart(o.slug, o.port_speed_gbps, o.ports, o.form_factor)
            for o in multi_port
        ),
    )


def _line_site_key(row: BomLine) -> str:
    """The engine's site key of a stored line (``""`` = plan-wide)."""
    return f"site-{row.site_id}" if row.site_id else ""


def _engine_line(row: BomLine, *, as_generated: bool) -> bom_engine.BomLine:
    quantity = row.generated_quantity if as_generated else row.quantity
    return bom_engine.BomLine(
        site=_line_site_key(row),
        part_key=row.part_key,
        category=row.category,
        description=row.description,
        quantity=quantity if quantity is not None else row.quantity,
        reason=row.generated_reason if as_generated else row.reason,
        drivers=tuple((str(n), int(v)) for n, v in row.drivers),
        origin="generated" if as_generated else row.origin,
    )


@dataclass
class SiteGroup:
    """A site's part of the BOM (``site`` ``None``: plan-wide lines such as services)."""

    site: Site | None
    items: list
    subtotal: bom_engine.SiteSubtotal

    @property
    def label(self) -> str:
        if self.site is None:
            return "Plan-wide (services and lines not tied to a site)"
        return f"{self.site.name} ({self.site.country})" if self.site.country else self.site.name

    @property
    def key(self) -> str:
        return f"site-{self.site.pk}" if self.site else "plan"


def bom_site_groups(*, plan: Plan, items: list, line_of=lambda item: item) -> list[SiteGroup]:
    """Items (BOM lines, or rows holding one) grouped by their line's site: the plan's sites
    in order, then the plan-wide lines; each group with its server and rack subtotal."""
    sites = {s.pk: s for s in Site.objects.filter(plan=plan).order_by("pk")}
    buckets: dict[int | None, list] = {pk: [] for pk in sites}
    buckets[None] = []
    for item in items:
        buckets.setdefault(line_of(item).site_id, []).append(item)
    groups = []
    for pk, bucket in buckets.items():
        if not bucket:
            continue
        engine_lines = [_engine_line(line_of(i), as_generated=False) for i in bucket]
        subtotal = bom_engine.site_subtotals(engine_lines)[0]
        groups.append(SiteGroup(sites.get(pk) if pk else None, bucket, subtotal))
    return groups


def bom_plan_subtotal(groups: list[SiteGroup]) -> bom_engine.SiteSubtotal:
    """The plan's line, server and rack counts over every site's group."""
    return bom_engine.plan_subtotal(g.subtotal for g in groups)


@dataclass(frozen=True)
class _Regenerated:
    """What regenerating the BOM gives now (nothing saved yet)."""

    inputs: list
    fabric: bom_engine.FabricSpec
    spares: bom_engine.SparesPolicy
    generated: bom_engine.GeneratedBom
    rows: dict  # (site key, part key) → stored BomLine
    first_run: bool  # no generated line stored yet
    lines: tuple  # the new lines (generated with overrides, then manual)
    changes: tuple[str, ...]  # what changes, in plain words


def _regenerated(plan: Plan, settings: SourcingSettings) -> _Regenerated:
    """What regenerating the BOM gives now, from the stored lines; nothing is saved.

    Raises:
        SourcingError: No workload has a chosen configuration, or the engine refuses the input.
    """
    option = bom_option(plan=plan)
    inputs = _deployment_inputs(plan, settings, option)
    if not inputs and option.buys_hardware:
        raise SourcingError(
            "No workload has a chosen configuration yet: choose one in sizing, then generate."
        )
    fabric = _fabric(settings)
    spares = bom_engine.SparesPolicy(mode=settings.spares_mode, percent=settings.spares_pct)
    try:
        generated = bom_engine.generate_bom(inputs, fabric=fabric, spares=spares)
    except bom_engine.BomError as exc:
        raise SourcingError(str(exc)) from exc
    rows = {(_line_site_key(row), row.part_key): row for row in BomLine.objects.filter(plan=plan)}
    previous = [
        _engine_line(r, as_generated=True)
        for r in rows.values()
        if r.origin != LineOrigin.MANUAL and r.generated_quantity is not None
    ]
    manual = [
        _engine_line(r, as_generated=False)
        for r in rows.values()
        if r.origin in (LineOrigin.MANUAL, LineOrigin.OVERRIDE)
    ]
    lines, changes = bom_engine.regenerate(previous, manual, generated.lines)
    return _Regenerated(inputs, fabric, spares, generated, rows, not previous, lines, changes)


@dataclass(frozen=True)
class PendingBomChanges:
    """What regenerating the BOM would change (a stale BOM's banner says it).

    Attributes:
        servers: Per site whose servers differ: (site name, servers the deployment needs,
            servers the BOM lines hold), in the plan's site order ("" names plan-wide lines).
        changes: Every line change in plain words ("NVIDIA DGX B200: 3 → 4 (servers 3 → 4)").
    """

    servers: tuple[tuple[str, int, int], ...]
    changes: tuple[str, ...]


def bom_pending_changes(*, plan: Plan) -> PendingBomChanges:
    """What regenerating the plan's BOM would change now; nothing is saved.

    Raises:
        SourcingError: The BOM cannot be generated now.
    """
    regen = _regenerated(plan, sourcing_settings_get(plan=plan))
    needed: dict[str, int] = defaultdict(int)
    held: dict[str, int] = defaultdict(int)
    for line in regen.generated.lines:
        if line.category == "server":
            needed[line.site] += line.quantity
    for (site, _), row in regen.rows.items():
        if row.category == "server":
            held[site] += row.quantity
    names = {site_key(s): s.name for s in Site.objects.filter(plan=plan).order_by("pk")}
    order = [*names, *sorted((needed.keys() | held.keys()) - names.keys())]
    servers = tuple(
        (names.get(key, ""), needed[key], held[key])
        for key in order
        if needed.get(key, 0) != held.get(key, 0)
    )
    return PendingBomChanges(servers, tuple(regen.changes))


@transaction.atomic
def bom_generate(*, plan: Plan, user) -> tuple[str, ...]:
    """Generate (or regenerate) the plan's BOM from its chosen configurations.

    Manual lines stay as they are; a hand-set quantity stays on its part. Every run is logged
    with the changes the engine lists.

    Returns:
        The changes in plain words (empty when nothing changed).

    Raises:
        SourcingError: No workload has a chosen configuration, or the engine refuses the input.
    """
    settings = sourcing_settings_get(plan=plan)
    regen = _regenerated(plan, settings)
    rows, lines, changes = regen.rows, regen.lines, regen.changes
    site_ids = {site_key(s): s.pk for s in Site.objects.filter(plan=plan)}
    new_by_key = {line.key: line for line in regen.generated.lines}
    kept = set()
    for position, line in enumerate(lines):
        row = rows.get(line.key)
        if row is not None:
            kept.add(row.pk)
        if line.origin == "manual":
            if row is not None:
                BomLine.objects.filter(pk=row.pk).update(position=position)
            continue
        new = new_by_key.get(line.key)
        values = {
            "category": line.category,
            "description": line.description,
            "quantity": line.quantity,
            "reason": line.reason,
            "origin": line.origin,
            "generated_quantity": new.quantity if new else None,
            "generated_reason": new.reason if new else "",
            "drivers": [list(d) for d in (new.drivers if new else line.drivers)],
            "position": position,
        }
        if row is None:
            links = _resolve(line.part_key)
            row = BomLine.objects.create(
                plan=plan, site_id=site_ids.get(line.site), part_key=line.part_key,
                **values, **links,
            )  # fmt: skip
            kept.add(row.pk)
        else:
            for name, value in values.items():
                setattr(row, name, value)
            row.save()
    BomLine.objects.filter(plan=plan).exclude(pk__in=kept).exclude(
        origin=LineOrigin.MANUAL
    ).delete()
    settings.bom_generated_at = timezone.now()
    settings.bom_inputs_hash = freshness.bom_hash_of(regen.inputs, regen.fabric, regen.spares)
    settings.save(update_fields=["bom_generated_at", "bom_inputs_hash"])
    if regen.first_run:
        message = f"Bill of materials generated: {len(lines)} lines."
        changes = ()
    else:
        message = "Bill of materials regenerated: " + (
            "; ".join(changes) if changes else "nothing changed."
        )
    event_record(plan=plan, user=user, kind="bom", message=message, data={"changes": changes})
    return tuple(changes)


def bom_line_add(
    *,
    plan: Plan,
    user,
    description: str,
    quantity: int,
    reason: str,
    part: Part | None = None,
    server: ServerPlatform | None = None,
    service: str = "",
    hs_code: str = "",
    site: Site | None = None,
) -> BomLine:
    """Add a line by hand (kept through regeneration), for one site or plan-wide.

    Raises:
        SourcingError: The item is already on the BOM (override its quantity instead).
    """
    if part:
        key, category = f"manual:part:{part.slug}", part.category
    elif server:
        key, category = f"manual:server:{server.slug}", "server"
    elif service:
        key, category = f"manual:service:{service}", "service"
    else:
        key, category = f"manual:{description.strip().lower()[:150]}", "other"
    if site is not None and site.plan_id != plan.pk:
        raise SourcingError("The site is not one of this plan's sites.")
    if BomLine.objects.filter(plan=plan, site=site, part_key=key).exists():
        raise SourcingError("This item is already on the bill of materials; change its quantity.")
    hs = (
        hs_code
        or (part.hs_code if part else "")
        or (DEFAULT_HS_BY_CATEGORY["server"] if server else "")
    )
    last = BomLine.objects.filter(plan=plan).order_by("-position").first()
    line = BomLine.objects.create(
        plan=plan, part_key=key, category=category,
        description=description or str(part or server or service), quantity=quantity,
        reason=reason or "added by hand", origin=LineOrigin.MANUAL, part=part, server=server,
        service=service, hs_code=hs, position=(last.position + 1) if last else 0, site=site,
    )  # fmt: skip
    event_record(
        plan=plan, user=user, kind="bom",
        message=f"Line added by hand: {quantity} × {line.description} ({line.reason})"
        + (f" for {site.name}." if site else "."),
    )  # fmt: skip
    return line


def bom_line_update(
    *, line: BomLine, user, quantity: int, pinned_offer: Offer | None, hs_code: str
) -> list[str]:
    """Set a line's quantity (an override on a generated line), pinned offer and HS code.

    Returns:
        What changed, in words (also logged in the plan history).
    """
    changes = []
    if quantity != line.quantity:
        changes.append(f"quantity {line.quantity} → {quantity}")
        line.quantity = quantity
        if line.origin != LineOrigin.MANUAL:
            if quantity == line.generated_quantity:
                line.origin, line.reason = LineOrigin.GENERATED, line.generated_reason
            else:
                line.origin = LineOrigin.OVERRIDE
                line.reason = (
                    f"manual override (generated: {line.generated_quantity}, "
                    f"{line.generated_reason})"
                )
    if pinned_offer != line.pinned_offer:
        changes.append(
            f"offer pinned: {pinned_offer}" if pinned_offer else "offer unpinned (automatic choice)"
        )
        line.pinned_offer = pinned_offer
    if hs_code != line.hs_code:
        changes.append(f"HS code {line.hs_code or '—'} → {hs_code or '—'}")
        line.hs_code = hs_code
    if changes:
        line.save()
        event_record(
            plan=line.plan, user=user, kind="bom",
            message=f"{line.description}: {', '.join(changes)}.",
        )  # fmt: skip
    return changes


def bom_line_remove(*, line: BomLine, user) -> None:
    """Delete a manual line; a generated line is set to zero so regenerating keeps it out."""
    plan = line.plan
    if line.origin == LineOrigin.MANUAL:
        line.delete()
        message = f"Manual line removed: {line.description}."
    else:
        line.quantity, line.origin = 0, LineOrigin.OVERRIDE
        line.reason = f"removed by hand (generated: {line.generated_quantity})"
        line.save()
        message = (
            f"Generated line removed (quantity 0, kept through regeneration): {line.description}."
        )
    event_record(plan=plan, user=user, kind="bom", message=message)


# ---------------------------------------------------------------------------------------------
# Landed cost
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasureDecisions:
    """The plan's decisions on conditional duties, as the landed-cost engine takes them."""

    confirmed: frozenset[str] = frozenset()  # decided to apply: charged
    not_applying: tuple[tuple[str, str], ...] = ()  # (name, reason): 0 %
    applying_reasons: tuple[tuple[str, str], ...] = ()  # (name, reason) of those that apply


def measure_decisions(*, plan: Plan) -> MeasureDecisions:
    """The plan's decided conditional measures (an unconfirmed one is not decided)."""
    rows = list(plan.measure_decisions.exclude(decision=MeasureDecisionChoice.UNCONFIRMED))
    applies = [r for r in rows if r.decision == MeasureDecisionChoice.APPLIES]
    return MeasureDecisions(
        confirmed=frozenset(r.measure for r in applies),
        not_applying=tuple(
            (r.measure, r.reason)
            for r in rows
            if r.decision == MeasureDecisionChoice.DOES_NOT_APPLY
        ),
        applying_reasons=tuple((r.measure, r.reason) for r in applies),
    )


def measure_decision_get(*, plan: Plan, measure: str) -> MeasureDecision:
    """The plan's stored decision on ``measure``, or a new unconfirmed one (not saved)."""
    row = MeasureDecision.objects.filter(plan=plan, measure=measure).first()
    return row or MeasureDecision(plan=plan, measure=measure)


def measure_decision_save(*, plan: Plan, decision: MeasureDecision, user) -> MeasureDecision:
    """Save the edited decision (applies, does not apply with its reason, or unconfirmed
    again; its stored version is checked) and record it in the plan's history. The landed
    cost and the quote are priced live with it; the TCO's capex is that landed cost, so its
    inputs hash changes and the last run goes stale.

    Raises:
        StaleEditError: The decision was loaded from another version of it.
    """
    row = decision
    with transaction.atomic():
        row.save()
    event_record(
        plan=plan, user=user, kind="settings",
        message=f"Duty decision: {row.measure} — {row.get_decision_display()}"
        + (f"; {row.reason}" if row.reason else "") + ".",
    )  # fmt: skip
    return row


@dataclass
class LineCost:
    """One BOM line priced: the offers considered, the choice, and its landed cost."""

    line: BomLine
    offers: list[Offer] = field(default_factory=list)
    choice: lc.OfferChoice | None = None
    chosen: Offer | None = None
    alternative: Offer | None = None
    landed: lc.LandedCostLine | None = None
    service_cost: lc.ConvertedAmount | None = None
    problem: str = ""
    warnings: list[str] = field(default_factory=list)
    destination: str = ""

    @property
    def status(self) -> str:
        if self.problem:
            return self.problem
        if self.landed is not None:
            return self.landed.status
        return "service — no import" if self.service_cost else ""


@dataclass
class ShipmentCost:
    """The chosen offers of one supplier under one Incoterm: one consignment."""

    key: str
    supplier: Supplier
    incoterm: str
    lines: list[LineCost]
    result: lc.ShipmentLandedCost | None = None
    error: str = ""
    cross_border: bool = True
    destination: str = ""


@dataclass
class SiteLandedCost:
    """One site's lines landed into its own country (``site`` ``None``: plan-wide lines,
    landed into the settings' destination)."""

    site: Site | None
    destination: str
    lines: list[LineCost]
    shipments: list[ShipmentCost]
    totals: lc.LandedTotals | None
    problems: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        if self.site is None:
            return "Plan-wide (services and lines not tied to a site)"
        return self.site.name

    @property
    def key(self) -> str:
        return f"site-{self.site.pk}" if self.site else "plan"


@dataclass(frozen=True)
class LandedCostReport:
    """Everything the landed-cost page shows."""

    currency: str
    as_of: date
    destination: str
    lines: list[LineCost]
    shipments: list[ShipmentCost]
    total_net: lc.Money | None  # None: nothing can be priced (the plan currency is unknown)
    total_gross: lc.Money | None
    vat_recoverable: lc.Money | None
    complete: bool
    problems: list[str]
    reverse_charge_vat: lc.Money | None = None
    unpriced_lines: int = 0
    sites: list[SiteLandedCost] = field(default_factory=list)
    vat_not_recoverable: lc.Money | None = None  # VAT the client bears, inside total_net
    vat_recovery_pct: Decimal = Decimal(100)  # the client's, 0-100
    vat_treatment: str = ""  # the client's VAT treatment in words
    exposure_to_confirm: lc.Money | None = None  # conditional measures, if they all apply
    measures_to_confirm: int = 0

    @property
    def lines_to_confirm(self) -> list[LineCost]:
        """Lines whose landed cost leaves out a conditional measure still to confirm."""
        return [c for c in self.lines if c.landed is not None and c.landed.measures_to_confirm]

    @property
    def conditional_measures(self) -> list[ConditionalMeasure]:
        """Each conditional measure in force on a line, undecided or decided, by name: what the
        landed-cost page offers a decision on."""
        found: dict[str, ConditionalMeasure] = {}
        for c in self.lines:
            if c.landed is None:
                continue
            for m in c.landed.measures_to_confirm:
                row = found.setdefault(m.name, ConditionalMeasure(m.name, m.pct, m.condition))
                row.lines.append(c)
                row.exposure = m.exposure if row.exposure is None else row.exposure + m.exposure
            for d in c.landed.measures_decided:
                row = found.setdefault(d.name, ConditionalMeasure(d.name, d.pct, d.condition))
                row.lines.append(c)
                row.charged = d.duty if row.charged is None else row.charged + d.duty
                row.decided = d
        return list(found.values())


@dataclass
class ConditionalMeasure:
    """One conditional measure of the plan's landed cost, over the lines it is in force on."""

    name: str
    pct: Decimal
    condition: str
    lines: list[LineCost] = field(default_factory=list)
    exposure: lc.Money | None = None  # lines where it is unconfirmed: what it adds if it applies
    charged: lc.Money | None = None  # lines where it is decided: the duty it adds (0: not)
    decided: lc.MeasureDecided | None = None  # the decision as the engine applied it


_OFFER_WARNING = re.compile(r"^(Pinned offer|Offer) (\d+) ")


def _offer_words(warnings: list[str], by_id: dict) -> list[str]:
    """Warnings about an offer name its supplier, price and quote date, not its row id."""
    out = []
    for warning in warnings:
        match = _OFFER_WARNING.match(warning)
        offer = by_id.get(match.group(2)) if match else None
        if offer is not None:
            what = "the pinned offer" if match.group(1) == "Pinned offer" else "the offer"
            words = (
                f"{what} of {offer.supplier} ({format_money(offer.unit_price, offer.currency)} per "
                f"unit, quoted {offer.quoted_on:%Y-%m-%d}) "
            )
            warning = (words[0].upper() + words[1:]) + warning[match.end() :]
        out.append(warning)
    return out


def _choose(
    cost: LineCost,
    *,
    settings: SourcingSettings,
    plan: Plan,
    tariffs,
    fx,
    basis,
    as_of: date,
    decisions: MeasureDecisions,
) -> None:
    """Choose the line's offer by its landed cost into the line's own destination."""
    line = cost.line
    engine_offers = [selectors.offer_to_engine(o, part_key=line.part_key) for o in cost.offers]
    by_id = {str(o.pk): o for o in cost.offers}
    pinned = line.pinned_offer_id and str(line.pinned_offer_id) in by_id
    strategy = "pinned" if pinned else settings.offer_strategy
    if line.service or not line.hs_code:
        # Services are bought locally, not imported; goods without HS code cannot be tariffed.
        try:
            if not line.service:
                cost.problem = "no HS code — duty unknown"
            valid = [
                o for o in engine_offers if o.valid_until >= as_of or o.offer_id == str(
                    line.pinned_offer_id)
            ]  # fmt: skip
            cost.warnings += _offer_words(
                [f"Offer {o.ident} expired on {o.valid_until}; not used."
                 for o in engine_offers if o not in valid],
                by_id,
            )  # fmt: skip
            if not valid:
                cost.problem = cost.problem or "every offer has expired"
                return
            priced = []
            for o in valid:
                qty, unit, _ = lc.price_for_quantity(o, line.quantity)
                amount = fx.convert(lc.Money(unit * qty, o.currency), plan.currency, as_of)
                priced.append((amount, o))
            if pinned:
                amount, chosen = next(
                    p for p in priced if p[1].offer_id == str(line.pinned_offer_id)
                )
            elif strategy == "fastest":
                amount, chosen = min(priced, key=lambda p: (p[1].lead_time_days, p[0].amount))
            else:
                amount, chosen = min(priced, key=lambda p: (p[0].amount, p[1].lead_time_days))
            cost.chosen = by_id[chosen.offer_id]
            if line.service:
                cost.service_cost = amount
        except lc.LandedCostError as exc:
            cost.problem = str(exc)
        return
    try:
        choice = lc.choose_offer(
            engine_offers,
            quantity=line.quantity,
            hs_code=line.hs_code,
            destination=cost.destination,
            tariffs=tariffs,
            fx=fx,
            plan_currency=plan.currency,
            as_of=as_of,
            strategy=strategy,
            pinned_offer_id=str(line.pinned_offer_id) if pinned else None,
            vat_recovery_pct=plan.client.vat_recovery_pct,
            confirmed_measures=decisions.confirmed,
            not_applying=decisions.not_applying,
        )
    except lc.LandedCostError as exc:
        cost.problem = str(exc)
        return
    cost.choice = choice
    cost.chosen = by_id[choice.chosen.offer.offer_id]
    if choice.alternative:
        cost.alternative = by_id[choice.alternative.offer.offer_id]
    # "Duty unknown" is shown as the line's status; the other warnings are listed.
    cost.warnings += _offer_words(
        [w for w in choice.warnings if not w.startswith("Duty unknown")], by_id
    )


def _shipment(
    group: ShipmentCost,
    *,
    settings: SourcingSettings,
    plan: Plan,
    tariffs,
    fx,
    basis,
    as_of,
    decisions: MeasureDecisions,
) -> None:
    """Landed cost of one consignment (freight from the offers, brokerage from settings)."""
    try:
        lines, freight = [], lc.Money.zero(plan.currency)
        for cost in group.lines:
            offer = selectors.offer_to_engine(cost.chosen, part_key=cost.line.part_key)
            qty, _, _ = lc.price_for_quantity(offer, cost.line.quantity)
            freight = (
                freight
                + fx.convert(
                    lc.Money(offer.freight_per_unit * qty, offer.currency), plan.currency, as_of
                ).money
            )
            lines.append(
                lc.ShipmentLine(
                    offer, cost.line.quantity, cost.line.hs_code,
                    unit_weight_kg=cost.chosen.unit_weight_kg,
                    confirmed_measures=decisions.confirmed, not_applying=decisions.not_applying,
                    applying_reasons=decisions.applying_reasons,
                )
            )  # fmt: skip
        group.result = lc.shipment_landed_cost(
            lc.Shipment(
                key=group.key,
                destination=group.destination,
                lines=tuple(lines),
                freight=freight,
                brokerage=lc.Money(settings.brokerage_per_shipment, plan.currency),
                allocation=settings.allocation,
            ),
            tariffs=tariffs, fx=fx, plan_currency=plan.currency, as_of=as_of, basis=basis,
            vat_recovery_pct=plan.client.vat_recovery_pct,
        )  # fmt: skip
    except lc.LandedCostError as exc:
        group.error = str(exc)
        return
    for cost, landed in zip(group.lines, group.result.lines, strict=True):
        cost.landed = landed


def _ship_from(offer: Offer) -> str:
    """The offer's ship-from country, defaulting to its supplier's country."""
    return offer.ship_from_country or offer.supplier.country


def line_destination(line: BomLine, settings: SourcingSettings) -> str:
    """Where a line is landed: its site's country, else the settings' destination."""
    country = line.site.country if line.site_id and line.site.country else ""
    return lc.normalise_country(country or settings.destination_country)


def landed_cost_report(*, plan: Plan, organisation) -> LandedCostReport:
    """Choose an offer for every BOM line and price the consignments, in the plan currency.

    Each site's lines are landed into that site's country (duty, import VAT, domestic VAT or
    reverse charge by where the offer ships from), in shipments of their own; plan-wide lines
    (services, lines without a site) into the settings' destination. Totals per site and for
    the plan come from the landed-cost engine. Lines without offers, without an HS code or
    without a tariff rule are reported as such and make the total incomplete; they are never
    counted as zero duty.
    """
    return computed(
        ("landed_cost", plan.pk, organisation.pk),
        lambda: _landed_cost_report(plan=plan, organisation=organisation),
    )


def _landed_cost_report(*, plan: Plan, organisation) -> LandedCostReport:
    settings = sourcing_settings_get(plan=plan)
    as_of = valuation_date(settings)
    bom = [line for line in selectors.bom_line_list(plan=plan) if line.quantity]
    destinations = list(dict.fromkeys(line_destination(line, settings) for line in bom))
    shown = " · ".join(destinations) or lc.normalise_country(settings.destination_country)
    if plan.currency not in lc.MINOR_UNITS:  # saved before currencies were validated
        problem = f"plan currency {plan.currency!r} unknown — set an ISO code on the plan"
        costs = [
            LineCost(line=line, problem=problem, destination=line_destination(line, settings))
            for line in bom
        ]
        return LandedCostReport(
            currency=plan.currency, as_of=as_of, destination=shown, lines=costs,
            shipments=[], total_net=None, total_gross=None, vat_recoverable=None,
            complete=False, problems=[f"The {problem}."], unpriced_lines=len(costs),
        )  # fmt: skip
    offers = list(selectors.offer_list(organisation=organisation))
    tariffs = {d: selectors.tariff_rules(destination=d) for d in destinations}
    fx = selectors.fx_table()
    basis = selectors.customs_valuation_rules()
    decisions = measure_decisions(plan=plan)
    by_site: dict[int | None, list[LineCost]] = {}
    sites: dict[int | None, Site | None] = {None: None}
    for line in bom:
        cost = LineCost(
            line=line, offers=selectors.offers_for_line(offers, line),
            destination=line_destination(line, settings),
        )  # fmt: skip
        if not cost.offers:
            cost.problem = "no offer"
        else:
            _choose(cost, settings=settings, plan=plan, tariffs=tariffs[cost.destination], fx=fx,
                    basis=basis, as_of=as_of, decisions=decisions)  # fmt: skip
        by_site.setdefault(line.site_id, []).append(cost)
        sites[line.site_id] = line.site
    order = sorted(by_site, key=lambda pk: (pk is None, pk or 0))
    site_costs = [
        _site_landed(
            sites[pk],
            by_site[pk],
            settings=settings,
            plan=plan,
            tariffs=tariffs,
            fx=fx,
            basis=basis,
            as_of=as_of,
            decisions=decisions,
        )  # fmt: skip
        for pk in order
    ]
    totals = lc.plan_landed_totals((s.totals for s in site_costs), plan.currency)
    problems = [p for s in site_costs for p in s.problems]
    return LandedCostReport(
        currency=plan.currency, as_of=as_of, destination=shown,
        lines=[c for s in site_costs for c in s.lines],
        shipments=[g for s in site_costs for g in s.shipments], total_net=totals.net,
        total_gross=totals.gross, vat_recoverable=totals.vat_recoverable,
        complete=not problems, problems=problems, reverse_charge_vat=totals.reverse_charge_vat,
        unpriced_lines=totals.unpriced_lines, sites=site_costs,
        vat_not_recoverable=totals.vat_not_recoverable,
        vat_recovery_pct=plan.client.vat_recovery_pct, vat_treatment=plan.client.vat_treatment,
        exposure_to_confirm=totals.exposure_to_confirm,
        measures_to_confirm=totals.measures_to_confirm,
    )  # fmt: skip


def _site_landed(
    site: Site | None,
    costs: list[LineCost],
    *,
    settings,
    plan,
    tariffs,
    fx,
    basis,
    as_of,
    decisions: MeasureDecisions,
) -> SiteLandedCost:
    """One site's consignments (one per supplier and Incoterm) landed into its country."""
    dest = costs[0].destination if costs else lc.normalise_country(settings.destination_country)
    groups: dict[tuple, ShipmentCost] = {}
    for cost in costs:
        if cost.chosen is None or cost.line.service or cost.problem:
            continue
        key = (cost.destination, cost.chosen.supplier_id, cost.chosen.incoterm)
        if key not in groups:
            where = f"{site.name}: " if site is not None else ""
            groups[key] = ShipmentCost(
                key=f"{where}{cost.chosen.supplier.name} ({cost.chosen.incoterm})",
                supplier=cost.chosen.supplier,
                incoterm=cost.chosen.incoterm,
                lines=[],
                destination=cost.destination,
            )
        groups[key].lines.append(cost)
    for group in groups.values():
        group.cross_border = any(
            lc.supply_rule(_ship_from(c.chosen), group.destination) == "import" for c in group.lines
        )
        _shipment(group, settings=settings, plan=plan, tariffs=tariffs[group.destination],
                  fx=fx, basis=basis, as_of=as_of, decisions=decisions)  # fmt: skip
    problems, failed = [], 0
    for group in groups.values():
        if group.result:
            if not group.result.complete:
                n = group.result.unpriced_lines
                problems.append(
                    f"{group.key}: {n} line{'s' if n != 1 else ''} not priced (duty or VAT "
                    "unknown — see the line)."
                )
        else:
            failed += len(group.lines)
            problems.append(f"{group.key}: {group.error}")
    for cost in costs:
        if cost.problem:
            failed += 1
            problems.append(f"{cost.line.description}: {cost.problem}")
    totals = lc.landed_totals(
        (g.result for g in groups.values() if g.result), plan.currency,
        local=(c.service_cost.money for c in costs if c.service_cost), unpriced_lines=failed,
    )  # fmt: skip
    return SiteLandedCost(site, dest, costs, list(groups.values()), totals, problems)


def purchase_order_landed_cost(
    *, order: PurchaseOrder, plan: Plan
) -> tuple[lc.ShipmentLandedCost | None, str]:
    """Landed cost of one purchase order as a shipment with its own charges.

    Returns:
        ``(result, error)``; the error is one sentence when the engine refuses the input.
    """
    settings = sourcing_settings_get(plan=plan)
    as_of = order.ordered_actual or valuation_date(settings)
    lines = []
    for po_line in order.lines.all():
        if not po_line.hs_code:
            return None, f"{po_line.description} has no HS code — duty unknown."
        lines.append(
            lc.ShipmentLine(
                selectors.offer_to_engine(po_line.offer, part_key=f"po-line-{po_line.pk}"),
                po_line.quantity, po_line.hs_code, unit_weight_kg=po_line.offer.unit_weight_kg,
            )
        )  # fmt: skip
    if not lines:
        return None, "The order has no lines."
    ccy = order.charges_currency
    try:
        result = lc.shipment_landed_cost(
            lc.Shipment(
                key=order.reference, destination=order.destination_country, lines=tuple(lines),
                freight=lc.Money(order.freight, ccy), brokerage=lc.Money(order.brokerage, ccy),
                insurance=lc.Money(order.insurance, ccy) if order.insurance is not None else None,
                inland_freight=lc.Money(order.inland_freight, ccy), allocation=order.allocation,
            ),
            tariffs=selectors.tariff_rules(destination=order.destination_country),
            fx=selectors.fx_table(), plan_currency=plan.currency, as_of=as_of,
            basis=selectors.customs_valuation_rules(),
            vat_recovery_pct=plan.client.vat_recovery_pct,
        )  # fmt: skip
    except lc.LandedCostError as exc:
        return None, str(exc)
    return result, ""


# ---------------------------------------------------------------------------------------------
# Timeline
# ---------------------------------------------------------------------------------------------


@dataclass
class TimelineReport:
    """Go-live by the critical path, with the slips that moved it."""

    order_date: date
    power_ready: date
    power_ready_note: str
    target_go_live: date | None
    slips: cp.SlipReport | None = None
    notes: list[str] = field(default_factory=list)
    problem: str = ""
    item_lines: dict[str, BomLine] = field(default_factory=dict)
    power_unknown: bool = False
    site_powers: list[SitePower] = field(default_factory=list)
    task_sites: dict[str, str] = field(default_factory=dict)  # task key → its site's name
    nothing_to_ship: bool = False  # the chosen option (the public cloud) buys no hardware

    @property
    def site_rows(self) -> list[dict]:
        """Per site of a multi-site schedule: its power date, installation end and ready date."""
        sched = self.schedule
        if sched is None or len(self.site_powers) < 2:
            return []
        rows = []
        for power in self.site_powers:
            key = f"site-{power.site.pk}"
            try:
                install = sched.get(cp.site_task_key("install", key))
                burn_in = sched.get(cp.site_task_key("burn_in", key))
            except KeyError:
                continue
            rows.append(
                {
                    "site": power.site.name, "country": power.site.country,
                    "power_ready": power.ready, "power_source": power.source,
                    "installed": install.earliest_finish, "ready": burn_in.earliest_finish,
                    "critical": burn_in.critical,
                }
            )  # fmt: skip
        return rows

    @property
    def schedule(self) -> cp.Schedule | None:
        return self.slips.schedule if self.slips else None

    @property
    def go_live(self) -> date | None:
        return self.slips.new_go_live if self.slips else None

    @property
    def late_against_target_days(self) -> int | None:
        if self.go_live and self.target_go_live and self.go_live > self.target_go_live:
            return (self.go_live - self.target_go_live).days
        return None

    def section(self, clean=None) -> dict:
        """The timeline as the revision snapshot stores it (``planner.sharing.schema.Timeline``):
        the one shape the page's Gantt and the PDF's Gantt are both defined from
        (``planner.chartdefs.timeline_gantt``). ``clean`` rewrites texts (supplier names)."""
        clean = clean or (lambda text: text)

        def iso(value):
            return value.isoformat() if value else None

        data: dict = {
            "available": self.slips is not None,
            "reason": self.problem,
            "order_date": iso(self.order_date),
            "power_ready": iso(self.power_ready),
            "power_ready_note": self.power_ready_note,
            "target_go_live": iso(self.target_go_live),
            "go_live": iso(self.go_live),
            "baseline_go_live": None,
            "delay_days": 0,
            "late_against_target_days": self.late_against_target_days,
            "notes": [clean(n) for n in self.notes],
            "tasks": [],
            "critical_path": [],
            "slips": [],
            "sites": [],
        }
        if self.slips is None:
            return data
        schedule = self.slips.schedule
        critical = set(schedule.critical_path)
        data["baseline_go_live"] = iso(self.slips.baseline_go_live)
        data["delay_days"] = self.slips.delay_days
        data["critical_path"] = list(schedule.critical_path)
        data["tasks"] = [
            {
                "key": s.task.key,
                "name": clean(s.task.name),
                "kind": s.task.kind,
                "start": iso(s.earliest_start),
                "finish": iso(s.earliest_finish),
                "slack_days": s.slack_days,
                "critical": s.task.key in critical,
                "site": self.task_sites.get(s.task.key, ""),
            }
            for s in schedule.tasks
        ]
        data["sites"] = [
            {
                **row,
                "power_ready": iso(row["power_ready"]),
                "installed": iso(row["installed"]),
                "ready": iso(row["ready"]),
            }
            for row in self.site_rows
        ]
        data["slips"] = [
            {
                "name": clean(s.name),
                "slip_days": s.slip_days,
                "go_live_delay_days": s.go_live_delay_days,
            }
            for s in self.slips.responsible
        ]
        return data


@dataclass(frozen=True)
class SitePower:
    """When one site's power carries that site's servers (``ready`` ``None``: unknown)."""

    site: Site
    ready: date | None
    source: str


def site_power_ready(*, plan: Plan, settings: SourcingSettings) -> list[SitePower]:
    """Each site holding servers of the pooled deployment: the first day its capacity,
    planned upgrades included, carries that site's load (``planner.engine.facility``).

    The settings' date, when set, overrides every site's.
    """
    try:
        deployment = plan_deployment(plan=plan)
    except CatalogGapError:
        return []
    out = []
    for site in deployment.sites:
        if settings.power_ready_on:
            out.append(SitePower(site, settings.power_ready_on, "set in the sourcing settings"))
            continue
        report = site_evaluate(plan=plan, site=site, deployment=deployment).report
        if report is None:
            continue
        check = report.by_key("power_ready")
        if check.status == "fail" and finite_or_none(check.value) is None:
            out.append(SitePower(site, None, f"{site.name} never has the power: {check.reason}"))
        elif report.power_ready_on:
            out.append(
                SitePower(
                    site, report.power_ready_on,
                    f"facility checks: {site.name} carries its {report.it_load_kw:.1f} kW from "
                    "this date (planned upgrades included)",
                )
            )  # fmt: skip
        else:
            out.append(
                SitePower(site, valuation_date(settings), f"facility checks: {site.name} has "
                          "the power already")
            )  # fmt: skip
    return out


def power_ready_date(
    *, plan: Plan, settings: SourcingSettings, sites: list[SitePower] | None = None
) -> tuple[date | None, str]:
    """The date power is ready for the plan's servers, and where it comes from.

    The latest of the sites' dates (:func:`site_power_ready`, given as ``sites`` when already
    computed). ``None`` when no site holds the servers or a site never reaches its load: the
    date is then unknown.
    """
    if settings.power_ready_on:
        return settings.power_ready_on, "set in the sourcing settings"
    if sites is None:
        sites = site_power_ready(plan=plan, settings=settings)
    for power in sites:
        if power.ready is None:
            return None, power.source
    if not sites:
        return None, ""
    latest = max(sites, key=lambda p: p.ready)
    if latest.source.endswith("has the power already") and all(
        p.source.endswith("has the power already") for p in sites
    ):
        return latest.ready, "facility checks: every site has the power already"
    return latest.ready, latest.source


def _timeline_item(key, name, lead, origin, dest, mode, notes, site="") -> cp.TimelineItem:
    lane = (cp.COUNTRY_REGION.get(origin), cp.COUNTRY_REGION.get(dest), mode)
    transit = None
    if origin != dest and lane not in cp.LANE_TRANSIT_DAYS:
        transit = FALLBACK_TRANSIT_DAYS
        notes.append(
            f"{name}: no {mode} transit default from {origin} to {dest}; "
            f"{FALLBACK_TRANSIT_DAYS} days assumed."
        )
    return cp.TimelineItem(
        key=key, name=name, lead_time_days=lead, origin_country=origin,
        destination_country=dest, mode=mode, transit_days=transit, site=site,
    )  # fmt: skip


def _timeline_tasks(
    report: LandedCostReport,
    settings: SourcingSettings,
    plan: Plan,
    power_ready: date,
    sites: tuple[cp.SiteReadiness, ...] = (),
) -> tuple[tuple[cp.Task, ...], list[str], dict[str, BomLine], dict[str, str]]:
    """Items: each purchase order as one consignment from the supplier's country (lead time =
    its slowest line), and each BOM line not ordered yet at its chosen offer, each delivered
    to its line's site (one shipment set per site). Also returns each item's site key."""
    items, notes, by_key = [], [], {}
    installs: dict[str, list] = defaultdict(list)
    actual: dict[str, dict] = defaultdict(dict)
    installed = []
    ordered_lines = set()
    for order in selectors.purchase_order_list(plan=plan):
        lines = list(order.lines.all())
        if not lines:
            continue
        ordered_lines |= {line.bom_line_id for line in lines}
        key = f"order-{order.pk}"
        site = next(
            (f"site-{line.bom_line.site_id}" for line in lines
             if line.bom_line is not None and line.bom_line.site_id),
            "",
        )  # fmt: skip
        site_name = next(
            (line.bom_line.site.name for line in lines
             if line.bom_line is not None and line.bom_line.site_id),
            "",
        )  # fmt: skip
        items.append(
            _timeline_item(
                key, f"{order.reference} from {order.supplier}"
                + (f" to {site_name}" if site_name else ""),
                max(line.offer.lead_time_days for line in lines), order.supplier.country,
                lc.normalise_country(order.destination_country), order.shipping_mode, notes,
                site,
            )
        )  # fmt: skip
        # Actual dates replace the plan. Later steps start when the previous one actually
        # finished, so only their actual finish is given: a late shipment is the lead time's
        # slip, not the transit's.
        actual[f"{key}:lead_time"] = {
            "actual_start": order.ordered_actual, "actual_finish": order.shipped_actual,
        }  # fmt: skip
        actual[f"{key}:transit"] = {"actual_finish": order.customs_actual}
        actual[f"{key}:customs"] = {"actual_finish": order.delivered_actual}
        installed.append(order.installed_actual)
        installs[site].append(order.installed_actual)
    for cost in report.lines:
        if cost.line.service or cost.line.quantity == 0 or cost.line.pk in ordered_lines:
            continue
        if cost.chosen is None:
            notes.append(f"{cost.line.description}: {cost.problem}; not in the timeline.")
            continue
        key = f"line-{cost.line.pk}"
        by_key[key] = cost.line
        site = f"site-{cost.line.site_id}" if cost.line.site_id else ""
        name = cost.line.description + (f" for {cost.line.site.name}" if site else "")
        items.append(
            _timeline_item(
                key, name, cost.chosen.lead_time_days, cost.chosen.origin_country,
                cost.destination or lc.normalise_country(settings.destination_country),
                settings.shipping_mode, notes, site,
            )
        )  # fmt: skip
    if not items:
        return (), notes, by_key, {}
    item_sites = {i.key: i.site for i in items}
    tasks = cp.plan_timeline(
        valuation_date(settings),
        items,
        installation_days=settings.installation_days,
        burn_in_days=settings.burn_in_days,
        power_ready_date=power_ready,
        sites=sites,
    )
    if len(sites) >= 2:
        pending = {i.site for i in items if i.key in by_key}
        for site, dates in installs.items():
            if site and site not in pending and "" not in pending and all(dates):
                actual[cp.site_task_key("install", site)] = {"actual_finish": max(dates)}
    elif installed and not by_key and all(installed):
        actual["install"] = {"actual_finish": max(installed)}
    out = []
    for task in tasks:
        values = {k: v for k, v in actual.get(task.key, {}).items() if v}
        start, finish = values.get("actual_start"), values.get("actual_finish")
        if start and finish and finish < start:
            values.pop("actual_finish")
        out.append(cp.Task(**{**_task_fields(task), **values}))
    return tuple(out), notes, by_key, item_sites


def _task_fields(task: cp.Task) -> dict:
    return {
        "key": task.key, "name": task.name, "duration_days": task.duration_days,
        "depends_on": task.depends_on, "earliest_start": task.earliest_start,
        "actual_start": task.actual_start, "actual_finish": task.actual_finish, "kind": task.kind,
    }  # fmt: skip


def timeline_report(
    *, plan: Plan, organisation, report: LandedCostReport | None = None
) -> TimelineReport:
    """Go-live date over the chosen offers' lead times, transit, customs, installation, burn-in
    and power readiness; with purchase-order actuals, the slips that moved it."""
    settings = sourcing_settings_get(plan=plan)
    order_date = valuation_date(settings)
    site_powers = site_power_ready(plan=plan, settings=settings)
    power_ready, source = power_ready_date(plan=plan, settings=settings, sites=site_powers)
    note = source
    unknown = power_ready is None
    if unknown:
        power_ready = order_date
        note = (
            (f"{source}; " if source else "unknown — ")
            + "place the servers at a site with its power dates in the facility, or set a "
            "date in the sourcing settings; until then go-live assumes power on the order date"
        )
    result = TimelineReport(order_date, power_ready, note, plan.target_go_live)
    result.power_unknown = unknown
    result.site_powers = site_powers
    report = report or landed_cost_report(plan=plan, organisation=organisation)
    with_goods = {c.line.site_id for c in report.lines if c.line.site_id and not c.line.service}
    # One shipment set per site: each site's own power date (unknown → the order date, and the
    # go-live says so), installation and burn-in.
    readiness = tuple(
        cp.SiteReadiness(f"site-{p.site.pk}", p.site.name, p.ready or order_date)
        for p in site_powers
        if p.site.pk in with_goods
    )
    try:
        tasks, notes, by_key, item_sites = _timeline_tasks(
            report, settings, plan, power_ready, readiness
        )
        result.notes, result.item_lines = notes, by_key
        if len(readiness) >= 2:
            names = {r.key: r.name for r in readiness}
            for task in tasks:
                item, _, rest = task.key.partition(":")
                site = item_sites.get(item) if item in item_sites else rest
                result.task_sites[task.key] = names.get(site, "All sites")
        if not tasks:
            option = bom_option_shown(plan=plan)
            if not option["buys_hardware"] and not any(not c.line.service for c in report.lines):
                result.nothing_to_ship, result.problem = True, option["text"]
                return result
            result.problem = (
                "No BOM line has a chosen offer yet: add offers for the parts, then the "
                "timeline follows from their lead times."
            )
            return result
        result.slips = cp.assess_slips(tasks, order_date)
    except cp.CriticalPathError as exc:
        result.problem = str(exc)
    return result


# ---------------------------------------------------------------------------------------------
# Purchase orders
# ---------------------------------------------------------------------------------------------


def _next_reference(plan: Plan) -> str:
    n = PurchaseOrder.objects.filter(plan=plan).count() + 1
    while PurchaseOrder.objects.filter(plan=plan, reference=f"PO-{n:03d}").exists():
        n += 1
    return f"PO-{n:03d}"


@transaction.atomic
def purchase_order_create(
    *, plan: Plan, organisation, supplier: Supplier, user, logistics_owner: str = ""
) -> PurchaseOrder:
    """An order for every BOM line whose chosen offer is this supplier's and not yet ordered.

    Expected dates come from the current schedule; freight is the offers' freight converted to
    the plan currency; brokerage from the sourcing settings.

    Raises:
        SourcingError: Nothing to order from this supplier.
    """
    settings = sourcing_settings_get(plan=plan)
    report = landed_cost_report(plan=plan, organisation=organisation)
    ordered = set(
        PurchaseOrderLine.objects.filter(order__plan=plan).values_list("bom_line_id", flat=True)
    )
    picks = [
        c
        for c in report.lines
        if c.chosen
        and c.chosen.supplier_id == supplier.pk
        and c.line.pk not in ordered
        and not c.line.service  # services are contracted, not shipped
    ]
    if not picks:
        raise SourcingError(
            f"No BOM line left to order from {supplier}: no line has its offer as the choice, "
            "or every such line is already on an order."
        )
    # One order per destination site: each site's goods are shipped and cleared on their own.
    # The first site with lines left is ordered now; creating again orders the next one.
    first = picks[0]
    picks = [
        c for c in picks
        if c.line.site_id == first.line.site_id and c.destination == first.destination
    ]  # fmt: skip
    fx, as_of = selectors.fx_table(), report.as_of
    freight = lc.Money.zero(plan.currency)
    for c in picks:
        offer = selectors.offer_to_engine(c.chosen, part_key=c.line.part_key)
        qty, _, _ = lc.price_for_quantity(offer, c.line.quantity)
        try:
            freight = (
                freight
                + fx.convert(
                    lc.Money(offer.freight_per_unit * qty, offer.currency), plan.currency, as_of
                ).money
            )
        except lc.LandedCostError as exc:
            raise SourcingError(str(exc)) from exc
    order = PurchaseOrder.objects.create(
        plan=plan, supplier=supplier, reference=_next_reference(plan),
        destination_country=first.destination, shipping_mode=settings.shipping_mode,
        logistics_owner=logistics_owner, charges_currency=plan.currency,
        freight=lc.round_money(freight.amount, plan.currency),
        brokerage=settings.brokerage_per_shipment, allocation=settings.allocation,
        ordered_expected=as_of,
    )  # fmt: skip
    for c in picks:
        PurchaseOrderLine.objects.create(
            order=order, bom_line=c.line, offer=c.chosen, description=c.line.description,
            quantity=max(c.line.quantity, c.chosen.minimum_order_qty), hs_code=c.line.hs_code,
        )  # fmt: skip
    # Expected dates: the order's steps in the schedule that now includes it.
    timeline = timeline_report(plan=plan, organisation=organisation, report=report)
    if timeline.schedule:
        sched, key = timeline.schedule, f"order-{order.pk}"
        order.shipped_expected = sched.get(f"{key}:lead_time").earliest_finish
        order.customs_expected = sched.get(f"{key}:transit").earliest_finish
        order.delivered_expected = sched.get(f"{key}:customs").earliest_finish
        install_key = cp.site_task_key(
            "install", f"site-{picks[0].line.site_id}" if picks[0].line.site_id else ""
        )
        # A site's own install task; a plan-wide order (lines without a site) in a
        # multi-site plan is installed when the last site's installation finishes.
        installs = [t for t in sched.tasks if t.task.key in (install_key, "install")] or [
            t for t in sched.tasks if t.task.key.startswith("install:")
        ]
        order.installed_expected = max(t.earliest_finish for t in installs) if installs else None
        order.save()
    event_record(
        plan=plan, user=user, kind="order",
        message=f"{order.reference} to {supplier} created with {count(len(picks), 'line')}"
        + (f" for {first.line.site.name} ({first.destination})" if first.line.site_id else "")
        + ": "
        + ", ".join(f"{c.line.quantity} × {c.line.description}" for c in picks) + ".",
    )  # fmt: skip
    return order


def order_is_cross_border(order: PurchaseOrder) -> bool:
    """True when any line ships from outside the destination's customs territory (an import).

    Domestic and intra-EU supplies cross no customs border, wherever the goods were made.
    """
    dest = order.destination_country
    return any(
        lc.supply_rule(_ship_from(line.offer), dest) == "import" for line in order.lines.all()
    )


TRACKED_ORDER_FIELDS = (
    "status", "logistics_owner", "shipping_mode", "destination_country", "charges_currency",
    "freight", "insurance", "brokerage", "inland_freight", "allocation", "notes",
    *(f for _, e, a in ORDER_STEPS for f in (e, a)),
)  # fmt: skip


def purchase_order_update(*, order: PurchaseOrder, changes: dict, user) -> list[str]:
    """Save an order's new values, move its status to its latest actual step, and log each
    change (a late actual date says how late).

    Returns:
        The changes in words.
    """
    before = {f: getattr(order, f) for f in TRACKED_ORDER_FIELDS}
    for name, value in changes.items():
        setattr(order, name, value)
    latest = None
    for status, _, actual in ORDER_STEPS:
        if getattr(order, actual):
            latest = status
    order_of = [s for s, _, _ in ORDER_STEPS]
    if latest and (
        order.status == OrderStatus.PLANNED or order_of.index(latest) > order_of.index(order.status)
    ):
        order.status = latest
    words = []
    for name in TRACKED_ORDER_FIELDS:
        old, new = before[name], getattr(order, name)
        if old == new:
            continue
        label = PurchaseOrder._meta.get_field(name).verbose_name
        text = f"{label}: {old if old not in (None, '') else '—'} → {new if new not in (None, '') else '—'}"
        for _, expected, actual in ORDER_STEPS:
            if name == actual and new and getattr(order, expected):
                late = (new - getattr(order, expected)).days
                if late > 0:
                    text += f" ({late} days later than expected {getattr(order, expected)})"
        words.append(text)
    if words:
        order.save()
        event_record(
            plan=order.plan, user=user, kind="order",
            message=f"{order.reference}: " + "; ".join(words) + ".",
            data={"order": order.pk},
        )  # fmt: skip
    return words


# ---------------------------------------------------------------------------------------------
# Daily check
# ---------------------------------------------------------------------------------------------


def sourcing_check_plan(*, plan: Plan, today: date | None = None) -> list[SourcingFlag]:
    """Re-check one plan: overdue and late order steps, slips that move go-live, and chosen
    offers that expire soon. Stores the flags (resolving those no longer true) and the go-live.

    Returns:
        The open flags after the check.
    """
    today = today or timezone.localdate()
    found: dict[str, tuple[str, str]] = {}
    for order in selectors.purchase_order_list(plan=plan):
        if not order.is_open or order.status == OrderStatus.PLANNED:
            continue
        for step in order.steps():
            if step["expected"] and not step["actual"] and step["expected"] < today:
                days = (today - step["expected"]).days
                found[f"overdue:{order.pk}:{step['status']}"] = (
                    FlagKind.OVERDUE,
                    f"{order.reference} ({order.supplier}): {step['label'].lower()} expected "
                    f"{step['expected']}, no actual date yet ({days} days overdue).",
                )
                break  # later steps are overdue because of this one
            if step["late_days"]:
                found[f"late:{order.pk}:{step['status']}"] = (
                    FlagKind.SLIP,
                    f"{order.reference} ({order.supplier}): {step['label'].lower()} on "
                    f"{step['actual']}, {step['late_days']} days later than expected "
                    f"{step['expected']}.",
                )
    settings = sourcing_settings_get(plan=plan)
    report = landed_cost_report(plan=plan, organisation=plan.organisation)
    ordered = set(
        PurchaseOrderLine.objects.filter(order__plan=plan).values_list("bom_line_id", flat=True)
    )
    for cost in report.lines:
        offer = cost.chosen
        if offer is None or cost.line.pk in ordered:
            continue  # an ordered line no longer depends on the offer's validity
        if offer.valid_until < today:
            found[f"expired:{offer.pk}"] = (
                FlagKind.OFFER_EXPIRED,
                f"Offer of {offer.supplier} for {offer.item_label} expired on "
                f"{offer.valid_until}; ask for a new quote.",
            )
        elif offer.valid_until <= today + timedelta(days=OFFER_EXPIRY_WARNING_DAYS):
            found[f"expiring:{offer.pk}"] = (
                FlagKind.OFFER_EXPIRING,
                f"Offer of {offer.supplier} for {offer.item_label} expires on "
                f"{offer.valid_until} ({(offer.valid_until - today).days} days).",
            )
    timeline = timeline_report(plan=plan, organisation=plan.organisation, report=report)
    if timeline.slips and timeline.slips.delay_days > 0:
        names = ", ".join(f"{s.name} (+{s.slip_days} days)" for s in timeline.slips.responsible)
        found["go-live"] = (
            FlagKind.SLIP,
            f"Go-live moved from {timeline.slips.baseline_go_live} to "
            f"{timeline.slips.new_go_live} (+{timeline.slips.delay_days} days) because of: "
            f"{names or 'slipped steps'}.",
        )
    now = timezone.now()
    with transaction.atomic():
        for key, (kind, message) in found.items():
            flag, created = SourcingFlag.objects.get_or_create(
                plan=plan, key=key, defaults={"kind": kind, "message": message}
            )
            if not created:
                flag.kind, flag.message, flag.resolved_at = kind, message, None
                flag.save()
        SourcingFlag.objects.filter(plan=plan, resolved_at__isnull=True).exclude(
            key__in=found
        ).update(resolved_at=now)
        settings.checked_at = now
        settings.checked_go_live = timeline.go_live
        settings.save(update_fields=["checked_at", "checked_go_live"])
    return list(selectors.open_flag_list(plan=plan))


# ---------------------------------------------------------------------------------------------
# Reference data: tariffs and FX
# ---------------------------------------------------------------------------------------------


@transaction.atomic
def tariffs_load_defaults() -> tuple[int, int]:
    """Load the seed tariff rules and customs valuation rules; safe to run again.

    A rule is matched on (HS prefix, destination, valid from); its figures and measures are
    replaced by the seed's, so rerunning changes nothing.

    Returns:
        ``(rules created, rules updated)``.
    """
    created = updated = 0
    for rule in DEFAULT_TARIFF_RULES:
        row, was_created = TariffRule.objects.update_or_create(
            hs_prefix=rule.hs_prefix,
            destination=rule.destination,
            valid_from=rule.valid_from,
            defaults={
                "duty_pct": rule.duty_pct, "vat_pct": rule.vat_pct,
                "vat_recoverable": rule.vat_recoverable,
                "surcharge_on_duty_pct": rule.surcharge_on_duty_pct, "valid_to": rule.valid_to,
                "description": rule.description, "source": rule.source,
            },
        )  # fmt: skip
        created += was_created
        updated += not was_created
        row.measures.all().delete()
        for m in rule.extra_measures:
            TariffMeasure.objects.create(
                rule=row, name=m.name, origin_countries=",".join(m.origin_countries),
                pct=m.pct, start=m.start, end=m.end, stacks=m.stacks,
                not_stacked_on=";".join(m.not_stacked_on), condition=m.condition,
                source=m.source, coverage_confirmed=m.coverage_confirmed,
            )  # fmt: skip
    for country, rule in lc.CUSTOMS_VALUE_BASIS.items():
        CustomsValuation.objects.update_or_create(
            destination=country,
            defaults={
                "basis": rule.basis, "landing_charge_pct": rule.landing_charge_pct,
                "vat_base_includes_inland_freight": rule.vat_base_includes_inland_freight,
                "source": rule.source,
            },
        )  # fmt: skip
    return created, updated


FX_CSV_COLUMNS = ("from_currency", "to_currency", "rate", "as_of", "source")


@dataclass
class FxImportResult:
    created: int = 0
    updated: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)


def fx_rates_import(*, text: str) -> FxImportResult:
    """Import FX rates from CSV (columns from_currency,to_currency,rate,as_of[,source]).

    Every row is checked first; one bad row saves nothing and each problem is reported with
    its line number. A row for an existing (pair, date) updates its rate.
    """
    result = FxImportResult()
    reader = csv.DictReader(io.StringIO(text))
    headers = [h.strip() for h in (reader.fieldnames or []) if h]
    missing = [h for h in FX_CSV_COLUMNS[:4] if h not in headers]
    if missing:
        result.errors.append((1, f"missing column(s): {', '.join(missing)}"))
        return result
    rows, seen = [], {}
    for row in reader:
        line = reader.line_num
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items() if k}
        problems = []
        src, dst = row["from_currency"].upper(), row["to_currency"].upper()
        for code in (src, dst):
            try:
                validate_currency(code)
            except Exception:
                problems.append(f"unknown currency {code!r}")
        if src == dst and src:
            problems.append("the two currencies are the same")
        try:
            rate = Decimal(row["rate"])
            if not rate.is_finite() or rate <= 0:
                problems.append("rate must be a number above zero")
            elif rate >= 10**10:
                problems.append("rate must be below 10,000,000,000 (1 unit in another currency)")
        except InvalidOperation:
            problems.append(f"rate {row['rate']!r} is not a number")
            rate = None
        try:
            as_of = date.fromisoformat(row["as_of"])
            if as_of > timezone.localdate():
                problems.append(f"date {as_of} is in the future")
            elif as_of < DATE_MIN:
                problems.append(f"date {as_of}: {DATE_MESSAGE}")
        except ValueError:
            problems.append(f"date {row['as_of']!r} is not YYYY-MM-DD")
            as_of = None
        key = (src, dst, as_of)
        if not problems and key in seen:
            problems.append(f"duplicates line {seen[key]}")
        seen[key] = line
        if problems:
            result.errors.append((line, "; ".join(problems)))
        else:
            rows.append((src, dst, rate, as_of, row.get("source", "")[:300]))
    if not rows and not result.errors:
        result.errors.append((2, "the file has a header but no rows"))
    if result.errors:
        return result
    with transaction.atomic():
        for src, dst, rate, as_of, source in rows:
            _, created = FxRate.objects.update_or_create(
                from_currency=src, to_currency=dst, as_of=as_of,
                defaults={"rate": rate, "source": source},
            )  # fmt: skip
            result.created += created
            result.updated += not created
    return result
