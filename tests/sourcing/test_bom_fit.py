"""Every generated BOM of the catalog's server platforms fits together: the NIC, switch port,
optic and cable of each link run at one speed, and a platform that ships with its NICs gets
none added."""

from types import SimpleNamespace

import pytest

from catalog.models import ServerPlatform
from planner.engine import bom as bom_engine
from sourcing import services
from sourcing.models import SourcingSettings

LINK_CATEGORIES = ("nic", "switch", "optic", "cable")


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
        slug, name, separate, included = services._server_for(platform)
        assert slug == server.slug and included == server.nics_included_gbps
        for scale_out in (True, False):
            deployment = bom_engine.DeploymentInput(
                key=slug,
                server_slug=slug,
                server_name=name,
                servers=2,
                accelerators_per_server=platform.accelerators_per_server,
                accelerator_slug=platform.accelerator_slug or "l40s",
                accelerators_sold_separately=separate,
                racks=1,
                scale_out=scale_out,
                nics_included_gbps=included,
            )
            lines = bom_engine.generate_bom([deployment], fabric=fabric).lines
            speeds = _speeds(lines)
            (switch_gbps,) = speeds["switch"]
            where = f"{server} ({'scale-out' if scale_out else 'front-end'})"
            assert speeds["optic"] == {switch_gbps}, where
            assert speeds["cable"] <= {switch_gbps, None}, where  # passive fibre: no speed
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
