"""Named rules: the headroom rule the engine applies (replicas = load ÷ (1 − headroom),
capacity.target_utilisation) is said in the same words wherever replicas are shown: the
sizing page, the checklist, the plan report and the share page (a page once said "20 %
headroom" while dividing by 0.8)."""

import re

from django.template.loader import render_to_string
from django.urls import reverse

from planner.labels import headroom_rule
from planner.sharing import services
from tests.sharing.conftest import pdf_text

RULE_20 = "sized for 80 % utilisation at peak: replicas = load ÷ 0.8, rounded up (20 % headroom)"


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_rule_in_words():
    assert headroom_rule(20) == RULE_20
    assert headroom_rule(10, True) == (
        "sized for 90 % utilisation at peak: replicas = load ÷ 0.9, rounded up (10 % headroom), "
        "plus one spare (N+1)"
    )
    assert headroom_rule(0) == (
        "sized for 100 % utilisation at peak: replicas = load, rounded up (no headroom)"
    )


def test_every_page_that_shows_replicas_names_the_rule(plan, consultant, signed_in):
    revision = plan.revisions.order_by("-number").first()
    workloads = [w for w in revision.snapshot["workloads"] if w.get("chosen")]
    assert workloads and any(w["headroom_pct"] == 20 for w in workloads)
    rules = {w["name"]: headroom_rule(w["headroom_pct"], w["n_plus_one"]) for w in workloads}

    from planner.sharing.body import BODY_TEMPLATE, revision_view_context

    html = render_to_string(BODY_TEMPLATE, revision_view_context(revision))
    share = _flat(re.sub(r"<[^>]+>", "", html))
    report = _flat(pdf_text(services.document_render(revision=revision, kind="report"))[0])
    evidence = " ".join(
        " ".join(item["evidence"]) for item in revision.snapshot["checklist"]
    )  # fmt: skip
    for name, rule in rules.items():
        assert f"{name}: {rule}." in share
        assert f"{name}: {rule}." in report
        assert f"replicas {rule}." in evidence
    detail = _flat(signed_in.get(reverse("plan_detail", args=[plan.pk])).content.decode())
    for w in plan.workloads.all():
        assert headroom_rule(w.headroom_pct, w.n_plus_one) in detail
    for w in plan.workloads.all():
        page = signed_in.get(reverse("workload_sizing", args=[plan.pk, w.pk])).content.decode()
        rule = headroom_rule(w.headroom_pct, w.n_plus_one)
        assert f"Replicas: {rule}." in _flat(re.sub(r"<[^>]+>", "", page))
    # No page says the headroom as a multiplier.
    for text in (share, report):
        assert "× 1.2" not in text and "x 1.2" not in text
