"""Results kept across requests (planner.computed.computed_across_requests): the TCO and BOM
inputs' hashes that say on the overview and the sizing page whether the TCO and the BOM are
stale (and the cost target's basis, the TCO run's figures) are kept from one request to the
next only while nothing is written, so an edit of any input flips the pages to stale at once,
and putting it back flips them to current.

The writes here are made inside ``django_capture_on_commit_callbacks(execute=True)``: their
commit hooks run as they would after a real commit, so the pages after them read the kept
result unless the state generation was replaced (a write the test transaction has not
"committed" would make every read build, which proves nothing)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from catalog.models import CloudOffering
from planner import computed as computed_module
from planner import freshness
from planner.computed import (
    computed_across_requests,
    counting_builds,
    plan_state_scope,
    state_generation,
    state_generation_bump,
)
from planner.facility import selectors as fsel
from planner.facility import services as fsvc
from planner.facility.charts import tco_figures
from planner.facility.models import Site, TcoSettings
from planner.models import Organisation, Workload
from sourcing import services as ssvc
from sourcing.models import BomLine, QuoteSettings, SourcingSettings

# No module-wide django_db mark: its transaction would open before the shared demo is
# committed, and the demo would be built inside each test, never committed (nothing kept).


@pytest.fixture
def signed_in(client, demo, django_capture_on_commit_callbacks):
    plan, user, _ = demo
    with django_capture_on_commit_callbacks(execute=True):
        client.force_login(user)  # its last-login stamp is a write like any other
    return client, plan, django_capture_on_commit_callbacks


def _pages_say_stale(client, plan) -> tuple[bool, bool]:
    """(the overview's TCO banner, the sizing page's cost-target panel): stale?"""
    chat = plan.workloads.get(name="Customer chat assistant")
    overview = client.get(reverse("plan_detail", args=[plan.pk]))
    sizing = client.get(reverse("workload_sizing", args=[plan.pk, chat.pk]))
    assert overview.status_code == sizing.status_code == 200
    return (
        any(item.kind == "tco" for item in overview.context["stale_results"]),
        sizing.context["cost_target"].stale,
    )


def _truth(plan) -> bool:
    """Whether the latest run is stale, from inputs built now (outside a scope: no memo)."""
    run = fsel.tco_run_latest(plan=plan)
    return fsvc.tco_inputs_build(plan=plan).input_hash != run.input_hash


def _edit_workload(plan):
    chat = plan.workloads.get(name="Customer chat assistant")
    before = chat.input_tokens_mean
    chat.input_tokens_mean = before + 100
    chat.save()
    return lambda: Workload.objects.filter(pk=chat.pk).update(input_tokens_mean=before)


def _edit_site(plan):
    site = Site.objects.filter(plan=plan).order_by("pk").first()
    before = site.power_usd_per_kwh
    site.power_usd_per_kwh = before + Decimal("0.05")
    site.save()
    return lambda: Site.objects.filter(pk=site.pk).update(power_usd_per_kwh=before)


def _edit_offer(plan):
    report = ssvc.landed_cost_report(plan=plan, organisation=plan.organisation)
    offer = next(cost.chosen for cost in report.lines if cost.chosen is not None)
    before = offer.unit_price
    offer.unit_price = before * 2
    offer.save()
    return lambda: type(offer).objects.filter(pk=offer.pk).update(unit_price=before)


def _edit_tco_settings(plan):
    settings = fsvc.tco_settings_for_edit(plan=plan)  # the demo keeps the defaults unsaved
    before = settings.horizon_months
    settings.horizon_months = before + 12
    settings.save()
    return lambda: TcoSettings.objects.filter(pk=settings.pk).update(horizon_months=before)


def _edit_bom_line(plan):
    line = BomLine.objects.filter(plan=plan).order_by("pk").first()
    line.quantity += 1
    line.save()
    return lambda: BomLine.objects.filter(pk=line.pk).update(quantity=line.quantity - 1)


def _edit_sourcing_settings(plan):
    settings = SourcingSettings.objects.get(plan=plan)
    before = settings.brokerage_per_shipment
    settings.brokerage_per_shipment = before + 500
    settings.save()
    return lambda: SourcingSettings.objects.filter(pk=settings.pk).update(
        brokerage_per_shipment=before
    )


def _edit_catalog_cloud_price(plan):
    offerings = CloudOffering.objects.all()
    before = {o.pk: o.usd_per_hour for o in offerings}
    for offering in offerings:
        offering.usd_per_hour = offering.usd_per_hour / 2
        offering.save()

    def undo():
        for pk, price in before.items():
            CloudOffering.objects.filter(pk=pk).update(usd_per_hour=price)

    return undo


@pytest.mark.parametrize(
    "edit",
    [
        _edit_workload, _edit_site, _edit_offer, _edit_tco_settings, _edit_bom_line,
        _edit_sourcing_settings, _edit_catalog_cloud_price,
    ],
)  # fmt: skip
def test_an_edit_of_a_tco_input_flips_the_pages_to_stale_and_back(signed_in, edit):
    client, plan, committed = signed_in
    assert _pages_say_stale(client, plan) == (False, False) and not _truth(plan)
    with counting_builds() as builds:
        assert _pages_say_stale(client, plan) == (False, False)
    assert "tco_inputs" not in builds  # kept from the first read: nothing was written

    with committed(execute=True):
        undo = edit(plan)
    assert _truth(plan)
    assert _pages_say_stale(client, plan) == (True, True)
    assert _pages_say_stale(client, plan) == (True, True)  # and kept so

    with committed(execute=True):
        undo()
    assert not _truth(plan)
    assert _pages_say_stale(client, plan) == (False, False)


def test_an_edit_outside_the_tco_inputs_leaves_the_pages_current(signed_in):
    client, plan, committed = signed_in
    assert _pages_say_stale(client, plan) == (False, False)
    with committed(execute=True):
        QuoteSettings.objects.update_or_create(plan=plan, defaults={"markup_pct": 17})
    assert not _truth(plan)
    assert _pages_say_stale(client, plan) == (False, False)


def _overview_says_bom_stale(client, plan) -> bool:
    overview = client.get(reverse("plan_detail", args=[plan.pk]))
    return any(item.kind == "bom" for item in overview.context["stale_results"])


def _bom_truth(plan) -> bool:
    stored = SourcingSettings.objects.get(plan=plan).bom_inputs_hash
    return freshness.bom_inputs_hash(plan) != stored


def _edit_spares(plan):
    settings = SourcingSettings.objects.get(plan=plan)
    before = settings.spares_pct
    settings.spares_pct = before + 10
    settings.save()
    return lambda: SourcingSettings.objects.filter(pk=settings.pk).update(spares_pct=before)


def _edit_chosen_replicas(plan):
    chat = plan.workloads.get(name="Customer chat assistant")
    chat.chosen_replicas += 8
    chat.save()
    return lambda: Workload.objects.filter(pk=chat.pk).update(
        chosen_replicas=chat.chosen_replicas - 8
    )


@pytest.mark.parametrize("edit", [_edit_spares, _edit_chosen_replicas])
def test_an_edit_of_a_bom_input_flips_the_overview_to_stale_and_back(signed_in, edit):
    client, plan, committed = signed_in
    assert not _overview_says_bom_stale(client, plan) and not _bom_truth(plan)
    with committed(execute=True):
        undo = edit(plan)
    assert _bom_truth(plan)
    assert _overview_says_bom_stale(client, plan)
    with committed(execute=True):
        undo()
    assert not _bom_truth(plan)
    assert not _overview_says_bom_stale(client, plan)


class Builder:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return f"value {self.calls}"


def test_a_committed_write_replaces_the_generation_and_bookkeeping_does_not(
    demo, django_capture_on_commit_callbacks
):
    plan = demo[0]
    first = state_generation()
    with django_capture_on_commit_callbacks(execute=True):
        SessionStore().save()  # sign-in bookkeeping
    assert state_generation() == first
    with django_capture_on_commit_callbacks(execute=True):
        plan.workloads.filter(pk=-1).update(name="x")  # an UPDATE, even of no row
    second = state_generation()
    assert second != first and len(second) == 32


def test_a_result_is_kept_across_scopes_until_a_write_or_the_next_day(
    demo, django_capture_on_commit_callbacks, monkeypatch
):
    plan = demo[0]
    build = Builder()
    for _ in range(2):
        with plan_state_scope():
            assert computed_across_requests(("part", plan.pk), build) == "value 1"
    with django_capture_on_commit_callbacks(execute=True):
        plan.workloads.filter(pk=-1).update(name="x")
    with plan_state_scope():
        assert computed_across_requests(("part", plan.pk), build) == "value 2"
    tomorrow = timezone.localdate() + timedelta(days=1)
    monkeypatch.setattr(computed_module.timezone, "localdate", lambda: tomorrow)
    with plan_state_scope():
        assert computed_across_requests(("part", plan.pk), build) == "value 3"
    monkeypatch.setattr(computed_module, "ACROSS_REQUESTS_MAX_AGE_S", 0.0)
    with plan_state_scope():
        assert computed_across_requests(("part", plan.pk), build) == "value 4"


def test_results_of_older_generations_are_let_go(
    demo, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(computed_module, "ACROSS_REQUESTS_PRUNE_AT", 3)
    with plan_state_scope():
        for n in range(3):
            computed_across_requests(("part", n), Builder())
    with django_capture_on_commit_callbacks(execute=True):
        demo[0].workloads.filter(pk=-1).update(name="x")
    with plan_state_scope():
        computed_across_requests(("part", 3), Builder())
    assert list(computed_module._across) == [("part", 3)]


def test_a_write_not_yet_committed_keeps_nothing(demo):
    plan = demo[0]
    build = Builder()
    with plan_state_scope():
        computed_across_requests(("part", plan.pk), build)
    with transaction.atomic():
        plan.workloads.filter(pk=-1).update(name="x")
        for _ in range(2):  # this connection's write is not committed: built on every read
            with plan_state_scope():
                computed_across_requests(("part", plan.pk), build)
        assert build.calls == 3


def test_a_write_after_a_rolled_back_savepoint_still_gives_a_new_generation(
    demo, django_capture_on_commit_callbacks
):
    plan = demo[0]
    first = state_generation()
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        try:
            with transaction.atomic():
                plan.workloads.filter(pk=-1).update(name="y")
                raise RuntimeError
        except RuntimeError:
            pass
        plan.workloads.filter(pk=-1).update(name="z")
    assert state_generation() != first


def test_outside_a_scope_nothing_is_kept(demo):
    build = Builder()
    computed_across_requests(("part", demo[0].pk), build)
    computed_across_requests(("part", demo[0].pk), build)
    assert build.calls == 2


def test_the_tco_page_figures_are_the_runs_for_the_option_asked(signed_in):
    client, plan, _ = signed_in
    run = fsel.tco_run_latest(plan=plan)
    url = reverse("facility:tco", args=[plan.pk])
    for key in [None, "no-such-option", *(o["key"] for o in run.results["options"])] * 2:
        figures = client.get(url, {"option": key} if key else {}).context["figures"]
        assert dict(figures) == tco_figures(run.results, stack_option=key)


def test_a_write_in_autocommit_commits_together_with_its_new_generation(transactional_db):
    state_generation_bump()  # the row (the flush before a transactional test empties tables)
    first = state_generation()
    organisation = Organisation.objects.create(name="A", slug="a")
    second = state_generation()
    assert second != first
    Organisation.objects.filter(pk=organisation.pk).update(name="B")
    third = state_generation()
    assert third != second
    with pytest.raises(IntegrityError):  # refused: neither the write nor a new generation
        Organisation.objects.filter(pk=organisation.pk).update(name=None)
    assert state_generation() == third
    assert Organisation.objects.get(pk=organisation.pk).name == "B"
