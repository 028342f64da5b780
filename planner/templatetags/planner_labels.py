"""Template filters that show an internal key by its human label (``planner.labels``)."""

from django import template

from planner import labels
from planner.labels import (
    CATEGORY_LABELS,
    LINE_LABELS,
    label,
    stack_label,
    workload_stack_label,
)

register = template.Library()


@register.filter
def line_label(key: str) -> str:
    """A TCO line's label: ``"residual_value"`` → ``"Residual value (credit)"``."""
    return label(str(key), LINE_LABELS)


@register.filter
def category_label(key: str) -> str:
    """A BOM category's label: ``"optic"`` → ``"Optical transceivers"``."""
    return label(str(key), CATEGORY_LABELS)


@register.simple_tag
def headroom_rule(headroom_pct, n_plus_one=False) -> str:
    """The rule a workload's replicas are sized by (``planner.labels.headroom_rule``)."""
    return labels.headroom_rule(headroom_pct, n_plus_one)


@register.simple_tag
def cold_start_advice(autoscaling, headroom_pct) -> str:
    """A replica's cold start and what the autoscaling must do about it
    (``planner.labels.cold_start_advice``) from a snapshot's autoscaling section."""
    autoscaling = autoscaling or {}
    return labels.cold_start_advice(
        autoscaling.get("cold_start_s"), autoscaling.get("spike_headroom_pct"), headroom_pct
    )


@register.filter
def stack_name(key: str) -> str:
    """A serving stack's name: ``"trtllm"`` → ``"TensorRT-LLM"``."""
    return stack_label(str(key or "vllm"))


@register.filter
def workload_stack(workload) -> str:
    """What a workload is sized for: ``"vLLM 0.11, BF16 KV cache"``."""
    return workload_stack_label(workload)
