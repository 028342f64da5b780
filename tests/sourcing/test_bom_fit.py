"""Every generated BOM of the catalog's server platforms fits together: the NIC, switch port,
optic and cable of each link run at one speed, every transceiver's form factor fits the cage
at its end, and a platform that ships with its NICs gets none added."""

from types import SimpleNamespace

import pytest

from catalog.models import Part, ServerPlatform
from planner.engine import bom as bom_engine
from sourcing import services
from sourcing.models import SourcingSettings

LINK_CATEGORIES = ("nic", "switch", "optic", "cable")


def _parts(lines, category: str) -> list:
    return [services._resolve(x.part_key)["part"] for x in lines if x.category == category]


def _speeds(lines) -> dict[str, set[int | None]]:
    """Port speeds (Gb/s) of the catalog parts behind the network lines, by category."""
    found: dict[str, set[int | None]] = {c: set() for c in LINK_CATEGORIES}
    for line in lines:
        if line.category in LINK_CATEGORIES:
            part = services._resolve(line.part_key)["part"]
            assert part is not None, f"{line.part_key} is not a catalog part"
            found[line.category].add(part.port_speed_gbps)
    return found


@pytest.mark.django_db
def test_every_server_platform_of_the_catalog_gets_a_bom_that_fits(catalog):
    fabric = services._fabric(SourcingSettings(leaf_radix=64))
    servers = list(ServerPlatform.objects.order_by("slug"))
    assert len(servers) == 10
    walked = []
    for server in servers:
        platform = SimpleNamespace(
            key=server.slug,
            name=str(server),
            accelerator_slug=server.accelerator.slug if server.accelerator else "",
            accelerators_per_server=server.accelerators_per_server or 8,
        )
        chosen = services._server_for(platform)
        slug, included = chosen.slug, chosen.nics_included_gbps
        assert slug == server.slug and included == server.nics_included_gbps
        for scale_out in (True, False):
            deployment = bom_engine.DeploymentInput(
                key=slug,
                server_slug=slug,
                server_name=chosen.name,
                servers=2,
                accelerators_per_server=platform.accelerators_per_server,
                accelerator_slug=platform.accelerator_slug or "l40s",
                accelerators_sold_separately=chosen.accelerators_sold_separately,
                racks=1,
                scale_out=scale_out,
                nics_included_gbps=included,
                nics_included_form_factor=chosen.nics_included_form_factor,
                nics_included_ports_per_cage=chosen.nics_included_ports_per_cage,
                front_end_form_factor=chosen.front_end_form_factor,
            )
            lines = bom_engine.generate_bom([deployment], fabric=fabric).lines
            speeds = _speeds(lines)
            (switch_gbps,) = speeds["switch"]
            where = f"{server} ({'scale-out' if scale_out else 'front-end'})"
            assert speeds["optic"] == {switch_gbps}, where
            assert speeds["cable"] <= {switch_gbps, None}, where  # passive fibre: no speed
            # Form factors: each end's transceiver fits the cage it plugs into.
            (switch,) = set(_parts(lines, "switch"))
            nics = set(_parts(lines, "nic"))
            server_cage = (
                chosen.nics_included_form_factor if scale_out else chosen.front_end_form_factor
            )
            cages = {n.form_factor for n in nics} if included is None else {server_cage}
            optics = _parts(lines, "optic")
            assert all(o.form_factor for o in optics) and switch.form_factor, where
            at_switch = [o for o in optics if (o.ports or 1) == 1]
            at_server = [o for o in optics if (o.ports or 1) > 1] or at_switch
            assert all(bom_engine.form_factor_fits(switch.form_factor, o.form_factor)
                       for o in at_switch), where  # fmt: skip
            assert all(bom_engine.form_factor_fits(c, o.form_factor)
                       for c in cages for o in at_server), where  # fmt: skip
            if included is None:
                assert speeds["nic"] == {switch_gbps}, where
            else:
                assert speeds["nic"] == set(), f"{where}: a NIC added to a server that has its own"
                assert included >= switch_gbps, where
            walked.append((server.slug, scale_out, included))
    assert len(walked) == 2 * len(servers)
    # The walk covers the DGX systems that ship with 400G ConnectX-7 and platforms that do not.
    assert ("nvidia-dgx-b200", True, 400) in walked and ("nvidia-dgx-h100", False, 400) in walked
    assert any(included is None for _, _, included in walked)


@pytest.mark.django_db
def test_four_dgx_b200_on_one_64_port_switch_count_one_twin_port_module_per_two_links(catalog):
    """4 DGX B200, replicas spanning servers: 4 × 8 ConnectX-7 ports = 32 ≤ 64 → one leaf,
    32 links, 32 fibres. Optics: one single-port 400G OSFP at the switch end of each link
    (32) and, at the DGX end, one twin-port 2×400G OSFP per cage (4 cages a DGX, DGX BasePOD
    reference architecture): 4 × 4 = 16. The count before: 2 × 32 = 64 single 400G optics."""
    fabric = services._fabric(SourcingSettings(leaf_radix=64))
    dgx = ServerPlatform.objects.get(slug="nvidia-dgx-b200")
    chosen = services._server_for(
        SimpleNamespace(key=dgx.slug, name=str(dgx), accelerator_slug="b200",
                        accelerators_per_server=8)
    )  # fmt: skip
    assert (chosen.nics_included_form_factor, chosen.nics_included_ports_per_cage) == ("OSFP", 2)
    deployment = bom_engine.DeploymentInput(
        key="b200", server_slug=chosen.slug, server_name=chosen.name, servers=4,
        accelerators_per_server=8, racks=1, nics_included_gbps=400,
        nics_included_form_factor="OSFP", nics_included_ports_per_cage=2,
        front_end_form_factor="QSFP112",
    )  # fmt: skip
    lines = {x.part_key: x for x in bom_engine.generate_bom(
        [deployment], fabric=fabric, spares=bom_engine.SparesPolicy("none")).lines}  # fmt: skip
    assert lines["switch:switch-ib-64x400g:leaf"].quantity == 1
    assert lines["cable:cable-fiber-mpo"].quantity == 32
    assert lines["optic:optic-400g"].quantity == 32
    assert lines["optic:optic-2x400g-osfp"].quantity == 16
    twin = Part.objects.get(slug="optic-2x400g-osfp")
    assert (twin.ports, twin.port_speed_gbps, twin.form_factor) == (2, 400, "OSFP")
    assert not [k for k in lines if k.startswith("nic:")]


@pytest.mark.django_db
def test_the_fit_walk_fails_on_a_form_factor_mismatch(catalog):
    Part.objects.filter(slug="optic-400g").update(form_factor="QSFP112")
    fabric = services._fabric(SourcingSettings(leaf_radix=64))
    deployment = bom_engine.DeploymentInput(
        key="hgx", server_slug="hgx", server_name="HGX", servers=2, accelerators_per_server=8,
        racks=1,
    )  # fmt: skip
    with pytest.raises(bom_engine.BomError, match="QSFP112 does not fit the switch port"):
        bom_engine.generate_bom([deployment], fabric=fabric)
