"""A consultant generates the BOM, pins an offer, reads the landed cost and the Gantt chart,
orders from a supplier, marks the shipment late and sees go-live move."""

import re
from datetime import date
from decimal import Decimal

import pytest

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser


@pytest.fixture
def sourcing_plan(demo_user):
    from catalog.models import Accelerator, ModelArchitecture, Part, ServerPlatform
    from planner.models import Client, Membership, Plan, Workload
    from sourcing.models import FxRate, Offer, PurchaseOrder, SourcingSettings, Supplier
    from sourcing.services import tariffs_load_defaults

    membership = Membership.objects.get(user__username=demo_user[0])
    org = membership.organisation
    client = Client.objects.create(organisation=org, name="Acme NL", country="NL")
    plan = Plan.objects.create(organisation=org, client=client, name="Chat build", currency="EUR",
                               target_go_live=date(2027, 6, 1))  # fmt: skip
    Workload.objects.create(
        plan=plan, name="Chat", model=ModelArchitecture.objects.get(slug="llama-3.1-70b"),
        input_tokens_mean=1000, output_tokens_mean=300, ttft_ms=1000, tpot_ms=50,
        peak_concurrency=100, chosen_accelerator=Accelerator.objects.get(slug="h100-sxm"),
        chosen_server=ServerPlatform.objects.get(slug="nvidia-dgx-h100"), chosen_precision="fp8",
        chosen_tensor_parallel=4, chosen_replicas=4, chosen_accelerators=16, chosen_servers=2,
    )  # fmt: skip
    SourcingSettings.objects.create(
        plan=plan, destination_country="NL", order_date=date(2026, 8, 3)
    )
    tariffs_load_defaults()
    FxRate.objects.update_or_create(
        from_currency="EUR", to_currency="USD", as_of=date(2026, 7, 31),
        defaults={"rate": Decimal("1.087")},
    )  # fmt: skip
    # Start from no supplier (the demo builder may have added its own).
    PurchaseOrder.objects.filter(plan__organisation=org).delete()
    Supplier.objects.filter(organisation=org).delete()
    nl = Supplier.objects.create(organisation=org, name="Dutch Dist", country="NL")
    us = Supplier.objects.create(organisation=org, name="US Dist", country="US")
    dgx = ServerPlatform.objects.get(slug="nvidia-dgx-h100")
    common = {"quoted_on": date(2026, 7, 20), "valid_until": date(2026, 12, 31)}
    Offer.objects.create(supplier=us, server=dgx, unit_price=Decimal("305000"), currency="USD",
                         lead_time_days=90, origin_country="US", incoterm="FCA", **common)  # fmt: skip
    Offer.objects.create(supplier=nl, server=dgx, unit_price=Decimal("298000"), currency="EUR",
                         lead_time_days=140, origin_country="TW", incoterm="DAP", **common)  # fmt: skip
    Offer.objects.create(supplier=nl, part=Part.objects.get(slug="rack-42u"),
                         unit_price=Decimal("1650"), currency="EUR", lead_time_days=21,
                         origin_country="NL", incoterm="DAP", **common)  # fmt: skip
    return plan


def test_bom_offers_landed_cost_gantt_and_a_late_shipment(page, live_server, demo_user,
                                                          sourcing_plan):  # fmt: skip
    base = live_server.url
    sign_in(page, base, *demo_user)
    page.goto(f"{base}/plans/{sourcing_plan.pk}/sourcing/")
    page.get_by_test_id("generate-bom").click()
    page.get_by_test_id("bom-line").first.wait_for()
    assert page.get_by_test_id("bom-line").count() >= 10
    # The BOM buys the pooled deployment's servers: 3 replicas of TP 4 (the fourth was the
    # workload's own spare) fill 2 DGX H100s, plus one spare server for the platform.
    from sourcing.models import BomLine

    servers = BomLine.objects.get(plan=sourcing_plan, server__isnull=False)
    assert servers.quantity == 3

    # Pin the Dutch server offer: the select posts on change and htmx swaps the section.
    server_row = page.locator("[data-testid=bom-line]", has_text="NVIDIA DGX H100").first
    select = server_row.locator("select")
    dutch = select.locator("option", has_text="Dutch Dist").get_attribute("value")
    select.select_option(value=dutch)
    page.wait_for_selector(
        "#bom-section select option[selected]:has-text('Dutch Dist')", state="attached"
    )

    page.click("text=Landed cost")
    page.wait_for_url(re.compile(r"/sourcing/landed-cost/$"))
    lines = page.get_by_test_id("landed-lines").inner_text()
    assert "Dutch Dist" in lines and "pinned" in lines
    assert "US Dist" in lines  # the alternative, with its cost and date
    # The Dutch distributor's server to a Dutch site is a domestic supply: no duty, no import VAT.
    server_rule = page.locator("[data-testid=landed-line]", has_text="NVIDIA DGX H100").first
    assert "Domestic supply (NL → NL)" in server_rule.get_by_test_id("supply-rule").inner_text()
    total = page.get_by_test_id("landed-total").inner_text()
    assert "EUR" in total
    assert re.search(r"incomplete: \d+ lines? not priced", total)  # lines without an offer

    # Back to the cheapest offer, then order the servers from the US distributor.
    page.goto(f"{base}/plans/{sourcing_plan.pk}/sourcing/")
    server_row = page.locator("[data-testid=bom-line]", has_text="NVIDIA DGX H100").first
    server_row.locator("select").select_option(value="")
    page.wait_for_timeout(500)
    page.goto(f"{base}/plans/{sourcing_plan.pk}/sourcing/timeline/")
    page.wait_for_selector("[data-rendered=true] .main-svg")
    go_live = page.get_by_test_id("go-live").inner_text()
    # The site has no power-ready date: the go-live says so beside the date, never silently.
    assert "2026-11-24" in go_live and "power date unknown" in go_live

    page.click("text=Purchase orders")
    page.select_option("#id_supplier", label="US Dist")
    page.fill("#id_logistics_owner", "Mila Jansen")
    page.click("button:has-text('Create purchase order')")
    page.wait_for_url(re.compile(r"/orders/\d+/$"))
    assert page.get_by_test_id("order-status").inner_text() == "Planned"

    page.fill("#id_ordered_actual", "2026-08-03")
    page.fill("#id_shipped_actual", "2026-11-11")  # expected 2026-11-01: ten days late
    page.click("[data-testid=order-form] button[type=submit]")
    page.wait_for_selector("text=10 days late")
    assert page.get_by_test_id("order-status").inner_text() == "Shipped"

    page.click("text=Timeline & go-live")
    page.wait_for_selector("[data-rendered=true] .main-svg")
    assert "2026-12-04" in page.get_by_test_id("go-live").inner_text()
    assert "moved +10 days" in page.get_by_test_id("go-live-moved").inner_text()
    assert (
        "PO-001 from US Dist: supplier lead time" in page.get_by_test_id("responsible").inner_text()
    )
