"""gunicorn settings shared by the Docker image, docker-compose and benchmarks/bench_load.py.

Environment:
    WEB_CONCURRENCY: worker processes (default: 2 per core, at least 2).
    GUNICORN_THREADS: threads per worker (default 1: sync workers).
    GUNICORN_TIMEOUT: seconds before a silent worker is restarted (default 30).
"""

import multiprocessing
import os

workers = int(os.environ.get("WEB_CONCURRENCY", max(2, 2 * multiprocessing.cpu_count())))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
