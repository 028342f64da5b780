"""The bill of materials: generated from the chosen configuration, edited by hand, regenerated."""

import pytest
from django.urls import reverse

from sourcing.models import BomLine, PlanEvent
from sourcing.services import bom_generate
from tests.conftest import make_member


def _lines(plan) -> dict[str, BomLine]:
    return {line.part_key: line for line in BomLine.objects.filter(plan=plan)}


def test_generate_from_the_chosen_configuration(client, consultant_a, plan_a, settings_a):
    client.force_login(consultant_a)

    response = client.post(reverse("sourcing:bom_generate", args=[plan_a.pk]))

    assert response.status_code == 302
    lines = _lines(plan_a)
    server = lines["server:nvidia-dgx-h100"]
    assert (server.quantity, server.server.slug, server.hs_code) == (
        2,
        "nvidia-dgx-h100",
        "8471.50",
    )
    # A DGX H100 ships with eight 400G ConnectX-7: no NIC line, but their 2 × 8 = 16 ports
    # fit one 64-port switch: one leaf, 16 links, 16 cables; 16 400G optics at the switch end
    # and, at the DGX end, one twin-port 2×400G OSFP per cage: 2 servers × 4 cages = 8 (before:
    # 32 single 400G optics, which the DGX's twin-port cages do not take).
    assert not [k for k in lines if k.startswith("nic:")]
    assert lines["switch:switch-ib-64x400g:leaf"].quantity == 1
    assert lines["optic:optic-400g"].quantity == 16
    assert lines["optic:optic-2x400g-osfp"].quantity == 8
    assert lines["cable:cable-fiber-mpo"].quantity == 16
    assert lines["rack:42u"].quantity == 1  # 2 servers, 4 per rack
    pdu = lines["pdu:pdu-3ph-415v-32a"]  # no site entered: the catalog's default PDU
    assert pdu.quantity == 2 and "A/B feeds" in pdu.reason
    assert lines["storage:storage-nvme-7.68tb"].quantity == 4
    assert lines["spare:optic:optic-400g"].quantity == 1  # 5 % of 16 = 0.8, rounded up
    assert lines["spare:optic:optic-2x400g-osfp"].quantity == 1  # 5 % of 8 = 0.4
    assert {lines[k].service for k in lines if k.startswith("service:")} == {
        "installation", "burn-in", "support",
    }  # fmt: skip
    page = client.get(reverse("sourcing:bom", args=[plan_a.pk])).content.decode()
    assert "16 NIC ports fit one 64-port switch" in page and "Bill of materials generated" in page


def test_regenerate_keeps_manual_lines_and_overrides_and_says_what_changed(
    client, consultant_a, plan_a, settings_a
):
    bom_generate(plan=plan_a, user=consultant_a)
    client.force_login(consultant_a)
    optic = _lines(plan_a)["optic:optic-400g"]
    client.post(
        reverse("sourcing:bom_line_edit", args=[plan_a.pk, optic.pk]),
        {f"line{optic.pk}-quantity": "20", f"line{optic.pk}-hs_code": "8517.62"},
    )
    client.post(
        reverse("sourcing:bom_line_add", args=[plan_a.pk]),
        {"add-description": "Console server", "add-quantity": "1", "add-reason": "out-of-band"},
    )
    workload = plan_a.workloads.get()
    workload.chosen_replicas, workload.chosen_servers, workload.chosen_accelerators = 2, 4, 32
    workload.save()

    changes = bom_generate(plan=plan_a, user=consultant_a)

    lines = _lines(plan_a)
    assert lines["server:nvidia-dgx-h100"].quantity == 4
    assert lines["optic:optic-400g"].quantity == 20  # the hand-set quantity stays
    assert lines["optic:optic-400g"].origin == "override"
    # 4 servers × 8 links, one 400G optic at the switch end of each (the DGX end: twin-port)
    assert lines["optic:optic-400g"].generated_quantity == 32
    assert lines["manual:console server"].quantity == 1
    assert any("NVIDIA DGX H100: 2 → 4 (servers 2 → 4)" in c for c in changes)
    assert any("manual quantity 20 kept (generated 32)" in c for c in changes)
    history = client.get(reverse("sourcing:history", args=[plan_a.pk])).content.decode()
    assert "servers 2 → 4" in history and "Console server" in history


def test_removing_a_generated_line_keeps_it_out_after_regeneration(
    client, consultant_a, plan_a, settings_a
):
    bom_generate(plan=plan_a, user=consultant_a)
    client.force_login(consultant_a)
    rack = _lines(plan_a)["rack:42u"]

    client.post(reverse("sourcing:bom_line_remove", args=[plan_a.pk, rack.pk]))
    bom_generate(plan=plan_a, user=consultant_a)

    rack.refresh_from_db()
    assert rack.quantity == 0 and rack.removed


def test_negative_quantity_is_refused_next_to_the_field(client, consultant_a, plan_a, settings_a):
    bom_generate(plan=plan_a, user=consultant_a)
    client.force_login(consultant_a)
    optic = _lines(plan_a)["optic:optic-400g"]

    response = client.post(
        reverse("sourcing:bom_line_edit", args=[plan_a.pk, optic.pk]),
        {f"line{optic.pk}-quantity": "-3", f"line{optic.pk}-hs_code": "8517.62"},
    )

    assert response.status_code == 400
    assert "Cannot be negative." in response.content.decode()
    assert 'value="-3"' in response.content.decode()
    optic.refresh_from_db()
    assert optic.quantity == 16


def test_htmx_edit_swaps_the_bom_section(client, consultant_a, plan_a, settings_a):
    bom_generate(plan=plan_a, user=consultant_a)
    client.force_login(consultant_a)
    optic = _lines(plan_a)["optic:optic-400g"]

    response = client.post(
        reverse("sourcing:bom_line_edit", args=[plan_a.pk, optic.pk]),
        {f"line{optic.pk}-quantity": "18", f"line{optic.pk}-hs_code": "8517.62"},
        HTTP_HX_REQUEST="true",
    )

    content = response.content.decode()
    assert response.status_code == 200
    assert content.lstrip().startswith('<section id="bom-section">')
    assert "manual override (generated: 16" in content


def test_without_a_chosen_configuration_the_page_says_so(client, consultant_a, plan_a):
    plan_a.workloads.update(chosen_accelerator=None, chosen_server=None)
    client.force_login(consultant_a)

    page = client.get(reverse("sourcing:bom", args=[plan_a.pk])).content.decode()
    response = client.post(reverse("sourcing:bom_generate", args=[plan_a.pk]), follow=True)

    assert "No workload of this plan has a chosen configuration yet" in page
    assert "choose one in sizing" in response.content.decode()
    assert not BomLine.objects.filter(plan=plan_a).exists()
    for name in ("landed_cost", "timeline", "orders", "history", "settings"):
        assert client.get(reverse(f"sourcing:{name}", args=[plan_a.pk])).status_code == 200


def test_viewers_read_but_cannot_change(client, org_a, plan_a, settings_a, consultant_a):
    bom_generate(plan=plan_a, user=consultant_a)
    viewer = make_member(org_a, "viewer_a", "viewer")
    client.force_login(viewer)

    assert client.get(reverse("sourcing:bom", args=[plan_a.pk])).status_code == 200
    assert client.post(reverse("sourcing:bom_generate", args=[plan_a.pk])).status_code == 403
    line = BomLine.objects.filter(plan=plan_a).first()
    response = client.post(reverse("sourcing:bom_line_remove", args=[plan_a.pk, line.pk]))
    assert response.status_code == 403
    assert client.post(reverse("sourcing:settings", args=[plan_a.pk]), {}).status_code == 403
    assert PlanEvent.objects.filter(plan=plan_a).count() == 1


def _site(plan, name: str, country: str, volts: str = "415", amps: str = "32"):
    from decimal import Decimal

    from planner.facility.models import Site

    return Site.objects.create(
        plan=plan, name=name, kind="colocation", country=country, racks_available=4,
        site_it_capacity_kw=Decimal("80"), voltage_v=Decimal(volts), phase=3,
        amperage_a=Decimal(amps), cooling_method="rear_door",
    )  # fmt: skip


def test_a_line_added_by_hand_belongs_to_the_site_chosen(client, consultant_a, plan_a, settings_a):
    from sourcing.services import SourcingError, bom_line_add

    frankfurt = _site(plan_a, "Frankfurt", "DE")
    line = bom_line_add(
        plan=plan_a, user=consultant_a, description="Console", quantity=1, reason="",
        site=frankfurt,
    )  # fmt: skip
    assert line.site == frankfurt
    # The same item plan-wide is another line; twice for one site is refused.
    bom_line_add(plan=plan_a, user=consultant_a, description="Console", quantity=1, reason="")
    with pytest.raises(SourcingError):
        bom_line_add(
            plan=plan_a, user=consultant_a, description="Console", quantity=2, reason="",
            site=frankfurt,
        )  # fmt: skip
    # Through the page: the form offers this plan's sites only.
    client.force_login(consultant_a)
    page = client.get(reverse("sourcing:bom", args=[plan_a.pk])).content.decode()
    assert f'<option value="{frankfurt.pk}">Frankfurt' in page


def test_a_site_of_another_plan_is_refused(client, consultant_a, plan_a, settings_a, org_b):
    from planner.models import Client, Plan

    other = Plan.objects.create(
        organisation=org_b, client=Client.objects.create(organisation=org_b, name="B"),
        name="B", currency="EUR",
    )  # fmt: skip
    foreign = _site(other, "Elsewhere", "FR")
    client.force_login(consultant_a)
    response = client.post(
        reverse("sourcing:bom_line_add", args=[plan_a.pk]),
        {"add-description": "Console", "add-quantity": 1, "add-site": foreign.pk},
    )
    assert response.status_code in (200, 400)
    assert not BomLine.objects.filter(plan=plan_a, site=foreign).exists()


def test_each_site_gets_its_own_lines_and_pdus(consultant_a, plan_a, settings_a):
    # Two sites, one replica of TP 16 spanning two servers: the replica goes whole to one
    # site (the nearest to its users, no regions → the first). Regenerating keeps the lines.
    _site(plan_a, "Frankfurt", "DE")
    _site(plan_a, "Ashburn", "US", volts="208", amps="60")
    bom_generate(plan=plan_a, user=consultant_a)
    lines = list(BomLine.objects.filter(plan=plan_a).select_related("site"))
    servers = {(x.site.name if x.site else "plan"): x.quantity for x in lines
               if x.category == "server"}  # fmt: skip
    assert sum(servers.values()) == 2
    for line in lines:
        if line.category == "pdu":
            assert ("415" in line.part_key) == (line.site.country == "DE")
        if line.category == "service":
            assert line.site is None
    before = {(x.site_id, x.part_key, x.quantity) for x in lines}
    assert bom_generate(plan=plan_a, user=consultant_a) == ()
    after = {(x.site_id, x.part_key, x.quantity) for x in BomLine.objects.filter(plan=plan_a)}
    assert after == before
