"""Measured beats modelled, in a browser: a log fills a workload and draws its charts; a
load-test sweep marks its candidate measured, changes its replicas and draws the comparison."""

import re
from pathlib import Path

import pytest

from tests.browser.test_catalog_flow import sign_in

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parents[1] / "measured" / "fixtures"
KEY = "h100-sxm|fp8|1"


@pytest.fixture
def workloads(transactional_db, settings, tmp_path):
    from catalog.models import ModelArchitecture
    from catalog.services import catalog_load_reference
    from planner.models import Client, Plan, Workload
    from planner.services import demo_setup

    settings.MEDIA_ROOT = tmp_path
    catalog_load_reference()
    user, organisation, _ = demo_setup(
        username="measurer", password="measure-me-123", organisation_name="Measure Co"
    )
    client = Client.objects.create(organisation=organisation, name="Acme")
    plan = Plan.objects.create(
        organisation=organisation, client=client, name="Chat", currency="EUR"
    )
    model = ModelArchitecture.objects.get(slug="llama-3.1-8b")
    common = {
        "plan": plan, "model": model, "precision": "fp8", "percentile": 99, "ttft_ms": 500,
        "tpot_ms": 50, "peak_concurrency": 200, "headroom_pct": 10, "n_plus_one": True,
    }  # fmt: skip
    logged = Workload.objects.create(
        name="Support chat", input_tokens_mean=3000, output_tokens_mean=500, **common
    )
    tested = Workload.objects.create(
        name="Shop chat", input_tokens_mean=1000, output_tokens_mean=250, **common
    )
    return ("measurer", "measure-me-123"), logged, tested


def cells(page, key: str) -> list[str]:
    row = page.locator(f"[data-testid=candidates] tr[data-key='{key}']")
    return [c.strip() for c in row.locator("td.num").all_inner_texts()]


def test_log_fills_the_workload_and_a_sweep_marks_its_row_measured(page, live_server, workloads):
    from catalog.models import Accelerator

    credentials, logged, tested = workloads
    base = live_server.url
    sign_in(page, base, *credentials)

    # A gateway log: upload, see the figures and charts, fill the workload.
    page.goto(f"{base}/plans/{logged.plan_id}/workloads/{logged.pk}/")
    page.get_by_test_id("traffic-logs-link").click()
    page.set_input_files("#id_file", str(FIXTURES / "gateway_log.jsonl"))
    page.select_option("#id_mapping", "preset:openai_gateway")
    page.click("button:has-text('Upload and read')")
    page.wait_for_url(re.compile(r"/traffic/\d+/$"))
    assert page.get_by_test_id("input-lengths").inner_text() == "600 / 1,050"
    page.wait_for_selector("[data-plotly-figure=traffic-daily][data-rendered=true]")
    page.wait_for_selector("[data-plotly-figure=traffic-input][data-rendered=true]")
    page.click("button:has-text('Fill the workload')")
    page.wait_for_url(re.compile(rf"/workloads/{logged.pk}/$"))
    assert page.input_value("#id_input_tokens_mean") == "600"
    assert page.input_value("#id_peak_concurrency") == "6"
    assert "Traffic from gateway_log.jsonl" in page.locator("body").inner_text()

    # A vLLM sweep of one candidate: the row turns measured and its replicas change.
    sizing_url = f"{base}/plans/{tested.plan_id}/workloads/{tested.pk}/?tp=all"
    page.goto(sizing_url)
    modelled = cells(page, KEY)
    page.get_by_test_id("load-tests-link").click()
    page.set_input_files("#id_files", [str(p) for p in sorted(FIXTURES.glob("vllm-*.json"))])
    page.select_option("#id_accelerator", str(Accelerator.objects.get(slug="h100-sxm").pk))
    page.select_option("#id_precision", "fp8")
    page.select_option("#id_tensor_parallel", "1")
    page.click("button:has-text('Attach')")
    page.wait_for_url(re.compile(r"/measured/sweeps/\d+/$"))
    assert page.get_by_test_id("measured-replicas").inner_text() == "12"
    page.wait_for_selector("[data-plotly-figure=measured-figure][data-rendered=true]")
    assert page.locator("[data-testid=model-error] tbody tr").count() == 3

    page.goto(sizing_url)
    row = page.locator(f"[data-testid=candidates] tr[data-key='{KEY}']")
    assert row.get_by_test_id("measured-badge").inner_text() == "measured"
    measured = cells(page, KEY)
    # TP, batch, TTFT, TPOT, tokens/s, replicas, accelerators, servers, ...
    assert measured[1] == "20" and measured[5] == "12"  # batches are whole
    assert modelled[5] != measured[5]
