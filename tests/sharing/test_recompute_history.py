"""A recomputed result leaves a line in the plan's history: which section, why it was stale
(what changed, since when) and what it is now; the demo plan's TCO shows it once."""

import pytest
from django.urls import reverse

from planner import freshness
from planner.facility import services as fsvc
from planner.facility.models import TcoRun
from sourcing.models import PlanEvent

pytestmark = pytest.mark.django_db


def test_the_demo_history_shows_its_tco_going_stale_and_being_recomputed(plan):
    runs = list(TcoRun.objects.filter(plan=plan).order_by("created_at", "pk"))
    assert len(runs) == 2 and [r.status for r in runs] == ["succeeded", "succeeded"]
    first, second = runs

    event = PlanEvent.objects.get(plan=plan, kind="recomputed")
    assert event.data["section"] == "tco" and event.data["was"] == "stale"
    assert event.data["previous_run"] == first.pk and event.data["run"] == second.pk
    assert event.data["status"] == "succeeded"
    # The first run was costed before the BOM existed: its capex was the estimate, now the
    # priced BOM (and the rate: the sourcing demo sets the order date the dated USD → EUR
    # rate is read on).
    changed = event.data["changed"]
    assert "inputs.hardware.network_usd" in changed and "capex_basis" in changed
    assert all(c.startswith(("inputs.", "fx.", "capex_basis")) for c in changed)
    assert event.message.startswith("TCO recomputed: it was stale (its inputs changed since")
    assert f"run #{second.pk} succeeded" in event.message
    # After the BOM was generated (the event that made it stale), before the recompute.
    bom = PlanEvent.objects.filter(plan=plan, kind="bom").order_by("created_at", "pk").last()
    assert first.finished_at <= bom.created_at <= event.created_at
    assert freshness.tco_freshness(plan).is_current


def test_recomputing_a_stale_tco_records_it_in_the_history_page(
    signed_in, consultant, plan, django_capture_on_commit_callbacks
):
    settings = fsvc.tco_settings_for_edit(plan=plan)
    settings.horizon_months = 48 if settings.horizon_months != 48 else 60
    settings.save()
    stale = freshness.tco_freshness(plan)
    assert stale.state == "stale"
    before = PlanEvent.objects.filter(plan=plan, kind="recomputed").count()

    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in.post(stale.recompute_url)
    assert response.status_code == 302

    event = PlanEvent.objects.filter(plan=plan, kind="recomputed").first()  # newest first
    assert PlanEvent.objects.filter(plan=plan, kind="recomputed").count() == before + 1
    assert "inputs.horizon_months" in event.data["changed"]
    assert "horizon months" in event.message and event.user == consultant  # in words
    run = TcoRun.objects.get(pk=event.data["run"])
    assert run.status == "succeeded" and event.data["previous_run"] != run.pk
    assert freshness.tco_freshness(plan).is_current
    # Recomputing a current TCO records nothing.
    signed_in.post(stale.recompute_url)
    assert PlanEvent.objects.filter(plan=plan, kind="recomputed").count() == before + 1

    page = signed_in.get(reverse("sourcing:history", args=[plan.pk])).content.decode()
    assert event.message in page
