"""The catalog's kinds of item, declared once: CSV columns, list columns, filters, lookups.

List, detail, export and import views are generic over these declarations.
"""

from dataclasses import dataclass, field

from django.db import models

from catalog.models import Accelerator, CloudOffering, ModelArchitecture, Part, ServerPlatform


@dataclass(frozen=True, slots=True)
class Column:
    """A column shown in a list: model attribute, heading, optional unit."""

    attr: str
    label: str
    unit: str = ""
    sortable: bool = True


@dataclass(frozen=True, slots=True)
class Filter:
    """One filter of a list page.

    kind: "search" (icontains over ``fields``), "choice" (exact match on ``fields[0]``, options
    are the distinct values in the table) or "min" (``fields[0]`` >= a number).
    """

    name: str
    label: str
    kind: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CatalogKind:
    """How one catalog model is listed, looked up and moved in and out as CSV.

    ``csv_columns`` maps a CSV header to a model field. The headers are those of the shared
    reference data, so a file exported here can be imported again unchanged.
    """

    key: str
    title: str
    model: type[models.Model]
    csv_file: str
    natural_key: tuple[str, ...]
    lookup: str
    csv_columns: dict[str, str]
    columns: tuple[Column, ...]
    filters: tuple[Filter, ...]
    price_field: str | None = None
    foreign_keys: dict[str, tuple[type[models.Model], str]] = field(default_factory=dict)

    @property
    def item_name(self) -> str:
        return str(self.model._meta.verbose_name)


SOURCED_COLUMNS = {"as_of": "as_of", "notes": "notes", "source_ref": "source"}

# What people read for a field on the detail pages: words and the unit, never the field name.
FIELD_LABELS: dict[str, str] = {
    "vendor": "Vendor",
    "name": "Name",
    "form_factor": "Form factor",
    "memory_gb": "Memory (GB)",
    "memory_type": "Memory type",
    "memory_bandwidth_tbps": "Memory bandwidth (TB/s)",
    "bf16_dense_tflops": "BF16 dense compute (TFLOPS)",
    "fp8_dense_tflops": "FP8 dense compute (TFLOPS)",
    "int8_dense_tops": "INT8 dense compute (TOPS)",
    "fp4_dense_tflops": "FP4 dense compute (TFLOPS)",
    "tdp_w": "TDP (W)",
    "scale_up_interconnect": "Scale-up interconnect",
    "scale_up_bw_gbytes_per_s_per_direction": "Scale-up bandwidth (GB/s per direction)",
    "pcie_gen": "PCIe generation",
    "launch_year": "Launch year",
    "params_total_b": "Parameters, total (billion)",
    "params_active_b": "Parameters, active per token (billion)",
    "num_hidden_layers": "Layers",
    "hidden_size": "Hidden size",
    "intermediate_size": "MLP intermediate size",
    "moe_intermediate_size": "Expert MLP intermediate size",
    "num_attention_heads": "Attention heads",
    "num_key_value_heads": "Key-value heads",
    "head_dim": "Head dimension",
    "vocab_size": "Vocabulary size (tokens)",
    "max_position_embeddings": "Context length (tokens)",
    "num_experts": "Experts",
    "num_shared_experts": "Shared experts",
    "experts_per_token": "Experts per token",
    "first_k_dense_replace": "Dense layers before the MoE layers",
    "attention_kind": "Attention",
    "sliding_window": "Sliding window (tokens)",
    "kv_lora_rank": "Latent KV size (MLA rank)",
    "q_lora_rank": "Latent query size (MLA rank)",
    "qk_rope_head_dim": "Rotary head dimension (MLA)",
    "v_head_dim": "Value head dimension",
    "gated_mlp": "Gated MLP",
    "tie_word_embeddings": "Shared input and output embeddings",
    "accelerator": "Accelerator",
    "accelerator_text": "Accelerator (as published)",
    "accelerators_per_server": "Accelerators per server",
    "rack_units": "Height (rack units)",
    "max_power_kw": "Maximum power (kW)",
    "cooling": "Cooling",
    "network_ports": "Network ports",
    "nics_included_gbps": "Included NICs (Gb/s per port)",
    "nics_included_source": "Included NICs source",
    "nics_included_form_factor": "Included NICs' port cage",
    "nics_included_ports_per_cage": "Included NIC ports per cage",
    "front_end_form_factor": "Front-end port cage",
    "list_price_usd": "List price (USD)",
    "list_price_as_of": "List price date",
    "list_price_source": "List price source",
    "category": "Category",
    "hs_code": "HS code (tariffs)",
    "ports": "Ports",
    "port_speed_gbps": "Port speed (Gb/s)",
    "power_w": "Power (W)",
    "capacity_tb": "Capacity (TB)",
    "rating_kw": "Rating (kW)",
    "unit_price_usd": "Unit price (USD)",
    "provider": "Provider",
    "instance_type": "Instance type",
    "accelerators": "Accelerators per instance",
    "region": "Region",
    "price_model": "Price model",
    "usd_per_hour": "Price (USD per hour)",
}

ACCELERATORS = CatalogKind(
    key="accelerators",
    title="Accelerators",
    model=Accelerator,
    csv_file="accelerators.csv",
    natural_key=("slug",),
    lookup="slug",
    csv_columns={
        "slug": "slug",
        "vendor": "vendor",
        "name": "name",
        "form_factor": "form_factor",
        "memory_gb": "memory_gb",
        "memory_type": "memory_type",
        "memory_bandwidth_tbps": "memory_bandwidth_tbps",
        "bf16_dense_tflops": "bf16_dense_tflops",
        "fp8_dense_tflops": "fp8_dense_tflops",
        "int8_dense_tops": "int8_dense_tops",
        "fp4_dense_tflops": "fp4_dense_tflops",
        "tdp_w": "tdp_w",
        "scale_up_interconnect": "scale_up_interconnect",
        "scale_up_bw_gbytes_per_s_per_direction": "scale_up_bw_gbytes_per_s_per_direction",
        "pcie_gen": "pcie_gen",
        "launch_year": "launch_year",
        **SOURCED_COLUMNS,
    },
    columns=(
        Column("vendor", "Vendor"),
        Column("name", "Name"),
        Column("memory_gb", "Memory", "GB"),
        Column("memory_bandwidth_tbps", "Bandwidth", "TB/s"),
        Column("bf16_dense_tflops", "BF16 dense", "TFLOPS"),
        Column("fp8_dense_tflops", "FP8 dense", "TFLOPS"),
        Column("fp4_dense_tflops", "FP4 dense", "TFLOPS"),
        Column("tdp_w", "TDP", "W"),
        Column(
            "scale_up_bw_gbytes_per_s_per_direction", "Scale-up bandwidth", "GB/s per direction"
        ),
    ),
    filters=(
        Filter("q", "Search", "search", ("name", "slug", "form_factor", "scale_up_interconnect")),
        Filter("vendor", "Vendor", "choice", ("vendor",)),
        Filter("memory_type", "Memory type", "choice", ("memory_type",)),
        Filter("min_memory_gb", "Memory at least (GB)", "min", ("memory_gb",)),
        Filter(
            "min_bandwidth_tbps", "Bandwidth at least (TB/s)", "min", ("memory_bandwidth_tbps",)
        ),
    ),
)

MODELS = CatalogKind(
    key="models",
    title="Model architectures",
    model=ModelArchitecture,
    csv_file="models.csv",
    natural_key=("slug",),
    lookup="slug",
    csv_columns={
        "slug": "slug",
        "name": "name",
        "params_total_b": "params_total_b",
        "params_active_b": "params_active_b",
        "num_hidden_layers": "num_hidden_layers",
        "hidden_size": "hidden_size",
        "intermediate_size": "intermediate_size",
        "moe_intermediate_size": "moe_intermediate_size",
        "num_attention_heads": "num_attention_heads",
        "num_key_value_heads": "num_key_value_heads",
        "head_dim": "head_dim",
        "vocab_size": "vocab_size",
        "max_position_embeddings": "max_position_embeddings",
        "num_experts": "num_experts",
        "num_shared_experts": "num_shared_experts",
        "experts_per_token": "experts_per_token",
        "first_k_dense_replace": "first_k_dense_replace",
        "attention_kind": "attention_kind",
        "sliding_window": "sliding_window",
        "kv_lora_rank": "kv_lora_rank",
        "q_lora_rank": "q_lora_rank",
        "qk_rope_head_dim": "qk_rope_head_dim",
        "v_head_dim": "v_head_dim",
        "gated_mlp": "gated_mlp",
        "tie_word_embeddings": "tie_word_embeddings",
        **SOURCED_COLUMNS,
    },
    columns=(
        Column("name", "Name"),
        Column("params_total_b", "Parameters", "B"),
        Column("params_active_b", "Active", "B"),
        Column("num_hidden_layers", "Layers"),
        Column("attention_kind", "Attention"),
        Column("num_key_value_heads", "KV heads"),
        Column("num_experts", "Experts"),
        Column("max_position_embeddings", "Context", "tokens"),
    ),
    filters=(
        Filter("q", "Search", "search", ("name", "slug", "attention_kind")),
        Filter("attention_kind", "Attention", "choice", ("attention_kind",)),
        Filter("min_params_total_b", "Parameters at least (B)", "min", ("params_total_b",)),
        Filter("min_context", "Context at least (tokens)", "min", ("max_position_embeddings",)),
    ),
)

SERVERS = CatalogKind(
    key="servers",
    title="Server platforms",
    model=ServerPlatform,
    csv_file="servers.csv",
    natural_key=("slug",),
    lookup="slug",
    csv_columns={
        "slug": "slug",
        "vendor": "vendor",
        "name": "name",
        "accelerator_slug": "accelerator",
        "accelerator": "accelerator_text",
        "accelerators": "accelerators_per_server",
        "rack_units": "rack_units",
        "max_power_kw": "max_power_kw",
        "cooling": "cooling",
        "network_ports": "network_ports",
        "nics_included_gbps": "nics_included_gbps",
        "nics_included_source": "nics_included_source",
        "nics_included_form_factor": "nics_included_form_factor",
        "nics_included_ports_per_cage": "nics_included_ports_per_cage",
        "front_end_form_factor": "front_end_form_factor",
        "list_price_usd": "list_price_usd",
        "list_price_as_of": "list_price_as_of",
        "list_price_source": "list_price_source",
        **SOURCED_COLUMNS,
    },
    columns=(
        Column("vendor", "Vendor"),
        Column("name", "Name"),
        Column("accelerator_text", "Accelerator"),
        Column("accelerators_per_server", "Accelerators"),
        Column("rack_units", "Height", "RU"),
        Column("max_power_kw", "Max power", "kW"),
        Column("cooling", "Cooling"),
    ),
    filters=(
        Filter("q", "Search", "search", ("name", "vendor", "accelerator_text")),
        Filter("vendor", "Vendor", "choice", ("vendor",)),
        Filter("cooling", "Cooling", "choice", ("cooling",)),
    ),
    price_field="list_price_usd",
    foreign_keys={"accelerator": (Accelerator, "slug")},
)

PARTS = CatalogKind(
    key="parts",
    title="Network, storage and rack parts",
    model=Part,
    csv_file="parts.csv",
    natural_key=("slug",),
    lookup="slug",
    csv_columns={
        "slug": "slug",
        "category": "category",
        "vendor": "vendor",
        "name": "name",
        "hs_code": "hs_code",
        "ports": "ports",
        "port_speed_gbps": "port_speed_gbps",
        "rack_units": "rack_units",
        "power_w": "power_w",
        "capacity_tb": "capacity_tb",
        "rating_kw": "rating_kw",
        "unit_price_usd": "unit_price_usd",
        **SOURCED_COLUMNS,
        "form_factor": "form_factor",  # added after the sourced columns (older files lack it)
    },
    columns=(
        Column("category", "Category"),
        Column("name", "Name"),
        Column("ports", "Ports"),
        Column("port_speed_gbps", "Port speed", "Gb/s"),
        Column("rack_units", "Height", "RU"),
        Column("rating_kw", "Rating", "kW"),
        Column("unit_price_usd", "Unit price", "USD"),
    ),
    filters=(
        Filter("q", "Search", "search", ("name", "vendor", "slug")),
        Filter("category", "Category", "choice", ("category",)),
    ),
    price_field="unit_price_usd",
)

CLOUD = CatalogKind(
    key="cloud",
    title="Cloud offerings",
    model=CloudOffering,
    csv_file="cloud_prices.csv",
    natural_key=("provider", "instance_type", "region", "price_model"),
    lookup="pk",
    csv_columns={
        "provider": "provider",
        "instance": "instance_type",
        "accelerator_slug": "accelerator",
        "accelerator": "accelerator_text",
        "accelerators": "accelerators",
        "region": "region",
        "price_model": "price_model",
        "usd_per_hour": "usd_per_hour",
        **SOURCED_COLUMNS,
    },
    columns=(
        Column("provider", "Provider"),
        Column("instance_type", "Instance"),
        Column("accelerator_text", "Accelerator"),
        Column("accelerators", "Count"),
        Column("region", "Region"),
        Column("price_model", "Price model"),
        Column("usd_per_hour", "Price", "USD/h"),
        Column("usd_per_accelerator_hour", "Per accelerator", "USD/h", sortable=False),
        Column("as_of", "As of"),
    ),
    filters=(
        Filter("q", "Search", "search", ("instance_type", "accelerator_text", "region")),
        Filter("provider", "Provider", "choice", ("provider",)),
        Filter("price_model", "Price model", "choice", ("price_model",)),
        Filter("accelerator", "Accelerator", "choice", ("accelerator__slug",)),
    ),
    price_field="usd_per_hour",
    foreign_keys={"accelerator": (Accelerator, "slug")},
)

# Load order matters: servers and cloud offerings refer to accelerators.
KINDS: dict[str, CatalogKind] = {
    kind.key: kind for kind in (ACCELERATORS, MODELS, SERVERS, PARTS, CLOUD)
}


def kind_get(key: str) -> CatalogKind:
    """The kind for a URL key; raises KeyError for an unknown one."""
    return KINDS[key]
