"""The demo plan's sizing pages as HTML files, to diff before and after a change of their code.

A change made for speed must not change what the consultant sees. This writes, for each
workload of the demo plan, its sizing page under every combination of the table's toggles and
sorts (``?show=…&precisions=…&tp=…&stacks=…&sort=…``), the htmx table answer, a row's detail
and the htmx autosave (the workload's own values posted back, so nothing changes), and the
plan's overview, TCO and placement pages, to
``OUT/<name>.html``. Per-request tokens (CSRF) and the
workload form's loaded version and signed values are masked.
Run it on the old code and on the new one with the same database and compare:

    PYTHONPATH=. .venv/bin/python benchmarks/sizing_html_snapshot.py /tmp/before
    (change the code)
    PYTHONPATH=. .venv/bin/python benchmarks/sizing_html_snapshot.py /tmp/after
    diff -r /tmp/before /tmp/after && echo identical

The database is the one ``bench_page_cpu.py`` loads (``--db``).
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

TOGGLES = {
    "show": ("", "all"),
    "precisions": ("", "all"),
    "tp": ("", "all"),
    "stacks": ("", "all"),
}
SORTS = ("", "cost", "accelerators", "throughput", "ttft", "tpot", "batch")
MASKS = (
    (
        re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"'),
        'name="csrfmiddlewaretoken" value=""',
    ),
    (re.compile(r'"X-CSRFToken": "[^"]*"'), '"X-CSRFToken": ""'),
    (re.compile(r'(name="loaded_version" value=")\d+'), r"\g<1>N"),
    (re.compile(r'(name="loaded_values" value=")[^"]*'), r"\g<1>SIGNED"),
)


def masked(html: str) -> str:
    for pattern, replacement in MASKS:
        html = pattern.sub(replacement, html)
    return html


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--db", type=Path, default=Path("/tmp/bench_page_cpu.sqlite3"))
    args = parser.parse_args()
    from bench_page_cpu import setup_django

    setup_django(args.db)
    from bench_load import form_values
    from django.contrib.auth.models import User
    from django.test import Client

    from planner.models import Plan

    args.out.mkdir(parents=True, exist_ok=True)
    client = Client()
    client.force_login(User.objects.get(username="demo"))
    plan = Plan.objects.filter(name__startswith="Customer assistant").order_by("pk").first()
    written = 0

    def save(name: str, response) -> None:
        nonlocal written
        if response.status_code != 200:
            raise SystemExit(f"{name}: answer {response.status_code}")
        (args.out / f"{name}.html").write_text(masked(response.content.decode()))
        written += 1

    plan_path = f"/plans/{plan.pk}/"
    for name, path in (("overview", ""), ("tco", "tco/"), ("placement", "placement/")):
        save(f"plan-{name}", client.get(plan_path + path))  # they show the sizing's figures
    for workload in plan.workloads.order_by("pk"):
        path = f"/plans/{plan.pk}/workloads/{workload.pk}/"
        for values in itertools.product(*TOGGLES.values(), SORTS):
            query = {k: v for k, v in zip([*TOGGLES, "sort"], values, strict=True) if v}
            name = f"w{workload.pk}-" + "-".join(f"{k}_{v}" for k, v in query.items())
            save(name, client.get(path, query))
        save(
            f"w{workload.pk}-htmx-table",
            client.get(
                path, {"show": "all", "tp": "all"}, HTTP_HX_REQUEST="true",
                HTTP_HX_TARGET="sizing-results",
            ),
        )  # fmt: skip
        page = client.get(path, {"show": "all", "precisions": "all", "tp": "all"})
        for key in re.findall(r'data-key="([^"]*)"', page.content.decode())[:3]:
            save(f"w{workload.pk}-selected-{key.replace('|', '_')}", client.get(
                path, {"candidate": key, "show": "all"}))  # fmt: skip
        values = form_values(client.get(path).content.decode())
        save(
            f"w{workload.pk}-autosave",
            client.post(path, values, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="sizing-results"),
        )
    print(f"{written} pages in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
