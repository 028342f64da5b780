"""A plan's sites: list, create, read, edit (PATCH) and delete, through the page's SiteForm.

Planned power upgrades are a list of ``{"ready_date", "added_kw", "note"}``; the form reads
them as its text lines ("+400 kW on 2027-03-01 transformer") and checks each the same way.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any

from django.db import transaction
from ninja import Field, Router, Schema, Status

from planner.api.common import (
    FormErrors,
    InSchema,
    Versioned,
    bound_form,
    op,
    plan_get,
    posted_value,
    require_editor,
    sent_fields,
)
from planner.api.contract import Number
from planner.api.plans import Finite, Id
from planner.engine import limits
from planner.facility import selectors as facility_selectors
from planner.facility import services as facility_services
from planner.facility.forms import SiteForm
from planner.facility.models import Site

router = Router(tags=["sites"])


class UpgradeIn(InSchema):
    ready_date: date
    added_kw: Annotated[Number, Field(ge=0.01, le=limits.SITE_KW.high)]
    note: str = Field("", max_length=200)


class SiteIn(Versioned):
    contract_form = SiteForm
    name: str | None = Field(None, max_length=120)
    kind: str | None = Field(None, max_length=20, description="owned, colocation, cloud_region.")
    region_key: str | None = Field(None, max_length=20)
    latitude: Finite | None = None
    longitude: Finite | None = None
    country: str | None = Field(None, max_length=2)
    racks_available: int | None = None
    usable_ru_per_rack: int | None = None
    site_it_capacity_kw: Finite | None = None
    upgrades: list[UpgradeIn] | None = Field(None, max_length=100)
    power_ready_date: date | None = None
    feeds_per_rack: int | None = None
    voltage_v: Finite | None = None
    phase: int | None = Field(None, description="1 or 3.")
    amperage_a: Finite | None = None
    breaker_derating_pct: Finite | None = None
    power_factor: Finite | None = None
    cooling_method: str | None = Field(None, max_length=20)
    cooling_capacity_per_rack_kw: Finite | None = None
    cooling_capacity_site_kw: Finite | None = None
    ashrae_class: str | None = Field(None, max_length=2)
    pue: Finite | None = None
    delta_t_f: Finite | None = None
    servers_per_rack: int | None = None
    switches_per_rack: int | None = None
    switch_power_kw: Finite | None = None
    pdus_per_rack: int | None = None
    power_usd_per_kwh: Finite | None = None
    facility_usd_per_kw_month: Finite | None = None
    staff_usd_per_month: Finite | None = None
    notes: str | None = Field(None, max_length=20_000)


class UpgradeOut(Schema):
    ready_date: str
    added_kw: float
    note: str


class SiteOut(Schema):
    id: int
    plan_id: int
    version: int
    name: str
    kind: str
    region_key: str
    latitude: float | None
    longitude: float | None
    country: str
    racks_available: int
    usable_ru_per_rack: int
    site_it_capacity_kw: float
    upgrades: list[UpgradeOut]
    power_ready_date: str | None
    feeds_per_rack: int
    voltage_v: float
    phase: int
    amperage_a: float
    breaker_derating_pct: float
    power_factor: float
    cooling_method: str
    cooling_capacity_per_rack_kw: float | None
    cooling_capacity_site_kw: float | None
    ashrae_class: str
    pue: float
    delta_t_f: float
    servers_per_rack: int | None
    switches_per_rack: int
    switch_power_kw: float
    pdus_per_rack: int
    # Entered in USD, as the form says: the TCO computes in USD and converts its results.
    power_usd_per_kwh: float = Field(..., description="Electricity price, USD per kWh.")
    facility_usd_per_kw_month: float = Field(
        ..., description="Space/capacity charge, USD per provisioned IT kW and month."
    )
    staff_usd_per_month: float = Field(..., description="Operations staff, USD per month.")
    notes: str


SITE_FIELDS = [f for f in SiteIn.model_fields if f not in ("version", "upgrades")]


def site_out(site: Site) -> dict[str, Any]:
    out: dict[str, Any] = {"id": site.pk, "plan_id": site.plan_id, "version": site.version}
    for name in SITE_FIELDS:
        value = getattr(site, name)
        if isinstance(value, Decimal):
            value = float(value)
        elif isinstance(value, date):
            value = value.isoformat()
        out[name] = value
    out["upgrades"] = [
        {"ready_date": u.ready_date.isoformat(), "added_kw": float(u.added_kw), "note": u.note}
        for u in site.upgrades.all()
    ]
    return out


def _upgrade_line(upgrade: dict[str, Any]) -> str:
    note = " ".join(str(upgrade.get("note") or "").split())  # one line
    return f"+{upgrade['added_kw']!r} kW on {upgrade['ready_date'].isoformat()} {note}".strip()


def _site_sent(payload: SiteIn) -> dict[str, str]:
    sent = sent_fields(payload)
    data = {name: posted_value(value) for name, value in sent.items() if name != "upgrades"}
    if "upgrades" in sent:
        data["upgrades"] = "\n".join(_upgrade_line(u) for u in sent["upgrades"] or [])
    return data


def _site_write(request, plan, payload: SiteIn, site: Site):
    creating = site.pk is None
    try:
        form = bound_form(
            lambda data=None, *, instance: SiteForm(data, instance=instance, plan=plan),
            sent=_site_sent(payload),
            version=payload.version,
            instance=site,
        )
    except FormErrors as exc:
        return Status(exc.status, {"errors": exc.errors})
    with transaction.atomic():
        saved = facility_services.site_save(
            plan=plan, site=form.save(commit=False), upgrades=form.cleaned_data["upgrades"]
        )
    return Status(201 if creating else 200, site_out(saved))


def site_get(request, plan_id: int, site_id: int) -> tuple[Any, Site]:
    plan = plan_get(request, plan_id)
    return plan, facility_selectors.site_get(plan=plan, site_id=site_id)


@router.get("/plans/{plan_id}/sites", **op({200: list[SiteOut]}, 404), summary="Sites")
def site_list(request, plan_id: Id):
    plan = plan_get(request, plan_id)
    return [site_out(s) for s in facility_selectors.site_list(plan=plan)]


class SiteCreateIn(SiteIn):
    """A new site: the fields without a default are required."""

    contract_create = True


@router.post(
    "/plans/{plan_id}/sites",
    **op({201: SiteOut}, 404, 409),
    summary="Add a site (unsent fields take the page's defaults)",
)
def site_create(request, plan_id: Id, payload: SiteCreateIn):
    plan = plan_get(request, plan_id)
    require_editor(request)
    return _site_write(request, plan, payload, Site(plan=plan))


@router.get("/plans/{plan_id}/sites/{site_id}", **op({200: SiteOut}, 404), summary="Site")
def site_read(request, plan_id: Id, site_id: Id):
    return site_out(site_get(request, plan_id, site_id)[1])


@router.patch(
    "/plans/{plan_id}/sites/{site_id}",
    **op({200: SiteOut}, 404, 409),
    summary="Change a site's fields (only those sent; `upgrades` replaces the list)",
)
def site_update(request, plan_id: Id, site_id: Id, payload: SiteIn):
    plan, site = site_get(request, plan_id, site_id)
    require_editor(request)
    return _site_write(request, plan, payload, site)


@router.delete(
    "/plans/{plan_id}/sites/{site_id}", **op({204: None}, 404, 409), summary="Delete a site"
)
def site_delete(request, plan_id: Id, site_id: Id):
    _, site = site_get(request, plan_id, site_id)
    require_editor(request)
    facility_services.site_delete(site=site)
    return Status(204, None)
