"""Time aiconfigurator's second opinion per candidate (planner/peer/aiconfigurator.py).

Run: ``.venv/bin/python benchmarks/bench_second_opinion.py`` from the repository root.

Prints the cost of the first call in a process (the SDK's import and the first system's kernel
tables), of the first call on each further GPU system and stack, of a new operating point on a
system already loaded, and of a repeated one (the cache). The sizing page asks only for the
candidate shown in detail and the chosen one, because a table of every NVIDIA row would load
every system's tables on a process's first page.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.peer.aiconfigurator import PeerRequest, peer_estimate  # noqa: E402

BASE = PeerRequest(
    accelerator="h100-sxm",
    model="llama-3.1-8b",
    precision="fp8",
    kv_cache_dtype="fp8",
    serving_stack="vllm",
    tensor_parallel=1,
    batch_per_replica=64,
    input_tokens=1024,
    output_tokens=256,
)


def timed_ms(request: PeerRequest) -> tuple[float, str]:
    started = time.perf_counter()
    found = peer_estimate(request)
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed, found.not_covered or f"{found.output_tokens_per_s_per_replica:,.0f} tok/s"


def main() -> None:
    ms, what = timed_ms(BASE)
    print(f"{'first call (import + h100_sxm vLLM tables):':<44}{ms:8.0f} ms  {what}")
    for accelerator, stack in (("h200-sxm", "vllm"), ("b200", "trtllm"), ("l40s", "sglang")):
        ms, what = timed_ms(replace(BASE, accelerator=accelerator, serving_stack=stack))
        label = f"first call on {accelerator} {stack}:"
        print(f"{label:<44}{ms:8.0f} ms  {what}")
    warm = [timed_ms(replace(BASE, batch_per_replica=b))[0] for b in range(65, 85)]
    print(f"new operating point, system loaded (median of 20): {statistics.median(warm):6.1f} ms")
    cached = [timed_ms(BASE)[0] for _ in range(100)]
    print(f"repeated inputs (cache, median of 100):            {statistics.median(cached):6.3f} ms")


if __name__ == "__main__":
    main()
