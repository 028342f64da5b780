"""Arithmetic moved into the engine from services: the sizing load curve and the BOM's racks."""

from pathlib import Path

import pytest

from planner.engine.calibration import load_calibration
from planner.engine.capacity import load_curve
from planner.engine.deployment import racks_needed
from planner.engine.performance import replica_shape, steady_state
from planner.engine.specs import load_accelerators_csv, load_models_csv

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"


@pytest.mark.parametrize(
    ("servers", "per_rack", "racks"), [(1, 4, 1), (4, 4, 1), (5, 4, 2), (6, 4, 2), (0, 4, 0)]
)
def test_racks_round_a_partial_rack_up(servers, per_rack, racks):
    assert racks_needed(servers, per_rack) == racks


def test_racks_need_a_positive_density():
    with pytest.raises(ValueError):
        racks_needed(3, 0)


def test_load_curve_runs_from_batch_one_to_the_cap_on_whole_numbers():
    model = load_models_csv(DATA / "models.csv")["llama-3.1-8b"]
    accelerator = load_accelerators_csv(DATA / "accelerators.csv")["h100-sxm"]
    shape = replica_shape(model, accelerator, "fp8", 1, load_calibration())

    curve = load_curve(shape, 256, 1000, 200)

    assert curve.batch[0] == 1.0 and curve.batch[-1] == 256.0
    assert all(b == round(b) for b in curve.batch) and list(curve.batch) == sorted(set(curve.batch))
    assert len(curve.batch) <= 40
    state = steady_state(shape, curve.batch[-1], 1000, 200)
    assert curve.output_tokens_per_s[-1] == pytest.approx(float(state.output_tokens_per_s[0]))
    assert curve.tpot_ms[0] < curve.tpot_ms[-1]  # a bigger batch costs time per token
