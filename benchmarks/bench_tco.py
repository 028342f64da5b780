"""Benchmark: 10,000-path, 60-month Monte Carlo of owned vs cloud for a 3-workload plan.

Run from the repository root::

    .venv/bin/python benchmarks/bench_tco.py [--paths 10000] [--repeats 7]

Prints the median wall time of :func:`planner.engine.tco.monte_carlo` (target ≤ 1 s).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.engine.tco import (  # noqa: E402
    CloudPricing,
    OwnedHardware,
    SiteCost,
    TcoInputs,
    WorkloadDemand,
    monte_carlo,
)

DAY = (0.2,) * 7 + (0.6, 0.9) + (1.0,) * 9 + (0.8, 0.6, 0.5, 0.4, 0.3, 0.2)


def plan() -> TcoInputs:
    """A chat, a RAG and a batch workload on 30 eight-GPU servers in colocation."""
    return TcoInputs(
        workloads=(
            WorkloadDemand("chat", 60_000.0, DAY, 1.0, 2e9, 4e6),
            WorkloadDemand("rag", 30_000.0, DAY[6:] + DAY[:6], 0.5, 8e8, 1e6),
            WorkloadDemand("batch", 20_000.0, (1.0,) * 24, 0.0, 5e9, 2e5),
        ),
        cloud=CloudPricing(3.0),
        hardware=OwnedHardware(
            server_count=30, gpus_per_server=8, server_price_usd=300_000.0, server_power_kw=10.2
        ),
        sites=(SiteCost("colocation", "Colocation"),),
        horizon_months=60,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    inputs = plan()
    monte_carlo(inputs, paths=args.paths, seed=0)  # warm-up
    times = []
    for i in range(args.repeats):
        start = time.perf_counter()
        result = monte_carlo(inputs, paths=args.paths, seed=i)
        times.append(time.perf_counter() - start)
    print(
        f"monte_carlo: {args.paths} paths x {inputs.horizon_months} months, "
        f"{len(inputs.workloads)} workloads: median {statistics.median(times) * 1000:.0f} ms "
        f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}, n={args.repeats}); "
        f"P(owned cheaper) = {result.probability_owned_cheaper:.2f}"
    )


if __name__ == "__main__":
    main()
