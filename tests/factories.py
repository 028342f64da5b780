"""factory_boy factories for the rows tests make by hand: organisations and their members,
clients, plans, workloads (with a chosen configuration or not), sites, suppliers and offers.

Each factory's defaults are a small valid row; tests pass what their check depends on.
Catalog rows (models, accelerators, servers, parts) are looked up by slug, so a test using a
workload or an offer needs the `catalog` fixture. Django imports stay inside the factories'
callables (and this module is imported only by tests that use the database).
"""

from datetime import date
from decimal import Decimal

import factory
from django.contrib.auth.models import User

from catalog.models import Accelerator, ModelArchitecture, ServerPlatform
from planner.facility.models import Site
from planner.models import Client, Membership, Organisation, Plan, Workload
from sourcing.models import Offer, OfferPriceBreak, Supplier

PASSWORD = "pw-for-tests-1"


class OrganisationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organisation

    name = factory.Sequence(lambda n: f"Organisation {n}")
    slug = factory.Sequence(lambda n: f"organisation-{n}")


class UserFactory(factory.django.DjangoModelFactory):
    """A user whose password is PASSWORD."""

    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        return model_class.objects.create_user(*args, password=PASSWORD, **kwargs)


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    organisation = factory.SubFactory(OrganisationFactory)
    user = factory.SubFactory(UserFactory)
    role = "consultant"


def member(organisation: Organisation, username: str, role: str = "consultant") -> User:
    """A user of `organisation` with `role` (owner, consultant or viewer)."""
    return MembershipFactory(organisation=organisation, user__username=username, role=role).user


class ClientFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Client

    organisation = factory.SubFactory(OrganisationFactory)
    name = factory.Sequence(lambda n: f"Client {n}")


class PlanFactory(factory.django.DjangoModelFactory):
    """A EUR plan of a client of the plan's organisation, going live in June 2027."""

    class Meta:
        model = Plan

    organisation = factory.SubFactory(OrganisationFactory)
    client = factory.SubFactory(ClientFactory, organisation=factory.SelfAttribute("..organisation"))
    name = "Chat"
    currency = "EUR"
    target_go_live = date(2027, 6, 1)
    created_by = None


class WorkloadFactory(factory.django.DjangoModelFactory):
    """A chat workload of Llama 3.1 70B. With ``chosen=True`` it has a chosen configuration,
    as sizing leaves it: H100 SXM in DGX H100 servers at fp8, TP 4, 8 replicas (32
    accelerators, 4 servers); any chosen_* value can be passed to change it."""

    class Meta:
        model = Workload

    class Params:
        model_slug = "llama-3.1-70b"
        accelerator_slug = "h100-sxm"
        server_slug = "nvidia-dgx-h100"
        chosen = factory.Trait(
            chosen_accelerator=factory.LazyAttribute(
                lambda w: Accelerator.objects.get(slug=w.accelerator_slug)
            ),
            chosen_server=factory.LazyAttribute(
                lambda w: ServerPlatform.objects.get(slug=w.server_slug)
            ),
            chosen_precision="fp8",
            chosen_tensor_parallel=4,
            chosen_replicas=8,
            chosen_accelerators=32,
            chosen_servers=4,
        )

    plan = factory.SubFactory(PlanFactory)
    name = "Chat"
    model = factory.LazyAttribute(lambda w: ModelArchitecture.objects.get(slug=w.model_slug))
    input_tokens_mean = 1200
    output_tokens_mean = 350
    ttft_ms = 1000
    tpot_ms = 50
    peak_concurrency = 400


class SiteFactory(factory.django.DjangoModelFactory):
    """A colocation site in Amsterdam: 4 racks, 40 kW, rear-door cooling."""

    class Meta:
        model = Site

    plan = factory.SubFactory(PlanFactory)
    name = "Amsterdam"
    kind = "colocation"
    latitude = 52.3
    longitude = 4.94
    country = "NL"
    racks_available = 4
    site_it_capacity_kw = Decimal("40")
    cooling_method = "rear_door"
    cooling_capacity_per_rack_kw = Decimal("40")
    cooling_capacity_site_kw = Decimal("200")
    power_usd_per_kwh = Decimal("0.22")


class SupplierFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Supplier

    organisation = factory.SubFactory(OrganisationFactory)
    name = factory.Sequence(lambda n: f"Supplier {n}")
    country = "NL"


class OfferFactory(factory.django.DjangoModelFactory):
    """An offer in EUR, quoted 2026-07-20 and valid to the year's end, 30 days' lead time,
    from Taiwan under DAP. Pass the part, server or accelerator offered and its unit_price;
    ``breaks=[(min_qty, unit_price), ...]`` adds quantity price breaks."""

    class Meta:
        model = Offer
        skip_postgeneration_save = True

    supplier = factory.SubFactory(SupplierFactory)
    currency = "EUR"
    lead_time_days = 30
    quoted_on = date(2026, 7, 20)
    valid_until = date(2026, 12, 31)
    origin_country = "TW"
    incoterm = "DAP"

    @factory.post_generation
    def breaks(offer, create, extracted, **kwargs):
        for min_qty, unit_price in extracted or ():
            OfferPriceBreak.objects.create(offer=offer, min_qty=min_qty, unit_price=unit_price)
