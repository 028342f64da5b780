"""Hand-picked cases of the API's split between shape (400: what the OpenAPI document states)
and the domain's refusals (422), and of numbers as the document says they are read."""

from decimal import Decimal

from sourcing.models import Offer, Supplier
from tests.api.test_sourcing import _offer_body, owner  # noqa: F401


def test_control_characters_and_nul_are_refused_next_to_the_field(api, sized_plan):
    workload = sized_plan.workloads.get()
    url = f"/plans/{sized_plan.pk}/workloads/{workload.pk}"
    bell = api.patch(url, {"name": "Chat\x07"})
    assert bell.status_code == 400
    assert bell.json()["errors"] == {
        "name": ["Remove the control character U+0007: it cannot be typed or printed."]
    }
    nul = api.patch(url, {"name": "Chat\x00"})
    assert nul.status_code == 400
    assert nul.json()["errors"] == {"name": ["Null characters are not allowed."]}
    line_break = api.patch(f"/plans/{sized_plan.pk}", {"notes": "first\nsecond\x1b"})
    assert line_break.status_code == 400 and "U+001B" in line_break.json()["errors"]["notes"][0]
    workload.refresh_from_db()
    assert workload.name == "Chat"


def test_numbers_are_json_numbers(api, sized_plan):
    workload = sized_plan.workloads.get()
    url = f"/plans/{sized_plan.pk}/workloads/{workload.pk}"
    for value in (True, "400", 400.5):  # true is not 1, a string not a number, 400.5 no integer
        response = api.patch(url, {"peak_concurrency": value})
        assert response.status_code == 400, value
        assert "peak_concurrency" in response.json()["errors"]
    assert api.patch(url, {"version": True}).status_code == 400
    flag = api.patch(url, {"n_plus_one": 0.0})  # 0.0 is not false
    assert flag.status_code == 400 and "n_plus_one" in flag.json()["errors"]


def test_a_negative_markup_is_a_shape_the_document_states(api, sized_plan):
    from planner.api import api as ninja_api

    body = ninja_api.get_openapi_schema()["components"]["schemas"]["QuoteSettingsIn"]
    markup = body["properties"]["markup_pct"]
    assert (markup["minimum"], markup["maximum"]) == (0, 1000)
    response = api.patch(f"/plans/{sized_plan.pk}/quote-settings", {"markup_pct": -1})
    assert response.status_code == 400
    assert "markup_pct" in response.json()["errors"]


def test_a_rule_across_fields_is_the_domains(api, sized_plan):
    bad = [{"pct": 60, "when": "on order"}, {"pct": 50, "when": "on delivery"}]
    response = api.patch(f"/plans/{sized_plan.pk}/quote-settings", {"payment_milestones": bad})
    assert response.status_code == 422
    assert "add up to 110 %" in response.json()["errors"]["payment_milestones"][0]


def test_a_json_number_is_read_to_the_fields_places_and_text_exactly(owner, demo):  # noqa: F811
    supplier = Supplier.objects.filter(organisation=demo[2]).first()
    url = f"/suppliers/{supplier.pk}/offers"
    floating = owner.post(url, _offer_body(unit_price=0.1 + 0.2, freight_per_unit=1.23456789))
    assert floating.status_code == 201, floating.content
    offer = Offer.objects.get(pk=floating.json()["id"])
    # 0.30000000000000004 is the 0.3 its sender meant; freight is kept to 4 places.
    assert offer.unit_price == Decimal("0.3")
    assert offer.freight_per_unit == Decimal("1.2346")
    exact = owner.post(url, _offer_body(supplier_sku="RK-43", unit_price="0.12345"))
    assert exact.status_code == 400  # text is read exactly: five places are too many
    assert "unit_price" in exact.json()["errors"]
