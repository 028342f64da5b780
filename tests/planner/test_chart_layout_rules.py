"""The layout rules every Plotly figure passes through (planner.charts.layout_rules): legends
below the axis titles, round ticks on an axis overlaying another."""

import json
from types import SimpleNamespace

from planner.engine.chart_layout import is_round_step


def test_latency_chart_gets_round_aligned_ticks_and_its_legend_below_the_axis_title():
    from planner.charts import latency_throughput_figure, memory_breakdown_figure

    candidate = SimpleNamespace(feasible=True, output_tokens_per_s_per_replica=900.0,
                                batch_per_replica=16)  # fmt: skip
    detail = SimpleNamespace(
        throughput_curve=[100.0, 500.0, 900.0, 1300.0], batch_curve=[1, 8, 16, 32],
        tpot_curve_ms=[9.0, 14.0, 21.0, 37.0], ttft_curve_ms=[120.0, 300.0, 640.0, 1290.0],
        candidate=candidate,
    )  # fmt: skip
    layout = json.loads(latency_throughput_figure(detail, ttft_target_ms=1500, tpot_target_ms=40))[
        "layout"
    ]
    y, y2 = layout["yaxis"], layout["yaxis2"]
    for axis, highest in ((y, 40), (y2, 1500)):
        assert axis["tickmode"] == "linear" and is_round_step(axis["dtick"])
        assert axis["range"][0] == 0 and axis["range"][1] >= highest
    assert y["range"][1] / y["dtick"] == y2["range"][1] / y2["dtick"]  # gridlines meet
    assert layout["legend"]["yref"] == "container" and layout["legend"]["yanchor"] == "bottom"

    memory = SimpleNamespace(weights_gb_per_gpu=70, kv_budget_gb_per_gpu=90,
                             activation_gb_per_gpu=4, reserve_gb_per_gpu=3,
                             unusable_gb_per_gpu=12, capacity_gb_per_gpu=180)  # fmt: skip
    layout = json.loads(memory_breakdown_figure(memory))["layout"]
    assert layout["legend"]["yref"] == "container"
    assert layout["height"] > 180  # grown by the legend's rows on a phone


def test_a_long_title_carries_its_lines_for_a_phone_and_a_short_one_none():
    from planner.charts import NARROWEST_FIGURE_PX, layout_rules
    from planner.engine.chart_layout import wrap_words

    assert wrap_words("Latency against throughput per replica", 20) == (
        "Latency against<br>throughput per<br>replica"
    )
    assert wrap_words("a<br>b c", 10) == "a<br>b c"  # a break already there stays
    title = "Latency against throughput per replica (batch sizes 1 to the memory limit)"
    layout = layout_rules([], {"title": {"text": title}, "font": {"size": 13},
                               "margin": {"t": 60}, "height": 400})  # fmt: skip
    narrow = layout["meta"]["narrow"]
    lines = narrow["title"].split("<br>")
    assert " ".join(lines) == title and len(lines) >= 3
    assert max(len(line) for line in lines) * 0.6 * 13 * 1.4 <= NARROWEST_FIGURE_PX
    # The plot keeps its height: the figure grows by what the top margin does.
    assert narrow["margin_t"] - 60 == narrow["height"] - 400 > 0
    assert narrow["below_px"] > NARROWEST_FIGURE_PX
    assert "meta" not in layout_rules([], {"title": {"text": "Memory per GPU (80 GB)"}})
