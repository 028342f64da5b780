"""A client's request log: row by row in, the workload's traffic figures out.

Seed guide, "a working method": start from the real traffic profile and "estimate peak
concurrency, not average traffic. Spikes decide whether you meet the target." Rows come one at
a time (:func:`read_rows` over an iterator of lines, so a large file is never held whole) or
in column blocks (:class:`LogBatch`, from :mod:`planner.engine.traffic_log_columns`) into a
:class:`TrafficAccumulator`, which keeps every row's lengths, arrival, request time and type
(36 bytes a row) and the users per region of each type; its
:meth:`TrafficAccumulator.result` gives one frozen :class:`TrafficProfile` per request type.

Definitions:

- Percentiles: linear interpolation between order statistics (Hyndman & Fan type 7, NumPy's
  default): p95 of 1..20 is 19.05.
- Busiest minute / hour: the most requests that arrived in one clock minute / hour, ÷ 60 / 3600.
- Burstiness: the busiest minute's rate ÷ the mean rate of the clock hour around it.
- Peak concurrency: with request times, the most requests in flight at once (arrival to
  arrival + duration); without, Little's law L = λW on the busiest minute's rate and a given
  request time W (:func:`planner.engine.demand.concurrency_from_rate`), and it says which.
- Growth: least-squares slope of requests per full week (UTC weeks from the first Monday),
  as % of the mean week, when the log spans two full weeks or more.
"""

from __future__ import annotations

import csv
import json
import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from planner.engine.demand import concurrency_from_rate

__all__ = [
    "COLUMN_PRESETS",
    "FIELDS",
    "LogBatch",
    "LogRow",
    "check_columns",
    "TrafficAccumulator",
    "TrafficLogError",
    "TrafficProfile",
    "percentile",
    "read_rows",
]

# The row's fields and whether a mapping must name them.
FIELDS = {
    "timestamp": True,
    "input_tokens": True,
    "output_tokens": True,
    "duration_s": False,
    "duration_ms": False,
    "end_timestamp": False,
    "ttft_ms": False,
    "region": False,
    "user": False,
    "request_type": False,
}

# Column mappings of the usual exports (dotted paths reach into nested JSON objects).
COLUMN_PRESETS: dict[str, dict] = {
    "openai_gateway": {
        "label": "OpenAI-compatible gateway log (JSON Lines: startTime, endTime, usage)",
        "format": "jsonl",
        "columns": {
            "timestamp": "startTime",
            "end_timestamp": "endTime",
            "input_tokens": "usage.prompt_tokens",
            "output_tokens": "usage.completion_tokens",
            "user": "user",
            "region": "metadata.region",
            "request_type": "metadata.request_type",
        },
    },
    "usage_export": {
        "label": "Usage export (CSV: timestamp, prompt_tokens, completion_tokens)",
        "format": "csv",
        "columns": {
            "timestamp": "timestamp",
            "input_tokens": "prompt_tokens",
            "output_tokens": "completion_tokens",
            "duration_ms": "latency_ms",
            "user": "user_id",
            "region": "region",
            "request_type": "request_type",
        },
    },
}

DEFAULT_TYPE = "all"
SECONDS_PER_WEEK = 7 * 86400
MONDAY_EPOCH_S = 4 * 86400  # 1970-01-05, the first Monday after the epoch


class TrafficLogError(ValueError):
    """A row that cannot be read, with its line number (1 = the first line of the file) and,
    where one value is at fault, its column ("column 3 \"prompt_tokens\"" in a CSV, the
    field path in JSON Lines, the character of a line that is not JSON)."""

    def __init__(self, line: int, message: str, column: str = "") -> None:
        super().__init__(f"line {line}{', ' + column if column else ''}: {message}")
        self.line = line
        self.column = column


class _FieldError(ValueError):
    """A value of one mapped field that cannot be read (the field's name travels with it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class LogRow:
    """One request of the log."""

    timestamp_s: float
    input_tokens: int
    output_tokens: int
    duration_s: float | None = None
    ttft_ms: float | None = None
    region: str = ""
    user: str = ""
    request_type: str = DEFAULT_TYPE


def parse_timestamp(value) -> float:
    """Seconds since the epoch from epoch seconds or milliseconds, or an ISO 8601 string."""
    if isinstance(value, int | float) or (isinstance(value, str) and _is_number(value)):
        stamp = float(value)
        return stamp / 1000.0 if stamp > 1e11 else stamp
    if isinstance(value, str) and value.strip():
        text = value.strip().replace(" ", "T", 1) if "T" not in value else value.strip()
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)  # a log without a zone is read as UTC
        return moment.timestamp()
    raise ValueError(f"not a time: {value!r}")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _get(record: Mapping, path: str):
    value = record
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _count(value, name: str) -> int:
    if value is None or value == "":
        raise ValueError(f"{name} is empty")
    number = float(value)
    if not math.isfinite(number) or number < 0 or number != int(number):
        raise ValueError(f"{name} is not a whole non-negative number: {value!r}")
    return int(number)


def _optional_float(value, name: str) -> float | None:
    if value is None or value == "":
        return None
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{name} is not a non-negative number: {value!r}")
    return number


def _read(name: str, convert, value):
    try:
        return convert(value)
    except (ValueError, TypeError) as exc:
        raise _FieldError(name, str(exc)) from None


def _row(record: Mapping, columns: Mapping[str, str]) -> LogRow:
    """One request from one record; a bad value raises :class:`_FieldError` naming its field."""

    def field(name: str):
        path = columns.get(name)
        return _get(record, path) if path else None

    start = _read("timestamp", parse_timestamp, field("timestamp"))
    duration = _read("duration_s", lambda v: _optional_float(v, "duration_s"), field("duration_s"))
    if (
        duration is None
        and (
            ms := _read(
                "duration_ms", lambda v: _optional_float(v, "duration_ms"), field("duration_ms")
            )
        )
        is not None
    ):
        duration = ms / 1000.0
    end = field("end_timestamp")
    if duration is None and end not in (None, ""):
        duration = _read("end_timestamp", parse_timestamp, end) - start
        if duration < 0:
            raise _FieldError("end_timestamp", "the request ends before it starts")
    return LogRow(
        timestamp_s=start,
        input_tokens=_read(
            "input_tokens", lambda v: _count(v, "input tokens"), field("input_tokens")
        ),
        output_tokens=_read(
            "output_tokens", lambda v: _count(v, "output tokens"), field("output_tokens")
        ),
        duration_s=duration,
        ttft_ms=_read("ttft_ms", lambda v: _optional_float(v, "ttft_ms"), field("ttft_ms")),
        region=str(field("region") or ""),
        user=str(field("user") or ""),
        request_type=str(field("request_type") or DEFAULT_TYPE),
    )


def check_columns(columns: Mapping[str, str]) -> None:
    """Raises ValueError naming a required field the mapping leaves out."""
    missing = [name for name, required in FIELDS.items() if required and not columns.get(name)]
    if missing:
        raise ValueError("the column mapping needs " + ", ".join(missing))


def read_rows(lines: Iterable[str], fmt: str, columns: Mapping[str, str]) -> Iterator[LogRow]:
    """Rows of a CSV (header first) or JSON Lines log, one at a time.

    Raises:
        TrafficLogError: the first malformed row, with its line number.
    """
    check_columns(columns)
    if fmt == "jsonl":
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                # The decoder's own "line 1 column 5" is within this one line: say the
                # file's line once and the character within it.
                raise TrafficLogError(
                    number, f"not valid JSON ({exc.msg})", f"character {exc.pos + 1}"
                ) from None
            if not isinstance(record, Mapping):
                raise TrafficLogError(number, "not a JSON object")
            try:
                yield _row(record, columns)
            except _FieldError as exc:
                raise TrafficLogError(
                    number, str(exc), f'field "{columns[exc.field]}" ({exc.field})'
                ) from None
            except (ValueError, TypeError) as exc:
                raise TrafficLogError(number, str(exc)) from None
    elif fmt == "csv":
        reader = csv.DictReader(lines)
        header = reader.fieldnames or []
        absent = [c for n, c in columns.items() if c and FIELDS.get(n) and c not in header]
        if absent:
            raise TrafficLogError(1, "the header has no column " + ", ".join(absent))
        for record in reader:
            try:
                yield _row(record, columns)
            except _FieldError as exc:
                name = columns[exc.field]
                position = header.index(name) + 1 if name in header else None
                column = f'column {position} "{name}"' if position else f'column "{name}"'
                raise TrafficLogError(reader.line_num, str(exc), column) from None
            except (ValueError, TypeError) as exc:
                raise TrafficLogError(reader.line_num, str(exc)) from None
    else:
        raise ValueError(f"unknown log format {fmt!r}")


def percentile(values, p: float) -> float:
    """The p-th percentile, linear between order statistics (Hyndman & Fan type 7)."""
    return float(np.percentile(np.asarray(values, dtype=float), p))


@dataclass(frozen=True, slots=True)
class TrafficProfile:
    """One request type's traffic as the workload needs it.

    Attributes:
        request_type: The type ("all" when the log has none).
        requests: Requests in the log.
        first_s / last_s: First and last arrival (epoch seconds).
        input_tokens_mean / _p95, output_tokens_mean / _p95: Lengths.
        busiest_minute_per_s: Requests/s of the busiest clock minute; busiest_minute_s its start.
        busiest_hour_per_s: Requests/s of the busiest clock hour.
        burstiness: Busiest minute's rate ÷ the rate of its hour.
        peak_concurrency: Most requests in flight (None when it cannot be told).
        concurrency_basis: "arrival and duration", "Little's law" or "".
        daily_profile: Mean requests in each UTC hour of the day, peak hour = 1.
        region_users: Users (distinct, or requests when the log names none) per region.
        weekly_requests: Requests per full week, oldest first.
        growth_pct_per_week: Trend of the weekly requests (None under two full weeks).
        input_histogram / output_histogram: (bin edges, counts) of the lengths.
    """

    request_type: str
    requests: int
    first_s: float
    last_s: float
    input_tokens_mean: float
    input_tokens_p95: float
    output_tokens_mean: float
    output_tokens_p95: float
    busiest_minute_per_s: float
    busiest_minute_s: float
    busiest_hour_per_s: float
    burstiness: float
    peak_concurrency: float | None
    concurrency_basis: str
    daily_profile: tuple[float, ...]
    region_users: tuple[tuple[str, int], ...]
    weekly_requests: tuple[int, ...]
    growth_pct_per_week: float | None
    input_histogram: tuple[tuple[float, ...], tuple[int, ...]]
    output_histogram: tuple[tuple[float, ...], tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class LogBatch:
    """A block of rows read column by column (:mod:`planner.engine.traffic_log_columns`).

    Attributes:
        timestamps_s / input_tokens / output_tokens: One value per row.
        durations_s: Request time per row, NaN where the row has none.
        request_types: Per row, an index into ``type_names`` (each a type's name).
        region_users: Distinct (request type, region, user) of rows with a region, and how
            many rows each; user "" stands for rows naming no user, each counted as one user.
            A reader may gather them over many blocks and send them in a later batch.
    """

    timestamps_s: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    durations_s: np.ndarray
    request_types: np.ndarray
    type_names: tuple[str, ...]
    region_users: tuple[tuple[str, str, str, int], ...] = ()  # (type, region, user, rows)

    def __len__(self) -> int:
        return len(self.timestamps_s)


class _Users:
    """Users per region of one request type: those named, and rows naming none (each one)."""

    __slots__ = ("named", "unnamed")

    def __init__(self) -> None:
        self.named: dict[str, set[str]] = defaultdict(set)
        self.unnamed: Counter[str] = Counter()

    def add(self, region: str, user: str, rows: int = 1) -> None:
        if user:
            self.named[region].add(user)
        else:
            self.unnamed[region] += rows

    def by_region(self) -> dict[str, int]:
        regions = set(self.named) | set(self.unnamed)
        return {r: len(self.named.get(r, ())) + self.unnamed.get(r, 0) for r in regions}


class TrafficAccumulator:
    """Collects rows (one at a time or in column batches); :meth:`result` makes the profiles.

    Every row is kept once, its request type as a small code beside it; a type's columns are
    picked out when its profile is made, so memory is 36 bytes a row whatever the types.
    """

    _KINDS = (np.int64, np.int64, np.float64, np.float64, np.int32)

    def __init__(self) -> None:
        # inputs, outputs, arrivals, durations (NaN where none), type codes
        self._blocks: tuple[list[np.ndarray], ...] = tuple([] for _ in self._KINDS)
        self._row_values = (array("q"), array("q"), array("d"), array("d"), array("i"))
        self._codes: dict[str, int] = {}
        self._users: dict[str, _Users] = defaultdict(_Users)
        self.rows = 0

    def _code(self, request_type: str) -> int:
        return self._codes.setdefault(request_type, len(self._codes))

    def add(self, row: LogRow) -> None:
        self.rows += 1
        duration = math.nan if row.duration_s is None else row.duration_s
        values = (row.input_tokens, row.output_tokens, row.timestamp_s, duration)
        for column, value in zip(self._row_values, values, strict=False):
            column.append(value)
        self._row_values[4].append(self._code(row.request_type))
        if row.region:
            for key in {row.request_type, DEFAULT_TYPE}:
                self._users[key].add(row.region, row.user)

    def add_batch(self, batch: LogBatch) -> None:
        """Adds a block of rows at once (the same figures as adding them one by one)."""
        if len(batch):
            self.rows += len(batch)
            codes = np.array([self._code(n) for n in batch.type_names], dtype=np.int32)
            values = (batch.input_tokens, batch.output_tokens, batch.timestamps_s,
                      batch.durations_s, codes[batch.request_types])  # fmt: skip
            for blocks, column, kind in zip(self._blocks, values, self._KINDS, strict=True):
                blocks.append(np.asarray(column, dtype=kind))
        for name, region, user, count in batch.region_users:
            for key in {name, DEFAULT_TYPE}:
                self._users[key].add(region, user, count)

    def _columns(self) -> tuple[np.ndarray, ...]:
        """Every row's columns, joined one column at a time (the blocks are let go)."""
        joined = []
        for blocks, values, kind in zip(self._blocks, self._row_values, self._KINDS, strict=True):
            parts = [*blocks, np.frombuffer(values, dtype=kind)] if len(values) else blocks
            column = np.concatenate(parts) if len(parts) > 1 else parts[0]
            blocks[:] = [column]
            joined.append(column)
        self._row_values = tuple(array(v.typecode) for v in self._row_values)
        return tuple(joined)

    def result(self, *, request_s: float | None = None) -> dict[str, TrafficProfile]:
        """Profiles by request type ("all" is every row).

        Args:
            request_s: Request time W for Little's law when the log has no durations.
        """
        if not self.rows:
            return {}
        *columns, codes = self._columns()
        profiles = {DEFAULT_TYPE: _profile(DEFAULT_TYPE, *columns, self._users, request_s)}
        for name, code in self._codes.items():
            if name != DEFAULT_TYPE:
                rows = codes == code
                if rows.any():
                    picked = [c[rows] for c in columns]
                    profiles[name] = _profile(name, *picked, self._users, request_s)
        return profiles


def peak_in_flight(arrivals_s: np.ndarray, durations_s: np.ndarray) -> int:
    """Most requests in flight at once: +1 at each arrival, −1 at each end, ends first on ties.

    Just after the k-th arrival (arrivals sorted) k requests have arrived and those whose end
    is at or before it have left, so in flight = k − #(ends ≤ arrival); the peak is the
    largest of these (two sorts and a binary search each, not a sort of every event).
    """
    if not len(arrivals_s):
        return 0
    # A log is written about in time order: a stable (merge) sort is fast on nearly sorted data.
    starts = np.sort(np.asarray(arrivals_s, dtype=float), kind="stable")
    ends = np.asarray(arrivals_s, dtype=float) + np.asarray(durations_s, dtype=float)
    ends.sort(kind="stable")
    left = np.searchsorted(ends, starts, side="right")
    del ends, starts
    left -= np.arange(1, len(left) + 1)  # −(in flight), in place: a million rows stay 24 MB
    return int(-left.min())


def _counts_by(periods: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct periods (ascending) and the rows in each."""
    first, last = int(periods.min()), int(periods.max())
    if last - first <= 10_000_000:  # a dense count (80 MB at most) beats a sort
        counts = np.bincount(periods - first)
        seen = np.flatnonzero(counts)
        return seen + first, counts[seen]
    return np.unique(periods, return_counts=True)


def _distinct_count(values: np.ndarray) -> int:
    """Distinct values; whole numbers in a narrow range are counted without a sort."""
    if values.dtype.kind in "iu" and len(values):
        low, high = int(values.min()), int(values.max())
        if high - low <= 10_000_000:
            return int(np.count_nonzero(np.bincount(values - low)))
    return len(np.unique(values))


def _histogram(values: np.ndarray) -> tuple[tuple[float, ...], tuple[int, ...]]:
    counts, edges = np.histogram(values, bins=min(30, max(1, _distinct_count(values))))
    return tuple(float(e) for e in edges), tuple(int(c) for c in counts)


def _profile(
    key: str,
    inputs: np.ndarray,
    outputs: np.ndarray,
    arrivals: np.ndarray,
    durations: np.ndarray,
    users: Mapping[str, _Users],
    request_s: float | None,
) -> TrafficProfile:
    minutes, per_minute = _counts_by(np.floor_divide(arrivals, 60).astype(np.int64))
    hours, per_hour = _counts_by(np.floor_divide(arrivals, 3600).astype(np.int64))
    busiest = int(np.argmax(per_minute))  # the first of equals: the earliest minute
    busiest_minute, minute_count = int(minutes[busiest]), int(per_minute[busiest])
    hour_of_minute = busiest_minute * 60 // 3600
    minute_rate = minute_count / 60.0
    hour_rate_around = per_hour[np.searchsorted(hours, hour_of_minute)] / 3600.0
    if not np.isnan(durations).any():
        peak, basis = float(peak_in_flight(arrivals, durations)), "arrival and duration"
    elif request_s:
        peak, basis = concurrency_from_rate(minute_rate, request_s), "Little's law"
    else:
        peak, basis = None, ""
    # Mean requests in each UTC hour of the day over the days the log covers.
    first_hour, last_hour = int(hours[0]), int(hours[-1])
    days_seen = np.bincount(np.arange(first_hour, last_hour + 1) % 24, minlength=24)
    by_hour_of_day = np.bincount(hours % 24, weights=per_hour, minlength=24)
    mean_by_hour = np.divide(by_hour_of_day, days_seen, out=np.zeros(24), where=days_seen > 0)
    profile = tuple(float(v) for v in mean_by_hour / mean_by_hour.max())
    weeks = _full_weeks(arrivals)
    growth = None
    if len(weeks) >= 2 and np.mean(weeks) > 0:
        slope = np.polyfit(np.arange(len(weeks), dtype=float), np.asarray(weeks, float), 1)[0]
        growth = float(slope / np.mean(weeks) * 100.0)
    by_region = users[key].by_region() if key in users else {}
    regions = tuple(sorted(by_region.items(), key=lambda x: (-x[1], x[0])))
    return TrafficProfile(
        request_type=key,
        requests=len(inputs),
        first_s=float(arrivals.min()),
        last_s=float(arrivals.max()),
        input_tokens_mean=float(inputs.mean()),
        input_tokens_p95=percentile(inputs, 95),
        output_tokens_mean=float(outputs.mean()),
        output_tokens_p95=percentile(outputs, 95),
        busiest_minute_per_s=minute_rate,
        busiest_minute_s=float(busiest_minute * 60),
        busiest_hour_per_s=int(per_hour.max()) / 3600.0,
        burstiness=minute_rate / hour_rate_around,
        peak_concurrency=peak,
        concurrency_basis=basis,
        daily_profile=profile,
        region_users=regions,
        weekly_requests=tuple(weeks),
        growth_pct_per_week=growth,
        input_histogram=_histogram(inputs),
        output_histogram=_histogram(outputs),
    )


def _full_weeks(arrivals: np.ndarray) -> list[int]:
    """Requests in each Monday-to-Sunday UTC week wholly inside the log's span."""
    offset = arrivals - MONDAY_EPOCH_S
    week = np.floor(offset / SECONDS_PER_WEEK).astype(np.int64)
    starts_on_monday = offset.min() % SECONDS_PER_WEEK == 0
    first_full = int(week.min()) + (0 if starts_on_monday else 1)
    last_full = int(week.max()) - 1  # the last week seen may have been cut short
    if last_full < first_full:
        return []
    inside = week[(week >= first_full) & (week <= last_full)] - first_full
    return [int(c) for c in np.bincount(inside, minlength=last_full - first_full + 1)]


def planned_concurrency(peak_concurrency: float) -> int:
    """Requests in flight to plan for: a measured peak rounded up to whole requests (at least 1).

    The small tolerance keeps an exact count computed in floating point (e.g. 12.000000001 from
    Little's law) from rounding up to one more request than was measured.
    """
    return max(1, math.ceil(peak_concurrency - 1e-9))
