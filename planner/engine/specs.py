"""Hardware and model specifications the sizing engine works on.

The engine never reads the database: the Django side builds these frozen dataclasses from its
catalog models, and the helpers at the bottom build them from the reference CSVs in
``catalog/data`` (pure ``csv`` module) so the engine, its tests and the calibration run without
Django.

Units are in the field names. Memory is the vendor's figure in GB, which for HBM and GDDR is
GiB: an "80 GB" H100 has 80 GiB = 85.9e9 bytes (llm-d empirical-vllm-memory-results.md), and
``memory.plan_memory`` plans on 2**30 bytes per vendor GB.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PRECISIONS",
    "AcceleratorSpec",
    "ModelSpec",
    "ServerSpec",
    "accelerator_family",
    "load_accelerators_csv",
    "load_models_csv",
    "load_servers_csv",
]

#: Weight precisions the engine sizes. ``int4`` is weight-only (W4A16, AWQ/GPTQ style), ``fp4``
#: is a block-scaled 4-bit float (NVFP4 / MXFP4) with 4-bit tensor-core compute where present.
PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "int4", "fp4")

# Slug -> architecture family. Families group hardware whose achievable fraction of peak is
# expected to be similar, so calibration factors are shared inside a family. PCIe Hopper cards
# (350-600 W instead of 700 W, NVLink bridge or PCIe instead of NVSwitch) are their own family.
_FAMILY_BY_SLUG: dict[str, str] = {
    "a100-80gb-sxm": "ampere",
    "a10": "ampere",
    "h100-sxm": "hopper",
    "h100-pcie": "hopper-pcie",
    "h100-nvl": "hopper-pcie",
    "h200-sxm": "hopper",
    "h200-nvl": "hopper-pcie",
    "gh200": "hopper",
    "gh200-144gb": "hopper",
    "b200": "blackwell",
    "b300": "blackwell",
    "gb200": "blackwell",
    "rtx-pro-6000": "blackwell-gddr",
    "l40s": "ada",
    "l4": "ada",
    "mi300x": "cdna3",
    "mi325x": "cdna3",
    "mi355x": "cdna4",
    "gaudi2": "gaudi",
    "gaudi3": "gaudi",
    "inferentia2": "neuron",
    "trainium2": "neuron",
    "tpu-v5e": "tpu",
    "tpu-v5p": "tpu",
    "tpu-v6e": "tpu",
    "epyc-9654": "cpu",
}


def accelerator_family(slug: str) -> str:
    """Return the architecture family of an accelerator slug ("other" when unknown)."""
    return _FAMILY_BY_SLUG.get(slug, "other")


@dataclass(frozen=True, slots=True)
class AcceleratorSpec:
    """One accelerator chip (one GPU, one Gaudi, one TPU chip), per-device figures.

    Attributes:
        slug: Catalog key, e.g. ``"h100-sxm"``.
        vendor: Vendor name.
        name: Display name.
        memory_gb: Vendor memory figure in GB; HBM/GDDR GB are GiB (2**30 bytes).
        memory_bandwidth_tbps: Peak memory bandwidth in TB/s (1e12 bytes/s).
        bf16_dense_tflops: Dense BF16 tensor peak in TFLOP/s, None when unpublished.
        fp8_dense_tflops: Dense FP8 peak in TFLOP/s, None when the chip has no FP8.
        int8_dense_tops: Dense INT8 peak in TOP/s, None when unpublished.
        fp4_dense_tflops: Dense FP4 peak in TFLOP/s, None before Blackwell / MI355X.
        tdp_w: Maximum board power in W, None when unpublished.
        scale_up_bw_gbytes_per_s_per_direction: Scale-up link bandwidth per device and direction
            in GB/s (NVLink, xGMI, or the PCIe x16 link for cards without one).
        family: Architecture family ("hopper", "blackwell", "ampere", "ada", "cdna3", ...).
        accelerators_per_server: Devices in the usual server for this part (tensor-parallel
            groups stay inside one server).
        scale_up_pcie: True when the scale-up path is PCIe (no NVLink/xGMI/ICI fabric).
    """

    slug: str
    vendor: str
    name: str
    memory_gb: float
    memory_bandwidth_tbps: float
    bf16_dense_tflops: float | None
    fp8_dense_tflops: float | None
    int8_dense_tops: float | None
    fp4_dense_tflops: float | None
    tdp_w: float | None
    scale_up_bw_gbytes_per_s_per_direction: float | None
    family: str
    accelerators_per_server: int = 8
    scale_up_pcie: bool = False

    def compute_tflops(self, precision: str) -> float | None:
        """Dense peak TFLOP/s the matrix units run at for a weight precision.

        FP8 falls back to BF16 on chips without FP8 (weight-only FP8, e.g. Marlin kernels on
        Ampere); INT4 is weight-only, so it computes at BF16; FP4 without FP4 tensor cores is
        weight-only too and computes at BF16.

        Args:
            precision: One of :data:`PRECISIONS`.

        Returns:
            Peak dense TFLOP/s, or None when the chip publishes no matrix peak at all.
        """
        if precision == "fp4":
            # Without FP4 tensor cores FP4 is weight-only (W4A16: Marlin/Triton MXFP4 kernels
            # dequantise to BF16, as vLLM runs gpt-oss on Hopper).
            order = (self.fp4_dense_tflops, self.bf16_dense_tflops)
        elif precision == "fp8":
            order = (self.fp8_dense_tflops, self.bf16_dense_tflops)
        else:
            order = (self.bf16_dense_tflops,)
        for value in order:
            if value:
                return value
        return None


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """Architecture of one model, as in its Hugging Face ``config.json``.

    Attributes:
        slug: Catalog key, e.g. ``"llama-3.1-70b"``.
        name: Display name.
        params_total_b: Total parameters in billions (model card or nominal size).
        params_active_b: Parameters active per token in billions (MoE: fewer than total).
        layers: ``num_hidden_layers``.
        hidden: ``hidden_size``.
        intermediate: ``intermediate_size`` (dense FFN width; per-expert width for Mixtral).
        moe_intermediate: Per-expert FFN width of MoE models, None for dense models.
        heads: ``num_attention_heads``.
        kv_heads: ``num_key_value_heads``.
        head_dim: Query/key head dimension.
        vocab: ``vocab_size``.
        max_context: ``max_position_embeddings`` in tokens.
        experts: Routed experts per MoE layer, None for dense models.
        shared_experts: Always-on shared experts per MoE layer (DeepSeek), None otherwise.
        experts_per_token: Routed experts chosen per token (top-k), None for dense models.
        dense_layers: Leading layers with a dense FFN instead of experts
            (``first_k_dense_replace``; DeepSeek-V3/R1: 3 of 61), 0 otherwise.
        attention_kind: Free text from the catalog ("GQA", "MHA", "MLA", sliding variants).
        sliding_window: Window in tokens for sliding-window layers, None when unused.
        kv_lora_rank: MLA latent width (DeepSeek: 512), None otherwise.
        qk_rope_head_dim: MLA decoupled RoPE key width (DeepSeek: 64), None otherwise.
        v_head_dim: MLA value head width, None otherwise.
        gated_mlp: True for SwiGLU/GeGLU feed-forwards (three matrices), False for plain MLPs.
        tie_word_embeddings: True when the LM head shares the embedding matrix.
    """

    slug: str
    name: str
    params_total_b: float
    params_active_b: float
    layers: int
    hidden: int
    intermediate: int
    moe_intermediate: int | None
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    max_context: int
    experts: int | None = None
    shared_experts: int | None = None
    experts_per_token: int | None = None
    dense_layers: int = 0
    attention_kind: str = "GQA"
    sliding_window: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    gated_mlp: bool = True
    tie_word_embeddings: bool = False

    @property
    def is_moe(self) -> bool:
        """True when the model routes tokens to experts."""
        return bool(self.experts and self.experts_per_token)

    @property
    def moe_layers(self) -> int:
        """Layers whose FFN is routed experts (all but the leading dense ones)."""
        return max(0, self.layers - self.dense_layers) if self.is_moe else 0

    @property
    def is_mla(self) -> bool:
        """True for multi-head latent attention (DeepSeek-V2/V3/R1)."""
        return self.kv_lora_rank is not None and "MLA" in self.attention_kind.upper()


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """A reference server or rack platform.

    Attributes:
        vendor: Vendor name.
        name: Platform name.
        accelerator_slug: Accelerator it carries ("" for multi-GPU-type chassis).
        accelerators: Accelerators per server.
        rack_units: Height in RU, None when unknown.
        max_power_kw: Maximum system power in kW, None when unknown.
    """

    vendor: str
    name: str
    accelerator_slug: str
    accelerators: int
    rack_units: int | None
    max_power_kw: float | None


def _float(value: str) -> float | None:
    value = (value or "").strip()
    return float(value) if value else None


def _int(value: str) -> int | None:
    value = (value or "").strip()
    return int(float(value)) if value else None


def _bool(value: str) -> bool:
    return (value or "").strip().lower() in {"true", "1", "yes"}


def is_pcie_interconnect(interconnect: str) -> bool:
    """True when the catalog's scale-up text says the part has only PCIe (no NVLink/xGMI/ICI)."""
    text = (interconnect or "").strip().lower()
    return text.startswith("none") or "pcie" in text


def load_servers_csv(path: str | Path) -> list[ServerSpec]:
    """Read ``servers.csv`` into :class:`ServerSpec` rows.

    Args:
        path: Path of the CSV file.

    Returns:
        One spec per row.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        return [
            ServerSpec(
                vendor=row["vendor"],
                name=row["name"],
                accelerator_slug=row["accelerator_slug"],
                accelerators=_int(row["accelerators"]) or 1,
                rack_units=_int(row["rack_units"]),
                max_power_kw=_float(row["max_power_kw"]),
            )
            for row in csv.DictReader(handle)
        ]


def load_accelerators_csv(
    path: str | Path, servers_path: str | Path | None = None
) -> dict[str, AcceleratorSpec]:
    """Read ``accelerators.csv`` into :class:`AcceleratorSpec` keyed by slug.

    Rows without memory capacity or bandwidth (the EPYC CPU reference row) are skipped: the
    engine cannot size on them. ``accelerators_per_server`` is 8 unless ``servers.csv`` lists a
    platform for the slug, in which case the largest such platform is used.

    Args:
        path: Path of ``accelerators.csv``.
        servers_path: Optional path of ``servers.csv``; defaults to the file next to ``path``.

    Returns:
        Mapping slug -> spec.
    """
    path = Path(path)
    servers_path = Path(servers_path) if servers_path else path.with_name("servers.csv")
    per_server: dict[str, int] = {}
    if servers_path.exists():
        for server in load_servers_csv(servers_path):
            if server.accelerator_slug:
                per_server[server.accelerator_slug] = max(
                    per_server.get(server.accelerator_slug, 0), server.accelerators
                )
    specs: dict[str, AcceleratorSpec] = {}
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            memory_gb = _float(row["memory_gb"])
            bandwidth = _float(row["memory_bandwidth_tbps"])
            if not memory_gb or not bandwidth:
                continue
            slug = row["slug"]
            specs[slug] = AcceleratorSpec(
                slug=slug,
                vendor=row["vendor"],
                name=row["name"],
                memory_gb=memory_gb,
                memory_bandwidth_tbps=bandwidth,
                bf16_dense_tflops=_float(row["bf16_dense_tflops"]),
                fp8_dense_tflops=_float(row["fp8_dense_tflops"]),
                int8_dense_tops=_float(row["int8_dense_tops"]),
                fp4_dense_tflops=_float(row["fp4_dense_tflops"]),
                tdp_w=_float(row["tdp_w"]),
                scale_up_bw_gbytes_per_s_per_direction=_float(
                    row["scale_up_bw_gbytes_per_s_per_direction"]
                ),
                family=accelerator_family(slug),
                accelerators_per_server=per_server.get(slug, 8),
                scale_up_pcie=is_pcie_interconnect(row.get("scale_up_interconnect", "")),
            )
    return specs


def load_models_csv(path: str | Path) -> dict[str, ModelSpec]:
    """Read ``models.csv`` into :class:`ModelSpec` keyed by slug.

    Args:
        path: Path of ``models.csv``.

    Returns:
        Mapping slug -> spec.
    """
    specs: dict[str, ModelSpec] = {}
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            heads = _int(row["num_attention_heads"]) or 1
            hidden = _int(row["hidden_size"]) or 0
            specs[row["slug"]] = ModelSpec(
                slug=row["slug"],
                name=row["name"],
                params_total_b=_float(row["params_total_b"]) or 0.0,
                params_active_b=_float(row["params_active_b"])
                or _float(row["params_total_b"])
                or 0.0,
                layers=_int(row["num_hidden_layers"]) or 0,
                hidden=hidden,
                intermediate=_int(row["intermediate_size"]) or 0,
                moe_intermediate=_int(row["moe_intermediate_size"]),
                heads=heads,
                kv_heads=_int(row["num_key_value_heads"]) or heads,
                head_dim=_int(row["head_dim"]) or hidden // heads,
                vocab=_int(row["vocab_size"]) or 0,
                max_context=_int(row["max_position_embeddings"]) or 0,
                experts=_int(row["num_experts"]),
                shared_experts=_int(row["num_shared_experts"]),
                experts_per_token=_int(row["experts_per_token"]),
                dense_layers=_int(row.get("first_k_dense_replace", "")) or 0,
                attention_kind=row["attention_kind"] or "GQA",
                sliding_window=_int(row["sliding_window"]),
                kv_lora_rank=_int(row["kv_lora_rank"]),
                qk_rope_head_dim=_int(row["qk_rope_head_dim"]),
                v_head_dim=_int(row["v_head_dim"]),
                gated_mlp=_bool(row["gated_mlp"]),
                tie_word_embeddings=_bool(row["tie_word_embeddings"]),
            )
    return specs
