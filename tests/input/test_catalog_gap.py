"""A catalog gap (a figure the chosen hardware lacks) is a message on the section, never a 500.

The demo's chat workload set to the GH200 candidate: the catalog has no server platform for
it and publishes no TDP, so its server power cannot be estimated.
"""

import pytest

from planner.engine.deployment import estimate_server
from planner.engine.errors import CatalogGapError, EngineInputError

GAP_TEXT = "publishes neither the server&#x27;s power nor"


@pytest.fixture
def gh200_plan(demo):
    from planner.sizing import workload_choose, workload_sweep

    plan = demo[0]
    chat = plan.workloads.get(kind="chat")
    candidate = next(
        c for c in workload_sweep(chat).candidates if c.accelerator_slug == "gh200" and c.feasible
    )
    workload_choose(workload=chat, candidate=candidate)
    chat.refresh_from_db()
    assert chat.chosen_server is None and chat.chosen_accelerator.tdp_w is None
    return plan


def test_estimate_server_names_the_gap():
    with pytest.raises(CatalogGapError, match="GH200's TDP") as raised:
        estimate_server(
            accelerators_per_server=4,
            accelerator_tdp_w=None,
            platform_power_kw=None,
            platform_rack_units=None,
            accelerator_name="GH200",
        )
    assert raised.value.figure == "TDP"
    assert isinstance(raised.value, EngineInputError)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0])
def test_estimate_server_refuses_impossible_catalog_figures(value):
    with pytest.raises(EngineInputError, match="positive number"):
        estimate_server(
            accelerators_per_server=8,
            accelerator_tdp_w=value,
            platform_power_kw=None,
            platform_rack_units=None,
        )


@pytest.mark.parametrize(
    "path", ["sites/", "placement/", "tco/", "sourcing/", "sites/{site}/"], ids=str
)
def test_sections_show_the_gap(gh200_plan, signed_in, path):
    site = gh200_plan.sites.first()
    response = signed_in.get(f"/plans/{gh200_plan.pk}/" + path.format(site=site.pk))
    assert response.status_code == 200
    body = response.content.decode()
    assert GAP_TEXT in body
    assert "Customer chat assistant" in body  # names the workload to change


def test_every_plan_page_answers_with_the_gap(gh200_plan, signed_in):
    paths = [
        "", "edit/", "sourcing/landed-cost/", "sourcing/timeline/", "sourcing/orders/",
        "sourcing/settings/", "sourcing/history/", "review/",
    ]  # fmt: skip
    for path in paths:
        response = signed_in.get(f"/plans/{gh200_plan.pk}/{path}")
        assert response.status_code == 200, path


def test_actions_refuse_with_the_gap(gh200_plan, signed_in):
    response = signed_in.post(f"/plans/{gh200_plan.pk}/sourcing/bom/generate/", follow=True)
    assert response.status_code == 200
    assert GAP_TEXT in response.content.decode()
    response = signed_in.post(f"/plans/{gh200_plan.pk}/tco/run/", follow=True)
    assert response.status_code == 200
    assert GAP_TEXT in response.content.decode()


def test_choosing_a_configuration_with_a_gap_warns_at_once(demo, signed_in):
    from django.urls import reverse

    from planner.sizing import candidate_key, workload_sweep

    plan = demo[0]
    chat = plan.workloads.get(kind="chat")
    candidate = next(
        c for c in workload_sweep(chat).candidates if c.accelerator_slug == "gh200" and c.feasible
    )
    response = signed_in.post(
        reverse("workload_choose", args=[plan.pk, chat.pk]),
        {"candidate": candidate_key(candidate)},
        follow=True,
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "Sites, placement, TCO and sourcing cannot use it yet" in body
    assert GAP_TEXT in body


def test_server_power_is_host_base_plus_accelerators_not_a_tdp_ratio():
    from planner.engine.deployment import estimate_server as est

    # 1 × L4 (72 W) in a PCIe host: 1.0 kW host + 1 × (0.072 + 0.05) kW = 1.122 kW.
    power_kw, rack_units, notes = est(
        accelerators_per_server=1,
        accelerator_tdp_w=72.0,
        platform_power_kw=None,
        platform_rack_units=None,
    )
    assert power_kw == pytest.approx(1.122)
    assert rack_units == 2 and "1 kW host" in notes[0]
    # 8 × H100 SXM on a baseboard: 1.0 + 8 × (0.7 + 0.45) = 10.2 kW, the DGX H100 figure.
    assert est(
        accelerators_per_server=8,
        accelerator_tdp_w=700.0,
        platform_power_kw=None,
        platform_rack_units=None,
    )[0] == pytest.approx(10.2)
    # GB200 NVL72 is one rack: 72 × (1.2 + 0.45) = 118.8 kW (NVIDIA: about 120 kW), 48U.
    power_kw, rack_units, notes = est(
        accelerators_per_server=72,
        accelerator_tdp_w=1200.0,
        platform_power_kw=None,
        platform_rack_units=None,
    )
    assert power_kw == pytest.approx(118.8)
    assert rack_units == 48 and "rack-scale" in notes[0]
