"""How long the PDFs take: the quote with a 40-line BOM (target ≤ 2 s) and the plan report
with its 6+ charts (target ≤ 5 s).

Usage:
    .venv/bin/python benchmarks/bench_pdf.py [--lines 40] [--repeat 5]

Renders from a synthetic revision snapshot (``planner.pdf.samples``), so no database is
needed: typed context → HTML template → WeasyPrint bytes, exactly as a revision's documents
are rendered. The first run of each document warms fonts and templates and is reported apart.
Prints the timings; asserts nothing.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=40, help="BOM lines in the quote")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings.local")
    import django

    django.setup()
    from planner.pdf import context
    from planner.pdf.render import render_pdf
    from planner.pdf.samples import sample_snapshot

    head = {"revision_number": 1, "published_at": None, "published_by": "bench"}
    snapshot = sample_snapshot(bom_lines=args.lines)
    jobs = (
        ("quote", f"quote, {args.lines}-line BOM", "pdf/quote.html", context.quote_context, 2.0),
        ("report", "plan report", "pdf/report.html", context.report_context, 5.0),
        ("checklist", "checklist", "pdf/checklist.html", context.checklist_context, None),
    )
    for _key, label, template, build, target in jobs:
        started = time.perf_counter()
        doc = build(snapshot, **head)
        first = render_pdf(template, {"doc": doc})
        cold = time.perf_counter() - started
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            doc = build(snapshot, **head)
            rendered = render_pdf(template, {"doc": doc})
            times.append(time.perf_counter() - started)
        charts = len(getattr(doc, "charts", {}) or {})
        extra = f", {charts} charts" if charts else ""
        verdict = "" if target is None else (
            f"  target ≤ {target:g} s: {'met' if max(times) <= target else 'MISSED'}")  # fmt: skip
        print(
            f"{label:<22} {rendered.pages} pages{extra}, {len(first.content) / 1024:.0f} KiB: "
            f"first {cold:.2f} s, then median {statistics.median(times):.2f} s, "
            f"max {max(times):.2f} s over {args.repeat} runs.{verdict}"
        )


if __name__ == "__main__":
    main()
