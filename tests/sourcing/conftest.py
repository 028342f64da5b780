"""Fixtures for sourcing: a plan with a chosen configuration, suppliers, offers, FX, tariffs."""

from datetime import date, timedelta
from decimal import Decimal

import pytest

D = Decimal


@pytest.fixture
def tariffs(db):
    from sourcing.services import tariffs_load_defaults

    tariffs_load_defaults()


@pytest.fixture
def fx(db):
    from sourcing.models import FxRate

    return FxRate.objects.create(
        from_currency="EUR", to_currency="USD", rate=D("1.0870"), as_of=date(2026, 7, 31),
        source="test rate",
    )  # fmt: skip


@pytest.fixture
def plan_a(org_a, consultant_a, catalog):
    """A EUR plan for a Dutch client with 16 H100 in 2 DGX H100 servers chosen: one replica
    of TP 16 spanning both servers (so the BOM has a scale-out fabric), no N+1 spare."""
    from tests.factories import PlanFactory, WorkloadFactory

    plan = PlanFactory(
        organisation=org_a, client__name="Acme NL", client__country="NL", name="Chat",
        created_by=consultant_a,
    )  # fmt: skip
    WorkloadFactory(
        plan=plan, chosen=True, input_tokens_mean=1000, output_tokens_mean=300,
        peak_concurrency=100, chosen_tensor_parallel=16, chosen_replicas=1,
        chosen_accelerators=16, chosen_servers=2, n_plus_one=False,
    )  # fmt: skip
    return plan


@pytest.fixture
def settings_a(plan_a):
    from sourcing.services import sourcing_settings_get

    settings = sourcing_settings_get(plan=plan_a)
    settings.order_date = date(2026, 8, 3)
    settings.save()
    return settings


@pytest.fixture
def suppliers_a(org_a):
    from tests.factories import SupplierFactory

    nl = SupplierFactory(organisation=org_a, name="Dutch Dist", country="NL")
    us = SupplierFactory(organisation=org_a, name="US Dist", country="US")
    return nl, us


def make_offer(supplier, **values):
    """An offer of the supplier (see OfferFactory for the defaults)."""
    from tests.factories import OfferFactory

    return OfferFactory(supplier=supplier, **values)


@pytest.fixture
def offers_a(suppliers_a, catalog):
    """Servers from both suppliers (US cheaper after FX, NL slower), NICs, optics, racks."""
    from catalog.models import Part, ServerPlatform

    nl, us = suppliers_a
    dgx = ServerPlatform.objects.get(slug="nvidia-dgx-h100")
    part = {p.slug: p for p in Part.objects.all()}
    return {
        "server_us": make_offer(
            us, server=dgx, unit_price=D("305000"), currency="USD", lead_time_days=90,
            origin_country="US", incoterm="FCA", freight_per_unit=D("2400"),
        ),
        "server_nl": make_offer(nl, server=dgx, unit_price=D("298000"), lead_time_days=140),
        "server_nl_old": make_offer(
            nl, server=dgx, unit_price=D("250000"), quoted_on=date(2026, 3, 1),
            valid_until=date(2026, 5, 31),
        ),
        "nic": make_offer(
            nl, part=part["nic-400g"], unit_price=D("1150"), lead_time_days=42,
            breaks=[(16, D("1090"))],
        ),
        "optic": make_offer(
            nl, part=part["optic-400g"], unit_price=D("780"), lead_time_days=60,
            origin_country="TW", breaks=[(32, D("740"))],
        ),
        "rack": make_offer(
            nl, part=part["rack-42u"], unit_price=D("1650"), lead_time_days=21,
            origin_country="NL",
        ),
    }  # fmt: skip


@pytest.fixture
def sourced_plan(plan_a, settings_a, offers_a, fx, tariffs, consultant_a):
    """plan_a with its BOM generated, offers, FX and tariffs in place."""
    from sourcing.services import bom_generate

    bom_generate(plan=plan_a, user=consultant_a)
    return plan_a


def days(n: int) -> timedelta:
    return timedelta(days=n)
