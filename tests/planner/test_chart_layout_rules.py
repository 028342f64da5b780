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
