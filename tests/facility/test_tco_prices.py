"""TCO hardware figures from the plan's own offers and BOM, checked by hand."""

from decimal import Decimal

import pytest

from planner.facility import services
from planner.facility.models import TcoSettings
from sourcing.demo import sourcing_demo_build
from sourcing.models import BomLine

EUR_USD = 1.0870  # the demo's rate dated 3 days before the order date


@pytest.fixture
def sourced_plan(sized_plan, consultant_a):
    """The sized plan with the demo's suppliers, offers, FX rates and generated BOM."""
    sourcing_demo_build(plan=sized_plan, user=consultant_a)
    return sized_plan


def _qty(plan, part_key: str) -> int:
    return BomLine.objects.get(plan=plan, part_key=part_key).quantity


def test_server_price_is_the_plans_cheapest_valid_offer(sourced_plan):
    build = services.tco_inputs_build(plan=sourced_plan)

    # US offer 489,000 USD against the Dutch 474,000 EUR × 1.0870 = 515,238 USD; the older
    # Dutch quote (464,000 EUR) expired before the order date and is not used.
    assert build.inputs.hardware.server_price_usd == pytest.approx(489_000)
    assert any("the plan's supplier offer, Prairie Systems Supply" in line for line in build.basis)
    assert "1 EUR = 1.0870 USD" in " ".join(build.basis)


def test_maintenance_comes_from_the_boms_support_line(sourced_plan):
    hw = services.tco_inputs_build(plan=sourced_plan).inputs.hardware
    # The support contract is the maintenance: bought for 3 years, paid once, at 20 % of the
    # 474,000 EUR street price a year: 0.20 × 3 × 474,000 = 284,400 EUR per server
    # × 1.0870 = 309,142.80 USD per server, for 36 months.
    assert hw.maintenance_fraction_per_year == 0.0
    ((amount, term),) = hw.support_contracts
    assert term == 36
    assert amount == pytest.approx(284_400 * EUR_USD * hw.server_count)

    TcoSettings.objects.create(plan=sourced_plan, maintenance_pct_per_year=Decimal("12"))
    hw = services.tco_inputs_build(plan=sourced_plan).inputs.hardware
    assert hw.maintenance_fraction_per_year == pytest.approx(0.12)


def test_network_capex_is_the_boms_network_lines(sourced_plan):
    build = services.tco_inputs_build(plan=sourced_plan)
    # Every replica fits one server, so the pooled deployment buys the front-end network:
    # its switch, 100G optics and cables; the DGX servers ship with their own NICs.
    assert not BomLine.objects.filter(plan=sourced_plan, category="nic").exists()
    switch = _qty(sourced_plan, "switch:switch-eth-front-end:leaf")
    optic = _qty(sourced_plan, "optic:optic-100g-qsfp28")
    cable = _qty(sourced_plan, "cable:cable-fiber-mpo")
    expected = (
        switch * min(14_800 * EUR_USD, 16_200)  # Dutch EUR offer vs US USD offer
        + optic * min((110 if optic >= 100 else 120) * EUR_USD, 135)
        + cable * 95 * EUR_USD
    )
    assert build.inputs.hardware.network_usd == pytest.approx(expected)
    assert any(line.startswith("Network capex") and "from the BOM" in line for line in build.basis)
    assert not any("fallback 19%" in line for line in build.basis)


def test_a_pinned_offer_wins_over_the_cheapest(sourced_plan):
    line = BomLine.objects.get(plan=sourced_plan, server__isnull=False)
    dutch = line.server.offers.get(currency="EUR", notes="")
    line.pinned_offer = dutch
    line.save()
    hw = services.tco_inputs_build(plan=sourced_plan).inputs.hardware
    assert hw.server_price_usd == pytest.approx(474_000 * EUR_USD)
