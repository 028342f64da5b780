"""Reading a full GuideLLM report: size, time and memory of the streamed read against a whole
``json.load``.

Usage:
    .venv/bin/python benchmarks/bench_guidellm_report.py [--requests 10000]

Writes a report of the test fixture's three benchmarks keeping ``--requests`` requests (about
5 KB each, as GuideLLM keeps them: tests/measured/big_reports.py) to a temporary file, then
reads it in a fresh Python process per method, so each peak is that method's alone:

- stream: ``planner.engine.load_test.read_result_json`` (ijson, per-request arrays skipped)
  and ``parse_load_test``, as an upload is read;
- whole: ``json.load`` of the same file, as uploads were read before (for reference).

Prints the file size, the wall time and the growth of the process's peak resident memory
(ru_maxrss after − before) of an untraced run, and the peak of Python allocations of a second
run under tracemalloc (which slows allocation, so it is not timed). Nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]

MEASURE = r"""
import json, resource, sys, time, tracemalloc
sys.path.insert(0, sys.argv[3])
from planner.engine.load_test import parse_load_test, read_result_json
path, method, traced = sys.argv[1], sys.argv[2], sys.argv[4] == "traced"
import os
size = os.path.getsize(path)
before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if traced:
    tracemalloc.start()
start = time.perf_counter()
with open(path, "rb") as stream:
    if method == "stream":
        points = len(parse_load_test(read_result_json(stream, size_bytes=size)).points)
    else:
        points = len(json.load(stream)["benchmarks"])
seconds = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1] if traced else 0
after_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "python_peak_mb": peak / 2**20,
                  "rss_growth_mb": (after_kb - before_kb) / 1024, "points": points}))
"""


def measure(path: Path, method: str, traced: bool) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), method, str(PROJECT),
         "traced" if traced else "timed"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    args = parser.parse_args()
    sys.path.insert(0, str(PROJECT))
    from tests.measured.big_reports import write_guidellm_report

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "benchmarks.json"
        size = write_guidellm_report(path, args.requests)
        print(
            f"GuideLLM report: {args.requests:,} requests, {size / 2**20:.1f} MB "
            f"({size / args.requests / 1024:.1f} KB a request)"
        )
        for method in ("stream", "whole"):
            timed = measure(path, method, traced=False)  # tracemalloc slows allocation
            traced = measure(path, method, traced=True)
            print(
                f"{method:>6}: {timed['seconds']:.2f} s, {size / 2**20 / timed['seconds']:.0f} "
                f"MB/s, resident peak +{timed['rss_growth_mb']:.0f} MB, Python allocations "
                f"peak {traced['python_peak_mb']:.1f} MB"
            )


if __name__ == "__main__":
    main()
