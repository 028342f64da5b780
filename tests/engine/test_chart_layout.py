"""Round axis steps and legend rows (planner.engine.chart_layout)."""

import pytest

from planner.engine.chart_layout import aligned_round_ranges, is_round_step, legend_rows, round_step


@pytest.mark.parametrize(
    ("at_least", "step"),
    [(0.3, 0.5), (1, 1), (1.01, 2), (2.2, 2.5), (2.6, 5), (7, 10), (258, 500), (0.0021, 0.0025)],
)
def test_round_step_is_the_smallest_round_step_covering_the_request(at_least, step):
    assert round_step(at_least) == pytest.approx(step)
    assert is_round_step(round_step(at_least))


def test_whole_steps_for_counts_skip_two_and_a_half():
    assert [round_step(x, whole=True) for x in (0.2, 2.2, 3.75, 22)] == [1, 5, 5, 25]


def test_is_round_step_rejects_what_was_seen():
    assert not is_round_step(258) and not is_round_step(3) and not is_round_step(0)
    assert all(is_round_step(s) for s in (0.25, 1, 2, 5, 20, 2500))


def test_aligned_ranges_share_the_interval_count_and_cover_each_axis():
    intervals, (left, right) = aligned_round_ranges([47.0, 1290.0])
    assert intervals * left >= 47 and intervals * right >= 1290
    assert is_round_step(left) and is_round_step(right)


def test_legend_rows():
    assert legend_rows([], 250) == 0
    assert legend_rows([60, 60, 60], 250) == 1
    assert legend_rows([100, 100, 100, 100, 100], 250) == 3  # two entries a row
    assert legend_rows([300, 50], 250) == 2
