"""CPU per request of the consultant's pages on the demo plan, in one process, without a server.

What issue 22's "speed" item measures with ``bench_load.py`` (gunicorn, PostgreSQL, wrk), but
quick to repeat while changing code: Django's test client requests each page of the demo plan
in this process and the process CPU time (user + system, ``time.process_time``) of each request
is read; the median, p90 and max of ``--repeats`` requests are printed per page after a few
warm-up requests. The database is an SQLite file (``--db``, kept between runs: the catalog and
the demo plan are loaded once, the load is idempotent), so its query work counts in the
figures, unlike ``bench_load.py`` where PostgreSQL's backends are read apart.

Pages (``--only`` keys): ``sizing`` (the demo chat workload's sizing page), ``overview``
(the plan overview), ``tco``, ``placement``, ``recompute`` (the sizing page's htmx autosave
POST with a changing peak concurrency; the workload's values are posted back at the end) and
``share`` (the client's share page, anonymous).

``--profile KEY`` runs that page's requests under cProfile and prints the functions by
cumulative and by own time (``--top`` rows each).

Usage:
    PYTHONPATH=. .venv/bin/python benchmarks/bench_page_cpu.py [--repeats 25]
        [--only sizing,overview] [--profile sizing] [--db /tmp/bench_page_cpu.sqlite3]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

PAGES = ("sizing", "overview", "tco", "placement", "recompute", "share")
WARMUP = 3


def setup_django(db: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "planner.settings.local"
    os.environ["DEBUG"] = "0"
    os.environ["CELERY_BROKER_URL"] = ""
    os.environ["CACHE_URL"] = ""
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    for command in ("migrate", "load_catalog", "load_demo"):
        call_command(command, verbosity=0) if command == "migrate" else call_command(command)


def share_token() -> str:
    from django.db.models import Q
    from django.utils import timezone

    from planner.sharing import services
    from planner.sharing.models import PlanRevision, ShareLink

    link = (
        ShareLink.objects.filter(revoked_at=None, revision=None)
        .filter(Q(expires_at=None) | Q(expires_at__gt=timezone.now()))
        .order_by("pk")
        .first()
    )
    if link is None:
        revision = PlanRevision.objects.order_by("pk").first()
        link = services.share_link_create(
            plan=revision.plan, user=None, revision=None, expires_at=None, note="bench_page_cpu"
        )
    return link.token


def requests_of(client, anonymous) -> tuple[dict, callable]:
    """Each page's request (a callable answering a response) and what restores the demo."""
    from bench_load import form_values

    from planner.models import Plan

    plan = Plan.objects.filter(name__startswith="Customer assistant").order_by("pk").first()
    workload = plan.workloads.order_by("pk").first()
    plan_path = f"/plans/{plan.pk}/"
    workload_path = f"{plan_path}workloads/{workload.pk}/"
    values = form_values(client.get(workload_path).content.decode())
    share_path = f"/s/{share_token()}/"
    peaks = iter(range(10**9))

    def recompute():
        peak = 300 + next(peaks) % 200
        return client.post(
            workload_path,
            {**values, "peak_concurrency": str(peak)},
            HTTP_HX_REQUEST="true",
            HTTP_HX_TARGET="sizing-results",
        )

    def restore():
        client.post(workload_path, values)

    return {
        "sizing": lambda: client.get(workload_path),
        "overview": lambda: client.get(plan_path),
        "tco": lambda: client.get(plan_path + "tco/"),
        "placement": lambda: client.get(plan_path + "placement/"),
        "recompute": recompute,
        "share": lambda: anonymous.get(share_path),
    }, restore


def timed(request) -> float:
    start = time.process_time()
    response = request()
    used = time.process_time() - start
    if response.status_code != 200:
        raise SystemExit(f"answer {response.status_code}: {response.content[:300]!r}")
    return used * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--only", default=",".join(PAGES))
    parser.add_argument("--profile", default="", help="one page key to profile")
    parser.add_argument("--top", type=int, default=45)
    parser.add_argument("--db", type=Path, default=Path("/tmp/bench_page_cpu.sqlite3"))
    args = parser.parse_args()
    chosen = [k for k in PAGES if k in {x.strip() for x in args.only.split(",")}]
    if args.profile and args.profile not in PAGES:
        parser.error(f"--profile takes one of {', '.join(PAGES)}")
    setup_django(args.db)
    from django.contrib.auth.models import User
    from django.test import Client

    client, anonymous = Client(), Client()
    client.force_login(User.objects.get(username="demo"))
    pages, restore = requests_of(client, anonymous)
    try:
        if args.profile:
            request = pages[args.profile]
            for _ in range(WARMUP):
                timed(request)
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.repeats):
                timed(request)
            profiler.disable()
            stats = pstats.Stats(profiler).strip_dirs()
            stats.sort_stats("cumulative").print_stats(args.top)
            stats.sort_stats("tottime").print_stats(args.top)
            return 0
        print(
            f"CPU ms per request, {args.repeats} requests after {WARMUP} warm-up, SQLite {args.db}"
        )
        print(f"{'page':<10} {'median':>8} {'p90':>8} {'max':>8}")
        for key in chosen:
            for _ in range(WARMUP):
                timed(pages[key])
            used = sorted(timed(pages[key]) for _ in range(args.repeats))
            p90 = used[min(len(used) - 1, int(round(0.9 * (len(used) - 1))))]
            print(f"{key:<10} {statistics.median(used):8.1f} {p90:8.1f} {used[-1]:8.1f}")
    finally:
        if "recompute" in chosen or args.profile == "recompute":
            restore()
    return 0


if __name__ == "__main__":
    sys.exit(main())
