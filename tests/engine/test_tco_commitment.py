"""A 3-year cloud commitment against owning, by hand; the listing per user region; the
sourced default discounts (planner.engine.cloud_regions)."""

from __future__ import annotations

import dataclasses

import pytest

from planner.engine import cloud_regions as cr
from planner.engine.errors import EngineInputError
from planner.engine.tco import (
    CloudPricing,
    CloudProvider,
    OwnedHardware,
    SiteCost,
    TcoInputs,
    WorkloadDemand,
    run_tco,
)

AREAS = {"eu-west": "EU", "eu-central": "EU", "us-east": "US", "us-central": "US"}


def _three_year_case(**provider) -> TcoInputs:
    """8 GPUs busy around the clock for 36 months, at an 8 % discount rate.

    Cloud: one 8-GPU instance, on-demand 80 USD/instance-h; no commitment listed, so AWS's
    sourced defaults apply: 1-year 80 × (1 − 0.41) = 47.2, 3-year 80 × (1 − 0.64) = 28.8.
    Owned: one 8-GPU server at 300,000 USD, staff 2,000 USD a month, no power, space,
    maintenance or spares; straight-line book value over 60 months, nothing residual.
    """
    one, _ = cr.committed_price("AWS", 80.0, None, "1yr")
    three, _ = cr.committed_price("AWS", 80.0, None, "3yr")
    return TcoInputs(
        workloads=(WorkloadDemand("chat", 8 * 730.0, cloud_gpus_by_hour=(8.0,) * 24),),
        cloud=CloudPricing(10.0),
        hardware=OwnedHardware(
            server_count=1,
            gpus_per_server=8,
            server_price_usd=300_000.0,
            server_power_kw=10.0,
            network_usd=0.0,
            spares_fraction=0.0,
            maintenance_fraction_per_year=0.0,
            residual_fraction=0.0,
            lifetime_months=60,
        ),
        sites=(SiteCost("owned", "Own DC", "owned", 0.0, 1.0, 0.0, 2_000.0),),
        horizon_months=36,
        cost_of_capital=0.08,
        providers=(
            CloudProvider(
                "aws",
                "AWS p5.48xlarge (eu-central-1)",
                8,
                80.0,
                commit_1yr_usd_per_instance_h=one,
                commit_3yr_usd_per_instance_h=three,
                **provider,
            ),
        ),
    )


def test_three_year_commitment_against_owned_by_hand():
    result = run_tco(_three_year_case())
    three = result.by_key("cloud_committed_3yr:aws")
    owned = result.by_key("owned")
    # 3-year: 1 instance × 730 h × 28.8 = 21,024 USD every month, the whole term inside the
    # horizon (nothing owed after it); on-demand would be 730 × 80 = 58,400 a month.
    assert three.monthly_usd[0] == pytest.approx(21_024.0)
    assert three.monthly_usd[35] == pytest.approx(21_024.0)
    assert three.terminal_value_usd == 0.0
    assert result.by_key("cloud_on_demand:aws").monthly_usd[0] == pytest.approx(58_400.0)
    assert result.by_key("cloud_committed_1yr:aws").monthly_usd[0] == pytest.approx(34_456.0)
    # NPV at 8 %: month k discounted by 1.08^(−k/12); Σ over 36 months = (1 − v³⁶)/(1 − v)
    # with v = 1.08^(−1/12): 32.24950. 3-year: 21,024 × 32.24950 = 678,013.47.
    assert three.npv_usd == pytest.approx(678_013.47, abs=0.05)
    # Owned: 300,000 at month 1 + 2,000 × 32.24950 − book value 300,000 × (1 − 36/60) =
    # 120,000 credited at 36 months (÷ 1.08³ = 95,259.87): 269,239.13.
    assert owned.terminal_value_usd == pytest.approx(120_000.0)
    assert owned.npv_usd == pytest.approx(269_239.13, abs=0.05)
    # The cheapest cloud option, the 3-year commitment, is the reference: owning's cumulative
    # 300,000 + 2,000 m first reaches 21,024 m at m = 300,000 / 19,024 = 15.8 → month 16
    # (against on-demand it would be 300,000 / 56,400 = 5.3 → month 6).
    assert result.reference_key == "cloud_committed_3yr:aws"
    assert owned.break_even_month == 16
    assert three.break_even_month is None
    assert any("36-month term" in n for n in three.notes)


def test_a_flagged_provider_is_the_reference_only_when_all_are():
    flagged = _three_year_case(flags=("No EU-region listing for AWS p5.48xlarge: us-east-1.",))
    clean = CloudProvider("lambda", "Lambda 8x H100 (eu-central)", 8, 90.0)
    both = run_tco(dataclasses.replace(flagged, providers=(*flagged.providers, clean)))
    # Lambda on-demand (90 × 730 = 65,700 a month) is dearer than AWS's 3-year, but AWS's
    # listing does not serve the EU users: the reference is Lambda's.
    assert both.reference_key == "cloud_on_demand:lambda"
    assert any("No EU-region listing" in n for n in both.by_key("cloud_committed_3yr:aws").notes)
    alone = run_tco(flagged)
    assert alone.reference_key == "cloud_committed_3yr:aws"


def test_sourced_default_discounts_and_a_listed_price_wins():
    # Epoch AI's constants (facility_tco_sourcing.md B3): AWS 41/64, GCP 37/56, Azure 25/49 %.
    assert cr.committed_price("AWS", 100.0, None, "1yr") == (pytest.approx(59.0), 0.41)
    assert cr.committed_price("GCP", 100.0, None, "3yr") == (pytest.approx(44.0), 0.56)
    assert cr.committed_price("Azure", 100.0, None, "3yr") == (pytest.approx(51.0), 0.49)
    assert cr.committed_price("AWS", 100.0, 70.0, "1yr") == (70.0, None)  # listed wins
    assert cr.committed_price("Lambda", 100.0, None, "1yr") == (None, None)  # neocloud
    with pytest.raises(EngineInputError):
        cr.committed_price("AWS", 100.0, None, "5yr")


def test_region_codes_map_to_their_geography():
    assert cr.region_key("eu-central-1") == "eu-central"
    assert cr.region_key("us-east-1 (use1-az6)") == "us-east"
    assert cr.region_key("centralus/eastus") == "us-central"
    assert cr.region_key("europe-west4") == "eu-central"
    assert cr.region_key("") is None
    assert cr.region_key("moon-base-1") is None


def test_eu_users_get_an_eu_listing_when_there_is_one():
    us = cr.Listing("us-east-1", 55.0, spot=17.0)
    eu = cr.Listing("eu-central-1", 66.0, spot=20.0)
    served = cr.listing_per_user_region([us, eu], {"eu-west": 70, "us-east": 30}, AREAS)
    assert [(r.user_region, r.listing.region, r.in_area) for r in served] == [
        ("eu-west", "eu-central-1", True),
        ("us-east", "us-east-1", True),
    ]
    # Each region's share of the load at its own price: 0.7 × 66 + 0.3 × 55 = 62.7.
    od, one, three, spot = cr.blended_prices(served)
    assert od == pytest.approx(62.7)
    assert spot == pytest.approx(0.7 * 20 + 0.3 * 17)
    assert one is None and three is None  # not listed in either region


def test_eu_users_without_an_eu_listing_are_priced_elsewhere_and_flagged():
    us = cr.Listing("us-east-1", 55.0)
    served = cr.listing_per_user_region([us], {"eu-west": 1.0}, AREAS)
    assert served[0].listing.region == "us-east-1"
    assert served[0].in_area is False
    # a listing naming no region is taken before another area's, as not confirmed
    anywhere = cr.Listing("", 60.0)
    served = cr.listing_per_user_region([us, anywhere], {"eu-west": 1.0}, AREAS)
    assert (served[0].listing.region, served[0].in_area) == ("", None)
