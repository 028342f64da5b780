"""Suppliers, offers, BOM line edits and purchase orders over the API, on the demo plan (which
has suppliers, offers, a generated BOM and two purchase orders): each operation's success, the
form's message for bad input, another organisation's ids (404), viewer writes (403) and no
token (401)."""

import copy
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from planner.portable import imported_name, plan_export
from sourcing.models import BomLine, Offer, PlanEvent, PurchaseOrder, PurchaseOrderLine, Supplier
from tests.api.conftest import Api, _token
from tests.conftest import make_member


@pytest.fixture
def owner(client, demo):
    return Api(client, _token(demo[2], demo[1]))


@pytest.fixture
def viewer(client, demo):
    organisation = demo[2]
    return Api(client, _token(organisation, make_member(organisation, "vic", role="viewer")))


@pytest.fixture
def other(demo, org_b, owner_b, plan_b):
    """Organisation B's supplier, offer, BOM line and purchase order (ids A must not reach)."""
    from catalog.models import Part

    supplier = Supplier.objects.create(organisation=org_b, name="B Supply", country="DE")
    part = Part.objects.get(slug="rack-42u")
    offer = Offer.objects.create(
        supplier=supplier, part=part, unit_price=Decimal("100"), currency="EUR",
        quoted_on=date(2026, 1, 5), valid_until=date(2027, 1, 5), origin_country="DE",
        lead_time_days=10,
    )  # fmt: skip
    line = BomLine.objects.create(
        plan=plan_b, part_key="manual:part:rack-42u", category="rack", description="Rack",
        quantity=1, origin="manual", part=part,
    )  # fmt: skip
    order = PurchaseOrder.objects.create(
        plan=plan_b, supplier=supplier, reference="PO-001", destination_country="DE",
        charges_currency="EUR",
    )  # fmt: skip
    return {"supplier": supplier, "offer": offer, "line": line, "order": order, "plan": plan_b}


def _offer_body(**over):
    today = timezone.localdate()
    body = {
        "item": "part:rack-42u",
        "supplier_sku": "RK-42",
        "unit_price": 1500,
        "currency": "eur",
        "price_breaks": [
            {"min_qty": 50, "unit_price": "1350.50"},
            {"min_qty": 10, "unit_price": 1400},
        ],
        "minimum_order_qty": 1,
        "lead_time_days": 20,
        # Valid on the demo's order date (about four months ago), when its BOM is priced.
        "quoted_on": (today - timedelta(days=200)).isoformat(),
        "valid_until": (today + timedelta(days=60)).isoformat(),
        "incoterm": "DAP",
    }
    return body | over


# --- Suppliers ---------------------------------------------------------------------------------


def test_suppliers_crud_through_the_page_form(owner, demo):
    organisation = demo[2]
    listed = owner.get("/suppliers")
    assert listed.status_code == 200
    assert {s["name"] for s in listed.json()} == set(
        Supplier.objects.filter(organisation=organisation).values_list("name", flat=True)
    )

    created = owner.post(
        "/suppliers", {"name": " Nordic Racks ", "country": "se", "website": "nordic.example"}
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["name"], body["country"], body["website"]) == (
        "Nordic Racks", "SE", "https://nordic.example",
    )  # fmt: skip
    assert Supplier.objects.get(pk=body["id"]).organisation == organisation

    url = f"/suppliers/{body['id']}"
    assert owner.get(url).json() == body
    patched = owner.patch(url, {"contact_name": "Sven", "version": body["version"]})
    assert patched.status_code == 200, patched.content
    assert patched.json()["contact_name"] == "Sven" and patched.json()["country"] == "SE"
    assert owner.patch(url, {"contact_name": "Olof", "version": body["version"]}).status_code == 409

    assert owner.delete(url).status_code == 204
    assert not Supplier.objects.filter(pk=body["id"]).exists()


def test_supplier_validation_is_the_forms(owner, demo):
    taken = Supplier.objects.filter(organisation=demo[2]).first().name
    response = owner.post("/suppliers", {"name": taken.upper(), "country": "NL"})
    assert response.status_code == 422
    assert response.json()["errors"]["name"] == ["A supplier with this name already exists."]
    missing = owner.post("/suppliers", {"name": "No country"})
    assert missing.status_code == 400 and "country" in missing.json()["errors"]
    typo = owner.post("/suppliers", {"name": "X", "country": "NL", "colour": "red"})
    assert typo.status_code == 400


def test_a_supplier_on_a_purchase_order_is_not_deleted(owner, demo):
    order = PurchaseOrder.objects.filter(plan=demo[0]).first()
    response = owner.delete(f"/suppliers/{order.supplier_id}")
    assert response.status_code == 409
    assert Supplier.objects.filter(pk=order.supplier_id).exists()


# --- Offers ------------------------------------------------------------------------------------


def test_offer_create_read_list_with_price_breaks_and_validity(owner, demo):
    supplier = Supplier.objects.filter(organisation=demo[2], country="NL").first()
    created = owner.post(f"/suppliers/{supplier.pk}/offers", _offer_body())
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["item"] == "part:rack-42u" and body["currency"] == "EUR"
    assert body["price_breaks"] == [
        {"min_qty": 10, "unit_price": "1400.0000"},
        {"min_qty": 50, "unit_price": "1350.5000"},
    ]
    assert body["origin_country"] == "NL"  # the supplier's, as the page defaults it
    assert body["expired"] is False and body["unit_price"] == "1500.0000"
    assert owner.get(f"/offers/{body['id']}").json() == body
    listed = owner.get(f"/suppliers/{supplier.pk}/offers").json()
    assert body["id"] in {o["id"] for o in listed}
    assert all(o["supplier_id"] == supplier.pk for o in listed)


@pytest.mark.parametrize(
    ("over", "field", "message", "status"),
    [
        (
            {"valid_until": "2020-01-01", "quoted_on": "2020-02-01"},
            "valid_until",
            "An offer cannot expire before it was quoted.",
            422,  # a rule across two fields
        ),
        ({"quoted_on": "2999-01-01"}, "quoted_on", None, 400),  # out of the dates' range
        (
            {"price_breaks": [{"min_qty": 5, "unit_price": 1}, {"min_qty": 5, "unit_price": 2}]},
            "price_breaks",
            "Quantity 5 is given twice.",
            422,
        ),
        ({"unit_price": -1}, "unit_price", "Cannot be negative.", 400),  # below its minimum
        (
            {"item": "part:no-such-part"},
            "item",
            "Unknown part 'no-such-part' in the catalog.",
            422,  # a catalog lookup
        ),
        ({"currency": "XXQ"}, "currency", None, 422),  # looked up in the ISO 4217 list
    ],
)
def test_offer_validation_is_the_forms(owner, demo, over, field, message, status):
    supplier = Supplier.objects.filter(organisation=demo[2]).first()
    before = Offer.objects.count()
    response = owner.post(f"/suppliers/{supplier.pk}/offers", _offer_body(**over))
    assert response.status_code == status, response.content
    errors = response.json()["errors"]
    assert field in errors, errors
    if message:
        assert errors[field] == [message]
    assert Offer.objects.count() == before


def test_repricing_an_offer_reprices_the_plans_landed_cost(owner, demo):
    plan = demo[0]
    landed = owner.get(f"/plans/{plan.pk}/landed-cost").json()
    chosen = next(line["chosen"] for line in landed["lines"] if line.get("chosen"))
    offer = Offer.objects.get(pk=chosen["id"])
    doubled = offer.unit_price * 2

    response = owner.patch(
        f"/offers/{offer.pk}",
        {"unit_price": str(doubled), "price_breaks": [], "version": offer.version},
    )

    assert response.status_code == 200, response.content
    assert response.json()["unit_price"] == f"{doubled:.4f}"
    assert response.json()["price_breaks"] == []
    repriced = owner.get(f"/plans/{plan.pk}/landed-cost").json()
    assert Decimal(repriced["total_net"]["amount"]) > Decimal(landed["total_net"]["amount"])
    # A stale edit (the version read before) that changes the price again is refused.
    stale = owner.patch(f"/offers/{offer.pk}", {"unit_price": 1, "version": offer.version})
    assert stale.status_code == 409


def test_an_offer_expired_over_the_api_leaves_the_landed_cost_not_current(owner, demo):
    from planner import freshness
    from sourcing import services

    plan, _, organisation = demo
    assert freshness.landed_cost_freshness(plan).state == freshness.CURRENT
    as_of = services.landed_cost_report(plan=plan, organisation=organisation).as_of
    offer = Offer.objects.get(supplier__organisation=organisation, service="installation")
    body = {
        "quoted_on": (as_of - timedelta(days=30)).isoformat(),
        "valid_until": (as_of - timedelta(days=1)).isoformat(),
    }
    response = owner.patch(f"/offers/{offer.pk}", body)
    assert response.status_code == 200, response.content
    assert response.json()["expired"] is True
    state = freshness.landed_cost_freshness(plan)
    assert state.state == freshness.FAILED and "not priced" in state.reason


def test_an_offer_on_a_purchase_order_is_not_deleted_others_are(owner, demo):
    ordered = Offer.objects.filter(order_lines__order__plan=demo[0]).first()
    response = owner.delete(f"/offers/{ordered.pk}")
    assert response.status_code == 409
    assert response.json()["errors"]["__all__"] == [
        "This offer is on a purchase order and cannot be deleted."
    ]
    unused = Offer.objects.filter(supplier__organisation=demo[2], order_lines__isnull=True).first()
    assert owner.delete(f"/offers/{unused.pk}").status_code == 204
    assert not Offer.objects.filter(pk=unused.pk).exists()


# --- BOM line edits ----------------------------------------------------------------------------


def test_manual_bom_line_add_by_slug_and_remove(owner, demo):
    plan = demo[0]
    response = owner.post(
        f"/plans/{plan.pk}/bom/lines",
        {"description": "Spare console cable kit", "quantity": 3, "reason": "site survey"},
    )
    assert response.status_code == 201, response.content
    line = response.json()
    assert (line["origin"], line["quantity"], line["part_key"]) == (
        "manual", 3, "manual:spare console cable kit",
    )  # fmt: skip
    assert owner.get(f"/plans/{plan.pk}/bom/lines/{line['id']}").json() == line
    assert PlanEvent.objects.filter(plan=plan, message__contains="Spare console cable kit").exists()

    again = owner.post(
        f"/plans/{plan.pk}/bom/lines", {"description": "Spare console cable kit", "quantity": 1}
    )
    assert again.status_code == 422
    assert again.json()["errors"]["__all__"] == [
        "This item is already on the bill of materials; change its quantity."
    ]
    assert owner.delete(f"/plans/{plan.pk}/bom/lines/{line['id']}").status_code == 204
    assert not BomLine.objects.filter(pk=line["id"]).exists()


@pytest.mark.parametrize(
    ("body", "field", "message", "status"),
    [
        (
            {"quantity": 1},
            "part",
            "Pick a part, a server or a service, or describe the item.",
            422,  # one of several fields
        ),
        ({"part": "no-such-part", "quantity": 1}, "part", None, 422),  # a catalog lookup
        ({"description": "x", "quantity": 0}, "quantity", "At least 1.", 400),
        ({"description": "x", "quantity": 1, "hs_code": "12"}, "hs_code", None, 422),
    ],
)
def test_manual_bom_line_validation_is_the_forms(owner, demo, body, field, message, status):
    plan = demo[0]
    before = BomLine.objects.filter(plan=plan).count()
    response = owner.post(f"/plans/{plan.pk}/bom/lines", body)
    assert response.status_code == status, response.content
    errors = response.json()["errors"]
    assert field in errors, errors
    if message:
        assert errors[field] == [message]
    assert BomLine.objects.filter(plan=plan).count() == before


def test_a_part_line_is_added_by_its_catalog_slug(owner, demo):
    plan = demo[0]
    BomLine.objects.filter(plan=plan, part__slug="cable-fiber-mpo").delete()
    response = owner.post(f"/plans/{plan.pk}/bom/lines", {"part": "cable-fiber-mpo", "quantity": 8})
    assert response.status_code == 201, response.content
    assert response.json()["part"] == "cable-fiber-mpo"
    assert response.json()["hs_code"]  # the part's own HS code, as on the page


def _line_with_two_offers(plan, organisation):
    from sourcing.selectors import offer_list, offers_for_line

    offers = list(offer_list(organisation=organisation))
    for line in BomLine.objects.filter(plan=plan, origin="generated").exclude(quantity=0):
        candidates = offers_for_line(offers, line)
        if len(candidates) >= 2:
            return line, candidates
    raise AssertionError("the demo has a line with two offers")


def test_patch_a_generated_line_overrides_and_pins_an_offer(owner, demo):
    plan, _, organisation = demo
    line, candidates = _line_with_two_offers(plan, organisation)
    url = f"/plans/{plan.pk}/bom/lines/{line.pk}"
    landed = owner.get(f"/plans/{plan.pk}/landed-cost").json()
    row = next(r for r in landed["lines"] if r["line"]["id"] == line.pk)
    other = next(o for o in candidates if not row.get("chosen") or o.pk != row["chosen"]["id"])

    response = owner.patch(
        url, {"quantity": line.quantity + 2, "pinned_offer": other.pk, "version": line.version}
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["origin"] == "override" and body["quantity"] == line.quantity + 2
    assert body["pinned_offer"] == other.pk and body["version"] == line.version + 1
    landed = owner.get(f"/plans/{plan.pk}/landed-cost").json()
    row = next(r for r in landed["lines"] if r["line"]["id"] == line.pk)
    assert row["chosen"]["id"] == other.pk
    # Back to the generated quantity: the line is generated again; unpin with null.
    back = owner.patch(url, {"quantity": line.generated_quantity, "pinned_offer": None})
    assert back.json()["origin"] == "generated" and back.json()["pinned_offer"] is None
    assert owner.patch(url, {"quantity": 5, "version": line.version}).status_code == 409


def test_patch_a_line_refuses_what_the_form_refuses(owner, demo):
    plan, _, organisation = demo
    line, _ = _line_with_two_offers(plan, organisation)
    foreign = (
        Offer.objects.filter(supplier__organisation=organisation)
        .exclude(part=line.part, server=line.server)
        .first()
    )
    url = f"/plans/{plan.pk}/bom/lines/{line.pk}"
    wrong_item = owner.patch(url, {"pinned_offer": foreign.pk})
    assert wrong_item.status_code == 422
    assert wrong_item.json()["errors"]["pinned_offer"] == [
        "Select a valid choice. That choice is not one of the available choices."
    ]
    negative = owner.patch(url, {"quantity": -1})
    assert "Cannot be negative." in negative.json()["errors"]["quantity"]
    line.refresh_from_db()
    assert line.pinned_offer_id != foreign.pk and line.quantity >= 0


def test_removing_a_generated_line_sets_it_to_zero(owner, demo):
    plan = demo[0]
    line = BomLine.objects.filter(plan=plan, origin="generated").exclude(quantity=0).first()
    assert owner.delete(f"/plans/{plan.pk}/bom/lines/{line.pk}").status_code == 204
    line.refresh_from_db()
    assert (line.quantity, line.origin) == (0, "override")


# --- Purchase orders ---------------------------------------------------------------------------


def test_purchase_orders_list_create_from_the_bom_and_track(owner, demo):
    plan, _, organisation = demo
    listed = owner.get(f"/plans/{plan.pk}/purchase-orders")
    assert listed.status_code == 200
    assert [o["reference"] for o in listed.json()] == list(
        PurchaseOrder.objects.filter(plan=plan).values_list("reference", flat=True)
    )
    # A new item, its offer (a script adds both) and the order for it.
    supplier = Supplier.objects.filter(organisation=organisation, country="NL").first()
    BomLine.objects.filter(plan=plan, part__slug="cable-fiber-mpo").delete()
    line = owner.post(
        f"/plans/{plan.pk}/bom/lines", {"part": "cable-fiber-mpo", "quantity": 40}
    ).json()
    offer = owner.post(
        f"/suppliers/{supplier.pk}/offers",
        _offer_body(item="part:cable-fiber-mpo", price_breaks=[], unit_price=90),
    ).json()
    pinned = owner.patch(f"/plans/{plan.pk}/bom/lines/{line['id']}", {"pinned_offer": offer["id"]})
    assert pinned.status_code == 200, pinned.content

    created = owner.post(
        f"/plans/{plan.pk}/purchase-orders", {"supplier": supplier.pk, "logistics_owner": "Kim"}
    )

    assert created.status_code == 201, created.content
    order = created.json()
    assert order["supplier"] == supplier.pk and order["status"] == "planned"
    assert [(x["bom_line"], x["offer"], x["quantity"]) for x in order["lines"]] == [
        (line["id"], offer["id"], 40)
    ]
    assert owner.get(f"/plans/{plan.pk}/purchase-orders/{order['id']}").json() == order
    nothing = owner.post(f"/plans/{plan.pk}/purchase-orders", {"supplier": supplier.pk})
    assert nothing.status_code == 422
    assert nothing.json()["errors"]["supplier"][0].startswith("No BOM line left to order")

    # Tracking: an actual date moves the status; the change is in the plan's history.
    today = timezone.localdate().isoformat()
    url = f"/plans/{plan.pk}/purchase-orders/{order['id']}"
    tracked = owner.patch(url, {"ordered_actual": today, "version": order["version"]})
    assert tracked.status_code == 200, tracked.content
    assert tracked.json()["status"] == "ordered" and tracked.json()["ordered_actual"] == today
    assert PlanEvent.objects.filter(plan=plan, kind="order", data__order=order["id"]).exists()
    stale = owner.patch(url, {"ordered_actual": None, "version": order["version"]})
    assert stale.status_code == 409


def test_purchase_order_validation_is_the_forms(owner, demo, other):
    plan = demo[0]
    order = PurchaseOrder.objects.filter(plan=plan).first()
    url = f"/plans/{plan.pk}/purchase-orders/{order.pk}"
    future = (timezone.localdate() + timedelta(days=5)).isoformat()
    response = owner.patch(url, {"installed_actual": future})
    assert response.status_code == 422
    assert response.json()["errors"]["installed_actual"] == [
        "An actual date cannot be in the future."
    ]
    negative = owner.patch(url, {"freight": -5})
    assert negative.json()["errors"]["freight"] == ["Cannot be negative."]
    # Another organisation's supplier is not a choice (the form's message).
    foreign = owner.post(f"/plans/{plan.pk}/purchase-orders", {"supplier": other["supplier"].pk})
    assert foreign.status_code == 422
    assert foreign.json()["errors"]["supplier"] == [
        "Select a valid choice. That choice is not one of the available choices."
    ]


# --- Tenancy, roles, authentication ------------------------------------------------------------


def _operations(plan, mine, theirs):
    """(method, url, body) of every new operation, with ``theirs`` ids where the path has one."""
    return [
        ("get", "/suppliers", None),
        ("post", "/suppliers", {"name": "Z", "country": "NL"}),
        ("get", f"/suppliers/{theirs['supplier']}", None),
        ("patch", f"/suppliers/{theirs['supplier']}", {"notes": "x"}),
        ("delete", f"/suppliers/{theirs['supplier']}", None),
        ("get", f"/suppliers/{theirs['supplier']}/offers", None),
        ("post", f"/suppliers/{theirs['supplier']}/offers", _offer_body()),
        ("get", f"/offers/{theirs['offer']}", None),
        ("patch", f"/offers/{theirs['offer']}", {"unit_price": 1}),
        ("delete", f"/offers/{theirs['offer']}", None),
        ("post", f"/plans/{theirs['plan']}/bom/lines", {"description": "x", "quantity": 1}),
        ("get", f"/plans/{plan}/bom/lines/{theirs['line']}", None),
        ("patch", f"/plans/{plan}/bom/lines/{theirs['line']}", {"quantity": 1}),
        ("delete", f"/plans/{plan}/bom/lines/{theirs['line']}", None),
        ("get", f"/plans/{theirs['plan']}/purchase-orders", None),
        ("post", f"/plans/{theirs['plan']}/purchase-orders", {"supplier": mine["supplier"]}),
        ("get", f"/plans/{plan}/purchase-orders/{theirs['order']}", None),
        ("patch", f"/plans/{plan}/purchase-orders/{theirs['order']}", {"notes": "x"}),
    ]


def _ids(demo, other):
    plan, _, organisation = demo
    mine = {
        "supplier": Supplier.objects.filter(organisation=organisation).first().pk,
        "offer": Offer.objects.filter(supplier__organisation=organisation).first().pk,
        "line": BomLine.objects.filter(plan=plan).first().pk,
        "order": PurchaseOrder.objects.filter(plan=plan).first().pk,
        "plan": plan.pk,
    }
    theirs = {key: row.pk for key, row in other.items()}
    return plan.pk, mine, theirs


def test_another_organisations_ids_are_404_and_untouched(owner, demo, other):
    plan, mine, theirs = _ids(demo, other)
    before = plan_export(other["plan"])
    for method, url, body in _operations(plan, mine, theirs):
        if "{" in url or url in ("/suppliers",):
            continue
        response = owner.call(method, url, body)
        assert response.status_code == 404, (method, url, response.content)
        assert response.json() == {"errors": {"__all__": ["Not found."]}}
    other["offer"].refresh_from_db()
    assert other["offer"].unit_price == Decimal("100")
    assert plan_export(other["plan"]) == before


def test_viewers_read_but_do_not_write(viewer, demo, other):
    plan, mine, _ = _ids(demo, other)
    supplier_count, offer_count = Supplier.objects.count(), Offer.objects.count()
    for method, url, body in _operations(plan, mine, mine):
        response = viewer.call(method, url, body)
        if method == "get":
            assert response.status_code == 200, (url, response.content)
        else:
            assert response.status_code == 403, (method, url, response.content)
            assert response.json()["errors"]["auth"] == [
                "Viewers can read plans but not change them."
            ]
    assert (Supplier.objects.count(), Offer.objects.count()) == (supplier_count, offer_count)


def test_no_token_is_401(client, demo, other):
    plan, mine, _ = _ids(demo, other)
    anonymous = Api(client, None)
    for method, url, body in _operations(plan, mine, mine):
        response = anonymous.call(method, url, body)
        assert response.status_code == 401, (method, url)
        assert "auth" in response.json()["errors"]


# --- Portable plan files -----------------------------------------------------------------------


def _as_imported(document: dict) -> dict:
    """The document as its imported plan exports it: named apart by the import's date."""
    name = imported_name(document["plan"]["name"], timezone.localdate())
    return document | {"plan": document["plan"] | {"name": name}}


def test_purchase_orders_round_trip_in_the_plan_file(owner, demo, client, org_b, owner_b):
    plan = demo[0]
    document = owner.get(f"/plans/{plan.pk}/export").json()
    assert document["version"] == 3
    orders = document["purchase_orders"]
    assert len(orders) == PurchaseOrder.objects.filter(plan=plan).count() > 0
    assert all(o["lines"] and isinstance(o["supplier"], str) for o in orders)
    b = Api(client, _token(org_b, owner_b))

    imported = b.post("/plans/import", document)

    assert imported.status_code == 201, imported.content
    copy_id = imported.json()["id"]
    assert b.get(f"/plans/{copy_id}/export").json() == _as_imported(document)
    copied = PurchaseOrder.objects.filter(plan_id=copy_id)
    assert copied.count() == len(orders)
    assert all(o.supplier.organisation == org_b for o in copied)
    assert all(
        line.offer.supplier_id == o.supplier_id and line.bom_line.plan_id == copy_id
        for o in copied
        for line in o.lines.all()
    )


def test_an_order_without_lines_keeps_its_supplier_in_the_file(demo, client, org_b, owner_b):
    plan = demo[0]
    order = PurchaseOrder.objects.filter(plan=plan).first()
    # The supplier's orders for every site (one order per supplier and site) lose their lines.
    PurchaseOrderLine.objects.filter(order__plan=plan, order__supplier=order.supplier).delete()
    Offer.objects.filter(supplier=order.supplier).delete()
    document = plan_export(plan)
    assert order.supplier.name in {s["name"] for s in document["suppliers"]}
    b = Api(client, _token(org_b, owner_b))
    imported = b.post("/plans/import", document)
    assert imported.status_code == 201, imported.content
    assert b.get(f"/plans/{imported.json()['id']}/export").json() == _as_imported(document)


def test_a_version_1_file_still_imports(owner, demo, client, org_b, owner_b):
    document = plan_export(demo[0])
    old = {k: v for k, v in document.items() if k != "purchase_orders"} | {"version": 1}
    b = Api(client, _token(org_b, owner_b))
    response = b.post("/plans/import", old)
    assert response.status_code == 201, response.content
    assert not PurchaseOrder.objects.filter(plan_id=response.json()["id"]).exists()
    # The orders section is known in any version (the document's schema says so): a version 1
    # file that carries one imports its orders as a version 2 file would.
    with_orders = b.post("/plans/import", old | {"purchase_orders": document["purchase_orders"]})
    assert with_orders.status_code == 201, with_orders.content
    orders = PurchaseOrder.objects.filter(plan_id=with_orders.json()["id"])
    assert orders.count() == len(document["purchase_orders"])


def test_hostile_purchase_orders_get_a_clear_error_and_create_nothing(demo, client, org_b, owner_b):
    from planner.models import Plan

    document = plan_export(demo[0])
    order = document["purchase_orders"][0]
    line = order["lines"][0]
    foreign_ref = next(
        o["ref"]
        for s in document["suppliers"]
        if s["name"] != order["supplier"]
        for o in s["offers"]
    )
    cases = {
        "unknown supplier": ({**order, "supplier": "Nobody Ltd"}, "purchase_orders[0].supplier"),
        "supplier not text": ({**order, "supplier": ["x"]}, "purchase_orders[0].supplier"),
        "unknown bom line": (
            {**order, "lines": [{**line, "bom_line": "manual:nothing"}]},
            "purchase_orders[0].lines[0].bom_line",
        ),
        "another supplier's offer": (
            {**order, "lines": [{**line, "offer": foreign_ref}]},
            "purchase_orders[0].lines[0].offer",
        ),
        "bad status": ({**order, "status": "lost"}, "purchase_orders[0].status"),
        "zero quantity": (
            {**order, "lines": [{**line, "quantity": 0}]},
            "purchase_orders[0].lines[0].quantity",
        ),
        "unknown field": ({**order, "id": 3}, "purchase_orders[0]"),
        "lines not a list": ({**order, "lines": "all"}, "purchase_orders[0].lines"),
    }
    b = Api(client, _token(org_b, owner_b))
    before = (Plan.objects.count(), PurchaseOrder.objects.count(), Supplier.objects.count())
    for name, (bad, where) in cases.items():
        hostile = copy.deepcopy(document)
        hostile["purchase_orders"] = [bad]
        response = b.post("/plans/import", hostile)
        assert response.status_code == 422, (name, response.content)  # the file's content
        assert response.json()["errors"].get(where), (name, response.json())
        assert (Plan.objects.count(), PurchaseOrder.objects.count(), Supplier.objects.count()) == (
            before
        ), name
    twice = copy.deepcopy(document)
    twice["purchase_orders"] = [order, order]
    response = b.post("/plans/import", twice)
    assert response.json()["errors"]["purchase_orders[1].reference"] == [
        "Two orders with the same reference."
    ]


def test_a_duty_decision_over_the_api_and_in_the_plan_file(owner, viewer, demo, client, org_b,
                                                          owner_b):  # fmt: skip
    """Section 232 (end use) on the US servers pinned to a Taiwan-made offer: listed as
    unconfirmed with its exposure, decided over the API (the form's rules: a reason for "does
    not apply"), refused to a viewer, and carried by the plan file."""
    from planner.engine.tariff_defaults import SECTION_232
    from tests.factories import OfferFactory, SupplierFactory

    plan = demo[0]
    line = BomLine.objects.get(plan=plan, category="server", site__country="US")
    supplier = SupplierFactory(organisation=plan.organisation, name="Formosa Servers", country="TW")
    line.pinned_offer = OfferFactory(
        supplier=supplier, server=line.server, unit_price=Decimal(300000), incoterm="FCA",
        origin_country="TW", ship_from_country="TW",
    )  # fmt: skip
    line.save()
    url = f"/plans/{plan.pk}/duty-decisions"
    [listed] = owner.get(url).json()
    exposure = Decimal(75000) * line.quantity  # 25 % of n × 300,000 EUR (no US import VAT)
    assert (listed["measure"], listed["decision"]) == (SECTION_232, "unconfirmed")
    assert Decimal(listed["exposure"]) == exposure and listed["version"] is None

    refused = owner.put(url, {"measure": SECTION_232, "decision": "does_not_apply"})
    assert refused.status_code == 422 and "reason" in refused.json()["errors"]
    assert owner.put(url, {"measure": SECTION_232, "decision": "maybe"}).status_code == 400
    unknown = owner.put(url, {"measure": "Made-up duty", "decision": "applies"})
    assert unknown.status_code == 422 and "measure" in unknown.json()["errors"]
    assert viewer.put(url, {"measure": SECTION_232, "decision": "applies"}).status_code == 403

    answer = owner.put(url, {"measure": SECTION_232, "decision": "applies"})
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["decision"] == "applies" and Decimal(body["duty_charged"]) == exposure
    assert body["exposure"] is None
    stale = owner.put(
        url, {"measure": SECTION_232, "decision": "unconfirmed", "version": body["version"] + 5}
    )
    assert stale.status_code == 409

    document = owner.get(f"/plans/{plan.pk}/export").json()
    assert document["measure_decisions"] == [
        {"measure": SECTION_232, "decision": "applies", "reason": ""}
    ]
    b = Api(client, _token(org_b, owner_b))
    imported = b.post("/plans/import", document)
    assert imported.status_code == 201, imported.content
    assert (
        b.get(f"/plans/{imported.json()['id']}/export").json()["measure_decisions"]
        == (document["measure_decisions"])
    )
    bad = copy.deepcopy(document)
    bad["measure_decisions"] = [{"measure": SECTION_232, "decision": "does_not_apply"}]
    refused = b.post("/plans/import", bad)
    assert refused.status_code in (400, 422)
    assert "measure_decisions[0].reason" in refused.json()["errors"]
