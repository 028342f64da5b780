"""gunicorn settings shared by the Docker image, docker-compose and benchmarks/bench_load.py.

Plain sync workers, one process per core: the pages are CPU-bound Python, and threads in one
process only take turns on the GIL. Measured with benchmarks/bench_load.py on 2 cores: sync
workers served the sizing page at 75 requests/s (p95 148 ms) against 34/s (p95 420 ms) with
4 threads per worker, and the share page equally well (p95 160 ms against 163 ms, 50
clients). Set GUNICORN_THREADS above 1 for gthread workers (keep-alive, slow clients).

Environment:
    WEB_CONCURRENCY: worker processes (default: one per core, at least 2).
    GUNICORN_THREADS: threads per worker (default 1, the sync worker; more gives gthread).
    GUNICORN_TIMEOUT: seconds before a silent worker is restarted (default 30).
"""

import multiprocessing
import os

workers = int(os.environ.get("WEB_CONCURRENCY", max(2, multiprocessing.cpu_count())))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
worker_class = "gthread" if threads > 1 else "sync"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
keepalive = 5  # seconds; behind a proxy that reuses connections
