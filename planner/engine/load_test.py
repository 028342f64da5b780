"""Load tests of one replica: the saved results of four benchmark tools, and what they say.

Seed guide, "a working method", step 4: "load test one replica to find how many concurrent
requests it holds within the target, then divide peak demand by that number and add headroom
for failure". This module reads the tools' result files into :class:`LoadPoint` rows, reads
the capacity at a latency target off the measured curve (:func:`capacity_at_target`, never
extrapolated past the measured points), sizes the fleet with the engine's own rule
(:func:`planner.engine.capacity.plan_replicas`) and sets the measurement beside the engine's
model at the same points (:func:`compare_with_model`).

Formats (field names from each tool's source; tests/measured/fixtures/README.md says where):

- vLLM ``benchmarks/benchmark_serving.py --save-result`` / ``vllm bench serve``: one flat
  object per run (``request_throughput``, ``output_throughput``, ``mean_ttft_ms``,
  ``p99_ttft_ms``, ``mean_tpot_ms``, ``p99_tpot_ms``, ``max_concurrency``, ``request_rate``).
- NVIDIA GenAI-Perf ``profile_export_genai_perf.json``: one object per run, each metric a
  ``{"unit", "avg", "p95", "p99", ...}`` object, the load in ``input_config``.
- GuideLLM ``benchmarks.json``: ``{"benchmarks": [...]}``, one entry per strategy of the
  sweep, metrics as ``{"successful": {"mean", "percentiles": {"p95", "p99"}}}``.
- NVIDIA AIPerf (GenAI-Perf's successor) ``profile_export_aiperf.json``: GenAI-Perf's metric
  objects at the top level, the load in ``input_config.loadgen``.
- LLMPerf ``*_summary.json``: flat ``results_<metric>_s_quantiles_p95`` keys, seconds. Its
  inter-token latency includes the first token and is converted to TPOT
  (:func:`llmperf_tpot_ms`).

Every tool but LLMPerf reports TPOT after the first token, (e2e − TTFT) ÷ (tokens − 1); each
point's notes say which figure of the file its TPOT is. A run or stage with no successful
request, or more than :data:`MAX_ERROR_RATE` of its finished requests failed, is no point
(:class:`ExcludedRunError`): a sweep names it and leaves it out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import BinaryIO

import ijson
import numpy as np

from planner.engine.capacity import ReplicaPlan, plan_replicas
from planner.engine.demand import concurrency_from_rate
from planner.engine.performance import ReplicaShape, steady_state

__all__ = [
    "ExcludedRunError",
    "LoadPoint",
    "LoadTest",
    "LoadTestFormatError",
    "MAX_ERROR_RATE",
    "MeasuredCapacity",
    "PointComparison",
    "TooManyErrorsError",
    "capacity_at_target",
    "compare_with_model",
    "lengths_mismatch",
    "measured_replicas",
    "merge_sweep",
    "model_correction",
    "parse_load_test",
    "read_result_json",
]

TOOLS = {
    "vllm": "vLLM benchmark_serving / vllm bench serve",
    "genai-perf": "NVIDIA GenAI-Perf profile export",
    "guidellm": "GuideLLM benchmark report",
    "llmperf": "LLMPerf summary",
    "aiperf": "NVIDIA AIPerf profile export",
}


# A closed loop that kept fewer than this share of its setting in flight did not load the
# replica as set (the client, not the server, was the bottleneck, or requests failed): the
# page says so beside the point. 80 %: a healthy run loses a few % to ramp-up and ramp-down.
HELD_LOAD_WARNING_FRACTION = 0.8
# Little's law on a closed loop can only exceed the setting by rounding; beyond this the
# file's throughput and request time disagree and the setting is kept, with a note.
HELD_LOAD_ROUNDING_FRACTION = 1.02


class LoadTestFormatError(ValueError):
    """A file that is none of the load-test formats, or misses a figure it needs."""


# A run (or stage) in which more than this share of its finished requests failed is left out
# of the curve, as one with no successful request is. 5 %: the failed requests never met any
# latency target, so above 5 % the run's p95 over all its requests is a miss whatever its
# successful requests' p95 says; and a failing request frees its slot early, so the held
# load and the latencies of the rest describe a server shedding load, not one serving it.
MAX_ERROR_RATE = 0.05


class ExcludedRunError(LoadTestFormatError):
    """A run (or a stage of a sweep) that is no data point: a sweep skips the stage and names
    it with the reason, a file of nothing else is refused."""


class NoSuccessfulRequestsError(ExcludedRunError):
    """A run (or a stage of a sweep) in which no request succeeded: it measured nothing.

    Read as a point it would sit at 0 in flight with every latency 0 and pass any target,
    so it is never one: a sweep skips the stage and names it, a single run is refused.
    """


class TooManyErrorsError(ExcludedRunError):
    """A run (or a stage of a sweep) whose error rate is above :data:`MAX_ERROR_RATE`."""


def error_rate_note(errored: float | None, succeeded: float | None) -> str | None:
    """The run's failed share as a note, or None when it reports none (or no errors).

    Error rate = failed ÷ (succeeded + failed): of the requests that finished, the share
    that failed (requests cut off by the end of a timed run are neither).

    Raises:
        TooManyErrorsError: the rate is above :data:`MAX_ERROR_RATE`.
    """
    if not errored or succeeded is None:
        return None
    finished = errored + succeeded
    rate = errored / finished
    said = f"{errored:g} of {finished:g} requests failed ({rate:.1%}"
    if rate > MAX_ERROR_RATE:
        raise TooManyErrorsError(f"{said}, above the {MAX_ERROR_RATE:.0%} error-rate limit)")
    return f"{said}, within the {MAX_ERROR_RATE:.0%} error-rate limit)"


@dataclass(frozen=True, slots=True)
class LoadPoint:
    """One run of a sweep: the load it put on the replica and what the replica did.

    Attributes:
        concurrency: Requests held in flight on average (the load of the curve).
        concurrency_basis: How the load held was read: "measured" (the tool reports the mean
            in flight, GuideLLM), "littles_law" (completed requests/s × mean request time,
            L = λW) or "set" (the tool's setting, only when the file gives no request time).
        request_rate_per_s: Offered request rate of an open-loop run, else None.
        requests_per_s: Completed requests/s.
        output_tokens_per_s: Output tokens/s of the replica.
        input_tokens_mean: Mean prompt tokens of the run, None when not reported.
        output_tokens_mean: Mean output tokens of the run, None when not reported.
        ttft_mean_ms / ttft_p95_ms / ttft_p99_ms: Time to first token.
        tpot_mean_ms / tpot_p95_ms / tpot_p99_ms: Time per output token after the first.
        e2e_mean_ms: Mean request time, None when not reported.
        nominal_concurrency: The tool's concurrency setting of a closed loop, None for an
            open-loop rate.
        notes: How the figures were read (the TPOT definition, a load read off the setting).
    """

    concurrency: float
    concurrency_basis: str
    request_rate_per_s: float | None
    requests_per_s: float
    output_tokens_per_s: float
    input_tokens_mean: float | None
    output_tokens_mean: float | None
    ttft_mean_ms: float | None
    ttft_p95_ms: float | None
    ttft_p99_ms: float | None
    tpot_mean_ms: float | None
    tpot_p95_ms: float | None
    tpot_p99_ms: float | None
    e2e_mean_ms: float | None = None
    nominal_concurrency: float | None = None
    notes: tuple[str, ...] = ()

    @classmethod
    def from_stored(cls, row: Mapping) -> LoadPoint:
        """A point from its stored dict (``dataclasses.asdict``; JSON turns tuples to lists)."""
        return cls(**{**row, "notes": tuple(row.get("notes") or ())})

    @property
    def held_fraction(self) -> float | None:
        """Load held ÷ the setting of a closed loop, None for an open-loop rate."""
        if not self.nominal_concurrency:
            return None
        return self.concurrency / self.nominal_concurrency

    @property
    def held_under_setting(self) -> bool:
        """True when the run held far less in flight than it was set to (< 80 %)."""
        fraction = self.held_fraction
        return fraction is not None and fraction < HELD_LOAD_WARNING_FRACTION

    @property
    def load_label(self) -> str:
        """The load as the page says it: "4.06 (set 8)" when it differs from the setting."""
        held = f"{self.concurrency:.3g}"
        if self.nominal_concurrency and held != f"{self.nominal_concurrency:g}":
            return f"{held} (set {self.nominal_concurrency:g})"
        return held

    def latency_ms(self, metric: str, percentile: int) -> tuple[float | None, int | None]:
        """``metric`` ("ttft" or "tpot") at ``percentile`` (95 or 99), and the one used.

        A p95 target is judged on p99 when the file only has p99 (p99 ≥ p95, so a p99 that
        meets the target proves the p95 does); a p99 target is never judged on p95.
        """
        for p in (95, 99) if percentile <= 95 else (99,):
            value = getattr(self, f"{metric}_p{p}_ms")
            if value is not None:
                return value, p
        return None, None


@dataclass(frozen=True, slots=True)
class LoadTest:
    """The points of one result file (or of several merged into one sweep)."""

    tool: str
    model: str
    measured_on: str  # ISO date, "" when the file does not say
    serving_stack: str
    stack_version: str
    points: tuple[LoadPoint, ...]
    skipped: tuple[str, ...] = ()  # stages left out, each with why ("benchmark 4 ...: ...")

    @property
    def input_tokens_mean(self) -> float | None:
        return _mean([p.input_tokens_mean for p in self.points])

    @property
    def output_tokens_mean(self) -> float | None:
        return _mean([p.output_tokens_mean for p in self.points])

    @property
    def points_held_under_setting(self) -> tuple[LoadPoint, ...]:
        """Points that held far less in flight than their setting (< 80 %)."""
        return tuple(p for p in self.points if p.held_under_setting)


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _num(value, what: str, *, required: bool = True) -> float | None:
    if value is None or value == "inf":
        if required:
            raise LoadTestFormatError(f"the file has no {what}")
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise LoadTestFormatError(f"{what} is not a number: {value!r}") from None
    if not math.isfinite(number) or number < 0:
        if required:
            raise LoadTestFormatError(f"{what} is not a finite non-negative number: {value!r}")
        return None
    return number


def _date_from_epoch(value) -> str:
    try:
        stamp = float(value)
    except (TypeError, ValueError):
        return ""
    if stamp > 1e11:  # milliseconds
        stamp /= 1000.0
    return datetime.fromtimestamp(stamp, tz=UTC).date().isoformat()


def _mean_request_ms(e2e_ms, ttft_ms, tpot_ms, out) -> float | None:
    """The file's mean request time, else TTFT + (output − 1) × TPOT from its means."""
    if e2e_ms is None and ttft_ms is not None and tpot_ms is not None and out is not None:
        e2e_ms = ttft_ms + max(out - 1.0, 0.0) * tpot_ms
    return e2e_ms


def held_load(
    *,
    set_concurrency: float | None,
    measured_concurrency: float | None,
    requests_per_s: float,
    request_ms: float | None,
) -> tuple[float, str, tuple[str, ...]]:
    """Requests held in flight on average, how it was read, and any note.

    The tool's own measured mean in flight first (GuideLLM reports it), else Little's law on
    the completed requests, L = λW (λ completed requests/s, W the mean request time). A
    closed loop's setting is only an upper bound: a client that cannot keep its slots
    filled, or requests that fail early, hold less (issue: LLMPerf set to 8 held 4.06).

    Raises:
        LoadTestFormatError: neither a measured load, a request time nor a setting.
    """
    notes: list[str] = []
    if measured_concurrency:
        held, basis = measured_concurrency, "measured"
    elif request_ms is not None:
        held, basis = concurrency_from_rate(requests_per_s, request_ms / 1000.0), "littles_law"
    elif set_concurrency:
        held, basis = set_concurrency, "set"
        notes.append("the file gives no mean request time: the load held is taken as the setting")
    else:
        raise LoadTestFormatError("an open-loop run needs the mean request time for its load")
    if set_concurrency and held > set_concurrency:
        if held > set_concurrency * HELD_LOAD_ROUNDING_FRACTION:
            notes.append(
                f"the file's throughput × request time gives {held:.3g} in flight, more than "
                f"the {set_concurrency:g} the tool allowed: its figures disagree, the setting "
                "is kept"
            )
        held = set_concurrency
    return held, basis, tuple(notes)


def _point(
    *,
    set_concurrency: float | None,
    measured_concurrency: float | None,
    rate: float | None,
    rps: float,
    tps: float,
    inp: float | None,
    out: float | None,
    ttft: tuple[float | None, float | None, float | None],
    tpot: tuple[float | None, float | None, float | None],
    e2e_ms: float | None,
    notes: tuple[str, ...] = (),
) -> LoadPoint:
    if rps <= 0:
        raise NoSuccessfulRequestsError("no request succeeded (0 completed requests/s)")
    concurrency, basis, load_notes = held_load(
        set_concurrency=set_concurrency,
        measured_concurrency=measured_concurrency,
        requests_per_s=rps,
        request_ms=_mean_request_ms(e2e_ms, ttft[0], tpot[0], out),
    )
    if ttft[1] is None and ttft[2] is None:
        raise LoadTestFormatError("the file has no p95 or p99 time to first token")
    if tpot[1] is None and tpot[2] is None:
        raise LoadTestFormatError("the file has no p95 or p99 time per output token")
    return LoadPoint(
        concurrency=concurrency,
        concurrency_basis=basis,
        request_rate_per_s=rate,
        requests_per_s=rps,
        output_tokens_per_s=tps,
        input_tokens_mean=inp,
        output_tokens_mean=out,
        ttft_mean_ms=ttft[0],
        ttft_p95_ms=ttft[1],
        ttft_p99_ms=ttft[2],
        tpot_mean_ms=tpot[0],
        tpot_p95_ms=tpot[1],
        tpot_p99_ms=tpot[2],
        e2e_mean_ms=e2e_ms,
        nominal_concurrency=set_concurrency or None,
        notes=tuple(notes) + load_notes,
    )


def _parse_vllm(data: Mapping) -> LoadTest:
    completed = _num(data.get("completed"), "completed requests", required=False)
    if completed == 0:
        raise NoSuccessfulRequestsError("no request succeeded (completed: 0)")
    # vllm bench serve writes "failed"; benchmark_serving.py only the prompts it sent.
    failed = _num(data.get("failed"), "failed requests", required=False)
    sent = _num(data.get("num_prompts"), "num_prompts", required=False)
    if failed is None and sent is not None and completed is not None:
        failed = max(sent - completed, 0.0)
    errors = error_rate_note(failed, completed)
    inp = out = None
    if completed:
        total_in = _num(data.get("total_input_tokens"), "total input tokens", required=False)
        total_out = _num(data.get("total_output_tokens"), "total output tokens", required=False)
        inp = total_in / completed if total_in is not None else None
        out = total_out / completed if total_out is not None else None
    rate = _num(data.get("request_rate"), "request rate", required=False)
    cap = _num(data.get("max_concurrency"), "max concurrency", required=False)
    point = _point(
        # A capped run with an unlimited rate holds the cap in flight (closed loop).
        set_concurrency=cap if rate is None else None,
        measured_concurrency=None,
        rate=rate,
        rps=_num(data.get("request_throughput"), "request_throughput"),
        tps=_num(data.get("output_throughput"), "output_throughput"),
        inp=inp,
        out=out,
        ttft=tuple(
            _num(data.get(k), k, required=False)
            for k in ("mean_ttft_ms", "p95_ttft_ms", "p99_ttft_ms")
        ),
        tpot=tuple(
            _num(data.get(k), k, required=False)
            for k in ("mean_tpot_ms", "p95_tpot_ms", "p99_tpot_ms")
        ),
        e2e_ms=_num(data.get("mean_e2el_ms"), "mean_e2el_ms", required=False),
        notes=("TPOT as vLLM reports it: (e2e − TTFT) ÷ (output tokens − 1), per request",)
        + ((errors,) if errors else ()),
    )
    measured_on = ""
    date = str(data.get("date") or "")
    try:  # benchmark_serving writes datetime.now().strftime("%Y%m%d-%H%M%S")
        measured_on = datetime.strptime(date, "%Y%m%d-%H%M%S").date().isoformat()
    except ValueError:
        measured_on = ""
    return LoadTest(
        tool="vllm",
        model=str(data.get("model_id") or ""),
        measured_on=measured_on,
        serving_stack=str(data.get("backend") or "vllm"),
        stack_version=str(data.get("vllm_version") or data.get("version") or ""),
        points=(point,),
    )


_TIME_UNITS_MS = {"ms": 1.0, "s": 1000.0, "us": 1e-3, "ns": 1e-6, "sec": 1000.0}


def _genai_metric(data: Mapping, name: str, stat: str) -> float | None:
    metric = data.get(name)
    if not isinstance(metric, Mapping):
        return None
    value = _num(metric.get(stat), f"{name}.{stat}", required=False)
    if value is None:
        return None
    return value * _TIME_UNITS_MS.get(str(metric.get("unit", "")).lower(), 1.0)


def _genai_point(
    data: Mapping, *, concurrency: float | None, rate: float | None, notes: tuple[str, ...]
) -> LoadPoint:
    """The one point of a GenAI-Perf or AIPerf export: both write each metric as an object
    with its ``unit`` and ``avg``/``p95``/``p99`` (AIPerf kept GenAI-Perf's layout)."""
    throughput = data.get("request_throughput") or {}
    tokens = data.get("output_token_throughput") or {}
    return _point(
        set_concurrency=concurrency if not rate else None,
        measured_concurrency=None,
        rate=rate,
        rps=_num(throughput.get("avg"), "request_throughput.avg"),
        tps=_num(tokens.get("avg"), "output_token_throughput.avg"),
        inp=_genai_metric(data, "input_sequence_length", "avg"),
        out=_genai_metric(data, "output_sequence_length", "avg"),
        ttft=tuple(_genai_metric(data, "time_to_first_token", s) for s in ("avg", "p95", "p99")),
        tpot=tuple(_genai_metric(data, "inter_token_latency", s) for s in ("avg", "p95", "p99")),
        e2e_ms=_genai_metric(data, "request_latency", "avg"),
        notes=notes,
    )


def _parse_genai_perf(data: Mapping) -> LoadTest:
    config = data.get("input_config") or {}
    stimulus = (config.get("perf_analyzer") or {}).get("stimulus") or {}
    concurrency = _num(
        config.get("concurrency", stimulus.get("concurrency")), "concurrency", required=False
    )
    rate = _num(
        config.get("request_rate", stimulus.get("request_rate")), "request rate", required=False
    )
    models = config.get("model") or config.get("model_names") or []
    point = _genai_point(
        data,
        concurrency=concurrency,
        rate=rate,
        notes=(
            "TPOT is GenAI-Perf's inter_token_latency: (request latency − TTFT) ÷ "
            "(output tokens − 1), per request",
        ),
    )
    return LoadTest(
        tool="genai-perf",
        model=str(models[0] if isinstance(models, list) and models else models or ""),
        measured_on="",
        serving_stack=str(
            config.get("service_kind") or (config.get("endpoint") or {}).get("service_kind") or ""
        ),
        stack_version="",
        points=(point,),
    )


def _parse_aiperf(data: Mapping) -> LoadTest:
    """AIPerf's aggregate export, ``profile_export_aiperf.json``.

    Layout from ai-dynamo/aiperf ``docs/tutorials/working-with-profile-exports.md``
    ("Aggregated Statistics (JSON)"): each metric an object with ``unit``, ``avg``,
    ``p1``…``p99``, ``min``, ``max``, ``std`` (``request_throughput``, ``request_latency``,
    ``time_to_first_token``, ``inter_token_latency``, ``output_token_throughput``,
    ``input_sequence_length``, ``output_sequence_length``, ``request_count``,
    ``error_request_count``), ``start_time`` (ISO 8601) and ``input_config`` with
    ``endpoint.model_names`` and ``loadgen.concurrency`` (``loadgen.request_rate`` is the
    ``--request-rate`` option). A run whose every request failed has only
    ``records.error_request_count``. AIPerf's inter-token latency is TPOT after the first
    token: (request_latency − ttft) ÷ (output_sequence_length − 1)
    (``aiperf/metrics/types/inter_token_latency_metric.py``).
    """
    config = data.get("input_config") or {}
    loadgen = config.get("loadgen") or {}
    endpoint = config.get("endpoint") or {}
    succeeded = _genai_metric(data, "request_count", "avg")
    if "request_throughput" not in data and isinstance(data.get("records"), Mapping):
        failed = ((data["records"].get("error_request_count") or {}).get("avg")) or 0
        raise NoSuccessfulRequestsError(
            f"no request succeeded ({failed:g} errored; the export has only error counts)"
        )
    if succeeded == 0:
        raise NoSuccessfulRequestsError("no request succeeded (request_count: 0)")
    concurrency = _num(loadgen.get("concurrency"), "loadgen.concurrency", required=False)
    rate = _num(loadgen.get("request_rate"), "loadgen.request_rate", required=False)
    notes = [
        "TPOT is AIPerf's inter_token_latency: (request latency − TTFT) ÷ "
        "(output tokens − 1), per request"
    ]
    errors = error_rate_note(_genai_metric(data, "error_request_count", "avg"), succeeded)
    if errors:
        notes.append(errors)
    point = _genai_point(data, concurrency=concurrency, rate=rate, notes=tuple(notes))
    models = endpoint.get("model_names") or []
    measured_on = ""
    try:
        measured_on = datetime.fromisoformat(str(data.get("start_time") or "")).date().isoformat()
    except ValueError:
        measured_on = ""
    return LoadTest(
        tool="aiperf",
        model=str(models[0] if isinstance(models, list) and models else models or ""),
        measured_on=measured_on,
        serving_stack="",
        stack_version="",
        points=(point,),
    )


def _guidellm_stat(metrics: Mapping, name: str, stat: str) -> float | None:
    successful = (metrics.get(name) or {}).get("successful") or {}
    if stat in ("p95", "p99"):
        return _num((successful.get("percentiles") or {}).get(stat), name, required=False)
    return _num(successful.get(stat), name, required=False)


def _guidellm_total(bench: Mapping, kind: str) -> float | None:
    """Requests of one kind ("successful", "errored") of one benchmark (``request_totals``:
    on the benchmark, or in its metrics in later GuideLLM versions), None when not said."""
    for holder in (bench, bench.get("metrics") or {}):
        totals = holder.get("request_totals")
        if isinstance(totals, Mapping) and totals.get(kind) is not None:
            return _num(totals.get(kind), f"request_totals.{kind}")
    return None


def _parse_guidellm(data: Mapping) -> LoadTest:
    points = []
    skipped = []
    measured_on = ""
    model = str((data.get("args") or {}).get("model") or "")
    for index, bench in enumerate(data.get("benchmarks") or []):
        config = bench.get("config") or bench.get("args") or {}
        strategy = config.get("strategy") or {}
        kind = strategy.get("type_", "")
        model = model or str((config.get("backend") or {}).get("model") or "")
        metrics = bench.get("metrics") or {}
        streams = 1.0 if kind == "synchronous" else strategy.get("streams")
        rate = strategy.get("rate") if kind in ("constant", "poisson") else None
        # TPOT as vLLM defines it (after the first token) is GuideLLM's inter-token latency;
        # its time_per_output_token_ms spreads the TTFT over every token (older reports).
        if "inter_token_latency_ms" in metrics:
            tpot_name, tpot_note = (
                "inter_token_latency_ms",
                (
                    "TPOT is GuideLLM's inter_token_latency_ms: (request latency − TTFT) ÷ "
                    "(output tokens − 1), per request"
                ),
            )
        else:
            tpot_name, tpot_note = (
                "time_per_output_token_ms",
                (
                    "TPOT is GuideLLM's time_per_output_token_ms (no inter-token latency in the "
                    "report): it includes the first token, so it reads high by about TTFT ÷ tokens"
                ),
            )
        latency_s = _guidellm_stat(metrics, "request_latency", "mean")
        stage = f"benchmark {index + 1} ({kind or 'unknown strategy'}"
        stage += f", {streams:g} streams)" if isinstance(streams, int | float) else ")"
        try:
            succeeded = _guidellm_total(bench, "successful")
            if succeeded == 0:
                raise NoSuccessfulRequestsError(
                    "no request succeeded (request_totals.successful: 0)"
                )
            errors = error_rate_note(_guidellm_total(bench, "errored"), succeeded)
            point = _point(
                set_concurrency=_num(streams, "streams", required=False),
                measured_concurrency=_guidellm_stat(metrics, "request_concurrency", "mean"),
                rate=_num(rate, "rate", required=False),
                rps=_num(_guidellm_stat(metrics, "requests_per_second", "mean"), "requests/s"),
                tps=_num(_guidellm_stat(metrics, "output_tokens_per_second", "mean"), "tokens/s"),
                inp=_guidellm_stat(metrics, "prompt_token_count", "mean"),
                out=_guidellm_stat(metrics, "output_token_count", "mean"),
                ttft=tuple(
                    _guidellm_stat(metrics, "time_to_first_token_ms", s)
                    for s in ("mean", "p95", "p99")
                ),
                tpot=tuple(_guidellm_stat(metrics, tpot_name, s) for s in ("mean", "p95", "p99")),
                e2e_ms=latency_s * 1000.0 if latency_s is not None else None,
                notes=(tpot_note,) + ((errors,) if errors else ()),
            )
        except ExcludedRunError as exc:
            skipped.append(f"{stage}: {exc}, left out of the sweep")
            continue
        except LoadTestFormatError as exc:
            raise LoadTestFormatError(f"{stage}: {exc}") from None
        points.append(point)
        start = bench.get("start_time") or (bench.get("run_stats") or {}).get("start_time")
        measured_on = measured_on or _date_from_epoch(start)
    if not points and skipped:
        raise ExcludedRunError("; ".join(skipped))
    if not points:
        raise LoadTestFormatError("the GuideLLM report has no benchmarks")
    return LoadTest("guidellm", model, measured_on, "", "", tuple(points), tuple(skipped))


def llmperf_tpot_ms(
    itl_ms: tuple[float | None, float | None, float | None],
    *,
    ttft_mean_ms: float | None,
    e2e_mean_ms: float | None,
    output_tokens_mean: float | None,
) -> tuple[tuple[float | None, float | None, float | None], str]:
    """TPOT (mean, p95, p99; after the first token) from LLMPerf's inter-token latency.

    LLMPerf's per-request ``inter_token_latency_s`` is the sum of every token's wait, the
    first token's (the TTFT) included, divided by the output tokens (ray-project/llmperf
    ``token_benchmark_ray.py``: ``request_metrics[INTER_TOKEN_LAT] /= num_output_tokens``),
    so ITL ≈ (TTFT + (n − 1) × TPOT) ÷ n. TPOT as vLLM, GenAI-Perf and AIPerf define it is
    (e2e − TTFT) ÷ (n − 1):

    - mean: (mean e2e − mean TTFT) ÷ (mean output tokens − 1), from the file's own parts;
      without the mean e2e, (n × mean ITL − mean TTFT) ÷ (n − 1);
    - p95 / p99: the summary has no per-request parts at a percentile, so the request at
      the ITL percentile is assumed to have the mean TTFT and mean length:
      (n × ITL_p − mean TTFT) ÷ (n − 1). Its own TTFT is likely higher, so this errs high
      (a stricter judge of a TPOT target).

    Returns:
        The three TPOTs and the note saying how they were read. Without the mean TTFT or
        output length the ITL is kept and the note says it includes the first token.
    """
    n = output_tokens_mean
    if ttft_mean_ms is None or n is None or n <= 1:
        return itl_ms, (
            "TPOT is LLMPerf's inter-token latency as reported: it includes the first token "
            "(the file lacks the mean TTFT or output length to take it out)"
        )

    def from_itl(value: float | None) -> float | None:
        return None if value is None else max(n * value - ttft_mean_ms, 0.0) / (n - 1)

    if e2e_mean_ms is not None:
        mean = max(e2e_mean_ms - ttft_mean_ms, 0.0) / (n - 1)
        how = "mean = (mean e2e − mean TTFT) ÷ (mean output tokens − 1)"
    else:
        mean = from_itl(itl_ms[0])
        how = "mean = (n × mean ITL − mean TTFT) ÷ (n − 1)"
    return (mean, from_itl(itl_ms[1]), from_itl(itl_ms[2])), (
        "TPOT from LLMPerf's inter-token latency, which includes the first token: "
        f"{how}; p95/p99 = (n × ITL percentile − mean TTFT) ÷ (n − 1), assuming the mean "
        "TTFT and length at the percentile"
    )


def _parse_llmperf(data: Mapping) -> LoadTest:
    def seconds(key: str) -> float | None:
        value = _num(data.get(key), key, required=False)
        return value * 1000.0 if value is not None else None

    completed = _num(data.get("results_num_completed_requests"), "completed", required=False)
    if completed == 0:
        raise NoSuccessfulRequestsError("no request succeeded (results_num_completed_requests: 0)")
    errors = error_rate_note(
        _num(data.get("results_number_errors"), "results_number_errors", required=False),
        completed,
    )
    per_min = _num(data.get("results_num_completed_requests_per_min"), "requests per minute")
    ttft = tuple(seconds(f"results_ttft_s_{s}") for s in ("mean", "quantiles_p95", "quantiles_p99"))
    out = _num(data.get("results_number_output_tokens_mean"), "output tokens", required=False)
    e2e_ms = seconds("results_end_to_end_latency_s_mean")
    tpot, tpot_note = llmperf_tpot_ms(
        tuple(
            seconds(f"results_inter_token_latency_s_{s}")
            for s in ("mean", "quantiles_p95", "quantiles_p99")
        ),
        ttft_mean_ms=ttft[0],
        e2e_mean_ms=e2e_ms,
        output_tokens_mean=out,
    )
    point = _point(
        set_concurrency=_num(data.get("num_concurrent_requests"), "num_concurrent_requests"),
        measured_concurrency=None,
        rate=None,
        rps=per_min / 60.0,
        tps=_num(
            data.get("results_mean_output_throughput_token_per_s"),
            "results_mean_output_throughput_token_per_s",
        ),
        inp=_num(data.get("results_number_input_tokens_mean"), "input tokens", required=False),
        out=out,
        ttft=ttft,
        tpot=tpot,
        e2e_ms=e2e_ms,
        notes=(tpot_note,) + ((errors,) if errors else ()),
    )
    return LoadTest(
        tool="llmperf",
        model=str(data.get("model") or ""),
        measured_on=_date_from_epoch(data.get("timestamp")),
        serving_stack="",
        stack_version="",
        points=(point,),
    )


# Per-request arrays no parser here reads: GuideLLM keeps every request of every benchmark
# (about 5 KB each, prompt and output text included), vLLM's --save-detailed every request's
# lengths, latencies and text. They are skipped while reading, never held in memory.
PER_REQUEST_PREFIXES = frozenset(
    {
        "benchmarks.item.requests",
        "input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors",
        "start_times",
    }
)  # fmt: skip


# Up to this size a file is decoded whole by json (which, unlike the streaming parser, also
# takes the NaN and Infinity that Python's json.dump writes): a few tens of MB of Python
# objects at most. Above it, it is streamed.
WHOLE_FILE_BYTES = 8 * 1024 * 1024


def read_result_json(
    stream: BinaryIO, *, size_bytes: int, whole_file_bytes: int = WHOLE_FILE_BYTES
) -> Mapping:
    """A result file decoded from a binary stream, without its per-request arrays.

    A file of up to ``whole_file_bytes`` is decoded whole. A larger one is streamed with
    ijson (its C parser, yajl2_c): the aggregate sections are built as :func:`json.load`
    would build them, each array or object under :data:`PER_REQUEST_PREFIXES` becomes
    ``None`` as it is read past, so memory stays that of the aggregates whatever the number
    of requests (benchmarks/bench_guidellm_report.py measures it).

    Raises:
        LoadTestFormatError: not JSON or not UTF-8, said in one line.
    """
    if size_bytes <= whole_file_bytes:
        try:
            return json.loads(stream.read().decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise LoadTestFormatError(
                f"not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from None
        except json.JSONDecodeError as exc:
            raise LoadTestFormatError(f"not JSON ({exc})") from None
    builder = ijson.ObjectBuilder()
    skipping = 0
    try:
        for prefix, event, value in ijson.parse(stream, use_float=True):
            if skipping:
                if event in ("start_map", "start_array"):
                    skipping += 1
                elif event in ("end_map", "end_array"):
                    skipping -= 1
                continue
            if event in ("start_map", "start_array") and prefix in PER_REQUEST_PREFIXES:
                skipping = 1
                builder.event("null", None)
                continue
            builder.event(event, value)
    except ijson.JSONError as exc:
        raise LoadTestFormatError(f"not JSON ({_first_line(exc)})") from None
    except UnicodeDecodeError as exc:
        raise LoadTestFormatError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not hasattr(builder, "value"):
        raise LoadTestFormatError("not JSON (the file is empty)")
    return builder.value


def _first_line(exc: Exception) -> str:
    """yajl's message spans lines (the text and a caret), sometimes as bytes: its first line."""
    message = exc.args[0] if exc.args else str(exc)
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    return str(message).strip().splitlines()[0] if str(message).strip() else "invalid"


def parse_load_test(data) -> LoadTest:
    """One result file (already decoded from JSON) of any of the tools in :data:`TOOLS`.

    Raises:
        LoadTestFormatError: not one of the formats, or a figure it needs is missing.
    """
    if not isinstance(data, Mapping):
        raise LoadTestFormatError("a load-test result is a JSON object")
    if isinstance(data.get("benchmarks"), list):
        return _parse_guidellm(data)
    if "results_ttft_s_mean" in data or "num_concurrent_requests" in data:
        return _parse_llmperf(data)
    config = data.get("input_config")
    if (isinstance(config, Mapping) and isinstance(config.get("loadgen"), Mapping)) or (
        isinstance(data.get("records"), Mapping) and "error_summary" in data
    ):
        return _parse_aiperf(data)
    if isinstance(data.get("time_to_first_token"), Mapping):
        return _parse_genai_perf(data)
    if "mean_ttft_ms" in data or "request_throughput" in data:
        return _parse_vllm(data)
    raise LoadTestFormatError(
        "not a load-test result this planner reads: " + ", ".join(TOOLS.values())
    )


def merge_sweep(tests: Sequence[LoadTest]) -> LoadTest:
    """Several results of one sweep as one curve, its points sorted by load."""
    if not tests:
        raise LoadTestFormatError("no results")
    first = tests[0]
    points = sorted((p for t in tests for p in t.points), key=lambda p: p.concurrency)
    skipped = tuple(note for t in tests for note in t.skipped)
    dates = sorted(t.measured_on for t in tests if t.measured_on)
    return LoadTest(
        tool=first.tool,
        model=first.model,
        measured_on=dates[-1] if dates else "",
        serving_stack=first.serving_stack,
        stack_version=first.stack_version,
        points=tuple(points),
        skipped=skipped,
    )


@dataclass(frozen=True, slots=True)
class MeasuredCapacity:
    """What one replica held within the target, read off the measured curve.

    Attributes:
        feasible: False when even the lightest measured load misses a target.
        reason: Why not, or None.
        concurrency: Requests in flight per replica at the capacity.
        requests_per_s: Requests/s per replica at the capacity.
        output_tokens_per_s: Output tokens/s per replica at the capacity.
        ttft_ms / tpot_ms: Latency at the capacity, at the percentile judged.
        basis: How it was read ("the measured point at 16 in flight", "between 16 and 32").
        notes: Caveats (a p95 target judged on p99, a sweep that never reached the target).
    """

    feasible: bool
    reason: str | None
    concurrency: float = 0.0
    requests_per_s: float = 0.0
    output_tokens_per_s: float = 0.0
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    basis: str = ""
    notes: tuple[str, ...] = ()


def capacity_at_target(
    points: Sequence[LoadPoint],
    *,
    ttft_target_ms: float | None,
    tpot_target_ms: float | None,
    percentile: int = 95,
) -> MeasuredCapacity:
    """The largest measured load whose p-th percentile TTFT and TPOT meet the targets.

    When the next heavier point misses a target, the capacity lies between the two: it is
    interpolated linearly on the margin (latency ÷ target − 1, which is ≤ 0 at the point that
    meets and > 0 at the one that misses), as the engine does between its grid points
    (:func:`planner.engine.capacity.latency_capacity`). Never beyond the heaviest point.
    """
    if ttft_target_ms is None and tpot_target_ms is None:
        raise ValueError("give a TTFT or a TPOT target")
    ordered = sorted(points, key=lambda p: p.concurrency)
    if not ordered:
        return MeasuredCapacity(False, "the sweep has no points")
    notes: list[str] = [
        f"set to {p.nominal_concurrency:g} in flight, the run held {p.concurrency:.3g} "
        f"({p.held_fraction:.0%} of its setting): read at the load held"
        for p in ordered
        if p.held_under_setting
    ]
    margins = []
    values = []
    for point in ordered:
        margin = -math.inf
        ttft, ttft_p = point.latency_ms("ttft", percentile)
        tpot, tpot_p = point.latency_ms("tpot", percentile)
        for target, value, used, name in (
            (ttft_target_ms, ttft, ttft_p, "TTFT"),
            (tpot_target_ms, tpot, tpot_p, "TPOT"),
        ):
            if target is None:
                continue
            if value is None:
                return MeasuredCapacity(
                    False,
                    f"the sweep has no p{percentile} {name} to judge a p{percentile} target on",
                )
            if used != percentile:
                note = f"p{percentile} {name} target judged on the measured p{used} (stricter)"
                if note not in notes:
                    notes.append(note)
            margin = max(margin, value / target - 1.0)
        margins.append(margin)
        values.append((ttft, tpot))
    meeting = [i for i, m in enumerate(margins) if m <= 0]
    if not meeting:
        first = ordered[0]
        return MeasuredCapacity(
            False,
            f"even the lightest measured load ({first.load_label} in flight) misses the "
            f"p{percentile} target",
            notes=tuple(notes),
        )
    lo = meeting[-1]
    low = ordered[lo]
    if lo + 1 == len(ordered):
        notes.append(
            "the heaviest measured load still meets the target: the replica may hold more "
            "(not extrapolated)"
        )
        return MeasuredCapacity(
            True,
            None,
            concurrency=low.concurrency,
            requests_per_s=low.requests_per_s,
            output_tokens_per_s=low.output_tokens_per_s,
            ttft_ms=values[lo][0],
            tpot_ms=values[lo][1],
            basis=f"the measured point at {low.load_label} in flight",
            notes=tuple(notes),
        )
    high = ordered[lo + 1]
    frac = margins[lo] / (margins[lo] - margins[lo + 1])  # in [0, 1): margin crosses zero

    def between(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a + frac * (b - a)

    return MeasuredCapacity(
        True,
        None,
        concurrency=between(low.concurrency, high.concurrency),
        requests_per_s=between(low.requests_per_s, high.requests_per_s),
        output_tokens_per_s=between(low.output_tokens_per_s, high.output_tokens_per_s),
        ttft_ms=between(values[lo][0], values[lo + 1][0]),
        tpot_ms=between(values[lo][1], values[lo + 1][1]),
        basis=(
            f"interpolated between the measured points at {low.load_label} and "
            f"{high.load_label} in flight"
        ),
        notes=tuple(notes),
    )


def measured_replicas(
    capacity: MeasuredCapacity,
    *,
    tensor_parallel: int,
    accelerators_per_server: int,
    peak_concurrency: float | None,
    peak_requests_per_s: float | None,
    headroom_pct: float,
    n_plus_one: bool,
) -> ReplicaPlan:
    """Seed guide step 4 on the measured capacity: peak ÷ capacity, headroom, N+1."""
    return plan_replicas(
        tensor_parallel=tensor_parallel,
        accelerators_per_server=accelerators_per_server,
        batch_per_replica=capacity.concurrency,
        requests_per_s_per_replica=capacity.requests_per_s,
        peak_concurrency=peak_concurrency,
        peak_requests_per_s=peak_requests_per_s,
        headroom_pct=headroom_pct,
        n_plus_one=n_plus_one,
    )


def lengths_mismatch(
    test: LoadTest,
    *,
    input_tokens_mean: float,
    output_tokens_mean: float,
    tolerance_pct: float = 20.0,
) -> str | None:
    """Why the measurement's mean lengths are not the workload's, or None when they are.

    A replica's capacity depends on the lengths (prefill and KV cache per request), so a
    measurement more than ``tolerance_pct`` away on either length does not size the workload.
    """
    problems = []
    for name, measured, wanted in (
        ("input", test.input_tokens_mean, input_tokens_mean),
        ("output", test.output_tokens_mean, output_tokens_mean),
    ):
        if measured is None:
            problems.append(f"the file does not say its {name} length")
        elif abs(measured - wanted) > tolerance_pct / 100.0 * wanted:
            problems.append(
                f"{name} {measured:,.0f} tokens measured against {wanted:,.0f} in the workload"
            )
    if not problems:
        return None
    return "Measured on other lengths: " + "; ".join(problems) + "."


@dataclass(frozen=True, slots=True)
class PointComparison:
    """The engine's model at one measured load beside the measurement (means)."""

    concurrency: float
    measured_output_tokens_per_s: float
    model_output_tokens_per_s: float
    measured_ttft_ms: float | None
    model_ttft_ms: float
    measured_tpot_ms: float | None
    model_tpot_ms: float

    @staticmethod
    def _diff(model: float, measured: float | None) -> float | None:
        if not measured:
            return None
        return (model - measured) / measured * 100.0

    @property
    def throughput_diff_pct(self) -> float | None:
        """Model − measurement, percent of the measurement."""
        return self._diff(self.model_output_tokens_per_s, self.measured_output_tokens_per_s)

    @property
    def ttft_diff_pct(self) -> float | None:
        return self._diff(self.model_ttft_ms, self.measured_ttft_ms)

    @property
    def tpot_diff_pct(self) -> float | None:
        return self._diff(self.model_tpot_ms, self.measured_tpot_ms)


def compare_with_model(
    points: Sequence[LoadPoint],
    shape: ReplicaShape,
    *,
    input_tokens_mean: float,
    output_tokens_mean: float,
) -> tuple[PointComparison, ...]:
    """The engine's steady state at each measured load, on the lengths each point measured.

    The model's TTFT is its service time (no wait for a slot): beyond the knee of the curve a
    measured mean TTFT that includes queueing is far above it, and the table says so in %.
    """
    ordered = sorted(points, key=lambda p: p.concurrency)
    if not ordered:
        return ()
    result = []
    for point in ordered:
        state = steady_state(
            shape,
            np.asarray([max(point.concurrency, 1.0)]),
            point.input_tokens_mean or input_tokens_mean,
            point.output_tokens_mean or output_tokens_mean,
        )
        result.append(
            PointComparison(
                concurrency=point.concurrency,
                measured_output_tokens_per_s=point.output_tokens_per_s,
                model_output_tokens_per_s=float(state.output_tokens_per_s[0]),
                measured_ttft_ms=point.ttft_mean_ms,
                model_ttft_ms=float(state.ttft_service_ms[0]),
                measured_tpot_ms=point.tpot_mean_ms,
                model_tpot_ms=float(state.tpot_ms[0]),
            )
        )
    return tuple(result)


def model_correction(comparisons: Sequence[PointComparison]) -> float | None:
    """Measured ÷ modelled throughput over the sweep (geometric mean), None without points.

    A per-plan correction of the engine for neighbouring candidates (same accelerator family
    and precision): their modelled capacity is multiplied by it, and labelled as such.
    """
    ratios = [
        c.measured_output_tokens_per_s / c.model_output_tokens_per_s
        for c in comparisons
        if c.model_output_tokens_per_s > 0 and c.measured_output_tokens_per_s > 0
    ]
    if not ratios:
        return None
    return float(np.exp(np.mean(np.log(ratios))))
