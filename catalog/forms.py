"""Forms of the catalog pages: compare and CSV upload."""

from django import forms

from catalog.csv_io import MAX_IMPORT_BYTES
from catalog.kinds import KINDS
from catalog.models import Accelerator
from planner.charts import PRECISION_FIELDS
from planner.input_rules import InputForm

MIN_COMPARED, MAX_COMPARED = 2, 4


class CompareForm(InputForm):
    a = forms.MultipleChoiceField(
        label="Accelerators (2 to 4)",
        choices=(),
        widget=forms.CheckboxSelectMultiple(attrs={"class": "checkbox-grid"}),
    )
    precision = forms.ChoiceField(
        label="Compute at",
        choices=[(key, key.upper()) for key in PRECISION_FIELDS],
        required=False,
        initial="bf16",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["a"].choices = list(
            Accelerator.objects.order_by("vendor", "name").values_list("slug", "name")
        )

    def clean_a(self) -> list[str]:
        slugs = list(dict.fromkeys(self.cleaned_data["a"]))
        if not MIN_COMPARED <= len(slugs) <= MAX_COMPARED:
            raise forms.ValidationError(
                f"Pick between {MIN_COMPARED} and {MAX_COMPARED} accelerators "
                f"({len(slugs)} picked)."
            )
        return slugs

    def clean_precision(self) -> str:
        return self.cleaned_data.get("precision") or "bf16"


class CatalogUploadForm(InputForm):
    kind = forms.ChoiceField(
        label="What the file holds",
        choices=[(key, kind.title) for key, kind in KINDS.items()],
    )
    file = forms.FileField(
        label="CSV file",
        help_text=(
            "UTF-8 CSV with the same header row as the export of that list. "
            "Rows are matched by their key (slug, or provider + instance + region + price "
            "model) and updated; a file with any bad row saves nothing."
        ),
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_IMPORT_BYTES:
            raise forms.ValidationError(
                f"The file is larger than {MAX_IMPORT_BYTES // 1024 // 1024} MB."
            )
        if not upload.name.lower().endswith(".csv"):
            raise forms.ValidationError("Upload a .csv file.")
        return upload
