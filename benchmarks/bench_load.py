"""The app's load figures in one run, against gunicorn and PostgreSQL with DEBUG off.

What issue 22 asks for in item 6, "speed from computing once".

Scenarios (``--only`` keys), their concurrent clients and targets:

    key        page                                        clients  p95 target  CPU target
    share      client's share page, GET /s/<token>/             50    ≤ 100 ms           -
    sizing     sizing page, GET /plans/<id>/workloads/<id>/     10    ≤ 150 ms     ≤ 25 ms
    overview   plan overview, GET /plans/<id>/                  10           -     ≤ 15 ms
    tco        TCO page, GET /plans/<id>/tco/                   10    ≤ 300 ms           -
    placement  placement page, GET /plans/<id>/placement/       10    ≤ 300 ms           -
    recompute  sizing page's htmx recompute (autosave POST)     10    ≤ 100 ms     ≤ 15 ms

The signed-in pages are the demo consultant's, on the demo plan. The recompute posts the
workload form with a changing peak concurrency, so each request saves and recomputes; it runs
last, and the workload's values are posted back once it is done, so the TCO and placement of
the next run read the demo as built.

Usage:
    .venv/bin/python benchmarks/bench_load.py [--seconds 15] [--only sizing,recompute]
        [--share-clients 50] [--sizing-clients 10] ... (one --KEY-clients per scenario)

Needs PostgreSQL and wrk (``apt-get install -y wrk``; the script says so and stops when it
is missing). The database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/planner_load) is created when missing and loaded with the
catalog and the demo organisation (idempotent). gunicorn is started on a free port of
127.0.0.1 with the project's ``gunicorn.conf.py`` (the same settings as the Docker image; set
WEB_CONCURRENCY / GUNICORN_THREADS to try others) and stopped at the end. Each scenario is
warmed first, then loaded by wrk for ``--seconds``; it prints p50/p95/p99, requests, errors
(connection errors, timeouts and answers other than 2xx) and the server's CPU per request:
the user + system CPU time of the gunicorn workers and of the PostgreSQL backends of this
database during the load, divided by the requests served. CPU time is what the server spends
on a request whatever else the machine runs, so it is the steadier figure when the cores are
shared; latencies grow with any other load. Traffic goes to 127.0.0.1 only.

At the end a markdown table sums every scenario up (clients, p50/p95/p99, the p95 target and
whether it was met, CPU ms per request against its target, requests/s, errors, and the
machine's 1-minute load average as the load ended, which says how far other work on the
machine stretched the latencies), ready to paste into an issue note.

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
from collections.abc import Callable
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


# Issue 22, item 6: (default clients, p95 target ms, server CPU target ms per request); None
# where the issue sets no target. The order is the order of the run (the recompute writes).
TARGETS = {
    "share": (50, 100, None),
    "sizing": (10, 150, 25),
    "overview": (10, None, 15),
    "tco": (10, 300, None),
    "placement": (10, 300, None),
    "recompute": (10, 100, 15),
}


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    clients: int
    target_p95_ms: float | None
    target_cpu_ms: float | None
    method: str
    path: str
    headers: dict
    body: str = ""  # with PEAK replaced per request by a changing peak concurrency


@dataclass(frozen=True)
class Outcome:
    """One scenario's figures; ``failed`` says why there are none."""

    scenario: Scenario
    seconds: int
    p50_ms: float = 0
    p95_ms: float = 0
    p99_ms: float = 0
    max_ms: float = 0
    requests: int = 0
    errors: int = 0
    web_cpu_ms: float = 0  # per request
    db_cpu_ms: float = 0
    load_1min: float = 0  # the machine's load average as the load ended: other work on it
    failed: str = ""

    @property
    def cpu_ms(self) -> float:
        return self.web_cpu_ms + self.db_cpu_ms

    @property
    def p95_met(self) -> bool | None:
        if self.failed or self.scenario.target_p95_ms is None:
            return None
        return self.p95_ms <= self.scenario.target_p95_ms and self.errors == 0

    @property
    def cpu_met(self) -> bool | None:
        if self.failed or self.scenario.target_cpu_ms is None:
            return None
        return self.cpu_ms <= self.scenario.target_cpu_ms


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


# Every answer outside 2xx counts (wrk's own status errors are only the 4xx and 5xx, so a
# redirect to the sign-in page would pass unseen); each thread keeps its count, summed in done.
WRK_SCRIPT = """
counter = 0
not2xx = 0
local threads = {}
setup = function(thread)
  table.insert(threads, thread)
end
response = function(status, headers, body)
  if status < 200 or status > 299 then
    not2xx = not2xx + 1
  end
end
request = function()
  counter = counter + 1
  if BODY == "" then
    return wrk.format(METHOD, PATH, HEADERS)
  end
  local body = string.gsub(BODY, "PEAK", tostring(300 + (counter % 200)))
  return wrk.format(METHOD, PATH, HEADERS, body)
end
done = function(summary, latency, requests)
  local bad = 0
  for _, thread in ipairs(threads) do
    bad = bad + thread:get("not2xx")
  end
  io.write(string.format("WRK p50=%.2f p95=%.2f p99=%.2f max=%.2f requests=%d non2xx=%d "
    .. "socket=%d\\n",
    latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.requests,
    math.max(bad, summary.errors.status), summary.errors.connect + summary.errors.read +
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
            ["wrk", "-t", str(min(2, connections)), "-c", str(connections), "-d", f"{seconds}s",
             "--timeout", "10s", "-s", handle.name, base],
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


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds used so far by each of these processes that is alive."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = {}
    for pid in pids:
        fields = _stat_fields(pid)
        if fields:
            used[pid] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return used


def cpu_used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two readings; a process started meanwhile counts in full."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


# --- the run -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """gunicorn with an access log (one line per request it served) and the database it uses."""

    process: subprocess.Popen
    access_log: Path
    database: str

    def served(self) -> int:
        """Requests served so far, including those whose client had gone (wrk's last ones)."""
        with self.access_log.open("rb") as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))

    def cpu(self) -> tuple[dict[int, float], dict[int, float]]:
        """CPU seconds so far of each gunicorn worker and of each backend of the database."""
        return cpu_seconds(children_of(self.process.pid)), cpu_seconds(
            postgres_backends(self.database)
        )

    def wait_idle(self, limit_s: float = 180) -> bool:
        """Wait until the workers and backends stop working: a sync worker still answers the
        requests queued when wrk stopped, and these must not fall into the next reading."""
        deadline = time.monotonic() + limit_s
        last = self.cpu()
        while time.monotonic() < deadline:
            time.sleep(0.5)
            now = self.cpu()
            if cpu_used(last[0], now[0]) + cpu_used(last[1], now[1]) < 0.02:
                return True
            last = now
        return False

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.access_log.unlink(missing_ok=True)


def start_server(env: dict, port: int, database: str) -> Server:
    handle, log = tempfile.mkstemp(prefix="bench_load_access_", suffix=".log")
    os.close(handle)
    process = subprocess.Popen(
        [PYTHON, "-m", "gunicorn", "planner.wsgi", "--config", str(PROJECT / "gunicorn.conf.py"),
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning", "--access-logfile", log,
         "--access-logformat", "%(s)s"],
        cwd=PROJECT, env=env, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    server = Server(process, Path(log), database)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            server.stop()
            raise SetupError(f"gunicorn exited with status {process.returncode}.")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2)
            return server
        except OSError:
            time.sleep(0.2)
    server.stop()
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


@dataclass(frozen=True)
class Setup:
    """The scenarios, and what puts the demo workload back after the recompute."""

    scenarios: list[Scenario]
    restore: Callable[[], None]


def scenarios(base: str, token: str, clients: dict) -> Setup:
    probe = Client(base)
    share_path = f"/s/{token}/"
    if 'data-testid="revision-number"' not in Client(base).get(share_path):
        raise SetupError(f"The share page {share_path} does not show a revision.")
    probe.sign_in()
    plan_path = re.search(r'href="(/plans/\d+/)"', probe.get("/plans/")).group(1)
    workload_path = re.search(rf'href="({plan_path}workloads/\d+/)"', probe.get(plan_path)).group(1)
    for page in ("tco/", "placement/"):
        probe.get(plan_path + page)  # answers 200 (an HTTPError is a setup failure)
    sizing_html = probe.get(workload_path)
    values = form_values(sizing_html)
    csrf = probe.cookie("csrftoken")
    signed_in = {"Cookie": probe.cookies()}
    post = {**values, "peak_concurrency": "PEAK", "csrfmiddlewaretoken": csrf}

    def restore() -> None:
        # The full-page save of the values read before the load (no loaded version: the
        # last write wins), so the workload, its chosen replicas and the TCO's inputs are the
        # demo's again.
        probe.post(workload_path, {**values, "csrfmiddlewaretoken": csrf})

    def scenario(key: str, label: str, method: str, path: str, headers: dict, body: str = ""):
        _, p95, cpu = TARGETS[key]
        return Scenario(key, label, clients[key], p95, cpu, method, path, headers, body)

    return Setup([
        scenario("share", "share page (anonymous client, GET /s/<token>/)", "GET", share_path,
                 {}),
        scenario("sizing", "sizing page (signed in, GET)", "GET", workload_path, signed_in),
        scenario("overview", "plan overview (signed in, GET /plans/<id>/)", "GET", plan_path,
                 signed_in),
        scenario("tco", "TCO page (signed in, GET /plans/<id>/tco/)", "GET",
                 plan_path + "tco/", signed_in),
        scenario("placement", "placement page (signed in, GET /plans/<id>/placement/)", "GET",
                 plan_path + "placement/", signed_in),
        scenario("recompute", "htmx recompute (signed in, POST with HX-Request)", "POST",
                 workload_path,
                 {**signed_in, "X-CSRFToken": csrf, "HX-Request": "true",
                  "HX-Target": "sizing-results", "Referer": base + workload_path,
                  "Content-Type": "application/x-www-form-urlencoded"},
                 urllib.parse.urlencode(post)),
    ], restore)  # fmt: skip


def measure(base: str, scenario: Scenario, seconds: int, server: Server) -> Outcome:
    run_wrk(base, scenario, max(2, seconds // 5), scenario.clients)  # warm every worker
    server.wait_idle()
    (web_before, db_before), served_before = server.cpu(), server.served()
    stats = run_wrk(base, scenario, seconds, scenario.clients)
    load_1min = os.getloadavg()[0]
    # CPU per request served: the load's requests, and those still queued when wrk stopped;
    # read by process, so a worker or backend started during the load counts in full.
    idle = server.wait_idle()
    (web_after, db_after), served = server.cpu(), server.served() - served_before
    print(f"{scenario.label}, {scenario.clients} concurrent clients for {seconds} s:")
    if not idle:
        print("  the server was still busy 3 minutes after the load: CPU figures run long")
    if "failed" not in stats and not stats["requests"]:
        stats = {"failed": f"no request was answered within the {seconds} s"}
    if "failed" in stats:
        print(f"  wrk failed: {stats['failed']}")
        return Outcome(scenario, seconds, failed=stats["failed"])
    requests = int(stats["requests"])
    web_cpu, db_cpu = cpu_used(web_before, web_after), cpu_used(db_before, db_after)
    per = 1000 / max(served, 1)
    outcome = Outcome(
        scenario, seconds, p50_ms=stats["p50"], p95_ms=stats["p95"], p99_ms=stats["p99"],
        max_ms=stats["max"], requests=requests, errors=int(stats["non2xx"] + stats["socket"]),
        web_cpu_ms=web_cpu * per, db_cpu_ms=db_cpu * per, load_1min=load_1min,
    )  # fmt: skip
    print(f"  p50 {outcome.p50_ms:.0f} ms, p95 {outcome.p95_ms:.0f} ms, p99 "
          f"{outcome.p99_ms:.0f} ms, max {outcome.max_ms:.0f} ms; {requests} requests "
          f"({requests / seconds:.0f}/s), {outcome.errors} errors ({int(stats['non2xx'])} "
          f"non-2xx, {int(stats['socket'])} socket)")  # fmt: skip
    print(f"  server CPU per request: gunicorn {outcome.web_cpu_ms:.1f} ms + PostgreSQL "
          f"{outcome.db_cpu_ms:.1f} ms = {outcome.cpu_ms:.1f} ms ({served} requests "
          f"served); machine load average {load_1min:.1f} on {os.cpu_count()} cores")  # fmt: skip
    print(f"  p95 {_target(scenario.target_p95_ms)}: {_verdict(outcome.p95_met)}; CPU "
          f"{_target(scenario.target_cpu_ms)}: {_verdict(outcome.cpu_met)}")  # fmt: skip
    return outcome


def _target(limit_ms: float | None) -> str:
    return "-" if limit_ms is None else f"≤ {limit_ms:g} ms"


def _verdict(met: bool | None) -> str:
    return {True: "met", False: "MISSED", None: "-"}[met]


def summary_table(outcomes: list[Outcome]) -> str:
    """The markdown table of every scenario, for an issue note."""
    lines = [
        "| scenario | clients | p50 / p95 / p99 ms | p95 target | met? | CPU ms/request "
        "(gunicorn + PostgreSQL) | CPU target | met? | requests/s | errors | load avg |",
        "|---|--:|--:|---|---|--:|---|---|--:|--:|--:|",
    ]
    for outcome in outcomes:
        scenario = outcome.scenario
        if outcome.failed:
            lines.append(f"| {scenario.key} | {scenario.clients} | wrk failed | "
                         f"{_target(scenario.target_p95_ms)} | - | - | "
                         f"{_target(scenario.target_cpu_ms)} | - | - | - | - |")  # fmt: skip
            continue
        lines.append(
            f"| {scenario.key} | {scenario.clients} | {outcome.p50_ms:.0f} / "
            f"{outcome.p95_ms:.0f} / {outcome.p99_ms:.0f} | {_target(scenario.target_p95_ms)} | "
            f"{_verdict(outcome.p95_met)} | {outcome.cpu_ms:.1f} ({outcome.web_cpu_ms:.1f} + "
            f"{outcome.db_cpu_ms:.1f}) | {_target(scenario.target_cpu_ms)} | "
            f"{_verdict(outcome.cpu_met)} | {outcome.requests / outcome.seconds:.0f} | "
            f"{outcome.errors} | {outcome.load_1min:.1f} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=15, help="load per scenario (1-300)")
    parser.add_argument("--only", default=",".join(TARGETS),
                        help=f"comma-separated scenario keys: {', '.join(TARGETS)}")  # fmt: skip
    for key, (clients, _, _) in TARGETS.items():
        parser.add_argument(f"--{key}-clients", type=int, default=clients,
                            help=f"concurrent clients (default {clients})")  # fmt: skip
    args = parser.parse_args()
    seconds = min(max(args.seconds, 1), 300)
    chosen = {key.strip() for key in args.only.split(",") if key.strip()}
    unknown = chosen - set(TARGETS)
    if unknown or not chosen:
        parser.error(f"--only takes scenario keys among {', '.join(TARGETS)}; "
                     f"unknown: {', '.join(sorted(unknown)) or '(none given)'}")  # fmt: skip
    clients = {key: max(1, getattr(args, f"{key}_clients")) for key in TARGETS}
    if not shutil.which("wrk"):
        print("wrk is not installed: install it with `apt-get install -y wrk` (Debian/Ubuntu) "
              "and run again.", file=sys.stderr)  # fmt: skip
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
        server = start_server(env, port, database)
        workers = len(children_of(server.process.pid))
        setup = scenarios(base, token, clients)
    except (SetupError, subprocess.SubprocessError, OSError, AttributeError, StopIteration) as exc:
        print(f"Setup failed: {exc}", file=sys.stderr)
        if server is not None:
            server.stop()
        return 2
    threads = runpy.run_path(str(PROJECT / "gunicorn.conf.py"))["threads"]
    conditions = (
        f"gunicorn: {workers} workers, {threads} threads each (gunicorn.conf.py); "
        f"PostgreSQL database {database}; DEBUG off; {os.cpu_count()} cores shared with "
        f"wrk and PostgreSQL; {seconds} s of load per scenario after a warm-up."
    )
    print(conditions)
    outcomes = []
    try:
        for scenario in setup.scenarios:
            if scenario.key not in chosen:
                continue
            try:
                outcomes.append(measure(base, scenario, seconds, server))
            finally:
                if scenario.key == "recompute":
                    try:
                        setup.restore()
                    except OSError as exc:
                        print(f"Could not post the workload's values back: {exc}",
                              file=sys.stderr)  # fmt: skip
    finally:
        server.stop()
    print()
    print(conditions)
    print()
    print(summary_table(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
