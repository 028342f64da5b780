"""The sizing table's toggles combine (each link, autosave and choice keeps the others), and
the chosen row stays in the table and can be chosen again when its fleet no longer matches."""

import itertools
import re
from collections import Counter
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from planner import sizing
from planner.models import Workload
from tests.html_forms import page_form
from tests.planner.test_sizing_views import plan as plan  # noqa: F401  (fixture)
from tests.planner.test_sizing_views import workload as workload  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

TOGGLES = {
    "show": ("feasible", "all"),
    "precisions": ("", "all"),
    "tp": ("", "all"),
    "stacks": ("", "all"),
}


def _url(workload):  # noqa: F811
    return reverse("workload_sizing", args=[workload.plan_id, workload.pk])


def _toggle_links(content: str) -> list[dict[str, str]]:
    """The query of each toggle chip in the filter bar (href and hx-get must agree)."""
    nav = re.search(r'<nav class="filters-inline".*?</nav>', content, re.S).group(0)
    links = []
    for href, hx_get in re.findall(r'<a href="([^"]*)" hx-get="([^"]*)"', nav):
        assert href == hx_get
        query = parse_qs(urlsplit(unescape(href)).query, keep_blank_values=True)
        links.append({name: values[0] for name, values in query.items()})
    return links


def _state(context) -> dict[str, str]:
    return {
        "show": context["show"],
        "precisions": context["precisions"],
        "tp": context["every_tp"],
        "stacks": context["stacks"],
    }


def test_each_toggle_flips_only_itself(client, consultant_a, workload):  # noqa: F811
    client.force_login(consultant_a)
    # Every combination of the four toggles: each chip's link changes its own and keeps the
    # others (and the sort).
    for values in itertools.product(*TOGGLES.values()):
        state = dict(zip(TOGGLES, values, strict=True))
        response = client.get(_url(workload), {**state, "sort": "ttft"})
        assert _state(response.context) == state
        links = _toggle_links(response.content.decode())
        assert len(links) == len(TOGGLES)
        for name, link in zip(TOGGLES, links, strict=True):
            assert link["sort"] == "ttft"
            flipped = {k: link[k] for k in state}
            off, on = TOGGLES[name]
            assert flipped == {**state, name: on if state[name] == off else off}


def test_all_three_toggles_together_show_what_each_adds(client, consultant_a, workload):  # noqa: F811
    client.force_login(consultant_a)
    rows = client.get(_url(workload), {"show": "all", "precisions": "all", "tp": "all"}).context[
        "candidates"
    ]
    assert any(not c.feasible for _, c, _ in rows)  # infeasible rows
    assert len({c.precision for _, c, _ in rows}) > 1  # other precisions
    per_group = Counter((c.accelerator_slug, c.precision) for _, c, _ in rows)
    assert max(per_group.values()) > 1  # several tensor-parallel degrees of one accelerator


def test_an_autosave_keeps_the_toggles_of_the_page(client, consultant_a, workload):  # noqa: F811
    client.force_login(consultant_a)
    page_url = _url(workload) + "?show=all&precisions=all&tp=all"
    data = page_form(client.get(page_url).content.decode(), containing="ttft_ms")
    data["peak_concurrency"] = "300"

    # The form posts to the bare URL; htmx sends the page's URL (where the chips push their
    # state) in HX-Current-URL.
    response = client.post(
        _url(workload),
        data,
        headers={
            "HX-Request": "true",
            "HX-Target": "sizing-results",
            "HX-Current-URL": "http://testserver" + page_url,
        },
    )

    assert response.status_code == 200
    assert 'data-testid="form-saved"' in response.content.decode()
    assert _state(response.context) == {
        "show": "all",
        "precisions": "all",
        "tp": "all",
        "stacks": "",
    }
    assert Workload.objects.get(pk=workload.pk).peak_concurrency == 300
    # Without the header (no htmx) the form posts to the page's URL and comes back to it.
    data = page_form(client.get(page_url).content.decode(), containing="ttft_ms")
    data["peak_concurrency"] = "320"
    response = client.post(page_url, data)
    assert response.status_code == 302
    assert parse_qs(urlsplit(response.url).query) == {
        "show": ["all"],
        "precisions": ["all"],
        "tp": ["all"],
    }


def test_choosing_keeps_the_toggles(client, consultant_a, workload):  # noqa: F811
    client.force_login(consultant_a)
    response = client.get(_url(workload), {"show": "all", "tp": "all"})
    choose = response.context["choose_url"]
    assert parse_qs(urlsplit(choose).query) == {"show": ["all"], "tp": ["all"]}
    key = response.context["best_key"]

    chosen = client.post(choose, {"candidate": key})

    assert chosen.status_code == 302
    assert parse_qs(urlsplit(chosen.url).query) == {"show": ["all"], "tp": ["all"]}
    assert sizing.chosen_key(Workload.objects.get(pk=workload.pk)) == key


def _choose_button(content: str, key: str) -> str | None:
    match = re.search(rf'<button[^>]*value="{re.escape(key)}"[^>]*>([^<]*)</button>', content)
    return match.group(1) if match else None


def test_the_chosen_row_can_be_chosen_again_after_its_inputs_changed(
    client, consultant_a, workload
):  # noqa: F811, E501
    client.force_login(consultant_a)
    rows = client.get(_url(workload), {"tp": "all"}).context["candidates"]
    # A configuration that is not its accelerator's first row: it must stay in the table.
    firsts = {}
    for key, c, _ in rows:
        firsts.setdefault((c.accelerator_slug, c.precision), key)
    key, candidate = next(
        (key, c) for key, c, _ in rows if c.feasible and firsts[(c.accelerator_slug, c.precision)] != key
    )  # fmt: skip
    sizing.workload_choose(workload=workload, candidate=candidate)

    page = client.get(_url(workload))
    assert key in [k for k, _, _ in page.context["candidates"]]
    content = page.content.decode()
    assert page.context["rechoose"] is False and _choose_button(content, key) is None
    assert "planned for the inputs above" in content

    # The peak changes outside the sizing form (an import, the admin): the stored fleet is
    # for the old peak, the table's row for the new one.
    Workload.objects.filter(pk=workload.pk).update(peak_concurrency=2500)
    page = client.get(_url(workload))
    content = page.content.decode()
    row = next(c for k, c, _ in page.context["candidates"] if k == key)
    assert page.context["rechoose"] is True
    assert _choose_button(content, key) == "Re-choose"
    assert "Re-choose it to keep that fleet" in content

    response = client.post(page.context["choose_url"], {"candidate": key})

    assert response.status_code == 302
    stored = Workload.objects.get(pk=workload.pk)
    assert sizing.chosen_key(stored) == key
    assert stored.chosen_replicas == row.replicas > candidate.replicas
    assert (stored.chosen_accelerators, stored.chosen_servers) == (row.accelerators, row.servers)
    content = client.get(_url(workload)).content.decode()
    assert _choose_button(content, key) is None and "planned for the inputs above" in content


def test_a_viewer_gets_no_re_choose_button(client, org_a, workload):  # noqa: F811
    from tests.conftest import make_member

    sizing.workload_choose(workload=workload, candidate=sizing.workload_sweep(workload).best)
    Workload.objects.filter(pk=workload.pk).update(peak_concurrency=2500)
    client.force_login(make_member(org_a, "vera", "viewer"))
    content = client.get(_url(workload)).content.decode()
    assert "Re-choose" not in content and "shows the fleet for the current inputs." in content
