"""Serving-stack defaults the engine sizes with: the scheduler's batch cap and the prompt tail of
variable-length datasets."""

import dataclasses
from pathlib import Path

import pytest

from planner.engine.performance import (
    LONG_PROMPT_P99_OVER_MEAN,
    Calibration,
    prompt_tail_factor,
    scheduler_max_sequences,
)
from planner.engine.specs import load_accelerators_csv

ACCELERATORS = load_accelerators_csv(
    Path(__file__).resolve().parents[2] / "catalog" / "data" / "accelerators.csv"
)


@pytest.mark.parametrize(
    ("slug", "stack", "cap"),
    [
        ("h100-sxm", "vllm", 1024),  # 80 GiB: vLLM's large-GPU default
        ("h200-sxm", "vllm", 1024),
        ("mi300x", "vllm", 1024),
        ("a100-80gb-sxm", "vllm", 256),  # vLLM keeps the small default on the A100
        ("l40s", "vllm", 256),  # 48 GiB
        ("l4", "vllm", 256),
        ("h100-sxm", "trtllm", 2048),
        ("l40s", "trtllm", 2048),
    ],
)
def test_scheduler_cap_is_the_stacks_default(slug, stack, cap):
    assert scheduler_max_sequences(ACCELERATORS[slug], stack, Calibration()) == cap


def test_a_calibration_cap_overrides_the_stack_defaults():
    capped = Calibration(max_num_seqs=64)
    assert scheduler_max_sequences(ACCELERATORS["h100-sxm"], "trtllm", capped) == 64


def test_long_context_datasets_get_a_thinner_prompt_tail():
    cal = Calibration()
    # OpenOrca-like chat prompts (mean 222): p99 = 3.56 × mean.
    assert prompt_tail_factor(99.0, cal, 222.33) == pytest.approx(791.0 / 222.33)
    # A long-context set (MLPerf Llama-3.1-405B, mean 9,428): p99 = 2 × mean.
    assert prompt_tail_factor(99.0, cal, 9428) == pytest.approx(LONG_PROMPT_P99_OVER_MEAN)
    assert prompt_tail_factor(50.0, cal, 9428) == 1.0
    lower = dataclasses.replace(cal, prompt_p99_over_mean=1.5)
    assert prompt_tail_factor(99.0, lower, 9428) == pytest.approx(1.5)
