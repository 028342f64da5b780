"""Traffic figures from request logs, against hand calculations.

Fixtures (tests/measured/fixtures):

- ``gateway_log.jsonl``: an OpenAI-compatible gateway's log (LiteLLM-style ``startTime``,
  ``endTime``, ``usage.prompt_tokens`` / ``completion_tokens``, ``user``, ``metadata``), 11
  requests on Monday 2026-10-05: six in 09:00 at 0, 5, …, 25 s lasting 30 s each, two in 09:01
  (at 70 s and 100 s, 10 s each), three at 10:00 (5 s each). Prompts 100, 200, …, 1100 tokens;
  outputs 50, except 150 for the fourth request.
- ``usage_export.csv``: a usage export (timestamp, prompt/completion tokens, no latency):
  full weeks of 10, 12 and 14 requests from Monday 2026-10-05, three of them in one minute
  (2026-10-20 12:00), and two in a fourth week the log stops in.
"""

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.engine.traffic_log import (
    COLUMN_PRESETS,
    TrafficAccumulator,
    TrafficLogError,
    peak_in_flight,
    percentile,
    read_rows,
)
from planner.engine.traffic_log_columns import accumulate_log

FIXTURES = Path(__file__).resolve().parents[1] / "measured" / "fixtures"


def profiles(name: str, preset: str, **kwargs):
    accumulator = TrafficAccumulator()
    config = COLUMN_PRESETS[preset]
    with open(FIXTURES / name, newline="") as lines:
        for row in read_rows(lines, config["format"], config["columns"]):
            accumulator.add(row)
    return accumulator.result(**kwargs)


def test_percentile_is_linear_between_order_statistics():
    # 1..20: rank (20 − 1) × 0.95 = 18.05 → 19 + 0.05 × (20 − 19) = 19.05.
    assert percentile(range(1, 21), 95) == pytest.approx(19.05)
    assert percentile([50] * 10 + [150], 95) == pytest.approx(100.0)
    assert percentile([7], 95) == 7


def test_gateway_log_figures_by_hand():
    everything = profiles("gateway_log.jsonl", "openai_gateway")["all"]
    assert everything.requests == 11
    # Prompts 100..1100: mean 600; rank 10 × 0.95 = 9.5 → 1000 + 0.5 × 100 = 1050.
    assert everything.input_tokens_mean == pytest.approx(600)
    assert everything.input_tokens_p95 == pytest.approx(1050)
    # Outputs ten × 50 and one 150: mean 650 / 11; p95 halfway between 50 and 150.
    assert everything.output_tokens_mean == pytest.approx(650 / 11)
    assert everything.output_tokens_p95 == pytest.approx(100)
    # Busiest minute 09:00 with 6 requests = 0.1/s; busiest hour 09 with 8 = 8/3600 per s.
    assert everything.busiest_minute_per_s == pytest.approx(0.1)
    nine = datetime(2026, 10, 5, 9, 0, tzinfo=UTC).timestamp()
    assert everything.busiest_minute_s == nine
    assert everything.busiest_hour_per_s == pytest.approx(8 / 3600)
    # Burstiness: 0.1 ÷ (8 / 3600) = 45.
    assert everything.burstiness == pytest.approx(45)
    # All six of 09:00 are in flight from 25 s to 30 s.
    assert (everything.peak_concurrency, everything.concurrency_basis) == (
        6,
        "arrival and duration",
    )
    # One day seen: hour 9 had 8 requests (the peak, 1), hour 10 had 3.
    assert everything.daily_profile[9] == 1.0
    assert everything.daily_profile[10] == pytest.approx(3 / 8)
    assert sum(everything.daily_profile) == pytest.approx(1 + 3 / 8)
    # Users per region: u1 and u2 in eu-west, u3 in us-east.
    assert everything.region_users == (("eu-west", 2), ("us-east", 1))
    assert everything.growth_pct_per_week is None  # one day is not weeks
    counts = everything.input_histogram[1]
    assert sum(counts) == 11


def test_request_types_are_counted_apart():
    by_type = profiles("gateway_log.jsonl", "openai_gateway")
    assert set(by_type) == {"all", "chat", "summary"}
    assert by_type["chat"].requests == 8 and by_type["summary"].requests == 3
    # Summaries: prompts 900, 1000, 1100, 5 s each, 10 s apart: never two at once.
    assert by_type["summary"].input_tokens_mean == pytest.approx(1000)
    assert by_type["summary"].peak_concurrency == 1


def test_usage_export_uses_littles_law_and_finds_the_growth():
    usage = profiles("usage_export.csv", "usage_export", request_s=8.0)["all"]
    assert usage.requests == 38
    # No durations: L = λW = (3 requests in the busiest minute ÷ 60 s) × 8 s = 0.4.
    assert usage.busiest_minute_per_s == pytest.approx(0.05)
    assert usage.peak_concurrency == pytest.approx(0.4)
    assert usage.concurrency_basis == "Little's law"
    assert usage.burstiness == pytest.approx(0.05 / (3 / 3600))
    # Full weeks 10, 12, 14 (the fourth is cut short): slope 2 a week on a mean of 12.
    assert usage.weekly_requests == (10, 12, 14)
    assert usage.growth_pct_per_week == pytest.approx(2 / 12 * 100)
    assert dict(usage.region_users) == {"eu-west": 3, "ap-south": 1}  # user0 is ap-south


def test_without_durations_or_a_request_time_the_concurrency_is_not_guessed():
    usage = profiles("usage_export.csv", "usage_export")["all"]
    assert (usage.peak_concurrency, usage.concurrency_basis) == (None, "")


def test_a_malformed_csv_row_names_its_line_and_column():
    lines = (FIXTURES / "usage_export.csv").read_text().splitlines(keepends=True)
    lines[5] = lines[5].replace(",800,", ",eight hundred,")
    header = lines[0].strip().split(",")
    with pytest.raises(TrafficLogError) as error:
        list(read_rows(lines, "csv", COLUMN_PRESETS["usage_export"]["columns"]))
    position = header.index("prompt_tokens") + 1
    assert str(error.value) == (
        f'line 6, column {position} "prompt_tokens": could not convert string to float: '
        "'eight hundred'"
    )
    assert (error.value.line, error.value.column) == (6, f'column {position} "prompt_tokens"')


def test_a_malformed_json_lines_row_shows_one_line_number():
    jsonl = (FIXTURES / "gateway_log.jsonl").read_text().splitlines(keepends=True)
    columns = COLUMN_PRESETS["openai_gateway"]["columns"]
    jsonl[2] = "{not json\n"
    with pytest.raises(TrafficLogError) as error:
        list(read_rows(jsonl, "jsonl", columns))
    # Not "line 3: Expecting ...: line 1 column 2 (char 1)" (the decoder's line of one line).
    assert str(error.value) == (
        "line 3, character 2: not valid JSON (Expecting property name enclosed in double quotes)"
    )
    jsonl[2] = jsonl[3].replace('"completion_tokens": ', '"completion_tokens": -')
    with pytest.raises(TrafficLogError) as error:
        list(read_rows(jsonl, "jsonl", columns))
    message = str(error.value)
    assert message.startswith('line 3, field "usage.completion_tokens" (output_tokens): ')
    assert message.count("line") == 1


def test_a_header_without_a_mapped_column_is_named():
    with pytest.raises(
        TrafficLogError,
        match="line 1: the header has no column timestamp, prompt_tokens, completion_tokens",
    ):
        list(read_rows(["time,tokens\n"], "csv", COLUMN_PRESETS["usage_export"]["columns"]))


def test_epoch_seconds_and_milliseconds_read_alike():
    columns = {"timestamp": "t", "input_tokens": "i", "output_tokens": "o"}
    rows = list(read_rows(['{"t": 1790000000, "i": 1, "o": 2}\n', '{"t": 1790000000000, "i": 1, "o": 2}\n'], "jsonl", columns))  # fmt: skip
    assert rows[0].timestamp_s == rows[1].timestamp_s == 1790000000


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 500), st.integers(1, 100)), min_size=1, max_size=40))
def test_peak_in_flight_matches_counting_every_instant(requests):
    arrivals = np.array([float(a) for a, _ in requests])
    durations = np.array([float(d) for _, d in requests])
    # In flight at instant t: arrival ≤ t < arrival + duration; the peak is at an arrival.
    brute = max(int(np.sum((arrivals <= t) & (t < arrivals + durations))) for t in arrivals)
    assert peak_in_flight(arrivals, durations) == brute


# --- The columnar reader (pyarrow, in blocks) gives the row reader's figures and messages ---


def columnar(tmp_path, name: str, text: str, preset: str, **kwargs):
    path = tmp_path / name
    path.write_text(text)
    config = COLUMN_PRESETS[preset]
    return accumulate_log(lambda: path.open("rb"), config["format"], config["columns"], **kwargs)


@pytest.mark.parametrize(
    ("name", "preset"),
    [("gateway_log.jsonl", "openai_gateway"), ("usage_export.csv", "usage_export")],
)
@pytest.mark.parametrize("block_bytes", [400, 1 << 20])
def test_the_columnar_reader_gives_the_row_readers_figures(tmp_path, name, preset, block_bytes):
    text = (FIXTURES / name).read_text()
    by_rows = profiles(name, preset, request_s=8.0)
    by_columns = columnar(tmp_path, name, text, preset, block_bytes=block_bytes).result(
        request_s=8.0
    )
    assert by_columns == by_rows


def test_the_columnar_reader_names_a_bad_csv_value_by_line_and_column(tmp_path):
    lines = (FIXTURES / "usage_export.csv").read_text().splitlines(keepends=True)
    lines[30] = lines[30].replace(",200,", ",-3,")
    lines.insert(10, "\n")  # a blank line is no record but is a line
    with pytest.raises(TrafficLogError) as error:
        columnar(tmp_path, "log.csv", "".join(lines), "usage_export", block_bytes=300)
    # The bad row was line 31; the blank line above it makes it 32.
    assert str(error.value) == (
        'line 32, column 6 "completion_tokens": output tokens is not a whole non-negative '
        "number: '-3'"
    )


def test_the_columnar_reader_names_a_bad_json_lines_row_once(tmp_path):
    jsonl = (FIXTURES / "gateway_log.jsonl").read_text().splitlines(keepends=True)
    jsonl[7] = jsonl[7].replace('"completion_tokens": ', '"completion_tokens": -')
    with pytest.raises(TrafficLogError) as error:
        columnar(tmp_path, "log.jsonl", "".join(jsonl), "openai_gateway", block_bytes=700)
    message = str(error.value)
    assert message.startswith('line 8, field "usage.completion_tokens" (output_tokens): ')
    assert message.count("line") == 1
    # A line that is not JSON: pyarrow cannot read the file, the row reader names the line.
    jsonl[7] = "{not json\n"
    with pytest.raises(TrafficLogError) as error:
        columnar(tmp_path, "log.jsonl", "".join(jsonl), "openai_gateway", block_bytes=700)
    assert str(error.value) == (
        "line 8, character 2: not valid JSON (Expecting property name enclosed in double quotes)"
    )


def test_times_pyarrow_does_not_cast_are_read_row_by_row(tmp_path):
    # Mixed epoch milliseconds and zone-less ISO times with a space: read as the row reader
    # reads them (no zone = UTC), in one block.
    text = "t,i,o\n1790000000000,1,2\n2026-09-21 14:13:20,3,4\n"
    config = {"timestamp": "t", "input_tokens": "i", "output_tokens": "o"}
    path = tmp_path / "mixed.csv"
    path.write_text(text)
    everything = accumulate_log(lambda: path.open("rb"), "csv", config).result()["all"]
    assert everything.requests == 2
    assert everything.first_s == everything.last_s == 1790000000
