"""The workload form's traffic helper and its checks against the model.

A consultant hears "20,000 daily users", not "120 requests in flight". The helper takes
active users (a day or a month), sessions per user, requests per session, think time and the
busiest hour's share, or the users in a session at the same moment (concurrent users) and
their think time, and fills the peak requests/s through the engine
(:func:`planner.engine.demand.traffic_from_users`,
:func:`planner.engine.demand.traffic_from_concurrent_users`); the direct peak fields stay for
anyone who knows them. :class:`TrafficPreviewForm` answers as the helper is typed, on the
add-workload page and the sizing page alike, before anything is saved. Its inputs are kept on the workload (``Workload.traffic``) so the page shows the
numbers it used. The prompt is checked against the model's context here too.
"""

from __future__ import annotations

from django import forms

from planner.engine import demand, limits
from planner.engine.errors import EngineInputError
from planner.input_rules import InputForm
from planner.validation import in_range

TRAFFIC_FIELDS = (
    "traffic_users",
    "traffic_period",
    "traffic_sessions",
    "traffic_requests",
    "traffic_think_s",
    "traffic_busiest_pct",
    "traffic_concurrent_users",
)
# The inputs of the active-users path that only make sense with active users.
_PER_USER_FIELDS = ("traffic_sessions", "traffic_requests", "traffic_busiest_pct")
PERIODS = [("day", "Daily active users"), ("month", "Monthly active users")]


class TrafficHelperMixin(InputForm):
    """Fields and checks mixed into the workload form (a ModelForm of ``Workload``)."""

    traffic_users = forms.FloatField(
        label="Active users",
        required=False,
        validators=in_range(limits.ACTIVE_USERS),
        help_text="Leave empty to give the peak directly below.",
    )
    traffic_period = forms.ChoiceField(
        label="Counted", choices=PERIODS, initial="day", required=False
    )
    traffic_sessions = forms.FloatField(
        label="Sessions per user (same period)",
        required=False,
        validators=in_range(limits.SESSIONS_PER_USER),
    )
    traffic_requests = forms.FloatField(
        label="Requests per session",
        required=False,
        validators=in_range(limits.REQUESTS_PER_SESSION),
    )
    traffic_think_s = forms.FloatField(
        label="Think time between requests (s)",
        required=False,
        validators=in_range(limits.THINK_TIME_S),
    )
    traffic_busiest_pct = forms.FloatField(
        label="Busiest hour's share of a day (%)",
        required=False,
        validators=in_range(limits.BUSIEST_HOUR_PCT),
        help_text="e.g. 10 % for office hours; 4.2 % is a flat day.",
    )
    traffic_concurrent_users = forms.FloatField(
        label="Or concurrent users (in a session at the peak)",
        required=False,
        validators=in_range(limits.CONCURRENT_USERS),
        help_text="Instead of active users: people using it at the same moment, with the "
        "think time above.",
    )

    traffic_estimate: demand.TrafficEstimate | None = None

    def _traffic_initial(self) -> None:
        saved = getattr(self.instance, "traffic", None) or {}
        keys = {
            "traffic_users": "active_users",
            "traffic_period": "period",
            "traffic_sessions": "sessions_per_user",
            "traffic_requests": "requests_per_session",
            "traffic_think_s": "think_time_s",
            "traffic_busiest_pct": "busiest_hour_pct",
            "traffic_concurrent_users": "concurrent_users",
        }
        for name, key in keys.items():
            if key in saved:
                self.initial.setdefault(name, saved[key])
        if saved and not self.is_bound:
            self.traffic_estimate = self._estimate_from(saved, self.instance)

    @staticmethod
    def _estimate_from(saved: dict, workload) -> demand.TrafficEstimate | None:
        request_s = demand.target_request_s(
            ttft_ms=workload.ttft_ms,
            tpot_ms=workload.tpot_ms,
            output_tokens_mean=workload.output_tokens_mean or 0,
            e2e_s=workload.e2e_s,
        )
        try:
            return _estimate(saved, request_s)
        except (EngineInputError, KeyError, TypeError):
            return None

    def _check_context(self, cleaned: dict) -> None:
        model = cleaned.get("model")
        if model is None or not model.max_position_embeddings:
            return
        context = model.max_position_embeddings
        for name in ("input_tokens_p95", "input_tokens_mean"):
            tokens = cleaned.get(name)
            # Past the input range the range message says it (the model's validators).
            if tokens and context < tokens <= limits.INPUT_TOKENS.high:
                self.add_error(
                    name,
                    f"A prompt of {tokens:,} tokens is longer than {model.name}'s context of "
                    f"{context:,} tokens: the model cannot read it. Shorten or split the "
                    "prompt, or pick a model with a longer context.",
                )

    def _traffic_saved(self, cleaned: dict) -> tuple[dict, demand.TrafficEstimate] | None:
        """The helper's inputs as ``Workload.traffic`` keeps them and their estimate, or None
        (nothing given, or a problem added to its field)."""
        users = cleaned.get("traffic_users")
        concurrent = cleaned.get("traffic_concurrent_users")
        if users is None and concurrent is None:
            return None
        if users is not None and concurrent is not None:
            self.add_error(
                "traffic_concurrent_users",
                "Give active users or concurrent users, not both: clear one of them.",
            )
            return None
        missing = []
        if users is not None:
            missing = [
                n for n in _PER_USER_FIELDS if cleaned.get(n) is None and n not in self.errors
            ]
        for name in missing:
            self.add_error(name, "The traffic helper needs this with the active users.")
        if missing or any(n in self.errors for n in TRAFFIC_FIELDS):
            return None
        request_s = demand.target_request_s(
            ttft_ms=cleaned.get("ttft_ms"),
            tpot_ms=cleaned.get("tpot_ms"),
            output_tokens_mean=cleaned.get("output_tokens_mean") or 0,
            e2e_s=cleaned.get("e2e_s"),
        )
        field = "traffic_users" if users is not None else "traffic_concurrent_users"
        if request_s <= 0:
            self.add_error(
                field, "The helper needs the latency targets to know how long a request takes."
            )
            return None
        if users is not None:
            saved = {
                "active_users": users,
                "period": cleaned.get("traffic_period") or "day",
                "sessions_per_user": cleaned["traffic_sessions"],
                "requests_per_session": cleaned["traffic_requests"],
                "think_time_s": cleaned.get("traffic_think_s") or 0,
                "busiest_hour_pct": cleaned["traffic_busiest_pct"],
            }
        else:
            saved = {
                "concurrent_users": concurrent,
                "think_time_s": cleaned.get("traffic_think_s") or 0,
            }
        try:
            estimate = _estimate(saved, request_s)
        except EngineInputError as exc:
            self.add_error(field, str(exc))
            return None
        rate = round(estimate.peak_requests_per_s, 4)
        if rate < limits.PEAK_REQUESTS_PER_S.low:
            self.add_error(
                field,
                f"These figures give a peak of {estimate.peak_requests_per_s:.2g} requests/s, "
                "in effect 0: nothing to size. Check the users, sessions and requests.",
            )
            return None
        if rate > limits.PEAK_REQUESTS_PER_S.high:
            self.add_error(
                field,
                f"These figures give a peak of {rate:,.0f} requests/s. "
                f"{limits.PEAK_REQUESTS_PER_S.message()}",
            )
            return None
        return saved, estimate

    def _apply_traffic(self, cleaned: dict) -> None:
        given = any(
            cleaned.get(n)
            for n in ("traffic_users", "traffic_concurrent_users", *TRAFFIC_FIELDS[2:])
        )
        found = self._traffic_saved(cleaned)
        if found is None:
            if not given:
                self.instance.traffic = {}
            return
        saved, estimate = found
        rate = round(estimate.peak_requests_per_s, 4)
        self.traffic_estimate = estimate
        self.instance.traffic = saved
        # The helper fills the direct field; concurrency then follows by Little's law with
        # each configuration's own request time (demand.PeakLoad.concurrency).
        cleaned["peak_requests_per_s"] = rate
        cleaned["peak_concurrency"] = None
        self.errors.pop("peak_concurrency", None)
        self.errors.pop("peak_requests_per_s", None)
        for name in ("peak_requests_per_s", "peak_concurrency"):
            # After an autosave the page swaps these inputs in out of band (htmx).
            self.fields[name].widget.attrs["hx-swap-oob"] = "true"
        data = self.data.copy()
        data[self.add_prefix("peak_requests_per_s")] = f"{rate:g}"
        data[self.add_prefix("peak_concurrency")] = ""
        self.data = data

    def clean(self) -> dict:
        cleaned = super().clean()
        self._check_context(cleaned)
        self._apply_traffic(cleaned)
        return cleaned


def _estimate(saved: dict, request_s: float) -> demand.TrafficEstimate:
    """The engine's estimate of a helper's saved inputs (active users or concurrent users)."""
    if saved.get("concurrent_users") is not None:
        return demand.traffic_from_concurrent_users(
            concurrent_users=saved["concurrent_users"],
            think_time_s=saved.get("think_time_s") or 0,
            request_s=request_s,
        )
    return demand.traffic_from_users(
        active_users=saved["active_users"],
        per_month=saved.get("period") == "month",
        sessions_per_user=saved["sessions_per_user"],
        requests_per_session=saved["requests_per_session"],
        think_time_s=saved.get("think_time_s") or 0,
        busiest_hour_pct=saved["busiest_hour_pct"],
        request_s=request_s,
    )


class TrafficPreviewForm(TrafficHelperMixin):
    """The helper alone, with the targets it needs: its answer while it is typed, unsaved.

    Posted with the whole workload form (``hx-include``); fields of the workload other than
    these are ignored, so an unfinished form elsewhere does not hide the helper's answer.
    """

    output_tokens_mean = forms.IntegerField(
        required=False, validators=in_range(limits.OUTPUT_TOKENS)
    )
    ttft_ms = forms.FloatField(required=False, validators=in_range(limits.TTFT_MS))
    tpot_ms = forms.FloatField(required=False, validators=in_range(limits.TPOT_MS))
    e2e_s = forms.FloatField(required=False, validators=in_range(limits.E2E_S))

    def clean(self) -> dict:
        cleaned = super(TrafficHelperMixin, self).clean()
        found = self._traffic_saved(cleaned)
        self.traffic_estimate = found[1] if found else None
        return cleaned

    def helper_errors(self) -> list[tuple[str, str]]:
        """(label, message) of each problem on the helper's own fields or the targets."""
        return [
            (self.fields[name].label, message)
            for name, messages in self.errors.items()
            if name in self.fields
            for message in messages
        ]
