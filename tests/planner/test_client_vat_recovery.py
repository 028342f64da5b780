"""The client's VAT recovery: full, partial (a percentage) or none, set on the client page, the
API and a plan file; a wrong combination is a message next to the field, never a 500."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from planner.models import Client
from tests.api.conftest import Api, _token

D = Decimal


def _post(client, **fields):
    return client.post(reverse("client_list"), {"name": "Bank AG", "country": "de", **fields})


def test_a_client_is_fully_recoverable_unless_said(org_a):
    client = Client.objects.create(organisation=org_a, name="Shop")
    assert client.vat_recovery == "full" and client.vat_recovery_pct == 100
    assert "recovers the VAT it pays in full" in client.vat_treatment


@pytest.mark.parametrize(
    ("fields", "saved"),
    [
        ({"vat_recovery": "none"}, D(0)),
        ({"vat_recovery": "partial", "vat_recoverable_pct": "30"}, D(30)),
        ({"vat_recovery": "full"}, D(100)),
    ],
)
def test_the_client_page_saves_each_recovery(client, consultant_a, org_a, fields, saved):
    client.force_login(consultant_a)
    response = _post(client, **fields)
    assert response.status_code == 302, response.content.decode()
    bank = Client.objects.get(organisation=org_a, name="Bank AG")
    assert bank.vat_recovery_pct == saved
    page = client.get(reverse("client_list")).content.decode()
    assert f"{saved.normalize():f} % recoverable" in page


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"vat_recovery": "partial"}, "Enter the share of VAT the client recovers"),
        ({"vat_recovery": "partial", "vat_recoverable_pct": "0"}, "choose None for 0 %"),
        ({"vat_recovery": "partial", "vat_recoverable_pct": "100"}, "Full for 100 %"),
        ({"vat_recovery": "partial", "vat_recoverable_pct": "130"}, "less than 100 %"),
        ({"vat_recovery": "partial", "vat_recoverable_pct": "-5"}, "more than 0"),
        ({"vat_recovery": "none", "vat_recoverable_pct": "30"}, "Leave the percentage empty"),
        ({"vat_recovery": "partial", "vat_recoverable_pct": "abc"}, "Enter a number."),
        ({"vat_recovery": "sometimes"}, "Select a valid choice"),
    ],
)
def test_a_wrong_recovery_is_a_message_next_to_the_field(client, consultant_a, org_a, fields,
                                                          message):  # fmt: skip
    client.force_login(consultant_a)
    response = _post(client, **fields)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Client.objects.filter(organisation=org_a, name="Bank AG").exists()


def test_the_database_refuses_a_percentage_outside_partial(org_a):
    with pytest.raises(IntegrityError), transaction.atomic():
        Client.objects.create(
            organisation=org_a, name="X", vat_recovery="none", vat_recoverable_pct=D(30)
        )


def test_the_api_reads_and_sets_the_recovery(client, org_a, consultant_a):
    api = Api(client, _token(org_a, consultant_a))
    created = api.post("/clients", {"name": "Bank AG", "vat_recovery": "none"})
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["vat_recovery"], body["vat_recoverable_pct"]) == ("none", "0")

    patched = api.patch(
        f"/clients/{body['id']}", {"vat_recovery": "partial", "vat_recoverable_pct": 30}
    )
    assert patched.status_code == 200, patched.content
    assert patched.json()["vat_recoverable_pct"] == "30"
    assert Client.objects.get(pk=body["id"]).vat_recovery_pct == D(30)

    bad = api.patch(f"/clients/{body['id']}", {"vat_recoverable_pct": 130})
    assert bad.status_code == 422
    assert "less than 100 %" in bad.json()["errors"]["vat_recoverable_pct"][0]

    plan = api.post("/plans", {"client": body["id"], "name": "Chat", "currency": "USD"}).json()
    assert plan["client"]["vat_recovery"] == "partial"
    assert plan["client"]["vat_recoverable_pct"] == "30"
    assert api.get(f"/clients/{body['id']}").json()["name"] == "Bank AG"
    assert api.get("/clients/999999").status_code == 404


def test_a_plan_file_carries_the_clients_recovery(org_a, org_b, consultant_a, catalog):
    from planner import portable
    from tests.factories import PlanFactory

    plan = PlanFactory(
        organisation=org_a, client__name="Bank AG", client__vat_recovery="partial",
        client__vat_recoverable_pct=D("42.5"),
    )  # fmt: skip
    document = portable.plan_export(plan)
    assert document["client"]["vat_recovery"] == "partial"
    copy = portable.plan_import(document, organisation=org_b)
    assert copy.client.organisation == org_b
    assert (copy.client.vat_recovery, copy.client.vat_recoverable_pct) == ("partial", D("42.5"))

    document["client"] |= {"name": "Other", "vat_recovery": "none", "vat_recoverable_pct": "10"}
    with pytest.raises(portable.PortableError):
        portable.plan_import(document, organisation=org_b)


def test_the_client_api_keeps_to_its_organisation(client, org_a, org_b, consultant_a, owner_b):
    """Another organisation's client is not found (404) to read or change, a viewer may read
    but not write (403), and no token is 401."""
    from tests.conftest import make_member

    theirs = Client.objects.create(organisation=org_b, name="Their bank")
    mine = Client.objects.create(organisation=org_a, name="Our bank")
    api = Api(client, _token(org_a, consultant_a))
    assert api.get(f"/clients/{theirs.pk}").status_code == 404
    assert api.patch(f"/clients/{theirs.pk}", {"name": "Taken"}).status_code == 404
    assert "Their bank" not in api.get("/clients").content.decode()
    theirs.refresh_from_db()
    assert theirs.name == "Their bank"

    viewer = Api(client, _token(org_a, make_member(org_a, "viewer_a", "viewer")))
    assert viewer.get(f"/clients/{mine.pk}").status_code == 200
    assert viewer.patch(f"/clients/{mine.pk}", {"name": "X"}).status_code == 403
    assert viewer.post("/clients", {"name": "New"}).status_code == 403
    assert Api(client, None).get("/clients").status_code == 401
