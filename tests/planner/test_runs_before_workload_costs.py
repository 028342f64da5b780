"""A TCO run stored before per-workload costs existed (its options have no ``workloads``)
still reads everywhere: the sizing page's cost target, the overview and the client's page
served a 500 on such a run (pydantic refused ``workloads: None``)."""

import pytest
from django.urls import reverse

from planner.facility.models import TcoRun, TcoStatus
from planner.pdf.context import headline_option
from planner.sharing import schema

pytestmark = pytest.mark.django_db


def test_an_option_without_workload_costs_reads_as_none_known():
    option = schema.TcoOption.model_validate({"key": "owned", "label": "Owned", "workloads": None})
    assert option.workloads == [] and option.workload_cost(1) is None
    tco = {"available": True, "options": [{"key": "owned", "label": "Owned", "workloads": None}]}
    chosen = headline_option(tco, {"available": True, "chosen_key": "owned"})
    assert chosen is not None and chosen.key == "owned"


def test_the_pages_read_a_run_stored_before_workload_costs(client, demo):
    plan, user, _ = demo
    run = TcoRun.objects.filter(plan=plan, status=TcoStatus.SUCCEEDED).latest("pk")
    for option in run.results["options"]:
        option.pop("workloads", None)
    run.save(update_fields=["results"])
    client.force_login(user)
    workload = plan.workloads.order_by("pk").first()
    for url in (
        reverse("workload_sizing", args=[plan.pk, workload.pk]),
        reverse("plan_detail", args=[plan.pk]),
        reverse("facility:tco", args=[plan.pk]),
        reverse("sharing:checklist", args=[plan.pk]),
    ):
        assert client.get(url).status_code == 200, url
