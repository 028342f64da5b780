"""Parallelism beyond one server: pipeline, multi-node tensor and expert parallelism.

A replica that does not fit one server spans ``k`` servers joined by the scale-out fabric
(InfiniBand or RoCE, one NIC per GPU on the rail-optimised HGX/DGX designs). Three layouts:

* **TP t × PP p** (Megatron-LM / vLLM ``--pipeline-parallel-size``): TP inside a server over
  NVLink, the layers split evenly into ``p`` stages, one per server. Memory per GPU: weights
  ÷ (t·p), each stage keeps the KV cache of its own layers only (÷ p). Per token step: the
  activations of the micro-batch cross the ``p − 1`` stage boundaries (hidden × 2 bytes per
  token over the NIC plus its latency). vLLM keeps ``p`` micro-batches ("virtual engines") in
  flight, so with B ≥ p sequences every stage is busy and a micro-batch of B/p sequences sees
  the time of all layers at batch B/p; with B < p only B micro-batches exist and the stages
  idle (the pipeline bubble, (p − m)/p of the time; Narayanan et al. 2021, Megatron-LM).
* **TP n across servers** (vLLM multi-node TP): weights and KV ÷ n as within a server, but
  the 2 all-reduces per layer run at the NIC rate: the ring's bus bandwidth per GPU is the
  NIC's (nccl-tests busbw = 2(n−1)/n × algbw) and each of its 2(n−1) steps waits for the
  scale-out latency.
* **EP n** for MoE (DeepSeek-V3 report §3.4 deployment, vLLM ``--enable-expert-parallel``
  with data-parallel attention): attention and dense layers TP t inside each server and
  replicated per server (DP k = n/t), each server serving B/k of the sequences; routed experts
  spread whole over all n GPUs. Per MoE layer a token is dispatched to its top-k experts and
  combined back (all-to-all): FP8 dispatch (1 byte per hidden value) and BF16 combine
  (2 bytes), of which (n − t)/n crosses servers (DeepEP normal kernels; DeepSeek-V3 §3.2).

Hooks: :func:`planner.engine.memory.plan_memory` takes ``parallel=`` (weights and KV per GPU
from :meth:`ParallelLayout.weights_bytes_per_gpu` / :attr:`ParallelLayout.kv_divisor`);
:class:`planner.engine.performance.ReplicaShape` carries ``parallel`` and its step time adds the
communication from :meth:`ParallelLayout.step_time_ms`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

import numpy as np

from planner.engine.errors import EngineInputError
from planner.engine.memory import (
    bytes_per_weight,
    kv_cache_layout,
    param_counts,
    weight_format,
    weights_bytes,
)
from planner.engine.performance import (
    ACTIVATION_BYTES,
    Calibration,
    ReplicaShape,
    allreduce_time_ms,
    replica_shape,
)
from planner.engine.specs import AcceleratorSpec, ModelSpec

__all__ = [
    "DEFAULT_SCALE_OUT",
    "MAX_SERVERS_PER_REPLICA",
    "ParallelLayout",
    "ScaleOutLink",
    "alltoall_time_ms",
    "multi_node_layouts",
    "parallel_shape",
    "parse_network_ports",
    "pipeline_send_ms",
    "scale_out_link",
]

MAX_SERVERS_PER_REPLICA = 4  # DeepSeek-V3 decode used 40 nodes; sizing stops at 4 per replica
DISPATCH_BYTES = 1.0  # FP8 dispatch of the hidden state (DeepSeek-V3 §3.3, DeepEP)
COMBINE_BYTES = 2.0  # BF16 combine


@dataclass(frozen=True, slots=True)
class ScaleOutLink:
    """The scale-out (back-end) fabric as one GPU sees it.

    Attributes:
        gbps_per_gpu: NIC line rate per GPU, Gb/s (one 400G ConnectX-7 per H100 on DGX H100).
        latency_us: One message's latency through NIC and switch, µs.
        source: Where the figures come from.
    """

    gbps_per_gpu: float
    latency_us: float
    source: str

    def __post_init__(self) -> None:
        if not self.gbps_per_gpu > 0:
            raise EngineInputError("The scale-out fabric needs a positive Gb/s per GPU.")
        if self.latency_us < 0:
            raise EngineInputError("The scale-out latency cannot be negative.")

    @property
    def bytes_per_s(self) -> float:
        """Peak bytes/s per GPU and direction."""
        return self.gbps_per_gpu * 1e9 / 8.0


# Defaults by family where the server's network ports are not in the catalog. HGX/DGX
# H100/H200/B200 carry one 400 Gb/s ConnectX-7 per GPU (DGX H100/B200 user guides; MLPerf
# XE9680 json: 8× 400G IB); MI300X platforms ship 8× 400G NICs (AMD Instinct MI300X platform
# guide). Others: one 100 Gb/s NIC per GPU as a conservative Ethernet default. Latency: a
# small-message RDMA send through one switch is 2-5 µs (NVIDIA ConnectX-7 / Quantum-2
# datasheets quote < 1 µs per hop); NCCL's inter-node step is modelled at 5 µs.
_DEFAULT_GBPS = {"hopper": 400.0, "blackwell": 400.0, "cdna3": 400.0, "cdna4": 400.0}
DEFAULT_SCALE_OUT = ScaleOutLink(100.0, 5.0, "default 100 Gb/s Ethernet per GPU, 5 µs")


def parse_network_ports(text: str | None, accelerators_per_server: int) -> float | None:
    """Gb/s per GPU from a catalog ports string like "8x 400Gb/s InfiniBand", else None."""
    if not text or accelerators_per_server < 1:
        return None
    match = re.search(r"(\d+)\s*[x×]\s*(\d+(?:\.\d+)?)\s*G", text, re.IGNORECASE)
    if not match:
        return None
    ports, gbps = int(match.group(1)), float(match.group(2))
    # A 10-port server (8 back-end + 2 front-end) still gives each GPU one back-end port.
    return gbps * min(ports, accelerators_per_server) / accelerators_per_server


def scale_out_link(accelerator: AcceleratorSpec, network_ports: str | None = None) -> ScaleOutLink:
    """The scale-out link per GPU: from the server's ports when given, else by family."""
    parsed = parse_network_ports(network_ports, accelerator.accelerators_per_server)
    if parsed:
        return ScaleOutLink(parsed, 5.0, f"server network ports: {network_ports}")
    gbps = _DEFAULT_GBPS.get(accelerator.family)
    if gbps:
        return ScaleOutLink(gbps, 5.0, f"default {gbps:g} Gb/s NIC per GPU ({accelerator.family})")
    return DEFAULT_SCALE_OUT


def pipeline_send_ms(
    tokens: np.ndarray | float, hidden: int, link_bytes_per_s: float, latency_us: float
):
    """One stage boundary: the activations of ``tokens`` (hidden × 2 bytes each) plus latency."""
    return (
        latency_us * 1e-3
        + np.asarray(tokens, dtype=float) * hidden * ACTIVATION_BYTES / (link_bytes_per_s) * 1e3
    )


def alltoall_time_ms(
    tokens: np.ndarray | float,
    hidden: int,
    top_k: int,
    ep: int,
    gpus_per_server: int,
    link_bytes_per_s: float,
    latency_us: float,
):
    """Dispatch plus combine of one MoE layer over the scale-out fabric, per GPU.

    Each GPU sends its tokens/ep tokens to top-k experts: FP8 dispatch and BF16 combine, the
    share (ep − gpus per server)/ep to experts on other servers; two latencies (one per
    all-to-all). Traffic to experts on the same server rides NVLink and is not counted.
    """
    remote = max(0, ep - gpus_per_server) / ep
    sent = np.asarray(tokens, dtype=float) / ep * top_k * hidden * (DISPATCH_BYTES + COMBINE_BYTES)
    return 2.0 * latency_us * 1e-3 + sent * remote / link_bytes_per_s * 1e3


@dataclass(frozen=True, slots=True)
class ParallelLayout:
    """How one replica's accelerators are arranged when it may span servers.

    Attributes:
        tp: Tensor-parallel degree (attention TP inside a server under EP).
        pp: Pipeline stages (1: none).
        ep: Expert-parallel degree (1: experts TP-sharded); > 1 means EP over tp × dp GPUs
            with data-parallel attention, dp = ep / tp.
        accelerators_per_server: GPUs per server.
        link: The scale-out link.
    """

    tp: int
    pp: int = 1
    ep: int = 1
    accelerators_per_server: int = 8
    link: ScaleOutLink = DEFAULT_SCALE_OUT

    def __post_init__(self) -> None:
        if self.tp < 1 or self.pp < 1 or self.ep < 1 or self.accelerators_per_server < 1:
            raise EngineInputError("TP, PP, EP and GPUs per server must be at least 1.")
        if self.ep > 1 and (self.pp > 1 or self.ep % self.tp):
            raise EngineInputError("Expert parallelism needs PP 1 and EP a multiple of TP.")

    @property
    def dp(self) -> int:
        """Data-parallel attention groups (EP only)."""
        return self.ep // self.tp if self.ep > 1 else 1

    @property
    def gpus(self) -> int:
        """Accelerators per replica."""
        return self.tp * self.pp * self.dp

    @property
    def servers(self) -> int:
        """Servers one replica takes (whole servers)."""
        return math.ceil(self.gpus / self.accelerators_per_server)

    @property
    def tp_spans_servers(self) -> bool:
        """The TP group itself crosses servers (all-reduce over the NIC)."""
        return self.tp > self.accelerators_per_server

    @property
    def kv_divisor(self) -> int:
        """Each GPU keeps the KV of 1/pp of the layers and 1/dp of the sequences."""
        return self.pp * self.dp

    @property
    def label(self) -> str:
        """e.g. "TP8 × PP2 (2 servers)", "TP16 (2 servers)", "EP16 (TP8 × DP2, 2 servers)"."""
        servers = f"{self.servers} server{'s' if self.servers > 1 else ''}"
        if self.ep > 1:
            return f"EP{self.ep} (TP{self.tp} × DP{self.dp}, {servers})"
        if self.pp > 1:
            return f"TP{self.tp} × PP{self.pp} ({servers})"
        return f"TP{self.tp} ({servers})"

    def weights_bytes_per_gpu(
        self, model: ModelSpec, precision: str, accelerator: AcceleratorSpec, total_bytes: float
    ) -> float:
        """Weights per GPU: total ÷ (TP·PP); under EP dense ÷ TP plus experts ÷ EP.

        PP splits the layers evenly (vLLM's default partition); the embedding and LM head on
        the first and last stage add under 1 % for the 405B and are spread here.
        """
        if self.ep <= 1:
            return total_bytes / (self.tp * self.pp)
        experts = self._expert_bytes_total(model, precision, accelerator)
        return (total_bytes - experts) / self.tp + experts / self.ep

    @staticmethod
    def _expert_bytes_total(
        model: ModelSpec, precision: str, accelerator: AcceleratorSpec
    ) -> float:
        per_weight = bytes_per_weight(weight_format(precision, accelerator))
        counts = param_counts(model)
        return counts.expert_per_layer * per_weight * (model.experts or 0) * model.moe_layers

    def step_time_ms(
        self,
        shape: ReplicaShape,
        batch,
        prefill_tokens,
        context_tokens,
        prefill_context_tokens,
        local_step_ms,
    ):
        """Step time of the replica: the local roofline plus the scale-out communication.

        ``local_step_ms(shape, batch, prefill, ctx, prefill_ctx, comm=False)`` is the
        single-server roofline without all-reduces (performance.py).
        """
        batch = np.asarray(batch, dtype=float)
        prefill = np.asarray(prefill_tokens, dtype=float)
        cal = shape.calibration
        model = shape.model
        micro = np.clip(batch, 1.0, float(self.pp)) if self.pp > 1 else 1.0
        batch_m, prefill_m = batch / micro, prefill / micro
        tokens = batch_m + prefill_m
        local = local_step_ms(shape, batch_m, prefill_m, context_tokens, prefill_context_tokens)
        nic = self.link.bytes_per_s * cal.link_bw_fraction
        lat = self.link.latency_us
        scale_up_fraction = (
            cal.pcie_link_bw_fraction if shape.accelerator.scale_up_pcie else cal.link_bw_fraction
        )
        scale_up = shape.link_peak_bytes_per_s * scale_up_fraction
        if self.ep > 1:
            # DP attention: each server all-reduces its own tokens over NVLink (TP t);
            # MoE layers add dispatch and combine over the NIC.
            comm = 2 * model.layers * allreduce_time_ms(
                tokens / self.dp * model.hidden * ACTIVATION_BYTES, self.tp, scale_up, cal
            ) + shape.moe_layers * alltoall_time_ms(
                tokens, model.hidden, shape.top_k, self.ep, self.tp, nic, lat
            )
        elif self.tp_spans_servers:
            ring = allreduce_time_ms(tokens * model.hidden * ACTIVATION_BYTES, self.tp, nic, cal)
            comm = 2 * model.layers * (ring + 2 * (self.tp - 1) * lat * 1e-3)
        else:
            comm = (
                2
                * model.layers
                * allreduce_time_ms(
                    tokens * model.hidden * ACTIVATION_BYTES, self.tp, scale_up, cal
                )
            )
        if self.pp > 1:
            link = nic if self.servers > 1 else scale_up
            comm = comm + (self.pp - 1) * pipeline_send_ms(
                tokens, model.hidden, link, lat if self.servers > 1 else 0.0
            )
        return local + comm


def parallel_shape(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    precision: str,
    layout: ParallelLayout,
    calibration: Calibration,
    kv_precision: str | None = None,
) -> ReplicaShape:
    """The replica's per-GPU constants under a layout, with the layout as its step hook.

    TP (and PP, whose stages the step model sums: see the module docstring) keep the shape of
    a TP-t replica. EP divides compute and experts by n, dense weights by t, and each GPU
    holds the KV of the 1/dp of the sequences its server serves.
    """
    if layout.ep <= 1:
        base = replica_shape(model, accelerator, precision, layout.tp, calibration, kv_precision)
        return dataclasses.replace(base, parallel=layout)
    base = replica_shape(model, accelerator, precision, layout.ep, calibration, kv_precision)
    experts = base.expert_bytes_per_layer * base.experts * base.moe_layers
    dense = (
        weights_bytes(model, precision, accelerator) / layout.tp - experts * layout.ep / layout.tp
    )
    kv = kv_cache_layout(model, base.kv_precision, layout.tp)
    per_layer = kv.bytes_per_token_per_layer_per_gpu / layout.dp
    return dataclasses.replace(
        base,
        dense_weight_bytes=max(dense, 0.0),
        kv_layout_bytes_full=per_layer * kv.full_attention_layers,
        kv_layout_bytes_sliding=per_layer * kv.sliding_layers,
        parallel=layout,
    )


def multi_node_layouts(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    tp_degrees: list[int],
    servers: int,
    link: ScaleOutLink,
) -> list[ParallelLayout]:
    """The layouts of one replica over ``servers`` servers: TP × PP, TP across servers and,
    for MoE models, EP with data-parallel attention.

    Args:
        model: Architecture (TP must divide the attention heads, as vLLM requires).
        accelerator: Device (GPUs per server).
        tp_degrees: Valid TP degrees inside one server.
        servers: Servers per replica (≥ 2).
        link: The scale-out link.
    """
    per_server = accelerator.accelerators_per_server
    if not tp_degrees or servers < 2:
        return []
    tp = max(tp_degrees)
    layouts = []
    if tp == per_server and model.layers >= servers:
        layouts.append(
            ParallelLayout(tp, pp=servers, accelerators_per_server=per_server, link=link)
        )
    wide = per_server * servers
    kv_ok = model.is_mla or model.kv_heads % wide == 0 or wide % model.kv_heads == 0
    if tp == per_server and model.heads % wide == 0 and kv_ok:
        layouts.append(ParallelLayout(wide, accelerators_per_server=per_server, link=link))
    if model.is_moe and tp == per_server and (model.experts or 0) >= wide:
        layouts.append(ParallelLayout(tp, ep=wide, accelerators_per_server=per_server, link=link))
    return layouts
