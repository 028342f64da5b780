"""Load-test results of one replica: the four formats, capacity off the curve, replicas.

Every figure is checked against a hand calculation from the fixtures in
tests/measured/fixtures (see its README for where each layout comes from).
"""

import json
import math
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.engine.calibration import load_calibration
from planner.engine.load_test import (
    MAX_ERROR_RATE,
    ExcludedRunError,
    LoadPoint,
    LoadTestFormatError,
    NoSuccessfulRequestsError,
    TooManyErrorsError,
    capacity_at_target,
    compare_with_model,
    lengths_mismatch,
    measured_replicas,
    merge_sweep,
    model_correction,
    parse_load_test,
    read_result_json,
)
from planner.engine.performance import replica_shape, steady_state
from planner.engine.specs import load_accelerators_csv, load_models_csv
from tests.measured.big_reports import write_guidellm_report

FIXTURES = Path(__file__).resolve().parents[1] / "measured" / "fixtures"
DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"


def load(name: str):
    return parse_load_test(json.loads((FIXTURES / name).read_text()))


def vllm_sweep():
    return merge_sweep([load(p.name) for p in sorted(FIXTURES.glob("vllm-*.json"), reverse=True)])


def test_vllm_result_json_reads_load_latency_and_lengths():
    test = load("vllm-infqps-concurrency16-Llama-3.1-8B-Instruct-20261102-103000.json")
    (point,) = test.points
    assert test.tool == "vllm"
    assert test.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert test.measured_on == "2026-11-02"
    # request_rate "inf" with max_concurrency 16: a closed loop set to 16 in flight, which
    # held 2.09 requests/s × 7.65 s = 15.9885 (Little's law on the completed requests).
    assert point.nominal_concurrency == 16
    assert point.concurrency == pytest.approx(15.9885)
    assert point.concurrency_basis == "littles_law"
    assert point.requests_per_s == 2.09 and point.output_tokens_per_s == 522.5
    assert not point.held_under_setting and point.load_label == "16"
    # 400 000 input and 100 000 output tokens over 400 completed requests.
    assert (point.input_tokens_mean, point.output_tokens_mean) == (1000.0, 250.0)
    assert (point.ttft_p99_ms, point.tpot_p99_ms, point.ttft_p95_ms) == (300.0, 40.0, None)


def test_an_open_loop_vllm_run_gets_its_load_from_littles_law():
    data = json.loads(
        (
            FIXTURES / "vllm-infqps-concurrency4-Llama-3.1-8B-Instruct-20261102-101500.json"
        ).read_text()
    )
    data.update(request_rate=2.0, max_concurrency=None, request_throughput=1.98, mean_e2el_ms=3000)
    (point,) = parse_load_test(data).points
    # L = λW = 1.98 requests/s × 3.0 s = 5.94 in flight.
    assert point.concurrency == pytest.approx(5.94)
    assert point.concurrency_basis == "littles_law"
    assert point.request_rate_per_s == 2.0
    assert point.nominal_concurrency is None and point.held_fraction is None


def test_genai_perf_profile_export():
    test = load("profile_export_genai_perf.json")
    (point,) = test.points
    assert test.tool == "genai-perf" and test.model == "meta-llama/Llama-3.1-8B-Instruct"
    # Set to 8; held 2.5 requests/s × 3.2 s = 8.
    assert (point.nominal_concurrency, point.concurrency_basis) == (8, "littles_law")
    assert point.concurrency == pytest.approx(8)
    assert point.requests_per_s == 2.5 and point.output_tokens_per_s == 625.0
    assert (point.ttft_p95_ms, point.ttft_p99_ms) == (240.0, 320.0)
    assert (point.tpot_mean_ms, point.tpot_p95_ms) == (12.25, 14.0)
    assert (point.input_tokens_mean, point.output_tokens_mean) == (1000.0, 250.0)


def test_aiperf_profile_export():
    test = load("profile_export_aiperf.json")
    (point,) = test.points
    assert test.tool == "aiperf" and test.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert test.measured_on == "2026-11-05"
    # Set to 10 (loadgen.concurrency); held 2.5 requests/s × 3.2 s = 8 (80 %: no warning).
    assert point.nominal_concurrency == 10 and point.concurrency == pytest.approx(8)
    assert point.load_label == "8 (set 10)" and not point.held_under_setting
    assert point.requests_per_s == 2.5 and point.output_tokens_per_s == 625.0
    assert (point.ttft_p95_ms, point.ttft_p99_ms) == (240.0, 320.0)
    # AIPerf's inter-token latency is already TPOT after the first token.
    assert (point.tpot_mean_ms, point.tpot_p95_ms, point.tpot_p99_ms) == (12.25, 14.0, 15.5)
    assert (point.input_tokens_mean, point.output_tokens_mean) == (1000.0, 250.0)
    assert "AIPerf's inter_token_latency" in point.notes[0]


def test_an_aiperf_run_whose_every_request_failed_is_refused():
    # The layout AIPerf writes when every request fails: error counts and the config only.
    data = {
        "records": {"error_request_count": {"tag": "error_request_count", "unit": "requests",
                                            "header": "Error Request Count", "avg": 5.0}},
        "input_config": {"loadgen": {"concurrency": 1, "request_count": 5}},
        "was_cancelled": False,
        "error_summary": [{"error_details": {"type": "TimeoutError"}, "count": 5}],
    }  # fmt: skip
    with pytest.raises(NoSuccessfulRequestsError, match="5 errored"):
        parse_load_test(data)
    partly = json.loads((FIXTURES / "profile_export_aiperf.json").read_text())
    # 10 of 210 finished requests failed: 4.8 %, under the 5 % limit, kept with a note.
    partly["error_request_count"] = {"unit": "requests", "avg": 10.0}
    (point,) = parse_load_test(partly).points
    assert "10 of 210 requests failed (4.8%, within the 5% error-rate limit)" in point.notes
    # 20 of 220: 9.1 %, refused.
    partly["error_request_count"] = {"unit": "requests", "avg": 20.0}
    with pytest.raises(TooManyErrorsError, match="20 of 220 requests failed \\(9.1%"):
        parse_load_test(partly)


def test_genai_perf_units_in_seconds_become_ms():
    data = json.loads((FIXTURES / "profile_export_genai_perf.json").read_text())
    data["time_to_first_token"] = {"unit": "s", "avg": 0.15, "p95": 0.24, "p99": 0.32}
    (point,) = parse_load_test(data).points
    assert point.ttft_p95_ms == pytest.approx(240.0)


def test_llmperf_summary_in_seconds_and_per_minute():
    test = load("meta-llama-Llama-3-1-8B-Instruct_1000_250_summary.json")
    (point,) = test.points
    assert test.tool == "llmperf"
    assert test.measured_on == "2026-11-03"  # timestamp 1793700000 = 2026-11-03T10:00Z
    # 150 completed requests a minute = 2.5 requests/s; seconds → ms.
    assert point.requests_per_s == pytest.approx(2.5)
    assert point.ttft_p95_ms == pytest.approx(240.0)
    # Little's law: 2.5 requests/s × 3.2 s = 8, all of the 8 it was set to.
    assert point.concurrency == pytest.approx(8)
    assert (point.nominal_concurrency, point.concurrency_basis) == (8, "littles_law")


def test_guidellm_report_is_a_whole_sweep():
    test = load("benchmarks.json")
    assert test.tool == "guidellm"
    # GuideLLM measures the mean in flight (request_concurrency): it is the load held.
    assert [p.concurrency for p in test.points] == [3.92, 15.68, 62.72]
    assert [p.nominal_concurrency for p in test.points] == [4, 16, 64]
    assert [p.concurrency_basis for p in test.points] == ["measured"] * 3
    second = test.points[1]
    assert (second.ttft_p95_ms, second.ttft_p99_ms) == (250.0, 300.0)
    # TPOT after the first token is GuideLLM's inter-token latency, not its TPOT.
    assert (second.tpot_mean_ms, second.tpot_p95_ms) == (30.0, 36.0)
    assert second.e2e_mean_ms == pytest.approx(180 + 249 * 30)


def llmperf(**changes):
    data = json.loads(
        (FIXTURES / "meta-llama-Llama-3-1-8B-Instruct_1000_250_summary.json").read_text()
    )
    data.update(changes)
    return data


def test_llmperfs_inter_token_latency_includes_the_first_token_and_becomes_tpot():
    (point,) = load("meta-llama-Llama-3-1-8B-Instruct_1000_250_summary.json").points
    # The file's ITL is (TTFT + 249 × TPOT) ÷ 250 per request: mean 12.801 ms, p95 14.544,
    # p99 16.038. TPOT mean = (3200 − 150) ÷ (250 − 1) = 12.249 ms (not 12.801, 4.5 % high);
    # p95 = (250 × 14.544 − 150) ÷ 249 = 14.0; p99 = (250 × 16.038 − 150) ÷ 249 = 15.5.
    assert point.tpot_mean_ms == pytest.approx(3050 / 249)
    assert point.tpot_p95_ms == pytest.approx(14.0)
    assert point.tpot_p99_ms == pytest.approx(15.5)
    assert "includes the first token" in point.notes[0]
    # The same run through GenAI-Perf (TPOT excluding the first token) reads the same TPOTs.
    (genai,) = load("profile_export_genai_perf.json").points
    assert (genai.tpot_p95_ms, genai.tpot_p99_ms) == (14.0, 15.5)


def test_llmperf_without_the_mean_e2e_takes_the_mean_tpot_from_the_itl():
    data = llmperf()
    del data["results_end_to_end_latency_s_mean"]
    (point,) = parse_load_test(data).points
    # (250 × 12.801 − 150) ÷ 249 = 12.25 ms.
    assert point.tpot_mean_ms == pytest.approx((250 * 12.801 - 150) / 249)
    assert "(n × mean ITL − mean TTFT)" in point.notes[0]


def test_llmperf_without_ttft_keeps_the_itl_and_says_it_includes_the_first_token():
    data = {k: v for k, v in llmperf().items() if not k.startswith("results_ttft_s_mean")}
    data["results_ttft_s_quantiles_p95"] = 0.24
    (point,) = parse_load_test(data).points
    assert point.tpot_p95_ms == pytest.approx(14.544)
    assert "as reported: it includes the first token" in point.notes[0]


def test_every_tool_says_which_tpot_definition_its_points_use():
    assert "vLLM reports" in vllm_sweep().points[0].notes[0]
    assert (
        "GenAI-Perf's inter_token_latency"
        in load("profile_export_genai_perf.json").points[0].notes[0]
    )
    assert "GuideLLM's inter_token_latency_ms" in load("benchmarks.json").points[0].notes[0]


def test_llmperf_set_to_8_that_held_4_06_sizes_on_4_06():
    # 76.125 completed requests a minute = 1.26875/s; × 3.2 s mean request time = 4.06.
    (point,) = parse_load_test(llmperf(results_num_completed_requests_per_min=76.125)).points
    assert point.concurrency == pytest.approx(4.06)
    assert (point.nominal_concurrency, point.concurrency_basis) == (8, "littles_law")
    assert point.held_fraction == pytest.approx(0.5075) and point.held_under_setting
    assert point.load_label == "4.06 (set 8)"
    capacity = capacity_at_target([point], ttft_target_ms=500, tpot_target_ms=50)
    assert capacity.concurrency == pytest.approx(4.06)
    assert capacity.requests_per_s == pytest.approx(1.26875)
    assert capacity.basis == "the measured point at 4.06 (set 8) in flight"
    assert "set to 8 in flight, the run held 4.06 (51% of its setting)" in capacity.notes[0]
    plan = measured_replicas(
        capacity,
        tensor_parallel=1,
        accelerators_per_server=8,
        peak_concurrency=200,
        peak_requests_per_s=None,
        headroom_pct=10,
        n_plus_one=True,
    )
    # 200 ÷ 4.06 = 49.3 → 50; ÷ 0.9 = 54.7 → 55; N+1 → 56 (on the setting of 8: 29).
    assert (plan.replicas_for_load, plan.replicas_with_headroom, plan.replicas) == (50, 55, 56)


def test_guidellm_set_to_32_that_held_27_45_reads_its_measured_concurrency():
    data = json.loads((FIXTURES / "benchmarks.json").read_text())
    bench = data["benchmarks"][1]
    bench["config"]["strategy"]["streams"] = 32
    bench["metrics"]["request_concurrency"]["successful"]["mean"] = 27.45
    point = parse_load_test(data).points[1]
    assert (point.concurrency, point.nominal_concurrency) == (27.45, 32)
    # 27.45 ÷ 32 = 86 %: above the 80 % under which the page warns.
    assert point.held_fraction == pytest.approx(0.8578125) and not point.held_under_setting


def test_a_load_above_the_setting_is_an_inconsistent_file_and_keeps_the_setting():
    # 4 requests/s × 3.2 s = 12.8 in flight from a run allowed 8: the figures disagree.
    (point,) = parse_load_test(llmperf(results_num_completed_requests_per_min=240.0)).points
    assert point.concurrency == 8
    assert "gives 12.8 in flight, more than the 8 the tool allowed" in point.notes[-1]


def test_without_a_request_time_the_setting_is_the_load_and_says_so():
    data = llmperf()
    del data["results_end_to_end_latency_s_mean"]
    del data["results_inter_token_latency_s_mean"]
    (point,) = parse_load_test(data).points
    assert (point.concurrency, point.concurrency_basis) == (8, "set")
    assert "taken as the setting" in point.notes[-1]


def test_a_stored_point_reads_back_with_its_notes():
    (point,) = parse_load_test(llmperf(results_num_completed_requests_per_min=76.125)).points
    stored = json.loads(json.dumps(asdict(point)))
    assert LoadPoint.from_stored(stored) == point


def guidellm_with_a_dead_stage() -> dict:
    """The fixture sweep plus a throughput stage that timed out: GuideLLM writes its totals
    (0 successful) and every successful-request statistic as 0."""
    data = json.loads((FIXTURES / "benchmarks.json").read_text())
    dead = json.loads(json.dumps(data["benchmarks"][-1]))
    dead["config"]["strategy"] = {"type_": "throughput"}
    dead["request_totals"] = {"successful": 0, "incomplete": 512, "errored": 0, "total": 512}
    for metric in dead["metrics"].values():
        metric["successful"] = {
            "mean": 0.0, "median": 0.0, "count": 0, "total_sum": 0.0,
            "percentiles": {"p50": 0.0, "p95": 0.0, "p99": 0.0},
        }  # fmt: skip
    data["benchmarks"].append(dead)
    return data


def test_a_stage_with_no_successful_request_is_left_out_and_named():
    test = parse_load_test(guidellm_with_a_dead_stage())
    assert [p.nominal_concurrency for p in test.points] == [4, 16, 64]
    assert test.skipped == (
        "benchmark 4 (throughput): no request succeeded (request_totals.successful: 0), "
        "left out of the sweep",
    )
    # The sweep's mean lengths are the three stages that measured something, not 750/187.5.
    assert (test.input_tokens_mean, test.output_tokens_mean) == (1000.0, 250.0)
    # A 70 ms TTFT target no real point meets stays infeasible (a zero point passed it).
    capacity = capacity_at_target(test.points, ttft_target_ms=70, tpot_target_ms=None)
    assert not capacity.feasible


def test_a_stage_without_totals_but_zero_requests_per_second_is_left_out_too():
    data = guidellm_with_a_dead_stage()
    del data["benchmarks"][-1]["request_totals"]
    test = parse_load_test(data)
    assert len(test.points) == 3
    assert "0 completed requests/s" in test.skipped[0]


def test_a_report_of_only_failed_stages_or_a_failed_run_is_refused():
    data = guidellm_with_a_dead_stage()
    data["benchmarks"] = data["benchmarks"][-1:]
    with pytest.raises(ExcludedRunError, match="benchmark 1 \\(throughput\\)"):
        parse_load_test(data)
    vllm = json.loads(next(FIXTURES.glob("vllm-*concurrency4-*.json")).read_text())
    with pytest.raises(NoSuccessfulRequestsError, match="completed: 0"):
        parse_load_test({**vllm, "completed": 0, "request_throughput": 0.0})
    with pytest.raises(NoSuccessfulRequestsError, match="results_num_completed_requests: 0"):
        parse_load_test(llmperf(results_num_completed_requests=0))


def test_a_file_of_another_kind_is_refused_with_the_formats_named():
    with pytest.raises(LoadTestFormatError, match="GuideLLM"):
        parse_load_test({"hello": 1})
    with pytest.raises(LoadTestFormatError, match="JSON object"):
        parse_load_test([1, 2])
    with pytest.raises(LoadTestFormatError, match="output_throughput"):
        parse_load_test({"mean_ttft_ms": 10, "request_throughput": 1, "max_concurrency": 4})


def test_capacity_is_interpolated_between_the_measured_points_around_the_target():
    sweep = vllm_sweep()
    # Held: 0.714 × 5.598, 2.09 × 7.65 and 5.375 × 11.905 s (set 4, 16, 64).
    assert [p.concurrency for p in sweep.points] == pytest.approx([3.996972, 15.9885, 63.989375])
    capacity = capacity_at_target(
        sweep.points, ttft_target_ms=500, tpot_target_ms=50, percentile=99
    )
    # Margins (latency ÷ target − 1, the worse of the two):
    #   set 16: max(300/500, 40/50) − 1 = −0.2;  set 64: max(1500/500, 60/50) − 1 = 2.0.
    # frac = −0.2 / (−0.2 − 2.0) = 1/11 → 15.9885 + (63.989375 − 15.9885)/11 = 20.352 in
    # flight, 2.09 + (5.375 − 2.09)/11 = 2.3886 requests/s.
    assert capacity.feasible
    assert capacity.concurrency == pytest.approx(15.9885 + (63.989375 - 15.9885) / 11)
    assert capacity.requests_per_s == pytest.approx(2.09 + (5.375 - 2.09) / 11)
    assert capacity.output_tokens_per_s == pytest.approx(522.5 + (1343.75 - 522.5) / 11)
    assert "between the measured points at 16 and 64" in capacity.basis
    assert capacity.notes == ()


def test_a_p95_target_on_a_p99_only_file_is_judged_on_p99_and_says_so():
    capacity = capacity_at_target(
        vllm_sweep().points, ttft_target_ms=500, tpot_target_ms=50, percentile=95
    )
    assert capacity.concurrency == pytest.approx(15.9885 + (63.989375 - 15.9885) / 11)
    assert any("judged on the measured p99" in note for note in capacity.notes)


def test_a_p99_target_is_never_judged_on_p95():
    points = [replace(p, ttft_p99_ms=None) for p in load("benchmarks.json").points]
    capacity = capacity_at_target(points, ttft_target_ms=500, tpot_target_ms=50, percentile=99)
    assert not capacity.feasible
    assert "no p99 TTFT" in capacity.reason


def test_guidellm_capacity_at_p95():
    capacity = capacity_at_target(
        load("benchmarks.json").points, ttft_target_ms=500, tpot_target_ms=50, percentile=95
    )
    # set 16: max(250/500, 36/50) − 1 = −0.28; set 64: max(1100/500, 55/50) − 1 = 1.2.
    # Between the loads held there, 15.68 and 62.72 in flight.
    frac = 0.28 / 1.48
    assert capacity.concurrency == pytest.approx(15.68 + frac * (62.72 - 15.68))
    assert capacity.tpot_ms == pytest.approx(36 + frac * 19)


def test_capacity_is_never_extrapolated_past_the_heaviest_point():
    capacity = capacity_at_target(
        vllm_sweep().points, ttft_target_ms=5000, tpot_target_ms=100, percentile=99
    )
    assert capacity.concurrency == pytest.approx(63.989375) and capacity.requests_per_s == 5.375
    assert "may hold more" in capacity.notes[-1]


def test_a_target_even_the_lightest_load_misses_is_infeasible():
    capacity = capacity_at_target(
        vllm_sweep().points, ttft_target_ms=100, tpot_target_ms=None, percentile=99
    )
    assert not capacity.feasible
    assert "lightest measured load (4 in flight)" in capacity.reason


def test_replicas_follow_the_guides_rule_on_the_measured_capacity():
    capacity = capacity_at_target(
        vllm_sweep().points, ttft_target_ms=500, tpot_target_ms=50, percentile=99
    )
    plan = measured_replicas(
        capacity,
        tensor_parallel=1,
        accelerators_per_server=8,
        peak_concurrency=200,
        peak_requests_per_s=None,
        headroom_pct=10,
        n_plus_one=True,
    )
    # 200 ÷ 20.352 = 9.83 replicas; ÷ 0.9 headroom = 10.9 → 11; N+1 → 12 on 2 servers.
    assert (plan.replicas_for_load, plan.replicas_with_headroom, plan.replicas) == (10, 11, 12)
    assert plan.servers == 2


def test_lengths_other_than_the_workloads_are_named():
    sweep = vllm_sweep()
    assert lengths_mismatch(sweep, input_tokens_mean=1100, output_tokens_mean=240) is None
    message = lengths_mismatch(sweep, input_tokens_mean=4000, output_tokens_mean=250)
    assert message.startswith("Measured on other lengths")
    assert "input 1,000 tokens measured against 4,000" in message
    assert "output" not in message


def test_the_model_beside_the_measurement_at_the_same_loads():
    models = load_models_csv(DATA / "models.csv")
    accelerators = load_accelerators_csv(DATA / "accelerators.csv")
    shape = replica_shape(
        models["llama-3.1-8b"], accelerators["h100-sxm"], "fp8", 1, load_calibration()
    )
    rows = compare_with_model(
        vllm_sweep().points, shape, input_tokens_mean=1000, output_tokens_mean=250
    )
    # The model is evaluated at the load each point held.
    assert [r.concurrency for r in rows] == pytest.approx([3.996972, 15.9885, 63.989375])
    state = steady_state(shape, 15.9885, 1000, 250)
    middle = rows[1]
    assert middle.model_output_tokens_per_s == pytest.approx(float(state.output_tokens_per_s[0]))
    assert middle.throughput_diff_pct == pytest.approx(
        (middle.model_output_tokens_per_s - 522.5) / 522.5 * 100
    )
    assert middle.tpot_diff_pct == pytest.approx((middle.model_tpot_ms - 30) / 30 * 100)
    # Geometric mean of measured ÷ modelled throughput over the three points.
    ratios = [r.measured_output_tokens_per_s / r.model_output_tokens_per_s for r in rows]
    assert model_correction(rows) == pytest.approx((ratios[0] * ratios[1] * ratios[2]) ** (1 / 3))
    assert model_correction(()) is None


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(1, 500), st.floats(1, 5000), st.floats(1, 200)),
        min_size=1,
        max_size=8,
        unique_by=lambda t: round(t[0], 3),
    ),
    st.floats(10, 5000),
    st.floats(1, 200),
)
def test_capacity_stays_between_measured_points_and_grows_with_a_looser_target(
    rows, ttft_target_ms, tpot_target_ms
):
    points = [
        LoadPoint(
            concurrency=c,
            concurrency_basis="set",
            request_rate_per_s=None,
            requests_per_s=c / 10,
            output_tokens_per_s=c * 20,
            input_tokens_mean=1000,
            output_tokens_mean=250,
            ttft_mean_ms=ttft / 2,
            ttft_p95_ms=ttft,
            ttft_p99_ms=None,
            tpot_mean_ms=tpot / 2,
            tpot_p95_ms=tpot,
            tpot_p99_ms=None,
        )  # fmt: skip
        for c, ttft, tpot in rows
    ]
    tight = capacity_at_target(
        points, ttft_target_ms=ttft_target_ms, tpot_target_ms=tpot_target_ms, percentile=95
    )
    loose = capacity_at_target(
        points, ttft_target_ms=2 * ttft_target_ms, tpot_target_ms=2 * tpot_target_ms
    )
    loads = [p.concurrency for p in points]
    if tight.feasible:
        assert min(loads) <= tight.concurrency <= max(loads)
        # Halving every latency ratio moves the largest meeting point and the crossing
        # of the margin only towards heavier loads.
        assert loose.feasible and loose.concurrency >= tight.concurrency - 1e-9
    else:
        assert tight.reason


def test_a_full_guidellm_report_is_streamed_without_its_requests(tmp_path):
    path = tmp_path / "benchmarks.json"
    size = write_guidellm_report(path, 600)
    assert size > 600 * 4_000  # every request kept, as GuideLLM writes it
    with path.open("rb") as stream:
        streamed = read_result_json(stream, size_bytes=size, whole_file_bytes=0)
    whole = json.loads(path.read_text())
    assert [b["requests"] for b in streamed["benchmarks"]] == [None, None, None]
    for bench in whole["benchmarks"]:
        bench["requests"] = None
    assert streamed == whole  # the aggregates exactly as json.load reads them
    assert parse_load_test(streamed) == load("benchmarks.json")


def test_a_streamed_file_that_is_not_json_is_refused_in_one_line():
    import io

    with pytest.raises(LoadTestFormatError) as error:
        read_result_json(io.BytesIO(b'{"benchmarks": [1, '), size_bytes=20, whole_file_bytes=0)
    assert str(error.value) == "not JSON (parse error: premature EOF)"
    with pytest.raises(LoadTestFormatError, match="not UTF-8|not JSON"):
        read_result_json(io.BytesIO(b"\xff\xfe{}"), size_bytes=4, whole_file_bytes=0)
    # A small file is decoded whole, NaN included (Python's json.dump writes it).
    small = read_result_json(io.BytesIO(b'{"p99_ttft_ms": NaN}'), size_bytes=20)
    assert math.isnan(small["p99_ttft_ms"])


def test_the_error_rate_limit_is_five_percent_of_the_finished_requests():
    assert MAX_ERROR_RATE == 0.05
    # LLMPerf's summary: 200 completed; 10 errors = 10 ÷ 210 = 4.76 %, kept and noted.
    (point,) = parse_load_test(llmperf(results_number_errors=10)).points
    assert "10 of 210 requests failed (4.8%, within the 5% error-rate limit)" in point.notes
    # 11 errors = 11 ÷ 211 = 5.2 %: the run is refused, naming the share and the limit.
    with pytest.raises(TooManyErrorsError) as refused:
        parse_load_test(llmperf(results_number_errors=11, results_error_rate=0.052))
    assert str(refused.value) == ("11 of 211 requests failed (5.2%, above the 5% error-rate limit)")
    # vLLM: vllm bench serve's "failed", else the prompts sent less the completed.
    vllm = json.loads(next(FIXTURES.glob("vllm-*concurrency4-*.json")).read_text())
    assert (vllm["num_prompts"], vllm["completed"]) == (400, 400)
    with pytest.raises(TooManyErrorsError, match="40 of 400 requests failed \\(10.0%"):
        parse_load_test({**vllm, "completed": 360})
    with pytest.raises(TooManyErrorsError, match="40 of 440 requests failed"):
        parse_load_test({**vllm, "failed": 40})
    (point,) = parse_load_test({**vllm, "failed": 4}).points
    assert "4 of 404 requests failed (1.0%, within the 5% error-rate limit)" in point.notes


def test_a_guidellm_stage_with_too_many_errors_is_left_out_and_named():
    data = json.loads((FIXTURES / "benchmarks.json").read_text())
    # GuideLLM's request_totals: the 16-stream stage had 90 successful and 10 errored
    # requests (10 %); the 4-stream one 99 and 1 (1 %).
    data["benchmarks"][0]["request_totals"] = {
        "successful": 99, "incomplete": 0, "errored": 1, "total": 100,
    }  # fmt: skip
    data["benchmarks"][1]["request_totals"] = {
        "successful": 90, "incomplete": 4, "errored": 10, "total": 104,
    }  # fmt: skip
    test = parse_load_test(data)
    assert [p.nominal_concurrency for p in test.points] == [4, 64]
    assert test.skipped == (
        "benchmark 2 (concurrent, 16 streams): 10 of 100 requests failed (10.0%, above the "
        "5% error-rate limit), left out of the sweep",
    )
    assert "1 of 100 requests failed (1.0%, within the 5% error-rate limit)" in (
        test.points[0].notes
    )
