"""Fit the performance model's efficiency factors on the published reference runs.

Writes planner/engine/data/calibration.json (versioned with the code) and prints the error
of every reference run, the summary by accelerator and scenario, and the in-sample error
beside the time-split, family-split and precision-split errors (runs held out of the fit).
The hold-out checks and splits refit many times and take several minutes; --no-holdout and
--no-splits skip them, --splits-only recomputes the splits and keeps the stored fit, and
--report-only prints what is stored.
"""

import datetime as dt

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from planner.calibration_report import calibration_report
from planner.engine.calibration import (
    DEFAULT_CALIBRATION_PATH,
    DEFAULT_TIME_CUTOFF,
    build_calibration,
    update_split_validation,
)


def _cutoff(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError as exc:
        raise CommandError(f"--cutoff {value!r} is not a date (YYYY-MM-DD)") from exc


class Command(BaseCommand):
    help = "Refit the calibration on catalog/data/benchmarks_public.csv and print the errors."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--no-holdout", action="store_true", help="Skip the hold-out refits.")
        parser.add_argument(
            "--no-splits", action="store_true", help="Skip the time/family/precision splits."
        )
        parser.add_argument(
            "--report-only", action="store_true", help="Print the stored fit without refitting."
        )
        parser.add_argument(
            "--splits-only",
            action="store_true",
            help="Recompute the split validations and keep the stored fit as it is.",
        )
        parser.add_argument(
            "--cutoff",
            default=DEFAULT_TIME_CUTOFF.isoformat(),
            help="Time split: fit on runs published before this date (YYYY-MM-DD), "
            "predict the later ones.",
        )
        parser.add_argument("--output", default=str(DEFAULT_CALIBRATION_PATH))
        parser.add_argument(
            "--workers",
            type=int,
            default=1,
            help="Processes for the split refits (one refit per fold; same results).",
        )

    def handle(self, *args, **options) -> None:
        cutoff = _cutoff(options["cutoff"])
        if options["splits_only"]:
            self.stdout.write("Refitting without the held-out runs (this takes a while)…")
            update_split_validation(
                settings.CATALOG_DATA_DIR, options["output"], cutoff, options["workers"]
            )
        elif not options["report_only"]:
            self.stdout.write("Fitting on the reference runs (this takes a while)…")
            build_calibration(
                settings.CATALOG_DATA_DIR,
                options["output"],
                holdout=not options["no_holdout"],
                splits=not options["no_splits"],
                time_cutoff=cutoff,
                workers=options["workers"],
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
                    f"\nHold-out by {label} (warm-started from the full fit): median "
                    f"{holdout.get('median_abs_error_pct', 0):.1f} %, "
                    f"max {holdout.get('max_abs_error_pct', 0):.1f} %"
                )
        self._write_validation(report)
        target = report.summary.get("target", {})
        met = report.summary.get("target_met")
        write(f"\nTarget {target}: {'met' if met else 'NOT met'}")

    def _write_validation(self, report) -> None:
        write = self.stdout.write
        columns = report.validation_columns
        write("\nAbsolute error by scenario, median / p90 % (runs), in-sample beside held out:")
        write(f"  {'scenario':<16}" + "".join(f" {title:>22}" for _, title, _ in columns))
        for row in report.validation_rows():
            cells = "".join(
                f" {'—':>22}"
                if cell is None
                else f" {f'{cell.median_abs_error_pct:.1f} / {cell.p90_abs_error_pct:.1f} ({cell.runs})':>22}"
                for cell in row.cells
            )
            write(f"  {row.scenario:<16}{cells}")
        for _key, title, description in columns[1:]:
            write(f"  {title}: {description}")
        if len(columns) == 1:
            write("  No split validation stored: run `calibrate` or `calibrate --splits-only`.")
        latency = report.latency_rows()
        if latency:
            write(
                "\nTPOT and TTFT at the concurrency each server/interactive run measured "
                "(Little's law on its rate and median latencies; TTFT p99 against the run's p99), "
                "and TTFT at the run's request rate (the engine finding the concurrency; runs it "
                "puts at or past its capacity answered with the saturation point), "
                "median / p90 % (runs):"
            )
            write(f"  {'scenario':<16}" + "".join(f" {title:>22}" for _, title, _ in columns))
            for row in latency:
                lines = (
                    ("TPOT", row.tpot),
                    ("TTFT", row.ttft),
                    ("TTFT p99", row.ttft_p99),
                    ("TTFT @rate", row.ttft_at_rate),
                )
                for label, cells in lines:
                    if not any(cells):
                        continue
                    text = "".join(
                        f" {'—':>22}"
                        if cell is None
                        else f" {f'{cell.median_abs_error_pct:.1f} / {cell.p90_abs_error_pct:.1f} ({cell.runs})':>22}"
                        for cell in cells
                    )
                    write(f"  {row.scenario + ' ' + label:<16}{text}")
                if any(n is not None for n in row.saturated_at_rate):
                    text = "".join(
                        f" {'—' if n is None else f'{n} at capacity':>22}"
                        for n in row.saturated_at_rate
                    )
                    write(f"  {row.scenario + ' @rate':<16}{text}")
        static = report.summary.get("static_batch_not_fitted")
        if static:
            write(
                f"\nStatic-batch latency runs, never fitted (ROCm vLLM on 8 × MI300X, batch "
                f"1-128, output tokens/s = batch × output / end-to-end s): median "
                f"{static['median_abs_error_pct']:.1f} %, p90 {static['p90_abs_error_pct']:.1f} %, "
                f"worst {static['max_abs_error_pct']:.1f} % over {static['runs']} runs "
                f"(median signed error {static['median_error_pct']:+.1f} %)"
            )
        headline = report.headline
        write(
            f"\nOut of sample ({headline['label']}): median "
            f"{headline.get('median_abs_error_pct', 0):.1f} %, p90 "
            f"{headline.get('p90_abs_error_pct', 0):.1f} %, worst "
            f"{headline.get('max_abs_error_pct', 0):.1f} % over {headline.get('runs', 0)} runs"
        )
