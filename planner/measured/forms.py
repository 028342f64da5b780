"""The upload form of a load-test sweep: files and the candidate they measured."""

from __future__ import annotations

from django import forms

from catalog.models import Accelerator
from planner.engine.traffic_log import COLUMN_PRESETS, FIELDS, check_columns
from planner.input_rules import InputForm, InputModelForm
from planner.measured.models import MeasuredSettings
from planner.models import Precision
from planner.validation import IsoDateInput
from planner.versioning import VersionedFormMixin


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files of one sweep (one result per request rate or concurrency)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".json,application/json"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(item, initial) for item in data]
        return [single(data, initial)]


class SweepUploadForm(InputForm):
    files = MultipleFileField(
        label="Result files",
        help_text="vLLM benchmark_serving / vllm bench serve JSON, GenAI-Perf "
        "profile_export_genai_perf.json, AIPerf profile_export_aiperf.json, GuideLLM "
        "benchmarks.json or LLMPerf *_summary.json; "
        "several files of one sweep make one curve.",
    )
    accelerator = forms.ModelChoiceField(
        queryset=Accelerator.objects.filter(memory_gb__isnull=False).order_by("vendor", "name"),
        help_text="The accelerator of the measured replica.",
    )
    precision = forms.ChoiceField(choices=Precision.choices)
    tensor_parallel = forms.TypedChoiceField(
        label="Tensor parallel (TP)", coerce=int, choices=[(n, n) for n in (1, 2, 4, 8)]
    )
    serving_stack = forms.CharField(
        max_length=60, required=False, help_text="Read from the file when it says; e.g. vLLM."
    )
    stack_version = forms.CharField(max_length=60, required=False, help_text="e.g. 0.11.0")
    measured_on = forms.DateField(
        required=False,
        widget=IsoDateInput(),
        help_text="Read from the file when it says (vLLM, GuideLLM, LLMPerf).",
    )


class TrafficLogForm(InputForm):
    """A request log and how to read its columns (a preset, a saved mapping or typed)."""

    file = forms.FileField(
        label="Request log",
        help_text="CSV (header first) or JSON Lines, one request per row: timestamp, input and "
        "output tokens; optionally duration, TTFT, region, user and request type.",
    )
    mapping = forms.ChoiceField(label="Columns", choices=())
    log_format = forms.ChoiceField(
        label="Format", choices=[("", "as the mapping says"), ("csv", "CSV"), ("jsonl", "JSON Lines")],
        required=False,
    )  # fmt: skip
    save_as = forms.CharField(
        max_length=80, required=False, label="Save this mapping as",
        help_text="Saved for your organisation's next upload of the same export.",
    )  # fmt: skip

    def __init__(self, *args, saved=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.saved = {f"saved:{m.pk}": m for m in saved}
        self.fields["mapping"].choices = (
            [(f"preset:{k}", v["label"]) for k, v in COLUMN_PRESETS.items()]
            + [(key, f"Saved: {m.name}") for key, m in self.saved.items()]
            + [("custom", "Typed below")]
        )
        for name, required in FIELDS.items():
            self.fields[f"col_{name}"] = forms.CharField(
                max_length=120, required=False,
                label=f"Column for {name.replace('_', ' ')}" + (" (required)" if required else ""),
            )  # fmt: skip

    def clean(self):
        data = super().clean()
        mapping = data.get("mapping", "")
        typed = {n: data.get(f"col_{n}", "").strip() for n in FIELDS}
        typed = {n: c for n, c in typed.items() if c}
        if mapping.startswith("preset:"):
            preset = COLUMN_PRESETS[mapping.removeprefix("preset:")]
            columns, fmt = {**preset["columns"], **typed}, preset["format"]
        elif mapping in self.saved:
            saved = self.saved[mapping]
            columns, fmt = {**saved.columns, **typed}, saved.log_format
        else:
            columns, fmt = typed, ""
        fmt = data.get("log_format") or fmt
        if not fmt:
            self.add_error("log_format", "Say whether the log is CSV or JSON Lines.")
        try:
            check_columns(columns)
        except ValueError as exc:
            self.add_error("mapping", f"Not readable: {exc}.")
        data["columns"], data["fmt"] = columns, fmt
        return data


class RetentionForm(VersionedFormMixin, InputModelForm):
    class Meta:
        model = MeasuredSettings
        fields = ["raw_log_retention_days"]
