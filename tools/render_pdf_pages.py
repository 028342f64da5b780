"""Render the first pages of each PDF document to PNG, for a person to look at.

Usage:
    .venv/bin/python tools/render_pdf_pages.py [--out var/pdf-pages] [--pages 2] [--dpi 80]
        [--plan ID --revision N]

Without ``--plan`` the documents are rendered from the synthetic sample snapshot
(``planner.pdf.samples``, 40 BOM lines); with it, from that plan's published revision in the
configured database. Each PDF is written next to its PNGs (pdftoppm from poppler-utils).
"""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "var" / "pdf-pages"))
    parser.add_argument("--pages", type=int, default=2, help="first pages of each PDF")
    parser.add_argument("--dpi", type=int, default=80)
    parser.add_argument("--plan", type=int, help="plan id (else the sample snapshot)")
    parser.add_argument("--revision", type=int, help="revision number (default: the latest)")
    args = parser.parse_args()
    if shutil.which("pdftoppm") is None:
        sys.exit("pdftoppm is missing: apt-get install poppler-utils")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings.local")
    import django

    django.setup()
    from planner.pdf.samples import sample_snapshot
    from planner.sharing import services
    from planner.sharing.models import DocumentKind, PlanRevision

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.plan:
        revisions = PlanRevision.objects.filter(plan_id=args.plan).order_by("-number")
        if args.revision:
            revisions = revisions.filter(number=args.revision)
        revision = revisions.first()
        if revision is None:
            sys.exit(f"Plan {args.plan} has no such published revision.")
    else:
        revision = PlanRevision(number=1, snapshot=sample_snapshot(), published_by_name="sample")
    for kind in DocumentKind.values:
        content = services.document_render(revision=revision, kind=kind)
        pdf = out / f"{kind}.pdf"
        pdf.write_bytes(content)
        subprocess.run(
            ["pdftoppm", "-png", "-r", str(args.dpi), "-f", "1", "-l", str(args.pages),
             str(pdf), str(out / kind)],
            check=True,
        )  # fmt: skip
        pngs = sorted(p.name for p in out.glob(f"{kind}-*.png"))
        print(f"{kind}: {pdf} → {', '.join(pngs)}")


if __name__ == "__main__":
    main()
