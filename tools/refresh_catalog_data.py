"""Refresh catalog/data/ from the shared reference data (../shared/data by default).

Every column both copies have is taken from the shared copy; the catalog's own additions are
kept: columns the shared copy lacks (models' ``first_k_dense_replace``, servers' dated list
prices), a list price the catalog sourced where the shared cell is empty, and a catalog note
that extends the shared one. Rows are matched by their key (slug, server name, or position for
the price and benchmark tables, which must then have the same rows in the same order).

    python tools/refresh_catalog_data.py [SHARED_DATA_DIR]
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

CATALOG = Path(__file__).resolve().parent.parent / "catalog" / "data"
KEYS = {
    "accelerators.csv": "slug",
    "models.csv": "slug",
    "servers.csv": "name",
    "cloud_prices.csv": None,
    "benchmarks_public.csv": None,
}
# Catalog cells kept over an empty shared cell: prices the catalog sourced itself.
KEEP_WHEN_SHARED_EMPTY = {("servers.csv", "list_price_usd"), ("servers.csv", "notes")}


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def _merged_note(shared: str, ours: str) -> str:
    """The shared note, plus any sentence the catalog appended to it."""
    shared_parts = [p.strip() for p in shared.split(";") if p.strip()]
    extra = [
        p.strip()
        for p in ours.split(";")
        if p.strip()
        and "read_file id" not in p
        and p.strip() not in shared_parts
        and not any(p.strip().startswith(s.split("(")[0].strip()) for s in shared_parts)
    ]
    return "; ".join(shared_parts + extra)


def refresh_table(name: str, shared_dir: Path) -> int:
    """Refresh one table; returns the number of cells changed."""
    shared_fields, shared_rows = _read(shared_dir / name)
    fields, rows = _read(CATALOG / name)
    key = KEYS[name]
    if key is None:
        if len(shared_rows) != len(rows):
            raise SystemExit(f"{name}: {len(shared_rows)} shared rows against {len(rows)} ours")
        pairs = list(zip(shared_rows, rows, strict=True))
    else:
        ours = {row[key]: row for row in rows}
        missing = [row[key] for row in shared_rows if row[key] not in ours]
        if missing:
            raise SystemExit(f"{name}: rows only in the shared copy: {missing}")
        pairs = [(row, ours[row[key]]) for row in shared_rows]
    changed = 0
    out = []
    for shared, our in pairs:
        row = dict(our)
        for column in shared_fields:
            new = shared[column]
            if (name, column) in KEEP_WHEN_SHARED_EMPTY and not new and our.get(column):
                continue
            if column == "notes" and name == "models.csv":
                new = _merged_note(new, our.get(column, ""))
            if row.get(column) != new:
                changed += 1
                row[column] = new
        out.append(row)
    ending = "\r\n" if b"\r\n" in (CATALOG / name).read_bytes() else "\n"
    with (CATALOG / name).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator=ending)
        writer.writeheader()
        writer.writerows(out)
    return changed


ADDITIONS = """
## What this catalog copy adds

`tools/refresh_catalog_data.py` refreshes these tables from the shared reference data and
keeps what the catalog added:

- **models.csv** `first_k_dense_replace`: leading layers with a dense feed-forward instead of
  experts, from each MoE config (DeepSeek-V3/R1: 3 of 61 layers); 0 or empty elsewhere.
- **servers.csv** `list_price_usd`, `list_price_as_of`, `list_price_source`: a dated price with
  its source where one was found (DGX H100 270,000 USD, SemiAnalysis sale-price estimate of May
  2023; DGX B200 515,000 USD, a reseller price quoted in March 2025). These are estimates, not
  vendor list prices, and say so; a plan's own supplier offer always takes precedence.
- **servers.csv** `nics_included_gbps`, `nics_included_source`: the port speed of the NICs a
  platform ships with, and where that is stated (DGX H100, H200 and B200: eight single-port
  ConnectX-7 at up to 400 Gb/s plus two dual-port front-end NICs, NVIDIA DGX BasePOD reference
  architecture). The generated BOM adds no NIC to such a platform.
- **servers.csv** `nics_included_form_factor`, `nics_included_ports_per_cage`,
  `front_end_form_factor`: the cages of those NICs (DGX H100, H200 and B200: four OSFP cages of
  two ConnectX-7 ports each, DGX H100 user guide 1.2.3 Network Modules; front end on
  dual-port QSFP112): the generated BOM puts one twin-port 2x400G OSFP module in each cage,
  not one optic per link.
- **parts.csv** `form_factor`: the port cage of a NIC or switch, or the module form factor of
  a transceiver (OSFP, QSFP112, QSFP56, QSFP28), with its source in `source_ref`; the BOM
  refuses a transceiver whose form factor does not fit its cage.
"""


def main(argv: list[str]) -> None:
    shared_dir = Path(argv[1]) if len(argv) > 1 else CATALOG.parents[2] / "shared" / "data"
    for name in KEYS:
        print(f"{name}: {refresh_table(name, shared_dir)} cells refreshed")
    readme = (shared_dir / "README.md").read_text(encoding="utf-8").rstrip("\n") + "\n"
    (CATALOG / "README.md").write_text(readme + ADDITIONS, encoding="utf-8")
    print("README.md: copied, with the catalog's additions")


if __name__ == "__main__":
    main(sys.argv)
