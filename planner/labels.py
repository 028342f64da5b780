"""Human labels of the TCO's internal keys, for every page and document that shows them.

Line items and sensitivity drivers are stored under engine keys (``cloud_on_demand``,
``hardware_price``); people read these labels instead. :func:`label` falls back to the key
with spaces, capitalised, so a new key never shows with underscores.
"""

from __future__ import annotations

from planner.engine.cold_start_headroom import headroom_absorbs, headroom_needed_pct
from planner.engine.shown import plural as plural_of
from planner.engine.stacks import (
    AUTO_KV_CACHE_DTYPE,
    SERVING_STACK_NAMES,
    SERVING_STACKS,
    serving_stack_name,
)

LINE_LABELS = {
    "capex": "Hardware (capex)",
    "spares": "Spares",
    "residual_value": "Residual value (credit)",
    "maintenance": "Maintenance",
    "power": "Power",
    "facility": "Facility / colocation",
    "staff": "Staff",
    "cloud_overflow": "Cloud overflow",
    "cloud_on_demand": "Cloud on-demand",
    "cloud_committed": "Cloud commitment",
    "cloud_spot": "Cloud spot",
}
DRIVER_LABELS = {
    "utilisation": "Demand (utilisation)",
    "power_price": "Power price",
    "hardware_price": "Hardware price",
    "cloud_price": "Cloud price",
    "lifetime": "Hardware lifetime",
    "discount_rate": "Discount rate",
}

# BOM line categories (``planner.engine.bom``), as a consultant reads them in labels.
CATEGORY_LABELS = {
    "server": "Servers",
    "accelerator": "Accelerators",
    "nic": "Network cards (NICs)",
    "switch": "Switches",
    "optic": "Optical transceivers",
    "cable": "Cables",
    "rack": "Racks",
    "pdu": "Rack PDUs",
    "storage": "Storage drives",
    "spares": "Spares",
    "service": "Services",
}


# Serving stacks and KV-cache dtypes as forms offer them (the engine's names: one source).
SERVING_STACK_CHOICES = [(stack, SERVING_STACK_NAMES[stack]) for stack in SERVING_STACKS]
KV_CACHE_DTYPE_CHOICES = [
    ("auto", "Model dtype (BF16)"),
    ("bf16", "BF16"),
    ("fp8", "FP8"),
]


def stack_label(stack: str, version: str = "", kv_cache_dtype: str = "") -> str:
    """``TensorRT-LLM 0.21, FP8 KV cache``: a serving stack as every page and document names
    it (the engine's wording, planner.engine.memory.serving_stack_name)."""
    return serving_stack_name(stack or "vllm", version or "", kv_cache_dtype or "")


def workload_stack_label(workload) -> str:
    """The stack a workload is sized for, its version and the KV dtype it resolves to
    ("auto": the model's, BF16): ``vLLM 0.11, BF16 KV cache``."""
    kv = workload.kv_cache_dtype
    kv = AUTO_KV_CACHE_DTYPE if kv in ("", "auto", None) else kv
    return stack_label(workload.serving_stack, workload.serving_stack_version, kv)


def label(key: str, labels: dict[str, str]) -> str:
    """The label of ``key`` in ``labels``, else the key in words (``"a_b"`` → ``"A b"``)."""
    return labels.get(key) or key.replace("_", " ").capitalize()


def count(n: int, singular: str, plural: str = "") -> str:
    """``1 replica``, ``3 replicas``, ``1,200 lines`` (``plural`` defaults to the English
    plural of the singular: the rule of ``planner.engine.shown.quantity``)."""
    return f"{n:,d} {singular if n == 1 else (plural or plural_of(singular))}"


def count_range(low: int, high: int, singular: str, plural: str = "") -> str:
    """``1 replica``, ``3–5 replicas``, ``0 or 1 replica``: a range only when its ends
    differ (and "0–1 replicas" reads as a plural of one)."""
    if low == high:
        return count(low, singular, plural)
    if (low, high) == (0, 1):
        return f"0 or 1 {singular}"
    return f"{low:,d}–{high:,d} {plural or plural_of(singular)}"


def pooled_into(servers: int | None) -> str:
    """What a workload's own accelerator count is beside the plan's pooled deployment:
    ``pooled into the deployment's 6 servers`` (``""`` when no deployment is recorded).

    A workload's chosen configuration is its need; the deployment pools every workload's
    replicas (and spares) per site and platform, so the per-workload servers never add up to
    the deployment's and are not shown as servers.
    """
    if not servers:
        return ""
    return f"pooled into the deployment's {count(int(servers), 'server')}"


def headroom_rule(headroom_pct: float | None, n_plus_one: bool | None = False) -> str:
    """The rule the replicas are sized by, in words (the engine's
    ``capacity.target_utilisation``): ``"sized for 80 % utilisation at peak: replicas = load
    ÷ 0.8, rounded up (20 % headroom), plus one spare (N+1)"``. Every page that shows replicas
    says it with these words."""
    headroom = float(headroom_pct or 0)
    busy = 100.0 - headroom
    if headroom:
        rule = (
            f"sized for {busy:g} % utilisation at peak: replicas = load ÷ {busy / 100:g}, "
            f"rounded up ({headroom:g} % headroom)"
        )
    else:
        rule = "sized for 100 % utilisation at peak: replicas = load, rounded up (no headroom)"
    return rule + (", plus one spare (N+1)" if n_plus_one else "")


def cold_start_advice(
    cold_start_s: float | None, spike_headroom_pct: float | None, headroom_pct: float | None
) -> str:
    """The cold start of a replica and what it asks of the autoscaling, in the client's words
    (the engine's ``autoscaling.cold_start``; its sizing advice says the same):
    ``"a new replica serves 62 s after it is started, so scale that far ahead of the daily
    ramp; while it starts, the load grows at most 1.6 % of the peak, which the 20 % headroom
    absorbs"``. Empty without a cold start."""
    if cold_start_s is None:
        return ""
    advice = (
        f"a new replica serves {cold_start_s:.0f} s after it is started, so scale that far "
        "ahead of the daily ramp"
    )
    if spike_headroom_pct is None:
        return advice
    spike = float(spike_headroom_pct)
    headroom = float(headroom_pct or 0)
    grows = f"; while it starts, the load grows at most {spike:.1f} % of the peak, which "
    if headroom_absorbs(spike, headroom):
        return advice + grows + f"the {headroom:g} % headroom absorbs"
    return (
        advice
        + grows
        + f"is more than the {headroom:g} % headroom: scale ahead on a schedule or raise the "
        f"headroom to at least {headroom_needed_pct(spike)} %"
    )
