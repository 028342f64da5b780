"""The demo plan's measurements: a pilot's request log and a load test of one chat replica.

Both are made up, deterministically (fixed seeds), and named as demo files. The load test
is written in vLLM ``benchmark_serving.py`` result layout and read back through the same
parser as an upload; its figures are the engine's model of the chosen configuration with a
fixed shortfall (throughput 15 % lower, latency tails wider), as a real run often shows.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime, timedelta

from django.core.files.base import ContentFile

from planner import jobs, sizing
from planner.engine.load_test import merge_sweep, parse_load_test
from planner.engine.performance import replica_shape, steady_state
from planner.engine.traffic_log import COLUMN_PRESETS
from planner.measured import logs, services
from planner.measured.models import TrafficLogImport
from planner.models import Plan, WorkloadKind

PILOT_DAY = datetime(2026, 11, 2, tzinfo=UTC)  # a Monday of the client's pilot
PILOT_PEAK_PER_S = 0.5  # the pilot serves a few stores; the launch peak is the workload's
SWEEP_CONCURRENCY = (8, 32, 64, 96, 128, 192)
SHORTFALL = 0.85  # measured ÷ modelled throughput in the demo sweep


def _pilot_log(workload) -> bytes:
    """One day of the pilot's gateway log, shaped by the workload's daily profile."""
    rng = random.Random(15)
    regions = list(workload.region_shares)
    weights = [workload.region_shares[r] for r in regions]
    lines = []
    for hour, share in enumerate(workload.daily_profile):
        rate = PILOT_PEAK_PER_S * share
        t = 0.0
        while rate > 0:
            t += rng.expovariate(rate)
            if t >= 3600:
                break
            start = PILOT_DAY + timedelta(hours=hour, seconds=t)
            prompt = max(50, int(rng.lognormvariate(6.9, 0.6)))
            completion = max(10, int(rng.lognormvariate(5.6, 0.6)))
            end = start + timedelta(seconds=0.5 + completion * 0.045)
            user = f"customer-{rng.randrange(2000)}"
            region = rng.choices(regions, weights)[0]
            lines.append(
                json.dumps(
                    {
                        "startTime": start.isoformat().replace("+00:00", "Z"),
                        "endTime": end.isoformat().replace("+00:00", "Z"),
                        "model": workload.model.slug,
                        "user": user,
                        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
                        "metadata": {"region": region, "request_type": "chat"},
                    }
                )
            )
    return ("\n".join(lines) + "\n").encode()


def _sweep_files(workload) -> list[dict]:
    """vLLM result JSON of a concurrency sweep on the workload's chosen configuration."""
    model = sizing.model_spec(workload.model)
    accelerator = sizing.accelerator_specs()[workload.chosen_accelerator.slug]
    shape = replica_shape(
        model, accelerator, workload.chosen_precision, workload.chosen_tensor_parallel,
        sizing.calibration(),
    )  # fmt: skip
    files = []
    n = 500
    for concurrency in SWEEP_CONCURRENCY:
        state = steady_state(
            shape, float(concurrency), workload.input_tokens_mean, workload.output_tokens_mean
        )
        tokens_per_s = float(state.output_tokens_per_s[0]) * SHORTFALL
        tpot_ms = float(state.tpot_ms[0]) / SHORTFALL
        ttft_ms = float(state.ttft_service_ms[0]) / SHORTFALL
        requests_per_s = tokens_per_s / workload.output_tokens_mean
        files.append(
            {
                "date": f"20261104-1{len(files)}0000",
                "backend": "vllm",
                "model_id": f"meta-llama/{workload.model.name}",
                "num_prompts": n,
                "request_rate": "inf",
                "burstiness": 1.0,
                "max_concurrency": concurrency,
                "completed": n,
                "total_input_tokens": n * workload.input_tokens_mean,
                "total_output_tokens": n * workload.output_tokens_mean,
                "request_throughput": requests_per_s,
                "output_throughput": tokens_per_s,
                "mean_ttft_ms": ttft_ms,
                "p95_ttft_ms": ttft_ms * 1.8,
                "p99_ttft_ms": ttft_ms * 2.6,
                "mean_tpot_ms": tpot_ms,
                "p95_tpot_ms": tpot_ms * 1.12,
                "p99_tpot_ms": tpot_ms * 1.25,
                "mean_e2el_ms": ttft_ms + (workload.output_tokens_mean - 1) * tpot_ms,
            }
        )
    return files


def measured_demo_build(*, plan: Plan, user) -> None:
    """Attach the pilot's log and a measured sweep to the plan's chat workload."""
    workload = plan.workloads.filter(kind=WorkloadKind.CHAT).select_related("model").first()
    if workload is None:
        return
    job = TrafficLogImport(
        organisation=plan.organisation,
        workload=workload,
        file_name="northwind-pilot-gateway-2026-11-02.jsonl (demo)",
        log_format="jsonl",
        columns=COLUMN_PRESETS["openai_gateway"]["columns"],
        request_s=logs.request_time_s(workload) or None,
        uploaded_by=user,
    )
    content = ContentFile(_pilot_log(workload), name="northwind-pilot-gateway.jsonl")
    job.file_bytes = content.size
    job.file.save(content.name, content, save=False)
    job.save()
    jobs.job_run_inline(job, logs.log_import_execute)
    if not workload.has_choice:
        return
    files = _sweep_files(workload)
    test = merge_sweep([parse_load_test(data) for data in files])
    services.sweep_attach(
        workload=workload,
        test=test,
        file_names=[f"northwind-c{c}.json (demo)" for c in SWEEP_CONCURRENCY],
        accelerator=workload.chosen_accelerator,
        precision=workload.chosen_precision,
        tensor_parallel=workload.chosen_tensor_parallel,
        serving_stack="vLLM",
        stack_version="0.11.0",
        measured_on=date(2026, 11, 4),
        user=user,
    )
