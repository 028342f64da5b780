"""Candidate keys carry a multi-server layout (|ppN, |epN) and a prefill pool (|pN) apart."""

from dataclasses import replace

from planner import sizing
from planner.engine.sweep import SweepCandidate, SweepResult

BASE = SweepCandidate("h100-sxm", "H100 SXM", "bf16", 8, 8, True, None)
PP = replace(BASE, pipeline_parallel=2, parallel_label="TP8 × PP2 (2 servers)")
EP = replace(BASE, precision="fp8", expert_parallel=16)
DISAGG = replace(BASE, tensor_parallel=2, serving="disaggregated", prefill_tensor_parallel=1)


def test_keys_are_distinct_and_round_trip():
    keys = [sizing.candidate_key(c) for c in (BASE, PP, EP, DISAGG)]
    assert keys == ["h100-sxm|bf16|8", "h100-sxm|bf16|8|pp2", "h100-sxm|fp8|8|ep16",
                    "h100-sxm|bf16|2|p1"]  # fmt: skip
    result = SweepResult((BASE, PP, EP, DISAGG), BASE)
    for key, candidate in zip(keys, (BASE, PP, EP, DISAGG), strict=True):
        assert sizing.candidate_find(result, key) is candidate


def test_a_stale_prefill_key_finds_the_disaggregated_row_but_a_layout_key_does_not():
    result = SweepResult((BASE, PP, DISAGG), BASE)
    # The disaggregated TP pair follows the inputs: an old pair still finds the row.
    assert sizing.candidate_find(result, "h100-sxm|bf16|4|p2") is DISAGG
    # |pp4 is a pipeline layout the sweep no longer offers, not a prefill pool.
    assert sizing.candidate_find(result, "h100-sxm|bf16|8|pp4") is None
