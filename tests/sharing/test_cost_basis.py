"""One cost basis on the demo plan: the TCO's owned capex is the quote's cost basis (the priced
BOM at landed cost, before markup), and the headline kW is the sites' facility-check kW, the
same kW the TCO's power and space charges are computed on."""

from decimal import Decimal

import pytest
from django.urls import reverse

from planner.facility import selectors as fsel
from planner.facility import services as fsvc
from planner.facility.models import TcoRun
from planner.sharing.snapshot import _bom as snapshot_bom
from sourcing import services as ssvc
from sourcing.quote import quote_sell

CENT = Decimal("0.01")


def _owned(plan) -> dict:
    run = TcoRun.objects.filter(plan=plan).order_by("-pk").first()
    assert run is not None and run.results
    assert run.input_hash == fsvc.tco_inputs_build(plan=plan).input_hash, "demo TCO run is stale"
    return next(o for o in run.results["options"] if o["key"] == "owned"), run.results


def test_tco_owned_capex_is_the_quote_cost_basis(plan, signed_in):
    owned, results = _owned(plan)
    assert results["currency"] == plan.currency == "EUR"
    # Every generation bought inside the horizon is a capex month; the demo buys one.
    capex = [Decimal(v) for v in owned["lines_amount"]["capex"] if Decimal(v)]
    assert len(capex) == 1
    report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
    sell = quote_sell(plan=plan, bom=snapshot_bom(plan, report))
    assert sell["available"] and sell["unpriced_lines"] == 0
    cost_basis = Decimal(sell["goods_cost"])
    assert abs(capex[0] - cost_basis) <= CENT, (capex[0], cost_basis)
    # The per-site capex of the owned option adds up to it too.
    by_site = sum(Decimal(s["lines_amount"]["capex"]) for s in owned["sites"])
    assert abs(by_site - cost_basis) <= 2 * CENT
    # The TCO names its capex basis.
    build = fsvc.tco_inputs_build(plan=plan)
    assert build.capex_basis == results["capex_basis"] == "priced BOM"
    assert any("priced BOM" in line for line in build.basis)
    page = signed_in.get(reverse("facility:tco", args=[plan.pk])).content.decode()
    assert 'data-testid="tco-capex-basis">Owned capex: priced BOM' in page


def test_tco_capex_without_a_bom_is_an_estimate_and_says_so(plan):
    from sourcing.models import BomLine

    BomLine.objects.filter(plan=plan).delete()
    build = fsvc.tco_inputs_build(plan=plan)
    assert build.capex_basis == "estimate: servers + network share"
    assert any("estimate" in line for line in build.basis)


def test_tco_goes_stale_when_the_landed_cost_changes(plan):
    from sourcing.models import Offer

    before = fsvc.tco_inputs_build(plan=plan).input_hash
    offer = Offer.objects.filter(
        supplier__organisation=plan.organisation, part__category="rack"
    ).first()
    assert offer is not None
    offer.unit_price += 100
    offer.save()
    assert fsvc.tco_inputs_build(plan=plan).input_hash != before


def test_headline_kw_is_the_sites_facility_kw_and_the_tco_charges_it(plan, signed_in):
    deployment = fsvc.plan_deployment(plan=plan)
    site_kw = {}
    for site in fsel.site_list(plan=plan):
        report = fsvc.site_evaluate(plan=plan, site=site, deployment=deployment).report
        if report is not None and deployment.site_pool(site) is not None:
            site_kw[f"site-{site.pk}"] = report.it_load_kw
    assert len(site_kw) == 2
    summary = fsvc.deployment_summary(plan=plan)
    assert abs(summary.it_load_kw - sum(site_kw.values())) < 1e-9
    assert [round(kw, 6) for _, _, _, kw in summary.sites] == [
        round(kw, 6) for kw in site_kw.values()
    ]
    # The network gear is in it: more than the servers alone.
    assert summary.it_load_kw > deployment.it_load_kw + 1

    # The headline on the pages and in the snapshot.
    page = signed_in.get(reverse("plan_detail", args=[plan.pk]))
    assert f"{summary.it_load_kw:.1f} kW" in page.content.decode()

    # The TCO's inputs and its space and power charges use the same kW per site.
    inputs = fsvc.tco_inputs_build(plan=plan).inputs
    assert abs(inputs.hardware.it_kw - summary.it_load_kw) < 1e-9
    sites = {s.key: s for s in inputs.sites if s.servers}
    assert {k: round(s.it_load_kw, 6) for k, s in sites.items()} == {
        k: round(v, 6) for k, v in site_kw.items()
    }
    owned, results = _owned(plan)
    rate = Decimal(results["fx"]["rate"])
    months = len(results["months"])
    for share in owned["sites"]:
        site = sites[share["key"]]
        space = Decimal(site_kw[share["key"]] * site.facility_usd_per_kw_month * months)
        assert abs(Decimal(share["lines_amount"]["facility"]) - space * rate) <= CENT, share["key"]


def test_support_is_counted_as_bought_once_for_its_term(plan):
    # The support offer sells a 4-year contract, paid once. The TCO pays the support lines'
    # landed cost once, in the capex (still the quote's cost basis), and renews it at month
    # 48 for the 12 months left of the demo's 60-month horizon: a quarter of its price. With
    # the same price as a yearly one it renews at months 12, 24, 36 and 48: 4 more times.
    from planner.engine import tco as te
    from sourcing.models import Offer

    offers = Offer.objects.filter(supplier__organisation=plan.organisation, service="support")
    assert set(offers.values_list("term_years", flat=True)) == {3}  # the demo sells 3 years
    offers.update(term_years=None)  # the same price as a yearly one, first
    report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
    support = sum(
        (c.service_cost.amount for c in report.lines if c.line.service == "support"), Decimal(0)
    )
    assert support > 0
    yearly = fsvc.tco_inputs_build(plan=plan)
    rate = float(yearly.canonical["fx"]["rate"])
    assert yearly.inputs.horizon_months == 60
    assert yearly.inputs.hardware.support_contracts == ((pytest.approx(float(support) / rate), 12),)
    renewals = te.run_tco(yearly.inputs).by_key("owned").lines_usd["maintenance"]
    assert [m for m in range(60) if renewals[m]] == [12, 24, 36, 48]
    assert renewals.sum() == pytest.approx(4 * float(support) / rate)

    offers.update(term_years=4)
    build = fsvc.tco_inputs_build(plan=plan)
    assert build.input_hash != yearly.input_hash
    assert build.inputs.hardware.support_contracts == ((pytest.approx(float(support) / rate), 48),)
    renewals = te.run_tco(build.inputs).by_key("owned").lines_usd["maintenance"]
    assert [m for m in range(60) if renewals[m]] == [48]
    assert renewals[48] == pytest.approx(float(support) / rate * 12 / 48)
    assert build.inputs.hardware.capex_usd == pytest.approx(yearly.inputs.hardware.capex_usd)
    assert any("for 4 years) is paid once" in line for line in build.basis)
    # The quote sells it once, for its term, and says so.
    sell = quote_sell(plan=plan, bom=snapshot_bom(plan, ssvc.landed_cost_report(
        plan=plan, organisation=plan.organisation)))  # fmt: skip
    lines = [x["description"] for x in sell["lines"] if x["category"] == "service"]
    assert any(d.startswith("Support contract (4 years, paid once)") for d in lines)
