"""The three load figures of the app in one run, against gunicorn and PostgreSQL with DEBUG off:
the client's share page (50 concurrent clients, target p95 ≤ 200 ms), the signed-in sizing page
(10 clients, target p95 ≤ 250 ms) and the sizing page's htmx recompute (10 clients, target
p95 ≤ 150 ms).

Usage:
    .venv/bin/python benchmarks/bench_load.py [--seconds 15] [--only share,sizing,recompute]

Needs PostgreSQL and wrk (``apt-get install wrk``). The database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/planner_load) is created when missing and loaded with the
catalog and the demo organisation (idempotent). gunicorn is started on a free port of
127.0.0.1 with the project's ``gunicorn.conf.py`` (the same settings as the Docker image; set
WEB_CONCURRENCY / GUNICORN_THREADS to try others) and stopped at the end. Each scenario is
warmed first, then loaded by wrk for ``--seconds``; it prints p50/p95/p99, requests,
errors (connection errors and non-2xx answers) and the server's CPU per request (gunicorn
workers, and the PostgreSQL backends of this database). Traffic goes to 127.0.0.1 only.

Exits non-zero only when the setup fails (database, demo data, server start); a missed
target or errors under load are printed, not raised, so the figures are always shown.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import runpy
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/planner_load"
DEMO_USER = ("demo", "demo-planner-2026")
WORKLOAD_FIELDS = (
    "name", "kind", "model", "precision", "input_tokens_mean", "input_tokens_p95",
    "output_tokens_mean", "output_tokens_p95", "percentile", "ttft_ms", "tpot_ms", "e2e_s",
    "peak_concurrency", "peak_requests_per_s", "headroom_pct", "n_plus_one", "daily_profile",
    "region_shares",
)  # fmt: skip


class SetupError(RuntimeError):
    """The benchmark could not prepare its database or server (exit status 2)."""


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    clients: int
    target_p95_ms: float
    method: str
    path: str
    headers: dict
    body: str = ""  # with PEAK replaced per request by a changing peak concurrency


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def manage(*args: str, env: dict, capture: bool = False) -> str:
    result = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=PROJECT, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    if result.returncode != 0:
        raise SetupError(f"manage.py {' '.join(args)} failed:\n{result.stderr[-2000:]}")
    return result.stdout if capture else ""


def ensure_database(url: str) -> str:
    """Create the database when missing; returns its name."""
    parts = urllib.parse.urlparse(url)
    name = parts.path.lstrip("/")
    host = parts.hostname or "127.0.0.1"
    user = parts.username or "postgres"
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SetupError(f"BENCH_DATABASE_URL must point at this machine, not {host}.")
    port = str(parts.port or 5432)
    found = subprocess.run(
        ["psql", "-h", host, "-p", port, "-U", user, "-d", "postgres", "-tAc",
         f"select 1 from pg_database where datname = '{name}'"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    if found.returncode != 0:
        raise SetupError(f"PostgreSQL is not reachable: {found.stderr.strip()}")
    if found.stdout.strip() != "1":
        subprocess.run(
            ["createdb", "-h", host, "-p", port, "-U", user, name], check=True, timeout=30
        )
    return name


class Client:
    """A browser-like session against the benchmark server: cookies and CSRF."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def cookie(self, name: str) -> str:
        return next(c.value for c in self.jar if c.name == name)

    def cookies(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=60) as response:
            return response.read().decode()

    def post(self, path: str, data: dict) -> str:
        request = urllib.request.Request(
            self.base + path, data=urllib.parse.urlencode(data).encode(), method="POST"
        )
        request.add_header("Referer", self.base + path)
        with self.opener.open(request, timeout=60) as response:
            return response.read().decode()

    def sign_in(self) -> None:
        self.get("/accounts/login/")
        username, password = DEMO_USER
        self.post("/accounts/login/", {"username": username, "password": password,
                                       "csrfmiddlewaretoken": self.cookie("csrftoken")})  # fmt: skip
        if "sessionid" not in self.cookies():
            raise SetupError("Could not sign in as the demo consultant.")


def form_values(html: str) -> dict:
    """The workload form's current values, read from the sizing page."""
    values = {}
    for name in WORKLOAD_FIELDS:
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
  if BODY == "" then
    return wrk.format(METHOD, PATH, HEADERS)
  end
  local body = string.gsub(BODY, "PEAK", tostring(300 + (counter % 200)))
  return wrk.format(METHOD, PATH, HEADERS, body)
end
done = function(summary, latency, requests)
  io.write(string.format("WRK p50=%.2f p95=%.2f p99=%.2f max=%.2f requests=%d non2xx=%d "
    .. "socket=%d\\n",
    latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.requests,
    summary.errors.status, summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout))
end
"""


def wrk_script(scenario: Scenario) -> str:
    headers = "{" + ", ".join(
        f"[{json.dumps(k)}] = {json.dumps(v)}" for k, v in scenario.headers.items()
    ) + "}"  # fmt: skip
    return (
        f"METHOD = {json.dumps(scenario.method)}\nPATH = {json.dumps(scenario.path)}\n"
        f"BODY = {json.dumps(scenario.body)}\nHEADERS = {headers}\n" + WRK_SCRIPT
    )


def run_wrk(base: str, scenario: Scenario, seconds: int, connections: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(wrk_script(scenario))
    try:
        result = subprocess.run(
            ["wrk", "-t", "2", "-c", str(connections), "-d", f"{seconds}s", "--timeout", "10s",
             "-s", handle.name, base],
            capture_output=True, text=True, timeout=seconds + 60,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"failed": f"wrk did not finish within {seconds + 60} s"}
    finally:
        os.unlink(handle.name)
    line = next((x for x in result.stdout.splitlines() if x.startswith("WRK ")), None)
    if line is None:
        return {"failed": (result.stderr or result.stdout).strip()[-500:]}
    return {key: float(value) for key, value in (part.split("=") for part in line.split()[1:])}


# --- server CPU (Linux /proc) ------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def children_of(master: int) -> list[int]:
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        fields = _stat_fields(int(entry.name))
        if fields and int(fields[1]) == master:
            pids.append(int(entry.name))
    return pids


def postgres_backends(database: str) -> list[int]:
    """PostgreSQL backend processes serving this database (``postgres: user db host ...``)."""
    pids = []
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmdline = entry.read_bytes()
        except OSError:
            continue
        if cmdline.startswith(b"postgres: ") and f" {database} ".encode() in cmdline:
            pids.append(int(entry.parent.name))
    return pids


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by these processes."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = _stat_fields(pid)
        if fields:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


# --- the run -------------------------------------------------------------------------------


def start_server(env: dict, port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [PYTHON, "-m", "gunicorn", "planner.wsgi", "--config", str(PROJECT / "gunicorn.conf.py"),
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=PROJECT, env=env, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SetupError(f"gunicorn exited with status {server.returncode}.")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2)
            return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise SetupError("gunicorn did not answer within 60 s.")


def share_token(env: dict) -> str:
    # The demo's link, or a new one to the latest revision once that has expired.
    code = (
        "from django.utils import timezone; from django.db.models import Q; "
        "from planner.sharing import services; "
        "from planner.sharing.models import PlanRevision, ShareLink; "
        "link = ShareLink.objects.filter(revoked_at=None, revision=None)"
        ".filter(Q(expires_at=None) | Q(expires_at__gt=timezone.now())).order_by('pk').first(); "
        "revision = PlanRevision.objects.order_by('pk').first(); "
        "link = link or (revision and services.share_link_create(plan=revision.plan, user=None, "
        "revision=None, expires_at=None, note='bench_load')); "
        "print('TOKEN', link.token if link else '')"
    )
    out = manage("shell", "-c", code, env=env, capture=True)
    token = next((x.split()[1] for x in out.splitlines() if x.startswith("TOKEN ") and
                  len(x.split()) == 2), "")  # fmt: skip
    if not token:
        raise SetupError("The demo has no active share link.")
    return token


def scenarios(base: str, token: str, clients: dict) -> list[Scenario]:
    probe = Client(base)
    share_path = f"/s/{token}/"
    if 'data-testid="revision-number"' not in Client(base).get(share_path):
        raise SetupError(f"The share page {share_path} does not show a revision.")
    probe.sign_in()
    plan_path = re.search(r'href="(/plans/\d+/)"', probe.get("/plans/")).group(1)
    workload_path = re.search(rf'href="({plan_path}workloads/\d+/)"', probe.get(plan_path)).group(1)
    sizing_html = probe.get(workload_path)
    values = form_values(sizing_html)
    csrf = probe.cookie("csrftoken")
    signed_in = {"Cookie": probe.cookies()}
    post = {**values, "peak_concurrency": "PEAK", "csrfmiddlewaretoken": csrf}
    return [
        Scenario("share", "share page (anonymous client, GET /s/<token>/)", clients["share"],
                 200, "GET", share_path, {}),
        Scenario("sizing", "sizing page (signed in, GET)", clients["sizing"], 250, "GET",
                 workload_path, signed_in),
        Scenario("recompute", "htmx recompute (signed in, POST with HX-Request)",
                 clients["recompute"], 150, "POST", workload_path,
                 {**signed_in, "X-CSRFToken": csrf, "HX-Request": "true",
                  "HX-Target": "sizing-results", "Referer": base + workload_path,
                  "Content-Type": "application/x-www-form-urlencoded"},
                 urllib.parse.urlencode(post)),
    ]  # fmt: skip


def measure(base: str, scenario: Scenario, seconds: int, server, database: str) -> None:
    run_wrk(base, scenario, max(2, seconds // 5), scenario.clients)  # warm every worker
    workers = children_of(server.pid)
    backends = postgres_backends(database)
    web_before, db_before = cpu_seconds(workers), cpu_seconds(backends)
    stats = run_wrk(base, scenario, seconds, scenario.clients)
    web_cpu, db_cpu = cpu_seconds(workers) - web_before, cpu_seconds(backends) - db_before
    print(f"{scenario.label}, {scenario.clients} concurrent clients for {seconds} s:")
    if "failed" in stats:
        print(f"  wrk failed: {stats['failed']}")
        return
    requests = int(stats["requests"])
    per = 1000 / max(requests, 1)
    errors = int(stats["non2xx"] + stats["socket"])
    verdict = "met" if stats["p95"] <= scenario.target_p95_ms and errors == 0 else "MISSED"
    print(f"  p50 {stats['p50']:.0f} ms, p95 {stats['p95']:.0f} ms, p99 {stats['p99']:.0f} ms, "
          f"max {stats['max']:.0f} ms; {requests} requests ({requests / seconds:.0f}/s), "
          f"{errors} errors ({int(stats['non2xx'])} non-2xx, {int(stats['socket'])} socket)")  # fmt: skip
    print(f"  server CPU per request: gunicorn {web_cpu * per:.1f} ms + PostgreSQL "
          f"{db_cpu * per:.1f} ms; target p95 ≤ {scenario.target_p95_ms:g} ms: {verdict}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=15, help="load per scenario (1-300)")
    parser.add_argument("--only", default="share,sizing,recompute", help="comma-separated")
    parser.add_argument("--share-clients", type=int, default=50)
    parser.add_argument("--sizing-clients", type=int, default=10)
    parser.add_argument("--recompute-clients", type=int, default=10)
    args = parser.parse_args()
    seconds = min(max(args.seconds, 1), 300)
    chosen = {key.strip() for key in args.only.split(",")}
    if not shutil.which("wrk"):
        print("wrk is not installed (apt-get install wrk).", file=sys.stderr)
        return 2

    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL)
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "planner.settings.local",
           "DEBUG": "0", "CELERY_BROKER_URL": "", "CACHE_URL": ""}  # fmt: skip
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    server = None
    try:
        database = ensure_database(url)
        for command in (("migrate", "--noinput"), ("load_catalog",), ("load_demo",)):
            manage(*command, env=env)
        token = share_token(env)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = start_server(env, port)
        workers = len(children_of(server.pid))
        plan = scenarios(base, token, {"share": args.share_clients,
                                       "sizing": args.sizing_clients,
                                       "recompute": args.recompute_clients})  # fmt: skip
    except (SetupError, subprocess.SubprocessError, OSError, AttributeError, StopIteration) as exc:
        print(f"Setup failed: {exc}", file=sys.stderr)
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        return 2
    try:
        threads = runpy.run_path(str(PROJECT / "gunicorn.conf.py"))["threads"]
        print(f"gunicorn: {workers} workers, {threads} threads each (gunicorn.conf.py); "
              f"PostgreSQL database {database}; DEBUG off; {os.cpu_count()} cores shared with "
              "wrk and PostgreSQL.")  # fmt: skip
        for scenario in plan:
            if scenario.key in chosen:
                measure(base, scenario, seconds, server, database)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
