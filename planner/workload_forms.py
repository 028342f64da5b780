"""The workload form: model, lengths, latency targets with use-case presets, traffic shape."""

from django import forms
from django.forms.models import ModelChoiceIterator

from catalog.models import ModelArchitecture
from planner.cost_target import cost_target_in_plan_currency
from planner.engine.network import REGIONS
from planner.engine.specs import PRECISIONS
from planner.input_rules import InputModelForm
from planner.models import Precision, Workload, WorkloadKind
from planner.traffic_forms import TrafficHelperMixin
from planner.versioning import VersionedFormMixin

# Starting points per use case (lengths in tokens, targets at p95). Typical figures used
# by serving benchmarks: chat TTFT ≈ 1 s and ≈ 20 output tokens/s per user (TPOT 50 ms);
# RAG carries long prompts; code completion wants a fast first token; batch sets a total time.
WORKLOAD_PRESETS: dict[str, dict] = {
    WorkloadKind.CHAT: {
        "input_tokens_mean": 1200, "input_tokens_p95": 3000, "output_tokens_mean": 350,
        "output_tokens_p95": 900, "ttft_ms": 1000, "tpot_ms": 50, "e2e_s": None,
    },
    WorkloadKind.RAG: {
        "input_tokens_mean": 6000, "input_tokens_p95": 12000, "output_tokens_mean": 400,
        "output_tokens_p95": 900, "ttft_ms": 2000, "tpot_ms": 50, "e2e_s": None,
    },
    WorkloadKind.CODE: {
        "input_tokens_mean": 2000, "input_tokens_p95": 6000, "output_tokens_mean": 150,
        "output_tokens_p95": 400, "ttft_ms": 500, "tpot_ms": 30, "e2e_s": None,
    },
    WorkloadKind.BATCH: {
        "input_tokens_mean": 2500, "input_tokens_p95": 6000, "output_tokens_mean": 400,
        "output_tokens_p95": 800, "ttft_ms": None, "tpot_ms": None, "e2e_s": 120,
    },
}  # fmt: skip


COLD_START_FIELDS = ("weights_read_gb_per_s", "engine_start_s")
# Left out of a post (a script, an older page): the workload keeps what it has, which for a
# new workload is its organisation's default (Workload.new_in).
STACK_FIELDS = ("serving_stack", "kv_cache_dtype")


class ParsedTextField(forms.CharField):
    """Text a subclass parses into a value (its ``parse(text)``): the text rules (length, no
    control characters) apply to the text typed, before parsing, not to the parsed value."""

    def to_python(self, value):
        text = super().to_python(value)
        super().run_validators(text)
        return self.parse(text)

    def run_validators(self, value) -> None:
        if isinstance(value, str):  # the parsed value was checked as text in to_python
            super().run_validators(value)


class DailyProfileField(ParsedTextField):
    """24 comma-separated shares of peak traffic (0-1), one per UTC hour."""

    def prepare_value(self, value):
        if isinstance(value, list):
            return ", ".join(f"{v:g}" for v in value)
        return value

    def parse(self, text: str) -> list[float]:
        parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p]
        try:
            shares = [float(p) for p in parts]
        except ValueError:
            raise forms.ValidationError(
                "Use numbers separated by commas, e.g. 0.2, 0.5, 1."
            ) from None
        if len(shares) != 24:
            raise forms.ValidationError(f"Give 24 hourly values ({len(shares)} given).")
        if any(s < 0 or s > 1 for s in shares):
            raise forms.ValidationError("Each hour is a share of peak between 0 and 1.")
        if max(shares) == 0:
            raise forms.ValidationError("At least one hour must carry traffic.")
        return shares


class RegionSharesField(ParsedTextField):
    """``region: percent`` pairs, e.g. ``eu-west: 60, us-east: 40``; shares add to 100."""

    def prepare_value(self, value):
        if isinstance(value, dict):
            return ", ".join(f"{k}: {v:g}" for k, v in value.items())
        return value

    def parse(self, text: str) -> dict[str, float]:
        shares: dict[str, float] = {}
        for part in [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]:
            key, sep, number = part.partition(":")
            if not sep:
                key, sep, number = part.partition("=")
            key = key.strip().lower()
            if key not in REGIONS:
                raise forms.ValidationError(
                    f"Unknown region '{key}'. Known regions: {', '.join(REGIONS)}."
                )
            try:
                shares[key] = float(number)
            except ValueError:
                raise forms.ValidationError(
                    f"'{part}' needs a percentage, e.g. {key}: 50."
                ) from None
        if shares and abs(sum(shares.values()) - 100) > 0.5:
            raise forms.ValidationError(
                f"Shares add up to {sum(shares.values()):g} %; they must add up to 100 %."
            )
        return shares


class PlainModelChoiceIterator(ModelChoiceIterator):
    """A model field's options from one plain query of the two columns they show.

    Django's iterator reads whole rows with ``QuerySet.iterator()``, a server-side cursor on
    PostgreSQL (DECLARE, FETCH, CLOSE), on every page that shows the form. The label must
    read only ``name`` (``label_from_instance`` is ``str``, which is the name).
    """

    def __iter__(self):
        if self.field.empty_label is not None:
            yield ("", self.field.empty_label)
        for obj in self.queryset.only("pk", "name"):
            yield self.choice(obj)


class WorkloadForm(TrafficHelperMixin, VersionedFormMixin, InputModelForm):
    # The precisions the engine sizes (INT8 is stored on older rows but has no step model:
    # saving one answered 500 when the sweep refused it).
    precision = forms.ChoiceField(
        choices=[(value, label) for value, label in Precision.choices if value in PRECISIONS],
        help_text="INT4 is weight-only; FP8 and FP4 need hardware that has them.",
    )
    daily_profile = DailyProfileField(
        label="Daily profile (share of peak per UTC hour)",
        max_length=1_000,  # 24 numbers with room for long decimals
        help_text="24 values from 0 to 1, starting at 00:00 UTC.",
        widget=forms.TextInput(attrs={"class": "wide"}),
    )
    region_shares = RegionSharesField(
        label="Users by region (%)",
        max_length=1_000,  # every region with its share
        required=False,
        help_text="e.g. eu-west: 60, us-east: 40. Regions: " + ", ".join(REGIONS),
        widget=forms.TextInput(attrs={"class": "wide"}),
    )

    class Meta:
        model = Workload
        fields = [
            "name", "kind", "model", "precision",
            "serving_stack", "serving_stack_version", "kv_cache_dtype",
            "input_tokens_mean", "input_tokens_p95", "output_tokens_mean", "output_tokens_p95",
            "percentile", "ttft_ms", "tpot_ms", "e2e_s",
            "peak_concurrency", "peak_requests_per_s", "headroom_pct", "n_plus_one",
            "daily_profile", "region_shares", "cost_per_request_target",
            "weights_read_gb_per_s", "engine_start_s",
        ]  # fmt: skip
        labels = {
            "input_tokens_mean": "Prompt tokens (mean)",
            "input_tokens_p95": "Prompt tokens (p95)",
            "output_tokens_mean": "Output tokens (mean)",
            "output_tokens_p95": "Output tokens (p95)",
            "ttft_ms": "TTFT target (ms)",
            "tpot_ms": "TPOT target (ms)",
            "e2e_s": "Request time target (s)",
            "peak_concurrency": "Peak concurrent requests",
            "peak_requests_per_s": "…or peak requests per second",
            "headroom_pct": "Headroom (%)",
            "n_plus_one": "N+1 spare replica",
            "cost_per_request_target": "Cost-per-request target",
            "weights_read_gb_per_s": "Weights read bandwidth (GB/s)",
            "engine_start_s": "Engine start (s)",
            "serving_stack": "Serving stack",
            "serving_stack_version": "Stack version",
            "kv_cache_dtype": "KV-cache dtype",
        }
        help_texts = {
            # the engine's one rule (capacity.target_utilisation), said as the pages say it
            "headroom_pct": "Capacity kept free at peak: replicas = load ÷ (1 − headroom), "
            "rounded up; 20 % sizes for 80 % utilisation, ÷ 0.8 (25 % more replicas than "
            "the load, not × 1.2).",
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].iterator = PlainModelChoiceIterator
        self.fields["model"].queryset = ModelArchitecture.objects.order_by("name")
        self._traffic_initial()
        for name in COLD_START_FIELDS:  # left empty (or not sent): the convention's default
            self.fields[name].required = False
        for name in STACK_FIELDS:
            self.fields[name].required = False
        self._cost_target_in_plan_currency()

    def _plan_currency(self) -> str:
        plan = getattr(self.instance, "plan", None) if self.instance.plan_id else None
        return plan.currency if plan is not None else "USD"

    def _cost_target_in_plan_currency(self) -> None:
        """The target is entered, shown and stored in the plan's currency (one entered in an
        earlier currency of the plan is shown converted at the plan's dated rate)."""
        currency = self._plan_currency()
        field = self.fields["cost_per_request_target"]
        field.label = f"Cost-per-request target ({currency})"
        field.help_text = (
            f"The most a request may cost at the latency target, in {currency} (the plan's "
            "currency); the checklist compares the chosen option's cost per request with it."
        )
        if self.instance.pk and not self.is_bound:
            converted = cost_target_in_plan_currency(self.instance)
            if converted.amount is not None:
                self.initial["cost_per_request_target"] = converted.amount

    def clean(self):
        cleaned = super().clean()
        target = cleaned.get("cost_per_request_target")
        if target is None:
            self.instance.cost_per_request_target_currency = ""
        elif target != self.instance.cost_per_request_target:  # entered (or shown) anew
            self.instance.cost_per_request_target_currency = self._plan_currency()
        return cleaned

    def _clean_default(self, name: str):
        value = self.cleaned_data.get(name)
        return Workload._meta.get_field(name).default if value is None else value

    def clean_weights_read_gb_per_s(self):
        return self._clean_default("weights_read_gb_per_s")

    def clean_engine_start_s(self):
        return self._clean_default("engine_start_s")

    def clean_serving_stack(self):
        return self.cleaned_data.get("serving_stack") or self.instance.serving_stack

    def clean_kv_cache_dtype(self):
        return self.cleaned_data.get("kv_cache_dtype") or self.instance.kv_cache_dtype

    def clean_serving_stack_version(self):
        if self.add_prefix("serving_stack_version") not in self.data:  # not sent: kept
            return self.instance.serving_stack_version
        return self.cleaned_data.get("serving_stack_version", "")

    @classmethod
    def preset_initial(cls, kind: str) -> dict:
        return dict(WORKLOAD_PRESETS.get(kind, {}))
