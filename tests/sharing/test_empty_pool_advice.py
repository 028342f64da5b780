"""The demo's small fleet: N+1 per platform per site installs far more accelerators than its
replicas use; the sites page says so and gives each fix with its accelerator counts."""

import re
from html import unescape

from django.urls import reverse

from planner.engine import pooling as po
from planner.facility.deployment import plan_deployment


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_the_sites_page_says_a_pool_is_mostly_empty_and_how_to_fill_it(plan, signed_in):
    deployment = plan_deployment(plan=plan)
    empty = po.empty_pools(deployment.pooled, deployment.smaller_platforms)
    assert empty, "the demo's pools use well under half of their accelerators"
    page = signed_in.get(reverse("facility:site_list", args=[plan.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    notices = re.findall(r'data-testid="empty-pool">(.*?)</div>', html, flags=re.S)
    assert len(notices) == len(empty)
    for notice, e in zip(notices, empty, strict=True):
        text = _text(notice)
        site = deployment.labels[e.pool.site_key]
        assert f"{site}: {e.pool.platform.name} is mostly empty" in text
        assert (f"use {e.pool.accelerators_used} of the {e.pool.accelerators_installed} "
                "accelerators installed") in text  # fmt: skip
        kinds = re.findall(r'data-fix="([a-z_]+)"', notice)
        assert kinds == [f.kind for f in e.fixes]
        for fix in e.fixes:
            if fix.kind == "cloud":
                assert f"rent {fix.cloud_accelerators} accelerators" in text
            else:
                assert f"{fix.accelerators_installed} accelerators instead of " in text
        # The demo's catalog has no smaller B200 server: said, not silently skipped.
        if "smaller_server" not in kinds:
            assert "The catalog has no smaller server of the" in text
    # Two sites of one platform: pooling them at one site is offered, with fewer accelerators.
    one_site = [f for e in empty for f in e.fixes if f.kind == "one_site"]
    if len(deployment.pooled.sites) > 1:
        assert one_site and all(f.accelerators_installed < f.accelerators_before for f in one_site)
