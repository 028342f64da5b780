"""Portable plan files: one versioned JSON document with everything needed to rebuild a plan in
another organisation or installation.

The document holds the client, the plan, its workloads (with their choices, residency
rules and hand-set splits over the sites, by site name), sites (with power upgrades), TCO and
placement settings (with the placement choice), sourcing settings, the quote's markups,
terms and fees, the decisions on conditional duties (end use), the BOM lines (generated ones with what they were generated as, manual ones,
hand-set quantities), the suppliers' offers the plan's BOM uses, with their price breaks, and
the purchase orders with their lines (supplier by name, BOM line by part key, offer by the
file's ref). Version 1 files (none of the splits, quote settings or purchase orders) still
import. Catalog rows
(models, accelerators, servers, parts) are named by slug; nothing carries a database id, so
exporting an imported plan gives the same document.

Importing checks every value with the models' own validation (the messages the pages
show) and saves in one transaction: a file with any error creates nothing. A file is read
defensively: size, nesting depth, row counts, field names and value types are checked
before anything is looked up, so a hostile file gets a clear error, never a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils import timezone

from catalog.models import Accelerator, ModelArchitecture, Part, ServerPlatform
from planner import freshness
from planner.engine.errors import EngineInputError
from planner.engine.limits import finite_or_none
from planner.facility.models import (
    PlacementDecision,
    PowerUpgrade,
    ResidencyRule,
    Site,
    TcoSettings,
    WorkloadSiteSplit,
)
from planner.models import Client, Organisation, Plan, Workload
from sourcing import services as ssvc
from sourcing.models import (
    BomLine,
    LineOrigin,
    MeasureDecision,
    Offer,
    OfferPriceBreak,
    PurchaseOrder,
    PurchaseOrderLine,
    QuoteFee,
    QuoteSettings,
    SourcingSettings,
    Supplier,
)
from sourcing.selectors import offers_for_line

FORMAT = "inference-planner/plan"
# 2: site splits, quote settings and fees, placement by site name, orders;
# 3: decisions on conditional duties (end use)
VERSION = 3
READABLE_VERSIONS = (1, 2, 3)  # an older file has none of what came after it
SITE_REF = "site:"  # a placement option of a site, by the site's name (version 2)
MAX_BYTES = 5_000_000
MAX_DEPTH = 12
MAX_ROWS = {
    "workloads": 200,
    "sites": 200,
    "upgrades": 100,
    "bom_lines": 2_000,
    "suppliers": 500,
    "offers": 2_000,
    "price_breaks": 50,
    "quote_fees": 200,
    "measure_decisions": 200,
    "purchase_orders": 500,
    "order_lines": 2_000,
}
# Never in a file: ids, row versions, timestamps of the row itself, who made it.
SKIPPED = {"id", "version", "created_at", "updated_at", "created_by", "decided_by"}
# Sourcing settings that describe this installation's rows, not the plan: the BOM's inputs
# hash names the sites by database id, so an import recomputes the BOM state instead.
SOURCING_LOCAL = ("bom_generated_at", "bom_inputs_hash", "checked_at", "checked_go_live")
IMPORTED_SUFFIX = " (imported {on})"
CATALOG = {
    "model": ModelArchitecture,
    "chosen_accelerator": Accelerator,
    "chosen_server": ServerPlatform,
    "accelerator": Accelerator,
    "server": ServerPlatform,
    "part": Part,
}
SCALARS = (str, int, float, bool, type(None))


class PortableError(Exception):
    """The file cannot be imported: ``errors`` maps a place in it to its messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


# --- Export ------------------------------------------------------------------------------------


def _fields(model: type[models.Model], parent: str | None, extra_skip=()) -> list[models.Field]:
    skip = SKIPPED | {parent} | set(extra_skip)
    return [
        f
        for f in model._meta.concrete_fields
        if not f.primary_key and f.name not in skip and (not f.is_relation or f.name in CATALOG)
    ]


def _value(obj: models.Model, f: models.Field) -> Any:
    if f.is_relation:
        related = getattr(obj, f.name)
        return related.slug if related is not None else None
    value = f.value_from_object(obj)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def _row(obj: models.Model, parent: str | None, extra_skip=()) -> dict[str, Any]:
    return {f.name: _value(obj, f) for f in _fields(type(obj), parent, extra_skip)}


def _used_offers(plan: Plan) -> list[Offer]:
    """The organisation's offers for the plan's BOM lines (what its landed cost can use)."""
    offers = list(
        Offer.objects.filter(supplier__organisation=plan.organisation)
        .select_related("supplier", "part", "server", "accelerator")
        .prefetch_related("price_breaks")
        .order_by("supplier__name", "supplier_id", "pk")
    )
    used: dict[int, Offer] = {}
    for line in BomLine.objects.filter(plan=plan):
        for offer in offers_for_line(offers, line):
            used[offer.pk] = offer
        if line.pinned_offer_id and line.pinned_offer_id not in used:
            pinned = next((o for o in offers if o.pk == line.pinned_offer_id), None)
            if pinned is not None:
                used[pinned.pk] = pinned
    ordered = PurchaseOrderLine.objects.filter(order__plan=plan).values_list("offer_id", flat=True)
    used |= {o.pk: o for o in offers if o.pk in set(ordered)}
    return [o for o in offers if o.pk in used]


def plan_export(plan: Plan) -> dict[str, Any]:
    """The plan as a portable document (see the module's docstring)."""
    offers = _used_offers(plan)
    refs = {offer.pk: f"offer-{n}" for n, offer in enumerate(offers, start=1)}
    suppliers: dict[int, dict[str, Any]] = {}
    for offer in offers:
        supplier = suppliers.setdefault(
            offer.supplier_id,
            _row(offer.supplier, "organisation") | {"offers": []},
        )
        supplier["offers"].append(
            {"ref": refs[offer.pk]}
            | _row(offer, "supplier")
            | {"price_breaks": [_row(b, "offer") for b in offer.price_breaks.order_by("min_qty")]}
        )
    site_names = {str(site.pk): site.name for site in plan.sites.all()}
    for order in PurchaseOrder.objects.filter(plan=plan).select_related("supplier"):
        # An order's supplier is in the file even when none of its offers is.
        suppliers.setdefault(
            order.supplier_id, _row(order.supplier, "organisation") | {"offers": []}
        )
    workloads = []
    for workload in plan.workloads.select_related(
        "model", "chosen_accelerator", "chosen_server"
    ).order_by("pk"):
        rule = ResidencyRule.objects.filter(workload=workload).first()
        workloads.append(
            _row(workload, "plan")
            | {"residency": rule.allowed if rule is not None else None}
            | {"site_split": _split_export(workload, site_names)}
        )
    sites = [
        _row(site, "plan")
        | {"upgrades": [_row(u, "site") for u in site.upgrades.order_by("ready_date", "pk")]}
        for site in plan.sites.order_by("pk")
    ]
    lines = (
        BomLine.objects.filter(plan=plan)
        .select_related("part", "server", "accelerator")
        .order_by("position", "pk")
    )
    bom_lines = [
        _row(line, "plan", ["pinned_offer"])
        | {"pinned_offer": refs.get(line.pinned_offer_id)}
        | {"site": line.site.name if line.site_id else None}  # by name: sites are the file's
        for line in lines.select_related("site")
    ]

    def single(model, extra_skip=()):
        obj = model.objects.filter(plan=plan).first()
        return _row(obj, "plan", extra_skip) if obj is not None else None

    return {
        "format": FORMAT,
        "version": VERSION,
        "client": _row(plan.client, "organisation"),
        "plan": _row(plan, "organisation", ["client"]),
        "workloads": workloads,
        "sites": sites,
        "tco_settings": single(TcoSettings),
        "placement_decision": _site_keys(
            single(PlacementDecision, ["decided_at"]),
            {f"site-{pk}": f"{SITE_REF}{name}" for pk, name in site_names.items()},
        ),
        "sourcing_settings": single(SourcingSettings, SOURCING_LOCAL),
        "quote_settings": single(QuoteSettings),
        "quote_fees": [_row(fee, "plan") for fee in QuoteFee.objects.filter(plan=plan)],
        "measure_decisions": [
            _row(d, "plan") for d in MeasureDecision.objects.filter(plan=plan).order_by("measure")
        ],
        "bom_lines": bom_lines,
        "suppliers": list(suppliers.values()),
        "purchase_orders": _orders_export(plan, refs),
    }


def _site_keys(row: Any, mapping: dict[str, str]) -> Any:
    """A placement decision with its options' site keys translated: ``site-<id>`` in the
    database, ``site:<name>`` in a file (ids do not travel)."""
    if not isinstance(row, dict):
        return row
    row = dict(row)
    if isinstance(row.get("chosen_key"), str):
        row["chosen_key"] = mapping.get(row["chosen_key"], row["chosen_key"])
    scores = row.get("scores")
    if isinstance(scores, dict) and isinstance(scores.get("options"), list):
        options = [
            o | {"key": mapping.get(o["key"], o["key"])}
            if isinstance(o, dict) and isinstance(o.get("key"), str)
            else o
            for o in scores["options"]
        ]
        row["scores"] = scores | {"options": options}
    return row


def _legacy_cost_target(data: Any) -> Any:
    """Files written before targets moved to the plan's currency hold
    ``cost_per_request_target_usd``: read it as a target in USD (pages convert it into the
    plan's currency at the plan's dated rate)."""
    if not isinstance(data, dict) or "cost_per_request_target_usd" not in data:
        return data
    data = dict(data)
    target = data.pop("cost_per_request_target_usd")
    if "cost_per_request_target" not in data:
        data["cost_per_request_target"] = target
        data["cost_per_request_target_currency"] = "USD" if target is not None else ""
    return data


def _split_export(workload: Workload, site_names: dict[str, str]) -> dict[str, int] | None:
    """The hand-set split by site name (null: the users' regions decide)."""
    split = WorkloadSiteSplit.objects.filter(workload=workload).first()
    if split is None or not split.shares:
        return None
    return {site_names[k]: v for k, v in split.shares.items() if k in site_names}


def _orders_export(plan: Plan, refs: dict[int, str]) -> list[dict[str, Any]]:
    """The plan's purchase orders: supplier by name, lines by BOM part key (and the line's site
    by name: a part bought for two sites has a line per site) and offer ref."""
    orders = PurchaseOrder.objects.filter(plan=plan).select_related("supplier")
    return [
        _row(order, "plan")
        | {
            "supplier": order.supplier.name,
            "lines": [
                _row(line, "order")
                | {
                    "bom_line": line.bom_line.part_key if line.bom_line else None,
                    "bom_line_site": (
                        line.bom_line.site.name if line.bom_line and line.bom_line.site_id else None
                    ),
                    "offer": refs[line.offer_id],
                }
                for line in order.lines.select_related("bom_line__site").order_by("pk")
            ],
        }
        for order in orders.order_by("reference", "pk")
    ]


def plan_export_json(plan: Plan) -> str:
    return json.dumps(plan_export(plan), indent=2, ensure_ascii=False, sort_keys=False)


# --- Import ------------------------------------------------------------------------------------


def _depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return level
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def plan_document_parse(raw: bytes | str) -> dict[str, Any]:
    """The document in a file's bytes, or :class:`PortableError` saying what is wrong."""
    if len(raw) > MAX_BYTES:
        raise PortableError({"file": [f"The file is larger than {MAX_BYTES // 1_000_000} MB."]})
    try:
        document = json.loads(raw)
    except RecursionError:
        raise PortableError({"file": ["The file is nested too deeply."]}) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PortableError({"file": [f"The file is not JSON ({exc})."]}) from None
    return plan_document_check(document)


def plan_document_check(document: Any) -> dict[str, Any]:
    """Shape checks before anything is looked up: format, version, depth, row counts."""
    if not isinstance(document, dict):
        raise PortableError({"file": ["A plan file is a JSON object."]})
    if _depth(document) > MAX_DEPTH:
        raise PortableError({"file": [f"The file is nested deeper than {MAX_DEPTH} levels."]})
    if document.get("format") != FORMAT:
        raise PortableError({"format": [f"Not a plan file (its format must be '{FORMAT}')."]})
    version = document.get("version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        *first, last = (str(v) for v in READABLE_VERSIONS)
        readable = f"{', '.join(first)} or {last}" if first else last
        raise PortableError(
            {"version": [f"This installation reads version {readable} plan files."]}
        )
    known = {
        "format", "version", "client", "plan", "workloads", "sites", "tco_settings",
        "placement_decision", "sourcing_settings", "bom_lines", "suppliers",
        "quote_settings", "quote_fees", "purchase_orders",  # orders from version 2 on
        "measure_decisions",  # conditional duties decided for the plan (absent before)
    }  # fmt: skip
    unknown = sorted(set(document) - known)
    if unknown:
        raise PortableError({"file": [f"Unknown sections: {', '.join(unknown)}."]})
    too_long = {
        section: [f"At most {MAX_ROWS[section]} rows ({len(rows)} given)."]
        for section, rows in document.items()
        if section in MAX_ROWS and isinstance(rows, list) and len(rows) > MAX_ROWS[section]
    }
    if too_long:
        raise PortableError(too_long)
    return document


@dataclass
class _Importer:
    organisation: Organisation
    user: Any
    errors: dict[str, list[str]] = field(default_factory=dict)
    offers: dict[str, Offer] = field(default_factory=dict)
    suppliers: dict[str, Supplier] = field(default_factory=dict)  # by lower-cased name

    def error(self, where: str, message: str) -> None:
        self.errors.setdefault(where, []).append(message)

    def rows(self, where: str, value: Any, limit_key: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(where, "Must be a list.")
            return []
        limit = MAX_ROWS[limit_key]
        if len(value) > limit:
            self.error(where, f"At most {limit} rows ({len(value)} given).")
            return []
        return value

    def build(
        self,
        where: str,
        model: type[models.Model],
        data: Any,
        parent: str | None,
        *,
        extra: tuple[str, ...] = (),
        skip: tuple[str, ...] = (),
        **fixed: Any,
    ) -> models.Model | None:
        """An unsaved, cleaned row from ``data``; records errors and returns None if bad."""
        if not isinstance(data, dict):
            self.error(where, "Must be an object.")
            return None
        fields = {f.name: f for f in _fields(model, parent, skip)}
        unknown = sorted(set(data) - set(fields) - set(extra))
        if unknown:
            self.error(where, f"Unknown fields: {', '.join(unknown)}.")
            return None
        obj = model(**fixed)
        bad = False
        for name, value in data.items():
            if name in extra:
                continue
            f = fields[name]
            here = f"{where}.{name}"
            if name in CATALOG:
                bad |= not self._catalog(obj, f, value, here)
                continue
            if not isinstance(f, models.JSONField) and not isinstance(value, SCALARS):
                self.error(here, "Must be a single value.")
                bad = True
                continue
            try:
                python = f.to_python(value)
            except ValidationError as exc:
                self.error(here, " ".join(exc.messages))
                bad = True
                continue
            if isinstance(python, float) and finite_or_none(python) is None:
                self.error(here, "Must be a finite number.")
                bad = True
                continue
            setattr(obj, f.attname, python)
        if bad:
            return None
        try:
            names = {f.name for f in model._meta.fields}
            unchecked = [n for n in (SKIPPED | {parent} | set(skip)) if n in names]
            obj.full_clean(exclude=unchecked, validate_unique=False)
        except ValidationError as exc:
            for name, messages in exc.message_dict.items():
                key = where if name == "__all__" else f"{where}.{name}"
                for message in messages:
                    self.error(key, message)
            return None
        return obj

    def _catalog(self, obj, f, value, where: str) -> bool:
        if value is None:
            setattr(obj, f.attname, None)
            return True
        model = CATALOG[f.name]
        if not isinstance(value, str) or len(value) > 200 or "\x00" in value:
            self.error(where, "Must be a catalog slug.")
            return False
        found = model.objects.filter(slug=value).first()
        if found is None:
            self.error(where, f"Unknown {model._meta.verbose_name} '{value}' in this catalog.")
            return False
        setattr(obj, f.name, found)
        return True

    def check(self) -> None:
        if self.errors:
            raise PortableError(self.errors)


def plan_import(document: Any, *, organisation: Organisation, user=None) -> Plan:
    """Rebuild the plan of a portable document in ``organisation``; all or nothing.

    The client is the organisation's client of the same name, else a new one; suppliers
    likewise (an offer is added unless the supplier has one for the same item, SKU and
    quote date). Nothing of another organisation is read or written. The plan is named as in
    the file with " (imported YYYY-MM-DD)" (:func:`imported_name`), and its generated BOM lines
    are current only if its inputs generate them now.

    Raises:
        PortableError: Anything wrong with the document (nothing is saved).
    """
    document = plan_document_check(document)
    with transaction.atomic():
        plan = _import(document, _Importer(organisation, user))
    return plan


def _import(document: dict[str, Any], imp: _Importer) -> Plan:
    organisation = imp.organisation
    client_data = document.get("client")
    client = imp.build("client", Client, client_data, "organisation", organisation=organisation)
    imp.check()
    existing = Client.objects.filter(organisation=organisation, name__iexact=client.name).first()
    if existing is not None:
        client = existing
    else:
        client.save()
    plan = imp.build(
        "plan",
        Plan,
        document.get("plan"),
        "organisation",
        skip=("client",),
        organisation=organisation,
        client=client,
    )
    imp.check()
    plan.name = imported_name(plan.name, timezone.localdate())
    plan.created_by = imp.user
    plan.save()

    _import_suppliers(document, imp)
    splits: list[tuple[str, Workload, Any]] = []
    for n, data in enumerate(imp.rows("workloads", document.get("workloads"), "workloads")):
        where = f"workloads[{n}]"
        data = _legacy_cost_target(data)
        workload = imp.build(
            where, Workload, data, "plan", extra=("residency", "site_split"), plan=plan
        )
        if workload is None:
            continue
        if data.get("site_split") is not None:
            splits.append((f"{where}.site_split", workload, data["site_split"]))
        residency = data.get("residency")
        if residency is not None and not isinstance(residency, str):
            imp.error(f"{where}.residency", "Must be text, e.g. 'EU, CH'.")
            continue
        workload.save()
        if residency is not None:
            rule = ResidencyRule(workload=workload, allowed=residency)
            try:
                rule.full_clean()
            except ValidationError as exc:
                imp.error(f"{where}.residency", " ".join(exc.messages))
                continue
            rule.save()
    names: set[str] = set()
    for n, data in enumerate(imp.rows("sites", document.get("sites"), "sites")):
        where = f"sites[{n}]"
        site = imp.build(where, Site, data, "plan", extra=("upgrades",), plan=plan)
        if site is None:
            continue
        if site.name.lower() in names:
            imp.error(f"{where}.name", "This plan already has a site with this name.")
            continue
        names.add(site.name.lower())
        upgrades = [
            imp.build(f"{where}.upgrades[{k}]", PowerUpgrade, u, "site")
            for k, u in enumerate(imp.rows(f"{where}.upgrades", data.get("upgrades"), "upgrades"))
        ]
        if imp.errors:
            continue
        site.save()
        for upgrade in upgrades:
            upgrade.site = site
            upgrade.save()
    if not imp.errors:
        _import_splits(splits, {s.name: s for s in Site.objects.filter(plan=plan)}, imp)
    for key, model, skip in (
        ("tco_settings", TcoSettings, ()),
        ("placement_decision", PlacementDecision, ("decided_at",)),
        ("sourcing_settings", SourcingSettings, SOURCING_LOCAL),
        ("quote_settings", QuoteSettings, ()),
    ):  # fmt: skip
        if document.get(key) is not None:
            data = document[key]
            if key == "placement_decision":
                sites = Site.objects.filter(plan=plan).values_list("pk", "name")
                data = _site_keys(data, {f"{SITE_REF}{name}": f"site-{pk}" for pk, name in sites})
                if isinstance(data, dict) and str(data.get("chosen_key")).startswith(SITE_REF):
                    imp.error(f"{key}.chosen_key", "Must name a site of the file.")
                    continue
            # a file from before commercial terms: its free-text payment terms are not read
            # (the quote keeps the default milestones until the consultant sets them)
            extra = ("payment_terms",) if key == "quote_settings" else ()
            if key == "sourcing_settings":  # files from before the BOM state was recomputed
                extra = ("bom_inputs_hash",)
            row = imp.build(key, model, data, "plan", skip=skip, extra=extra, plan=plan)
            if row is not None and not imp.errors:
                row.save()
    fees = imp.rows("quote_fees", document.get("quote_fees"), "quote_fees")
    for n, data in enumerate(fees):
        fee = imp.build(f"quote_fees[{n}]", QuoteFee, data, "plan", plan=plan)
        if fee is not None and not imp.errors:
            fee.save()
    decided: set[str] = set()
    rows = imp.rows("measure_decisions", document.get("measure_decisions"), "measure_decisions")
    for n, data in enumerate(rows):
        where = f"measure_decisions[{n}]"
        decision = imp.build(where, MeasureDecision, data, "plan", plan=plan)
        if decision is None:
            continue
        if decision.measure in decided:
            imp.error(f"{where}.measure", "Two decisions on the same measure.")
            continue
        decided.add(decision.measure)
        if not imp.errors:
            decision.save()
    part_keys: set[tuple[str, str]] = set()
    site_by_name = {site.name.lower(): site for site in Site.objects.filter(plan=plan)}
    lines = imp.rows("bom_lines", document.get("bom_lines"), "bom_lines")
    for n, data in enumerate(lines):
        where = f"bom_lines[{n}]"
        line = imp.build(
            where, BomLine, data, "plan", extra=("pinned_offer", "site"),
            skip=("pinned_offer", "site"), plan=plan,
        )  # fmt: skip
        if line is None:
            continue
        site_name = data.get("site")
        if site_name is not None:
            site = site_by_name.get(str(site_name).lower()) if isinstance(site_name, str) else None
            if site is None:
                imp.error(f"{where}.site", "Must name a site of the file.")
                continue
            line.site = site
        if (site_name or "", line.part_key) in part_keys:
            imp.error(f"{where}.part_key", "Two lines for the same part at one site.")
            continue
        part_keys.add((site_name or "", line.part_key))
        ref = data.get("pinned_offer")
        if ref is not None:
            if not isinstance(ref, str) or ref not in imp.offers:
                imp.error(f"{where}.pinned_offer", "Must name an offer of the file ('offer-1').")
                continue
            line.pinned_offer = imp.offers[ref]
        if not imp.errors:
            line.save()
    _import_orders(document, imp, plan)
    imp.check()
    _bom_state_recompute(plan)
    return plan


def imported_name(name: str, on: date) -> str:
    """The imported plan's name: the file's with " (imported YYYY-MM-DD)", the file's name
    shortened so that the whole fits the field (it is told apart from the original)."""
    suffix = IMPORTED_SUFFIX.format(on=on.isoformat())
    limit = Plan._meta.get_field("name").max_length - len(suffix)
    return name[:limit].rstrip() + suffix


def _bom_state_recompute(plan: Plan) -> None:
    """The imported BOM's freshness, checked here against the imported inputs: generated lines
    are current only if these inputs generate the same lines and quantities now; otherwise
    stale (or failed, if they cannot be generated), as the original's would be. Only hand-made
    lines: the BOM was never generated."""
    generated = BomLine.objects.filter(plan=plan, generated_quantity__isnull=False).exclude(
        origin=LineOrigin.MANUAL
    )
    if not generated.exists():
        return
    settings = ssvc.sourcing_settings_get(plan=plan)
    settings.bom_generated_at = timezone.now()  # when this installation checked the lines
    try:
        same = not ssvc.bom_pending_changes(plan=plan).changes  # hand-set quantities kept
        settings.bom_inputs_hash = freshness.bom_inputs_hash(plan) if same else ""
    except (ssvc.SourcingError, EngineInputError):
        settings.bom_inputs_hash = ""  # the freshness check says why it cannot be generated
    settings.save(update_fields=["bom_generated_at", "bom_inputs_hash"])


def _import_splits(splits, sites: dict[str, Site], imp: _Importer) -> None:
    """Each workload's hand-set split, from site names to the imported sites' ids."""
    for where, workload, shares in splits:
        if not isinstance(shares, dict) or len(shares) > MAX_ROWS["sites"]:
            imp.error(where, "Must be an object of site names to whole percents.")
            continue
        unknown = [name for name in shares if name not in sites]
        if unknown:
            imp.error(where, f"No site named {', '.join(map(repr, unknown))} in the file.")
            continue
        if not all(type(v) is int and 0 <= v <= 100 for v in shares.values()):
            imp.error(where, "Each site's share is a whole percent, 0 to 100.")
            continue
        split = WorkloadSiteSplit(
            workload=workload, shares={str(sites[k].pk): v for k, v in shares.items()}
        )
        try:
            split.full_clean(exclude=["workload"])
        except ValidationError as exc:
            imp.error(where, " ".join(exc.messages))
            continue
        split.save()


def _import_orders(document: dict[str, Any], imp: _Importer, plan: Plan) -> None:
    """The purchase orders: each names a supplier of the file, its lines a BOM line's part key
    and an offer ref of that supplier in the file."""
    lines_by_key = {
        (line.part_key, line.site.name.lower() if line.site_id else None): line
        for line in BomLine.objects.filter(plan=plan).select_related("site")
    }
    references: set[str] = set()
    total = 0
    orders = imp.rows("purchase_orders", document.get("purchase_orders"), "purchase_orders")
    for n, data in enumerate(orders):
        where = f"purchase_orders[{n}]"
        order = imp.build(
            where,
            PurchaseOrder,
            data,
            "plan",
            extra=("supplier", "lines"),
            skip=("supplier",),
            plan=plan,
        )
        if order is None:
            continue
        name = data.get("supplier")
        supplier = imp.suppliers.get(name.lower()) if isinstance(name, str) else None
        if supplier is None:
            imp.error(f"{where}.supplier", "Must name a supplier of the file.")
            continue
        if order.reference in references:
            imp.error(f"{where}.reference", "Two orders with the same reference.")
            continue
        references.add(order.reference)
        rows = imp.rows(f"{where}.lines", data.get("lines"), "order_lines")
        total += len(rows)
        if total > MAX_ROWS["order_lines"]:
            imp.error(
                "purchase_orders", f"At most {MAX_ROWS['order_lines']} order lines in a file."
            )
            return
        order.supplier = supplier
        lines = []
        for k, line_data in enumerate(rows):
            here = f"{where}.lines[{k}]"
            line = imp.build(
                here,
                PurchaseOrderLine,
                line_data,
                "order",
                extra=("bom_line", "bom_line_site", "offer"),
                skip=("offer",),
            )
            if line is None:
                continue
            key, ref = line_data.get("bom_line"), line_data.get("offer")
            site_name = line_data.get("bom_line_site")
            if site_name is not None and not isinstance(site_name, str):
                imp.error(f"{here}.bom_line_site", "Must be a site name of the file, or null.")
                continue
            line_key = (key, site_name.lower() if site_name else None)
            if key is not None and (not isinstance(key, str) or line_key not in lines_by_key):
                imp.error(
                    f"{here}.bom_line",
                    "Must be the part key of a BOM line of the file (at the named site).",
                )
                continue
            offer = imp.offers.get(ref) if isinstance(ref, str) else None
            if offer is None or offer.supplier_id != supplier.pk:
                imp.error(
                    f"{here}.offer", "Must name an offer of the order's supplier ('offer-1')."
                )
                continue
            line.bom_line, line.offer = lines_by_key.get(line_key), offer
            lines.append(line)
        if imp.errors:
            continue
        order.save()
        for line in lines:
            line.order = order
            line.save()


def _import_suppliers(document: dict[str, Any], imp: _Importer) -> None:
    offer_total = 0
    for n, data in enumerate(imp.rows("suppliers", document.get("suppliers"), "suppliers")):
        where = f"suppliers[{n}]"
        supplier = imp.build(
            where, Supplier, data, "organisation", extra=("offers",), organisation=imp.organisation
        )
        if supplier is None:
            continue
        offers = imp.rows(f"{where}.offers", data.get("offers"), "offers")
        offer_total += len(offers)
        if offer_total > MAX_ROWS["offers"]:
            imp.error("suppliers", f"At most {MAX_ROWS['offers']} offers in a file.")
            return
        existing = Supplier.objects.filter(
            organisation=imp.organisation, name__iexact=supplier.name
        ).first()
        if existing is not None:
            supplier = existing
        elif not imp.errors:
            supplier.save()
        imp.suppliers[supplier.name.lower()] = supplier
        for k, offer_data in enumerate(offers):
            _import_offer(f"{where}.offers[{k}]", offer_data, supplier, imp)


def _import_offer(where: str, data: Any, supplier: Supplier, imp: _Importer) -> None:
    offer = imp.build(
        where, Offer, data, "supplier", extra=("ref", "price_breaks"), supplier=supplier
    )
    if offer is None:
        return
    ref = data.get("ref")
    if not isinstance(ref, str) or not ref or len(ref) > 40 or ref in imp.offers:
        imp.error(f"{where}.ref", "Each offer needs its own short 'ref' (e.g. 'offer-1').")
        return
    breaks = [
        imp.build(f"{where}.price_breaks[{k}]", OfferPriceBreak, b, "offer")
        for k, b in enumerate(
            imp.rows(f"{where}.price_breaks", data.get("price_breaks"), "price_breaks")
        )
    ]
    if imp.errors or supplier.pk is None:
        return
    same = Offer.objects.filter(
        supplier=supplier,
        part=offer.part,
        server=offer.server,
        accelerator=offer.accelerator,
        service=offer.service,
        supplier_sku=offer.supplier_sku,
        quoted_on=offer.quoted_on,
    ).first()
    if same is not None:
        imp.offers[ref] = same
        return
    offer.save()
    for price_break in breaks:
        price_break.offer = offer
        price_break.save()
    imp.offers[ref] = offer
