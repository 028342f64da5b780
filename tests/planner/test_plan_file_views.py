"""Plan files in the browser: the overview's export download and the plans list's import form
(editors only, all or nothing, the imported plan named apart and with its real BOM state)."""

import copy
import json
import re
from datetime import date

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from planner import freshness
from planner.facility.models import Site
from planner.forms import PlanFileForm
from planner.models import Client, Plan, Workload
from planner.portable import MAX_BYTES, imported_name, plan_document_check, plan_export
from sourcing.models import BomLine, Offer, Supplier
from tests.conftest import make_member


def _upload(client, content: bytes, name: str = "plan.json"):
    return client.post(
        reverse("plan_import"), {"file": SimpleUploadedFile(name, content, "application/json")}
    )


def _counts() -> tuple[int, ...]:
    return tuple(
        m.objects.count() for m in (Plan, Client, Workload, Site, BomLine, Supplier, Offer)
    )


def _bom(plan) -> list[tuple]:
    return sorted(
        BomLine.objects.filter(plan=plan).values_list(
            "part_key", "site__name", "origin", "quantity", "generated_quantity"
        ),
        key=repr,
    )


def test_the_overview_downloads_the_plan_file(demo, client):
    plan, user, _ = demo
    client.force_login(user)

    page = client.get(reverse("plan_detail", args=[plan.pk]))
    response = client.get(reverse("plan_export", args=[plan.pk]))

    assert reverse("plan_export", args=[plan.pk]) in page.content.decode()
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    today = timezone.localdate().isoformat()
    assert plan.name == "Customer assistant and nightly catalogue enrichment"
    assert response["Content-Disposition"] == (
        f'attachment; filename="customer-assistant-and-nightly-catalogue-enrichment-{today}.json"'
    )
    document = plan_document_check(json.loads(response.content))
    assert document["plan"]["name"] == plan.name
    assert len(document["workloads"]) == plan.workloads.count()
    assert len(document["bom_lines"]) == BomLine.objects.filter(plan=plan).count() > 0
    # The BOM's inputs hash names this database's sites: it does not travel.
    assert "bom_inputs_hash" not in document["sourcing_settings"]


def test_a_viewer_may_export_but_not_import(demo, client):
    plan, _, organisation = demo
    client.force_login(make_member(organisation, "vee", role="viewer"))
    before = _counts()

    exported = client.get(reverse("plan_export", args=[plan.pk]))
    listing = client.get(reverse("plan_list"))
    refused = _upload(client, exported.content)

    assert exported.status_code == 200
    assert (
        listing.status_code == 200 and 'data-testid="plan-import"' not in listing.content.decode()
    )
    assert refused.status_code == 403
    assert "Viewers can read plans but not change them." in refused.content.decode()
    assert _counts() == before


def test_another_organisations_plan_cannot_be_exported(demo, client, owner_b):
    client.force_login(owner_b)

    response = client.get(reverse("plan_export", args=[demo[0].pk]))

    assert response.status_code == 404


def test_importing_the_demo_plan_makes_a_named_copy_with_a_current_bom(demo, client):
    plan, user, organisation = demo
    client.force_login(user)
    assert freshness.bom_freshness(plan).state == freshness.CURRENT
    exported = client.get(reverse("plan_export", args=[plan.pk])).content

    response = _upload(client, exported)

    copy_of = Plan.objects.filter(organisation=organisation).exclude(pk=plan.pk).get()
    assert response.status_code == 302
    assert response.url == reverse("plan_detail", args=[copy_of.pk])
    assert copy_of.name == f"{plan.name} (imported {timezone.localdate().isoformat()})"
    assert copy_of.client == plan.client and copy_of.created_by == user
    fields = ("name", "model__slug", "chosen_accelerator__slug", "chosen_replicas")
    assert list(copy_of.workloads.order_by("pk").values_list(*fields)) == list(
        plan.workloads.order_by("pk").values_list(*fields)
    )
    assert _bom(copy_of) == _bom(plan) and _bom(copy_of)
    assert freshness.bom_freshness(copy_of).state == freshness.CURRENT
    page = client.get(response.url)
    assert f"Plan file imported as {copy_of.name}." in page.content.decode()
    assert "Bill of materials: not computed" not in page.content.decode()
    listing = client.get(reverse("plan_list")).content.decode()
    assert plan.name in listing and copy_of.name in listing


def test_an_imported_bom_its_inputs_would_not_generate_is_stale(demo, client):
    plan, user, organisation = demo
    client.force_login(user)
    document = plan_export(plan)
    line = next(row for row in document["bom_lines"] if row["origin"] == "generated")
    line["generated_quantity"] += 1  # the file's lines are not what its inputs generate
    line["quantity"] += 1

    assert _upload(client, json.dumps(document).encode()).status_code == 302

    copy_of = Plan.objects.filter(organisation=organisation).exclude(pk=plan.pk).get()
    assert freshness.bom_freshness(copy_of).state == freshness.STALE


def test_an_older_files_bom_hash_is_read_and_not_trusted(demo, client):
    plan, user, organisation = demo
    client.force_login(user)
    document = plan_export(plan)
    document["sourcing_settings"]["bom_inputs_hash"] = "0" * 64  # another database's sites

    assert _upload(client, json.dumps(document).encode()).status_code == 302

    copy_of = Plan.objects.filter(organisation=organisation).exclude(pk=plan.pk).get()
    assert freshness.bom_freshness(copy_of).state == freshness.CURRENT


def _refused(document: dict) -> dict[str, bytes]:
    wrong_version = {**document, "version": 99}
    bad_slug = copy.deepcopy(document)
    bad_slug["workloads"][0]["model"] = "no-such-model"
    # The last BOM line is refused after the plan, workloads and sites were saved.
    bad_last_line = copy.deepcopy(document)
    bad_last_line["bom_lines"][-1]["site"] = "Nowhere"
    return {
        "not JSON": (b"%PDF-1.7 not a plan", "The file is not JSON"),
        "a JSON list": (b"[1, 2]", "A plan file is a JSON object."),
        "wrong version": (
            json.dumps(wrong_version).encode(),
            "This installation reads version 1, 2 or 3 plan files.",
        ),
        "unknown model": (
            json.dumps(bad_slug).encode(),
            "Workload 1, model: Unknown model architecture &#x27;no-such-model&#x27;",
        ),
        "bad last line": (
            json.dumps(bad_last_line).encode(),
            f"BOM line {len(document['bom_lines'])}, site: Must name a site of the file.",
        ),
        "too large": (b" " * (MAX_BYTES + 1), "The file is larger than 5 MB"),
    }


def test_a_bad_file_gets_an_error_at_the_field_and_creates_nothing(demo, client):
    plan, user, _ = demo
    client.force_login(user)
    before = _counts()

    for name, (content, message) in _refused(plan_export(plan)).items():
        response = _upload(client, content)

        page = response.content.decode()
        assert response.status_code == 400, name
        errors = page.split('id="err-file"', 1)[1].split("</div>", 1)[0]
        assert message in errors, (name, errors)
        assert _counts() == before, name


def test_a_file_with_many_errors_shows_the_first_ten_and_a_count(demo, client):
    client.force_login(demo[1])
    document = plan_export(demo[0])
    for line in document["bom_lines"]:
        line["site"] = "Nowhere"

    response = _upload(client, json.dumps(document).encode())

    errors = response.content.decode().split('id="err-file"', 1)[1].split("</div>", 1)[0]
    assert errors.count('class="error"') == PlanFileForm.ERRORS_SHOWN + 1
    hidden = re.search(r"… and (\d+) more problems\.", errors)
    assert hidden and int(hidden[1]) >= len(document["bom_lines"]) - PlanFileForm.ERRORS_SHOWN


def test_an_empty_submission_asks_for_the_file(demo, client):
    client.force_login(demo[1])

    response = client.post(reverse("plan_import"), {})

    assert response.status_code == 400
    assert "This field is required." in response.content.decode()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Bank chat", "Bank chat (imported 2026-12-02)"),
        ("x" * 200, "x" * 178 + " (imported 2026-12-02)"),
        ("x" * 177 + " yz", "x" * 177 + " (imported 2026-12-02)"),  # no space before "("
    ],
)
def test_the_imported_name_fits_the_field(name, expected):
    result = imported_name(name, date(2026, 12, 2))

    assert result == expected and len(result) <= Plan._meta.get_field("name").max_length
