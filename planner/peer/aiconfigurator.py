"""NVIDIA's aiconfigurator-core (Apache-2.0, pinned in pyproject) as the planner's second opinion.

aiconfigurator times each step of a serving engine from kernel tables measured on the silicon
(GEMM, attention, MoE and collectives per GPU system, serving stack and stack version). It is
independent of the planner's calibrated roofline, so where both cover a candidate the
consultant sees two models side by side. On the shared runs (benchmarks/eval_aiconfigurator.py)
it was the better of the two on maximum throughput for NVIDIA systems the calibration has no
run of, the worse on latency (its latencies are means without queueing).

The comparison is at the candidate's own operating point: one replica at its tensor-parallel
degree, its serving stack, precision and KV-cache dtype, holding the candidate's batch of
requests of its mean lengths, in aiconfigurator's aggregated (continuous-batching) step where
each step admits the prompts that arrive per step in steady state, ceil(batch ÷ output) of them
(as the eval script's latency stage). No limit enters: at a fixed batch the targets only say
whether the point meets them.

Nothing is fetched at run time: every model is read from the configurations the package ships
(Mixtral's from a local folder, since the package ships its config but does not list it), and
its Hugging Face fetchers are replaced by one that raises.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

__all__ = ["PEER_NAME", "PeerEstimate", "PeerRequest", "coverage", "peer_estimate"]

PEER_NAME = "aiconfigurator"
DISTRIBUTION = "aiconfigurator-core"

# Catalog accelerator slug -> aiconfigurator system with measured kernel tables. Not covered:
# AMD, Intel Gaudi, TPU, Inferentia/Trainium, CPUs, and NVIDIA parts it has no tables for
# (H100 NVL, H200 NVL, GH200, A10; L4 and H100 PCIe have a system file but no tables for the
# current stacks).
SYSTEMS = {
    "a100-80gb-sxm": "a100_sxm",
    "h100-sxm": "h100_sxm",
    "h200-sxm": "h200_sxm",
    "b200": "b200_sxm",
    "b300": "b300_sxm",
    "gb200": "gb200",
    "l40s": "l40s",
    "rtx-pro-6000": "rtx_pro_6000_server",
}
# Catalog model slug -> the Hugging Face id whose config.json aiconfigurator ships.
MODELS = {
    "llama-3.1-8b": "meta-llama/Meta-Llama-3.1-8B",
    "llama-3.1-70b": "meta-llama/Meta-Llama-3.1-70B",
    # Llama 3.3 70B has Llama 3.1 70B's architecture (same config apart from the weights).
    "llama-3.3-70b": "meta-llama/Meta-Llama-3.1-70B",
    "llama-3.1-405b": "meta-llama/Meta-Llama-3.1-405B",
    "mixtral-8x7b": "mistralai/Mixtral-8x7B-v0.1",
    "mixtral-8x22b": "mistralai/Mixtral-8x22B-v0.1",
    "qwen3-8b": "Qwen/Qwen3-8B",
    "qwen3-32b": "Qwen/Qwen3-32B",
    "qwen3-30b-a3b": "Qwen/Qwen3-30B-A3B",
    "qwen3-235b-a22b": "Qwen/Qwen3-235B-A22B",
    "deepseek-v3": "deepseek-ai/DeepSeek-V3",
    "deepseek-r1": "deepseek-ai/DeepSeek-R1",
    "gpt-oss-20b": "openai/gpt-oss-20b",
    "gpt-oss-120b": "openai/gpt-oss-120b",
}
# Weight precision -> aiconfigurator's GEMM and MoE quantisation modes.
QUANT = {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}
KV_QUANT = {"bf16": "bfloat16", "fp8": "fp8"}
STACKS = {
    "vllm": ("vllm", "vLLM"),
    "sglang": ("sglang", "SGLang"),
    "trtllm": ("trtllm", "TensorRT-LLM"),
}


@dataclass(frozen=True, slots=True)
class PeerRequest:
    """One replica at a candidate's operating point (the cache key: equal inputs, one call).

    Attributes:
        accelerator: Catalog accelerator slug.
        model: Catalog model slug.
        precision: Weight precision ("bf16", "fp8", "int4", "fp4").
        kv_cache_dtype: KV-cache dtype, resolved ("bf16" or "fp8").
        serving_stack: "vllm", "sglang" or "trtllm".
        tensor_parallel: TP degree of the replica.
        batch_per_replica: Requests in flight on the replica.
        input_tokens: Prompt tokens per request (mean).
        output_tokens: Output tokens per request (mean).
        pipeline_parallel: Pipeline stages (compared only at 1).
        expert_parallel: Expert-parallel degree (compared only at 1).
        disaggregated: Separate prefill and decode pools (not compared).
        accelerator_name: The accelerator's name, for the reason when not covered.
        model_name: The model's name, for the reason when not covered.
    """

    accelerator: str
    model: str
    precision: str
    kv_cache_dtype: str
    serving_stack: str
    tensor_parallel: int
    batch_per_replica: int
    input_tokens: int
    output_tokens: int
    pipeline_parallel: int = 1
    expert_parallel: int = 1
    disaggregated: bool = False
    accelerator_name: str = ""
    model_name: str = ""


@dataclass(frozen=True, slots=True)
class PeerEstimate:
    """The peer's figures for one replica, or why it has none.

    Attributes:
        output_tokens_per_s_per_replica: Output tokens/s of the replica (None: not covered).
        ttft_ms: Mean time to first token, ms (aiconfigurator reports means).
        tpot_ms: Mean time per output token, ms.
        not_covered: Why the peer gives no figure ("" when it does).
        source: The peer, its version and the kernel tables it read ("" when not covered).
    """

    output_tokens_per_s_per_replica: float | None
    ttft_ms: float | None
    tpot_ms: float | None
    not_covered: str = ""
    source: str = ""

    @property
    def covered(self) -> bool:
        return not self.not_covered


def _not_covered(reason: str) -> PeerEstimate:
    return PeerEstimate(None, None, None, not_covered=reason)


def coverage(request: PeerRequest) -> str:
    """Why aiconfigurator cannot estimate ``request`` from its inputs alone, or ""."""
    if request.disaggregated:
        return "disaggregated prefill and decode pools are not compared"
    if request.pipeline_parallel > 1 or request.expert_parallel > 1:
        return "pipeline- and expert-parallel layouts are not compared"
    if request.accelerator not in SYSTEMS:
        return f"{PEER_NAME} has no measured kernel tables for {request.accelerator_name or request.accelerator}"
    if request.model not in MODELS:
        return f"{PEER_NAME} ships no configuration of {request.model_name or request.model}"
    if request.precision not in QUANT:
        return f"{PEER_NAME}'s {request.precision.upper()} weight kernels are not mapped"
    if request.kv_cache_dtype not in KV_QUANT:
        return f"KV-cache dtype {request.kv_cache_dtype} is not mapped"
    if request.serving_stack not in STACKS:
        return f"serving stack {request.serving_stack} is not mapped"
    if request.batch_per_replica < 1:
        return "the candidate holds no request"
    return ""


def version() -> str | None:
    """The installed aiconfigurator-core version, or None when it is not installed."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def _offline(*args, **kwargs):
    raise RuntimeError(
        f"{PEER_NAME}: a Hugging Face download was attempted (the planner is offline)"
    )


class _Peer:
    """aiconfigurator's modules and the kernel tables loaded so far (one per process)."""

    def __init__(self) -> None:
        # Imported here, not at the top: the SDK takes ~1.9 s to import (pandas and its kernel
        # tables' readers) and the first step on a system ~2.2 s more to load its tables, so
        # only a process that shows a second opinion pays for it.
        from aiconfigurator_core.sdk import common, config, utils
        from aiconfigurator_core.sdk.backends.factory import get_backend
        from aiconfigurator_core.sdk.models import get_model
        from aiconfigurator_core.sdk.perf_database import get_database, get_version_slots

        utils._download_hf_config = _offline
        utils._download_hf_json = _offline
        logging.getLogger("aiconfigurator_core").setLevel(logging.ERROR)
        self.common, self.config, self.common_default = common, config, common.DefaultHFModels
        self.get_backend, self.get_model = get_backend, get_model
        self.get_database, self.get_version_slots = get_database, get_version_slots
        self.package = Path(common.__file__).resolve().parents[1]
        self.version = version()

    def model_path(self, hf_id: str) -> str:
        """The id itself when the package lists it, else a local folder holding the config it
        ships (so it is read as a local checkpoint, never fetched)."""
        if hf_id in self.common_default:
            return hf_id
        filename = hf_id.replace("/", "--") + "_config.json"
        folder = Path(tempfile.gettempdir()) / f"planner-{DISTRIBUTION}-{self.version}" / filename
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / "config.json"
        if not config.exists():
            text = (self.package / "model_configs" / filename).read_text(encoding="utf-8")
            # Written aside and renamed: another process may be reading the folder meanwhile.
            partial = folder / f"config.json.{os.getpid()}"
            partial.write_text(text, encoding="utf-8")
            os.replace(partial, config)
        return str(folder)

    def estimate(self, request: PeerRequest) -> PeerEstimate:
        system = SYSTEMS[request.accelerator]
        backend, stack_name = STACKS[request.serving_stack]
        slots = self.get_version_slots(system, backend) or {}
        backend_version = slots.get("current")
        if not backend_version:
            return _not_covered(f"{PEER_NAME} has no {stack_name} tables for {system}")
        database = self.get_database(system, backend, backend_version)
        c = self.common
        isl, osl = request.input_tokens, max(2, request.output_tokens)
        # FP8 attention where the system has its table, else BF16 (L40S lacks it).
        fmha_modes = ["fp8", "bfloat16"] if request.kv_cache_dtype == "fp8" else ["bfloat16"]
        for i, fmha in enumerate(fmha_modes):
            model_config = self.config.ModelConfig(
                tp_size=request.tensor_parallel,
                moe_tp_size=request.tensor_parallel,
                moe_ep_size=1,
                gemm_quant_mode=c.GEMMQuantMode[QUANT[request.precision]],
                moe_quant_mode=c.MoEQuantMode[QUANT[request.precision]],
                kvcache_quant_mode=c.KVCacheQuantMode[KV_QUANT[request.kv_cache_dtype]],
                fmha_quant_mode=c.FMHAQuantMode[fmha],
            )
            model = self.get_model(self.model_path(MODELS[request.model]), model_config, backend)
            runtime = self.config.RuntimeConfig(
                batch_size=request.batch_per_replica, isl=isl, osl=osl
            )
            # Each mixed step admits ceil(batch / output) prompts: the steady state's arrivals.
            ctx_tokens = isl * max(1, -(-request.batch_per_replica // osl))
            try:
                summary = self.get_backend(backend).run_agg(
                    model, database, runtime, ctx_tokens=ctx_tokens
                )
            except Exception as exc:
                if type(exc).__name__ == "PerfDataNotAvailableError" and i < len(fmha_modes) - 1:
                    continue
                raise
            break
        if summary.check_oom() or summary.check_kv_cache_oom():
            return _not_covered(
                f"{PEER_NAME}'s memory model does not fit {request.batch_per_replica} requests "
                "on this replica"
            )
        result = summary.get_result_dict()
        if not result:
            return _not_covered(f"{PEER_NAME} returned no result for this replica")
        source = (
            f"{DISTRIBUTION} {self.version} (NVIDIA, Apache-2.0): silicon-measured kernel tables "
            f"for {system}, {stack_name} {backend_version}, mean latencies"
        )
        return PeerEstimate(
            output_tokens_per_s_per_replica=float(result["tokens/s"]),
            ttft_ms=float(result["ttft"]),
            tpot_ms=float(result["tpot"]),
            source=source,
        )


_lock = threading.Lock()  # the SDK loads its tables lazily into shared dicts


@lru_cache(maxsize=1)
def _peer() -> _Peer:
    return _Peer()


@lru_cache(maxsize=1024)
def peer_estimate(request: PeerRequest) -> PeerEstimate:
    """aiconfigurator's figures for one replica, or why it has none (cached by the inputs'
    hash: a frozen request is its own key; the peer is deterministic)."""
    reason = coverage(request)
    if reason:
        return _not_covered(reason)
    if version() is None:
        return _not_covered(f"{DISTRIBUTION} is not installed")
    try:
        with _lock:
            return _peer().estimate(request)
    except Exception as exc:  # noqa: BLE001 - a case the peer rejects is said, not a 500
        name = type(exc).__name__
        message = (str(exc).splitlines() or [""])[0].removeprefix("perf database error: ")
        message = message if len(message) <= 120 else message[:119] + "…"
        if name == "PerfDataNotAvailableError":
            return _not_covered(f"{PEER_NAME} has no measured kernel data for it ({message})")
        return _not_covered(f"{PEER_NAME} could not estimate it ({name}: {message})")
