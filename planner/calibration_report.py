"""Reads the shipped calibration data file for the calibrate command and the page."""

import json
from dataclasses import dataclass
from pathlib import Path

from planner.engine.calibration import DEFAULT_CALIBRATION_PATH


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
