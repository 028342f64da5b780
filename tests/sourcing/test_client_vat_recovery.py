"""The client's VAT recovery on the demo plan: what it cannot recover is a cost in the landed
cost, the TCO capex and the quote's total to the client; the quote says so in words.

The demo's Frankfurt site imports its servers and optics from the US (import VAT 19 %) and
buys the rest from a Dutch distributor (intra-EU: the buyer self-accounts 19 % by reverse
charge); Ashburn pays no VAT. A fully taxable client recovers all of it (the figures of before
the setting); a VAT-exempt bank none; a partly exempt client 30 %.
"""

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from planner.facility import services as fsvc
from planner.money import format_money
from planner.sharing.snapshot import _bom as snapshot_bom
from sourcing import services as ssvc
from sourcing.quote import quote_sell

D = Decimal
CENT = D("0.01")


def _report(plan):
    return ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)


def _set_recovery(plan, recovery, pct=None):
    client = plan.client
    client.vat_recovery, client.vat_recoverable_pct = recovery, pct
    client.save()
    plan.refresh_from_db()
    return plan


def _chosen(report):
    return [(c.line.pk, c.chosen.pk if c.chosen else None) for c in report.lines]


@pytest.fixture
def plan(demo):
    return demo[0]


@pytest.fixture
def taxable(plan):
    """The demo with a fully taxable client: the VAT it pays, as the plan had it before."""
    report = _report(plan)
    assert report.complete and plan.client.vat_recovery == "full"
    assert report.vat_not_recoverable.amount == 0
    import_vat = report.vat_recoverable.amount  # Frankfurt's import VAT, all recovered
    reverse_charge = report.reverse_charge_vat.amount
    assert import_vat > 0 and reverse_charge > 0
    return report, import_vat, reverse_charge


def test_a_vat_exempt_bank_bears_all_the_vat(plan, taxable):
    before, import_vat, reverse_charge = taxable
    sell_before = quote_sell(plan=plan, bom=snapshot_bom(plan, before))

    after = _report(_set_recovery(plan, "none"))

    assert _chosen(after) == _chosen(before)  # the same offers: the figures compare line by line
    # Nothing to recover; the import VAT and the reverse charge are both a cost.
    assert after.vat_recoverable.amount == 0
    assert after.vat_not_recoverable.amount == import_vat + reverse_charge
    assert after.total_net.amount == before.total_net.amount + import_vat + reverse_charge
    frankfurt = next(s for s in after.sites if s.destination == "DE" and s.site is not None)
    for cost in frankfurt.lines:
        if cost.landed is not None:
            vat = cost.landed.vat.amount + (
                cost.landed.reverse_charge_vat.amount if cost.landed.reverse_charge_vat else 0
            )
            assert cost.landed.vat_not_recovered.amount == vat, cost.line.description

    # The quote: the markup is on the cost without that VAT (the same sell prices); the VAT is
    # added to the client's total at cost.
    sell = quote_sell(plan=plan, bom=snapshot_bom(plan, after))
    assert sell["total_sell"] == sell_before["total_sell"]
    kept = D(sell["vat_not_recoverable"])
    assert abs(kept - (import_vat + reverse_charge)) <= CENT
    assert D(sell["total_to_client"]) == D(sell["total_sell"]) + kept
    # The cost basis (goods at cost + the VAT) is the landed cost.
    assert abs(D(sell["goods_cost"]) + kept - after.total_net.amount) <= CENT
    assert "VAT-exempt" in sell["vat_treatment"]

    # The TCO's owned capex buys the BOM at that landed cost.
    build = fsvc.tco_inputs_build(plan=plan)
    assert build.capex_basis == "priced BOM"
    capex_line = next(line for line in build.basis if line.startswith("Capex basis"))
    assert format_money(after.total_net.amount, "EUR") in capex_line
    assert "the VAT the client cannot recover" in capex_line


def test_a_partly_exempt_client_recovers_its_share(plan, taxable):
    before, import_vat, reverse_charge = taxable

    after = _report(_set_recovery(plan, "partial", D(30)))

    assert _chosen(after) == _chosen(before)
    # 30 % recovered: 0.3 × import VAT to reclaim; 70 % of the import VAT and of the reverse
    # charge kept as a cost.
    # (Exact Decimals to 28 digits: compared to a millionth of a cent.)
    tiny = D("1e-8")
    assert abs(after.vat_recoverable.amount - import_vat * D("0.3")) < tiny
    kept = (import_vat + reverse_charge) * D("0.7")
    assert abs(after.vat_not_recoverable.amount - kept) < tiny
    assert abs(after.total_net.amount - (before.total_net.amount + kept)) < tiny
    build = fsvc.tco_inputs_build(plan=plan)
    capex_line = next(line for line in build.basis if line.startswith("Capex basis"))
    assert format_money(after.total_net.amount, "EUR") in capex_line


def test_a_fully_taxable_client_keeps_the_figures(plan, taxable):
    before, _, _ = taxable
    hash_before = fsvc.tco_inputs_build(plan=plan).input_hash
    sell = quote_sell(plan=plan, bom=snapshot_bom(plan, before))
    assert D(sell["vat_not_recoverable"]) == 0
    assert sell["total_to_client"] == sell["total_sell"]
    # The landed cost is the goods, freight, insurance, brokerage and duty: gross − all VAT.
    assert before.total_net.amount == before.total_gross.amount - before.vat_recoverable.amount
    # Exempt, then taxable again: the TCO inputs come back to the same hash.
    _set_recovery(plan, "none")
    assert fsvc.tco_inputs_build(plan=plan).input_hash != hash_before
    _set_recovery(plan, "full")
    assert fsvc.tco_inputs_build(plan=plan).input_hash == hash_before


def test_pages_and_documents_state_the_vat_treatment(client, demo):
    from planner.sharing import services
    from tests.sharing.conftest import pdf_text

    plan, consultant = demo[0], demo[1]
    _set_recovery(plan, "none")
    client.force_login(consultant)
    landed = client.get(reverse("sourcing:landed_cost", args=[plan.pk])).content.decode()
    assert "is VAT-exempt and recovers no VAT" in landed
    assert 'data-testid="vat-not-recoverable"' in landed
    quote_page = client.get(reverse("sourcing:quote", args=[plan.pk])).content.decode()
    assert "is VAT-exempt and recovers no VAT" in quote_page
    assert 'data-testid="quote-total-to-client"' in quote_page

    revision = services.revision_publish(
        plan=plan, user=consultant, note="exempt", with_open_items=True
    )
    sell = revision.snapshot["quote"]["sell"]
    text = re.sub(
        r"\s+", " ", pdf_text(services.document_render(revision=revision, kind="quote"))[0]
    )
    assert "is VAT-exempt and recovers no VAT" in text
    assert format_money(D(sell["vat_not_recoverable"]), "EUR") in text
    assert format_money(D(sell["total_to_client"]), "EUR") in text
