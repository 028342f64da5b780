"""Split validation: which runs each refit sees and which it is scored on (no database)."""

import csv
import dataclasses
import datetime as dt
from pathlib import Path

import numpy as np
import pytest

import planner.engine.calibration as calibration
from planner.engine.calibration import (
    ROUND_PUBLISHED,
    BenchmarkRun,
    leave_one_out,
    load_calibration,
    time_split,
    usable_runs,
    validate_splits,
)
from planner.engine.specs import load_accelerators_csv, load_models_csv

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")


def _run(ref_id: str, round_: str, accelerator: str = "h100-sxm", precision: str = "fp8"):
    return BenchmarkRun(
        ref_id=ref_id,
        source_kind="mlperf",
        source_round=round_,
        submitter="test",
        accelerator_slug=accelerator,
        accelerators=8,
        model_slug="llama-2-70b",
        precision_declared=precision,
        precision=precision,
        precision_note="",
        scenario="offline",
        input_tokens=222.33,
        output_tokens=294.45,
        tensor_parallel=None,
        ttft_p99_limit_ms=None,
        tpot_p99_limit_ms=None,
        output_tokens_per_s=20_000.0,
    )


def test_time_split_puts_the_cutoff_day_after_and_drops_unknown_dates():
    runs = [_run("a", "v4.0"), _run("b", "v5.0"), _run("c", "v4.1"), _run("d", "unknown")]
    # v4.0 27 Mar 2024 and v4.1 28 Aug 2024 are before 2 Apr 2025; v5.0 is on the cutoff day.
    before, after = time_split(runs, dt.date(2025, 4, 2), lambda r: r.published_on)
    assert [r.ref_id for r in before] == ["a", "c"]
    assert [r.ref_id for r in after] == ["b"]
    before, after = time_split(runs, dt.date(2025, 4, 3), lambda r: r.published_on)
    assert [r.ref_id for r in before] == ["a", "b", "c"] and after == []


def test_leave_one_out_holds_out_each_value_once():
    items = [("h100", "fp8"), ("b200", "fp4"), ("h200", "fp8"), ("a100", "bf16")]
    folds = leave_one_out(items, key=lambda item: item[1])
    assert [label for label, _, _ in folds] == ["bf16", "fp4", "fp8"]
    label, train, held = folds[2]
    assert held == [("h100", "fp8"), ("h200", "fp8")]
    assert train == [("b200", "fp4"), ("a100", "bf16")]
    # One value only: nothing left to train on, so no fold.
    assert leave_one_out(items[:1], key=lambda item: item[1]) == []


def test_every_round_of_the_reference_csv_has_a_publication_date():
    with open(DATA / "benchmarks_public.csv", newline="", encoding="utf-8") as handle:
        rounds = {row["source_round"] for row in csv.DictReader(handle)}
    assert rounds <= set(ROUND_PUBLISHED)


def test_p90_is_numpys_linear_percentile():
    # |errors| 1..10: the 90th percentile lies 0.1 of the way from 9 to 10 → 9.1.
    stats = calibration._stats([float(e) for e in range(1, 11)])
    assert stats["p90_abs_error_pct"] == pytest.approx(9.1)
    assert stats["median_abs_error_pct"] == pytest.approx(5.5)
    assert np.percentile(range(1, 11), 90) == pytest.approx(9.1)


def test_each_refit_never_sees_the_runs_it_is_scored_on(monkeypatch):
    runs = [
        _run("hopper-2024", "v4.1"),
        _run("hopper-2025", "v5.0"),
        _run("ampere-2024", "v4.1", "a100-80gb-sxm", "bf16"),
        _run("blackwell-2025", "v5.0", "b200"),
    ]
    base = load_calibration()
    usable, _ = usable_runs(runs, ACCELERATORS, MODELS)
    cases = [
        calibration._prepare(r, ACCELERATORS[r.accelerator_slug], MODELS[r.model_slug], base)
        for r in usable
    ]
    assert len(cases) == 4 and all(c.infeasible_reason is None for c in cases)
    seen: list[set[str]] = []

    def recording_fit(train, fit_base, start=None, max_nfev=120):
        assert start is None  # a fresh fit: nothing carried over from the full fit
        seen.append({c.run.ref_id for c in train})
        return fit_base

    monkeypatch.setattr(calibration, "_fit", recording_fit)
    time, family, precision = validate_splits(cases, base, dt.date(2025, 3, 1))

    assert time.folds == (("from 2025-03-01", 2, 2),)
    assert seen[0] == {"hopper-2024", "ampere-2024"}
    assert {r.ref_id for r in time.table.rows} == {"hopper-2025", "blackwell-2025"}
    # Families in name order: ampere, blackwell, hopper.
    assert [f[0] for f in family.folds] == ["ampere", "blackwell", "hopper"]
    assert seen[1:4] == [
        {"hopper-2024", "hopper-2025", "blackwell-2025"},
        {"hopper-2024", "hopper-2025", "ampere-2024"},
        {"ampere-2024", "blackwell-2025"},
    ]
    assert sorted(r.ref_id for r in family.table.rows) == sorted(c.run.ref_id for c in cases)
    assert precision.folds == (("bf16", 3, 1), ("fp8", 1, 3))
    assert seen[4:] == [
        {"hopper-2024", "hopper-2025", "blackwell-2025"},
        {"ampere-2024"},
    ]
    assert "2 runs published before 2025-03-01" in time.description


def test_split_refits_in_worker_processes_give_the_same_tables(monkeypatch):
    runs = [
        _run("hopper-2024", "v4.1"),
        _run("hopper-2025", "v5.0"),
        _run("ampere-2024", "v4.1", "a100-80gb-sxm", "bf16"),
        _run("blackwell-2025", "v5.0", "b200"),
    ]
    base = load_calibration()
    usable, _ = usable_runs(runs, ACCELERATORS, MODELS)
    cases = [
        calibration._prepare(r, ACCELERATORS[r.accelerator_slug], MODELS[r.model_slug], base)
        for r in usable
    ]

    def scaled_fit(train, fit_base, start=None, max_nfev=120):
        # A stand-in fit whose result depends on the training runs, so a fold mix-up shows.
        eta = fit_base.global_factors.memory_bw_fraction * (0.5 + 0.1 * len(train))
        return dataclasses.replace(
            fit_base,
            group_factors={},
            global_factors=dataclasses.replace(fit_base.global_factors, memory_bw_fraction=eta),
        )

    monkeypatch.setattr(calibration, "_fit", scaled_fit)
    serial = validate_splits(cases, base, dt.date(2025, 3, 1), workers=1)
    pooled = validate_splits(cases, base, dt.date(2025, 3, 1), workers=3)
    assert [s.name for s in pooled] == ["time", "family", "precision"]
    for one, other in zip(serial, pooled, strict=True):
        assert one.folds == other.folds
        assert one.table.rows == other.table.rows
