"""Load tests attached to a workload's candidates: read, store, apply to the sizing table.

The maths is in :mod:`planner.engine.load_test`; this module fetches, stores and joins it to
:mod:`planner.sizing` (which calls :func:`apply_measurements` on every sweep it builds).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from datetime import date

from django.core.files.storage import default_storage
from django.db import transaction

from catalog.models import Accelerator
from catalog.selectors import catalog_version_pinned
from planner import jobs, sizing
from planner.engine.load_test import (
    ExcludedRunError,
    LoadTest,
    LoadTestFormatError,
    MeasuredCapacity,
    PointComparison,
    capacity_at_target,
    compare_with_model,
    lengths_mismatch,
    merge_sweep,
    model_correction,
    parse_load_test,
    read_result_json,
)
from planner.engine.performance import replica_shape
from planner.engine.specs import accelerator_family
from planner.engine.stacks import stack_in_text
from planner.engine.sweep import (
    SweepResult,
    at_request_rate,
    ranked_result,
    usd_per_million_output_tokens,
)
from planner.labels import stack_label
from planner.measured import notices
from planner.measured.models import LoadTestImport, LoadTestSweep
from planner.models import JobStatus, Workload

# A result file is kilobytes, but a full GuideLLM report keeps every request (about 5 KB
# each: 20 MB was 3,800 requests, an ordinary sweep). Files are streamed (memory stays that of
# the aggregates) at about 96 MB/s on one core of the 2-core reference machine
# (benchmarks/bench_guidellm_report.py: 50 MB in 0.52 s). Django writes an upload over 2.5 MB
# (FILE_UPLOAD_MAX_MEMORY_SIZE) to a temporary file as it arrives; a sweep of up to
# INLINE_SWEEP_BYTES is read while the page waits (under 1 s), a larger one is moved into
# storage and read by a worker (LoadTestImport), so no file size meets gunicorn's 30 s.
MAX_FILE_BYTES = 1024**3  # 1 GiB: about 200,000 GuideLLM requests, 11 s to read
INLINE_SWEEP_BYTES = 64 * 1024**2


@dataclass(frozen=True, slots=True)
class Measurement:
    """A stored sweep judged against the workload's current targets and lengths."""

    sweep: LoadTestSweep
    test: LoadTest
    capacity: MeasuredCapacity
    mismatch: str | None

    @property
    def applied(self) -> bool:
        """True when it sizes its candidate (lengths match the workload's)."""
        return self.mismatch is None


@dataclass(frozen=True, slots=True)
class Correction:
    """The engine corrected for a candidate from a neighbour's measurement."""

    factor: float
    sweep: LoadTestSweep


def check_sizes(files) -> None:
    """Raises LoadTestFormatError naming a file over :data:`MAX_FILE_BYTES`."""
    for upload in files:
        if upload.size > MAX_FILE_BYTES:
            raise LoadTestFormatError(
                f"{upload.name}: {_size(upload.size)}, larger than the {_size(MAX_FILE_BYTES)} "
                "a result file may be (a GuideLLM report of about 200,000 requests); split the "
                "sweep into several reports"
            )


def _size(size_bytes: int) -> str:
    if size_bytes >= 2**30:
        return f"{size_bytes / 2**30:.3g} GB"
    return f"{size_bytes / 2**20:.3g} MB"


def read_files(files) -> LoadTest:
    """Parse uploaded result files (one sweep) into one curve.

    Raises:
        LoadTestFormatError: a file that is not JSON or not a format we read, named.
    """
    tests = []
    skipped = []
    check_sizes(files)
    for upload in files:
        try:
            upload.seek(0)
            data = read_result_json(upload, size_bytes=upload.size)
            tests.append(parse_load_test(data))
        except ExcludedRunError as exc:
            skipped.append(f"{upload.name}: {exc}, left out of the sweep")
        except LoadTestFormatError as exc:
            raise LoadTestFormatError(f"{upload.name}: {exc}") from None
    if not tests:
        raise ExcludedRunError("nothing measured: " + "; ".join(skipped))
    tools = {t.tool for t in tests}
    if len(tools) > 1:
        raise LoadTestFormatError(
            "one sweep comes from one tool; these files mix " + ", ".join(sorted(tools))
        )
    merged = merge_sweep(tests)
    return replace(merged, skipped=tuple(skipped) + merged.skipped)


@transaction.atomic
def sweep_attach(
    *,
    workload: Workload,
    test: LoadTest,
    file_names: list[str],
    accelerator: Accelerator,
    precision: str,
    tensor_parallel: int,
    serving_stack: str,
    stack_version: str,
    measured_on: date | None,
    user,
) -> LoadTestSweep:
    """Store the sweep for the candidate (replacing an earlier one) and re-plan the choice."""
    sweep, _ = LoadTestSweep.objects.update_or_create(
        workload=workload,
        accelerator=accelerator,
        precision=precision,
        tensor_parallel=tensor_parallel,
        defaults={
            "organisation": workload.plan.organisation,
            "tool": test.tool,
            "model_name": test.model[:200],
            "serving_stack": (serving_stack or test.serving_stack)[:60],
            "stack_version": (stack_version or test.stack_version)[:60],
            "file_names": ", ".join(file_names)[:1000],
            "measured_on": measured_on
            or (date.fromisoformat(test.measured_on) if test.measured_on else None),
            "points": [asdict(p) for p in test.points],
            "skipped_stages": list(test.skipped),
            "uploaded_by": user,
        },
    )
    _replan(workload, cause=f"Load test {notices.sweep_label(sweep)}", user=user)
    return sweep


def _replan(workload: Workload, *, cause: str, user) -> None:
    """Re-plan the choice; a changed fleet is said on the overview and in the history."""
    workload.__dict__.pop("_measurements", None)
    if workload.has_choice:
        before = notices.fleet_accelerators(workload)
        sizing.chosen_replan(workload)
        workload.save()
        notices.fleet_change_record(workload=workload, before=before, cause=cause, user=user)


@transaction.atomic
def sweep_delete(sweep: LoadTestSweep, *, user=None) -> None:
    workload = sweep.workload
    cause = f"Removing load test {notices.sweep_label(sweep)}"
    sweep.delete()
    _replan(workload, cause=cause, user=user)


@transaction.atomic
def sweep_set_correction(sweep: LoadTestSweep, enabled: bool, *, user=None) -> None:
    sweep.correct_neighbours = enabled
    sweep.save(update_fields=["correct_neighbours"])
    label = notices.sweep_label(sweep)
    cause = (
        f"Correcting neighbouring candidates by load test {label}"
        if enabled
        else f"Modelling neighbouring candidates again (without load test {label})"
    )
    _replan(sweep.workload, cause=cause, user=user)


def _inputs(workload: Workload) -> tuple:
    return (
        workload.ttft_ms, workload.tpot_ms, workload.e2e_s, workload.percentile,
        workload.input_tokens_mean, workload.output_tokens_mean, workload.output_tokens_p95,
        workload.serving_stack,
    )  # fmt: skip


def _stack_mismatch(measured_on: str, workload: Workload) -> str | None:
    """Why a load test on another serving stack does not size the workload (None when it ran
    on the workload's stack, or does not say which it ran on)."""
    measured = stack_in_text(measured_on)
    if measured is None or measured == workload.serving_stack:
        return None
    return (
        f"Measured on {stack_label(measured)}; the workload is sized for "
        f"{stack_label(workload.serving_stack)}."
    )


def workload_measurements(workload: Workload) -> dict[str, Measurement]:
    """The workload's sweeps by candidate key, judged on its current inputs (one query).

    Cached on the instance for its current inputs: the sizing table, its badges and the
    chosen plan's re-plan share one read.
    """
    cached = workload.__dict__.get("_measurements")
    if cached is not None and cached[0] == _inputs(workload):
        return cached[1]
    result: dict[str, Measurement] = {}
    if workload.pk is not None:
        target = sizing.engine_workload(workload)
        sweeps = LoadTestSweep.objects.filter(
            workload_id=workload.pk, organisation_id=workload.plan.organisation_id
        ).select_related("accelerator")
        for sweep in sweeps:
            test = sweep.load_test()
            if target.ttft_ms is None and target.tpot_ms is None:
                capacity = MeasuredCapacity(False, "the workload has no latency target")
            else:
                capacity = capacity_at_target(
                    test.points,
                    ttft_target_ms=target.ttft_ms,
                    tpot_target_ms=target.tpot_ms,
                    percentile=workload.percentile,
                )
            mismatch = lengths_mismatch(
                test,
                input_tokens_mean=workload.input_tokens_mean,
                output_tokens_mean=workload.output_tokens_mean,
            )
            mismatch = mismatch or _stack_mismatch(sweep.serving_stack, workload)
            result[sweep.candidate_key] = Measurement(sweep, test, capacity, mismatch)
    workload.__dict__["_measurements"] = (_inputs(workload), result)
    return result


def comparison(workload: Workload, sweep: LoadTestSweep) -> tuple[PointComparison, ...]:
    """The engine's model at the sweep's measured loads, on the sweep's candidate."""
    model = sizing.model_spec(workload.model)
    accelerator = sizing.accelerator_specs().get(sweep.accelerator.slug)
    if accelerator is None:
        return ()
    shape = replica_shape(
        model, accelerator, sweep.precision, sweep.tensor_parallel, sizing.calibration()
    )
    return compare_with_model(
        sweep.load_test().points,
        shape,
        input_tokens_mean=workload.input_tokens_mean,
        output_tokens_mean=workload.output_tokens_mean,
    )


def corrections(workload: Workload) -> dict[tuple[str, str], Correction]:
    """Per-plan corrections of the engine by (accelerator family, precision)."""
    found = {}
    for m in workload_measurements(workload).values():
        if m.sweep.correct_neighbours and m.applied:
            factor = model_correction(comparison(workload, m.sweep))
            if factor is not None:
                family = accelerator_family(m.sweep.accelerator.slug)
                found[(family, m.sweep.precision)] = Correction(factor, m.sweep)
    return found


def candidate_correction(workload: Workload, candidate) -> Correction | None:
    """The correction applied to a modelled candidate, or None."""
    if sizing.candidate_key(candidate) in workload_measurements(workload):
        return None
    fixes = workload.__dict__.get("_corrections")
    if fixes is None:
        fixes = workload.__dict__["_corrections"] = corrections(workload)
    return fixes.get((accelerator_family(candidate.accelerator_slug), candidate.precision))


def apply_measurements(workload: Workload, result: SweepResult) -> SweepResult:
    """Candidates with a sweep take their per-replica capacity from it; neighbours of a sweep
    marked as a correction take the engine's capacity × measured ÷ modelled throughput.

    A sweep measured on other lengths than the workload's is not applied (the page says so).
    Replicas then follow in :func:`planner.sizing._with_fleet` (plan_replicas, as modelled).
    """
    measurements = workload_measurements(workload)
    if not measurements:
        return result
    # Cached on the instance with the measurements it applied (themselves cached for the
    # current inputs, forgotten by _replan): a save's re-plan of the chosen row and the sizing
    # table rendered next apply the same measurements to the same per-replica sweep.
    kept = workload.__dict__.get("_measured_sweep")
    if kept is not None and kept[0] is result and kept[1] is measurements:
        return kept[2]
    workload.__dict__.pop("_corrections", None)
    candidates = []
    for c in result.candidates:
        m = measurements.get(sizing.candidate_key(c))
        if m is not None and m.applied:
            cap = m.capacity
            if cap.feasible:
                c = replace(
                    c,
                    feasible=True,
                    infeasible_reason=None,
                    batch_per_replica=round(cap.concurrency, 1),
                    requests_per_s_per_replica=cap.requests_per_s,
                    output_tokens_per_s_per_replica=cap.output_tokens_per_s,
                    ttft_ms=cap.ttft_ms,
                    tpot_ms=cap.tpot_ms,
                    usd_per_million_output_tokens=usd_per_million_output_tokens(
                        c.tensor_parallel, c.usd_per_accelerator_hour, cap.output_tokens_per_s
                    ),
                    provenance=f"measured ({m.sweep.get_tool_display()})",
                    **at_request_rate(c, cap.requests_per_s),
                )
            else:
                c = replace(c, feasible=False, infeasible_reason=f"measured: {cap.reason}")
        elif c.feasible and not c.disaggregated:  # load tests measure aggregated serving
            fix = candidate_correction(workload, c)
            if fix is not None:
                tokens_per_s = c.output_tokens_per_s_per_replica * fix.factor
                c = replace(
                    c,
                    batch_per_replica=round(c.batch_per_replica * fix.factor, 1),
                    requests_per_s_per_replica=c.requests_per_s_per_replica * fix.factor,
                    output_tokens_per_s_per_replica=tokens_per_s,
                    usd_per_million_output_tokens=usd_per_million_output_tokens(
                        c.tensor_parallel, c.usd_per_accelerator_hour, tokens_per_s
                    ),
                    provenance=f"corrected ×{fix.factor:.2f} by a measured sweep",
                    **at_request_rate(c, c.requests_per_s_per_replica * fix.factor),
                )
        candidates.append(c)
    measured = ranked_result(candidates)  # re-ranked: a measured row may now be the cheapest
    workload.__dict__["_measured_sweep"] = (result, measurements, measured)
    return measured


class _StoredFile:
    """A stored result file read under the name it was uploaded with."""

    def __init__(self, name: str, stream, size: int) -> None:
        self.name, self.size, self._stream = name, size, stream

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._stream.seek(offset, whence)

    def read(self, size: int = -1) -> bytes:
        return self._stream.read(size)


def sweep_import_request(*, workload: Workload, files, candidate: dict, user) -> LoadTestImport:
    """Store a large sweep's files (Django's temporary files are moved, not copied) and queue
    their reading; ``candidate`` holds the upload form's accelerator, precision, tensor
    parallel, serving stack, stack version and measured-on date."""
    check_sizes(files)
    stored = [
        {"name": f.name[:255], "path": default_storage.save(f"load_tests/{f.name}", f),
         "bytes": f.size}
        for f in files
    ]  # fmt: skip
    job = LoadTestImport.objects.create(
        organisation=workload.plan.organisation,
        workload=workload,
        files=stored,
        uploaded_by=user,
        **candidate,
    )
    jobs.job_enqueue(job)
    return job


def sweep_import_execute(*, job: LoadTestImport, recorder=None) -> None:
    """Read the stored files, attach the sweep, delete the files (whatever the outcome)."""
    opened = []
    try:
        for item in job.files:
            opened.append(default_storage.open(item["path"], "rb"))
        if recorder is not None:
            recorder(0.05, f"reading {len(opened)} file{'s' if len(opened) != 1 else ''}")
        test = read_files(
            [_StoredFile(i["name"], s, i["bytes"]) for i, s in zip(job.files, opened, strict=True)]
        )
    except LoadTestFormatError as exc:
        job.problem = str(exc)
        _delete_stored(job, opened)
        jobs.job_finish(job, status=JobStatus.FAILED, message=f"Not attached: {exc}")
        return
    _delete_stored(job, opened)
    with catalog_version_pinned():
        job.sweep = sweep_attach(
            workload=job.workload,
            test=test,
            file_names=[i["name"] for i in job.files],
            accelerator=job.accelerator,
            precision=job.precision,
            tensor_parallel=job.tensor_parallel,
            serving_stack=job.serving_stack,
            stack_version=job.stack_version,
            measured_on=job.measured_on,
            user=job.uploaded_by,
        )
    jobs.job_finish(job, message=f"Load test attached ({len(test.points)} points)")


def _delete_stored(job: LoadTestImport, opened) -> None:
    for stream in opened:
        stream.close()
    for item in job.files:
        default_storage.delete(item["path"])
