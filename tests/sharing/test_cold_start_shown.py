"""The cold start of a replica and what it asks of the autoscaling reach the client: the share
page and the report say it, with the words the consultant's sizing advice uses."""

import re

from django.template.loader import render_to_string

from planner.labels import cold_start_advice
from planner.sharing import services
from tests.sharing.conftest import pdf_text


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_the_advice_in_words():
    assert cold_start_advice(None, 1.6, 20) == ""
    assert cold_start_advice(61.6, 1.625, 20) == (
        "a new replica serves 62 s after it is started, so scale that far ahead of the daily "
        "ramp; while it starts, the load grows at most 1.6 % of the peak, which the 20 % "
        "headroom absorbs"
    )
    assert cold_start_advice(300, 12.2, 10).endswith(
        "which is more than the 10 % headroom: scale ahead on a schedule or raise the headroom "
        "to at least 13 %"
    )


def test_share_page_and_report_say_each_workloads_cold_start(plan):
    revision = plan.revisions.order_by("-number").first()
    started = [
        w
        for w in revision.snapshot["workloads"]
        if (w.get("autoscaling") or {}).get("cold_start_s") is not None
    ]
    assert started  # the demo's sized workloads carry their cold start

    from planner.sharing.body import BODY_TEMPLATE, revision_view_context

    share = _text(render_to_string(BODY_TEMPLATE, revision_view_context(revision)))
    report = re.sub(
        r"\s+", " ", pdf_text(services.document_render(revision=revision, kind="report"))[0]
    )
    for w in started:
        a = w["autoscaling"]
        advice = cold_start_advice(a["cold_start_s"], a["spike_headroom_pct"], w["headroom_pct"])
        assert f"{w['name']} cold start: {advice}." in share
        assert f"Cold start: {advice}." in report
