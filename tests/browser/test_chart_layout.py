"""The demo's Plotly charts as a browser draws them, at 1,280 and 390 CSS pixels: titles,
annotations and point labels lie inside the figure (never cut at its edge), a legend
never overlaps an axis title, and every numeric axis ticks at round steps (1, 2, 2.5 or 5 ×
10^k), the axis on the right of the latency chart too."""

import pytest
from django.urls import reverse

from planner.engine.chart_layout import is_round_step
from tests.browser.test_catalog_flow import sign_in
from tests.browser.test_every_page_fits import _settled

pytestmark = pytest.mark.browser

# For each drawn chart: its title, the boxes of its legend and axis titles, and each axis's
# tick labels (x, y, y2 …) as shown.
CHART_FACTS = """
() => [...document.querySelectorAll(".js-plotly-plot")].map(plot => {
  const box = el => { const b = el.getBoundingClientRect();
                      return {left: b.left, top: b.top, right: b.right, bottom: b.bottom}; };
  const titles = {};
  plot.querySelectorAll(".infolayer [class$='title']").forEach(el => {
    const name = [...el.classList].find(c => c.startsWith("g-") && c.endsWith("title"));
    if (name && name !== "g-gtitle" && el.getBoundingClientRect().height > 0) titles[name] = box(el);
  });
  const ticks = {};
  plot.querySelectorAll("g[class$='tick'] text, g[class$='tick2'] text").forEach(t => {
    const axis = t.parentElement.getAttribute("class");
    (ticks[axis] = ticks[axis] || []).push(t.textContent);
  });
  const legend = plot.querySelector(".legend");
  // Text that must lie inside the figure: its title, annotations and point labels.
  const texts = [...plot.querySelectorAll(".g-gtitle text, .annotation, .textpoint text")]
    .filter(el => el.getBoundingClientRect().width > 0)
    .map(el => ({text: el.textContent, box: box(el)}));
  return {
    title: (plot.querySelector(".g-gtitle") || {}).textContent || "",
    legend: legend ? box(legend.querySelector(".bg") || legend) : null,
    figure: box(plot.querySelector(".main-svg") || plot),
    titles, ticks, texts,
  };
})
"""


def _overlap(a: dict, b: dict) -> bool:
    return (min(a["right"], b["right"]) - max(a["left"], b["left"]) > 0.5
            and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 0.5)  # fmt: skip


def _number(label: str) -> float | None:
    """A tick label as a number ("1,200", "2.5k", "−5"), or None for a date or a category."""
    text = label.replace(",", "").replace("\u2212", "-").strip()
    scale = {"k": 1e3, "M": 1e6, "G": 1e9, "m": 1e-3, "μ": 1e-6}.get(text[-1:], 1.0)
    if scale != 1.0:
        text = text[:-1]
    try:
        return float(text) * scale
    except ValueError:
        return None


def chart_problems(facts: list[dict]) -> list[str]:
    """What is wrong with the charts a page drew (``CHART_FACTS``)."""
    problems = []
    for chart in facts:
        name = chart["title"][:40]
        figure = chart.get("figure")
        for text in chart.get("texts", []) if figure else []:
            b = text["box"]
            if (b["left"] < figure["left"] - 1 or b["right"] > figure["right"] + 1
                    or b["top"] < figure["top"] - 1 or b["bottom"] > figure["bottom"] + 1):  # fmt: skip
                problems.append(f"{name}: {text['text'][:40]!r} runs outside the figure")
        for axis_title, title_box in chart["titles"].items():
            if chart["legend"] and _overlap(chart["legend"], title_box):
                problems.append(f"{name}: the legend overlaps {axis_title}")
        for axis, labels in chart["ticks"].items():
            numbers = [_number(label) for label in labels]
            if len(numbers) < 2 or None in numbers:
                continue  # dates, categories
            steps = {round(b - a, 9) for a, b in zip(numbers, numbers[1:], strict=False)}
            if len(steps) != 1 or not is_round_step(abs(steps.pop())):
                problems.append(f"{name}: {axis} ticks {labels} are not round steps")
    return problems


def test_chart_helpers_catch_what_was_seen():
    legend = {"left": 74, "top": 185, "right": 751, "bottom": 215}
    title = {"left": 651, "top": 192, "right": 675, "bottom": 211}
    facts = [{"title": "Memory", "legend": legend, "titles": {"g-xtitle": title},
              "ticks": {"y2tick": ["0", "258", "516", "774"], "xtick": ["0", "50", "100"],
                        "ytick": ["2026-01", "2026-02"]}}]  # fmt: skip
    figure = {"left": 0, "top": 0, "right": 340, "bottom": 400}
    cut = {"left": 7, "top": 10, "right": 402, "bottom": 30}  # a title past the right edge
    facts[0] |= {"figure": figure, "texts": [{"text": "Memory per GPU (80 GB)", "box": cut}]}
    assert chart_problems(facts) == [
        "Memory: 'Memory per GPU (80 GB)' runs outside the figure",
        "Memory: the legend overlaps g-xtitle",
        "Memory: y2tick ticks ['0', '258', '516', '774'] are not round steps",
    ]
    assert _number("2.5k") == 2500 and _number("\u22125") == -5 and _number("Jan 2026") is None


def test_sizing_and_tco_charts_keep_legends_off_axis_titles_and_tick_round(
    page, live_server, demo_user
):
    from planner.measured.models import LoadTestSweep, TrafficLogImport
    from planner.models import Plan

    plan = Plan.objects.get(name__startswith="Customer assistant")
    sign_in(page, live_server.url, *demo_user)
    urls = [reverse("workload_sizing", args=[plan.pk, w.pk]) for w in plan.workloads.all()]
    urls += [reverse("facility:tco", args=[plan.pk]), reverse("sourcing:timeline", args=[plan.pk])]
    urls += [
        reverse(name, args=[plan.pk, row.workload_id, row.pk])
        for name, model in (("measured:sweep_detail", LoadTestSweep),
                            ("measured:log_detail", TrafficLogImport))
        for row in model.objects.filter(workload__plan=plan)[:1]
    ]  # fmt: skip
    problems, drawn, axes = [], set(), set()
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 844})
        for url in urls:
            page.goto(live_server.url + url)
            _settled(page)
            page.wait_for_selector("[data-rendered=true]")
            facts = page.evaluate(CHART_FACTS)
            drawn |= {f["title"].split(" (")[0] for f in facts}
            axes |= {axis for f in facts for axis in f["ticks"]}
            problems += [f"{width} px {url} {p}" for p in chart_problems(facts)]
    assert problems == []
    # The charts of issue 25 were drawn and measured.
    assert {"Memory per GPU", "Latency against throughput per replica",
            "Measured", "24-hour profile"} <= drawn, drawn  # fmt: skip
    assert {"xtick", "ytick", "y2tick"} <= axes, axes
