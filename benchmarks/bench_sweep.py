"""Time a full catalog sweep for one workload (median of several runs).

Run: ``.venv/bin/python benchmarks/bench_sweep.py`` from the repository root.
"""

from __future__ import annotations

import csv
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.engine.calibration import load_calibration  # noqa: E402
from planner.engine.specs import load_accelerators_csv, load_models_csv  # noqa: E402
from planner.engine.sweep import Workload, sweep  # noqa: E402

DATA = ROOT / "catalog" / "data"


def cheapest_on_demand_per_accelerator(path: Path) -> dict[str, float]:
    """Accelerator slug -> cheapest on-demand USD per accelerator-hour in cloud_prices.csv."""
    prices: dict[str, float] = {}
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["price_model"] != "on_demand" or not row["accelerator_slug"]:
                continue
            per_accel = float(row["usd_per_hour"]) / int(row["accelerators"])
            slug = row["accelerator_slug"]
            prices[slug] = min(prices.get(slug, per_accel), per_accel)
    return prices


def main(runs: int = 7) -> None:
    accelerators = load_accelerators_csv(DATA / "accelerators.csv")
    model = load_models_csv(DATA / "models.csv")["llama-3.1-70b"]
    prices = cheapest_on_demand_per_accelerator(DATA / "cloud_prices.csv")
    calibration = load_calibration()
    workload = Workload(
        input_tokens=2000,
        output_tokens=400,
        ttft_ms=1500,
        tpot_ms=60,
        peak_concurrency=1000,
        disaggregated=True,
    )
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = sweep(workload, model, accelerators.values(), calibration, prices)
        times.append(time.perf_counter() - start)
    print(
        f"{len(accelerators)} accelerators, {len(result.candidates)} candidates "
        f"({len(result.feasible)} feasible): median {statistics.median(times) * 1e3:.1f} ms "
        f"over {runs} runs (min {min(times) * 1e3:.1f} ms)"
    )
    aggregated = replace(workload, disaggregated=False)
    plain = []
    for _ in range(runs):
        start = time.perf_counter()
        sweep(aggregated, model, accelerators.values(), calibration, prices)
        plain.append(time.perf_counter() - start)
    print(
        f"  of which aggregated only: median {statistics.median(plain) * 1e3:.1f} ms "
        "(the rest is the disaggregated prefill/decode search)"
    )
    compared = replace(workload, compare_stacks=("sglang", "trtllm"))
    stacks = []
    for _ in range(runs):
        start = time.perf_counter()
        sweep(compared, model, accelerators.values(), calibration, prices)
        stacks.append(time.perf_counter() - start)
    print(
        f"  with SGLang and TensorRT-LLM compared (the sizing page's option): median "
        f"{statistics.median(stacks) * 1e3:.1f} ms (min {min(stacks) * 1e3:.1f} ms)"
    )
    if result.best:
        b = result.best
        print(
            f"cheapest: {b.accelerator_name} {b.precision} TP{b.tensor_parallel}, "
            f"${b.usd_per_million_output_tokens:.3f} per million output tokens"
        )


if __name__ == "__main__":
    main()
