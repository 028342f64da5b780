"""Calibration of the performance model against published inference runs.

``catalog/data/benchmarks_public.csv`` holds MLPerf Inference (v4.0-v5.0) and TensorRT-LLM
v0.17 measurements. Each usable run (an ``output_tokens_per_s`` figure for a known accelerator
and model) is predicted with the same code path the planner uses:

* ``offline`` / ``max_throughput`` → offline maximum throughput (largest batch that fits);
* ``server`` / ``interactive`` → maximum throughput with p99 TTFT and TPOT within the run's
  limits (the latency-constrained capacity path);
* lengths are the dataset means; when the run does not state its TP degree the engine picks
  the one that gives the most throughput for the N accelerators, as a submitter would.

Efficiency factors (achievable fraction of peak memory bandwidth η_m and of peak FLOPs η_c per
accelerator family and precision, plus global communication and overhead terms) are fitted by
``scipy.optimize.least_squares`` on log(predicted / measured), with the per-family factors
regularised toward the global ones (anchors_sizing.md F14). A k-fold by hardware (each
family, then each accelerator, left out in turn) reports how well the model does on hardware
it has not seen. Results are written to ``planner/engine/data/calibration.json``.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np
from scipy.optimize import least_squares

from planner.engine.capacity import latency_capacity, offline_capacity, valid_tp_degrees
from planner.engine.memory import ACCELERATOR_BYTES_PER_GB, plan_memory
from planner.engine.performance import (
    Calibration,
    EfficiencyFactors,
    LoadPoint,
    ReplicaShape,
    first_token_ms,
    latency_under_load,
    precision_group,
    replica_shape,
    scheduler_max_sequences,
    scheduler_token_budget,
    steady_state,
    step_time_ms,
)
from planner.engine.specs import (
    AcceleratorSpec,
    ModelSpec,
    accelerator_family,
    load_accelerators_csv,
    load_models_csv,
)
from planner.engine.uncertainty import architecture_class

__all__ = [
    "DEFAULT_CALIBRATION_PATH",
    "BenchmarkRun",
    "CalibrationFit",
    "DEFAULT_TIME_CUTOFF",
    "ROUND_PUBLISHED",
    "SplitValidation",
    "ErrorRow",
    "ErrorTable",
    "Calibration",
    "architecture_runs",
    "error_bands",
    "error_table",
    "fit_calibration",
    "load_benchmark_runs",
    "load_calibration",
    "predict_run",
    "leave_one_out",
    "save_calibration",
    "time_split",
    "update_split_validation",
    "usable_runs",
    "validate_splits",
]

DEFAULT_CALIBRATION_PATH = Path(__file__).with_name("data") / "calibration.json"
CALIBRATION_VERSION = "1.0"

_THROUGHPUT_SCENARIOS = {"offline", "max_throughput", "batch_latency"}
# Each switch below was measured by the split validations (time split: fit before 2025-03-01,
# predict the 29 MLPerf v5.0 runs; median / p90 / worst absolute error %), the rest of the
# model as shipped (kernels step model, the serving stacks' own batch caps, NVFP4 tiles).
#
# Static-batch latency runs (ROCm vLLM on 8 × MI300X, batch 1-128, end-to-end seconds) are
# fitted as output tokens/s = B × output / e2e s when on. Off: with them the fitted all-reduce
# latency rises from 9 to 21 µs (RCCL on xGMI is slower than NVLink's) and the family split
# of the NVIDIA throughput runs worsens (max_throughput 12.2 -> 18.8 % median).
USE_BATCH_LATENCY_RUNS = False
# MLPerf v4.1/v5.0 Blackwell submissions ran NVFP4 arithmetic with an FP8 KV cache
# (catalog/data/README.md, "Precision of Blackwell MLPerf rows"). On: time split 13.7 / 30.4 /
# 38.9 against 16.2 / 37.7 / 38.8 as fp8, precision split 12.6 / 25.2 against 15.5 / 66.0;
# the family split's median is worse (19.1 against 16.2 %: a family held out then leans on
# global factors that the FP4 group pulls down) but its p90 better (33.3 against 40.6 %).
BLACKWELL_MLPERF_FP4 = True
# MLPerf server and interactive runs report their request rate and median TTFT and TPOT: by
# Little's law each replica held rate × latency requests, so the TPOT the engine gives at that
# concurrency can be fitted beside the throughput. Off: it is scored instead (an independent
# check of the step time at high batch); fitted, the time split went 13.5 -> 14.5 % and the
# family split 12.7 -> 16.4 %.
FIT_CONCURRENCY_TPOT = False
CONCURRENCY_TPOT_WEIGHT = 1.0
# A per-family software-generation rate fitted by publication date: older runs reach less of
# the peak, so the factors describe each family's newest stack (Hopper: MLPerf v5.0 and
# TensorRT-LLM v0.17, +4 %/year), which every estimate assumes and names. On: time split
# 13.7 / 30.4 -> 13.0 / 31.5.
FIT_SOFTWARE_GENERATION = True
# Prior width of a family's software-generation rate (log-efficiency per year) around 0.
SOFTWARE_RATE_PRIOR_SIGMA = 0.3
_LATENCY_SCENARIOS = {"server", "interactive"}
_FP8_FAMILIES = {"hopper", "hopper-pcie", "blackwell", "cdna3", "cdna4", "ada"}
# A run below this fraction of the best published run of the same system (accelerator, count,
# model, scenario) is an untuned software stack, not a hardware figure, and is left out.
DOMINATED_FRACTION = 0.5
# Measured systems have their physical memory: HBM and GDDR come in GiB, so an "80 GB" H100
# holds 80 GiB; the planner plans on the same (memory.ACCELERATOR_BYTES_PER_GB).
MEASURED_BYTES_PER_GB = ACCELERATOR_BYTES_PER_GB
RESIDUAL_CLIP = math.log(3.0)
# Prior width (log space) of a family's factors around the global ones.
PRIOR_SIGMA = 0.35
# Efficiency per precision as well as per family: log η of a (family, precision) group is the
# global value + the family's offset + the precision's offset + a small deviation of the group's
# own (prior INTERACTION_SIGMA), so a precision measured on one family (FP4 on Blackwell)
# informs the others, and an unmeasured pair (Hopper BF16, MI355X FP4) composes the two.
# Off: the public runs hold no family at two precisions, so the offsets are not identified,
# and on they did worse (time split 14.9 / 36.3, family 23.6 / 37.0, precision 15.1 / 70.2 %);
# it is the structure to switch on once one family is measured at FP8 and FP4.
PRECISION_OFFSETS = False
INTERACTION_SIGMA = 0.15


# When each source round was published: MLPerf Inference results from MLCommons' announcement
# of the round (v4.0 27 Mar 2024, v4.1 28 Aug 2024, v5.0 2 Apr 2025); the TensorRT-LLM v0.17
# performance tables and the ROCm vLLM v0.10.0 tables from the month of that release
# (February 2025, July 2025), taken as the month's first day.
ROUND_PUBLISHED: Mapping[str, dt.date] = {
    "v4.0": dt.date(2024, 3, 27),
    "v4.1": dt.date(2024, 8, 28),
    "v5.0": dt.date(2025, 4, 2),
    "trtllm-v0.17": dt.date(2025, 2, 1),
    "rocm-vllm-v0.10.0": dt.date(2025, 7, 1),
}
# Default time split: fit on everything published before the newest MLPerf round, predict it.
DEFAULT_TIME_CUTOFF = dt.date(2025, 3, 1)


@dataclass(frozen=True, slots=True)
class MeasuredLatency:
    """Request rate and median latencies a latency-bounded run measured at that rate.

    Attributes:
        requests_per_s: Completed requests/s of the whole system.
        ttft_p50_ms: Median time to first token.
        tpot_p50_ms: Median time per output token.
        ttft_p99_ms: 99th percentile time to first token, None when not published.
    """

    requests_per_s: float
    ttft_p50_ms: float
    tpot_p50_ms: float
    ttft_p99_ms: float | None = None

    def concurrency(self, output_tokens: float, replicas: int) -> float:
        """Requests in flight per replica at the measured rate, by Little's law: L = λ·W with
        W = TTFT + (output − 1)·TPOT, the latency of a median request."""
        latency_s = (self.ttft_p50_ms + max(output_tokens - 1.0, 0.0) * self.tpot_p50_ms) / 1e3
        return self.requests_per_s / max(replicas, 1) * latency_s


@dataclass(frozen=True, slots=True)
class BenchmarkRun:
    """One published run with an output tokens/s figure.

    Attributes:
        ref_id: Run key from the CSV.
        source_kind: "mlperf" or "project_docs".
        source_round: e.g. "v4.1" or "trtllm-v0.17".
        submitter: Submitting organisation.
        accelerator_slug: Accelerator.
        accelerators: Accelerators in the measured system (throughput is the system total).
        model_slug: Model.
        precision_declared: Precision as declared in the CSV ("" when not read).
        precision: Precision the engine uses (declared or inferred, see ``precision_note``).
        precision_note: Why the precision was inferred, "" when declared.
        scenario: offline, server, interactive or max_throughput.
        input_tokens: Mean prompt tokens.
        output_tokens: Mean output tokens.
        tensor_parallel: TP degree when stated, else None.
        ttft_p99_limit_ms: MLPerf p99 TTFT limit (server/interactive).
        tpot_p99_limit_ms: MLPerf p99 TPOT limit (server/interactive).
        output_tokens_per_s: Measured system output tokens/s.
        serving_stack: "trtllm" for TensorRT-LLM runs (NVIDIA and partner MLPerf submissions
            built on it, TensorRT-LLM's own tables), else "vllm" (its memory rule stands in for
            the other stacks).
        concurrency: Static batch of a batch-latency run, None otherwise.
        latency: The run's measured request rate and median latencies (MLPerf server and
            interactive runs), None when it reports none.
    """

    ref_id: str
    source_kind: str
    source_round: str
    submitter: str
    accelerator_slug: str
    accelerators: int
    model_slug: str
    precision_declared: str
    precision: str
    precision_note: str
    scenario: str
    input_tokens: float | None
    output_tokens: float | None
    tensor_parallel: int | None
    ttft_p99_limit_ms: float | None
    tpot_p99_limit_ms: float | None
    output_tokens_per_s: float
    serving_stack: str = "vllm"
    concurrency: int | None = None
    latency: MeasuredLatency | None = None

    @property
    def published_on(self) -> dt.date | None:
        """Publication date of the run's source round (None for an unknown round)."""
        return ROUND_PUBLISHED.get(self.source_round)


def _num(value: str) -> float | None:
    value = (value or "").strip()
    return float(value) if value else None


def _infer_precision(row: Mapping[str, str], family: str) -> tuple[str, str]:
    declared = (row["precision"] or "").strip().lower()
    notes = row.get("notes", "")
    if BLACKWELL_MLPERF_FP4 and row["source_kind"] == "mlperf" and family == "blackwell":
        return "fp4", "Blackwell MLPerf submission: NVFP4 arithmetic per NVIDIA (data README)"
    if not declared and row["source_kind"] == "mlperf" and family in _FP8_FAMILIES:
        return "fp8", "precision not declared; fp8 assumed for MLPerf on Hopper/Blackwell/MI3xx"
    quantised = "weight_transformations 'quantization'" in notes
    if declared == "fp16" and quantised and family in _FP8_FAMILIES:
        return "fp8", "fp16 checkpoint declared with a quantization transform; fp8 assumed"
    if declared in {"fp16", "bf16"}:
        return "bf16", ""
    return declared, ""


_LATENCY_METRICS = ("requests_per_s", "ttft_ms_p50", "tpot_ms_p50")
_READ_METRICS = (*_LATENCY_METRICS, "ttft_ms_p99")


def _measured_latency(metrics: Mapping[str, float]) -> MeasuredLatency | None:
    if not all(metrics.get(m) for m in _LATENCY_METRICS):
        return None
    return MeasuredLatency(
        metrics["requests_per_s"],
        metrics["ttft_ms_p50"],
        metrics["tpot_ms_p50"],
        metrics.get("ttft_ms_p99") or None,
    )


def _serving_stack(row: Mapping[str, str]) -> str:
    ref = row["ref_id"].lower()
    if row["source_round"].startswith("trtllm") or "-trt-" in ref or ref.endswith("-trt"):
        return "trtllm"
    return "vllm"


def load_benchmark_runs(
    path: str | Path,
    accelerators: Mapping[str, AcceleratorSpec] | None = None,
    static_batch: bool | None = None,
) -> list[BenchmarkRun]:
    """Read the runs of ``benchmarks_public.csv`` that have an output tokens/s figure.

    Args:
        path: CSV path.
        accelerators: Specs, used to infer missing precisions by family.
        static_batch: Also read the static-batch latency runs as tokens/s (default
            :data:`USE_BATCH_LATENCY_RUNS`).

    Returns:
        One :class:`BenchmarkRun` per ``output_tokens_per_s`` row.
    """

    runs = []
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    measured: dict[str, dict[str, float]] = defaultdict(dict)
    for row in rows:
        if row["metric"] in _READ_METRICS:
            measured[row["ref_id"]][row["metric"]] = float(row["value"])
    for row in rows:
        batch = _num(row.get("concurrency", ""))
        static_batch_row = (
            (USE_BATCH_LATENCY_RUNS if static_batch is None else static_batch)
            and row["scenario"] == "batch_latency"
            and row["metric"] == "e2e_latency_s"
            and batch
            and _num(row["output_tokens_mean"])
            and _num(row["value"])
        )
        if row["metric"] != "output_tokens_per_s" and not static_batch_row:
            continue
        slug = row["accelerator_slug"]
        family = (
            accelerators[slug].family
            if accelerators and slug in accelerators
            else accelerator_family(slug)
        )
        precision, note = _infer_precision(row, family)
        tp = _num(row["tensor_parallel"])
        runs.append(
            BenchmarkRun(
                ref_id=row["ref_id"],
                source_kind=row["source_kind"],
                source_round=row["source_round"],
                submitter=row["submitter"],
                accelerator_slug=slug,
                accelerators=int(_num(row["accelerators"]) or 1),
                model_slug=row["model_slug"],
                precision_declared=row["precision"],
                precision=precision,
                precision_note=note,
                scenario=row["scenario"],
                input_tokens=_num(row["input_tokens_mean"]),
                output_tokens=_num(row["output_tokens_mean"]),
                tensor_parallel=int(tp) if tp else None,
                ttft_p99_limit_ms=_num(row["ttft_p99_limit_ms"]),
                tpot_p99_limit_ms=_num(row["tpot_p99_limit_ms"]),
                output_tokens_per_s=(
                    batch * float(row["output_tokens_mean"]) / float(row["value"])
                    if static_batch_row
                    else float(row["value"])
                ),
                serving_stack=_serving_stack(row),
                concurrency=int(batch) if static_batch_row else None,
                latency=_measured_latency(measured.get(row["ref_id"], {}))
                if row["scenario"] in _LATENCY_SCENARIOS
                else None,
            )
        )
    return runs


def _system_key(run: BenchmarkRun) -> tuple:
    """Runs with the same key measure the same system on the same workload."""
    return (
        run.accelerator_slug,
        run.accelerators,
        run.tensor_parallel,
        run.model_slug,
        run.scenario,
        run.input_tokens,
        run.output_tokens,
        run.concurrency,
    )


def usable_runs(
    runs: Iterable[BenchmarkRun],
    accelerators: Mapping[str, AcceleratorSpec],
    models: Mapping[str, ModelSpec],
) -> tuple[list[BenchmarkRun], list[tuple[BenchmarkRun, str]]]:
    """Split runs into those the calibration can use and those it cannot, with reasons.

    Rules (no run is singled out by name): the accelerator and model must be in the catalog,
    the scenario must be a throughput or SLO-bounded one, lengths must be known, the precision
    must be known or inferable; an exact duplicate figure of the same system is kept once; a
    run below half of the best published run of the same system (accelerator, count, TP),
    model, scenario and lengths is an untuned software stack and is excluded.

    Returns:
        (usable runs, [(excluded run, reason)]).
    """
    runs = list(runs)
    usable: list[BenchmarkRun] = []
    excluded: list[tuple[BenchmarkRun, str]] = []
    best: dict[tuple, float] = defaultdict(float)
    for run in runs:
        best[_system_key(run)] = max(best[_system_key(run)], run.output_tokens_per_s)
    seen: set[tuple] = set()
    for run in runs:
        key = _system_key(run)
        if run.accelerator_slug not in accelerators:
            excluded.append((run, f"accelerator {run.accelerator_slug!r} not in the catalog"))
        elif run.model_slug not in models:
            excluded.append((run, f"model {run.model_slug!r} not in the catalog"))
        elif run.scenario not in _THROUGHPUT_SCENARIOS | _LATENCY_SCENARIOS:
            excluded.append((run, f"scenario {run.scenario!r} is not a throughput figure"))
        elif not run.input_tokens or not run.output_tokens:
            excluded.append((run, "input or output length unknown"))
        elif run.precision not in {"bf16", "fp8", "int8", "int4", "fp4"}:
            excluded.append((run, f"precision {run.precision_declared!r} unknown"))
        elif (key, run.output_tokens_per_s, run.source_round) in seen:
            excluded.append((run, "duplicate figure of the same system (another accuracy target)"))
        elif run.output_tokens_per_s < DOMINATED_FRACTION * best[key]:
            excluded.append(
                (
                    run,
                    f"below {DOMINATED_FRACTION:.0%} of the best published run of the same "
                    f"system ({best[key]:,.0f} tokens/s): untuned software stack",
                )
            )
        else:
            seen.add((key, run.output_tokens_per_s, run.source_round))
            usable.append(run)
    return usable, excluded


@dataclass(frozen=True, slots=True)
class _RunCase:
    """A run with the replica shapes of its candidate TP degrees (precomputed for the fit)."""

    run: BenchmarkRun
    group: str
    options: tuple[tuple[int, ReplicaShape, int], ...]  # (tp, shape, max_batch)
    infeasible_reason: str | None


def _prepare(
    run: BenchmarkRun,
    accelerator: AcceleratorSpec,
    model: ModelSpec,
    calibration: Calibration,
) -> _RunCase:
    group = f"{accelerator.family}/{precision_group(run.precision)}"
    if run.tensor_parallel:
        degrees = [run.tensor_parallel]
    else:
        degrees = [
            tp
            for tp in valid_tp_degrees(model, accelerator)
            if tp <= run.accelerators and run.accelerators % tp == 0
        ]
    context = int(math.ceil(run.input_tokens + run.output_tokens))
    kv_precision = measured_kv_precision(run.precision)
    options = []
    reason = None
    for tp in degrees:
        plan = plan_memory(
            model,
            accelerator,
            run.precision,
            tp,
            context,
            kv_precision,
            calibration.gpu_memory_utilization,
            run.serving_stack,
            MEASURED_BYTES_PER_GB,
        )
        if not plan.feasible:
            reason = reason or f"TP {tp}: {plan.infeasible_reason}"
            continue
        shape = replica_shape(model, accelerator, run.precision, tp, calibration, kv_precision)
        cap = scheduler_max_sequences(accelerator, run.serving_stack, calibration)
        max_batch = max(1, min(plan.max_concurrent_sequences, cap))
        options.append((tp, shape, max_batch))
    if not options and reason is None:
        reason = "no valid tensor-parallel degree for this accelerator count"
    return _RunCase(run, group, tuple(options), None if options else reason)


def measured_kv_precision(precision: str) -> str:
    """KV dtype of the reference runs: FP8 and FP4 submissions (MLPerf, TensorRT-LLM tables)
    run an FP8 KV cache (catalog/data/README.md, "Precision of Blackwell MLPerf rows"); the
    others keep BF16."""
    return "fp8" if precision in {"fp8", "fp4"} else "bf16"


def _software_years(run: BenchmarkRun, family: str, calibration: Calibration) -> float:
    """Years between a run's publication and its family's newest calibrated stack (≤ 0)."""
    newest = calibration.software_dates.get(family)
    published = run.published_on
    if not newest or published is None:
        return 0.0
    return (published - dt.date.fromisoformat(newest)).days / 365.25


def _with_calibration(
    shape: ReplicaShape, calibration: Calibration, run: BenchmarkRun | None = None
) -> ReplicaShape:
    factors = calibration.factors_for(shape.accelerator.family, shape.precision)
    years = _software_years(run, shape.accelerator.family, calibration) if run else 0.0
    return dataclasses.replace(
        shape, factors=factors, calibration=calibration, software_years=years
    )


def _static_batch_tokens_per_s(shape: ReplicaShape, run: BenchmarkRun) -> float:
    """Output tokens/s of one replica finishing a static batch: prefill of the B prompts,
    then ``output`` decode steps at the mean context (anchors F5)."""
    batch = float(run.concurrency or 1)
    prefill_ms = float(
        step_time_ms(shape, 0.0, batch * run.input_tokens, run.input_tokens, run.input_tokens)
    )
    decode_ms = float(step_time_ms(shape, batch, 0.0, run.input_tokens + run.output_tokens / 2.0))
    return batch * run.output_tokens / ((prefill_ms + run.output_tokens * decode_ms) * 1e-3)


def _predict_case(case: _RunCase, calibration: Calibration) -> tuple[float, int]:
    """Predicted system output tokens/s and the TP degree chosen."""
    run = case.run
    best = (0.0, 0)
    for tp, base_shape, max_batch in case.options:
        shape = _with_calibration(base_shape, calibration, run)
        if run.scenario == "batch_latency":
            if max_batch < (run.concurrency or 1):
                continue
            total = _static_batch_tokens_per_s(shape, run) * (run.accelerators // tp)
            if total > best[0]:
                best = (total, tp)
            continue
        if run.scenario in _LATENCY_SCENARIOS:
            point, _ = latency_capacity(
                shape,
                max_batch,
                run.input_tokens,
                run.output_tokens,
                run.ttft_p99_limit_ms,
                run.tpot_p99_limit_ms,
                99.0,
                variable_lengths=run.source_kind == "mlperf",
            )
        else:
            point = offline_capacity(shape, max_batch, run.input_tokens, run.output_tokens)
        if point is None:
            continue
        total = point.output_tokens_per_s * (run.accelerators // tp)
        if total > best[0]:
            best = (total, tp)
    return best


def _latency_shape(case: _RunCase, calibration: Calibration, tp: int):
    """(shape, max batch) of a run's TP option under ``calibration``, None without one."""
    option = next((o for o in case.options if o[0] == tp), None)
    if case.run.latency is None or option is None:
        return None
    _, base_shape, max_batch = option
    return _with_calibration(base_shape, calibration, case.run), max_batch


# The engine's TTFT statistic compared with a run's measured median TTFT: the mean. Scored on
# the split refits of the 67 MLPerf server/interactive runs (median abs % in-sample / time /
# family / precision), the mean is 16.0 / 23.6 / 33.9 / 18.7 and the model's own median
# (prompt at ln 2 of the mean, no wait below ρ = 0.5) 19.1 / 39.2 / 30.0 / 17.8, 13 % low
# in-sample: the measured medians sit above the model's.
CONCURRENCY_TTFT_PERCENTILE: float | None = None


def concurrency_latency(
    case: _RunCase,
    calibration: Calibration,
    tp: int,
    percentile: float | None = CONCURRENCY_TTFT_PERCENTILE,
) -> tuple[float, float, float] | None:
    """The engine's TPOT and TTFT at the concurrency a latency-bounded run measured.

    The run's replicas (accelerators / TP) each held, by Little's law, the concurrency
    :meth:`MeasuredLatency.concurrency` at the measured rate; at that concurrency the engine's
    steady state gives the mean TPOT and the scheduler's TTFT at ``percentile`` (None: the
    mean, :data:`CONCURRENCY_TTFT_PERCENTILE`; :func:`planner.engine.performance.first_token_ms`;
    no wait for a KV slot, which the measured concurrency already holds).

    Returns:
        (concurrency per replica, TPOT ms, TTFT ms), or None when the run measured no
        latency or the TP degree has no option.
    """
    found = _latency_shape(case, calibration, tp)
    if found is None:
        return None
    shape, _ = found
    run = case.run
    batch = run.latency.concurrency(run.output_tokens, run.accelerators // tp)
    state = steady_state(shape, max(batch, 1.0), run.input_tokens, run.output_tokens)
    ttft = first_token_ms(
        shape,
        state,
        run.input_tokens,
        run.output_tokens,
        scheduler_token_budget(shape.accelerator, run.serving_stack),
        run.source_kind == "mlperf",
        percentile,
    )
    return batch, float(state.tpot_ms[0]), float(ttft[0])


def rate_latency(case: _RunCase, calibration: Calibration, tp: int) -> LoadPoint | None:
    """The engine's latencies at the request rate a latency-bounded run measured (MLPerf
    server and interactive: Poisson arrivals at that rate), the concurrency found by the
    engine itself (:func:`planner.engine.performance.latency_under_load`)."""
    found = _latency_shape(case, calibration, tp)
    if found is None:
        return None
    shape, max_batch = found
    run = case.run
    return latency_under_load(
        shape,
        run.input_tokens,
        run.output_tokens,
        run.latency.requests_per_s / (run.accelerators // tp),
        max_batch,
        serving_stack=run.serving_stack,
        variable_lengths=run.source_kind == "mlperf",
    )


def predict_run(
    run: BenchmarkRun,
    accelerator: AcceleratorSpec,
    model: ModelSpec,
    calibration: Calibration,
) -> tuple[float, int, str | None]:
    """Predict one run's system output tokens/s with the engine.

    Returns:
        (predicted tokens/s, TP chosen, reason when the engine finds no feasible point).
    """
    case = _prepare(run, accelerator, model, calibration)
    if case.infeasible_reason:
        return 0.0, 0, case.infeasible_reason
    value, tp = _predict_case(case, calibration)
    if value <= 0:
        return 0.0, 0, "no operating point meets the run's latency limits"
    return value, tp, None


# --- fitting -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FitParameter:
    """One global parameter of the fit, fitted in log space.

    Attributes:
        name: Calibration attribute ("eta_m" and "eta_c" are the global factors).
        start: Starting value, and the centre of the prior when there is one.
        lower: Lower bound.
        upper: Upper bound.
        prior_factor: Width of a log-normal prior around ``start`` (×/÷ this factor at one
            sigma), None for none.
    """

    name: str
    start: float
    lower: float
    upper: float
    prior_factor: float | None = None


# The step model of the shipped fit (performance.Calibration.step_model).
STEP_MODEL = "kernels"
# One max(memory, compute) over the whole step, with wide overhead bounds: the fixed terms
# park on their upper bounds (50 µs a layer, 4.4 ms a step; 9.3 ms batch-1 TPOT of Llama-3.1-8B
# FP8 on one H100 against its 2.7 ms bandwidth floor), standing in for costs that grow with the
# batch. Kept to compare against (STEP_MODEL = "roofline").
_ROOFLINE_PARAMETERS = (
    FitParameter("eta_m", 0.8, 0.05, 1.0),
    FitParameter("eta_c", 0.5, 0.05, 1.0),
    FitParameter("link_bw_fraction", 0.8, 0.05, 1.0),
    FitParameter("pcie_link_bw_fraction", 0.6, 0.05, 1.0),
    FitParameter("step_overhead_us_per_layer", 10.0, 0.1, 50.0),
    FitParameter("step_overhead_ms", 1.0, 0.01, 20.0),
    FitParameter("prefill_compute_ratio", 1.3, 0.5, 4.0),
    FitParameter("moe_compute_ratio", 0.8, 0.2, 1.5),
    FitParameter("kv_read_bw_ratio", 0.8, 0.2, 1.5),
)
# Each kernel on its own roofline (performance.kernel_step_time_ms), with the costs outside
# the kernels from what they physically are. With CUDA graphs a decode step replays each
# layer's kernels back to back (a graph node launches in ~1-2 µs, 4-8 kernels a layer); the
# scheduler, input preparation and sampler cost a fraction of a millisecond a step (vLLM V1
# reaches ~77 % of HBM bandwidth at batch 1 on an 8B model, anchors §1.10), plus host work per
# sequence. A decode step's all-reduce (a few KB) is latency-bound: NCCL and the custom
# all-reduce kernels take ~5-30 µs on NVLink. The log-normal priors hold each term near its
# nominal value unless the runs say otherwise; the bounds are physical.
_KERNEL_PARAMETERS = (
    FitParameter("eta_m", 0.85, 0.3, 1.0),
    FitParameter("eta_c", 0.6, 0.1, 1.0),
    FitParameter("link_bw_fraction", 0.8, 0.1, 1.0),
    FitParameter("pcie_link_bw_fraction", 0.6, 0.05, 1.0),
    FitParameter("step_overhead_us_per_layer", 4.0, 0.5, 30.0, 3.0),
    FitParameter("step_overhead_ms", 0.3, 0.02, 3.0, 3.0),
    FitParameter("step_overhead_us_per_seq", 2.0, 0.01, 50.0, 5.0),
    FitParameter("allreduce_base_us", 8.0, 2.0, 60.0, 3.0),
    FitParameter("gemm_half_tokens", 64.0, 4.0, 1024.0, 4.0),
    FitParameter("attention_compute_ratio", 0.7, 0.1, 2.0, 2.0),
    FitParameter("moe_compute_ratio", 0.8, 0.2, 1.5),
    FitParameter("kv_read_bw_ratio", 0.9, 0.3, 1.5),
    FitParameter("activation_traffic_ratio", 0.5, 0.01, 4.0, 4.0),
)


def fit_parameters(step_model: str | None = None) -> tuple[FitParameter, ...]:
    """The global parameters fitted for a step model (default :data:`STEP_MODEL`)."""
    model = step_model or STEP_MODEL
    return _KERNEL_PARAMETERS if model == "kernels" else _ROOFLINE_PARAMETERS


def _parameter_value(calibration: Calibration, name: str) -> float:
    if name == "eta_m":
        return calibration.global_factors.memory_bw_fraction
    if name == "eta_c":
        return calibration.global_factors.compute_fraction
    return float(getattr(calibration, name))


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where each part of the fit vector sits: the global parameters, then two log offsets
    (η_m, η_c) per family, per precision and per group, then one software rate per family.
    Without :data:`PRECISION_OFFSETS` there are no family or precision offsets and each
    group's offset stands alone (the older per-group model)."""

    parameters: tuple[FitParameter, ...]
    families: tuple[str, ...]
    precisions: tuple[str, ...]
    groups: tuple[str, ...]
    software: tuple[str, ...]

    @classmethod
    def of(cls, groups: Sequence[str], base: Calibration) -> _Layout:
        groups = tuple(sorted(groups))
        shared = PRECISION_OFFSETS
        return cls(
            fit_parameters(base.step_model),
            tuple(sorted({g.split("/")[0] for g in groups})) if shared else (),
            tuple(sorted({g.split("/")[1] for g in groups})) if shared else (),
            groups,
            tuple(_software_families(base)),
        )

    @property
    def offsets(self) -> int:
        return 2 * (len(self.families) + len(self.precisions) + len(self.groups))

    @property
    def size(self) -> int:
        return len(self.parameters) + self.offsets + len(self.software)

    def offset_prior_sigmas(self) -> np.ndarray:
        """Prior width of every offset: families and precisions around 0 with PRIOR_SIGMA, a
        group's own deviation from their sum with INTERACTION_SIGMA (PRIOR_SIGMA alone)."""
        group_sigma = INTERACTION_SIGMA if self.families else PRIOR_SIGMA
        return np.concatenate(
            [
                np.full(2 * (len(self.families) + len(self.precisions)), PRIOR_SIGMA),
                np.full(2 * len(self.groups), group_sigma),
            ]
        )


def _calibration_from_vector(x: np.ndarray, layout: _Layout, base: Calibration) -> Calibration:
    params = layout.parameters
    ng = len(params)
    values = {p.name: float(v) for p, v in zip(params, np.exp(x[:ng]), strict=True)}
    eta_m, eta_c = values.pop("eta_m"), values.pop("eta_c")
    for name in ("link_bw_fraction", "pcie_link_bw_fraction"):
        if name in values:
            values[name] = min(1.0, values[name])
    i = ng
    family_offsets = {}
    for family in layout.families:
        family_offsets[family] = (float(x[i]), float(x[i + 1]))
        i += 2
    precision_offsets = {}
    for precision in layout.precisions:
        precision_offsets[precision] = (float(x[i]), float(x[i + 1]))
        i += 2
    group_factors = {}
    for group in layout.groups:
        family, precision = group.split("/")
        fm, fc = family_offsets.get(family, (0.0, 0.0))
        pm, pc = precision_offsets.get(precision, (0.0, 0.0))
        dm, dc = fm + pm + x[i], fc + pc + x[i + 1]
        i += 2
        group_factors[group] = EfficiencyFactors(
            float(min(1.0, eta_m * math.exp(dm))), float(min(1.0, eta_c * math.exp(dc)))
        )
    rates = {f: float(x[i + k]) for k, f in enumerate(layout.software)}
    return dataclasses.replace(
        base,
        global_factors=EfficiencyFactors(float(min(1.0, eta_m)), float(min(1.0, eta_c))),
        group_factors=group_factors,
        family_offsets=family_offsets,
        precision_offsets=precision_offsets,
        software_gain_per_year=rates,
        **values,
    )


def _vector_from_calibration(calibration: Calibration, layout: _Layout) -> np.ndarray:
    cal = calibration
    g = cal.global_factors
    params = layout.parameters
    x = [math.log(max(_parameter_value(cal, p.name), 1e-9)) for p in params]
    for family in layout.families:
        x += list(cal.family_offsets.get(family, (0.0, 0.0)))
    for precision in layout.precisions:
        x += list(cal.precision_offsets.get(precision, (0.0, 0.0)))
    for group in layout.groups:
        f = cal.group_factors.get(group)
        family, precision = group.split("/")
        fm, fc = cal.family_offsets.get(family, (0.0, 0.0)) if layout.families else (0.0, 0.0)
        pm, pc = (
            cal.precision_offsets.get(precision, (0.0, 0.0)) if layout.precisions else (0.0, 0.0)
        )
        x += (
            [
                math.log(f.memory_bw_fraction / g.memory_bw_fraction) - fm - pm,
                math.log(f.compute_fraction / g.compute_fraction) - fc - pc,
            ]
            if f
            else [0.0, 0.0]
        )
    x += [cal.software_gain_per_year.get(f, 0.0) for f in layout.software]
    ng = len(params)
    lows = np.log([p.lower for p in params])
    highs = np.log([p.upper for p in params])
    x = np.asarray(x)
    x[:ng] = np.clip(x[:ng], lows + 1e-9, highs - 1e-9)
    return x


def _software_families(calibration: Calibration) -> list[str]:
    """Families whose software-generation rate is fitted: those with runs on several dates."""
    return sorted(calibration.software_dates)


def _newest_dates(cases: Sequence[_RunCase]) -> dict[str, str]:
    """Family -> newest publication date of its runs, for families measured on several dates."""
    dates: dict[str, set[dt.date]] = defaultdict(set)
    if not FIT_SOFTWARE_GENERATION:
        return {}
    for case in cases:
        if case.run.published_on is not None:
            dates[case.group.split("/")[0]].add(case.run.published_on)
    return {f: max(d).isoformat() for f, d in sorted(dates.items()) if len(d) > 1}


def _fit(
    cases: Sequence[_RunCase],
    base: Calibration,
    start: Calibration | None = None,
    max_nfev: int = 120,
) -> Calibration:
    base = dataclasses.replace(base, software_dates=_newest_dates(cases))
    layout = _Layout.of({c.group for c in cases}, base)
    measured = np.log([c.run.output_tokens_per_s for c in cases])
    n = layout.offsets
    nf = len(layout.software)
    params = layout.parameters
    ng = len(params)
    if start is None:
        x0 = np.concatenate([np.log([p.start for p in params]), np.zeros(n + nf)])
    else:
        x0 = _vector_from_calibration(
            dataclasses.replace(
                start, software_dates=base.software_dates, step_model=base.step_model
            ),
            layout,
        )
    lower = np.concatenate([np.log([p.lower for p in params]), np.full(n, -3.0), np.full(nf, -1.0)])
    upper = np.concatenate([np.log([p.upper for p in params]), np.full(n, 3.0), np.full(nf, 1.0)])
    offset_sigmas = layout.offset_prior_sigmas()
    priors = [
        (i, math.log(p.start), math.log(p.prior_factor))
        for i, p in enumerate(params)
        if p.prior_factor
    ]

    timed = [c for c in cases if c.run.latency is not None] if FIT_CONCURRENCY_TPOT else []
    measured_tpot = np.log([c.run.latency.tpot_p50_ms for c in timed])

    def residuals(x: np.ndarray) -> np.ndarray:
        cal = _calibration_from_vector(x, layout, base)
        points = [_predict_case(c, cal) for c in cases]
        predicted = np.array([max(value, 1e-3) for value, _ in points])
        chosen = {c.run.ref_id: tp for c, (_, tp) in zip(cases, points, strict=True)}
        tpot = []
        for case in timed:
            point = concurrency_latency(case, cal, chosen[case.run.ref_id])
            tpot.append(point[1] if point else math.exp(RESIDUAL_CLIP) * 1e3)
        prior = np.concatenate(
            [
                x[ng : ng + n] / offset_sigmas,
                x[ng + n :] / SOFTWARE_RATE_PRIOR_SIGMA,
                [(x[i] - mu) / sigma for i, mu, sigma in priors],
            ]
        )
        # Clip at a factor of 3 so a run whose latency limits become unreachable (prediction 0)
        # cannot dominate the fit.
        errors = np.clip(np.log(predicted) - measured, -RESIDUAL_CLIP, RESIDUAL_CLIP)
        tpot_errors = np.clip(
            np.log(np.maximum(tpot, 1e-3)) - measured_tpot, -RESIDUAL_CLIP, RESIDUAL_CLIP
        )
        return np.concatenate([errors, CONCURRENCY_TPOT_WEIGHT * tpot_errors, prior])

    result = least_squares(
        residuals, x0, bounds=(lower, upper), x_scale=1.0, diff_step=1e-3, max_nfev=max_nfev
    )
    return _calibration_from_vector(result.x, layout, base)


@dataclass(frozen=True, slots=True)
class ErrorRow:
    """Prediction against measurement for one reference run.

    Attributes:
        ref_id: Run key.
        accelerator_slug: Accelerator.
        accelerators: Accelerators in the system.
        model_slug: Model.
        precision: Precision used (``precision_note`` says if inferred).
        scenario: Scenario.
        tensor_parallel: TP degree used (stated or chosen).
        measured_tokens_per_s: Published output tokens/s.
        predicted_tokens_per_s: Engine estimate.
        error_pct: (predicted − measured) / measured × 100.
        abs_error_pct: |error_pct|.
        provenance: Where the factors came from.
        precision_note: Inference note for the precision ("" when declared).
    """

    ref_id: str
    accelerator_slug: str
    accelerators: int
    model_slug: str
    precision: str
    scenario: str
    tensor_parallel: int
    measured_tokens_per_s: float
    predicted_tokens_per_s: float
    error_pct: float
    abs_error_pct: float
    provenance: str
    precision_note: str


@dataclass(frozen=True, slots=True)
class LatencyRow:
    """The engine's TPOT and TTFT against a run's, at the concurrency the run measured
    (:func:`concurrency_latency`).

    Attributes:
        ref_id: Run key.
        accelerator_slug: Accelerator.
        model_slug: Model.
        scenario: server or interactive.
        tensor_parallel: TP degree the engine chose for the run.
        concurrency: Requests in flight per replica (Little's law on the measured figures).
        measured_tpot_ms: Median TPOT the run measured.
        predicted_tpot_ms: The engine's mean TPOT at that concurrency.
        tpot_error_pct: (predicted − measured) / measured × 100.
        measured_ttft_ms: Median TTFT the run measured (with the scheduler's own queueing).
        predicted_ttft_ms: The engine's mean TTFT at that concurrency
            (:data:`CONCURRENCY_TTFT_PERCENTILE`).
        ttft_error_pct: (predicted − measured) / measured × 100.
        measured_ttft_p99_ms: p99 TTFT the run measured, None when not published.
        predicted_ttft_p99_ms: The engine's p99 TTFT at that concurrency (from the queues
            under Poisson arrivals).
        ttft_p99_error_pct: Its signed error %, None without a measured p99.
        rate_ttft_ms: The engine's median TTFT at the run's measured request rate, the
            concurrency found by the engine (:func:`rate_latency`).
        rate_ttft_error_pct: Its signed error % against the measured median.
        rate_saturated: The engine puts the measured rate at or past its capacity (it then
            answers with its saturation point).
    """

    ref_id: str
    accelerator_slug: str
    model_slug: str
    scenario: str
    tensor_parallel: int
    concurrency: float
    measured_tpot_ms: float
    predicted_tpot_ms: float
    tpot_error_pct: float
    measured_ttft_ms: float
    predicted_ttft_ms: float
    ttft_error_pct: float
    measured_ttft_p99_ms: float | None = None
    predicted_ttft_p99_ms: float | None = None
    ttft_p99_error_pct: float | None = None
    rate_ttft_ms: float | None = None
    rate_ttft_error_pct: float | None = None
    rate_saturated: bool = False


@dataclass(frozen=True, slots=True)
class ErrorTable:
    """Per-run errors and their summary.

    Attributes:
        rows: One row per predicted run.
        median_abs_error_pct: Median |error| over all rows.
        max_abs_error_pct: Largest |error|.
        p90_abs_error_pct: 90th percentile of |error| (numpy's linear interpolation).
        by_accelerator: slug -> {"runs", "median_abs_error_pct", "max_abs_error_pct"}.
        by_scenario: scenario -> same.
        by_group: "family/precision" -> same.
        within_35_pct: Share of rows with |error| ≤ 35 %.
        latency: TPOT and TTFT at the measured concurrency of the latency-bounded runs.
        latency_by_scenario: scenario (and "all") -> {"tpot": stats, "ttft": stats}.
    """

    rows: tuple[ErrorRow, ...]
    median_abs_error_pct: float
    max_abs_error_pct: float
    p90_abs_error_pct: float
    by_accelerator: Mapping[str, Mapping[str, float]]
    by_scenario: Mapping[str, Mapping[str, float]]
    by_group: Mapping[str, Mapping[str, float]]
    within_35_pct: float
    latency: tuple[LatencyRow, ...] = ()
    latency_by_scenario: Mapping[str, Mapping[str, Mapping[str, float]]] = field(
        default_factory=dict
    )


def _stats(errors: Sequence[float]) -> dict[str, float]:
    return {
        "runs": len(errors),
        "median_abs_error_pct": round(float(np.median(errors)), 2) if errors else 0.0,
        "p90_abs_error_pct": round(float(np.percentile(errors, 90)), 2) if errors else 0.0,
        "max_abs_error_pct": round(float(np.max(errors)), 2) if errors else 0.0,
    }


def _latency_stats(rows: Sequence[LatencyRow]) -> dict[str, dict[str, Mapping[str, float]]]:
    by: dict[str, list[LatencyRow]] = defaultdict(list)
    for row in rows:
        by["all"].append(row)
        by[row.scenario].append(row)
    return {
        name: {
            "tpot": _stats([abs(r.tpot_error_pct) for r in group]),
            "ttft": _stats([abs(r.ttft_error_pct) for r in group]),
            "ttft_p99": _stats(
                [abs(r.ttft_p99_error_pct) for r in group if r.ttft_p99_error_pct is not None]
            ),
            "ttft_at_rate": {
                **_stats(
                    [abs(r.rate_ttft_error_pct) for r in group if r.rate_ttft_error_pct is not None]
                ),
                "saturated": sum(r.rate_saturated for r in group),
                "unanswered": sum(r.rate_ttft_ms is None for r in group),
                "beyond_2x": sum(
                    r.rate_ttft_error_pct is not None
                    and not -50.0 <= r.rate_ttft_error_pct <= 100.0
                    for r in group
                ),
            },
        }
        for name, group in sorted(by.items())
    }


def _table(
    rows: Sequence[ErrorRow],
    group_of: Mapping[str, str],
    latency: Sequence[LatencyRow] = (),
) -> ErrorTable:
    errors = [r.abs_error_pct for r in rows]
    by_acc: dict[str, list[float]] = defaultdict(list)
    by_scn: dict[str, list[float]] = defaultdict(list)
    by_grp: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        by_acc[r.accelerator_slug].append(r.abs_error_pct)
        by_scn[r.scenario].append(r.abs_error_pct)
        by_grp[group_of[r.ref_id]].append(r.abs_error_pct)
    return ErrorTable(
        rows=tuple(rows),
        median_abs_error_pct=float(np.median(errors)) if errors else 0.0,
        max_abs_error_pct=float(np.max(errors)) if errors else 0.0,
        p90_abs_error_pct=float(np.percentile(errors, 90)) if errors else 0.0,
        by_accelerator={k: _stats(v) for k, v in sorted(by_acc.items())},
        by_scenario={k: _stats(v) for k, v in sorted(by_scn.items())},
        by_group={k: _stats(v) for k, v in sorted(by_grp.items())},
        within_35_pct=float(np.mean([e <= 35.0 for e in errors])) if errors else 0.0,
        latency=tuple(latency),
        latency_by_scenario=_latency_stats(latency),
    )


def _signed_error_pct(predicted: float, measured: float) -> float:
    """(predicted − measured) / measured × 100: positive when the prediction is above."""
    return (predicted - measured) / measured * 100.0


def _latency_rows_for(cases: Sequence[_RunCase], calibration: Calibration) -> list[LatencyRow]:
    """TPOT and TTFT at the measured concurrency for every run that measured latency."""
    rows = []
    for case in cases:
        run, latency = case.run, case.run.latency
        if latency is None:
            continue
        _, tp = _predict_case(case, calibration)
        point = concurrency_latency(case, calibration, tp) if tp else None
        if point is None:
            continue
        batch, tpot, ttft = point
        ttft_p99 = concurrency_latency(case, calibration, tp, 99.0)[2]
        load = rate_latency(case, calibration, tp)
        rate_ttft = load.ttft_p50_ms if load and math.isfinite(load.ttft_p50_ms) else None
        measured_p99 = latency.ttft_p99_ms
        rows.append(
            LatencyRow(
                ref_id=run.ref_id,
                accelerator_slug=run.accelerator_slug,
                model_slug=run.model_slug,
                scenario=run.scenario,
                tensor_parallel=tp,
                concurrency=round(batch, 1),
                measured_tpot_ms=latency.tpot_p50_ms,
                predicted_tpot_ms=round(tpot, 3),
                tpot_error_pct=round(_signed_error_pct(tpot, latency.tpot_p50_ms), 2),
                measured_ttft_ms=latency.ttft_p50_ms,
                predicted_ttft_ms=round(ttft, 3),
                ttft_error_pct=round(_signed_error_pct(ttft, latency.ttft_p50_ms), 2),
                measured_ttft_p99_ms=measured_p99,
                predicted_ttft_p99_ms=round(ttft_p99, 3),
                ttft_p99_error_pct=round(_signed_error_pct(ttft_p99, measured_p99), 2)
                if measured_p99
                else None,
                rate_ttft_ms=None if rate_ttft is None else round(rate_ttft, 3),
                rate_ttft_error_pct=None
                if rate_ttft is None
                else round(_signed_error_pct(rate_ttft, latency.ttft_p50_ms), 2),
                rate_saturated=bool(load and load.saturated),
            )
        )
    return rows


def _scored(
    cases: Sequence[_RunCase], calibration: Calibration
) -> tuple[list[ErrorRow], list[LatencyRow]]:
    """Throughput rows and latency rows of ``cases`` under one calibration."""
    return _rows_for(cases, calibration), _latency_rows_for(cases, calibration)


def _rows_for(cases: Sequence[_RunCase], calibration: Calibration) -> list[ErrorRow]:
    rows = []
    for case in cases:
        run = case.run
        value, tp = _predict_case(case, calibration)
        err = _signed_error_pct(value, run.output_tokens_per_s)
        factors = calibration.factors_for(case.group.split("/")[0], run.precision)
        rows.append(
            ErrorRow(
                ref_id=run.ref_id,
                accelerator_slug=run.accelerator_slug,
                accelerators=run.accelerators,
                model_slug=run.model_slug,
                precision=run.precision,
                scenario=run.scenario,
                tensor_parallel=tp,
                measured_tokens_per_s=run.output_tokens_per_s,
                predicted_tokens_per_s=round(value, 2),
                error_pct=round(err, 2),
                abs_error_pct=round(abs(err), 2),
                provenance=factors.provenance,
                precision_note=run.precision_note,
            )
        )
    return rows


def error_table(
    runs: Iterable[BenchmarkRun],
    accelerators: Mapping[str, AcceleratorSpec],
    models: Mapping[str, ModelSpec],
    calibration: Calibration,
) -> ErrorTable:
    """Predict every usable run with ``calibration`` and tabulate the errors.

    Runs that :func:`usable_runs` excludes, or that the engine finds infeasible, are not rows.

    Returns:
        The error table with summaries overall, by accelerator, scenario and group.
    """
    usable, _ = usable_runs(runs, accelerators, models)
    cases = [
        _prepare(r, accelerators[r.accelerator_slug], models[r.model_slug], calibration)
        for r in usable
    ]
    cases = [c for c in cases if c.infeasible_reason is None]
    return _table(*_scored_table_args(cases, calibration))


def _scored_table_args(cases: Sequence[_RunCase], calibration: Calibration) -> tuple:
    rows, latency = _scored(cases, calibration)
    return rows, {c.run.ref_id: c.group for c in cases}, latency


@dataclass(frozen=True, slots=True)
class CalibrationFit:
    """Result of :func:`fit_calibration`.

    Attributes:
        calibration: The fitted calibration (with run counts and error bands filled in).
        table: In-sample error table.
        holdout_family: Errors when each family is left out of the fit (its runs then use the
            global factors: the "roofline only" case).
        holdout_accelerator: Errors when each accelerator is left out of the fit.
        excluded: (ref_id, reason) for every run not used.
        assumptions: Assumptions made about the reference data.
        splits: Time, family and precision split validations (fresh refits), empty when
            not run.
        error_bands: :func:`error_bands` of the splits, None when they were not run.
        static_batch: The static-batch runs scored without being fitted
            (:func:`static_batch_table`), None when fitted or not run.
    """

    calibration: Calibration
    table: ErrorTable
    holdout_family: ErrorTable | None
    holdout_accelerator: ErrorTable | None
    excluded: tuple[tuple[str, str], ...]
    assumptions: tuple[str, ...]
    splits: tuple[SplitValidation, ...] = ()
    error_bands: dict | None = None
    static_batch: ErrorTable | None = None


def _holdout(
    cases: Sequence[_RunCase], base: Calibration, key: str, start: Calibration
) -> ErrorTable:
    """k-fold by hardware: refit without each fold's runs and predict them."""
    folds: dict[str, list[_RunCase]] = defaultdict(list)
    for case in cases:
        fold = case.group.split("/")[0] if key == "family" else case.run.accelerator_slug
        folds[fold].append(case)
    rows: list[ErrorRow] = []
    for held in folds.values():
        train = [c for c in cases if c not in held]
        if not train:
            continue
        cal = _fit(train, base, start=start, max_nfev=10)
        rows.extend(_rows_for(held, cal))
    return _table(rows, {c.run.ref_id: c.group for c in cases})


# --- validation the way the planner is used: on runs the fit has not seen --------------------

T = TypeVar("T")


def time_split(
    items: Iterable[T], cutoff: dt.date, published_on: Callable[[T], dt.date | None]
) -> tuple[list[T], list[T]]:
    """Split items into those published before ``cutoff`` and those published on or after it.

    Items whose publication date is unknown are in neither list: they can be neither trained
    on as "past" nor scored as "future".

    Returns:
        (before, on_or_after), each in input order.
    """
    before: list[T] = []
    after: list[T] = []
    for item in items:
        published = published_on(item)
        if published is None:
            continue
        (before if published < cutoff else after).append(item)
    return before, after


def leave_one_out(
    items: Iterable[T], key: Callable[[T], str]
) -> list[tuple[str, list[T], list[T]]]:
    """Folds that each hold out every item of one key value (a family, a precision).

    Returns:
        [(held-out key value, training items, held-out items)] in key order; a value that
        holds every item has no training data and gives no fold.
    """
    items = list(items)
    folds = []
    for value in sorted({key(item) for item in items}):
        held = [item for item in items if key(item) == value]
        train = [item for item in items if key(item) != value]
        if train:
            folds.append((value, train, held))
    return folds


@dataclass(frozen=True, slots=True)
class SplitValidation:
    """Errors on runs held out of the fit.

    Attributes:
        name: "time", "family" or "precision".
        description: What was held out, in one sentence.
        folds: (held-out label, training runs, held-out runs) per refit.
        table: Errors of the held-out runs, each predicted by the fit that did not see it.
    """

    name: str
    description: str
    folds: tuple[tuple[str, int, int], ...]
    table: ErrorTable


def _refit_rows(
    train: Sequence[_RunCase], held: Sequence[_RunCase], base: Calibration
) -> tuple[list[ErrorRow], list[LatencyRow]]:
    """One fold of a split: refit on ``train``, score ``held`` (a worker process's job)."""
    return _scored(held, _fit(train, base))


def _split_validation(
    name: str,
    description: str,
    folds: Sequence[tuple[str, Sequence[_RunCase], Sequence[_RunCase]]],
    fold_rows: Sequence[tuple[Sequence[ErrorRow], Sequence[LatencyRow]]],
    group_of: Mapping[str, str],
) -> SplitValidation:
    """A split's validation from each fold's held-out rows (see :func:`validate_splits`)."""
    return SplitValidation(
        name=name,
        description=description,
        folds=tuple((label, len(train), len(held)) for label, train, held in folds),
        table=_table(
            [row for rows, _ in fold_rows for row in rows],
            group_of,
            [row for _, latency in fold_rows for row in latency],
        ),
    )


def validate_splits(
    cases: Sequence[_RunCase],
    base: Calibration,
    cutoff: dt.date = DEFAULT_TIME_CUTOFF,
    workers: int = 1,
) -> tuple[SplitValidation, ...]:
    """Time split, leave-one-family-out and leave-one-precision-out errors (slow: one fit each).

    Each fold is a fresh fit from the roofline start on its training runs (not warm-started
    from the full fit) so nothing about the held-out runs leaks into the parameters; a
    held-out group the training runs lack falls back to the global factors, as an
    uncalibrated accelerator does in the planner.

    Args:
        cases: Prepared usable runs.
        base: Calibration whose non-fitted settings (memory utilisation, scheduler cap, TPOT
            tail ratio) the refits keep.
        cutoff: Runs published before it are fitted, the others predicted.
        workers: Processes to refit the folds in (1: in this process; same results).

    Returns:
        The time, family and precision validations, in that order (the time split is left
        out when no run is published on either side of the cutoff).
    """
    group_of = {c.run.ref_id: c.group for c in cases}
    splits: list[tuple[str, str, list]] = []
    before, after = time_split(cases, cutoff, lambda c: c.run.published_on)
    if before and after:
        rounds = sorted({c.run.source_round for c in after})
        splits.append(
            (
                "time",
                f"fitted on the {len(before)} runs published before {cutoff.isoformat()}, "
                f"predicting the {len(after)} later ones ({', '.join(rounds)})",
                [(f"from {cutoff.isoformat()}", before, after)],
            )
        )
    for name, key, what in (
        ("family", lambda c: c.group.split("/")[0], "accelerator family"),
        ("precision", lambda c: c.group.split("/")[1], "precision"),
    ):
        folds = leave_one_out(cases, key)
        if folds:
            splits.append(
                (
                    name,
                    f"each {what} in turn fitted without its runs and predicted "
                    f"({', '.join(label for label, _, _ in folds)})",
                    folds,
                )
            )
    every_fold = [(train, held) for _, _, folds in splits for _, train, held in folds]
    if workers > 1 and len(every_fold) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(workers, len(every_fold))) as pool:
            jobs = [pool.submit(_refit_rows, train, held, base) for train, held in every_fold]
            fold_rows = [job.result() for job in jobs]
    else:
        fold_rows = [_refit_rows(train, held, base) for train, held in every_fold]
    results = []
    for name, description, folds in splits:
        results.append(
            _split_validation(name, description, folds, fold_rows[: len(folds)], group_of)
        )
        fold_rows = fold_rows[len(folds) :]
    return tuple(results)


# A calibrated group needs this many runs after the time split's cut-off for a band of its own.
MIN_BAND_RUNS = 5


def _band(stats: Mapping | None) -> dict | None:
    if not stats or not stats.get("runs"):
        return None
    return {k: stats[k] for k in ("runs", "median_abs_error_pct", "p90_abs_error_pct")}


def error_bands(splits: Mapping[str, Mapping], architecture_runs: Mapping[str, int]) -> dict:
    """Held-out error bands by how near an estimate is to the fit, for
    :mod:`planner.engine.uncertainty`.

    * a calibrated "family/precision" group: its runs in the time split (new runs of hardware
      the fit knows), when it has at least ``MIN_BAND_RUNS`` of them, else all of the time
      split;
    * a calibrated family at a precision it was not measured at: the precision split;
    * a family with no reference runs: the family split.

    Args:
        splits: The stored split summaries (``summary.splits`` of the JSON).
        architecture_runs: Architecture class -> reference runs.

    Returns:
        {"groups", "calibrated", "other_precision", "roofline", "architecture_runs"}, each
        band {"runs", "median_abs_error_pct", "p90_abs_error_pct"} or None.
    """
    time = splits.get("time") or {}
    groups = {
        g: _band(st)
        for g, st in sorted((time.get("by_group") or {}).items())
        if st.get("runs", 0) >= MIN_BAND_RUNS
    }
    return {
        "groups": groups,
        "calibrated": _band(time),
        "other_precision": _band(splits.get("precision")),
        "roofline": _band(splits.get("family")),
        "architecture_runs": dict(sorted(architecture_runs.items())),
    }


def architecture_runs(cases: Sequence[_RunCase], models: Mapping[str, ModelSpec]) -> dict[str, int]:
    """Reference runs per architecture class (:func:`uncertainty.architecture_class`)."""
    counts: dict[str, int] = defaultdict(int)
    for case in cases:
        counts[architecture_class(models[case.run.model_slug])] += 1
    return dict(counts)


def fit_assumptions(tpot_ratio: float, calibration: Calibration | None = None) -> tuple[str, ...]:
    """What the fit assumes about the reference data and the model, one sentence each (the
    switches above decide which sentences apply)."""
    blackwell = (
        "MLPerf Blackwell runs (B200, GB200) are taken as fp4 (NVFP4) with an FP8 KV cache, "
        "as NVIDIA describes its submissions (data README)"
        if BLACKWELL_MLPERF_FP4
        else "MLPerf Blackwell runs (B200, GB200) without a declared precision are taken as "
        "fp8 (BLACKWELL_MLPERF_FP4 off), although NVIDIA describes them as NVFP4"
    )
    static = (
        "static-batch latency runs (ROCm vLLM, batch 1-128) are fitted as B × output / e2e s"
        if USE_BATCH_LATENCY_RUNS
        else "static-batch latency runs (ROCm vLLM, batch 1-128) are left out of the fit "
        "(USE_BATCH_LATENCY_RUNS off)"
    )
    software = (
        "software improves with time: each family's efficiency scales by exp(rate × years "
        "before its newest runs), the rate fitted per family (prior 0 ± "
        f"{SOFTWARE_RATE_PRIOR_SIGMA}/year); estimates assume the newest stack"
        if FIT_SOFTWARE_GENERATION
        else "one software generation per family (FIT_SOFTWARE_GENERATION off): factors "
        "average the stacks of the family's runs"
    )
    if (calibration.step_model if calibration else STEP_MODEL) == "kernels":
        overhead = (
            "a step is the sum of its kernels, each on its own roofline (weight GEMMs with a "
            "tile utilisation M/(M + M½), routed experts, decode attention reading the KV "
            "cache, prefill attention, element-wise traffic, all-reduces); the costs outside "
            "the kernels are physical (CUDA-graph launch gaps a layer, scheduler and sampler a "
            "step, host work a sequence) with log-normal priors around 4 µs, 0.3 ms and 2 µs"
        )
    else:
        overhead = (
            "one max(memory, compute) over the whole step; the per-layer and per-step "
            "overheads are fitted within wide bounds (0.1-50 µs a layer, 0.01-20 ms a step)"
        )
    if calibration is not None:
        params = fit_parameters(calibration.step_model)
        on_bound = [
            p.name
            for p in params
            if p.name not in {"eta_m", "eta_c"}
            and not p.lower * 1.01 <= _parameter_value(calibration, p.name) <= p.upper * 0.99
        ]
        overhead += (
            f"; fitted {calibration.step_overhead_us_per_layer:.1f} µs a layer + "
            f"{calibration.step_overhead_ms:.2f} ms a step + "
            f"{calibration.step_overhead_us_per_seq:.1f} µs a sequence, all-reduce latency "
            f"{calibration.allreduce_base_us:.1f} µs"
            + (f" ({', '.join(on_bound)} on a bound)" if on_bound else ", none on a bound")
        )
    efficiency = (
        "efficiency per family and per precision: log η = global + family offset + precision "
        f"offset + the group's own deviation (prior widths {PRIOR_SIGMA}, {PRIOR_SIGMA}, "
        f"{INTERACTION_SIGMA}); an unmeasured pair composes its family and its precision"
        if PRECISION_OFFSETS
        else f"efficiency per family/precision group (prior width {PRIOR_SIGMA} around the "
        "global factors); an unmeasured precision borrows the family's other groups"
    )
    concurrency = (
        "MLPerf server and interactive runs: the TPOT at the concurrency they measured (Little's "
        f"law) is fitted beside their throughput (weight {CONCURRENCY_TPOT_WEIGHT:g})"
        if FIT_CONCURRENCY_TPOT
        else "MLPerf server and interactive runs: the TPOT and TTFT at the concurrency they "
        "measured (Little's law) are scored, not fitted"
    )
    return (
        "lengths are the dataset means (MLPerf) or the fixed ISL/OSL (TensorRT-LLM)",
        "MLPerf runs without a declared precision on Hopper/MI3xx are taken as fp8",
        blackwell,
        "fp16 checkpoints declared with a 'quantization' weight transform on FP8-capable "
        "hardware are taken as fp8",
        "FP8 and FP4 runs use an FP8 KV cache; BF16 runs a BF16 KV cache",
        "MLPerf prompt lengths vary: TTFT percentiles use a prompt of the dataset mean × 3.56 "
        "at p99 (OpenOrca p99/mean, 791/222.33)",
        "when a run does not state its TP degree the engine picks the best one for N devices",
        "accelerator memory is vendor GB × 2**30 bytes (HBM and GDDR come in GiB), as the "
        "planner plans; TensorRT-LLM runs (ref ids with '-trt-' and the TensorRT-LLM tables) "
        "use TensorRT-LLM's KV rule, the others vLLM's",
        static,
        software,
        overhead,
        efficiency,
        concurrency,
        f"TPOT p99/mean = {tpot_ratio:.3f}, the median p99/p50 TPOT ratio of the MLPerf runs",
    )


def fit_calibration(
    runs: Iterable[BenchmarkRun],
    accelerators: Mapping[str, AcceleratorSpec],
    models: Mapping[str, ModelSpec],
    base: Calibration | None = None,
    holdout: bool = True,
    tpot_p99_over_mean: float | None = None,
    splits: bool = False,
    time_cutoff: dt.date = DEFAULT_TIME_CUTOFF,
    workers: int = 1,
) -> CalibrationFit:
    """Fit efficiency factors to the reference runs.

    Parameters: global η_m, η_c, scale-up link efficiency and per-layer step overhead, plus a
    log-offset of η_m and η_c per "family/precision" group with a Gaussian prior of width
    ``PRIOR_SIGMA`` around the global values (ridge penalty in the residual vector); the loss is
    the squared log error of output tokens/s. The TP degree of runs that do not state it is
    re-chosen by the engine on every evaluation.

    Args:
        runs: Runs from :func:`load_benchmark_runs`.
        accelerators: Accelerator specs by slug.
        models: Model specs by slug.
        base: Starting calibration (defaults: roofline factors 0.8 / 0.7).
        holdout: Also run the leave-one-family-out and leave-one-accelerator-out checks.
        tpot_p99_over_mean: TPOT tail ratio to store (see :func:`tpot_p99_over_p50`); the
            base calibration's value when None.
        splits: Also run the time, family and precision split validations
            (:func:`validate_splits`).
        time_cutoff: Publication date of the time split.
        workers: Processes for the split refits.

    Returns:
        The fit.
    """
    base = base or Calibration(step_model=STEP_MODEL)
    runs = list(runs)
    usable, excluded = usable_runs(runs, accelerators, models)
    excluded_pairs = [(r.ref_id, reason) for r, reason in excluded]
    cases = []
    for run in usable:
        case = _prepare(run, accelerators[run.accelerator_slug], models[run.model_slug], base)
        if case.infeasible_reason:
            excluded_pairs.append(
                (run.ref_id, f"the planner's memory model finds no fit: {case.infeasible_reason}")
            )
        else:
            cases.append(case)
    tpot_ratio = tpot_p99_over_mean or base.tpot_p99_over_mean
    base = dataclasses.replace(base, tpot_p99_over_mean=tpot_ratio)
    fitted = _fit(cases, base)
    table = _table(*_scored_table_args(cases, fitted))
    holdout_family = _holdout(cases, base, "family", fitted) if holdout else None
    holdout_accel = _holdout(cases, base, "accelerator", fitted) if holdout else None
    split_results = validate_splits(cases, base, time_cutoff, workers) if splits else ()
    group_runs = {g: int(s["runs"]) for g, s in table.by_group.items()}
    group_error = {g: float(s["median_abs_error_pct"]) for g, s in table.by_group.items()}
    global_error = (
        holdout_family.median_abs_error_pct if holdout_family else table.median_abs_error_pct
    )
    calibration = dataclasses.replace(
        fitted,
        group_runs=group_runs,
        group_error_pct=group_error,
        global_error_pct=round(global_error, 2),
        version=CALIBRATION_VERSION,
        fitted_at=dt.date.today().isoformat(),
    )
    assumptions = fit_assumptions(tpot_ratio, fitted)
    return CalibrationFit(
        calibration=calibration,
        table=table,
        holdout_family=holdout_family,
        holdout_accelerator=holdout_accel,
        excluded=tuple(excluded_pairs),
        assumptions=assumptions,
        splits=split_results,
        error_bands=(
            error_bands(_splits_json(split_results), architecture_runs(cases, models))
            if split_results
            else None
        ),
    )


def tpot_p99_over_p50(path: str | Path) -> float:
    """Median p99/p50 TPOT ratio over the runs of a benchmarks CSV that report both."""
    values: dict[str, dict[str, float]] = defaultdict(dict)
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["metric"] in {"tpot_ms_p50", "tpot_ms_p99"}:
                values[row["ref_id"]][row["metric"]] = float(row["value"])
    ratios = [v["tpot_ms_p99"] / v["tpot_ms_p50"] for v in values.values() if len(v) == 2]
    return float(np.median(ratios)) if ratios else 1.15


# --- persistence ---------------------------------------------------------------------------


def _table_json(table: ErrorTable | None, with_rows: bool) -> dict | None:
    if table is None:
        return None
    data = {
        "runs": len(table.rows),
        "median_abs_error_pct": round(table.median_abs_error_pct, 2),
        "p90_abs_error_pct": round(table.p90_abs_error_pct, 2),
        "max_abs_error_pct": round(table.max_abs_error_pct, 2),
        "within_35_pct_share": round(table.within_35_pct, 4),
        "by_scenario": table.by_scenario,
        "by_accelerator": table.by_accelerator,
        "by_group": table.by_group,
        "latency_at_concurrency": table.latency_by_scenario,
    }
    if with_rows:
        data["rows"] = [dataclasses.asdict(r) for r in table.rows]
        data["latency_rows"] = [dataclasses.asdict(r) for r in table.latency]
    return data


def _splits_json(splits: Sequence[SplitValidation]) -> dict:
    return {
        split.name: {
            "description": split.description,
            "folds": [{"held_out": h, "train_runs": t, "held_runs": n} for h, t, n in split.folds],
            **(_table_json(split.table, with_rows=False) or {}),
            "within_2x": within_factor(split.table),
        }
        for split in splits
    }


TARGET = (
    "out of sample (time split, else family split): median abs error <= 15 %, "
    "no run more than 2x off in either direction"
)


def within_factor(table: ErrorTable, factor: float = 2.0) -> bool:
    """True when every row's prediction is within ×/÷ ``factor`` of the measurement."""
    return all(1.0 / factor <= 1.0 + r.error_pct / 100.0 <= factor for r in table.rows)


def target_met(splits: Sequence[SplitValidation]) -> bool:
    """The DESIGN.md accuracy target, judged on runs the fit did not see."""
    held = {split.name: split.table for split in splits}
    table = held.get("time") or held.get("family")
    if table is None:
        return False
    return table.median_abs_error_pct <= 15.0 and within_factor(table)


def save_calibration(fit: CalibrationFit, path: str | Path = DEFAULT_CALIBRATION_PATH) -> None:
    """Write a fit to the versioned JSON data file."""
    cal = fit.calibration
    family_runs: dict[str, int] = defaultdict(int)
    for group, runs in cal.group_runs.items():
        family_runs[group.split("/")[0]] += runs
    data = {
        "version": cal.version,
        "fitted_at": cal.fitted_at,
        "method": (
            "scipy.optimize.least_squares on log(predicted/measured) output tokens/s; "
            f"per family/precision log-offsets of eta_m and eta_c with prior sigma {PRIOR_SIGMA}"
        ),
        "parameters": {
            "global": dataclasses.asdict(cal.global_factors),
            "groups": {k: dataclasses.asdict(v) for k, v in sorted(cal.group_factors.items())},
            "family_offsets": {k: list(v) for k, v in sorted(cal.family_offsets.items())},
            "precision_offsets": {k: list(v) for k, v in sorted(cal.precision_offsets.items())},
            "link_bw_fraction": cal.link_bw_fraction,
            "pcie_link_bw_fraction": cal.pcie_link_bw_fraction,
            "allreduce_base_us": cal.allreduce_base_us,
            "allreduce_hop_us": cal.allreduce_hop_us,
            "step_overhead_us_per_layer": cal.step_overhead_us_per_layer,
            "step_overhead_ms": cal.step_overhead_ms,
            "step_overhead_us_per_seq": cal.step_overhead_us_per_seq,
            "prefill_compute_ratio": cal.prefill_compute_ratio,
            "moe_compute_ratio": cal.moe_compute_ratio,
            "kv_read_bw_ratio": cal.kv_read_bw_ratio,
            "step_model": cal.step_model,
            "gemm_half_tokens": cal.gemm_half_tokens,
            "attention_compute_ratio": cal.attention_compute_ratio,
            "activation_traffic_ratio": cal.activation_traffic_ratio,
            "max_num_seqs": cal.max_num_seqs,
            "gpu_memory_utilization": cal.gpu_memory_utilization,
            "tpot_p99_over_mean": cal.tpot_p99_over_mean,
            "software_gain_per_year": dict(sorted(cal.software_gain_per_year.items())),
            "software_dates": dict(sorted(cal.software_dates.items())),
        },
        "group_runs": dict(sorted(cal.group_runs.items())),
        "family_runs": dict(sorted(family_runs.items())),
        "group_error_pct": dict(sorted(cal.group_error_pct.items())),
        "global_error_pct": cal.global_error_pct,
        "summary": {
            "in_sample": _table_json(fit.table, with_rows=False),
            "holdout_by_family": _table_json(fit.holdout_family, with_rows=False),
            "holdout_by_accelerator": _table_json(fit.holdout_accelerator, with_rows=False),
            "splits": _splits_json(fit.splits),
            "static_batch_not_fitted": _static_batch_json(fit.static_batch),
            "target": TARGET,
            "target_met": target_met(fit.splits),
        },
        "error_bands": fit.error_bands,
        "assumptions": list(fit.assumptions),
        "excluded": [{"ref_id": ref, "reason": reason} for ref, reason in fit.excluded],
        "rows": [dataclasses.asdict(r) for r in fit.table.rows],
        "latency_rows": [dataclasses.asdict(r) for r in fit.table.latency],
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _band_pair(band: Mapping | None) -> tuple[float, float] | None:
    if not band:
        return None
    return float(band["median_abs_error_pct"]), float(band["p90_abs_error_pct"])


def load_calibration(path: str | Path = DEFAULT_CALIBRATION_PATH) -> Calibration:
    """Read the calibration JSON written by :func:`save_calibration`.

    Args:
        path: JSON path (default: the packaged ``data/calibration.json``).

    Returns:
        The calibration; roofline defaults when the file does not exist.
    """
    path = Path(path)
    if not path.exists():
        return Calibration()
    data = json.loads(path.read_text(encoding="utf-8"))
    params = data["parameters"]
    bands = data.get("error_bands") or {}
    return Calibration(
        global_factors=EfficiencyFactors(**params["global"]),
        group_factors={k: EfficiencyFactors(**v) for k, v in params["groups"].items()},
        family_offsets={
            k: (float(v[0]), float(v[1])) for k, v in (params.get("family_offsets") or {}).items()
        },
        precision_offsets={
            k: (float(v[0]), float(v[1]))
            for k, v in (params.get("precision_offsets") or {}).items()
        },
        link_bw_fraction=params["link_bw_fraction"],
        pcie_link_bw_fraction=params["pcie_link_bw_fraction"],
        allreduce_base_us=params["allreduce_base_us"],
        allreduce_hop_us=params["allreduce_hop_us"],
        step_overhead_us_per_layer=params["step_overhead_us_per_layer"],
        step_overhead_ms=params["step_overhead_ms"],
        step_overhead_us_per_seq=float(params.get("step_overhead_us_per_seq", 0.0)),
        prefill_compute_ratio=params["prefill_compute_ratio"],
        moe_compute_ratio=params["moe_compute_ratio"],
        kv_read_bw_ratio=params["kv_read_bw_ratio"],
        step_model=str(params.get("step_model", "roofline")),
        gemm_half_tokens=float(params.get("gemm_half_tokens", 0.0)),
        attention_compute_ratio=float(params.get("attention_compute_ratio", 1.0)),
        activation_traffic_ratio=float(params.get("activation_traffic_ratio", 0.0)),
        max_num_seqs=int(params["max_num_seqs"]),
        gpu_memory_utilization=params["gpu_memory_utilization"],
        tpot_p99_over_mean=params["tpot_p99_over_mean"],
        software_gain_per_year={
            k: float(v) for k, v in (params.get("software_gain_per_year") or {}).items()
        },
        software_dates=dict(params.get("software_dates") or {}),
        group_runs={k: int(v) for k, v in data["group_runs"].items()},
        group_error_pct={k: float(v) for k, v in data["group_error_pct"].items()},
        global_error_pct=float(data["global_error_pct"]),
        group_band_pct={g: _band_pair(st) for g, st in (bands.get("groups") or {}).items()},
        calibrated_band_pct=_band_pair(bands.get("calibrated")),
        other_precision_band_pct=_band_pair(bands.get("other_precision")),
        roofline_band_pct=_band_pair(bands.get("roofline")),
        architecture_runs={k: int(v) for k, v in (bands.get("architecture_runs") or {}).items()},
        version=str(data["version"]),
        fitted_at=str(data["fitted_at"]),
    )


def _reference_cases(
    data_dir: Path, calibration: Calibration, static_batch_only: bool = False
) -> tuple[list[_RunCase], Mapping[str, AcceleratorSpec], Mapping[str, ModelSpec]]:
    """The feasible reference runs prepared under ``calibration``; with ``static_batch_only``
    the static-batch latency runs alone (read whatever :data:`USE_BATCH_LATENCY_RUNS` says)."""

    accelerators = load_accelerators_csv(data_dir / "accelerators.csv")
    models = load_models_csv(data_dir / "models.csv")
    runs = load_benchmark_runs(
        data_dir / "benchmarks_public.csv", accelerators, True if static_batch_only else None
    )
    if static_batch_only:
        runs = [r for r in runs if r.scenario == "batch_latency"]
    usable, _ = usable_runs(runs, accelerators, models)
    cases = [
        _prepare(r, accelerators[r.accelerator_slug], models[r.model_slug], calibration)
        for r in usable
    ]
    return [c for c in cases if c.infeasible_reason is None], accelerators, models


def static_batch_table(data_dir: str | Path, calibration: Calibration) -> ErrorTable | None:
    """The static-batch latency runs (ROCm vLLM, 8 × MI300X, batch 1-128) scored with a
    calibration that was not fitted on them (:data:`USE_BATCH_LATENCY_RUNS` off): the step
    time at low batch, where launch gaps, scheduling and all-reduce latency show. None when
    they are part of the fit or the data has none."""
    if USE_BATCH_LATENCY_RUNS:
        return None
    cases, _, _ = _reference_cases(Path(data_dir), calibration, static_batch_only=True)
    if not cases:
        return None
    return _table(_rows_for(cases, calibration), {c.run.ref_id: c.group for c in cases})


def _static_batch_json(table: ErrorTable | None) -> dict | None:
    data = _table_json(table, with_rows=False)
    if data is None:
        return None
    errors = [r.error_pct for r in table.rows]
    return {**data, "median_error_pct": round(float(np.median(errors)), 2)}


def update_split_validation(
    data_dir: str | Path,
    path: str | Path = DEFAULT_CALIBRATION_PATH,
    time_cutoff: dt.date = DEFAULT_TIME_CUTOFF,
    workers: int = 1,
) -> tuple[SplitValidation, ...]:
    """Add the split validations to a stored calibration without refitting it.

    The fitted parameters, rows, group errors and hold-out summaries stay as they are; the
    in-sample summary is recomputed from the stored parameters (same figures, plus the p90)
    and ``summary.splits`` is replaced.

    Returns:
        The split validations written.
    """
    data_dir, path = Path(data_dir), Path(path)
    calibration = load_calibration(path)
    cases, _, models = _reference_cases(data_dir, calibration)
    in_sample = _table(*_scored_table_args(cases, calibration))
    splits = validate_splits(cases, calibration, time_cutoff, workers)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["summary"]["in_sample"] = _table_json(in_sample, with_rows=False)
    data["summary"]["splits"] = _splits_json(splits)
    data["summary"]["static_batch_not_fitted"] = _static_batch_json(
        static_batch_table(data_dir, calibration)
    )
    data["summary"]["target"] = TARGET
    data["summary"]["target_met"] = target_met(splits)
    data["error_bands"] = error_bands(data["summary"]["splits"], architecture_runs(cases, models))
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return splits


def build_calibration(
    data_dir: str | Path,
    path: str | Path = DEFAULT_CALIBRATION_PATH,
    holdout: bool = True,
    splits: bool = True,
    time_cutoff: dt.date = DEFAULT_TIME_CUTOFF,
    workers: int = 1,
) -> CalibrationFit:
    """Fit on the reference CSVs in ``data_dir`` and write the JSON data file.

    Args:
        data_dir: Directory with accelerators.csv, models.csv, servers.csv and
            benchmarks_public.csv (``catalog/data``).
        path: Output JSON path.
        holdout: Run the k-fold by hardware checks (slow: one refit per fold).
        splits: Run the time, family and precision split validations (slow: fresh refits).
        time_cutoff: Publication date of the time split.
        workers: Processes for the split refits.

    Returns:
        The fit that was saved.
    """

    data_dir = Path(data_dir)
    accelerators = load_accelerators_csv(data_dir / "accelerators.csv")
    models = load_models_csv(data_dir / "models.csv")
    bench = data_dir / "benchmarks_public.csv"
    runs = load_benchmark_runs(bench, accelerators)
    fit = fit_calibration(
        runs,
        accelerators,
        models,
        holdout=holdout,
        tpot_p99_over_mean=tpot_p99_over_p50(bench),
        splits=splits,
        time_cutoff=time_cutoff,
        workers=workers,
    )
    fit = dataclasses.replace(fit, static_batch=static_batch_table(data_dir, fit.calibration))
    save_calibration(fit, path)
    return fit


if __name__ == "__main__":  # python -m planner.engine.calibration catalog/data
    import sys

    result = build_calibration(sys.argv[1] if len(sys.argv) > 1 else "catalog/data")
    print(
        f"median {result.table.median_abs_error_pct:.1f} %, "
        f"max {result.table.max_abs_error_pct:.1f} % over {len(result.table.rows)} runs"
    )
