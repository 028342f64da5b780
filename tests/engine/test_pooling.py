"""Pooled deployment: site split, first-fit-decreasing packing and N+1 per platform and site."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.engine.errors import EngineInputError
from planner.engine.pooling import (
    Platform,
    SiteLocation,
    WorkloadChoice,
    default_site_shares,
    largest_remainder,
    owned_base,
    pack_replicas,
    plan_pooled,
    replicas_before_spares,
    servers_per_workload,
)

DGX = Platform("dgx-b200", "DGX B200", "b200", "B200", 8, 14.3, 10)
HGX4 = Platform("hgx-4", "4× H100 server", "h100", "H100", 4, 5.6, 4)


def choice(wid, tp, replicas, n_plus_one=True, shares=(), platform=DGX):
    return WorkloadChoice(wid, f"w{wid}", platform, "fp8", tp, replicas, n_plus_one, shares)


def test_demo_shape_two_workloads_share_one_server_plus_one_spare():
    # Chat: 5 replicas incl. 1 spare → 4 at peak; batch: 1 replica, no N+1. TP 1 each.
    chat = choice(1, 1, replicas_before_spares(5, True))
    batch = choice(2, 1, replicas_before_spares(1, False), n_plus_one=False)
    plan = plan_pooled([chat, batch], ["fra"])
    pool = plan.sites[0].pools[0]
    # 4 + 1 = 5 accelerators fit one 8-GPU server; one spare server for the platform.
    assert pool.server_fill == (5,)
    assert (pool.servers_for_load, pool.spare_servers, pool.servers) == (1, 1, 2)
    assert pool.accelerators_used == 5
    assert pool.accelerators_installed == 16
    assert plan.it_load_kw == pytest.approx(2 * 14.3)
    # Unpooled: chat 1 + spare 1, batch 1 → 3 servers.
    assert servers_per_workload([chat, batch], ["fra"]) == 3


def test_mixed_tp_first_fit_decreasing():
    # TP 4 ×3, TP 2 ×3, TP 1 ×2 = 20 accelerators on 8-GPU servers:
    # server 1: 4+4, server 2: 4+2+2, server 3: 2+1+1 → 3 servers = ceil(20/8).
    plan = plan_pooled(
        [choice(1, 4, 3, False), choice(2, 2, 3, False), choice(3, 1, 2, False)], ["a"]
    )
    pool = plan.sites[0].pools[0]
    assert pool.server_fill == (8, 8, 4)
    assert pool.servers == 3
    assert pool.spare_servers == 0


def test_split_sixty_forty_over_two_sites_each_with_its_spare():
    # 10 replicas of TP 2 at 60/40: 6 to Frankfurt (12 GPUs → 2 servers + spare = 3),
    # 4 to Ashburn (8 GPUs → 1 server + spare = 2).
    plan = plan_pooled([choice(1, 2, 10, True, (("fra", 60), ("iad", 40)))], ["fra", "iad"])
    assert plan.workload_sites[1] == (("fra", 6), ("iad", 4))
    fra, iad = plan.site("fra"), plan.site("iad")
    assert (fra.servers, fra.accelerators_used) == (3, 12)
    assert (iad.servers, iad.accelerators_used) == (2, 8)
    assert plan.servers == 5


def test_platforms_are_pooled_separately_at_a_site():
    plan = plan_pooled([choice(1, 1, 3, True), choice(2, 2, 3, True, platform=HGX4)], ["a"])
    site = plan.sites[0]
    by_key = {p.platform.key: p for p in site.pools}
    # DGX: 3 GPUs → 1 server + 1 spare. HGX4: 3 × TP2 = 6 GPUs → 2 servers (2+2, 2) + 1 spare.
    assert by_key["dgx-b200"].servers == 2
    assert by_key["hgx-4"].server_fill == (4, 2)
    assert by_key["hgx-4"].servers == 3
    assert site.it_load_kw == pytest.approx(2 * 14.3 + 3 * 5.6)


def test_a_hybrids_owned_base_cuts_each_site_to_its_servers_with_its_spare():
    # Frankfurt 3 servers (2 + spare), Ashburn 2 (1 + spare), as above; DGX and HGX4 at a
    # third site (2 + 3). The hybrid's base: Frankfurt all 3, Ashburn none, 3 of the mixed 5.
    plan = plan_pooled([choice(1, 2, 10, True, (("fra", 60), ("iad", 40)))], ["fra", "iad"])
    base = owned_base(plan, {"fra": 3})
    assert [s.site_key for s in base.sites] == ["fra"]
    assert base.site("fra") == plan.site("fra")
    assert base.workload_sites == plan.workload_sites
    # 2 of Frankfurt's 3: one load server and the spare.
    two = owned_base(plan, {"fra": 2, "iad": 2}).site("fra").pools[0]
    assert (two.servers_for_load, two.spare_servers, two.server_fill) == (1, 1, (8,))
    mixed = plan_pooled([choice(1, 1, 3, True), choice(2, 2, 3, True, platform=HGX4)], ["a"])
    cut = owned_base(mixed, {"a": 3}).site("a")
    # 3 split over 2 and 3 servers by largest remainder: 1 DGX (no room for its spare, so it
    # serves load) and 2 HGX4 (one load server and the spare).
    by_key = {p.platform.key: (p.servers_for_load, p.spare_servers) for p in cut.pools}
    assert by_key == {"dgx-b200": (1, 0), "hgx-4": (1, 1)}
    assert cut.servers == 3
    assert owned_base(mixed, {}).sites == ()


def test_replica_wider_than_a_server_takes_whole_servers_and_needs_scale_out():
    plan = plan_pooled([choice(1, 16, 2, False)], ["a"])
    pool = plan.sites[0].pools[0]
    assert pool.servers == 4
    assert pool.spans_servers
    assert pool.server_fill == (8, 8, 8, 8)


def test_largest_remainder_hand_cases():
    assert largest_remainder(7, [1, 1, 1]) == (3, 2, 2)
    assert largest_remainder(10, [60, 40]) == (6, 4)
    assert largest_remainder(5, [50, 50]) == (3, 2)
    assert largest_remainder(4, [0, 0]) == (4, 0)
    assert largest_remainder(0, [30, 70]) == (0, 0)


def test_bad_inputs_are_refused():
    with pytest.raises(EngineInputError):
        plan_pooled([choice(1, 1, 1)], [])
    with pytest.raises(EngineInputError):
        plan_pooled([choice(1, 1, 1, shares=(("nowhere", 100),))], ["a"])
    with pytest.raises(EngineInputError):
        choice(1, 0, 1)


def test_replicas_before_spares():
    assert replicas_before_spares(5, True) == 4
    assert replicas_before_spares(5, False) == 5
    assert replicas_before_spares(6, True, failure_domains=2) == 4


def test_default_split_sends_each_region_to_the_nearest_site_within_budget():
    regions = {"eu": (50.1, 8.7), "us": (38.9, -77.0)}
    sites = [SiteLocation("fra", 50.1, 8.7), SiteLocation("iad", 39.0, -77.5)]
    shares, notes = default_site_shares({"eu": 60, "us": 40}, regions, sites, 100.0)
    assert shares == (("fra", 60.0), ("iad", 40.0))
    assert notes == ()
    # A 1 ms budget fits nobody: the nearest site still takes each region, with a note.
    shares, notes = default_site_shares({"eu": 60, "us": 40}, regions, sites, 1.0)
    assert shares == (("fra", 60.0), ("iad", 40.0))
    assert len(notes) == 2
    # No coordinates: everything on the first site.
    shares, _ = default_site_shares({"eu": 60}, regions, [SiteLocation("x", None, None)], 100.0)
    assert shares == (("x", 100.0),)


TP = st.sampled_from([1, 2, 4, 8, 16])
PER_SERVER = st.sampled_from([1, 2, 4, 8])


@settings(max_examples=200)
@given(
    per_server=PER_SERVER,
    workloads=st.lists(
        st.tuples(TP, st.integers(0, 40), st.booleans(), st.integers(0, 100), st.integers(0, 100)),
        min_size=1,
        max_size=5,
    ),
)
def test_pooling_properties(per_server, workloads):
    platform = Platform("p", "P", "a", "A", per_server, 10.0, 4)
    choices = [
        choice(i, tp, n, n1, (("eu", a), ("us", b)), platform)
        for i, (tp, n, n1, a, b) in enumerate(workloads)
    ]
    plan = plan_pooled(choices, ["eu", "us"])
    # Every replica is placed, at the sites that add up to its count.
    for c in choices:
        assert sum(n for _, n in plan.workload_sites[c.workload_id]) == c.replicas
    assert plan.replicas == sum(c.replicas for c in choices)
    for pool in plan.pools:
        used = pool.accelerators_used
        # Each server holds at most its accelerators; servers cover the accelerators used.
        assert all(0 < f <= per_server for f in pool.server_fill)
        assert sum(pool.server_fill) == used
        assert pool.servers_for_load >= math.ceil(used / per_server)
        # A replica fitting one server is in one server: FFD with divisible sizes is optimal.
        if not pool.spans_servers:
            assert pool.servers_for_load == math.ceil(used / per_server)
        assert pool.spare_servers <= 1
    # Pooling never uses more servers than giving each workload its own.
    assert plan.servers <= servers_per_workload(choices, ["eu", "us"])


@given(sizes=st.lists(st.sampled_from([1, 2, 4, 8]), max_size=60), per_server=PER_SERVER)
def test_every_replica_lands_in_one_server(sizes, per_server):
    fill, wide = pack_replicas(sizes, per_server)
    fitting = [s for s in sizes if s <= per_server]
    assert sum(fill) == sum(fitting)
    assert wide == sum(math.ceil(s / per_server) for s in sizes if s > per_server)
    assert all(f <= per_server for f in fill)


# --- Mostly empty pools ------------------------------------------------------------------------


def test_a_mostly_empty_pool_gets_each_fix_with_its_accelerator_counts():
    from planner.engine.pooling import empty_pools

    # The demo's shape: 6 busy B200 (TP 1), split 4 Frankfurt / 2 Ashburn, N+1 per site:
    # each site 1 server for load + 1 spare → 4 DGX B200, 32 accelerators for 6 busy.
    chat = choice(1, 1, 4, shares=(("fra", 2.0), ("ash", 1.0)))
    batch = choice(2, 1, 2, n_plus_one=False, shares=(("fra", 0.0), ("ash", 1.0)))
    plan = plan_pooled([chat, batch], ["fra", "ash"])
    assert (plan.servers, plan.accelerators_installed, plan.accelerators_used) == (4, 32, 6)
    hgx4 = Platform("hgx-b200-4", "4× B200 server", "b200", "B200", 4, 7.5, 6)
    other = Platform("pcie-h100-2", "2× H100 PCIe", "h100", "H100", 2, 2.0, 2)
    empty = empty_pools(plan, [hgx4, other])
    assert [(e.pool.site_key, e.pool.accelerators_used, e.pool.accelerators_installed)
            for e in empty] == [("fra", 3, 16), ("ash", 3, 16)]  # fmt: skip
    fra = {f.kind: f for f in empty[0].fixes}
    assert set(fra) == {"smaller_server", "one_site", "cloud"}  # the H100 server is no fix
    # 3 TP-1 replicas on 4-GPU servers: 1 server + 1 spare = 8 accelerators instead of 16.
    assert (fra["smaller_server"].servers, fra["smaller_server"].accelerators_installed) == (2, 8)
    assert fra["smaller_server"].platform == hgx4
    # All 6 replicas at one site: 1 server + 1 spare = 16 accelerators instead of 32.
    one = fra["one_site"]
    assert (one.servers, one.accelerators_installed, one.accelerators_before) == (2, 16, 32)
    cloud = fra["cloud"]
    assert (cloud.accelerators_installed, cloud.cloud_accelerators) == (0, 3)


def test_a_well_used_pool_or_a_wide_replica_gets_no_smaller_server():
    from planner.engine.pooling import empty_pools

    full = plan_pooled([choice(1, 1, 7)], ["a"])  # 7 + spare 8 → 7 of 16 used: < 50 %
    assert len(empty_pools(full)) == 1
    busy = plan_pooled([choice(1, 8, 3)], ["a"])  # 24 of 32: well used
    assert empty_pools(busy) == ()
    # TP 8 replicas cannot go to a 4-GPU server.
    wide = plan_pooled([choice(1, 8, 1)], ["a"])  # 8 of 16
    hgx4 = Platform("hgx-b200-4", "4× B200 server", "b200", "B200", 4, 7.5, 6)
    kinds = [f.kind for f in empty_pools(wide, [hgx4], threshold=0.6)[0].fixes]
    assert kinds == ["cloud"]
