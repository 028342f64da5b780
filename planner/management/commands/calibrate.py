"""Fit the performance model's efficiency factors on the published reference runs.

Writes planner/engine/data/calibration.json (versioned with the code) and prints the error
of every reference run and the summary by accelerator and scenario. The hold-out checks
refit once per hardware fold and take a few minutes; --no-holdout skips them.
"""

from django.conf import settings
from django.core.management.base import BaseCommand

from planner.calibration_report import calibration_report
from planner.engine.calibration import DEFAULT_CALIBRATION_PATH, build_calibration


class Command(BaseCommand):
    help = "Refit the calibration on catalog/data/benchmarks_public.csv and print the errors."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--no-holdout", action="store_true", help="Skip the hold-out refits.")
        parser.add_argument(
            "--report-only", action="store_true", help="Print the stored fit without refitting."
        )
        parser.add_argument("--output", default=str(DEFAULT_CALIBRATION_PATH))

    def handle(self, *args, **options) -> None:
        if not options["report_only"]:
            self.stdout.write("Fitting on the reference runs (this takes a while)…")
            build_calibration(
                settings.CATALOG_DATA_DIR, options["output"], holdout=not options["no_holdout"]
            )
        report = calibration_report(options["output"])
        write = self.stdout.write
        write(f"{'reference run':<70} {'accel':<14} {'scenario':<15} "
              f"{'measured':>10} {'estimate':>10} {'error %':>8}")  # fmt: skip
        for row in sorted(report.rows, key=lambda r: r["ref_id"]):
            write(
                f"{row['ref_id'][:70]:<70} {row['accelerator_slug']:<14} {row['scenario']:<15} "
                f"{row['measured_tokens_per_s']:>10,.0f} {row['predicted_tokens_per_s']:>10,.0f} "
                f"{row['error_pct']:>+8.1f}"
            )
        summary = report.in_sample
        write("")
        write(
            f"Calibration {report.version} ({report.fitted_at}): {summary.get('runs', 0)} runs, "
            f"median abs error {summary.get('median_abs_error_pct', 0):.1f} %, "
            f"max {summary.get('max_abs_error_pct', 0):.1f} %, "
            f"{summary.get('within_35_pct_share', 0) * 100:.1f} % of runs within 35 %"
        )
        for title, key in (("By accelerator", "by_accelerator"), ("By scenario", "by_scenario")):
            write(f"\n{title}:")
            for name, stats in sorted(summary.get(key, {}).items()):
                write(
                    f"  {name:<16} {stats['runs']:>4} runs  median {stats['median_abs_error_pct']:5.1f} %"
                    f"  max {stats['max_abs_error_pct']:5.1f} %"
                )
        for label, key in (
            ("family", "holdout_by_family"),
            ("accelerator", "holdout_by_accelerator"),
        ):
            holdout = report.summary.get(key)
            if holdout:
                write(
                    f"\nHold-out by {label}: median {holdout.get('median_abs_error_pct', 0):.1f} %, "
                    f"max {holdout.get('max_abs_error_pct', 0):.1f} %"
                )
        target = report.summary.get("target", {})
        met = report.summary.get("target_met")
        write(f"\nTarget {target}: {'met' if met else 'NOT met'}")
