"""The reference-data loader: complete, idempotent, sourced, and all-or-nothing."""

import csv
import shutil
from decimal import Decimal

import pytest
from django.conf import settings

from catalog.models import (
    Accelerator,
    CloudOffering,
    ModelArchitecture,
    Part,
    PricePoint,
    ServerPlatform,
)
from catalog.services import CatalogDataError, catalog_load_reference


def _rows(name: str) -> list[dict]:
    with open(settings.CATALOG_DATA_DIR / name, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_loads_every_reference_row_with_its_source(db):
    results = catalog_load_reference()

    assert Accelerator.objects.count() == len(_rows("accelerators.csv")) == 26
    assert ModelArchitecture.objects.count() == len(_rows("models.csv")) == 26
    assert ServerPlatform.objects.count() == len(_rows("servers.csv")) == 10
    assert CloudOffering.objects.count() == len(_rows("cloud_prices.csv")) == 80
    assert Part.objects.count() == len(_rows("parts.csv"))
    assert results["cloud"].created == 80
    assert not Accelerator.objects.filter(source="").exists()
    assert not CloudOffering.objects.filter(source="").exists()


def test_figures_are_copied_exactly(db):
    catalog_load_reference()

    h100 = Accelerator.objects.get(slug="h100-sxm")
    assert (h100.memory_gb, h100.memory_bandwidth_tbps) == (80, 3.35)
    assert (h100.bf16_dense_tflops, h100.fp8_dense_tflops, h100.tdp_w) == (989, 1979, 700)
    assert h100.fp4_dense_tflops is None  # blank in the data: not published, never 0

    deepseek = ModelArchitecture.objects.get(slug="deepseek-v3")
    assert (deepseek.kv_lora_rank, deepseek.qk_rope_head_dim) == (512, 64)
    assert deepseek.is_moe

    gcp = CloudOffering.objects.get(instance_type="a3-highgpu-8g", price_model="on_demand")
    assert gcp.usd_per_hour == Decimal("88.4899999")
    assert gcp.accelerator == h100
    assert gcp.as_of.isoformat() == "2025-03-06"

    dgx = ServerPlatform.objects.get(slug="nvidia-dgx-h100")
    assert (dgx.accelerator, dgx.max_power_kw, dgx.rack_units) == (h100, 10.2, 8)


def test_loading_twice_changes_nothing(db):
    catalog_load_reference()
    points = PricePoint.objects.count()
    stamps = dict(Accelerator.objects.values_list("slug", "updated_at"))

    results = catalog_load_reference()

    assert all(r.created == 0 and r.updated == 0 for r in results.values())
    assert PricePoint.objects.count() == points
    assert dict(Accelerator.objects.values_list("slug", "updated_at")) == stamps


def test_changed_price_keeps_the_old_one_with_its_date(db, tmp_path):
    data_dir = tmp_path / "data"
    shutil.copytree(settings.CATALOG_DATA_DIR, data_dir)
    catalog_load_reference(data_dir=data_dir)
    rows = _rows("cloud_prices.csv")
    target = next(
        r for r in rows if r["instance"] == "a3-highgpu-8g" and r["price_model"] == "on_demand"
    )
    target["usd_per_hour"], target["as_of"] = "80.00", "2026-11-20"
    with open(data_dir / "cloud_prices.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)

    results = catalog_load_reference(data_dir=data_dir)

    assert results["cloud"].updated == 1
    offering = CloudOffering.objects.get(instance_type="a3-highgpu-8g", price_model="on_demand")
    assert offering.usd_per_hour == Decimal("80.00")
    history = [(p.value_usd, p.as_of.isoformat()) for p in offering.price_history.order_by("as_of")]
    assert history == [(Decimal("88.4899999"), "2025-03-06"), (Decimal("80.00"), "2026-11-20")]


def test_a_bad_file_is_rejected_whole_with_line_numbers(db, tmp_path):
    data_dir = tmp_path / "data"
    shutil.copytree(settings.CATALOG_DATA_DIR, data_dir)
    rows = _rows("accelerators.csv")
    rows[3]["memory_bandwidth_tbps"] = "fast"
    with open(data_dir / "accelerators.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)

    with pytest.raises(CatalogDataError, match=r"line 5: memory_bandwidth_tbps"):
        catalog_load_reference(data_dir=data_dir)
    assert Accelerator.objects.count() == 0


def test_missing_file_is_named(db, tmp_path):
    with pytest.raises(CatalogDataError, match="accelerators.csv is missing"):
        catalog_load_reference(data_dir=tmp_path)
