"""A second, independent model beside the planner's estimate, and what its disagreement means.

Both models give one replica's output tokens/s, TTFT and TPOT at the same operating point (same
batch, lengths, precision, KV dtype and stack). The difference is the peer's figure relative
to the planner's, in %. When the two differ on throughput by more than
``THROUGHPUT_DISAGREEMENT_PCT`` the estimate's band is widened to reach the peer's figure: with
two independent models that far apart, the planner's held-out error alone understates how
unsure the figure is. Latency differences are shown but do not widen the band: the peer's
latencies are means without queueing, and on the shared runs they were further from the
measurements than the planner's (benchmarks/eval_aiconfigurator.py).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "THROUGHPUT_DISAGREEMENT_PCT",
    "Figures",
    "SecondOpinion",
    "difference_pct",
    "second_opinion",
]

# Planner rule: past this throughput disagreement the band reaches the peer's figure (a quarter
# is about twice the planner's median held-out throughput error on calibrated hardware).
THROUGHPUT_DISAGREEMENT_PCT = 25.0


@dataclass(frozen=True, slots=True)
class Figures:
    """One replica's figures at an operating point (means)."""

    output_tokens_per_s: float
    ttft_ms: float
    tpot_ms: float


@dataclass(frozen=True, slots=True)
class SecondOpinion:
    """The planner's and the peer's figures side by side, and the band that follows.

    Attributes:
        planner: The planner's figures.
        peer: The peer's figures.
        throughput_difference_pct: (peer − planner) ÷ planner × 100, output tokens/s.
        ttft_difference_pct: The same for TTFT.
        tpot_difference_pct: The same for TPOT.
        band_pct: The planner's band (±%), widened when the models disagree.
        planner_band_pct: The planner's own band before any widening.
        widened: True when the throughput disagreement widened the band.
        reason: One sentence saying how far apart the models are and what follows.
    """

    planner: Figures
    peer: Figures
    throughput_difference_pct: float
    ttft_difference_pct: float
    tpot_difference_pct: float
    band_pct: float
    planner_band_pct: float
    widened: bool
    reason: str


def difference_pct(peer: float, planner: float) -> float:
    """The peer's figure relative to the planner's, %: (peer − planner) ÷ planner × 100."""
    if planner <= 0:
        raise ValueError("the planner's figure must be positive to compare with")
    return (peer - planner) / planner * 100.0


def second_opinion(
    planner: Figures,
    peer: Figures,
    band_pct: float,
    peer_name: str,
    threshold_pct: float = THROUGHPUT_DISAGREEMENT_PCT,
    measured: bool = False,
) -> SecondOpinion:
    """Compare the two models and widen the band when they disagree on throughput.

    Args:
        planner: The planner's figures at the operating point.
        peer: The peer's figures at the same point.
        band_pct: The planner's error band, ±% of its estimate.
        peer_name: The peer's name for the sentence, e.g. "aiconfigurator".
        threshold_pct: Throughput disagreement (absolute %) past which the band widens.
        measured: The candidate is sized on a load test: the two models are still compared,
            but a measurement's band does not widen for what two models say.

    Returns:
        The comparison; the band is max(band, |throughput difference|) past the threshold,
        so that it reaches the peer's figure, else the planner's band unchanged.
    """
    throughput = difference_pct(peer.output_tokens_per_s, planner.output_tokens_per_s)
    ttft = difference_pct(peer.ttft_ms, planner.ttft_ms)
    tpot = difference_pct(peer.tpot_ms, planner.tpot_ms)
    more_or_less = "more" if throughput >= 0 else "less"
    gap = (
        f"{peer_name}'s kernel tables give {abs(throughput):.0f} % {more_or_less} throughput "
        f"({peer.output_tokens_per_s:,.0f} against the planner's "
        f"{planner.output_tokens_per_s:,.0f} output tokens/s per replica)"
    )
    widened = not measured and abs(throughput) > threshold_pct and abs(throughput) > band_pct
    if measured:
        reason = (
            f"{gap}; the candidate is sized on a load test, so the measurement's band of "
            f"±{band_pct:.0f} % stands."
        )
        widened_band = band_pct
    elif widened:
        reason = (
            f"{gap}, past the {threshold_pct:.0f} % the planner accepts between two models: "
            f"the band is widened from ±{band_pct:.0f} % to ±{abs(throughput):.0f} % to reach it."
        )
        widened_band = abs(throughput)
    else:
        reason = (
            f"{gap}, within ±{max(threshold_pct, band_pct):.0f} %: the planner's band of "
            f"±{band_pct:.0f} % stands."
        )
        widened_band = band_pct
    return SecondOpinion(
        planner=planner,
        peer=peer,
        throughput_difference_pct=throughput,
        ttft_difference_pct=ttft,
        tpot_difference_pct=tpot,
        band_pct=widened_band,
        planner_band_pct=band_pct,
        widened=widened,
        reason=reason,
    )
