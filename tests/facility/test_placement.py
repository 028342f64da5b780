"""Placement: scored options from the plan's sites and users, residency, and the recorded choice."""

from django.urls import reverse

from planner.facility import services
from planner.facility.models import PlacementDecision, ResidencyRule


def test_options_cover_every_kind_with_latency_from_user_regions(sized_plan, colo_site):
    evaluation = services.placement_evaluate(plan=sized_plan)
    result = evaluation.result

    # The plan's colocation site is the physical option: no own data centre is assumed beside it.
    assert {o.kind for o in result.options} == {"public_cloud", "colocation", "edge", "hybrid"}
    assert not any("assumed" in o.label for o in result.options)
    colo = result.by_key(f"site-{colo_site.pk}")
    # Users in eu-west (Dublin) and us-east (Ashburn): the worst round trip is to Ashburn.
    assert colo.score("latency") is not None
    assert any("Ashburn" in note for note in evaluation.latency_notes[colo.key])
    assert evaluation.rtt_budget_ms == 250  # 25 % of the 1000 ms TTFT target
    assert colo.score("cost") is None  # no TCO run yet


def test_sites_are_assumed_only_when_the_plan_has_no_physical_site(sized_plan):
    from tests.factories import SiteFactory

    bare = services.placement_evaluate(plan=sized_plan)
    assumed = {o.key: o.label for o in bare.result.options if o.key in ("owned_dc", "colocation")}
    # No site at all: an own data centre and a colocation are assumed near the users (between
    # Dublin and Ashburn), no cost.
    assert assumed == {
        "owned_dc": "Own data centre (no site entered, assumed near Montréal)",
        "colocation": "Colocation (no site entered, assumed near Montréal)",
    }
    assert "No own data centre site entered: assumed near Montréal, no cost." in bare.notes

    owned = SiteFactory(plan=sized_plan, kind="own_dc", name="Basement")
    SiteFactory(plan=sized_plan, name="Amsterdam colo")
    entered = services.placement_evaluate(plan=sized_plan)

    assert [o.label for o in entered.result.options if o.kind in ("owned_dc", "colocation")] == [
        "Own data centre: Basement",
        "Colocation: Amsterdam colo",
    ]
    assert not any("assumed" in note for note in entered.notes)
    assert entered.result.by_key(f"site-{owned.pk}").score("latency") is not None


def test_residency_rule_makes_non_eu_options_ineligible(sized_plan, colo_site):
    chat = sized_plan.workloads.get(name="Chat")
    ResidencyRule.objects.create(workload=chat, allowed="EU")

    result = services.placement_evaluate(plan=sized_plan).result

    assert result.by_key(f"site-{colo_site.pk}").eligible  # NL is in the EU
    cloud = result.by_key("public_cloud")
    assert cloud.eligible and "eu-" in cloud.label  # the cloud region is picked inside the EU
    edge = result.by_key("edge")  # serving next to US users breaks the rule
    assert not edge.eligible and "US" in edge.ineligible_reasons[0]


def test_costs_come_from_a_finished_tco_run(sized_plan, colo_site, consultant_a):
    services.tco_run_sync(plan=sized_plan, user=consultant_a)
    evaluation = services.placement_evaluate(plan=sized_plan)

    assert evaluation.result.by_key(f"site-{colo_site.pk}").score("cost") is not None
    assert evaluation.cost_source.startswith("TCO run of")


def test_record_the_choice_and_reason(client, consultant_a, sized_plan, colo_site):
    client.force_login(consultant_a)
    url = reverse("facility:placement", args=[sized_plan.pk])
    page = client.get(url).content.decode()
    assert 'data-testid="placement-table"' in page and "Fits when" in page

    response = client.post(
        url,
        {"action": "choose", "option": f"site-{colo_site.pk}", "reason": "Data stays in the EU."},
    )

    assert response.status_code == 302
    decision = PlacementDecision.objects.get(plan=sized_plan)
    assert decision.chosen_kind == "colocation" and decision.reason == "Data stays in the EU."
    assert decision.decided_by == consultant_a and decision.scores["options"]
    assert "Data stays in the EU." in client.get(url).content.decode()


def test_a_choice_needs_a_reason_and_a_known_option(client, consultant_a, sized_plan):
    client.force_login(consultant_a)
    url = reverse("facility:placement", args=[sized_plan.pk])
    short = client.post(url, {"action": "choose", "option": "edge", "reason": "ok"})
    unknown = client.post(url, {"action": "choose", "option": "moon", "reason": "Long enough now."})

    assert short.status_code == 400 and "Say in a sentence" in short.content.decode()
    assert unknown.status_code == 400
    assert not PlacementDecision.objects.filter(plan=sized_plan).exclude(chosen_key="").exists()


def test_settings_save_residency_and_reject_bad_codes(client, consultant_a, sized_plan):
    client.force_login(consultant_a)
    url = reverse("facility:placement", args=[sized_plan.pk])
    chat = sized_plan.workloads.get(name="Chat")
    good = {"action": "settings", "network_share_pct": "20", "control_requirement": "4"}
    bad = client.post(url, good | {f"residency_{chat.pk}": "EU, 12"})
    ok = client.post(url, good | {f"residency_{chat.pk}": "eu, ch"})

    assert bad.status_code == 400 and "12" in bad.content.decode()
    assert ok.status_code == 302
    assert ResidencyRule.objects.get(workload=chat).allowed == "EU, CH"
    assert PlacementDecision.objects.get(plan=sized_plan).network_share_pct == 20


def test_viewers_cannot_record(client, org_a, sized_plan):
    from tests.conftest import make_member

    client.force_login(make_member(org_a, "viewer_a", "viewer"))
    url = reverse("facility:placement", args=[sized_plan.pk])
    assert client.get(url).status_code == 200
    post = client.post(url, {"action": "choose", "option": "edge", "reason": "Because I say so."})
    assert post.status_code == 403


def test_a_70b_model_on_forty_gpus_does_not_rank_edge_first(sized_plan):
    # The plan serves Llama 3.1 70B at FP8 on 4-GPU replicas (32 + 8 H100s): no edge box holds it.
    result = services.placement_evaluate(plan=sized_plan).result

    edge = result.by_key("edge")
    assert not edge.eligible
    assert any("do not fit edge hardware" in r for r in edge.ineligible_reasons)
    assert result.best is not None and result.best.kind != "edge"
    assert edge.rank > min(o.rank for o in result.options if o.eligible)
