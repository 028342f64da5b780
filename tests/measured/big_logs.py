"""Million-row gateway logs for the scale tests and benchmarks/bench_traffic_log.py.

Two layouts of the same requests, as the import's presets read them
(:data:`planner.engine.traffic_log.COLUMN_PRESETS`):

- CSV, the ``usage_export`` preset's columns plus the others a gateway's usage export
  carries (request id, API key alias, model, status, cost), about 223 bytes a row, which
  makes the 1,000,000-row, 223 MB file of issue 26;
- JSON Lines, the ``openai_gateway`` preset's LiteLLM-style records (``startTime``,
  ``endTime``, ``usage``, ``metadata``), about 390 bytes a row.

The columns are drawn with NumPy (seeded) and written by pyarrow's CSV writer or one
formatted line per row, so a million rows take a few seconds; :func:`expected_figures`
gives what the import must find, computed from the same arrays with NumPy alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

START_S = 1_791_158_400  # Monday 2026-10-05 00:00 UTC
DAYS = 28
REGIONS = ("us-east", "eu-west", "ap-south", "us-west")
TYPES = ("chat", "summary", "code")
USERS = 5_000


@dataclass(frozen=True)
class GatewayLog:
    """The drawn columns of a log (arrival order)."""

    start_ms: np.ndarray
    duration_ms: np.ndarray
    prompt_tokens: np.ndarray
    completion_tokens: np.ndarray
    user: np.ndarray
    region: np.ndarray
    request_type: np.ndarray

    @property
    def rows(self) -> int:
        return len(self.start_ms)


def draw(rows: int, *, seed: int = 26) -> GatewayLog:
    """Four weeks of requests from Monday 2026-10-05, busier by day, one burst a week."""
    rng = np.random.default_rng(seed)
    # A daily swell: hour-of-day weights peak at 14:00 UTC (sampled by inverse CDF).
    hour_weight = 1.0 + 0.8 * np.sin((np.arange(24) - 8) / 24 * 2 * np.pi)
    hours = rng.choice(
        DAYS * 24, size=rows, p=np.tile(hour_weight, DAYS) / (DAYS * hour_weight.sum())
    )
    start_ms = START_S * 1000 + hours * 3_600_000 + rng.integers(0, 3_600_000, size=rows)
    start_ms.sort()
    prompt = np.clip(rng.lognormal(np.log(900), 0.6, size=rows), 1, 32_000).astype(np.int64)
    completion = np.clip(rng.lognormal(np.log(220), 0.5, size=rows), 1, 4_000).astype(np.int64)
    duration_ms = (150 + completion * 28 + rng.integers(0, 200, size=rows)).astype(np.int64)
    return GatewayLog(
        start_ms=start_ms,
        duration_ms=duration_ms,
        prompt_tokens=prompt,
        completion_tokens=completion,
        user=rng.integers(0, USERS, size=rows),
        region=rng.choice(len(REGIONS), size=rows, p=[0.4, 0.35, 0.15, 0.1]),
        request_type=rng.choice(len(TYPES), size=rows, p=[0.7, 0.2, 0.1]),
    )


def _text(values: np.ndarray, width: int = 0):
    """Integers as decimal text, zero-padded to ``width`` (pyarrow's string kernels)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.cast(pa.array(values), pa.string())
    return pc.utf8_lpad(text, width, "0") if width else text


def _join(*parts):
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(*parts, "")


def _iso(ms: np.ndarray):
    """Epoch milliseconds as ISO 8601 UTC text, "2026-10-05T09:00:01.672Z"."""
    import pyarrow as pa

    days, in_day = np.divmod(ms, 86_400_000)
    first = days.min()
    dates = np.datetime_as_string(np.arange(first, days.max() + 1).astype("datetime64[D]"))
    date_text = pa.array(dates).take(pa.array(days - first))
    seconds, milli = np.divmod(in_day, 1000)
    return _join(
        date_text, "T", _text(seconds // 3600, 2), ":", _text(seconds // 60 % 60, 2), ":",
        _text(seconds % 60, 2), ".", _text(milli, 3), "Z",
    )  # fmt: skip


def write_csv(path: Path, log: GatewayLog) -> int:
    """The log as a usage-export CSV; returns the file's size in bytes."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    n = log.rows
    index = np.arange(n)
    table = pa.table(
        {
            "request_id": _join("chatcmpl-7f3a9c2e4b1d8f6a0c5e", _text(index, 10)),
            "session_id": _join("9b1c4e2a-77d0-4f3b-a5c8-", _text(index // 7, 12)),
            "timestamp": _iso(log.start_ms),
            "api_key_alias": _join("team-", _text(log.user % 40, 3)),
            "user_id": _join("user-", _text(log.user, 5)),
            "region": pa.array(np.asarray(REGIONS)[log.region]),
            "request_type": pa.array(np.asarray(TYPES)[log.request_type]),
            "endpoint": pa.array(np.full(n, "/v1/chat/completions")),
            "model": pa.array(np.full(n, "meta-llama/Llama-3.1-70B-Instruct")),
            "status_code": np.full(n, 200),
            "prompt_tokens": log.prompt_tokens,
            "completion_tokens": log.completion_tokens,
            "latency_ms": log.duration_ms,
            "cost_eur": np.round((log.prompt_tokens * 0.6 + log.completion_tokens * 1.8) / 1e6, 7),
        }
    )
    pa_csv.write_csv(table, path, write_options=pa_csv.WriteOptions(quoting_style="none"))
    return path.stat().st_size


def write_jsonl(path: Path, log: GatewayLog) -> int:
    """The log as an OpenAI-compatible gateway's JSON Lines; returns the size in bytes."""
    import pyarrow as pa

    lines = _join(
        '{"id": "chatcmpl-', _text(np.arange(log.rows), 10),
        '", "call_type": "acompletion", "model": "llama-3.1-70b-instruct", "startTime": "',
        _iso(log.start_ms), '", "endTime": "', _iso(log.start_ms + log.duration_ms),
        '", "user": "user-', _text(log.user, 5), '", "usage": {"prompt_tokens": ',
        _text(log.prompt_tokens), ', "completion_tokens": ', _text(log.completion_tokens),
        ', "total_tokens": ', _text(log.prompt_tokens + log.completion_tokens),
        '}, "metadata": {"region": "', pa.array(np.asarray(REGIONS)[log.region]),
        '", "request_type": "', pa.array(np.asarray(TYPES)[log.request_type]), '"}}\n',
    )  # fmt: skip
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)[
        lines.offset : lines.offset + len(lines) + 1
    ]
    data = lines.buffers()[2]
    with path.open("wb") as out:
        out.write(memoryview(data)[offsets[0] : offsets[-1]])
    return path.stat().st_size


def expected_figures(log: GatewayLog) -> dict:
    """What the import must find over every request ("all"), from the arrays alone."""
    minutes = log.start_ms // 60_000
    counts = np.bincount(minutes - minutes.min())
    return {
        "requests": log.rows,
        "input_tokens_mean": float(log.prompt_tokens.mean()),
        "input_tokens_p95": float(np.percentile(log.prompt_tokens.astype(float), 95)),
        "output_tokens_mean": float(log.completion_tokens.mean()),
        "busiest_minute_per_s": counts.max() / 60.0,
        "types": {TYPES[k]: int(c) for k, c in enumerate(np.bincount(log.request_type))},
        "users_by_region": {
            REGIONS[r]: len(np.unique(log.user[log.region == r])) for r in range(len(REGIONS))
        },
    }
