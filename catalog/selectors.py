"""Reads of catalog data (shared) and of catalog imports (per organisation)."""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.models import Model, QuerySet

from catalog.kinds import CatalogKind
from catalog.models import (
    Accelerator,
    CatalogImport,
    CloudOffering,
    PriceModel,
    PricePoint,
    ServerPlatform,
)
from planner.models import Organisation


def catalog_queryset(kind: CatalogKind) -> QuerySet:
    """All rows of a kind with the relations its list shows."""
    queryset = kind.model.objects.all()
    if kind.foreign_keys:
        queryset = queryset.select_related(*kind.foreign_keys)
    return queryset


def catalog_item_get(kind: CatalogKind, lookup_value: str) -> Model:
    """One row by the kind's lookup field; raises DoesNotExist (or ValueError for a bad pk)."""
    return catalog_queryset(kind).get(**{kind.lookup: lookup_value})


def price_history(item: Model, field: str) -> QuerySet[PricePoint]:
    return PricePoint.objects.filter(
        content_type=ContentType.objects.get_for_model(item), object_id=item.pk, field=field
    ).order_by("-as_of", "-recorded_at")


def cheapest_on_demand_by_accelerator(accelerator_ids) -> dict[int, CloudOffering]:
    """For each accelerator, its cheapest on-demand offering per accelerator-hour."""
    best: dict[int, CloudOffering] = {}
    offerings = CloudOffering.objects.filter(
        accelerator_id__in=accelerator_ids, price_model=PriceModel.ON_DEMAND
    ).select_related("accelerator")
    for offering in offerings:
        current = best.get(offering.accelerator_id)
        if current is None or offering.usd_per_accelerator_hour < current.usd_per_accelerator_hour:
            best[offering.accelerator_id] = offering
    return best


def accelerators_by_slug(slugs: list[str]) -> list[Accelerator]:
    """The accelerators named, in the order given; unknown slugs are skipped."""
    found = {a.slug: a for a in Accelerator.objects.filter(slug__in=slugs)}
    return [found[s] for s in slugs if s in found]


def catalog_import_list(*, organisation: Organisation) -> QuerySet[CatalogImport]:
    return CatalogImport.objects.filter(organisation=organisation).select_related("created_by")


_pinned_version: ContextVar[tuple | None] = ContextVar("catalog_version_pinned", default=None)


def catalog_version() -> tuple:
    """Changes whenever sizing-relevant catalog rows change (count or last update).

    Inside :func:`catalog_version_pinned` the version read when the block began.
    """
    pinned = _pinned_version.get()
    if pinned is not None:
        return pinned
    tables = [m._meta.db_table for m in (Accelerator, CloudOffering, ServerPlatform)]
    # UNION ALL keeps no order of its own (PostgreSQL may run the branches as a parallel
    # append), so each row carries its table's position and the result is sorted by it.
    sql = " UNION ALL ".join(
        f"SELECT {i}, COUNT(*), MAX(updated_at) FROM {t}" for i, t in enumerate(tables)
    )
    with connection.cursor() as cursor:  # one round trip instead of three
        cursor.execute(sql + " ORDER BY 1")
        return tuple(tuple(row[1:]) for row in cursor.fetchall())


@contextmanager
def catalog_version_pinned() -> Iterator[tuple]:
    """Read the catalog version once for the block (one request), not once per lookup.

    A page that sizes a workload asks for specs, prices and cloud-only parts separately;
    each would otherwise cost a query. Per thread and context, so concurrent requests don't
    share it.
    """
    token = _pinned_version.set(catalog_version())
    try:
        yield _pinned_version.get()
    finally:
        _pinned_version.reset(token)
