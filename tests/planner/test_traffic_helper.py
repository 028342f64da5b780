"""The workload form's traffic helper, the prompt against the model's context, and the
warning for a fleet no one could build."""

import html
import json
import re

import pytest
from django.urls import reverse

from catalog.models import ModelArchitecture
from planner.models import Workload
from tests.planner.test_sizing_views import form_data, plan, workload  # noqa: F401

HELPER = {
    "traffic_users": 20000, "traffic_period": "day", "traffic_sessions": 2,
    "traffic_requests": 5, "traffic_think_s": 30, "traffic_busiest_pct": 12,
}  # fmt: skip


def test_users_become_peak_requests_per_s_shown_with_its_numbers(client, consultant_a, plan):  # noqa: F811
    client.force_login(consultant_a)
    # W = 1 s + 200 × 0.05 s = 11 s; 20,000 × 2 × 5 = 200,000 a day, 12 % in the busiest hour
    # = 24,000 → λ = 6.667/s; L = λW = 73.3 in flight; N = λ(W + 30 s) = 273.3 users.
    data = form_data(peak_concurrency="", **HELPER)
    response = client.post(reverse("workload_add", args=[plan.pk]), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    saved = Workload.objects.get()
    assert saved.peak_requests_per_s == pytest.approx(6.6667)
    assert saved.peak_concurrency is None
    assert saved.traffic["active_users"] == 20000
    raw = client.get(response.url).content.decode()
    page = html.unescape(re.sub(r"<[^>]+>", "", raw))
    assert "200,000 requests a day; 24,000 in the busiest hour" in page
    assert "6.667 requests/s" in page
    assert "6.667/s × 11.0 s per request at the latency target = 73 requests in flight" in page
    assert "N = λ × (W + Z) = 273 users in a session" in page
    assert 'value="6.6667"' in raw  # the direct field shows what the helper filled


def test_direct_inputs_still_work_and_clear_the_helper(client, consultant_a, plan, workload):  # noqa: F811
    workload.traffic = {"active_users": 5}
    workload.save()
    client.force_login(consultant_a)
    url = reverse("workload_sizing", args=[plan.pk, workload.pk])
    response = client.post(url, form_data(peak_concurrency=250))
    assert response.status_code == 302, re.findall(
        r'role="alert">([^<]*)<', response.content.decode()
    )
    workload.refresh_from_db()
    assert workload.peak_concurrency == 250
    assert workload.traffic == {}


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"traffic_sessions": ""}, "traffic_sessions", "needs this with the active users"),
        ({"traffic_busiest_pct": 2}, "traffic_busiest_pct", "a day spread evenly puts 1/24"),
        ({"traffic_users": 1, "traffic_sessions": 0.01, "traffic_requests": 1},
         "traffic_users", "in effect 0: nothing to size"),
    ],
)  # fmt: skip
def test_helper_input_problems_are_messages_at_the_field(
    client,
    consultant_a,
    plan,  # noqa: F811
    overrides,
    field,
    message,
):
    client.force_login(consultant_a)
    data = form_data(peak_concurrency="", **{**HELPER, **overrides})
    response = client.post(reverse("workload_add", args=[plan.pk]), data)
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    errors = page.split(f'id="err-{field}"')[1].split("</div>")[0]
    assert message in errors
    assert not Workload.objects.exists()
    assert f'value="{data["traffic_think_s"]}"' in page  # what was typed is kept


def test_a_prompt_longer_than_the_context_is_refused_at_the_field(client, consultant_a, plan):  # noqa: F811
    model = ModelArchitecture.objects.get(slug="llama-3.1-8b")
    client.force_login(consultant_a)
    data = form_data(input_tokens_mean=150000, input_tokens_p95=200000)
    response = client.post(reverse("workload_add", args=[plan.pk]), data)
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    errors = page.split('id="err-input_tokens_p95"')[1].split("</div>")[0]
    assert (
        f"A prompt of 200,000 tokens is longer than {model.name}'s context of "
        f"{model.max_position_embeddings:,} tokens"
    ) in errors
    assert not Workload.objects.exists()


def test_a_fleet_from_a_typo_gets_a_plain_warning(client, consultant_a, plan, workload):  # noqa: F811
    client.force_login(consultant_a)
    url = reverse("workload_sizing", args=[plan.pk, workload.pk])
    assert 'data-testid="fleet-warning"' not in client.get(url).content.decode()
    workload.model = ModelArchitecture.objects.get(slug="llama-3.1-405b")
    workload.peak_concurrency = 9_000_000  # 9,000 typed with three zeros too many
    workload.save()
    response = client.get(url)
    smallest = response.context["fleet_warning"]
    feasible = [c for _, c, _ in response.context["candidates"] if c.feasible]
    assert feasible and smallest <= min(c.accelerators for c in feasible)
    assert smallest > 100_000
    page = html.unescape(response.content.decode())
    assert f"The smallest fleet that meets this workload is {smallest:,} accelerators" in page
    assert "more than the largest clusters ever built" in page


def test_cold_start_feeds_the_autoscaling_recommendation(client, consultant_a, plan, workload):  # noqa: F811
    client.force_login(consultant_a)
    url = reverse("workload_sizing", args=[plan.pk, workload.pk])
    response = client.post(url, form_data(weights_read_gb_per_s=0.5, engine_start_s=120))
    assert response.status_code == 302
    workload.refresh_from_db()
    assert (workload.weights_read_gb_per_s, workload.engine_start_s) == (0.5, 120)
    response = client.get(url)
    detail = response.context["detail"]
    start = detail.autoscaling.cold_start
    weights_gb = detail.weights_gb_per_gpu * detail.candidate.tensor_parallel
    assert start.weights_gb == pytest.approx(weights_gb)
    assert start.total_s == pytest.approx(weights_gb / 0.5 + 120)
    page = html.unescape(response.content.decode())
    assert f"A new replica serves after {start.total_s:.0f} s" in page
    assert "while a replica starts" in page


def test_cold_start_inputs_out_of_range_are_refused(client, consultant_a, plan, workload):  # noqa: F811
    client.force_login(consultant_a)
    url = reverse("workload_sizing", args=[plan.pk, workload.pk])
    response = client.post(url, form_data(weights_read_gb_per_s=0, engine_start_s=120))
    assert response.status_code == 400
    errors = html.unescape(response.content.decode()).split('id="err-weights_read_gb_per_s"')[1]
    assert "from a slow network share" in errors.split("</div>")[0]


def test_cold_start_fields_left_out_take_the_defaults(client, consultant_a, plan):  # noqa: F811
    client.force_login(consultant_a)
    data = form_data(weights_read_gb_per_s="")
    data.pop("engine_start_s", None)
    response = client.post(reverse("workload_add", args=[plan.pk]), data)
    assert response.status_code == 302
    saved = Workload.objects.get()
    assert (saved.weights_read_gb_per_s, saved.engine_start_s) == (2.0, 60)


def test_help_and_errors_are_tied_to_their_field_for_screen_readers(client, consultant_a, plan):  # noqa: F811
    client.force_login(consultant_a)
    page = client.get(reverse("workload_add", args=[plan.pk])).content.decode()
    widget = re.search(r'<input[^>]*name="traffic_users"[^>]*>', page).group(0)
    assert 'aria-describedby="id_traffic_users_helptext"' in widget
    assert 'id="id_traffic_users_helptext"' in page
    data = form_data(peak_concurrency="", **{**HELPER, "traffic_sessions": ""})
    page = client.post(reverse("workload_add", args=[plan.pk]), data).content.decode()
    widget = re.search(r'<input[^>]*name="traffic_sessions"[^>]*>', page).group(0)
    assert 'aria-describedby="id_traffic_sessions_error"' in widget
    error = page.split('id="id_traffic_sessions_error"')[1].split("</span>")[0]
    assert "needs this with the active users" in error


def test_autoscaling_bounds_are_the_charts_min_and_max(client, consultant_a, plan, workload):  # noqa: F811
    # Seen: "between 3 and 5 replicas" beside its own chart showing 2 at night.
    workload.peak_concurrency = 2000
    workload.daily_profile = [0.05] * 6 + [0.4] * 4 + [1.0] * 10 + [0.4] * 4
    workload.save()
    client.force_login(consultant_a)
    response = client.get(reverse("workload_sizing", args=[plan.pk, workload.pk]))
    bars = json.loads(response.context["replicas_figure"])["data"][0]["y"]
    fewest, most = min(bars), max(bars)
    assert fewest < most  # the night needs fewer replicas than the day
    page = html.unescape(re.sub(r"<[^>]+>", "", response.content.decode()))
    assert f"between {fewest} replicas and {most} replicas." in page
    assert (
        f"Bounds: {fewest} replicas in the quietest hour, {most} replicas in the peak hour" in page
    )


# --- Concurrent users, answered as the helper is typed -----------------------------------------


def test_concurrent_users_answer_live_on_the_add_page(client, consultant_a, plan):  # noqa: F811
    client.force_login(consultant_a)
    add_page = client.get(reverse("workload_add", args=[plan.pk])).content.decode()
    preview = reverse("workload_traffic_preview", args=[plan.pk])
    helper = re.search(r'<fieldset[^>]*data-testid="traffic-helper"[^>]*>', add_page).group(0)
    assert f'hx-post="{preview}"' in helper and 'hx-trigger="input' in helper
    assert 'name="traffic_concurrent_users"' in add_page
    # What the page posts while the helper is typed: the whole form, nothing saved.
    # W = 1 s + 200 × 0.05 s = 11 s; 600 users with 19 s think time: λ = 600 / 30 s = 20/s,
    # L = λW = 220 in flight.
    data = form_data(peak_concurrency="", traffic_concurrent_users=600, traffic_think_s=19)
    response = client.post(preview, data, headers={"HX-Request": "true"})
    assert response.status_code == 200
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", response.content.decode())).split())
    assert "600 users in a session at the peak" in text
    assert "20 requests/s at the peak (λ = N ÷ (W + Z)" in text
    assert "20/s × 11 s = 220 requests in flight" in text
    assert not Workload.objects.exists()


def test_the_live_answer_names_a_helper_problem(client, consultant_a, plan):  # noqa: F811
    client.force_login(consultant_a)
    preview = reverse("workload_traffic_preview", args=[plan.pk])
    both = form_data(traffic_concurrent_users=600, **HELPER)
    text = html.unescape(client.post(preview, both).content.decode())
    assert "Give active users or concurrent users, not both" in text
    # The active-users path answers live too, with the figures the saved page shows.
    text = html.unescape(client.post(preview, form_data(**HELPER)).content.decode())
    assert "24,000 in the busiest hour" in text


def test_concurrent_users_fill_the_peak_when_saved_and_the_sizing_page_answers_live(
    client,
    consultant_a,
    plan,  # noqa: F811
):
    client.force_login(consultant_a)
    data = form_data(peak_concurrency="", traffic_concurrent_users=600, traffic_think_s=19)
    response = client.post(reverse("workload_add", args=[plan.pk]), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    saved = Workload.objects.get()
    assert saved.peak_requests_per_s == pytest.approx(20)
    assert saved.traffic == {"concurrent_users": 600, "think_time_s": 19}
    page = client.get(response.url).content.decode()
    helper = re.search(r'<fieldset[^>]*data-testid="traffic-helper"[^>]*>', page).group(0)
    assert reverse("workload_traffic_preview", args=[plan.pk]) in helper
    assert "600 users in a session at the peak" in html.unescape(page)
