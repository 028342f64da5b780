"""One computed plan state per request: each part (per-workload deployments, the pooled
deployment, the landed cost, the TCO inputs) is built at most once per request or job, and a
write inside the request makes the next read build again."""

import pytest
from django.db.models import F
from django.urls import reverse

from planner.computed import computed, counting_builds, neutral_writes, plan_state_scope
from planner.engine.errors import CatalogGapError
from planner.facility.deployment import plan_deployment
from planner.models import Workload

pytestmark = pytest.mark.django_db

PARTS = {
    "deployment", "per_workload_deployments", "landed_cost", "tco_inputs", "tco_inputs_digest",
    "bom_inputs_hash", "usd_rate",
}  # fmt: skip
SHOWN = {"tco_figures"}  # what a page draws from a stored result (the TCO run's charts)


class Builder:
    def __init__(self, result=None, error=None):
        self.calls, self.result, self.error = 0, result, error

    def __call__(self):
        self.calls += 1
        if self.error:
            raise self.error
        return self.result


def test_outside_a_scope_every_read_builds():
    build = Builder(result=("a",))
    computed(("part", 1), build)
    computed(("part", 1), build)
    assert build.calls == 2


def test_inside_a_scope_a_part_is_built_once_per_key():
    build = Builder(result=("a",))
    with plan_state_scope():
        first = computed(("part", 1), build)
        assert computed(("part", 1), build) is first
        computed(("part", 2), build)
        with plan_state_scope():  # a nested scope shares the outer one
            computed(("part", 1), build)
    assert build.calls == 2
    with plan_state_scope():  # a new scope (the next request) builds again
        computed(("part", 1), build)
    assert build.calls == 3


def test_a_list_is_handed_out_as_a_copy():
    with plan_state_scope():
        mine = computed("rows", lambda: [1, 2])
        mine.append(3)
        assert computed("rows", lambda: [9]) == [1, 2]


def test_a_refusal_is_remembered_and_raised_to_every_reader():
    build = Builder(error=CatalogGapError("no TDP", item="x", figure="tdp_w"))
    with plan_state_scope():
        for _ in range(3):
            with pytest.raises(CatalogGapError, match="no TDP"):
                computed("deployment", build)
    assert build.calls == 1


def test_a_write_forgets_what_was_built_and_bookkeeping_does_not(demo):
    plan = demo[0]
    build = Builder(result=("a",))
    with plan_state_scope():
        computed("part", build)
        plan.workloads.filter(pk=-1).update(name="x")  # an UPDATE, even of no row
        computed("part", build)
        assert build.calls == 2
        with neutral_writes():
            plan.workloads.filter(pk=-1).update(name="x")
        from django.contrib.sessions.backends.db import SessionStore

        SessionStore().save()  # a session write changes no plan
        computed("part", build)
        assert build.calls == 2


def test_a_change_saved_inside_the_request_is_in_the_next_read(demo):
    plan = demo[0]
    chat = plan.workloads.get(name="Customer chat assistant")
    with plan_state_scope():
        before = plan_deployment(plan=plan)
        Workload.objects.filter(pk=chat.pk).update(chosen_replicas=F("chosen_replicas") + 8)
        after = plan_deployment(plan=plan)
    assert after.pooled.replicas > before.pooled.replicas
    assert after == plan_deployment(plan=plan)  # built again outside any scope: the same


PAGES = [
    "plan_detail", "facility:site_list", "facility:placement", "facility:tco", "sourcing:bom",
    "sourcing:landed_cost", "sourcing:timeline", "sourcing:orders", "sourcing:quote",
    "sharing:review", "sharing:checklist",
]  # fmt: skip
API = ["deployment", "facility-checks", "placement", "landed-cost", "timeline", "bom"]


def test_each_page_builds_each_part_of_the_plan_at_most_once(client, demo):
    from tests.api.conftest import _token, bearer

    plan, user, organisation = demo
    client.force_login(user)
    headers = bearer(_token(organisation, user))
    requests = [(reverse(name, args=[plan.pk]), {}) for name in PAGES]
    requests += [(f"/api/v1/plans/{plan.pk}/{path}", headers) for path in API]
    seen = {}
    for url, extra in requests:
        with counting_builds() as builds:
            response = client.get(url, headers=extra)
        assert response.status_code == 200, url
        assert set(builds) <= PARTS | SHOWN, url
        assert all(count == 1 for count in builds.values()), (url, builds)
        seen[url] = builds
    # The walk means something: the overview reads every part, the quote the landed cost.
    assert set(seen[reverse("plan_detail", args=[plan.pk])]) == PARTS
    assert "landed_cost" in seen[reverse("sourcing:quote", args=[plan.pk])]
