"""Clients and plans as a consultant uses them."""

from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from planner.models import Client, Plan
from tests.conftest import make_member


@pytest.fixture
def rates(db):
    """EUR and GBP are convertible plan currencies once they have a rate (USD always is)."""
    from sourcing.models import FxRate

    for code, rate in (("EUR", "1.08"), ("GBP", "1.27")):
        FxRate.objects.create(
            from_currency=code, to_currency="USD", rate=Decimal(rate), as_of=date(2026, 1, 2)
        )


def test_create_a_plan_with_a_new_client(client, consultant_a, org_a, rates):
    client.force_login(consultant_a)

    response = client.post(
        reverse("plan_create"),
        {
            "name": "Support bot",
            "new_client": "Acme GmbH",
            "currency": "eur",
            "target_go_live": "2027-03-01",
        },
    )

    plan = Plan.objects.get()
    assert response.status_code == 302 and response.url == reverse("plan_detail", args=[plan.pk])
    assert (plan.organisation, plan.client.name, plan.currency) == (org_a, "Acme GmbH", "EUR")
    assert plan.created_by == consultant_a
    page = client.get(response.url).content.decode()
    assert "Support bot" in page and "Acme GmbH" in page and "2027-03-01" in page


def test_plan_form_errors_keep_what_was_typed(client, consultant_a):
    client.force_login(consultant_a)

    response = client.post(
        reverse("plan_create"), {"name": "Half done", "currency": "EURO", "target_go_live": "soon"}
    )

    content = response.content.decode()
    assert response.status_code == 400
    assert "Pick a client or name a new one." in content
    assert "Enter a valid date." in content
    assert 'value="Half done"' in content
    assert not Plan.objects.exists()


def test_cannot_pick_another_organisations_client(client, consultant_a, org_b):
    other = Client.objects.create(organisation=org_b, name="Not yours")
    client.force_login(consultant_a)

    response = client.post(
        reverse("plan_create"), {"name": "Sneaky", "client": other.pk, "currency": "USD"}
    )

    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    assert not Plan.objects.exists()


def test_duplicate_client_names_are_refused(client, consultant_a, org_a):
    Client.objects.create(organisation=org_a, name="Acme")
    client.force_login(consultant_a)

    response = client.post(reverse("client_list"), {"name": "acme"})
    assert response.status_code == 400
    assert "already exists" in response.content.decode()


def test_viewers_read_but_cannot_change(client, org_a):
    viewer = make_member(org_a, "vera", "viewer")
    acme = Client.objects.create(organisation=org_a, name="Acme")
    plan = Plan.objects.create(organisation=org_a, client=acme, name="Chat")
    client.force_login(viewer)

    assert client.get(reverse("plan_detail", args=[plan.pk])).status_code == 200
    assert client.get(reverse("plan_list")).status_code == 200
    assert client.get(reverse("plan_create")).status_code == 403
    assert client.post(reverse("plan_edit", args=[plan.pk]), {"name": "x"}).status_code == 403
    client.post(reverse("client_list"), {"name": "Viewer's client"})
    assert not Client.objects.filter(name="Viewer's client").exists()


def test_edit_a_plan(client, consultant_a, org_a, rates):
    acme = Client.objects.create(organisation=org_a, name="Acme")
    plan = Plan.objects.create(organisation=org_a, client=acme, name="Chat")
    client.force_login(consultant_a)

    client.post(
        reverse("plan_edit", args=[plan.pk]),
        {"name": "Chat v2", "client": acme.pk, "currency": "GBP"},
    )

    plan.refresh_from_db()
    assert (plan.name, plan.currency) == ("Chat v2", "GBP")
