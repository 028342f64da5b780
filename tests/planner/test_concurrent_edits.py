"""Two consultants edit the same row: the second save of an old form never reverts the first.

Every edit form of the demo plan is loaded twice (two people opening the page), one saves,
the other then saves the form they loaded: a change to the same field is refused with what
changed meanwhile (their value, your value) and the database keeps the first change; a
change to another field is merged, keeping both. The workload's htmx autosave carries the
version each save answers, so one person's consecutive autosaves never conflict.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection
from django.forms.models import model_to_dict
from django.urls import reverse

from planner.facility import services as facility_services
from planner.models import Membership, Role
from tests.conftest import make_member
from tests.html_forms import hidden_inputs, page_form


@dataclass(frozen=True)
class EditForm:
    """How to reach one edit form of the demo plan and two fields to change on it."""

    name: str
    row: Callable[[Any, Any], Any]  # (plan, organisation) -> the row the form edits
    page: Callable[[Any], str]  # row -> the page with the form
    field: str  # the field both people change
    first: str  # the first person's value
    second: str  # the second person's value
    other: str | None = None  # a field only the second person changes (merge)
    other_value: str = ""
    post: Callable[[Any], str] | None = None  # row -> where the form posts (default: page)
    prefix: str = ""

    def key(self, row, name: str) -> str:
        return f"{self.prefix.format(pk=row.pk)}{name}"


def _first(queryset):
    row = queryset.order_by("pk").first()
    assert row is not None
    return row


def _member(plan, organisation):
    user = make_member(organisation, "second-consultant")
    return Membership.objects.get(organisation=organisation, user=user)


FORMS = [
    EditForm(
        "workload", lambda p, o: _first(p.workloads),
        lambda r: reverse("workload_sizing", args=[r.plan_id, r.pk]),
        "headroom_pct", "30", "25", "name", "Customer chat (EU and US)",
    ),
    EditForm(
        "plan", lambda p, o: p, lambda r: reverse("plan_edit", args=[r.pk]),
        "notes", "notes from the first", "notes from the second", "name", "Renamed plan",
    ),
    EditForm(
        "client", lambda p, o: p.client, lambda r: reverse("client_edit", args=[r.pk]),
        "notes", "notes from the first", "notes from the second", "contact_name", "Sam Jansen",
    ),
    EditForm(
        "site", lambda p, o: _first(p.sites),
        lambda r: reverse("facility:site_detail", args=[r.plan_id, r.pk]),
        "notes", "notes from the first", "notes from the second", "pue", "1.45",
    ),
    EditForm(
        "tco settings", lambda p, o: facility_services.tco_settings_for_edit(plan=p),
        lambda r: reverse("facility:tco", args=[r.plan_id]),
        "spares_pct", "5", "8", "residual_pct", "10",  # (money fields show the plan currency)
    ),
    EditForm(
        "placement settings", lambda p, o: facility_services.placement_decision_for_edit(plan=p),
        lambda r: reverse("facility:placement", args=[r.plan_id]),
        "network_share_pct", "30", "40", "control_requirement", "4",
    ),
    EditForm(
        "placement choice", lambda p, o: facility_services.placement_decision_for_edit(plan=p),
        lambda r: reverse("facility:placement", args=[r.plan_id]),
        "reason", "The colocation suite is closest to the users.",
        "The cloud region is cheaper over three years.",
    ),
    EditForm(
        "bom line", lambda p, o: _first(p.bom_lines.filter(quantity__gt=0, service="")),
        lambda r: reverse("sourcing:bom", args=[r.plan_id]),
        "quantity", "9", "7", "hs_code", "8473.30",
        post=lambda r: reverse("sourcing:bom_line_edit", args=[r.plan_id, r.pk]),
        prefix="line{pk}-",
    ),
    EditForm(
        "sourcing settings", lambda p, o: p.sourcing_settings,
        lambda r: reverse("sourcing:settings", args=[r.plan_id]),
        "installation_days", "5", "6", "burn_in_days", "4",
    ),
    EditForm(
        "supplier", lambda p, o: _first(o.suppliers),
        lambda r: reverse("sourcing:supplier_detail", args=[r.pk]),
        "notes", "notes from the first", "notes from the second", "phone", "+31 20 555 0101",
    ),
    EditForm(
        "offer", lambda p, o: _first(_first(o.suppliers).offers),
        lambda r: reverse("sourcing:offer_edit", args=[r.pk]),
        "notes", "notes from the first", "notes from the second", "lead_time_days", "45",
    ),
    EditForm(
        "purchase order", lambda p, o: _first(p.purchase_orders),
        lambda r: reverse("sourcing:order_detail", args=[r.plan_id, r.pk]),
        "notes", "notes from the first", "notes from the second", "logistics_owner", "Freight Co",
    ),
    EditForm(
        "quote terms", lambda p, o: o, lambda r: reverse("quote_terms"),
        "quote_terms", "Prices in EUR.", "Prices in USD.", "quote_validity_days", "45",
    ),
    EditForm(
        "member role", _member, lambda r: reverse("member_edit", args=[r.pk]),
        "role", Role.VIEWER, Role.OWNER,
    ),
]  # fmt: skip


def _stored(row, name: str) -> str:
    row.refresh_from_db()
    value = getattr(row, name)
    return str(value.normalize() if hasattr(value, "normalize") else value)


def _same_value(stored: str, typed: str) -> bool:
    try:
        return float(stored) == float(typed)
    except ValueError:
        return stored.strip() == typed.strip()


@pytest.mark.parametrize("spec", FORMS, ids=[f.name for f in FORMS])
def test_a_stale_form_is_refused_on_the_same_field_and_merged_on_another(client, demo, spec):
    plan, owner, organisation = demo
    row = spec.row(plan, organisation)
    client.force_login(owner)
    page = client.get(spec.page(row))
    assert page.status_code == 200
    key = spec.key(row, spec.field)
    loaded = page_form(page.content.decode(), containing=key)  # both people load the form
    assert spec.key(row, "loaded_version") in loaded
    post_url = spec.post(row) if spec.post else spec.page(row)

    first = client.post(post_url, {**loaded, key: spec.first})
    assert first.status_code == 302, first.content.decode()[:2000]
    assert _same_value(_stored(row, spec.field), spec.first)

    second = client.post(post_url, {**loaded, key: spec.second})
    body = second.content.decode()
    assert second.status_code == 400, body[:2000]
    assert "changed this" in body and "while you were editing" in body
    assert f"now {spec.first}" in body.replace(".0,", ",") or spec.first in body
    assert f"yours {spec.second}" in body or spec.second in body
    assert "Changed meanwhile to" in body
    assert _same_value(_stored(row, spec.field), spec.first), "the first change was reverted"
    # Nothing typed is lost: the refused form still holds the second person's value.
    refused = page_form(body, containing=key)
    assert refused[key].strip() == spec.second.strip()

    if spec.other:
        other_key = spec.key(row, spec.other)
        merged = client.post(post_url, {**loaded, other_key: spec.other_value}, follow=True)
        assert merged.status_code == 200
        assert "Kept the changes saved meanwhile to" in merged.content.decode()
        assert _same_value(_stored(row, spec.field), spec.first)
        assert _same_value(_stored(row, spec.other), spec.other_value)

    # Loaded afresh and saved unchanged: no stored value changes.
    before = model_to_dict(row.__class__.objects.get(pk=row.pk))
    fresh = page_form(client.get(spec.page(row)).content.decode(), containing=key)
    assert client.post(post_url, fresh).status_code == 302
    after = model_to_dict(row.__class__.objects.get(pk=row.pk))
    assert after == before


def test_a_refused_form_saved_again_keeps_the_second_persons_value(client, demo):
    plan, owner, _ = demo
    site = plan.sites.order_by("pk").first()
    url = reverse("facility:site_detail", args=[plan.pk, site.pk])
    client.force_login(owner)
    loaded = page_form(client.get(url).content.decode(), containing="notes")
    client.post(url, {**loaded, "notes": "first"})
    refused = client.post(url, {**loaded, "notes": "second"})
    assert refused.status_code == 400
    again = page_form(refused.content.decode(), containing="notes")
    assert client.post(url, again).status_code == 302
    site.refresh_from_db()
    assert site.notes == "second"


def test_a_tampered_loaded_values_field_refuses_every_field_that_differs(client, demo):
    plan, owner, _ = demo
    workload = plan.workloads.order_by("pk").first()
    url = reverse("workload_sizing", args=[plan.pk, workload.pk])
    client.force_login(owner)
    loaded = page_form(client.get(url).content.decode(), containing="headroom_pct")
    client.post(url, {**loaded, "name": "Renamed by the first"})
    forged = {**loaded, "loaded_values": "not-signed", "headroom_pct": "33"}
    answer = client.post(url, forged)
    assert answer.status_code == 400
    body = answer.content.decode()
    assert (
        "Name: now Renamed by the first, yours" in body and "Headroom (%): now 20, yours 33" in body
    )
    workload.refresh_from_db()
    assert workload.name == "Renamed by the first" and workload.headroom_pct == 20


def _autosave(client, url: str, data: dict) -> tuple[Any, dict]:
    answer = client.post(url, data, headers={"HX-Request": "true", "HX-Target": "sizing-results"})
    return answer, hidden_inputs(answer.content.decode(), "loaded_version", "loaded_values")


def test_one_persons_workload_autosaves_never_conflict(client, demo):
    plan, owner, _ = demo
    workload = plan.workloads.order_by("pk").first()
    url = reverse("workload_sizing", args=[plan.pk, workload.pk])
    client.force_login(owner)
    data = page_form(client.get(url).content.decode(), containing="headroom_pct")
    as_loaded = {k: data[k] for k in ("loaded_version", "loaded_values")}
    # Typing 1, 12, 123 into one field and then changing another, as the page autosaves.
    for name, value in [("peak_concurrency", "1"), ("peak_concurrency", "12"),
                        ("peak_concurrency", "123"), ("headroom_pct", "35")]:  # fmt: skip
        data[name] = value
        answer, version = _autosave(client, url, data)
        body = answer.content.decode()
        assert answer.status_code == 200 and 'data-testid="form-saved"' in body, body[:1500]
        assert version["loaded_version"] == str(
            workload.__class__.objects.get(pk=workload.pk).version
        )
        data.update(version)  # the out-of-band swap of the page's hidden fields
    workload.refresh_from_db()
    assert (workload.peak_concurrency, workload.headroom_pct) == (123, 35)

    # Without the swapped version the same typing would be a conflict with oneself: the
    # page must carry it (this is what the out-of-band swap prevents).
    stale = {**data, **as_loaded, "peak_concurrency": "124"}
    answer, _ = _autosave(client, url, stale)
    assert 'data-testid="form-errors"' in answer.content.decode()


def test_a_second_persons_autosave_shows_the_conflict_in_the_page(client, demo):
    plan, owner, organisation = demo
    other = make_member(organisation, "colleague")
    workload = plan.workloads.order_by("pk").first()
    url = reverse("workload_sizing", args=[plan.pk, workload.pk])
    client.force_login(owner)
    mine = page_form(client.get(url).content.decode(), containing="headroom_pct")
    from django.test import Client

    colleague = Client()
    colleague.force_login(other)
    theirs = page_form(colleague.get(url).content.decode(), containing="headroom_pct")
    _autosave(colleague, url, {**theirs, "headroom_pct": "40"})

    answer, version = _autosave(client, url, {**mine, "headroom_pct": "15"})
    body = answer.content.decode()
    assert 'data-testid="form-errors"' in body and "Headroom (%): now 40, yours 15" in body
    assert "Changed meanwhile to 40." in body
    workload.refresh_from_db()
    assert workload.headroom_pct == 40 and version["loaded_version"] == str(workload.version)


@pytest.mark.service
def test_two_saves_of_one_version_at_once_make_one_refused_on_postgresql(postgres, org_a, catalog):
    from catalog.models import ModelArchitecture
    from planner.models import Client, Plan, Workload
    from planner.versioning import StaleEditError
    from planner.workload_forms import WorkloadForm

    client_row = Client.objects.create(organisation=org_a, name="Northwind")
    plan = Plan.objects.create(organisation=org_a, client=client_row, name="Race")
    workload = Workload.objects.create(
        plan=plan, name="Chat", model=ModelArchitecture.objects.get(slug="llama-3.1-8b"),
        input_tokens_mean=1000, output_tokens_mean=200, ttft_ms=1000, tpot_ms=50,
        peak_concurrency=10,
    )  # fmt: skip
    loaded = WorkloadForm(instance=workload)
    data = {name: loaded[name].value() for name in loaded.fields}
    data["daily_profile"] = loaded["daily_profile"].value()
    data["region_shares"] = loaded["region_shares"].value() or ""
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def save(headroom: int) -> None:
        try:
            form = WorkloadForm(
                {**{k: v for k, v in data.items() if v is not None}, "headroom_pct": headroom},
                instance=Workload.objects.get(pk=workload.pk),
            )
            assert form.is_valid(), form.errors
            barrier.wait(timeout=30)  # both checked the same version; now both save
            form.save()
            outcomes.append("saved")
        except StaleEditError:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(h,)) for h in (30, 40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)

    assert sorted(outcomes) == ["refused", "saved"]
    workload.refresh_from_db()
    assert workload.version == 2 and workload.headroom_pct in (30, 40)


def test_the_fx_form_never_overwrites_a_stored_rate(client, demo):
    """The FX form only adds rates: a rate for a stored pair and day is refused, not replaced,
    so a second person's entry cannot silently overwrite the first one's."""
    from sourcing.models import FxRate

    _, owner, _ = demo
    client.force_login(owner)  # the demo consultant is a catalog maintainer (staff)
    url = reverse("sourcing:fx")
    typed = {"from_currency": "CHF", "to_currency": "EUR", "as_of": "2026-01-05", "source": "ECB"}
    assert client.post(url, {**typed, "rate": "1.07"}).status_code == 302
    second = client.post(url, {**typed, "rate": "1.09", "source": "another desk"})
    assert second.status_code == 400 and "already exists" in second.content.decode()
    stored = FxRate.objects.get(from_currency="CHF", to_currency="EUR", as_of="2026-01-05")
    assert (str(stored.rate.normalize()), stored.source) == ("1.07", "ECB")


def test_a_save_between_the_check_and_the_save_is_refused_at_the_database(client, demo):
    """The form's check passed, then someone saved: the conditional update refuses it."""
    from planner.models import Workload
    from planner.versioning import StaleEditError
    from planner.workload_forms import WorkloadForm

    plan, owner, _ = demo
    workload = plan.workloads.order_by("pk").first()
    client.force_login(owner)
    url = reverse("workload_sizing", args=[plan.pk, workload.pk])
    loaded = page_form(client.get(url).content.decode(), containing="headroom_pct")
    form = WorkloadForm({**loaded, "headroom_pct": "45"}, instance=workload)
    assert form.is_valid(), form.errors
    meanwhile = Workload.objects.get(pk=workload.pk)
    meanwhile.name = "Saved in between"
    meanwhile.save()

    with pytest.raises(StaleEditError) as refused:
        form.save()
    assert "at the same moment" in str(refused.value)
    stored = Workload.objects.get(pk=workload.pk)
    assert (stored.name, stored.headroom_pct) == ("Saved in between", 20)
    assert stored.version == meanwhile.version == int(loaded["loaded_version"]) + 1


def test_one_persons_site_autosaves_never_conflict(client, demo):
    plan, owner, _ = demo
    site = plan.sites.order_by("pk").first()
    url = reverse("facility:site_detail", args=[plan.pk, site.pk])
    client.force_login(owner)
    data = page_form(client.get(url).content.decode(), containing="notes")
    for notes in ("Suite B", "Suite B, cage 4", "Suite B, cage 4, row 2"):
        data["notes"] = notes
        answer = client.post(url, data, headers={"HX-Request": "true"})
        assert answer.status_code == 200 and "Saved — checks updated." in answer.content.decode()
        data.update(hidden_inputs(answer.content.decode(), "loaded_version", "loaded_values"))
    site.refresh_from_db()
    assert site.notes == "Suite B, cage 4, row 2" and data["loaded_version"] == str(site.version)
