"""The upload form of a load-test sweep: files and the candidate they measured."""

from __future__ import annotations

from django import forms

from catalog.models import Accelerator
from planner.models import Precision
from planner.validation import IsoDateInput


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


class SweepUploadForm(forms.Form):
    files = MultipleFileField(
        label="Result files",
        help_text="vLLM benchmark_serving / vllm bench serve JSON, GenAI-Perf "
        "profile_export_genai_perf.json, GuideLLM benchmarks.json or LLMPerf *_summary.json; "
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
