"""CSV in and out of the catalog.

Import validates every row with the kind's ModelForm before it saves anything: a file with one
bad row saves nothing and reports each bad row with its line number and reason. Export
neutralises cells that a spreadsheet would run as a formula (OWASP "CSV injection").
"""

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from django import forms
from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction
from django.utils.text import slugify

from catalog.kinds import CatalogKind
from catalog.models import PricePoint

# A cell starting with one of these is run as a formula by Excel, LibreOffice and Sheets.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
MAX_IMPORT_BYTES = 5 * 1024 * 1024


class CatalogImportError(ValueError):
    """The file as a whole cannot be read (encoding, headers, size)."""


@dataclass(frozen=True, slots=True)
class RowError:
    line: int
    message: str


@dataclass(slots=True)
class ImportResult:
    """What an import did, or why it saved nothing."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    prices_recorded: int = 0
    errors: list[RowError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def rows(self) -> int:
        return self.created + self.updated + self.unchanged


def neutralise_cell(value: object) -> str:
    """Text for a CSV cell; a text cell that looks like a formula gets a leading apostrophe."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        return str(value)
    text = str(value)
    if text.startswith(FORMULA_PREFIXES):
        return "'" + text
    return text


def _restore_cell(value: str) -> str:
    """Undo :func:`neutralise_cell` so an exported file imports back unchanged."""
    if len(value) > 1 and value[0] == "'" and value[1:].startswith(FORMULA_PREFIXES):
        return value[1:]
    return value


def export_rows(kind: CatalogKind, queryset: Iterable[models.Model]) -> str:
    """The rows as CSV text with the kind's headers (those of the reference data)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    headers = list(kind.csv_columns)
    writer.writerow(headers)
    for item in queryset:
        cells = []
        for header in headers:
            field_name = kind.csv_columns[header]
            if field_name in kind.foreign_keys:
                related = getattr(item, field_name)
                _, to_field = kind.foreign_keys[field_name]
                cells.append(getattr(related, to_field) if related else "")
            else:
                value = getattr(item, field_name)
                if value is not None and hasattr(value, "isoformat"):
                    value = value.isoformat()
                cells.append(neutralise_cell(value))
        writer.writerow(cells)
    return buffer.getvalue()


def _form_class(kind: CatalogKind) -> type[forms.ModelForm]:
    """A ModelForm over the kind's CSV fields; foreign keys are looked up by slug."""
    field_names = list(dict.fromkeys(kind.csv_columns.values()))
    overrides = {
        name: forms.ModelChoiceField(
            queryset=model.objects.all(),
            to_field_name=to_field,
            required=False,
            error_messages={"invalid_choice": f"unknown {name} '%(value)s'"},
        )
        for name, (model, to_field) in kind.foreign_keys.items()
    }
    meta = type("Meta", (), {"model": kind.model, "fields": field_names})
    return type(f"{kind.model.__name__}RowForm", (forms.ModelForm,), {"Meta": meta, **overrides})


def _row_data(kind: CatalogKind, row: dict[str, str]) -> dict[str, str]:
    data = {kind.csv_columns[h]: _restore_cell((v or "").strip()) for h, v in row.items() if h}
    if "slug" in kind.csv_columns.values() and not data.get("slug"):
        # Server platforms in the reference data have no slug column: derive a stable one.
        data["slug"] = slugify(f"{data.get('vendor', '')} {data.get('name', '')}")[:120]
    return data


def _field_values(instance: models.Model) -> dict[str, object]:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def _error_text(form: forms.ModelForm) -> str:
    parts = []
    for name, messages in form.errors.items():
        label = "row" if name == "__all__" else name
        parts.append(f"{label}: {' '.join(str(m) for m in messages)}")
    return "; ".join(parts)


def read_csv_text(raw: bytes) -> str:
    """Decode an uploaded file (UTF-8, with or without BOM).

    Raises:
        CatalogImportError: Too large, not UTF-8, or holding a NUL character (no text file
            has one, and PostgreSQL cannot store it).
    """
    if len(raw) > MAX_IMPORT_BYTES:
        raise CatalogImportError(f"The file is larger than {MAX_IMPORT_BYTES // 1024 // 1024} MB.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CatalogImportError(
            f"The file is not UTF-8 text (byte {exc.start} cannot be decoded)."
        ) from exc
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise CatalogImportError(
            f"Line {line} holds a NUL character: the file is binary, not CSV text."
        )
    return text


def import_csv(kind: CatalogKind, text: str) -> ImportResult:
    """Validate every row, then create or update them all in one transaction, or none.

    Rows are matched to existing items by the kind's natural key, so importing the same file
    twice changes nothing. A changed price keeps the old one in the price history.
    """
    result = ImportResult()
    reader = csv.DictReader(io.StringIO(text))
    headers = [h for h in (reader.fieldnames or []) if h]
    if not headers:
        result.errors.append(RowError(1, "the file is empty or has no header row"))
        return result
    unknown = [h for h in headers if h not in kind.csv_columns]
    if unknown:
        result.errors.append(RowError(1, f"unknown column(s): {', '.join(unknown)}"))
    required = [
        h
        for h, f in kind.csv_columns.items()
        if f in kind.natural_key and not (f == "slug" and kind.key == "servers")
    ]
    missing = [h for h in required if h not in headers]
    if missing:
        result.errors.append(RowError(1, f"missing column(s): {', '.join(missing)}"))
    if result.errors:
        return result

    form_class = _form_class(kind)
    valid_forms: list[tuple[forms.ModelForm, bool]] = []
    seen_keys: dict[tuple, int] = {}
    for row in reader:
        line = reader.line_num
        if None in row:
            result.errors.append(RowError(line, "more cells than there are columns"))
            continue
        data = _row_data(kind, row)
        key = tuple(data.get(f, "") for f in kind.natural_key)
        if key in seen_keys:
            result.errors.append(RowError(line, f"duplicates line {seen_keys[key]} ({key})"))
            continue
        seen_keys[key] = line
        instance = kind.model.objects.filter(
            **{f: data.get(f, "") for f in kind.natural_key}
        ).first()
        before = _field_values(instance) if instance else None
        form = form_class(data=data, instance=instance)
        if form.is_valid():
            # is_valid() copies the row onto the instance; compare to see what changed.
            valid_forms.append((form, before is not None and before == _field_values(instance)))
        else:
            result.errors.append(RowError(line, _error_text(form)))
    if not valid_forms and not result.errors:
        result.errors.append(RowError(2, "the file has a header but no rows"))
    if result.errors:
        return result

    with transaction.atomic():
        for form, unchanged in valid_forms:
            is_new = form.instance.pk is None
            if unchanged:
                result.unchanged += 1
                item = form.instance
            else:
                item = form.save()
                if is_new:
                    result.created += 1
                else:
                    result.updated += 1
            if kind.price_field and price_point_record(item=item, field=kind.price_field):
                result.prices_recorded += 1
    return result


def price_point_record(*, item: models.Model, field: str) -> bool:
    """Record the item's current price unless the latest point already says the same.

    Returns True when a point was written. Older points stay: that is the price history.
    """
    value = getattr(item, field)
    if value is None:
        return False
    content_type = ContentType.objects.get_for_model(item)
    latest = (
        PricePoint.objects.filter(content_type=content_type, object_id=item.pk, field=field)
        .order_by("-recorded_at", "-pk")
        .first()
    )
    # A price with its own date and source (``list_price_as_of``) is recorded with those.
    prefix = field.removesuffix("_usd")
    as_of = getattr(item, f"{prefix}_as_of", None) or getattr(item, "as_of", None)
    source = getattr(item, f"{prefix}_source", "") or getattr(item, "source", "")
    if latest and latest.value_usd == value and latest.as_of == as_of:
        return False
    PricePoint.objects.create(
        content_type=content_type,
        object_id=item.pk,
        field=field,
        value_usd=value,
        as_of=as_of,
        source=source,
    )
    return True
