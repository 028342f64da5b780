"""`python -m tests.integration.slow_worker <celery arguments>`: a Celery worker whose TCO
Monte Carlo first spends SLOW_TCO_SECONDS reporting progress, for the fault tests only.

A real TCO run takes about a second, too short to kill a worker in the middle of it. This
wrapper slows the engine call in the worker's own process (prefork children inherit it);
the application code is unchanged. The progress messages ("Monte Carlo: slow test step")
tell the test that the task is running inside the slowed stage.
"""

import os
import sys
import time

from planner.engine import tco

_monte_carlo = tco.monte_carlo


def _slow_monte_carlo(inputs, *, progress=None, **options):
    seconds = float(os.environ["SLOW_TCO_SECONDS"])
    steps = max(1, int(seconds / 0.2))
    for step in range(steps):
        if progress is not None:
            progress(0.5 * step / steps, f"slow test step {step + 1} of {steps}")
        time.sleep(seconds / steps)
    return _monte_carlo(inputs, progress=progress, **options)


tco.monte_carlo = _slow_monte_carlo

if __name__ == "__main__":
    from celery.__main__ import main

    sys.argv[0] = "celery"
    sys.exit(main())
