"""The client's quote in sell prices only (markups, services and fees, payment terms,
validity); buy prices and suppliers on the internal cost sheet, never through a share link."""

import re
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from zoneinfo import ZoneInfo

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from planner.money import format_money
from planner.pdf import context as pdf_context
from planner.sharing import services
from tests.sharing.conftest import pdf_text

D = Decimal
SUPPLIERS = ("Lowlands Compute Distributie", "Prairie Systems Supply")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture
def priced(plan, consultant):
    """The demo sold at 10 % (servers 5 %, the rack line 25 %) with design and support."""
    from sourcing.models import BomLine, QuoteFee
    from sourcing.quote import quote_settings_get

    settings = quote_settings_get(plan=plan)
    rack = BomLine.objects.filter(plan=plan, category="rack").first()  # one per site: same part
    settings.markup_pct = D(10)
    settings.category_markups = {"server": "5"}
    settings.line_markups = {rack.part_key: "25"}
    settings.payment_terms = "40 % on order, 60 % on delivery."
    settings.save()
    QuoteFee.objects.create(plan=plan, kind="design", description="Design", quantity=12,
                            unit="days", unit_price=D("1200"))  # fmt: skip
    QuoteFee.objects.create(plan=plan, kind="support", description="Support", quantity=3,
                            unit="years", unit_price=D("9500"))  # fmt: skip
    revision = services.revision_publish(
        plan=plan, user=consultant, note="with markups", with_open_items=True
    )
    return revision


def test_sell_prices_by_hand_from_the_snapshot(priced):
    # Each site has its own lines (the demo: Frankfurt and Ashburn): checked site by site.
    bom_lines = priced.snapshot["bom"]["lines"]
    sell_lines = priced.snapshot["quote"]["sell"]["lines"]
    assert len(bom_lines) == len(sell_lines)
    site = next(row["site"] for row in bom_lines if row["category"] == "server")
    bom = {row["description"]: row for row in bom_lines if row["site"] == site}
    sell = {
        s["description"]: s for b, s in zip(bom_lines, sell_lines, strict=True) if b["site"] == site
    }

    def expected_unit(description, pct):
        row = bom[description]
        unit_cost = D(row["landed_net"]["amount"]) / row["quantity_ordered"]
        return (unit_cost * (1 + D(pct) / 100)).quantize(D("0.01"), rounding=ROUND_HALF_UP)

    server = sell["NVIDIA DGX B200"]
    assert (server["markup_pct"], server["markup_source"]) == ("5", "category")
    assert D(server["unit_sell"]) == expected_unit("NVIDIA DGX B200", 5)
    assert D(server["sell"]) == D(server["unit_sell"]) * bom["NVIDIA DGX B200"]["quantity_ordered"]
    assert sell["Rack"]["markup_source"] == "line"
    assert D(sell["Rack"]["unit_sell"]) == expected_unit("Rack", 25)
    assert sell["Front-end Ethernet NIC"]["markup_source"] == "global"
    quote = priced.snapshot["quote"]["sell"]
    goods = sum(D(x["sell"]) for x in quote["lines"])
    assert D(quote["fees_total"]) == D("12") * 1200 + 3 * D("9500")  # 42,900.00
    assert D(quote["total_sell"]) == goods + D("42900")
    cost = sum(D(x["landed_net"]["amount"]) for x in bom_lines)
    assert D(quote["margin"]) == goods - cost > 0


def test_the_client_quote_pdf_shows_sell_prices_only(priced):
    text = _flat(pdf_text(services.document_render(revision=priced, kind="quote"))[0])
    sell = priced.snapshot["quote"]["sell"]
    bom = priced.snapshot["bom"]

    assert format_money(D(sell["total_sell"]), "EUR") in text
    server = next(x for x in sell["lines"] if x["category"] == "server")
    assert format_money(D(server["unit_sell"]), "EUR") in text
    assert "Design" in text and "12 days" in text and "3 years" in text
    assert "40 % on order, 60 % on delivery." in text and "valid until" in text
    for name in SUPPLIERS:
        assert name not in text
    server_cost = next(x for x in bom["lines"] if x["category"] == "server")["landed_net"]
    assert format_money(D(server_cost["amount"]), "EUR") not in text  # no buy price
    assert "Duty" not in text and "margin" not in text.lower()


def test_the_cost_sheet_has_suppliers_buy_prices_and_margin(priced):
    text = _flat(pdf_text(services.document_render(revision=priced, kind="cost_sheet"))[0])
    sell = priced.snapshot["quote"]["sell"]

    assert "Internal — for Demo Co only." in text
    assert all(name in text for name in SUPPLIERS)
    assert format_money(D(sell["margin"]), "EUR") in text
    assert format_money(D(sell["total_sell"]), "EUR") in text


def test_the_share_page_shows_sell_prices_only(priced):
    from planner.sharing.body import BODY_TEMPLATE, revision_view_context

    html = _flat(render_to_string(BODY_TEMPLATE, revision_view_context(priced)))
    sell = priced.snapshot["quote"]["sell"]

    bom_section = html[html.index('id="section-bom"') : html.index('id="section-timeline"')]
    assert format_money(D(sell["total_sell"]), "EUR") in bom_section
    assert "40 % on order, 60 % on delivery." in bom_section
    assert not any(name in bom_section for name in SUPPLIERS)
    assert "Import VAT" not in html and "Landed (net)" not in html and "Duty" not in bom_section


def test_the_cost_sheet_is_never_served_through_a_share_link(client, signed_in, plan, priced,
                                                             consultant):  # fmt: skip
    link = services.share_link_create(
        plan=plan, user=consultant, revision=None, expires_at=None, note="client"
    )
    client.logout()
    assert (
        client.get(reverse("sharing:public_document", args=[link.token, "quote"])).status_code
        == 200
    )
    for name in ("sharing:public_document", "sharing:public_document_status"):
        response = client.get(reverse(name, args=[link.token, "cost_sheet"]))
        assert response.status_code == 404
    public = client.get(reverse("sharing:public", args=[link.token])).content.decode()
    assert "cost_sheet" not in public and "Internal cost sheet" not in public
    bom_section = public[public.index('id="section-bom"') : public.index('id="section-timeline"')]
    assert not any(name in bom_section for name in SUPPLIERS)
    # The consultancy downloads it.
    signed_in.force_login(consultant)
    own = signed_in.get(reverse("sharing:document", args=[plan.pk, priced.number, "cost_sheet"]))
    assert own.status_code == 200 and own["Content-Type"] == "application/pdf"


def test_the_quote_is_dated_by_its_publication_never_today(priced):
    published = datetime(2026, 3, 5, 9, 30, tzinfo=ZoneInfo("UTC"))
    snapshot = dict(priced.snapshot, quote=dict(priced.snapshot["quote"], date="2026-03-04"))
    head = {"revision_number": 7, "published_at": published, "published_by": "Dana"}

    assert pdf_context.quote_context(snapshot, **head).quote_date.isoformat() == "2026-03-05"
    assert pdf_context.cost_sheet_context(snapshot, **head).quote_date.isoformat() == "2026-03-05"
    undated = dict(snapshot, quote={k: v for k, v in snapshot["quote"].items() if k != "date"})
    head_none = dict(head, published_at=None)
    assert pdf_context.quote_context(undated, **head_none).quote_date is None  # not today
    doc = services.document_context(revision=priced, kind="quote")
    assert doc.quote_date == priced.published_at.date()


def test_quote_settings_form_validates_and_saves_markups(signed_in, plan):
    from sourcing.models import BomLine
    from sourcing.quote import quote_settings_get

    rack = BomLine.objects.filter(plan=plan, category="rack").first()
    url = reverse("sourcing:quote", args=[plan.pk])
    page = signed_in.get(url)
    assert page.status_code == 200 and "Markup % on Servers" in page.content.decode()

    bad = signed_in.post(url, {"markup_pct": "1001", "payment_terms": "x", "validity_days": "0"})
    text = bad.content.decode()
    assert bad.status_code == 400
    assert "Between 0 and 1,000 %" in text and "greater than or equal to 1" in text
    assert 'value="1001"' in text

    # A negative markup is an unstated discount: refused next to the field, nothing saved.
    negative = signed_in.post(url, {"markup_pct": "-1", "payment_terms": "x", "validity_days": "30",
                                    "category_server": "-5"})  # fmt: skip
    text = negative.content.decode()
    assert negative.status_code == 400 and text.count("Between 0 and 1,000 %") == 2
    assert 'value="-1"' in text
    assert quote_settings_get(plan=plan).markup_pct == D(0)

    ok = signed_in.post(url, {
        "markup_pct": "12.5", "payment_terms": "Net 30.", "validity_days": "45",
        "category_server": "4", f"line_{rack.part_key}": "", "category_rack": "",
    })  # fmt: skip
    assert ok.status_code == 302
    settings = quote_settings_get(plan=plan)
    assert (settings.markup_pct, settings.validity_days) == (D("12.5"), 45)
    assert settings.category_markups == {"server": "4"} and settings.line_markups == {}


def test_fees_are_validated_and_scoped_to_the_plan(signed_in, plan, org_b):
    from planner.models import Client, Plan
    from sourcing.models import QuoteFee

    add = reverse("sourcing:quote_fee_add", args=[plan.pk])
    bad = signed_in.post(add, {"kind": "support", "description": "Support", "quantity": "2.5",
                               "unit": "days", "unit_price": "100"})  # fmt: skip
    assert bad.status_code == 400 and "Support is sold in years." in bad.content.decode()
    ok = signed_in.post(add, {"kind": "project_management", "description": "PM",
                              "quantity": "20", "unit": "days", "unit_price": "950"})  # fmt: skip
    assert ok.status_code == 302
    fee = QuoteFee.objects.get(plan=plan)
    other = Plan.objects.create(
        organisation=org_b, client=Client.objects.create(organisation=org_b, name="B"), name="B"
    )
    foreign = signed_in.post(reverse("sourcing:quote_fee_delete", args=[other.pk, fee.pk]))
    assert foreign.status_code == 404
    assert signed_in.get(reverse("sourcing:quote", args=[other.pk])).status_code == 404
    gone = signed_in.post(reverse("sourcing:quote_fee_delete", args=[plan.pk, fee.pk]))
    assert gone.status_code == 302 and not QuoteFee.objects.exists()
