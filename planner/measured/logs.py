"""Traffic logs of a workload: upload, background import, retention, fill the workload.

The statistics are :mod:`planner.engine.traffic_log`; this module stores and schedules.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from planner import jobs, sizing
from planner.engine import demand, traffic_log_columns
from planner.engine.network import REGIONS
from planner.engine.traffic_log import TrafficLogError, planned_concurrency
from planner.measured import notices
from planner.measured.models import MeasuredSettings, TrafficLogImport
from planner.models import JobStatus, Workload

logger = logging.getLogger(__name__)

# Larger logs go to a worker with progress. Django writes an upload over its 2.5 MB
# FILE_UPLOAD_MAX_MEMORY_SIZE to a temporary file as it arrives, and the storage moves that
# file into place: a log is never held in the web process's memory, and only the worker reads
# it (a 1,000,000-row log: benchmarks/bench_traffic_log.py).
INLINE_BYTES = 2 * 1024 * 1024


def retention_days(organisation) -> int:
    settings_row = MeasuredSettings.objects.filter(organisation=organisation).first()
    return settings_row.raw_log_retention_days if settings_row else 0


def request_time_s(workload: Workload) -> float:
    """W for Little's law when a log has no request times: the chosen configuration's
    modelled time in a replica, else the longest the targets allow (planner.engine.demand)."""
    summary = workload.chosen_summary or {}
    modelled = demand.modelled_request_s(
        summary.get("batch_per_replica") or 0, summary.get("requests_per_s_per_replica") or 0
    )
    if modelled:
        return modelled
    return demand.target_request_s(
        ttft_ms=workload.ttft_ms,
        tpot_ms=workload.tpot_ms,
        output_tokens_mean=workload.output_tokens_mean,
        e2e_s=workload.e2e_s,
    )


def log_import_request(*, workload: Workload, upload, log_format: str, columns: dict, user):
    """Store the upload and import it: at once when small, else as a background job."""
    job = TrafficLogImport(
        organisation=workload.plan.organisation,
        workload=workload,
        file_name=upload.name[:255],
        file_bytes=upload.size,
        log_format=log_format,
        columns=columns,
        request_s=request_time_s(workload) or None,
        uploaded_by=user,
    )
    job.file.save(upload.name, upload, save=False)
    job.save()
    if upload.size <= INLINE_BYTES:
        jobs.job_run_inline(job, log_import_execute)
        job.refresh_from_db()
    else:
        jobs.job_enqueue(job)
    return job


def log_import_execute(*, job: TrafficLogImport, recorder=None) -> None:
    """Read the whole log; store the profiles, or the problem and nothing else."""

    def progress(bytes_read: int, rows: int) -> None:
        if recorder is not None and job.file_bytes:
            recorder(min(0.95, bytes_read / job.file_bytes), f"{rows:,} rows read")

    try:
        accumulator = traffic_log_columns.accumulate_log(
            lambda: job.file.storage.open(job.file.name, "rb"),
            job.log_format,
            job.columns,
            progress=progress,
            block_bytes=traffic_log_columns.BLOCK_BYTES,
        )
        if not accumulator.rows:
            raise TrafficLogError(1, "the log has no requests")
    except (TrafficLogError, UnicodeDecodeError, ValueError) as exc:
        job.problem = f"Not imported: {exc}"
        job.result = {}
        _delete_file(job)
        jobs.job_finish(job, status=JobStatus.FAILED, message=job.problem)
        return
    profiles = accumulator.result(request_s=job.request_s)
    job.result = {key: asdict(p) for key, p in profiles.items()}
    job.problem = ""
    days = retention_days(job.organisation)
    if days:
        job.file_expires_at = timezone.now() + timedelta(days=days)
    else:
        _delete_file(job)
    jobs.job_finish(job, message=f"{accumulator.rows:,} requests read")


def _delete_file(job: TrafficLogImport) -> None:
    if job.file:
        job.file.delete(save=False)
    job.file = ""
    job.file_expires_at = None


def logs_purge_expired(*, organisation, now: datetime | None = None) -> int:
    """Delete the raw files whose retention ran out (the figures stay)."""
    expired = TrafficLogImport.objects.filter(
        organisation=organisation, file_expires_at__lte=now or timezone.now()
    ).exclude(file="")
    count = 0
    for job in expired:
        _delete_file(job)
        job.save(update_fields=["file", "file_expires_at"])
        count += 1
    return count


def period(profile: dict) -> str:
    first = datetime.fromtimestamp(profile["first_s"], tz=UTC)
    last = datetime.fromtimestamp(profile["last_s"], tz=UTC)
    return f"{first:%Y-%m-%d} to {last:%Y-%m-%d}"


def region_shares(profile: dict) -> dict[str, float]:
    """Users per region as percentages, for the regions the planner knows."""
    known = {region: users for region, users in profile["region_users"] if region in REGIONS}
    total = sum(known.values())
    if not total:
        return {}
    return {region: round(users / total * 100, 1) for region, users in known.items()}


@transaction.atomic
def log_apply(*, job: TrafficLogImport, request_type: str, user=None) -> Workload:
    """Fill the workload's traffic fields from one request type of the log.

    Raises:
        ValueError: the type is not in the log, or a figure is outside the workload's ranges.
    """
    profile = job.result.get(request_type)
    if profile is None:
        raise ValueError(f"the log has no request type {request_type!r}")
    workload = Workload.objects.select_for_update().get(pk=job.workload_id)
    workload.input_tokens_mean = max(1, round(profile["input_tokens_mean"]))
    workload.input_tokens_p95 = max(1, round(profile["input_tokens_p95"]))
    workload.output_tokens_mean = max(1, round(profile["output_tokens_mean"]))
    workload.output_tokens_p95 = max(1, round(profile["output_tokens_p95"]))
    workload.peak_requests_per_s = round(profile["busiest_minute_per_s"], 3)
    if profile["peak_concurrency"] is not None:
        workload.peak_concurrency = planned_concurrency(profile["peak_concurrency"])
    if max(profile["daily_profile"]) > 0:
        workload.daily_profile = [round(v, 3) for v in profile["daily_profile"]]
    shares = region_shares(profile)
    if shares:
        workload.region_shares = shares
    try:
        workload.full_clean(exclude=["plan", "model", "chosen_accelerator", "chosen_server"])
    except ValidationError as exc:
        messages = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
        raise ValueError(
            f"the log's figures are outside the workload's ranges ({messages})"
        ) from None
    before = notices.fleet_accelerators(workload)
    sizing.chosen_replan(workload)
    workload.save()
    notices.fleet_change_record(
        workload=workload,
        before=before,
        cause=f"Traffic log '{job.file_name}' (request type {request_type})",
        user=user,
    )
    job.applied_type = request_type
    job.applied_at = timezone.now()
    job.save(update_fields=["applied_type", "applied_at"])
    return workload


def workload_traffic_note(workload: Workload) -> str:
    """Where the workload's traffic figures come from, when a log filled them."""
    job = (
        TrafficLogImport.objects.filter(
            workload_id=workload.pk, organisation_id=workload.plan.organisation_id
        )
        .exclude(applied_at=None)
        .order_by("-applied_at")
        .first()
    )
    if job is None:
        return ""
    profile = job.result.get(job.applied_type) or {}
    when = period(profile) if profile else ""
    return (
        f"Traffic from {job.file_name} ({when}, request type {job.applied_type}), filled on "
        f"{job.applied_at:%Y-%m-%d}; each field can still be edited."
    )
