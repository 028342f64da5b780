"""p50/p95 of the htmx recompute request (the sizing page's form posting a change) with 10
concurrent clients, against gunicorn and PostgreSQL.

Usage:
    .venv/bin/python benchmarks/bench_recompute.py [--clients 10] [--requests 20]

Needs PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/planner_bench;
the database is created and loaded with the catalog and the demo plan). Starts gunicorn on
127.0.0.1:8765 with the local settings and DEBUG off, signs in as the demo consultant in each
client, and posts the chat workload's form with HX-Request headers, as htmx does on a change.
Prints the latency percentiles; it asserts nothing.
"""

import argparse
import http.cookiejar
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
FORM_FIELDS = (
    "name", "kind", "model", "precision", "input_tokens_mean", "input_tokens_p95",
    "output_tokens_mean", "output_tokens_p95", "percentile", "ttft_ms", "tpot_ms", "e2e_s",
    "peak_concurrency", "peak_requests_per_s", "headroom_pct", "n_plus_one", "daily_profile",
    "region_shares",
)  # fmt: skip


def run(*args: str, env: dict) -> None:
    subprocess.run([PYTHON, "manage.py", *args], cwd=PROJECT, env=env, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip


def ensure_database(url: str) -> None:
    name = urllib.parse.urlparse(url).path.lstrip("/")
    exists = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-tAc",
         f"select 1 from pg_database where datname='{name}'"],
        capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    if exists != "1":
        subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], check=True)


class Client:
    """A browser-like session: cookies, CSRF token, form posts."""

    def __init__(self) -> None:
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def csrf(self) -> str:
        return next(c.value for c in self.jar if c.name == "csrftoken")

    def get(self, path: str) -> str:
        with self.opener.open(BASE + path, timeout=60) as response:
            return response.read().decode()

    def post(self, path: str, data: dict, headers: dict | None = None) -> tuple[int, str]:
        body = urllib.parse.urlencode(data, doseq=True).encode()
        request = urllib.request.Request(BASE + path, data=body, method="POST")
        request.add_header("X-CSRFToken", self.csrf())
        request.add_header("Referer", BASE + path)
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        with self.opener.open(request, timeout=60) as response:
            return response.status, response.read().decode()

    def sign_in(self) -> None:
        self.get("/accounts/login/")
        self.post("/accounts/login/", {"username": "demo", "password": "demo-planner-2026",
                                        "csrfmiddlewaretoken": self.csrf()})  # fmt: skip


def form_values(html: str) -> dict:
    """The workload form's current values, read from the sizing page."""
    values = {}
    for name in FORM_FIELDS:
        select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
        if select:
            chosen = re.search(r'<option value="([^"]*)"[^>]*selected', select.group(1))
            values[name] = chosen.group(1) if chosen else ""
            continue
        checkbox = re.search(rf'<input type="checkbox" name="{name}"[^>]*>', html)
        if checkbox:
            if "checked" in checkbox.group(0):
                values[name] = "on"
            continue
        field = re.search(rf'<input[^>]*name="{name}"[^>]*>', html)
        value = re.search(r'value="([^"]*)"', field.group(0)) if field else None
        values[name] = value.group(1).replace("&#x27;", "'") if value else ""
    return values


WRK_SCRIPT = """
counter = 0
request = function()
  counter = counter + 1
  local peak = 300 + (counter % 200)
  local body = string.gsub(BODY, "PEAK", tostring(peak))
  return wrk.format("POST", PATH, HEADERS, body)
end
done = function(summary, latency, requests)
  io.write(string.format("WRK p50=%.1f p95=%.1f p99=%.1f max=%.1f requests=%d errors=%d\\n",
    latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.requests,
    summary.errors.status + summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout))
end
"""


def run_wrk(probe: "Client", workload_path: str, values: dict, args) -> None:
    """Load the server with wrk (C, little CPU) from one signed-in session."""
    import json

    cookies = "; ".join(f"{c.name}={c.value}" for c in probe.jar)
    data = {**values, "peak_concurrency": "PEAK", "csrfmiddlewaretoken": probe.csrf()}
    body = urllib.parse.urlencode(data).replace("PEAK", "PEAK")
    headers = {
        "Cookie": cookies, "X-CSRFToken": probe.csrf(), "HX-Request": "true",
        "HX-Target": "sizing-results", "Referer": BASE + workload_path,
        "Content-Type": "application/x-www-form-urlencoded",
    }  # fmt: skip
    lua_headers = (
        "{" + ", ".join(f"[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()) + "}"
    )
    script = (
        f"PATH = {json.dumps(workload_path)}\nBODY = {json.dumps(body)}\n"
        f"HEADERS = {lua_headers}\n" + WRK_SCRIPT
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    workers = gunicorn_workers_of_port()
    cpu_before = cpu_seconds(workers)
    result = subprocess.run(
        ["wrk", "-t", "2", "-c", str(args.clients), "-d", f"{args.seconds}s", "-s", handle.name,
         BASE],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    line = next(line for line in result.stdout.splitlines() if line.startswith("WRK "))
    stats = dict(part.split("=") for part in line.split()[1:])
    requests = int(stats["requests"])
    server_cpu_ms = (cpu_seconds(workers) - cpu_before) * 1000 / max(requests, 1)
    print(f"htmx recompute, {args.clients} concurrent connections for {args.seconds} s (wrk), "
          f"gunicorn {args.workers} workers, PostgreSQL, {os.cpu_count()} cores:")  # fmt: skip
    print(f"  p50 {float(stats['p50']):.0f} ms, p95 {float(stats['p95']):.0f} ms, "
          f"p99 {float(stats['p99']):.0f} ms, max {float(stats['max']):.0f} ms, "
          f"{requests / args.seconds:.1f} requests/s, {stats['errors']} errors")  # fmt: skip
    print(f"  gunicorn CPU per request {server_cpu_ms:.0f} ms")


def gunicorn_workers_of_port() -> list[int]:
    """Worker pids of the gunicorn started by this script (children of its master)."""
    masters = [
        int(stat.parent.name)
        for stat in Path("/proc").glob("[0-9]*/cmdline")
        if f"127.0.0.1:{PORT}".encode() in stat.read_bytes() and b"gunicorn" in stat.read_bytes()
    ]
    return [pid for master in masters for pid in gunicorn_workers(master)]


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by these processes (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def gunicorn_workers(master: int) -> list[int]:
    """The master's child processes (the gunicorn workers)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == master:
            children.append(int(stat.parent.name))
    return children


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--requests", type=int, default=20, help="per client")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 2, help="gunicorn workers (one per core)"
    )
    parser.add_argument(
        "--seconds", type=int, default=20, help="with wrk: how long to load the server"
    )
    parser.add_argument(
        "--python-client", action="store_true",
        help="load with Python threads even when wrk is installed",
    )  # fmt: skip
    args = parser.parse_args()

    url = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/planner_bench")
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "planner.settings.local",
           "DEBUG": "0", "CELERY_BROKER_URL": ""}  # fmt: skip
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    ensure_database(url)
    for command in (("migrate", "--noinput"), ("load_catalog",), ("load_demo",)):
        run(*command, env=env)

    server = subprocess.Popen(
        [PYTHON, "-m", "gunicorn", "planner.wsgi", "--bind", f"127.0.0.1:{PORT}",
         "--workers", str(args.workers), "--log-level", "warning"],
        cwd=PROJECT, env=env,
    )  # fmt: skip
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(BASE + "/accounts/login/", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        probe = Client()
        probe.sign_in()
        plans = probe.get("/plans/")
        plan_path = re.search(r'href="(/plans/\d+/)"', plans).group(1)
        workload_path = re.search(
            rf'href="({plan_path}workloads/\d+/)"', probe.get(plan_path)
        ).group(1)
        values = form_values(probe.get(workload_path))

        if shutil.which("wrk") and not args.python_client:
            run_wrk(probe, workload_path, values, args)
            return
        latencies: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()

        def client_loop(index: int) -> None:
            client = Client()
            client.sign_in()
            client.get(workload_path)
            for i in range(args.requests):
                data = {**values, "peak_concurrency": str(300 + (index * args.requests + i) % 200),
                        "csrfmiddlewaretoken": client.csrf()}  # fmt: skip
                start = time.perf_counter()
                status, body = client.post(
                    workload_path, data,
                    {"HX-Request": "true", "HX-Target": "sizing-results", "HX-Current-URL": BASE + workload_path},
                )  # fmt: skip
                elapsed = (time.perf_counter() - start) * 1000
                with lock:
                    latencies.append(elapsed)
                    if status != 200 or 'data-testid="form-saved"' not in body:
                        errors.append(f"status {status}")

        # Warm every worker once before measuring.
        warm = [threading.Thread(target=client_loop, args=(i,)) for i in range(args.workers)]
        saved_requests, args.requests = args.requests, 2
        for thread in warm:
            thread.start()
        for thread in warm:
            thread.join()
        latencies.clear()
        errors.clear()
        args.requests = saved_requests

        workers = gunicorn_workers(server.pid)
        cpu_before = cpu_seconds(workers)
        start = time.perf_counter()
        threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - start
        server_cpu_ms = (cpu_seconds(workers) - cpu_before) * 1000 / max(len(latencies), 1)
        latencies.sort()
        p50 = statistics.median(latencies)
        p95 = latencies[int(0.95 * (len(latencies) - 1))]
        print(f"htmx recompute, {args.clients} concurrent clients x {args.requests} requests, "
              f"gunicorn {args.workers} workers, PostgreSQL, {os.cpu_count()} cores:")  # fmt: skip
        print(f"  p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {latencies[-1]:.0f} ms, "
              f"{len(latencies) / wall:.1f} requests/s, {len(errors)} errors")  # fmt: skip
        print(f"  gunicorn CPU per request {server_cpu_ms:.0f} ms (the load generator runs on "
              "the same cores)")  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
