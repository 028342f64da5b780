"""gunicorn settings shared by the Docker image, docker-compose and benchmarks/bench_load.py.

Threaded workers (gthread) keep HTTP connections alive and take several requests per process
(each thread with its own persistent database connection), so a burst of clients (a share
link opened by fifty people) is served without reconnecting for every request. Pages are
CPU-bound Python, so more processes than cores do not help.

Environment:
    WEB_CONCURRENCY: worker processes (default: one per core, at least 2).
    GUNICORN_THREADS: threads per worker (default 4; 1 gives the plain sync worker).
    GUNICORN_TIMEOUT: seconds before a silent worker is restarted (default 30).
"""

import multiprocessing
import os

workers = int(os.environ.get("WEB_CONCURRENCY", max(2, multiprocessing.cpu_count())))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
worker_class = "gthread" if threads > 1 else "sync"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
keepalive = 5  # seconds; behind a proxy that reuses connections
