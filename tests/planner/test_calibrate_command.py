"""python manage.py calibrate --report-only: the in-sample error beside the held-out splits."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from planner.calibration_report import calibration_report


def _stats(runs, median, p90):
    return {
        "runs": runs,
        "median_abs_error_pct": median,
        "p90_abs_error_pct": p90,
        "max_abs_error_pct": p90,
    }


def _write_report(path, with_splits=True):
    summary = {
        "in_sample": {
            **_stats(4, 10.0, 20.0),
            "max_abs_error_pct": 25.0,
            "within_35_pct_share": 1.0,
            "by_scenario": {"offline": _stats(3, 8.0, 12.0), "server": _stats(1, 25.0, 25.0)},
            "by_accelerator": {},
        },
        "target": "median abs error <= 15 %",
        "target_met": True,
    }
    if with_splits:
        summary["splits"] = {
            "time": {
                "description": "fitted on 3 runs before 2025-03-01, predicting 1",
                **_stats(1, 30.0, 30.0),
                "by_scenario": {"server": _stats(1, 30.0, 30.0)},
            },
            "family": {
                "description": "each accelerator family in turn",
                **_stats(4, 18.0, 40.5),
                "by_scenario": {"offline": _stats(3, 15.0, 22.5), "server": _stats(1, 41.0, 41.0)},
            },
        }
    path.write_text(json.dumps({"version": "1.0", "fitted_at": "2026-11-30", "summary": summary}))
    return path


def test_validation_rows_put_each_scenario_side_by_side(tmp_path):
    report = calibration_report(_write_report(tmp_path / "calibration.json"))
    assert [c[1] for c in report.validation_columns] == ["In-sample", "Time split", "Family split"]
    rows = {row.scenario: row.cells for row in report.validation_rows()}
    assert list(rows) == ["all", "offline", "server"]
    in_sample, time, family = rows["offline"]
    assert (in_sample.median_abs_error_pct, in_sample.p90_abs_error_pct) == (8.0, 12.0)
    assert time is None  # no offline run published after the cutoff
    assert (family.runs, family.median_abs_error_pct, family.p90_abs_error_pct) == (3, 15.0, 22.5)
    assert rows["all"][2].p90_abs_error_pct == 40.5


def test_report_only_prints_in_sample_time_and_family_split(tmp_path):
    out = StringIO()
    call_command(
        "calibrate",
        "--report-only",
        "--output",
        str(_write_report(tmp_path / "c.json")),
        stdout=out,
    )
    text = out.getvalue().split("Absolute error by scenario")[1]
    assert "In-sample" in text and "Time split" in text and "Family split" in text
    server = next(line for line in text.splitlines() if line.strip().startswith("server"))
    assert (
        "25.0 / 25.0 (1)" in server and "30.0 / 30.0 (1)" in server and "41.0 / 41.0 (1)" in server
    )
    offline = next(line for line in text.splitlines() if line.strip().startswith("offline"))
    assert "—" in offline


def test_report_without_splits_says_how_to_get_them(tmp_path):
    out = StringIO()
    path = _write_report(tmp_path / "c.json", with_splits=False)
    call_command("calibrate", "--report-only", "--output", str(path), stdout=out)
    assert "calibrate --splits-only" in out.getvalue()


def test_bad_cutoff_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="not a date"):
        call_command("calibrate", "--report-only", "--cutoff", "March", "--output", str(tmp_path))


def test_shipped_report_has_every_split():
    report = calibration_report()
    assert [c[0] for c in report.validation_columns] == ["in_sample", "time", "family", "precision"]
    for row in report.validation_rows():
        assert row.cells[0] is not None  # every scenario has in-sample runs


def _with_latency(path):
    data = json.loads(path.read_text())
    latency = {
        "all": {"tpot": _stats(2, 9.0, 14.0), "ttft": _stats(2, 30.0, 45.0)},
        "server": {"tpot": _stats(2, 9.0, 14.0), "ttft": _stats(2, 30.0, 45.0)},
    }
    data["summary"]["in_sample"]["latency_at_concurrency"] = latency
    data["summary"]["splits"]["time"]["latency_at_concurrency"] = {
        "server": {"tpot": _stats(1, 12.5, 12.5), "ttft": _stats(1, 40.0, 40.0)},
        "all": {"tpot": _stats(1, 12.5, 12.5), "ttft": _stats(1, 40.0, 40.0)},
    }
    path.write_text(json.dumps(data))
    return path


def test_report_prints_latency_at_the_measured_concurrency_and_leads_out_of_sample(tmp_path):
    path = _with_latency(_write_report(tmp_path / "c.json"))
    out = StringIO()
    call_command("calibrate", "--report-only", "--output", str(path), stdout=out)
    text = out.getvalue()
    latency = text.split("TPOT and TTFT at the concurrency")[1]
    tpot = next(line for line in latency.splitlines() if line.strip().startswith("server TPOT"))
    assert "9.0 / 14.0 (2)" in tpot and "12.5 / 12.5 (1)" in tpot
    ttft = next(line for line in latency.splitlines() if line.strip().startswith("server TTFT"))
    assert "30.0 / 45.0 (2)" in ttft and "40.0 / 40.0 (1)" in ttft
    # The headline is the time split's, not the in-sample figure.
    assert "Out of sample (on runs published after the fit's cut-off): median 30.0 %" in text
    rows = calibration_report(path).latency_rows()
    assert [r.scenario for r in rows] == ["all", "server"]
    assert rows[1].tpot[2] is None  # the family split stored no latency
