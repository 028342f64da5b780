"""Reads the shipped calibration data file for the calibrate command and the page."""

import json
from dataclasses import dataclass
from pathlib import Path

from planner.engine.calibration import DEFAULT_CALIBRATION_PATH

# Held-out columns of the validation table, in order, after the in-sample one.
SPLIT_COLUMNS = (
    ("time", "Time split"),
    ("family", "Family split"),
    ("precision", "Precision split"),
)


@dataclass(frozen=True, slots=True)
class ValidationCell:
    """Median and 90th-percentile absolute error of one scenario under one validation."""

    runs: int
    median_abs_error_pct: float
    p90_abs_error_pct: float


@dataclass(frozen=True, slots=True)
class ValidationRow:
    """One scenario (or "all") across the validation columns; None where a column has no run."""

    scenario: str
    cells: tuple[ValidationCell | None, ...]


@dataclass(frozen=True, slots=True)
class LatencyValidationRow:
    """TPOT and TTFT error at the measured concurrency, one scenario across the columns; p99
    TTFT there, and the median TTFT at the measured request rate (the engine finding the
    concurrency itself) with how many runs it put at or past its capacity."""

    scenario: str
    tpot: tuple[ValidationCell | None, ...]
    ttft: tuple[ValidationCell | None, ...]
    ttft_p99: tuple[ValidationCell | None, ...] = ()
    ttft_at_rate: tuple[ValidationCell | None, ...] = ()
    saturated_at_rate: tuple[int | None, ...] = ()


def _cell(stats: dict | None) -> ValidationCell | None:
    if not stats or not stats.get("runs"):
        return None
    return ValidationCell(
        runs=int(stats["runs"]),
        median_abs_error_pct=float(stats.get("median_abs_error_pct", 0.0)),
        p90_abs_error_pct=float(stats.get("p90_abs_error_pct", 0.0)),
    )


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    """What the fit reached: version, summary statistics and the per-run error rows."""

    version: str
    fitted_at: str
    method: str
    summary: dict
    rows: list[dict]
    excluded: list[dict]
    assumptions: list[str]

    @property
    def in_sample(self) -> dict:
        return self.summary.get("in_sample", {})

    @property
    def splits(self) -> dict:
        """Split name -> stored validation summary ("time", "family", "precision")."""
        return self.summary.get("splits") or {}

    @property
    def validation_columns(self) -> list[tuple[str, str, str]]:
        """(key, title, description) of the columns the stored data has."""
        columns = [("in_sample", "In-sample", "fitted and scored on the same runs")]
        for key, title in SPLIT_COLUMNS:
            if key in self.splits:
                columns.append((key, title, self.splits[key].get("description", "")))
        return columns

    def _sources(self) -> list[dict]:
        return [
            self.in_sample if key == "in_sample" else self.splits[key]
            for key, _, _ in self.validation_columns
        ]

    def latency_rows(self) -> list[LatencyValidationRow]:
        """TPOT and TTFT at the concurrency each server/interactive run measured (Little's
        law on its rate and latencies), in-sample beside each split; "all" first."""
        sources = [s.get("latency_at_concurrency") or {} for s in self._sources()]
        scenarios = sorted({name for s in sources for name in s} - {"all"})
        return [
            LatencyValidationRow(
                name,
                tuple(_cell((s.get(name) or {}).get("tpot")) for s in sources),
                tuple(_cell((s.get(name) or {}).get("ttft")) for s in sources),
                tuple(_cell((s.get(name) or {}).get("ttft_p99")) for s in sources),
                tuple(_cell((s.get(name) or {}).get("ttft_at_rate")) for s in sources),
                tuple(
                    ((s.get(name) or {}).get("ttft_at_rate") or {}).get("saturated")
                    for s in sources
                ),
            )
            for name in ["all", *scenarios]
            if any(s.get(name) for s in sources)
        ]

    @property
    def headline(self) -> dict:
        """The figure to lead with: the time split's (runs published after the fit's cut-off),
        else the family split's, else the in-sample one, with its label."""
        for key, label in (
            ("time", "on runs published after the fit's cut-off"),
            ("family", "on accelerator families left out of the fit"),
        ):
            if key in self.splits:
                return {"label": label, **self.splits[key]}
        return {"label": "in-sample (no held-out validation stored)", **self.in_sample}

    def validation_rows(self) -> list[ValidationRow]:
        """Median and p90 absolute error by scenario, in-sample beside each split.

        The first row is every run; scenarios follow in name order.
        """
        sources = self._sources()
        scenarios = sorted({name for s in sources for name in s.get("by_scenario", {})})
        rows = [ValidationRow("all", tuple(_cell(s) for s in sources))]
        rows += [
            ValidationRow(name, tuple(_cell(s.get("by_scenario", {}).get(name)) for s in sources))
            for name in scenarios
        ]
        return rows


def calibration_report(path: str | Path = DEFAULT_CALIBRATION_PATH) -> CalibrationReport:
    """The calibration data file as a report (rows sorted worst first)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = sorted(data.get("rows", []), key=lambda r: -r.get("abs_error_pct", 0))
    return CalibrationReport(
        version=str(data.get("version", "")),
        fitted_at=str(data.get("fitted_at", "")),
        method=data.get("method", ""),
        summary=data.get("summary", {}),
        rows=rows,
        excluded=data.get("excluded", []),
        assumptions=data.get("assumptions", []),
    )
