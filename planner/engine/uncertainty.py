"""How sure an estimate is: the error band from the held-out validation.

The band of an estimate is the error the model made on reference runs it was NOT fitted on
(``calibrate``'s splits), for the nearest calibrated group of hardware: a calibrated
"family/precision" group gets the time split's error on that group's later runs (or on all
later runs when it has few); a calibrated family at an unmeasured precision the precision
split's; an uncalibrated family the family split's. A model whose architecture class has no reference
run at all (MLA, fine-grained MoE, sliding-window attention, dense MHA: the public runs are
dense-GQA Llamas and the coarse Mixtral MoE) gets the 90th percentile of that held-out error
instead of the median, and says it is uncalibrated for its architecture.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.engine.performance import Calibration, precision_group
from planner.engine.specs import ModelSpec

__all__ = ["ErrorBand", "architecture_class", "error_band"]

# Mixtral's 8 routed experts are the coarse MoE the reference runs cover; 16 or more small
# experts (Qwen3-MoE 128, gpt-oss 32/128, DeepSeek 256) route and batch differently.
FINE_GRAINED_EXPERTS = 16
# With no validation stored, the p90 band is taken as twice the median one.
P90_OVER_MEDIAN_DEFAULT = 2.0


@dataclass(frozen=True, slots=True)
class ErrorBand:
    """± band of an estimate.

    Attributes:
        pct: Half-width of the band, % of the estimate.
        architecture: Architecture class of the model (see :func:`architecture_class`).
        calibrated_architecture: False when no reference run has this architecture class.
        basis: One sentence saying where the band comes from.
    """

    pct: float
    architecture: str
    calibrated_architecture: bool
    basis: str


def architecture_class(model: ModelSpec) -> str:
    """Feed-forward kind and attention kind, e.g. "dense GQA", "fine-grained MoE MLA".

    Feed-forward: dense, MoE (< 16 routed experts), fine-grained MoE (≥ 16). Attention: MLA,
    sliding window (any sliding-window layers), GQA (fewer KV heads than query heads) or MHA.
    """
    if not model.is_moe:
        ffn = "dense"
    elif (model.experts or 0) >= FINE_GRAINED_EXPERTS:
        ffn = "fine-grained MoE"
    else:
        ffn = "MoE"
    if model.is_mla:
        attention = "MLA"
    elif model.sliding_window:
        attention = "sliding window"
    elif model.kv_heads < model.heads:
        attention = "GQA"
    else:
        attention = "MHA"
    return f"{ffn} {attention}"


def error_band(
    calibration: Calibration, family: str, precision: str, model: ModelSpec
) -> ErrorBand:
    """The error band of an estimate for ``model`` on a ``family`` accelerator at ``precision``.

    Args:
        calibration: Calibration with its held-out bands (``group_band_pct``,
            ``calibrated_band_pct``, ``other_precision_band_pct``, ``roofline_band_pct``) and
            reference runs per architecture class.
        family: Accelerator family, e.g. "hopper".
        precision: Weight precision.
        model: The model estimated.

    Returns:
        The median held-out error of the nearest calibrated group, or its 90th percentile
        when the model's architecture class has no reference run.
    """
    architecture = architecture_class(model)
    factors = calibration.factors_for(family, precision)
    key = f"{family}/{precision_group(precision)}"
    calibrated_family = any(g.split("/")[0] == family for g in calibration.group_factors)
    if key in calibration.group_factors and key in calibration.group_band_pct:
        (median, p90), nearest = (
            calibration.group_band_pct[key],
            f"{key} runs published after the fit's cut-off",
        )
    elif key in calibration.group_factors and calibration.calibrated_band_pct:
        median, p90 = calibration.calibrated_band_pct
        nearest = "runs of calibrated hardware published after the fit's cut-off"
    elif calibrated_family and calibration.other_precision_band_pct:
        median, p90 = calibration.other_precision_band_pct
        nearest = "precisions held out of the fit"
    elif not calibrated_family and calibration.roofline_band_pct:
        median, p90 = calibration.roofline_band_pct
        nearest = "accelerator families held out of the fit"
    else:
        median = factors.expected_error_pct
        p90 = P90_OVER_MEDIAN_DEFAULT * median
        nearest = "the in-sample fit (no held-out validation stored)"
    runs = calibration.architecture_runs.get(architecture, 0)
    calibrated = runs > 0 or not calibration.architecture_runs
    if calibrated:
        basis = f"{factors.provenance}; ±{median:.0f} % is the median error on {nearest}"
        return ErrorBand(median, architecture, True, basis)
    basis = (
        f"uncalibrated for this architecture ({architecture}: no reference runs); "
        f"{factors.provenance}; ±{p90:.0f} % is the 90th-percentile error on {nearest}"
    )
    return ErrorBand(max(p90, median), architecture, False, basis)
