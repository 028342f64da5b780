"""The demo's timeline page (the consultant's) and its published report draw the Gantt from one definition
(planner.chartdefs.timeline_gantt): the same title, bars and milestones."""

import json
import re
from html import unescape

from django.urls import reverse

from planner.pdf.context import report_charts
from planner.sharing.snapshot import _supplier_scrubber, plan_snapshot


def test_demo_timeline_page_and_report_draw_the_same_gantt(plan, signed_in):
    page = signed_in.get(reverse("sourcing:timeline", args=[plan.pk]))
    assert page.status_code == 200
    web = json.loads(page.context["figure_json"])
    svg = report_charts(plan_snapshot(plan=plan))["gantt"].svg
    title = unescape(re.search(r'aria-label="([^"]*)"', svg).group(1))
    assert web["layout"]["title"]["text"] == title
    tips = [unescape(t) for t in re.findall(r"<title>([^<]*)</title>", svg)]
    pdf_bars = {t for t in tips if "→" in t}
    # The client's documents name no supplier (the consultant's page does): compare after
    # taking the names out, as the snapshot does.
    clean = _supplier_scrubber(plan)
    web_bars = {
        f"{clean(y.replace('<br>', ' '))} — {c[5]}: {c[0]} → {c[1]}"
        for trace in web["data"]
        if trace.get("type") == "bar" and "customdata" in trace and trace["name"] != "Slack"
        for y, c in zip(trace["y"], trace["customdata"], strict=True)
    }
    assert web_bars == pdf_bars and len(web_bars) > 4
    # Each site's power-ready date and the go-live are milestones on both.
    marks = {a["text"] for a in web["layout"]["annotations"]}
    points = next(d for d in web["data"] if d.get("name") == "Milestone")
    marks |= {
        f"{y.replace('<br>', ' ')} {x}" for y, x in zip(points["y"], points["x"], strict=True)
    }
    assert {" ".join(t.rsplit(": ", 1)) for t in tips if "→" not in t} == marks
    assert sum(m.startswith("Power ready: ") for m in marks) == 2  # Frankfurt and Ashburn
