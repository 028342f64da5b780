"""The operations & security section: saved per plan, scoped to the organisation, shown in
the report and read by the checklist."""

import html
import re

import pytest
from django.urls import reverse

from planner.models import Client, OperationsPlan, Plan
from planner.models.operations import TOPICS
from planner.pdf import context
from planner.pdf.render import render_html
from planner.pdf.samples import sample_snapshot
from planner.sharing import checklist
from planner.sharing.snapshot import plan_snapshot
from tests.html_forms import page_form


@pytest.fixture
def plan(org_a):
    client = Client.objects.create(organisation=org_a, name="Acme")
    return Plan.objects.create(organisation=org_a, client=client, name="Support", currency="EUR")


def _answers(**overrides) -> dict:
    data = {}
    for key, label in TOPICS:
        data[f"{key}_owner"] = f"{label} owner"
        data[f"{key}_how"] = f"{label} tool"
    data.update(overrides)
    return data


def test_answers_are_saved_and_read_by_the_snapshot_and_checklist(client, consultant_a, plan):
    client.force_login(consultant_a)
    url = reverse("operations", args=[plan.pk])
    page = client.get(url).content.decode()
    assert "0 of 7 now" in page
    data = page_form(page, containing="monitoring_owner")
    data.update(_answers(monitoring_how=""))
    response = client.post(url, data)
    assert response.status_code == 302
    ops = OperationsPlan.objects.get(plan=plan)
    assert ops.access_control_owner == "Access control owner"
    assert "6 of 7 now" in client.get(url).content.decode()

    snapshot = plan_snapshot(plan=plan)
    rows = {a["key"]: a for a in snapshot["operations"]["answers"]}
    assert rows["access_control"]["summary"] == "Access control owner — Access control tool"
    assert rows["monitoring"]["filled"] is False
    item = {i["key"]: i for i in snapshot["checklist"]}["monitoring_spares_support"]
    assert item["status"] == checklist.MISSING
    assert "Operations & security: Monitoring has no owner and tool." in item["failing"]
    assert "Access control: Access control owner — Access control tool" in item["evidence"]


def test_a_stale_save_is_refused_and_keeps_what_was_typed(client, consultant_a, plan):
    client.force_login(consultant_a)
    url = reverse("operations", args=[plan.pk])
    client.post(url, _answers())
    data = page_form(client.get(url).content.decode(), containing="monitoring_owner")
    ops = OperationsPlan.objects.get(plan=plan)
    ops.monitoring_owner = "Someone else"
    ops.save()  # another person's save moves the version on
    data["monitoring_owner"] = "Me"
    response = client.post(url, data)
    assert response.status_code == 400  # the same field changed since the page was loaded
    assert 'value="Me"' in html.unescape(response.content.decode())
    assert OperationsPlan.objects.get(plan=plan).monitoring_owner == "Someone else"


def test_another_organisation_cannot_see_or_edit_it(client, owner_b, plan):
    client.force_login(owner_b)
    url = reverse("operations", args=[plan.pk])
    assert client.get(url).status_code == 404
    assert client.post(url, _answers()).status_code == 404
    assert not OperationsPlan.objects.exists()


def test_the_report_shows_the_answers():
    snapshot = sample_snapshot(bom_lines=2)
    snapshot["operations"] = {
        "available": True,
        "notes": "Reviewed with the client's CISO.",
        "answers": [
            {"key": k, "label": label, "owner": "SecOps", "how": "Vault", "filled": True,
             "summary": "SecOps — Vault"}
            for k, label in TOPICS
        ],
    }  # fmt: skip
    doc = context.report_context(snapshot, revision_number=1, published_at=None,
                                 published_by="Dana")  # fmt: skip
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", render_html(
        "pdf/report.html", {"doc": doc}))))  # fmt: skip
    assert "Operations and security" in text
    assert "Model-weight protection SecOps Vault" in text
    assert "Reviewed with the client's CISO." in text
