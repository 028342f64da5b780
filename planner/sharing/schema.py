"""The revision snapshot's schema, defined once: what a published revision holds.

:func:`planner.sharing.snapshot.plan_snapshot` builds a JSON-safe dict; publishing validates
it against :class:`Snapshot` (:func:`validate`) before storing it, and every reader — the
client's share page, the PDFs (``planner.pdf.context``) and the revision comparison
(``planner.sharing.compare``) — reads the typed object :func:`load` returns instead of the
dict with ``.get()`` defaults.

Stored revisions are immutable, so old snapshots are read through :data:`MIGRATIONS`: each
step turns a dict of version ``n`` into version ``n + 1`` (on read only; the stored JSON and
its hash never change). Version history:

1. The first published form.
2. ``open_items`` (results that were not current when published "with open items"); an
   unavailable section may carry the expected domain error as ``problem``/``problem_kind``
   beside its fixed ``reason``.
3. The TCO section's amounts are named ``…_amount`` (``npv_amount``, ``cost_per_request_amount``,
   ``input_amount_per_million_tokens``, the tornado's ``low_value_amount``, the Monte Carlo's
   ``owned_p50_amount`` …) instead of ``…_usd``: they are in the section's ``currency`` (the
   plan's), which was USD only for runs made before amounts were converted.

Sections keep fields this schema does not name (``extra="allow"``), so a reader never loses
data a newer builder added; every field a reader relies on is named and typed here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
)

from planner.facility.tco_results import upgrade_tco_section
from planner.sharing.models import SNAPSHOT_SCHEMA_VERSION

__all__ = ["SNAPSHOT_SCHEMA_VERSION", "Snapshot", "SnapshotInvalid", "load", "validate"]


class SnapshotInvalid(ValueError):
    """A snapshot that does not match the schema; the message names the fields."""


def _iso_date(value: str | None) -> str | None:
    if value:
        date.fromisoformat(value[:10])  # raises ValueError: pydantic reports the field
    return value


# An ISO date kept as its text (the share page and documents print it as published).
IsoDate = Annotated[str | None, AfterValidator(_iso_date)]


class Part(BaseModel):
    """A section or row of the snapshot (unknown fields are kept, never dropped)."""

    model_config = ConfigDict(extra="allow", protected_namespaces=(), frozen=True)


class Money(Part):
    amount: Decimal
    currency: str


class Section(Part):
    """A part of the plan that may be unavailable; ``reason`` says why in fixed words."""

    available: bool = True
    reason: str | None = ""
    problem: str = ""  # the expected domain error's own sentence, when one was the cause
    problem_kind: str = ""


# --- Plan and workloads -----------------------------------------------------------------------


class Organisation(Part):
    name: str
    slug: str = ""


class Client(Part):
    name: str
    country: str = ""
    contact_name: str = ""
    contact_email: str = ""
    vat_recovery: str = "full"  # revisions before the setting: VAT taken as fully recovered
    vat_recovery_pct: Decimal = Decimal(100)
    vat_treatment: str = ""


class PlanInfo(Part):
    id: int
    name: str
    currency: str
    target_go_live: IsoDate = None
    notes: str = ""
    client: Client


class Chosen(Part):
    accelerator_slug: str = ""
    accelerator_name: str
    server_name: str = ""
    precision: str = ""
    tensor_parallel: int | None = None
    serving: str = "aggregated"
    prefill_tensor_parallel: int | None = None
    prefill_replicas: int | None = None
    replicas: int | None = None
    accelerators: int | None = None
    servers: int | None = None
    chosen_at: str | None = None
    summary: dict[str, Any] = Field(default_factory=dict)


class WorkloadSnap(Part):
    id: int | None = None
    name: str
    kind: str = ""
    kind_label: str = ""
    model_slug: str = ""
    model_name: str = ""
    precision: str = ""
    input_tokens_mean: int | None = None
    output_tokens_mean: int | None = None
    percentile: int | None = None
    ttft_ms: int | None = None
    tpot_ms: int | None = None
    e2e_s: int | None = None
    peak_concurrency: int | None = None
    peak_requests_per_s: float | None = None
    headroom_pct: int | None = None
    n_plus_one: bool | None = None
    chosen: Chosen | None = None
    memory: dict[str, Any] | None = None
    autoscaling: dict[str, Any] | None = None
    replicas_by_hour: list[int] = Field(default_factory=list)


# --- Facility, placement, TCO ------------------------------------------------------------------


class Check(Part):
    title: str
    status: str
    reason: str | None = ""


class Site(Part):
    name: str
    status: str = ""
    power_ready_date: IsoDate = None
    racks_needed: int | None = None
    deployed_servers: int = 0  # servers the pooled deployment puts here (0: before v2.1 too)
    checks: list[Check] = Field(default_factory=list)


class Sites(Section):
    sites: list[Site] = Field(default_factory=list)


class Placement(Section):
    chosen_kind: str | None = ""
    chosen_key: str | None = ""
    chosen_label: str | None = ""


class WorkloadCost(Part):
    """One workload's own unit costs in an option (runs before them have none), in the TCO
    section's ``currency``."""

    key: str = ""
    name: str = ""
    cost_per_request_amount: float | None = None
    input_amount_per_million_tokens: float | None = None
    output_amount_per_million_tokens: float | None = None


class TcoOption(Part):
    """One option of the TCO run; every amount in the TCO section's ``currency``."""

    key: str
    label: str
    kind: str = ""
    npv_amount: Decimal | None = None
    net_cost_amount: Decimal | None = None
    terminal_value_amount: Decimal | None = None
    cost_per_request_amount: float | None = None
    cost_per_million_output_tokens_amount: float | None = None
    input_amount_per_million_tokens: float | None = None
    output_amount_per_million_tokens: float | None = None
    cumulative_amount: list[float | None] = Field(default_factory=list)
    monthly_amount: list[float | None] = Field(default_factory=list)
    lines_amount: dict[str, list[float | None]] = Field(default_factory=dict)
    # None in a section built from a TCO run stored before per-workload costs: none known
    workloads: Annotated[list[WorkloadCost], BeforeValidator(lambda v: v or [])] = Field(
        default_factory=list
    )

    def workload_cost(self, workload_id: object) -> WorkloadCost | None:
        """The workload's own costs in this option (by its id), None when the run has none."""
        return next((w for w in self.workloads if w.key == str(workload_id)), None)


class TornadoBar(Part):
    """NPV saved by owning at a driver's low and high end, in the section's ``currency``."""

    driver: str
    low_value_amount: float
    high_value_amount: float
    base_value_amount: float


class Tco(Section):
    stale: bool = False
    currency: str = "USD"
    months: list[int | str] = Field(default_factory=list)
    cheapest: str | None = None
    # The cloud option break-even months are counted against (older revisions: none named).
    reference: str | None = None
    options: list[TcoOption] = Field(default_factory=list)
    tornado: list[TornadoBar] = Field(default_factory=list)
    monte_carlo: dict[str, Any] = Field(default_factory=dict)

    @property
    def cheapest_option(self) -> TcoOption | None:
        if not self.available:
            return None
        return next((o for o in self.options if o.key == self.cheapest), None)

    @property
    def reference_option(self) -> TcoOption | None:
        if not self.available:
            return None
        return next((o for o in self.options if o.key == self.reference), None)


# --- Sourcing ---------------------------------------------------------------------------------


class MeasureToConfirm(Part):
    """A conditional duty left out of the line's landed cost, with its exposure."""

    name: str
    pct: Decimal
    condition: str = ""
    exposure: Money


class MeasureDecided(Part):
    """A conditional duty the consultant decided for the plan: charged (applies) or 0 % (does
    not apply, with the reason, e.g. the end-use certificate reference)."""

    name: str
    pct: Decimal
    condition: str = ""
    applies: bool
    reason: str = ""
    duty: Money


class BomLine(Part):
    description: str
    category: str = ""
    quantity: int
    priced: bool | None = None  # None: an older snapshot without the flag
    quantity_ordered: int | None = None
    supplier: str = ""
    origin_country: str = ""
    incoterm: str = ""
    lead_time_days: int | None = None
    problem: str | None = ""
    unit_price: Money | None = None
    goods_original: Money | None = None
    goods: Money | None = None
    freight: Money | None = None
    insurance: Money | None = None
    brokerage: Money | None = None
    duty: Money | None = None
    vat: Money | None = None
    landed_net: Money | None = None
    vat_not_recoverable: Money | None = None  # inside landed_net (the client's VAT cost)
    measures_to_confirm: list[MeasureToConfirm] = Field(default_factory=list)
    measures_decided: list[MeasureDecided] = Field(default_factory=list)
    site: str = ""  # the site the units go to ("" = plan-wide; revisions before sites: "")
    destination: str = ""  # the country the line is landed into

    @property
    def is_priced(self) -> bool:
        """The line has a landed cost (older snapshots lack the ``priced`` flag)."""
        flag = self.priced if self.priced is not None else self.landed_net is not None
        return bool(flag) and bool(self.landed_net)


class BomSite(Part):
    """One site's part of the BOM and its landed cost (absent in revisions before sites)."""

    site: str
    destination: str = ""
    servers: int = 0
    racks: int = 0
    complete: bool = False
    unpriced_lines: int = 0
    total_net: Money | None = None
    total_gross: Money | None = None
    vat_recoverable: Money | None = None
    reverse_charge_vat: Money | None = None


class CurrencyTotal(Part):
    currency: str
    amount: Decimal


class Bom(Section):
    currency: str = ""
    as_of: IsoDate = None
    destination: str = ""
    complete: bool = False
    unpriced_lines: int = 0
    problems: list[str] = Field(default_factory=list)
    lines: list[BomLine] = Field(default_factory=list)
    totals_by_currency: list[CurrencyTotal] = Field(default_factory=list)
    totals: dict[str, Money] = Field(default_factory=dict)
    total_net: Money | None = None
    total_gross: Money | None = None
    vat_not_recoverable: Money | None = None
    vat_recovery_pct: Decimal = Decimal(100)
    exposure_to_confirm: Money | None = None
    measures_to_confirm: int = 0
    offers_valid_until: IsoDate = None
    sites: list[BomSite] = Field(default_factory=list)
    # what the BOM buys (the chosen option's hardware); older revisions: hardware, unsaid
    option_text: str = ""
    buys_hardware: bool = True

    @property
    def unpriced_count(self) -> int:
        """How many lines the totals leave out (counted again for older snapshots)."""
        if not self.available:
            return 0
        return max(sum(1 for row in self.lines if not row.is_priced), self.unpriced_lines)


class Task(Part):
    name: str
    start: IsoDate
    finish: IsoDate
    critical: bool = False
    site: str = ""  # the site of a multi-site plan's task ("" = one site or all)
    key: str = ""
    kind: str = ""  # lead_time, transit, customs, install, burn_in, power_ready, go_live
    slack_days: int = 0


class TimelineSite(Part):
    """One site's power date, installation and ready date (plans with several sites)."""

    site: str
    country: str = ""
    power_ready: IsoDate = None
    power_source: str = ""
    installed: IsoDate = None
    ready: IsoDate = None
    critical: bool = False


class Slip(Part):
    name: str
    slip_days: int
    go_live_delay_days: int


class Timeline(Section):
    power_ready: IsoDate = None
    power_ready_note: str = ""
    target_go_live: IsoDate = None
    go_live: IsoDate = None
    baseline_go_live: IsoDate = None
    late_against_target_days: int | None = None
    tasks: list[Task] = Field(default_factory=list)
    slips: list[Slip] = Field(default_factory=list)
    sites: list[TimelineSite] = Field(default_factory=list)


class Orders(Section):
    orders: list[dict[str, Any]] = Field(default_factory=list)


# --- Checklist, quote, open items ------------------------------------------------------------


class SignOff(Part):
    name: str
    date: IsoDate = None
    note: str = ""


class ChecklistItem(Part):
    key: str
    title: str
    status: str
    status_label: str
    evidence: list[str] = Field(default_factory=list)
    failing: list[str] = Field(default_factory=list)
    manual_part: str = ""
    sign_off: SignOff | None = None


class SellLine(Part):
    description: str
    quantity: int
    category: str = ""
    markup_pct: Decimal | None = None
    markup_source: str = ""
    cost: Decimal | None = None
    unit_sell: Decimal | None = None
    sell: Decimal | None = None


class Fee(Part):
    description: str
    quantity: Decimal
    unit: str = ""
    unit_price: Decimal
    amount: Decimal


class PaymentDue(Part):
    pct: Decimal
    when: str
    amount: Decimal | None = None  # None: the total is not complete (a line not priced)


class CommercialTerms(Part):
    """The quote's one set of commercial terms (``sourcing.quote.commercial_terms``)."""

    payment: list[PaymentDue] = Field(default_factory=list)
    payment_due_days: int | None = None
    delivery: str = ""
    warranty: str = ""
    validity_days: int | None = None


class Sell(Section):
    """The quote's sell side (``sourcing.quote.quote_sell``): markups, fees, margin, and the
    commercial terms (``payment_terms``: the free text of revisions published before them)."""

    currency: str = ""
    markup_pct: Decimal | None = None
    payment_terms: str = ""
    validity_days: int | None = None
    commercial_terms: CommercialTerms | None = None
    lines: list[SellLine] = Field(default_factory=list)
    fees: list[Fee] = Field(default_factory=list)
    goods_sell: Decimal = Decimal(0)
    fees_total: Decimal = Decimal(0)
    total_sell: Decimal = Decimal(0)
    goods_cost: Decimal | None = None
    margin: Decimal | None = None
    unpriced_lines: int = 0
    vat_not_recoverable: Decimal = Decimal(0)  # passed on at cost, no markup
    vat_recovery_pct: Decimal = Decimal(100)
    vat_treatment: str = ""
    total_to_client: Decimal | None = None  # total_sell + vat_not_recoverable

    @property
    def client_total(self) -> Decimal:
        """What the client pays for the quote, VAT it cannot recover included."""
        return self.total_sell if self.total_to_client is None else self.total_to_client

    @classmethod
    def at_landed_cost(cls, bom: Bom) -> Sell:
        """Revisions published before quotes had markups: sold at landed cost, no fees."""
        lines = [
            SellLine(description=r.description, quantity=r.quantity_ordered or r.quantity,
                     sell=r.landed_net.amount if r.is_priced else None)
            for r in bom.lines
        ]  # fmt: skip
        total = sum((x.sell for x in lines if x.sell is not None), Decimal(0))
        return cls(available=bom.available, lines=lines, goods_sell=total, total_sell=total,
                   unpriced_lines=bom.unpriced_count)  # fmt: skip


class Quote(Part):
    number: str = ""
    date: IsoDate = None
    valid_until: IsoDate = None
    terms: list[str] = Field(default_factory=list)
    sell: Sell | None = None


class Operations(Section):
    """The operations & security answers (``planner.models.OperationsPlan.answers``)."""

    answers: list[dict[str, Any]] = Field(default_factory=list)
    notes: str = ""


class OpenItem(Part):
    """A result that was not current when the revision was published with open items."""

    kind: str
    label: str
    state: Literal["stale", "failed", "missing"]
    reason: str = ""


def _unavailable() -> dict[str, Any]:
    return {"available": False, "reason": "Not in this revision."}


class DeploymentSite(Part):
    name: str
    servers: int = 0
    racks: int | None = None
    it_load_kw: float = 0.0


class Deployment(Section):
    """The pooled deployment's totals, as the consultant's pages show them
    (``planner.facility.services.deployment_summary``); absent in older revisions."""

    servers: int = 0
    accelerators_used: int = 0
    accelerators_installed: int = 0
    it_load_kw: float = 0.0
    racks: int | None = None
    sites: list[DeploymentSite] = Field(default_factory=list)


class Snapshot(Part):
    """A published revision (the current schema version)."""

    schema_version: int = SNAPSHOT_SCHEMA_VERSION
    revision_number: int | None = None
    generated_at: str = ""
    organisation: Organisation
    plan: PlanInfo
    workloads: list[WorkloadSnap] = Field(default_factory=list)
    sites: Sites = Field(default_factory=lambda: Sites(**_unavailable()))
    placement: Placement = Field(default_factory=lambda: Placement(**_unavailable()))
    tco: Tco = Field(default_factory=lambda: Tco(**_unavailable()))
    bom: Bom = Field(default_factory=lambda: Bom(**_unavailable()))
    timeline: Timeline = Field(default_factory=lambda: Timeline(**_unavailable()))
    purchase_orders: Orders = Field(default_factory=lambda: Orders(**_unavailable()))
    deployment: Deployment = Field(default_factory=lambda: Deployment(available=False, reason=""))
    # Older revisions lack the section: unavailable with no reason ("not filled in yet").
    operations: Operations = Field(default_factory=lambda: Operations(available=False, reason=""))
    sign_offs: dict[str, SignOff] = Field(default_factory=dict)
    quote: Quote = Field(default_factory=Quote)
    checklist: list[ChecklistItem] = Field(default_factory=list)
    open_items: list[OpenItem] = Field(default_factory=list)
    sources: list[dict[str, Any]] = Field(default_factory=list)  # the client copy's appendix


# --- Versions ---------------------------------------------------------------------------------


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "schema_version": 2, "open_items": data.get("open_items", [])}


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """The TCO section's ``…_usd`` amounts (in its ``currency``) under their ``…_amount``
    names: the same renaming as a stored TCO run's (:mod:`planner.facility.tco_results`)."""
    tco = data.get("tco")
    upgraded = upgrade_tco_section(tco) if isinstance(tco, dict) else tco
    return {**data, "schema_version": 3, "tco": upgraded}


# MIGRATIONS[n] turns a version-n dict into version n + 1 (read time only).
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2, 2: _v2_to_v3}


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """The dict brought to the current version through :data:`MIGRATIONS`."""
    version = data.get("schema_version", 1)
    while version < SNAPSHOT_SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version = data["schema_version"]
    if version != SNAPSHOT_SCHEMA_VERSION:
        raise SnapshotInvalid(f"Unknown snapshot schema version {version}.")
    return data


def _invalid(exc: ValidationError) -> SnapshotInvalid:
    where = "; ".join(
        ".".join(str(p) for p in error["loc"]) + f": {error['msg']}" for error in exc.errors()[:5]
    )
    return SnapshotInvalid(f"The snapshot does not match its schema ({where}).")


def load(data: dict[str, Any] | Snapshot) -> Snapshot:
    """The typed snapshot of a stored (any version) or freshly built dict.

    Raises:
        SnapshotInvalid: It does not match the schema.
    """
    if isinstance(data, Snapshot):
        return data
    try:
        return Snapshot.model_validate(upgrade(data))
    except ValidationError as exc:
        raise _invalid(exc) from exc


def validate(data: dict[str, Any]) -> dict[str, Any]:
    """Check a freshly built snapshot (current version) against the schema; returns it as is.

    Raises:
        SnapshotInvalid: It does not match the schema, or is not of the current version.
    """
    if data.get("schema_version") != SNAPSHOT_SCHEMA_VERSION:
        raise SnapshotInvalid(f"A new snapshot must be of version {SNAPSHOT_SCHEMA_VERSION}.")
    load(data)
    return data
