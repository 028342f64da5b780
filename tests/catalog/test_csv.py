"""CSV import and export: validation with line numbers, nothing saved on a bad file,
formula cells neutralised, and an export that imports back unchanged."""

import pytest

from catalog.csv_io import export_rows, import_csv, neutralise_cell
from catalog.kinds import KINDS
from catalog.models import Accelerator, CloudOffering, ModelArchitecture, Part

HEADER = ",".join(KINDS["parts"].csv_columns)


def parts_csv(*rows: str) -> str:
    return "\n".join([HEADER, *rows]) + "\n"


GOOD_ROW = "nic-x,nic,Acme,Acme NIC,8517.62,1,400,,,,,1200.50,2026-10-01,a note,Acme price list"


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tcmd", "'\tcmd"),
        ("plain text", "plain text"),
        (-5.0, "-5.0"),  # numbers stay numbers
        (None, ""),
        (True, "true"),
    ],
)
def test_neutralise_cell(cell, expected):
    assert neutralise_cell(cell) == expected


def test_import_creates_and_reports(db):
    result = import_csv(KINDS["parts"], parts_csv(GOOD_ROW))

    assert result.ok and result.created == 1
    part = Part.objects.get(slug="nic-x")
    assert str(part.unit_price_usd) == "1200.50" and part.as_of.isoformat() == "2026-10-01"
    assert part.price_history.count() == 1


def test_one_bad_row_saves_nothing_and_names_each_line(db):
    text = parts_csv(
        GOOD_ROW,
        "nic-y,gizmo,Acme,Bad category,,,,,,,,,,,src",
        "nic-z,nic,Acme,Negative price,,,,,,,,-3,,,src",
        "Bad Slug!,nic,Acme,Bad slug,,,,,,,,,,,src",
    )

    result = import_csv(KINDS["parts"], text)

    assert not result.ok
    assert Part.objects.count() == 0
    by_line = {e.line: e.message for e in result.errors}
    assert set(by_line) == {3, 4, 5}
    assert "category" in by_line[3] and "gizmo" in by_line[3]
    assert "unit_price_usd" in by_line[4]
    assert "slug" in by_line[5]


def test_duplicate_keys_in_one_file_are_reported(db):
    result = import_csv(KINDS["parts"], parts_csv(GOOD_ROW, GOOD_ROW))

    assert [(e.line, e.message.startswith("duplicates line 2")) for e in result.errors] == [
        (3, True)
    ]
    assert Part.objects.count() == 0


def test_unknown_and_missing_columns(db):
    result = import_csv(KINDS["parts"], "name,colour\nx,red\n")

    messages = " ".join(e.message for e in result.errors)
    assert "unknown column(s): colour" in messages
    assert "missing column(s): slug" in messages


def test_unknown_accelerator_reference_is_a_row_error(catalog):
    header = ",".join(KINDS["cloud"].csv_columns)
    row = "Acme,box.1,no-such-gpu,Mystery,8,eu,on_demand,10,2026-01-01,,src"

    result = import_csv(KINDS["cloud"], f"{header}\n{row}\n")

    assert not result.ok
    assert "unknown accelerator 'no-such-gpu'" in result.errors[0].message


def test_empty_file_and_header_only(db):
    assert not import_csv(KINDS["parts"], "").ok
    assert import_csv(KINDS["parts"], HEADER + "\n").errors[0].message == (
        "the file has a header but no rows"
    )


@pytest.mark.parametrize("key", list(KINDS))
def test_export_imports_back_unchanged(catalog, key):
    kind = KINDS[key]
    exported = export_rows(kind, kind.model.objects.all())

    result = import_csv(kind, exported)

    assert result.ok, result.errors[:3]
    assert result.created == 0 and result.updated == 0
    assert result.unchanged == kind.model.objects.count()


def test_formula_text_round_trips_and_is_neutralised_on_the_way_out(db):
    import_csv(KINDS["parts"], parts_csv(GOOD_ROW.replace("a note", "=cmd|' /C calc'!A0")))
    part = Part.objects.get(slug="nic-x")
    assert part.notes == "=cmd|' /C calc'!A0"

    exported = export_rows(KINDS["parts"], Part.objects.all())

    assert "'=cmd|" in exported
    result = import_csv(KINDS["parts"], exported)
    assert result.unchanged == 1
    part.refresh_from_db()
    assert part.notes == "=cmd|' /C calc'!A0"


def test_model_validation_rules(db):
    header = ",".join(KINDS["models"].csv_columns)
    base = dict.fromkeys(KINDS["models"].csv_columns, "")
    base.update(
        slug="m",
        name="M",
        params_total_b="7",
        params_active_b="9",
        num_hidden_layers="32",
        hidden_size="4096",
        num_attention_heads="32",
        num_key_value_heads="64",
        head_dim="128",
        vocab_size="32000",
        max_position_embeddings="4096",
        attention_kind="MLA",
        gated_mlp="true",
        tie_word_embeddings="false",
        source_ref="test",
    )
    row = ",".join(base[h] for h in KINDS["models"].csv_columns)

    result = import_csv(KINDS["models"], f"{header}\n{row}\n")

    message = result.errors[0].message
    assert "Active parameters cannot exceed total" in message
    assert "KV heads cannot exceed attention heads" in message
    assert "kv_lora_rank" in message
    assert ModelArchitecture.objects.count() == 0


def test_accelerator_precisions_lists_published_figures_only(catalog):
    assert Accelerator.objects.get(slug="h100-sxm").precisions == ["bf16", "fp8", "int8"]
    assert Accelerator.objects.get(slug="a100-80gb-sxm").precisions == ["bf16", "int8"]
    offering = CloudOffering.objects.get(instance_type="a3-highgpu-8g", price_model="on_demand")
    assert offering.usd_per_accelerator_hour * 8 == offering.usd_per_hour
