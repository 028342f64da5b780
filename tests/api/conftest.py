"""Fixtures of the API tests: tokens of each role, a sized plan of A and a plan of B."""

import json
from datetime import date

import pytest

from tests.conftest import make_member


def bearer(raw: str) -> dict:
    return {"authorization": f"Bearer {raw}"}


def _token(organisation, user) -> str:
    from planner.models import ApiToken
    from planner.models.tokens import token_digest

    raw = ApiToken.generate()
    ApiToken.objects.create(
        organisation=organisation, name="script", digest=token_digest(raw), hint=raw[:8],
        created_by=user,
    )  # fmt: skip
    return raw


class Api:
    """The test client speaking JSON with a token (or none)."""

    def __init__(self, client, raw: str | None) -> None:
        self.client = client
        self.headers = bearer(raw) if raw else {}

    def call(self, method: str, url: str, body=None):
        kwargs = {"headers": self.headers}
        if body is not None:
            kwargs |= {"data": json.dumps(body), "content_type": "application/json"}
        return getattr(self.client, method)("/api/v1" + url, **kwargs)

    def get(self, url):
        return self.call("get", url)

    def post(self, url, body=None):
        return self.call("post", url, {} if body is None else body)

    def patch(self, url, body):
        return self.call("patch", url, body)

    def put(self, url, body):
        return self.call("put", url, body)

    def delete(self, url):
        return self.call("delete", url)


@pytest.fixture
def api(client, org_a, consultant_a):
    """A consultant's token of organisation A."""
    return Api(client, _token(org_a, consultant_a))


@pytest.fixture
def viewer_api(client, org_a):
    return Api(client, _token(org_a, make_member(org_a, "vera", role="viewer")))


@pytest.fixture
def anonymous(client):
    return Api(client, None)


@pytest.fixture
def sized_plan(org_a, consultant_a, catalog):
    """A plan of A with two workloads with a chosen H100 configuration and a site."""
    from decimal import Decimal

    from planner.facility.models import PowerUpgrade
    from tests.factories import PlanFactory, SiteFactory, WorkloadFactory

    plan = PlanFactory(organisation=org_a, client__name="Northwind", created_by=consultant_a)
    WorkloadFactory(plan=plan, chosen=True, region_shares={"eu-west": 60, "us-east": 40})
    site = SiteFactory(plan=plan)
    PowerUpgrade.objects.create(
        site=site, ready_date=date(2027, 3, 1), added_kw=Decimal("200"), note="transformer"
    )
    return plan


@pytest.fixture
def plan_b(org_b, owner_b, catalog):
    """A plan of organisation B with a workload and a site (ids A must not reach)."""
    from decimal import Decimal

    from planner.facility.models import Site
    from tests.factories import PlanFactory, WorkloadFactory

    plan = PlanFactory(
        organisation=org_b, client__name="Contoso", name="B's plan", currency="USD",
        target_go_live=None,
    )  # fmt: skip
    WorkloadFactory(
        plan=plan, name="B chat", model_slug="llama-3.1-8b", input_tokens_mean=1000,
        output_tokens_mean=200, peak_concurrency=10,
    )  # fmt: skip
    Site.objects.create(plan=plan, name="B site", site_it_capacity_kw=Decimal("100"))
    return plan


@pytest.fixture(autouse=True)
def fx_rates(db):
    """The API tests' plans are in EUR and GBP: a plan currency needs a stored rate (as on the
    plan form; USD always converts)."""
    from datetime import date
    from decimal import Decimal

    from sourcing.models import FxRate

    for code, rate in (("EUR", "1.08"), ("GBP", "1.27")):
        FxRate.objects.get_or_create(
            from_currency=code,
            to_currency="USD",
            as_of=date(2026, 1, 2),
            defaults={"rate": Decimal(rate)},
        )


@pytest.fixture
def wsgi_in_this_thread(db):
    """Requests sent to the WSGI app in this thread (schemathesis, a generated client) run
    inside the test's transaction: like Django's test client, keep the start and end of a
    request from closing the connection."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        yield
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)
