"""Error bands: the held-out error of the nearest calibrated group, wider for an
architecture class with no reference runs (no database)."""

from pathlib import Path

import pytest

from planner.engine.calibration import load_calibration
from planner.engine.estimate import EstimateRequest, estimate
from planner.engine.performance import Calibration, EfficiencyFactors
from planner.engine.specs import load_accelerators_csv, load_models_csv
from planner.engine.uncertainty import architecture_class, error_band

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")

SYNTHETIC = Calibration(
    group_factors={
        "hopper/fp8": EfficiencyFactors(0.8, 0.4),
        "ada/fp8": EfficiencyFactors(0.8, 0.3),
    },
    group_runs={"hopper/fp8": 100, "ada/fp8": 40},
    group_error_pct={"hopper/fp8": 9.0, "ada/fp8": 8.0},
    global_error_pct=14.0,
    group_band_pct={"hopper/fp8": (12.0, 30.0)},
    calibrated_band_pct=(15.0, 35.0),
    other_precision_band_pct=(18.0, 40.0),
    roofline_band_pct=(20.0, 45.0),
    architecture_runs={"dense GQA": 80, "MoE GQA": 20},
)


@pytest.mark.parametrize(
    ("slug", "expected"),
    [
        ("llama-3.1-70b", "dense GQA"),
        ("mixtral-8x7b", "MoE GQA"),  # 8 experts: the coarse MoE the public runs cover
        ("deepseek-r1", "fine-grained MoE MLA"),
        ("qwen3-30b-a3b", "fine-grained MoE GQA"),
        ("gpt-oss-120b", "fine-grained MoE sliding window"),
        ("gemma-2-27b", "dense sliding window"),
        ("llama-2-7b", "dense MHA"),
    ],
)
def test_architecture_class(slug, expected):
    assert architecture_class(MODELS[slug]) == expected


def test_calibrated_group_gets_its_held_out_median():
    band = error_band(SYNTHETIC, "hopper", "fp8", MODELS["llama-3.1-70b"])
    assert band.pct == 12.0 and band.calibrated_architecture
    assert band.basis.startswith("calibrated on 100 reference runs of hopper/fp8")
    assert "±12 % is the median error on hopper/fp8 runs published after the fit's cut-off" in (
        band.basis
    )


def test_calibrated_group_without_later_runs_gets_the_whole_time_split():
    band = error_band(SYNTHETIC, "ada", "fp8", MODELS["llama-3.1-8b"])
    assert band.pct == 15.0 and "runs of calibrated hardware published after" in band.basis


def test_uncalibrated_architecture_gets_the_wider_p90():
    band = error_band(SYNTHETIC, "hopper", "fp8", MODELS["deepseek-r1"])
    assert band.pct == 30.0 and not band.calibrated_architecture
    assert band.basis.startswith("uncalibrated for this architecture (fine-grained MoE MLA")


def test_other_precision_of_a_calibrated_family_uses_the_precision_split():
    band = error_band(SYNTHETIC, "hopper", "bf16", MODELS["mixtral-8x7b"])
    assert band.pct == 18.0 and "bf16 not measured" in band.basis
    assert "precisions held out of the fit" in band.basis


def test_uncalibrated_family_uses_the_family_split():
    assert error_band(SYNTHETIC, "tpu", "bf16", MODELS["llama-3.1-8b"]).pct == 20.0
    assert error_band(SYNTHETIC, "tpu", "bf16", MODELS["gpt-oss-20b"]).pct == 45.0


def test_without_stored_validation_the_in_sample_figure_is_kept():
    bare = Calibration(
        group_factors={"hopper/fp8": EfficiencyFactors(0.8, 0.4)},
        group_runs={"hopper/fp8": 100},
        group_error_pct={"hopper/fp8": 9.0},
    )
    band = error_band(bare, "hopper", "fp8", MODELS["deepseek-r1"])
    assert band.pct == 9.0 and band.calibrated_architecture
    assert "no held-out validation stored" in band.basis


@pytest.mark.parametrize("slug", ["deepseek-r1", "gpt-oss-120b", "qwen3-30b-a3b", "gemma-2-27b"])
def test_shipped_calibration_does_not_claim_unseen_architectures(slug):
    cal = load_calibration()

    def run(model):
        request = EstimateRequest(
            model=model,
            accelerator="h200-sxm",
            accelerators=8,
            precision="fp8",
            input_tokens=1000,
            output_tokens=500,
        )
        return estimate(request, MODELS[model], ACCELERATORS["h200-sxm"], cal)

    llama, other = run("llama-3.1-70b"), run(slug)
    assert llama.calibrated_architecture and llama.architecture == "dense GQA"
    assert not other.calibrated_architecture
    assert "uncalibrated for this architecture" in other.provenance
    assert other.expected_error_pct > llama.expected_error_pct
