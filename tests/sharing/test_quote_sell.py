"""The client's quote in sell prices only (markups, services and fees, payment terms,
validity); buy prices and suppliers on the internal cost sheet, never through a share link."""

import html
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
    settings.payment_milestones = [
        {"pct": "40", "when": "on order"}, {"pct": "60", "when": "on delivery"},
    ]  # fmt: skip
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
    assert sell["Optical transceiver"]["markup_source"] == "global"
    quote = priced.snapshot["quote"]["sell"]
    goods = sum(D(x["sell"]) for x in quote["lines"])
    assert D(quote["fees_total"]) == D("12") * 1200 + 3 * D("9500")  # 42,900.00
    assert D(quote["total_sell"]) == goods + D("42900")
    # The margin at unit-price rounding: (unit sell − unit cost in cents) × quantity.
    margin = sum(
        (D(s["unit_sell"]) - (D(b["landed_net"]["amount"]) / b["quantity_ordered"]).quantize(
            D("0.01"), rounding=ROUND_HALF_UP)) * b["quantity_ordered"]
        for b, s in zip(bom_lines, sell_lines, strict=True)
    )  # fmt: skip
    assert D(quote["margin"]) == margin > 0


def test_the_client_quote_pdf_shows_sell_prices_only(priced):
    text = _flat(pdf_text(services.document_render(revision=priced, kind="quote"))[0])
    sell = priced.snapshot["quote"]["sell"]
    bom = priced.snapshot["bom"]

    assert format_money(D(sell["total_sell"]), "EUR") in text
    server = next(x for x in sell["lines"] if x["category"] == "server")
    assert format_money(D(server["unit_sell"]), "EUR") in text
    assert "Design" in text and "12 days" in text and "3 years" in text
    assert "40 % on order" in text and "60 % on delivery" in text and "Valid until" in text
    for name in SUPPLIERS:
        assert name not in text
    server_cost = next(x for x in bom["lines"] if x["category"] == "server")["landed_net"]
    assert format_money(D(server_cost["amount"]), "EUR") not in text  # no buy price
    assert "Duty" not in text and "margin" not in text.lower()


def test_the_quote_pdf_groups_bought_services_with_the_fees(priced):
    # Installation, burn-in and support (BOM service lines) are services: under "Services and
    # fees", whose total is their sell plus the fees; "Hardware, delivered" is the rest.
    text = _flat(pdf_text(services.document_render(revision=priced, kind="quote"))[0])
    sell = priced.snapshot["quote"]["sell"]
    hardware = sum(D(x["sell"]) for x in sell["lines"] if x["category"] != "service")
    bought = sum(D(x["sell"]) for x in sell["lines"] if x["category"] == "service")
    assert bought > 0
    hardware_part = text[text.index("Hardware, delivered") : text.index("Services and fees")]
    services_part = text[text.index("Services and fees") : text.index("Total, excluding VAT")]
    assert "Installation" not in hardware_part and "Support contract" not in hardware_part
    assert "Installation" in services_part and "Support contract" in services_part
    totals = text[text.rindex("Hardware, delivered") :]
    assert f"Hardware, delivered {format_money(hardware, 'EUR')}" in totals
    services_and_fees = bought + D(sell["fees_total"])
    assert f"Services and fees {format_money(services_and_fees, 'EUR')}" in totals
    assert hardware + services_and_fees == D(sell["total_sell"])


def test_a_zero_markup_shows_a_margin_of_exactly_zero(signed_in, plan):
    # The demo at its default 0 % markup: every unit sells at its unit cost in cents.
    page = signed_in.get(reverse("sourcing:quote", args=[plan.pk])).content.decode()
    margin = page[page.index('data-testid="quote-margin"') :]
    assert margin[margin.index(">") + 1 :].startswith(format_money(D("0.00"), "EUR"))


def test_the_quote_page_groups_the_sold_lines_by_site_as_the_pdf_does(signed_in, plan):
    from sourcing.models import BomLine

    lines = BomLine.objects.filter(plan=plan, quantity__gt=0).select_related("site")
    per_site = {}
    for x in lines:
        per_site.setdefault(x.site.name if x.site_id else "Plan-wide", set()).add(x.description)
    assert len(per_site) == 3  # the demo's two sites and its plan-wide lines
    at_both = set.intersection(*(d for k, d in per_site.items() if k != "Plan-wide"))
    assert at_both  # parts bought for each site: one row under each site's header

    page = signed_in.get(reverse("sourcing:quote", args=[plan.pk])).content.decode()
    table = page[page.index('data-testid="quote-sell"') : page.index("</tbody>")]
    parts = re.split(
        r'<tr class="site-group" data-testid="quote-site"><th[^>]*>([^<]*)</th></tr>', table
    )
    groups = dict(zip(parts[1::2], parts[2::2], strict=True))
    # Each site once, in one group, and every line of the site under its header.
    assert len(parts[1::2]) == len(groups) and set(groups) == set(per_site)
    for site, descriptions in per_site.items():
        shown = [html.unescape(d) for d in re.findall(r"<tr><td>([^<]*)</td>", groups[site])]
        # (a support line's row adds its term to the description)
        assert all(any(row.startswith(d) for row in shown) for d in descriptions), site


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
    assert "40 % on order" in bom_section and "60 % on delivery" in bom_section
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

    bad = signed_in.post(
        url, {"markup_pct": "1001", "payment_milestones": "x", "validity_days": "0"}
    )
    text = bad.content.decode()
    assert bad.status_code == 400
    assert "Between 0 and 1,000 %" in text and "Between 1 and 365 days" in text
    assert 'value="1001"' in text

    # A negative markup is an unstated discount: refused next to the field, nothing saved.
    negative = signed_in.post(url, {"markup_pct": "-1", "payment_milestones": "100 % on order",
                                    "validity_days": "30", "payment_due_days": "30",
                                    "delivery_terms": "DDP", "warranty_terms": "3 years",
                                    "category_server": "-5"})  # fmt: skip
    text = negative.content.decode()
    assert negative.status_code == 400 and text.count("Between 0 and 1,000 %") == 2
    assert 'value="-1"' in text
    assert quote_settings_get(plan=plan).markup_pct == D(0)

    ok = signed_in.post(url, {
        "markup_pct": "12.5", "payment_milestones": "100 % on delivery", "validity_days": "45",
        "payment_due_days": "30", "delivery_terms": "DDP", "warranty_terms": "3 years",
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
