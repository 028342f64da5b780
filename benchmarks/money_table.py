"""The money a client signs, as a table: the demo plan, then the same two-site EUR plan for a
VAT-exempt client (a bank), each with its landed cost, TCO capex, each option's NPV and
break-even, and each workload's cost per request per option. Prints; asserts nothing.

Issue 23 asks for these figures before and after a change: run it on two checkouts (e.g. a
``git worktree add /tmp/before main``) and compare the tables. Each run builds a fresh SQLite
database (``--db``, deleted first) through the same commands and services `make run` and the
tests use: ``migrate``, ``load_catalog``, ``load_demo``; the bank case sets the demo client's
VAT recovery to "none" (what ``tests/sourcing/test_client_vat_recovery.py`` does) and recomputes
the TCO through the stale banner's recompute.

Usage:
    PYTHONPATH=. .venv/bin/python benchmarks/money_table.py [--db /tmp/money_table.sqlite3]
"""

from __future__ import annotations

import argparse
import os
import sys
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def setup_django(db: Path) -> None:
    if db.exists():
        db.unlink()
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "planner.settings.local"
    os.environ["DEBUG"] = "0"
    os.environ["CELERY_BROKER_URL"] = ""
    os.environ["CACHE_URL"] = ""
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("load_catalog")
    call_command("load_demo")


def _amount(value) -> str:
    if value in (None, ""):
        return "—"
    return f"{Decimal(str(value)):,.2f}"


def _table(title: str, plan, user) -> None:
    from planner.facility.models import TcoRun, TcoStatus
    from sourcing.services import landed_cost_report

    report = landed_cost_report(plan=plan, organisation=plan.organisation)
    run = TcoRun.objects.filter(plan=plan, status=TcoStatus.SUCCEEDED).latest("pk")
    results = run.results
    currency = results["currency"]
    options = results["options"]
    print(f"\n## {title}")
    recovery = getattr(plan.client, "vat_recovery", "(no setting)")
    print(f"plan currency {currency}; client VAT recovery: {recovery}; TCO run {run.pk}")
    print(f"landed cost (net, all sites)     {_amount(report.total_net.amount):>16} {currency}")
    not_recoverable = getattr(report, "vat_not_recoverable", None)
    if not_recoverable is not None:
        print(f"  of which VAT not recoverable   {_amount(not_recoverable.amount):>16} {currency}")
    owned = next((o for o in options if o["key"] == "owned"), None)
    if owned is not None:
        capex = sum(Decimal(v) for v in owned["lines_amount"].get("capex", []))
        print(f"TCO capex (owned)                {_amount(capex):>16} {currency}")
    print(f"cheapest option: {results.get('cheapest')}")
    print(f"\n| option | NPV ({currency}) | break-even month | break-even utilisation |")
    print("|---|---:|---:|---:|")
    for o in options:
        utilisation = o.get("break_even_utilisation")
        print(
            f"| {o['label']} | {_amount(o.get('npv_amount'))} | "
            f"{o.get('break_even_month') if o.get('break_even_month') is not None else '—'} | "
            f"{'—' if utilisation is None else f'{float(utilisation):.1%}'} |"
        )
    names = sorted({w["name"] for o in options for w in o.get("workloads", [])})
    print(f"\ncost per request ({currency}) per workload and option:")
    print("| option | " + " | ".join(names) + " | option-wide |")
    print("|---|" + "---:|" * (len(names) + 1))
    for o in options:
        per = {w["name"]: w.get("cost_per_request_amount") for w in o.get("workloads", [])}
        cells = [per.get(n) or "—" for n in names]
        print(f"| {o['label']} | " + " | ".join(cells) + f" | {o.get('cost_per_request_amount')} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("/tmp/money_table.sqlite3"))
    args = parser.parse_args()
    setup_django(args.db)
    from django.contrib.auth.models import User

    from planner import freshness
    from planner.demo import DEMO_PLAN
    from planner.models import Plan

    plan = Plan.objects.get(name=DEMO_PLAN)
    user = User.objects.get(username="demo")
    _table("The demo (Northwind, fully taxable)", plan, user)

    client = plan.client
    if not hasattr(client, "vat_recovery"):
        print("\n(no VAT recovery setting on this checkout: no bank case)")
        return 0
    client.vat_recovery = "none"
    if hasattr(client, "vat_recoverable_pct"):
        client.vat_recoverable_pct = None
    client.save()
    plan = Plan.objects.get(pk=plan.pk)
    freshness.recompute(plan=plan, kind=freshness.TCO, user=user, inline=True)
    _table("The same two-site EUR plan for a VAT-exempt bank (recovery: none)", plan, user)
    return 0


if __name__ == "__main__":
    sys.exit(main())
