"""A request log read column by column: pyarrow's CSV and JSON readers, in blocks.

A million-row log (223 MB of CSV) read line by line through :func:`read_rows` took 31 s and
grew the process by 211 MB (issue 26). Here the file is cut into pieces of whole lines of about
:data:`BLOCK_BYTES`, pyarrow's CSV or JSON reader parses each in C++ (only the mapped columns
are converted), and each becomes one :class:`planner.engine.traffic_log.LogBatch` of NumPy
arrays for the accumulator, so memory is the accumulator's arrays plus one piece
(benchmarks/bench_traffic_log.py measures both).

The figures and the messages are the row reader's:

- a block whose values the vectorised conversion cannot take as the row reader would (an
  empty or malformed value, a time format pyarrow does not cast, mixed types) is converted
  row by row with the row reader's own functions, which either read it the same way or
  raise at its first bad row; that row's line is then found by counting records from the
  top of the file (CSV with Python's csv module, as the row reader counts them);
- a file pyarrow cannot parse at all (a line that is not JSON, a row with another number of
  columns, a type that changes between blocks, bytes that are not UTF-8) is read again by
  :func:`read_rows`, which names the line, or reads what pyarrow would not.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator, Mapping
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json

from planner.engine.traffic_log import (
    DEFAULT_TYPE,
    FIELDS,
    LogBatch,
    TrafficAccumulator,
    TrafficLogError,
    _FieldError,
    _is_number,
    _row,
    check_columns,
    read_rows,
)

__all__ = ["BLOCK_BYTES", "accumulate_log", "read_batches"]

# Bytes parsed per block: about 4,700 CSV rows of 223 bytes (pyarrow's own block size).
BLOCK_BYTES = 1 << 20
# Blocks whose (type, region, user) rows are gathered before one grouping makes them distinct
# (a grouping costs about 8 ms whatever its size: once a block took a quarter of the time).
USER_BLOCKS = 32

Opener = Callable[[], BinaryIO]
Progress = Callable[[int, int], None]  # (bytes read, rows read)

_NUMERIC_FIELDS = ("duration_s", "duration_ms", "ttft_ms")


class _Unreadable(Exception):
    """pyarrow cannot read the file as a whole: the row reader reads it instead."""


def accumulate_log(
    open_file: Opener,
    fmt: str,
    columns: Mapping[str, str],
    *,
    progress: Progress | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> TrafficAccumulator:
    """Every row of a log, columnar where pyarrow reads it, else row by row.

    Args:
        open_file: Opens the log for binary reading (called again for a second pass).
        fmt: "csv" (header first) or "jsonl".
        columns: Field → column name or dotted JSON path (as :func:`read_rows` takes).
        progress: Called after each block with the bytes and rows read so far.

    Raises:
        TrafficLogError: the first malformed row, with its line (and column or field).
        UnicodeDecodeError: bytes that are not UTF-8 (from the row reader).
    """
    check_columns(columns)
    if fmt not in ("csv", "jsonl"):
        raise ValueError(f"unknown log format {fmt!r}")
    accumulator = TrafficAccumulator()
    try:
        with open_file() as raw:
            for batch in read_batches(raw, fmt, columns, open_file, block_bytes=block_bytes):
                accumulator.add_batch(batch)
                if progress is not None:
                    progress(raw.tell(), accumulator.rows)
        pa.default_memory_pool().release_unused()  # its cached blocks, before the statistics
        return accumulator
    except _Unreadable:
        pass
    accumulator = TrafficAccumulator()
    with open_file() as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        for row in read_rows(text, fmt, columns):
            accumulator.add(row)
            if progress is not None and accumulator.rows % 20_000 == 0:
                progress(raw.tell(), accumulator.rows)
    return accumulator


def read_batches(
    raw: BinaryIO,
    fmt: str,
    columns: Mapping[str, str],
    open_file: Opener,
    *,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[LogBatch]:
    """The log's rows in blocks (see the module's notes for malformed rows).

    Raises:
        TrafficLogError: a malformed row, named as :func:`read_rows` names it.
        _Unreadable: pyarrow cannot read the file; read it with :func:`read_rows`.
    """
    mapped = {name: path for name, path in columns.items() if path and name in FIELDS}
    header: list[str] = []
    if fmt == "csv":
        header = _csv_header(raw)
        absent = [c for n, c in mapped.items() if FIELDS[n] and c not in header]
        if absent:
            raise TrafficLogError(1, "the header has no column " + ", ".join(absent))
        if any("." in path for path in mapped.values()):
            raise _Unreadable  # the row reader reads a dotted CSV name as a JSON path
    parse = None
    first_record = 0
    users: list[pa.Table] = []  # distinct (type, region, user) so far, merged as they grow
    try:
        for chunk in _chunks(raw, block_bytes):
            if parse is None:
                parse = _csv_parser(header, mapped) if fmt == "csv" else _json_parser(chunk, mapped)
            block = parse(chunk)
            if not block.num_rows:
                continue
            batch, block_users = _batch(block, fmt, mapped, header, first_record, open_file)
            yield batch
            first_record += block.num_rows
            if "region" in mapped:
                users.append(block_users)
                if len(users) >= USER_BLOCKS:
                    users = [_distinct(users)]
        if users:
            seen = _distinct(users)
            yield LogBatch(
                *(np.empty(0, dtype=k) for k in (float, np.int64, np.int64, float, np.int64)),
                type_names=(),
                region_users=tuple(
                    zip(*(seen[c].to_pylist() for c in ("t", "r", "u", "n")), strict=True)
                ),
            )
    except (pa.ArrowException, UnicodeDecodeError) as exc:
        raise _Unreadable from exc


def _chunks(raw: BinaryIO, block_bytes: int) -> Iterator[pa.Buffer]:
    """The file after a CSV's header in pieces of whole lines, about ``block_bytes`` each.

    Read here rather than by pyarrow's streaming readers, whose read-ahead held 80 MB for a
    1 MB block: one piece is in memory at a time, and each piece's records are counted.
    """
    rest = b""
    while True:
        chunk = raw.read(block_bytes)
        data = rest + chunk if rest else chunk
        if not chunk:
            if data.strip():
                yield pa.py_buffer(data)
            return
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            rest = data  # a line longer than a block: read on
            continue
        rest = data[cut:]
        yield pa.py_buffer(data[:cut])


def _csv_header(raw: BinaryIO) -> list[str]:
    """The header's names; the stream is left at the first row after it."""
    first = b""
    while b"\n" not in first and (chunk := raw.read(1 << 16)):
        first += chunk
    line, _, _ = first.partition(b"\n")
    raw.seek(len(line) + 1 if b"\n" in first else len(first))
    return next(csv.reader([line.decode("utf-8-sig", errors="replace")]), [])


def _csv_parser(header: list[str], mapped: Mapping[str, str]):
    wanted = [c for c in dict.fromkeys(mapped.values()) if c in header]
    read_options = pa_csv.ReadOptions(column_names=header, use_threads=False)
    convert_options = pa_csv.ConvertOptions(
        include_columns=wanted,
        column_types={c: pa.string() for c in wanted},
        strings_can_be_null=True,
        null_values=[""],
        quoted_strings_can_be_null=True,
    )

    def parse(chunk: pa.Buffer) -> pa.Table:
        return pa_csv.read_csv(chunk, read_options=read_options, convert_options=convert_options)

    return parse


def _json_parser(first_chunk: pa.Buffer, mapped: Mapping[str, str]):
    """pyarrow's JSON reader on the mapped paths alone.

    The schema is inferred from the first piece, with two changes: a path it lacks is read
    as text, and a time pyarrow took as a timestamp (it drops fractions of a second in
    inference) is read as text too, to be cast here.
    """
    inferred = pa_json.read_json(first_chunk).schema
    tree: dict = {}
    for path in mapped.values():
        node = tree
        for part in path.split(".")[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise _Unreadable  # a path that is both a value and an object
        node.setdefault(path.split(".")[-1], None)

    def typed(node: dict, schema_type) -> pa.DataType:
        fields = []
        for name, child in node.items():
            known = None
            if schema_type is not None:
                index = schema_type.get_field_index(name)
                known = schema_type.field(index).type if index >= 0 else None
            if child is None:
                as_text = known is None or pa.types.is_timestamp(known) or pa.types.is_null(known)
                fields.append(pa.field(name, pa.string() if as_text else known))
            else:
                inner = known if known is not None and pa.types.is_struct(known) else None
                fields.append(pa.field(name, typed(child, inner)))
        return pa.struct(fields)

    parse_options = pa_json.ParseOptions(
        explicit_schema=pa.schema(list(typed(tree, pa.struct(list(inferred))))),
        unexpected_field_behavior="ignore",
    )
    read_options = pa_json.ReadOptions(use_threads=False)

    def parse(chunk: pa.Buffer) -> pa.Table:
        return pa_json.read_json(chunk, read_options=read_options, parse_options=parse_options)

    return parse


def _column(block: pa.Table, path: str, fmt: str) -> pa.Array | None:
    if fmt == "csv":
        index = block.schema.get_field_index(path)
        return block.column(index).combine_chunks() if index >= 0 else None
    parts = path.split(".")
    index = block.schema.get_field_index(parts[0])
    if index < 0:
        return None
    values = block.column(index).combine_chunks()
    for part in parts[1:]:
        values = pc.struct_field(values, part)
    return values


# --- Vectorised conversions: each returns None where the row reader must decide -----------


def _floats(values: pa.Array) -> np.ndarray | None:
    """Numbers (NaN for missing) from numbers or numeric text, None for anything else."""
    kind = values.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return np.array(values.cast(pa.float64()).to_numpy(zero_copy_only=False))
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_null(kind):
        try:
            return np.array(values.cast(pa.float64()).to_numpy(zero_copy_only=False))
        except pa.ArrowException:
            return None
    return None


def _times(values: pa.Array) -> np.ndarray | None:
    """Epoch seconds as :func:`parse_timestamp` reads them (ms above 1e11; no zone = UTC)."""
    if values.null_count:
        return None
    kind = values.type
    if pa.types.is_timestamp(kind):
        return values.cast(pa.timestamp("ns", tz=kind.tz)).cast(pa.int64()).to_numpy() / 1e9
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    # Text is numbers (epoch seconds or ms) or ISO 8601 times: the first value says which.
    numbers = None if text and not _is_number(values[0].as_py()) else _floats(values)
    if numbers is None and text:
        for zone in ("UTC", None):
            try:
                stamps = values.cast(pa.timestamp("ns", tz=zone))
            except pa.ArrowException:
                continue
            return stamps.cast(pa.int64()).to_numpy() / 1e9
        return None
    if numbers is None or np.isnan(numbers).any():
        return None
    return np.where(numbers > 1e11, numbers / 1000.0, numbers)


def _counts(values: pa.Array | None) -> np.ndarray | None:
    if values is None or values.null_count:
        return None
    numbers = _floats(values)
    if numbers is None or not np.all(np.isfinite(numbers) & (numbers >= 0)):
        return None
    if not np.array_equal(numbers, np.floor(numbers)):
        return None
    return numbers.astype(np.int64)


def _optional(values: pa.Array | None, rows: int) -> np.ndarray | None:
    """Non-negative numbers, NaN where missing; None when one is not."""
    if values is None:
        return np.full(rows, np.nan)
    numbers = _floats(values)
    if numbers is None:
        return None
    present = _valid(values)
    if not np.all(np.isfinite(numbers[present]) & (numbers[present] >= 0)):
        return None
    numbers[~present] = np.nan
    return numbers


def _valid(values: pa.Array) -> np.ndarray:
    if not values.null_count:
        return np.ones(len(values), dtype=bool)
    return values.is_valid().to_numpy(zero_copy_only=False)


def _text(values: pa.Array | None, rows: int) -> pa.Array | None:
    """Text with "" for missing, as ``str(value or "")``; None for numbers and the like."""
    if values is None:
        return pa.array([""] * rows) if rows else pa.array([], pa.string())
    if pa.types.is_null(values.type):
        return pc.cast(values, pa.string()).fill_null("")
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        return None
    return values.fill_null("")


def _region_users(texts: dict, types: pa.DictionaryArray, names: tuple[str, ...]) -> pa.Table:
    """(type, region, user) of the block's rows with a region, one row each ("n" = 1)."""
    with_region = pc.not_equal(texts["region"], "")
    table = pa.table(
        {
            "t": pa.array(names).take(types.indices),
            "r": texts["region"],
            "u": texts["user"],
        }
    ).filter(with_region)
    return table.append_column("n", pa.array(np.ones(table.num_rows, dtype=np.int64)))


def _distinct(tables: list[pa.Table]) -> pa.Table:
    """(type, region, user) once each, with the rows of each ("n")."""
    table = pa.concat_tables(tables)
    out = table.group_by(["t", "r", "u"], use_threads=False).aggregate([("n", "sum")])
    return pa.table({"t": out["t"], "r": out["r"], "u": out["u"], "n": out["n_sum"]})


def _vectorised(
    block: pa.Table, fmt: str, mapped: Mapping[str, str]
) -> tuple[LogBatch, pa.Table] | None:
    rows = block.num_rows
    field = {name: _column(block, path, fmt) for name, path in mapped.items()}
    start = field["timestamp"]
    if start is None:
        return None
    timestamps = _times(start)
    inputs, outputs = _counts(field["input_tokens"]), _counts(field["output_tokens"])
    numeric = {n: _optional(field.get(n), rows) for n in _NUMERIC_FIELDS}
    texts = {n: _text(field.get(n), rows) for n in ("region", "user", "request_type")}
    if timestamps is None or inputs is None or outputs is None:
        return None
    if any(v is None for v in numeric.values()) or any(v is None for v in texts.values()):
        return None
    durations = numeric["duration_s"]
    from_ms = np.isnan(durations) & ~np.isnan(numeric["duration_ms"])
    durations[from_ms] = numeric["duration_ms"][from_ms] / 1000.0
    ends = field.get("end_timestamp")
    if ends is not None:
        # As the row reader: the end only where neither duration is given, a missing end
        # leaves the duration unknown, an end before the start is an error.
        has_end = np.isnan(durations) & _valid(ends)
        if has_end.any():
            end_s = _times(ends.filter(pa.array(has_end)))
            if end_s is None:
                return None
            durations[has_end] = end_s - timestamps[has_end]
            if (durations[has_end] < 0).any():
                return None
    types = texts["request_type"].dictionary_encode()
    names = tuple(str(n) or DEFAULT_TYPE for n in types.dictionary.to_pylist())
    codes = types.indices.to_numpy(zero_copy_only=False)
    return LogBatch(
        timestamps_s=timestamps,
        input_tokens=inputs,
        output_tokens=outputs,
        durations_s=durations,
        request_types=codes,
        type_names=names,
    ), _region_users(texts, types, names)


# --- Row by row, with the row reader's own conversions --------------------------------------


def _batch(
    block: pa.Table,
    fmt: str,
    mapped: Mapping[str, str],
    header: list[str],
    first_record: int,
    open_file: Opener,
) -> tuple[LogBatch, pa.Table]:
    converted = _vectorised(block, fmt, mapped)
    if converted is not None:
        return converted
    records = block.to_pylist()
    rows = []
    for index, record in enumerate(records):
        try:
            rows.append(_row(_csv_record(record) if fmt == "csv" else record, mapped))
        except _FieldError as exc:
            raise _named_error(exc, first_record + index, fmt, mapped, header, open_file) from None
        except (ValueError, TypeError) as exc:
            line = _line_of_record(open_file, fmt, first_record + index)
            raise TrafficLogError(line, str(exc)) from None
    type_names = tuple(dict.fromkeys(r.request_type for r in rows))
    code = {name: i for i, name in enumerate(type_names)}
    with_region = [r for r in rows if r.region]
    users = pa.table(
        {
            "t": pa.array([r.request_type for r in with_region], pa.string()),
            "r": pa.array([r.region for r in with_region], pa.string()),
            "u": pa.array([r.user for r in with_region], pa.string()),
        }
    )
    batch = LogBatch(
        timestamps_s=np.array([r.timestamp_s for r in rows], dtype=float),
        input_tokens=np.array([r.input_tokens for r in rows], dtype=np.int64),
        output_tokens=np.array([r.output_tokens for r in rows], dtype=np.int64),
        durations_s=np.array(
            [np.nan if r.duration_s is None else r.duration_s for r in rows], dtype=float
        ),
        request_types=np.array([code[r.request_type] for r in rows], dtype=np.int64),
        type_names=type_names,
    )
    return batch, users.append_column("n", pa.array(np.ones(users.num_rows, dtype=np.int64)))


def _csv_record(record: Mapping) -> dict:
    """A CSV record as the row reader sees it (``""`` for an empty value, not None)."""
    return {column: ("" if value is None else value) for column, value in record.items()}


def _named_error(
    exc: _FieldError,
    record: int,
    fmt: str,
    mapped: Mapping[str, str],
    header: list[str],
    open_file: Opener,
) -> TrafficLogError:
    line = _line_of_record(open_file, fmt, record)
    name = mapped[exc.field]
    if fmt == "jsonl":
        return TrafficLogError(line, str(exc), f'field "{name}" ({exc.field})')
    position = header.index(name) + 1 if name in header else None
    column = f'column {position} "{name}"' if position else f'column "{name}"'
    return TrafficLogError(line, str(exc), column)


def _line_of_record(open_file: Opener, fmt: str, record: int) -> int:
    """The file's line (1 = the first) of the ``record``-th record (0 = the first row after a
    CSV's header), counted as :func:`read_rows` counts: blank lines are no record."""
    with open_file() as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="")
        if fmt == "csv":
            reader = csv.reader(text)
            next(reader, None)
            seen = -1
            for row in reader:
                if row:
                    seen += 1
                    if seen == record:
                        return reader.line_num
        else:
            seen = -1
            for number, line in enumerate(text, start=1):
                if line.strip():
                    seen += 1
                    if seen == record:
                        return number
    return 0
