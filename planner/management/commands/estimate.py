"""Estimate throughput and latency of N accelerators serving one model.

Example:
    python manage.py estimate --model llama-3.1-70b --accelerator h100-sxm --accelerators 8 \
        --precision fp8 --input-tokens 2000 --output-tokens 400 --scenario server \
        --ttft-ms 2000 --tpot-ms 50 --percentile 99 --json
    Add --disaggregated (or --serving disaggregated) for separate prefill and decode pools.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from planner.engine.estimate import EstimateError, EstimateRequest
from planner.engine.memory import SERVING_STACKS
from planner.sizing import SizingInputError, estimate_as_dict, estimate_run

HUMAN_FIELDS = (
    ("output_tokens_per_s", "Output tokens/s (all accelerators)", "{:,.0f}"),
    ("requests_per_s", "Requests/s", "{:,.2f}"),
    ("ttft_ms", "TTFT (ms)", "{:,.0f}"),
    ("tpot_ms", "TPOT (ms)", "{:,.1f}"),
    ("latency_statistic", "Latency statistic", "{}"),
    ("per_user_output_tokens_per_s", "Output tokens/s per user", "{:,.1f}"),
    ("batch_per_replica", "Batch per replica", "{}"),
    ("queued_per_replica", "Queued per replica", "{:,.1f}"),
    ("saturation_requests_per_s", "Saturation point (requests/s)", "{:,.2f}"),
    ("queue_growth_requests_per_s", "Queue growth (requests/s)", "{:,.2f}"),
    ("serving", "Serving", "{}"),
    ("tensor_parallel", "Tensor parallel (decode pool if split)", "{}"),
    ("parallel_layout", "Layout across servers", "{}"),
    ("prefill_tensor_parallel", "Prefill tensor parallel", "{}"),
    ("prefill_replicas", "Prefill replicas", "{}"),
    ("decode_replicas", "Decode replicas", "{}"),
    ("kv_transfer_ms", "KV transfer per request (ms, in TTFT)", "{:,.1f}"),
    ("kv_transfer_path", "KV transfer path", "{}"),
    ("replicas", "Replicas", "{}"),
    ("weights_gb", "Weights (GB)", "{:,.1f}"),
    ("serving_stack", "Serving stack", "{}"),
    ("serving_stack_version", "Serving stack version", "{}"),
    ("kv_cache_dtype", "KV cache dtype", "{}"),
    ("kv_cache_bytes_per_token", "KV cache per token, replica (bytes)", "{:,.0f}"),
    ("kv_cache_bytes_per_token_per_gpu", "KV cache per token, per GPU (bytes)", "{:,.0f}"),
    ("kv_replication", "KV TP replication (copies)", "{}"),
    ("kv_cache_gib_per_gpu", "KV budget per GPU (GiB)", "{:,.1f}"),
    ("max_concurrent_sequences", "Max concurrent sequences per replica", "{:,}"),
    ("expected_error_pct", "Error band (±%)", "{:.0f}"),
    ("architecture", "Architecture", "{}"),
    ("provenance", "Provenance", "{}"),
    ("software_generation", "Software generation assumed", "{}"),
)

# Figures only some modes give (None otherwise, not "unbounded").
MODE_FIELDS = {
    "per_user_output_tokens_per_s",
    "queued_per_replica",
    "saturation_requests_per_s",
    "queue_growth_requests_per_s",
    "prefill_tensor_parallel",
    "prefill_replicas",
    "decode_replicas",
    "kv_transfer_ms",
    "kv_transfer_path",
}


class Command(BaseCommand):
    help = "Estimate output tokens/s, TTFT and TPOT for a model on N accelerators."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--model", required=True, help="Model slug, e.g. llama-3.1-70b.")
        parser.add_argument("--accelerator", required=True, help="Accelerator slug, e.g. h100-sxm.")
        parser.add_argument("--accelerators", required=True, type=int, help="How many in total.")
        parser.add_argument("--precision", required=True, help="bf16, fp8, int4 or fp4.")
        parser.add_argument("--input-tokens", required=True, type=int)
        parser.add_argument("--output-tokens", required=True, type=int)
        parser.add_argument("--tensor-parallel", type=int, help="Chosen by the engine if omitted.")
        parser.add_argument("--scenario", choices=["offline", "server"], default=None)
        parser.add_argument("--ttft-ms", type=float)
        parser.add_argument("--tpot-ms", type=float)
        parser.add_argument("--percentile", type=int, choices=[95, 99], default=99)
        parser.add_argument("--request-rate", type=float, help="Offered requests per second.")
        parser.add_argument(
            "--concurrency",
            type=int,
            help="Requests in flight over all accelerators (closed loop).",
        )
        parser.add_argument(
            "--kv-cache-dtype",
            choices=["auto", "bf16", "fp8"],
            default="auto",
            help="KV-cache dtype; auto (default) is the model's dtype (BF16), as vLLM's auto.",
        )
        parser.add_argument(
            "--serving",
            choices=["aggregated", "disaggregated"],
            default="aggregated",
            help="disaggregated: separate prefill and decode replicas with the KV cache moved "
            "between them (needs --ttft-ms and --tpot-ms).",
        )
        parser.add_argument(
            "--disaggregated",
            action="store_const",
            const="disaggregated",
            dest="serving",
            help="Short for --serving disaggregated.",
        )
        parser.add_argument(
            "--pp",
            type=int,
            default=1,
            help="Pipeline stages per replica (stages on other servers use the scale-out "
            "fabric). Without it a model no server holds is spread over servers by the engine.",
        )
        parser.add_argument(
            "--ep",
            type=int,
            default=1,
            help="Expert-parallel degree for MoE models (a multiple of TP; attention is "
            "data-parallel over EP/TP servers).",
        )
        parser.add_argument(
            "--serving-stack",
            choices=list(SERVING_STACKS),
            default="vllm",
            help="Serving engine whose memory rule and scheduler cap apply: vllm (default: "
            "gpu_memory_utilization of the whole memory, max_num_seqs 1024 on 70 GiB parts, "
            "else 256), sglang (its default mem_fraction_static reserve by GPU size, at least "
            "2048 running requests) or trtllm (KV from the memory left after the weights, up "
            "to 2048 requests).",
        )
        parser.add_argument(
            "--serving-stack-version",
            default="",
            help="The stack's version as you name it (e.g. 0.11); printed with the estimate.",
        )
        parser.add_argument(
            "--variable-lengths",
            action="store_true",
            help="Prompts vary in length around the mean (a dataset such as MLPerf's): "
            "latency percentiles then take a long prompt and a variable prefill queue.",
        )
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")

    def handle(self, *args, **options) -> None:
        has_target = options["ttft_ms"] is not None or options["tpot_ms"] is not None
        online = (
            has_target or options["request_rate"] is not None or options["concurrency"] is not None
        )
        scenario = options["scenario"] or ("server" if online else "offline")
        request = EstimateRequest(
            model=options["model"],
            accelerator=options["accelerator"],
            accelerators=options["accelerators"],
            precision=options["precision"],
            input_tokens=options["input_tokens"],
            output_tokens=options["output_tokens"],
            tensor_parallel=options["tensor_parallel"],
            scenario=scenario,
            ttft_ms=options["ttft_ms"],
            tpot_ms=options["tpot_ms"],
            percentile=options["percentile"],
            request_rate=options["request_rate"],
            kv_cache_dtype=options["kv_cache_dtype"],
            concurrency=options["concurrency"],
            serving=options["serving"],
            pipeline_parallel=options["pp"],
            expert_parallel=options["ep"],
            serving_stack=options["serving_stack"],
            serving_stack_version=options["serving_stack_version"],
            variable_lengths=options["variable_lengths"],
        )
        try:
            result = estimate_as_dict(estimate_run(request))
        except (SizingInputError, EstimateError) as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(result, allow_nan=False))
            return
        for key, label, fmt in HUMAN_FIELDS:
            if result[key] is None and key in MODE_FIELDS:
                continue  # not part of this mode's answer
            if key == "parallel_layout" and not result[key]:
                continue  # one server per replica
            value = "unbounded (see the note)" if result[key] is None else fmt.format(result[key])
            self.stdout.write(f"{label:<40} {value}")
        self.stdout.write(f"Note: {result['kv_note']}")
        for note in result["notes"]:
            self.stdout.write(f"Note: {note}")
