"""Full-size GuideLLM reports for the streaming tests and benchmarks/bench_guidellm_report.py.

A full GuideLLM report keeps every request of every benchmark after the aggregates
(``benchmarks[].requests.{successful, incomplete, errored}``, GuideLLM's
``GenerativeRequestStats``: ids, timings, token counts, the prompt and the output text),
about 5 KB a request at 1,000 prompt tokens. The aggregates are the fixture's
(tests/measured/fixtures/benchmarks.json); the requests are written one at a time, so a
report of any size is written in constant memory.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PROMPT_WORDS = ("the", "replica", "serves", "tokens", "under", "load", "with", "latency")


def _request(rng: random.Random, index: int, start_s: float) -> dict:
    prompt = " ".join(
        rng.choice(PROMPT_WORDS) for _ in range(560)
    )  # ≈ 1,000 tokens of text, 3.5 KB
    output = " ".join(rng.choice(PROMPT_WORDS) for _ in range(140))  # ≈ 250 tokens, 0.9 KB
    ttft_ms = rng.uniform(90, 300)
    itl_ms = rng.uniform(20, 40)
    latency_s = (ttft_ms + 249 * itl_ms) / 1000
    return {
        "type_": "generative_request_stats",
        "request_id": f"{index:08x}-5f1e-4c2a-9d3b-{rng.getrandbits(48):012x}",
        "request_type": "text_completions",
        "scheduler_info": {
            "requested": True,
            "completed": True,
            "errored": False,
            "canceled": False,
            "worker_index": index % 8,
            "scheduled_time": start_s,
            "worker_start": start_s,
            "worker_end": start_s + latency_s,
        },  # fmt: skip
        "prompt": prompt,
        "request_args": {"max_tokens": 250, "stream": True},
        "output": output,
        "iterations": 250,
        "prompt_tokens": 1000,
        "output_tokens": 250,
        "start_time": start_s,
        "end_time": start_s + latency_s,
        "first_token_time": start_s + ttft_ms / 1000,
        "last_token_time": start_s + latency_s,
        "request_latency": latency_s,
        "time_to_first_token_ms": ttft_ms,
        "time_per_output_token_ms": latency_s * 1000 / 250,
        "inter_token_latency_ms": itl_ms,
        "tokens_per_second": 1250 / latency_s,
        "output_tokens_per_second": 250 / latency_s,
    }


def write_guidellm_report(path: Path, requests: int, *, seed: int = 26) -> int:
    """Write the fixture's three benchmarks with ``requests`` requests kept among them.

    Returns:
        The file's size in bytes.
    """
    rng = random.Random(seed)
    report = json.loads((FIXTURES / "benchmarks.json").read_text())
    benchmarks = report.pop("benchmarks")
    head = json.dumps(report)[:-1]  # the report without its closing brace
    per_benchmark = [requests // len(benchmarks)] * len(benchmarks)
    per_benchmark[-1] += requests - sum(per_benchmark)
    index = 0
    with path.open("w", encoding="utf-8") as out:
        out.write(head + ', "benchmarks": [')
        for b, (bench, count) in enumerate(zip(benchmarks, per_benchmark, strict=True)):
            out.write(("," if b else "") + json.dumps(bench)[:-1] + ', "requests": {')
            out.write('"successful": [')
            for i in range(count):
                start_s = bench["start_time"] + i * 0.05
                out.write(("," if i else "") + json.dumps(_request(rng, index, start_s)))
                index += 1
            out.write('], "incomplete": [], "errored": []}}')
        out.write("]}")
    return path.stat().st_size
