"""Cloud in the TCO as a buyer prices it: the listing of the region serving each user region
(flagged when the area has none), sourced commitments, and the named break-even reference.

The sized plan's users are in eu-west (68 % of the load) and us-east (32 %)."""

import pytest
from django.urls import reverse

from catalog.models import Accelerator, CloudOffering, PriceModel
from planner.facility import services
from planner.facility.models import TcoSettings


def _aws_eu_listing():
    CloudOffering.objects.create(
        provider="AWS",
        instance_type="p5.48xlarge",
        accelerator=Accelerator.objects.get(slug="h100-sxm"),
        accelerators=8,
        region="eu-central-1",
        price_model=PriceModel.ON_DEMAND,
        usd_per_hour=66.0,
        source="test listing",
    )


def test_eu_users_are_priced_at_an_eu_listing_when_the_catalog_has_one(sized_plan):
    TcoSettings.objects.create(plan=sized_plan, cloud_providers=["AWS"])
    _aws_eu_listing()
    (aws,) = services.tco_inputs_build(plan=sized_plan).inputs.providers
    # p5.48xlarge is the one AWS instance listed in both areas (p5.4xlarge only in
    # us-east-1), so it is rented: EU users at eu-central-1's 66.0, US users at us-east-1's
    # 55.04, each for its share of the load, and nothing is flagged.
    assert aws.label == "AWS p5.48xlarge (eu-west users: eu-central-1; us-east users: us-east-1)"
    eu = (aws.on_demand_usd_per_instance_h - 55.04) / (66.0 - 55.04)
    assert eu == pytest.approx(0.68, abs=0.01)
    assert aws.flags == ()
    # No 1-/3-year price listed in either region: AWS's sourced 41 % / 64 % off each.
    assert aws.commit_1yr_usd_per_instance_h == pytest.approx(
        aws.on_demand_usd_per_instance_h * 0.59
    )
    assert aws.commit_3yr_usd_per_instance_h == pytest.approx(
        aws.on_demand_usd_per_instance_h * 0.36
    )


def test_eu_users_without_an_eu_listing_are_flagged_not_silently_priced_in_the_us(sized_plan):
    TcoSettings.objects.create(plan=sized_plan, cloud_providers=["AWS"])
    build = services.tco_inputs_build(plan=sized_plan)
    (aws,) = build.inputs.providers
    # The catalog lists AWS's H100 instances in US regions only.
    assert aws.label == "AWS p5.4xlarge (us-east-1)"
    assert aws.on_demand_usd_per_instance_h == pytest.approx(6.88)
    (flag,) = aws.flags
    assert flag.startswith("No EU-region listing for AWS p5.4xlarge in the catalog")
    assert "priced at us-east-1" in flag and "not met" in flag


def test_a_plan_discount_replaces_the_sourced_default(sized_plan):
    TcoSettings.objects.create(
        plan=sized_plan, cloud_providers=["AWS", "Lambda"], commit_3yr_discount_pct=50
    )
    build = services.tco_inputs_build(plan=sized_plan)
    aws = next(p for p in build.inputs.providers if p.key == "aws")
    lam = next(p for p in build.inputs.providers if p.key == "lambda")
    assert aws.commit_3yr_usd_per_instance_h == pytest.approx(6.88 * 0.5)
    assert aws.commit_1yr_usd_per_instance_h == pytest.approx(6.88 * 0.59)  # default kept
    assert lam.commit_3yr_usd_per_instance_h is None  # a neocloud lists none: none assumed


def test_no_provider_picked_never_takes_a_community_marketplace_listing(sized_plan):
    build = services.tco_inputs_build(plan=sized_plan)
    runpod = next(p for p in build.inputs.providers if p.key == "runpod")
    assert "Community" not in runpod.label and "Secure" in runpod.label
    assert any("community-marketplace listings" in line for line in build.basis)


def test_the_tco_page_names_the_break_even_reference(client, consultant_a, sized_plan):
    TcoSettings.objects.create(plan=sized_plan, cloud_providers=["AWS", "Lambda"])
    services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    run = services.tco_run_sync(plan=sized_plan, user=consultant_a)
    reference = next(o for o in run.results["options"] if o["key"] == run.results["reference"])
    assert reference["kind"].startswith("cloud")
    # the cheapest cloud option of the providers allowed, by NPV
    cloud = [o for o in run.results["options"] if o["kind"].startswith("cloud")]
    assert float(reference["npv_amount"]) == min(float(o["npv_amount"]) for o in cloud)
    client.force_login(consultant_a)
    page = client.get(reverse("facility:tco", args=[sized_plan.pk])).content.decode()
    assert f"Break-even against <strong>{reference['label']}</strong>" in page
    assert 'data-testid="tco-reference-badge"' in page


def test_placement_prices_the_cloud_at_the_reference_and_says_what_it_does_not_meet(
    consultant_a, sized_plan
):
    TcoSettings.objects.create(plan=sized_plan, cloud_providers=["AWS"])
    services.tco_run_request(plan=sized_plan, user=consultant_a, enqueue=False)
    run = services.tco_run_sync(plan=sized_plan, user=consultant_a)
    reference = next(o for o in run.results["options"] if o["key"] == run.results["reference"])
    notes = services.placement_evaluate(plan=sized_plan).notes
    assert any(reference["label"] in n and "break-even reference" in n for n in notes)
    # AWS lists its H100s in US regions only: the EU users' flag reaches the placement page
    assert any(n.startswith("No EU-region listing for AWS") for n in notes)


def test_a_hybrids_bursts_are_priced_in_the_region_serving_each_sites_users(
    org_a, consultant_a, catalog
):
    from planner.demo import demo_plan_build

    plan, _ = demo_plan_build(organisation=org_a, user=consultant_a)
    TcoSettings.objects.update_or_create(plan=plan, defaults={"cloud_providers": ["AWS"]})
    build = services.tco_inputs_build(plan=plan)
    (aws,) = build.inputs.providers
    regions = {s.label: s.burst_region for s in build.inputs.sites}
    assert "eu-central" in regions.values() or "eu-west" in regions.values(), regions
    us_price = aws.on_demand_usd_per_instance_h / aws.gpus_per_instance
    eu_site = next(s for s in build.inputs.sites if s.burst_region.startswith("eu-"))
    # The catalog lists AWS in US regions only: the EU site's bursts are priced there, and
    # the basis says so.
    assert eu_site.burst_usd_per_gpu_h == pytest.approx(us_price)
    assert any(
        line.startswith(f"{eu_site.label}: bursts above its servers run in")
        and "no EU-region listing" in line
        for line in build.basis
    )

    # With an eu-central-1 listing of the same instance, the EU site bursts at its price.
    offering = CloudOffering.objects.get(
        provider="AWS", instance_type=aws.label.split(" (")[0].removeprefix("AWS "),
        price_model=PriceModel.ON_DEMAND,
    )  # fmt: skip
    offering.pk, offering.region, offering.usd_per_hour = None, "eu-central-1", 99.0
    offering.save()
    rebuilt = services.tco_inputs_build(plan=plan)
    eu_site = next(s for s in rebuilt.inputs.sites if s.burst_region.startswith("eu-"))
    assert eu_site.burst_usd_per_gpu_h == pytest.approx(99.0 / aws.gpus_per_instance)
    us_sites = [s for s in rebuilt.inputs.sites if s.burst_region.startswith("us-")]
    assert all(s.burst_usd_per_gpu_h == pytest.approx(us_price) for s in us_sites)
