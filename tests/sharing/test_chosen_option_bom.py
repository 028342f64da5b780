"""The BOM, and so the landed cost, timeline and quote, buy the chosen option's hardware: the
pooled deployment for an owned choice, the hybrid's owned base per site (the TCO's one hybrid
computation) for the hybrid, nothing for the public cloud. Changing the choice makes the BOM
stale like any other input, and the TCO's capex of the chosen option is the quote's cost
basis."""

from collections import Counter
from decimal import Decimal

import pytest
from django.urls import reverse

from planner import freshness
from planner.facility import selectors as fsel
from planner.facility import services as fsvc
from planner.facility.models import PlacementDecision, Site, TcoRun
from planner.pdf.render import render_html
from planner.sharing import services as sharing
from planner.sharing.models import DocumentKind
from planner.sharing.snapshot import _bom as snapshot_bom
from sourcing import services as ssvc
from sourcing.models import BomLine, PurchaseOrder
from sourcing.quote import quote_sell

pytestmark = pytest.mark.django_db

CENT = Decimal("0.01")
HARDWARE = ("server", "nic", "switch", "optic", "cable", "rack", "pdu", "storage", "spares")


def _choose(plan, key: str, kind: str, label: str) -> None:
    PlacementDecision.objects.filter(plan=plan).update(
        chosen_key=key, chosen_kind=kind, chosen_label=label
    )


def _servers_by_site(plan) -> dict[str, int]:
    held: Counter = Counter()
    for line in BomLine.objects.filter(plan=plan, category="server"):
        held[f"site-{line.site_id}"] += line.quantity
    return dict(held)


def _option(run, key: str) -> dict:
    return next(o for o in run.results["options"] if o["key"] == key)


def _capex(option: dict) -> Decimal:
    months = [Decimal(v) for v in option["lines_amount"]["capex"] if Decimal(v)]
    assert len(months) == 1  # one generation bought inside the horizon
    return months[0]


def _cost_basis(plan) -> tuple[Decimal, Decimal]:
    """(landed cost of the BOM, the quote's cost basis before markup)."""
    report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
    sell = quote_sell(plan=plan, bom=snapshot_bom(plan, report))
    assert sell["available"] and sell["unpriced_lines"] == 0
    return report.total_net.amount, Decimal(sell["goods_cost"])


def test_the_hybrid_chosen_buys_its_owned_base_and_its_capex_is_the_quote(
    plan, consultant, signed_in
):
    # Cloud dear and Ashburn's space dearer still: the hybrid owns Frankfurt's servers only.
    settings = fsel.tco_settings_get(plan=plan)
    settings.on_demand_usd_per_gpu_h = Decimal("60")
    settings.save()
    Site.objects.filter(plan=plan, name__startswith="Ashburn").update(
        facility_usd_per_kw_month=Decimal("100000")
    )
    run = fsvc.tco_run_sync(plan=plan, user=consultant)
    owned_sites = {p["key"]: p["servers"] for p in _option(run, "owned")["sites"]}
    hybrid = _option(run, "hybrid")
    base = {p["key"]: p["servers"] for p in hybrid["sites"] if p["servers"]}
    assert base and sum(base.values()) < sum(owned_sites.values()), (base, owned_sites)
    assert _servers_by_site(plan) == owned_sites  # the demo's BOM buys the owned deployment

    _choose(plan, "hybrid", "hybrid", hybrid["label"])
    bom = freshness.bom_freshness(plan)
    assert bom.state == freshness.STALE
    assert "The deployment now needs" in bom.reason
    assert ssvc.bom_option(plan=plan).base_servers == sum(base.values())

    ssvc.bom_generate(plan=plan, user=consultant)
    assert _servers_by_site(plan) == base
    assert freshness.bom_freshness(plan).is_current

    # The TCO costs the chosen hybrid at the BOM of its base: its capex is the landed cost and
    # the quote's cost basis; the base it finds with those prices is still the one bought.
    run = fsvc.tco_run_sync(plan=plan, user=consultant)
    assert run.results["capex_basis"] == fsvc.CAPEX_FROM_HYBRID_BOM
    hybrid = _option(run, "hybrid")
    assert {p["key"]: p["servers"] for p in hybrid["sites"] if p["servers"]} == base
    assert freshness.bom_freshness(plan).is_current
    landed, cost_basis = _cost_basis(plan)
    assert abs(landed - cost_basis) <= CENT
    assert abs(_capex(hybrid) - cost_basis) <= CENT, (_capex(hybrid), cost_basis)

    page = signed_in.get(reverse("sourcing:quote", args=[plan.pk])).content.decode()
    assert "buys its owned base, 2 servers" in page


def test_the_cloud_chosen_buys_no_hardware_and_owned_again_restores_the_lines(
    plan, consultant, signed_in
):
    before = sorted(
        (line.site_id or 0, line.part_key, line.quantity)
        for line in BomLine.objects.filter(plan=plan)
    )
    decision = PlacementDecision.objects.get(plan=plan)
    owned = (decision.chosen_key, decision.chosen_kind, decision.chosen_label)

    _choose(plan, "public_cloud", "public_cloud", "Public cloud: eu-central-1 (Frankfurt)")
    assert freshness.bom_freshness(plan).state == freshness.STALE
    ssvc.bom_generate(plan=plan, user=consultant)
    assert not BomLine.objects.filter(plan=plan, category__in=HARDWARE).exists()
    assert freshness.bom_freshness(plan).is_current
    build = fsvc.tco_inputs_build(plan=plan)
    assert build.capex_basis == fsvc.CAPEX_ESTIMATED
    assert any("buys no hardware" in line for line in build.basis)

    quote = signed_in.get(reverse("sourcing:quote", args=[plan.pk])).content.decode()
    assert 'data-testid="bom-option"' in quote
    assert "the plan buys no hardware" in quote
    for name in ("sourcing:landed_cost", "sourcing:timeline"):
        page = signed_in.get(reverse(name, args=[plan.pk])).content.decode()
        assert "nothing to ship or install" in page, name
    api = signed_in.get(f"/api/v1/plans/{plan.pk}/landed-cost").json()
    assert api["buys_hardware"] is False and api["lines"] == []
    assert "nothing to ship or install" in api["option_text"]
    # (the demo's purchase orders withdrawn: a timeline of orders would still be scheduled)
    PurchaseOrder.objects.filter(plan=plan).delete()
    assert freshness.timeline_freshness(plan).is_current
    # The client's quote of a revision says so too, and prices no hardware (the TCO re-run
    # first: its owned capex is now the estimate, with no BOM of the deployment to price).
    fsvc.tco_run_sync(plan=plan, user=consultant)
    revision = sharing.revision_publish(
        plan=plan, user=consultant, note="cloud", with_open_items=True
    )
    # nothing is left open for the sourcing: no option, BOM, landed cost or timeline item
    assert {i["kind"] for i in revision.snapshot["open_items"]} <= {"facility_check", "measure"}
    assert "nothing to ship or install" in revision.snapshot["timeline"]["reason"]
    context = sharing.document_context(revision=revision, kind=DocumentKind.QUOTE)
    assert context.lines == () and not context.buys_hardware
    html = render_html(sharing.DOCUMENT_TEMPLATES[DocumentKind.QUOTE], {"doc": context})
    assert 'data-testid="quote-cloud-only"' in html
    assert "nothing to ship or install. This quote prices services and fees only." in html
    link = sharing.share_link_create(
        plan=plan, user=consultant, revision=revision, expires_at=None, note=""
    )
    shared = signed_in.get(reverse("sharing:public", args=[link.token])).content.decode()
    assert 'data-testid="rev-cloud-only"' in shared
    assert "nothing to ship or install. The quote prices services and fees only." in shared

    _choose(plan, *owned)
    assert freshness.bom_freshness(plan).state == freshness.STALE
    ssvc.bom_generate(plan=plan, user=consultant)
    after = sorted(
        (line.site_id or 0, line.part_key, line.quantity)
        for line in BomLine.objects.filter(plan=plan)
    )
    assert after == before
    assert freshness.bom_freshness(plan).is_current

    # The hybrid chosen before any TCO run: its base is not known, and the BOM says why.
    TcoRun.objects.filter(plan=plan).delete()
    _choose(plan, "hybrid", "hybrid", "Hybrid")
    bom = freshness.bom_freshness(plan)
    assert bom.state == freshness.FAILED and "run the TCO" in bom.reason
    with pytest.raises(ssvc.SourcingError, match="run the TCO"):
        ssvc.bom_generate(plan=plan, user=consultant)
