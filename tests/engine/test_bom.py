"""Bill of materials: fabric sizing, spares, services and regeneration, checked by hand."""

from dataclasses import replace
from decimal import Decimal

import pytest

from planner.engine.bom import (
    FRONT_END_100G,
    SCALE_OUT_400G,
    BomError,
    BomLine,
    DeploymentInput,
    FabricSpec,
    OpticPart,
    SparesPolicy,
    form_factor_fits,
    generate_bom,
    plan_fabric,
    regenerate,
)


def _deployment(servers: int = 16, **kw) -> DeploymentInput:
    defaults = dict(
        key="fra-1",
        server_slug="dgx-h100",
        server_name="NVIDIA DGX H100",
        servers=servers,
        accelerators_per_server=8,
        racks=4,
        storage_per_server=2,
    )
    return DeploymentInput(**{**defaults, **kw})


def _by_key(lines):
    return {line.part_key: line for line in lines}


def test_sixteen_servers_eight_nics_two_tier_fabric():
    # 16 servers × 8 NICs = 128 NIC ports > 64 → two tiers.
    # leaves = ceil(128 / 32 down-ports) = 4; uplinks = 4 × 32 = 128; spines = ceil(128 / 64) = 2
    # links = 128 NIC–leaf + 128 leaf–spine = 256 → optics 512, cables 256.
    bom = generate_bom([_deployment()], spares=SparesPolicy(mode="none"))
    lines = _by_key(bom.lines)
    assert lines["nic:scale-out"].quantity == 128
    assert lines["nic:scale-out"].reason.startswith("16 servers × 8 NICs")
    assert lines["switch:switch-64p:leaf"].quantity == 4
    assert lines["switch:switch-64p:spine"].quantity == 2
    assert lines["optic:optic-400g"].quantity == 512
    assert lines["cable:fibre-cable"].quantity == 256
    assert lines["optic:optic-400g"].reason == (
        "256 links (128 NIC–leaf + 128 leaf–spine) × 2 optics"
    )
    # 4 racks × 2 PDUs (A/B) = 8; 16 servers × 2 drives = 32.
    assert lines["pdu:rack"].quantity == 8
    assert lines["pdu:rack"].reason == "4 racks × 2 PDUs (A/B feeds)"
    assert lines["storage:nvme-drive"].quantity == 32
    assert lines["server:dgx-h100"].quantity == 16
    assert "accelerator:" not in " ".join(lines)  # accelerators come inside the server
    fabric = dict(bom.fabrics)["fra-1"]
    assert (fabric.tiers, fabric.leaves, fabric.spines, fabric.links) == (2, 4, 2, 256)


def test_single_leaf_tier_when_ports_fit_one_switch():
    # 4 servers × 8 NICs = 32 ports ≤ 64 → one switch, no spine; 32 links → 64 optics.
    bom = generate_bom([_deployment(servers=4)], spares=SparesPolicy(mode="none"))
    lines = _by_key(bom.lines)
    assert lines["switch:switch-64p:leaf"].quantity == 1
    assert "switch:switch-64p:spine" not in lines
    assert lines["optic:optic-400g"].quantity == 64
    assert lines["cable:fibre-cable"].quantity == 32


def test_fabric_sizing_partial_leaves_and_limits():
    # 100 ports: leaves = ceil(100/32) = 4 → 128 uplinks → 2 spines.
    plan = plan_fabric(100, FabricSpec(leaf_radix=64))
    assert (plan.leaves, plan.spines, plan.server_links, plan.spine_links) == (4, 2, 100, 128)
    # 3 leaves → 96 uplinks → ceil(96/64) = 2 spines.
    assert plan_fabric(70, FabricSpec()).spines == 2
    # Two-tier maximum with radix 64 is 64 × 32 = 2048 ports.
    assert plan_fabric(2048, FabricSpec()).leaves == 64
    with pytest.raises(BomError, match="three-tier"):
        plan_fabric(2049, FabricSpec())
    with pytest.raises(BomError, match="even"):
        plan_fabric(10, FabricSpec(leaf_radix=63))


def test_nics_default_to_accelerators_and_can_be_overridden():
    lines = _by_key(generate_bom([_deployment(nics_per_server=2)]).lines)
    assert lines["nic:scale-out"].quantity == 32  # 16 × 2
    assert "rail-optimised" not in lines["nic:scale-out"].reason


def test_accelerators_sold_separately_get_their_own_line():
    d = _deployment(accelerators_sold_separately=True, accelerator_slug="h100-pcie")
    lines = _by_key(generate_bom([d]).lines)
    assert lines["accelerator:h100-pcie"].quantity == 128  # 16 × 8
    assert lines["accelerator:h100-pcie"].reason == "16 servers × 8 accelerators"
    assert "without accelerators" in lines["server:dgx-h100"].description
    with pytest.raises(BomError, match="accelerator_slug"):
        generate_bom([_deployment(accelerators_sold_separately=True)])


def test_spares_percent_rounded_up():
    bom = generate_bom([_deployment()], spares=SparesPolicy(mode="percent", percent=Decimal(5)))
    spares = {k: v.quantity for k, v in _by_key(bom.lines).items() if k.startswith("spare:")}
    # NICs 128 × 5 % = 6.4 → 7; optics 512 × 5 % = 25.6 → 26; cables 256 × 5 % = 12.8 → 13;
    # PDUs 8 × 5 % = 0.4 → 1; drives 32 × 5 % = 1.6 → 2. Servers/switches/racks not spared.
    assert spares == {
        "spare:nic:scale-out": 7,
        "spare:optic:optic-400g": 26,
        "spare:cable:fibre-cable": 13,
        "spare:pdu:rack": 1,
        "spare:storage:nvme-drive": 2,
    }
    assert _by_key(bom.lines)["spare:optic:optic-400g"].reason == "5 % of 512, rounded up"


def test_spares_n_plus_1_per_category():
    policy = SparesPolicy(mode="n_plus_1", categories=("server", "switch"))
    bom = generate_bom([_deployment()], spares=policy)
    spares = {k: v.quantity for k, v in _by_key(bom.lines).items() if k.startswith("spare:")}
    assert spares == {
        "spare:server:dgx-h100": 1,
        "spare:switch:switch-64p:leaf": 1,
        "spare:switch:switch-64p:spine": 1,
    }


def test_services_one_line_each_quantity_servers():
    lines = generate_bom([_deployment()]).lines
    services = [line for line in lines if line.category == "service"]
    assert [(s.part_key, s.quantity) for s in services] == [
        ("service:installation", 16),
        ("service:burn-in", 16),
        ("service:support", 16),
    ]


def test_two_deployments_sum_by_part():
    a = _deployment(servers=4, key="a", racks=1, storage_per_server=0)
    b = _deployment(servers=4, key="b", racks=1, storage_per_server=0)
    lines = _by_key(generate_bom([a, b], spares=SparesPolicy(mode="none")).lines)
    # Each deployment: 32 ports on one switch. Together: 2 switches, 64 NICs, 128 optics.
    assert lines["switch:switch-64p:leaf"].quantity == 2
    assert lines["nic:scale-out"].quantity == 64
    assert lines["optic:optic-400g"].quantity == 128
    assert lines["pdu:rack"].quantity == 4


def test_negative_counts_rejected():
    with pytest.raises(BomError, match="servers cannot be negative"):
        generate_bom([_deployment(servers=-1)])


def test_regenerate_keeps_manual_lines_and_reports_changes():
    none = SparesPolicy(mode="none")
    old = generate_bom([_deployment(servers=8, storage_per_server=1)], spares=none).lines
    new = generate_bom([_deployment(servers=16, storage_per_server=0)], spares=none).lines
    manual = [
        BomLine("misc:cable-labels", "other", "Cable labels", 1, "typed by hand", origin="manual"),
        BomLine("optic:optic-400g", "optic", "Optical transceiver", 600, "", origin="override"),
    ]
    lines, changes = regenerate(old, manual, new)
    by_key = _by_key(lines)
    # 8 × 8 = 64 NICs → 16 × 8 = 128 NICs.
    assert "Scale-out NIC: 64 → 128 (servers 8 → 16)" in changes
    # 64 ports fit one switch; 128 need 4 leaves + 2 spines.
    assert "Leaf switch (64-port): 1 → 4 (servers 8 → 16)" in changes
    assert any(c.startswith("added Spine switch (64-port): 2") for c in changes)
    assert any(c.startswith("removed Storage drive: 8") for c in changes)
    # Optics: generated 128 → 512, the hand-set 600 is kept and said so.
    assert "Optical transceiver: 128 → 512 (servers 8 → 16)" in changes
    assert "Optical transceiver: manual quantity 600 kept (generated 512)" in changes
    assert by_key["optic:optic-400g"].quantity == 600
    assert by_key["optic:optic-400g"].origin == "override"
    assert by_key["misc:cable-labels"].quantity == 1
    assert "storage:nvme-drive" not in by_key
    assert by_key["nic:scale-out"].quantity == 128


def test_regenerate_without_changes_reports_nothing():
    lines = generate_bom([_deployment()]).lines
    out, changes = regenerate(lines, [], lines)
    assert changes == ()
    assert out == lines


def _at(lines, site: str):
    return {line.part_key: line for line in lines if line.site == site}


def test_single_server_replicas_get_a_front_end_network_per_site_and_site_pdus():
    # Frankfurt: 3 DGX (pooled incl. spare) in 3 racks at 400 V; Ashburn: 2 DGX in 2 racks
    # at 208 V. Every replica fits one server → no scale-out NICs, one front-end NIC per
    # server, one front-end leaf per site (3 and 2 ports ≤ 64). Each site keeps its own lines.
    fra = _deployment(
        servers=3, racks=3, key="fra", site="Frankfurt", scale_out=False, site_key="site-1",
        pdu_slug="pdu-3ph-415v-32a", pdu_description="Rack PDU, 3-phase 415 V 32 A",
    )  # fmt: skip
    iad = _deployment(
        servers=2, racks=2, key="iad", site="Ashburn", scale_out=False, site_key="site-2",
        pdu_slug="pdu-3ph-208v-30a", pdu_description="Rack PDU, 3-phase 208 V 30 A",
    )  # fmt: skip
    generated = generate_bom([fra, iad]).lines
    f, a = _at(generated, "site-1"), _at(generated, "site-2")
    assert "nic:scale-out" not in f and "nic:scale-out" not in a
    assert f["nic:nic-eth-front-end"].quantity == 3
    assert f["nic:nic-eth-front-end"].reason.startswith("Frankfurt: 3 servers × 1 NICs")
    assert a["nic:nic-eth-front-end"].quantity == 2
    assert f["switch:switch-eth-front-end:leaf"].quantity == 1
    assert a["switch:switch-eth-front-end:leaf"].quantity == 1
    assert f["switch:switch-eth-front-end:leaf"].description == "Front-end leaf switch (64-port)"
    # 3 + 2 links → 6 + 4 optics. Racks 3 and 2; PDUs by each site's electrics, 2 per rack,
    # each only at its own site.
    # The front-end links run at its switch's 100G port speed: 100G optics, never 400G ones.
    assert (f["optic:optic-100g-qsfp28"].quantity, a["optic:optic-100g-qsfp28"].quantity) == (6, 4)
    assert "optic:optic-400g" not in f and "optic:optic-400g" not in a
    assert (f["rack:42u"].quantity, a["rack:42u"].quantity) == (3, 2)
    assert f["pdu:pdu-3ph-415v-32a"].quantity == 6 and "pdu:pdu-3ph-208v-30a" not in f
    assert a["pdu:pdu-3ph-208v-30a"].quantity == 4 and "pdu:pdu-3ph-415v-32a" not in a
    assert f["server:dgx-h100"].reason == "Frankfurt: 3 servers"
    # Spares per site (5 % rounded up of each site's line); services plan-wide on 5 servers.
    assert f["spare:pdu:pdu-3ph-415v-32a"].quantity == 1
    assert a["spare:pdu:pdu-3ph-208v-30a"].quantity == 1
    assert _at(generated, "")["service:installation"].quantity == 5


def test_two_platforms_at_one_site_share_its_lines_and_subtotals_count_each_site():
    from planner.engine.bom import plan_subtotal, site_subtotals

    # Frankfurt holds 2 DGX H100 (1 rack) and 1 HGX B200 (1 rack); Ashburn 2 DGX H100 (2 racks).
    fra_h = _deployment(servers=2, racks=1, key="f-h", site_key="site-1", storage_per_server=0)
    fra_b = _deployment(
        servers=1, racks=1, key="f-b", site_key="site-1", server_slug="hgx-b200",
        server_name="HGX B200", storage_per_server=0,
    )  # fmt: skip
    iad = _deployment(servers=2, racks=2, key="a", site_key="site-2", storage_per_server=0)
    lines = generate_bom([fra_h, fra_b, iad], spares=SparesPolicy(mode="none")).lines
    f = _at(lines, "site-1")
    assert f["rack:42u"].quantity == 2  # 1 + 1 racks at the same site: one line
    assert f["pdu:rack"].quantity == 4
    subtotals = {t.site: t for t in site_subtotals(lines)}
    assert (subtotals["site-1"].servers, subtotals["site-1"].racks) == (3, 2)
    assert (subtotals["site-2"].servers, subtotals["site-2"].racks) == (2, 2)
    assert (subtotals[""].servers, subtotals[""].racks) == (0, 0)  # services only
    total = plan_subtotal(subtotals.values())
    assert (total.servers, total.racks) == (5, 4)


def test_regenerate_matches_lines_by_site_and_part():
    # A hand-set quantity on Frankfurt's racks stays on Frankfurt's racks only.
    old = [
        BomLine("rack:42u", "rack", "Rack", 2, "Frankfurt: 2 racks", site="site-1"),
        BomLine("rack:42u", "rack", "Rack", 2, "Ashburn: 2 racks", site="site-2"),
    ]
    new = [
        BomLine("rack:42u", "rack", "Rack", 3, "Frankfurt: 3 racks", site="site-1"),
        BomLine("rack:42u", "rack", "Rack", 2, "Ashburn: 2 racks", site="site-2"),
    ]
    manual = [BomLine("rack:42u", "rack", "Rack", 4, "", origin="override", site="site-1")]
    lines, changes = regenerate(old, manual, new)
    by_site = {line.site: line for line in lines}
    assert by_site["site-1"].quantity == 4 and by_site["site-1"].origin == "override"
    assert by_site["site-2"].quantity == 2 and by_site["site-2"].origin == "generated"
    assert changes == ("Rack: 2 → 3 (Frankfurt: 2 racks → Frankfurt: 3 racks)",
                       "Rack: manual quantity 4 kept (generated 3)")  # fmt: skip


DGX_NICS = {
    # DGX B200: 8 single-port ConnectX-7 at up to 400 Gb/s ship in the box, behind four OSFP
    # cages of two ports each, and 2 dual-port QSFP112 front-end ports (NVIDIA DGX BasePOD
    # reference architecture; DGX H100 user guide 1.2.3 Network Modules).
    "nics_included_gbps": 400,
    "nics_included_form_factor": "OSFP",
    "nics_included_ports_per_cage": 2,
    "front_end_form_factor": "QSFP112",
}


def test_a_server_with_its_own_nics_gets_none_and_its_twin_port_cages_take_one_module_per_two_links():
    # 4 DGX B200 × 8 ports = 32 ports ≤ 64 → one 400G leaf, 32 links, 32 cables; no NIC line.
    # Optics: the switch end of each link takes one 400G OSFP (32); the DGX end takes one
    # twin-port 2×400G OSFP per cage, 4 per server: 4 × 4 = 16 (not 32 single 400G optics,
    # which the DGX's cages do not take — the old count, 64 optics, bought 16 too many).
    d = _deployment(servers=4, server_slug="dgx-b200", storage_per_server=0)
    lines = _by_key(generate_bom([replace(d, **DGX_NICS)], spares=SparesPolicy("none")).lines)
    assert not [k for k in lines if k.startswith("nic:")]
    assert lines["switch:switch-64p:leaf"].quantity == 1
    assert lines["cable:fibre-cable"].quantity == 32
    assert lines["optic:optic-400g"].quantity == 32
    assert lines["optic:optic-2x400g-osfp"].quantity == 16
    assert "4 servers × 4 OSFP cages" in lines["optic:optic-2x400g-osfp"].reason
    # The same servers with single-server replicas: 4 front-end ports on one 100G switch,
    # 4 links → 8 100G QSFP28 optics (a QSFP28 module fits the DGX's QSFP112 cage) and 4
    # cables, still no NIC line.
    front = _by_key(
        generate_bom([replace(d, scale_out=False, **DGX_NICS)], spares=SparesPolicy("none")).lines
    )
    assert not [k for k in front if k.startswith("nic:")]
    assert front["switch:switch-eth-front-end:leaf"].quantity == 1
    assert front["optic:optic-100g-qsfp28"].quantity == 8
    assert "optic:optic-400g" not in front and "optic:optic-2x400g-osfp" not in front


def test_a_two_tier_dgx_fabric_counts_both_ends_of_leaf_spine_links():
    # 16 DGX × 8 = 128 ports on 64-port switches: 4 leaves (32 down, 32 up), 2 spines,
    # 128 NIC–leaf + 128 leaf–spine links. Single-port 400G optics: 128 at the leaves' down
    # ports + 2 × 128 on leaf–spine links = 384; twin-port modules at the DGX: 16 × 4 = 64.
    d = _deployment(servers=16, server_slug="dgx-b200", storage_per_server=0, racks=4)
    lines = _by_key(generate_bom([replace(d, **DGX_NICS)], spares=SparesPolicy("none")).lines)
    assert lines["optic:optic-400g"].quantity == 128 + 2 * 128
    assert lines["optic:optic-2x400g-osfp"].quantity == 64
    assert lines["cable:fibre-cable"].quantity == 256


@pytest.mark.parametrize(
    ("net", "included", "words"),
    [
        (replace(SCALE_OUT_400G, optic_gbps=100), None, "optic optic-400g 100G ≠ switch port 400G"),
        (replace(FRONT_END_100G, optic_gbps=400), None, "≠ switch port 100G"),
        (replace(SCALE_OUT_400G, nic_gbps=100), None, "NIC 100G ≠ switch port 400G"),
        (replace(SCALE_OUT_400G, cable_gbps=200), None, "cable fibre-cable 200G"),
        (SCALE_OUT_400G, 200, "own 200G NICs are slower than the 400G switch ports"),
        # Form factors: a QSFP28 module does not fit an OSFP switch cage, nor an OSFP module a
        # QSFP28 NIC cage; an unstated form factor cannot be shown to fit.
        (replace(SCALE_OUT_400G, optic_form_factor="QSFP28"), None,
         "optic optic-400g QSFP28 does not fit the switch port \\(OSFP\\)"),
        (replace(SCALE_OUT_400G, nic_form_factor="QSFP28"), None,
         "optic optic-400g OSFP does not fit the server's NIC port \\(QSFP28\\)"),
        (replace(SCALE_OUT_400G, switch_form_factor=""), None, "switch port \\(not stated\\)"),
    ],
)  # fmt: skip
def test_parts_that_do_not_fit_are_refused(net, included, words):
    spec = FabricSpec(scale_out=net, front_end=net)
    with pytest.raises(BomError, match=words):
        generate_bom([_deployment(nics_included_gbps=included)], fabric=spec)


def test_form_factor_fits_follows_the_cage_families():
    assert form_factor_fits("QSFP112", "QSFP28") and form_factor_fits("OSFP", "OSFP")
    assert not form_factor_fits("QSFP28", "QSFP112")  # a newer module in an older cage
    assert not form_factor_fits("OSFP", "QSFP112") and not form_factor_fits("QSFP112", "OSFP")
    assert not form_factor_fits("", "OSFP") and not form_factor_fits("OSFP", "")


def test_a_dgx_without_a_module_for_its_cages_is_refused():
    d = replace(_deployment(servers=2), **DGX_NICS)
    with pytest.raises(BomError, match="no 2-port OSFP transceiver at 400G"):
        generate_bom([d], fabric=FabricSpec(server_optics=()))
    # Its OSFP cages refuse a QSFP112 twin-port module.
    wrong = FabricSpec(server_optics=(OpticPart("optic-2x400g-qsfp", 400, 2, "QSFP112"),))
    with pytest.raises(BomError, match="no 2-port OSFP"):
        generate_bom([d], fabric=wrong)
