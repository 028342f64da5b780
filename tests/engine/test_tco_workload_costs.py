"""Each workload's own cost per request and per million input and output tokens: the option's
amortised cost split by the workloads' prefill and decode accelerator-seconds.

Hand calculation. One pooled deployment: two 8-GPU servers at 120,000 USD, one at each of two
sites, no network, spares, maintenance, power, space or staff, a 12-month life and horizon,
rate 0. Amortised = depreciation = 2 × 120,000 = 240,000 USD over the 12 months. The demand
(3,000 + 4,000 + 2,000 = 9,000 GPU-h a month, flat) stays under the 16 GPUs × 730 h, so
nothing overflows to cloud.

Per month, accelerator-seconds = requests × seconds per request:

  workload  requests  in/out tokens  prefill s  decode s   prefill    decode     total
  chat     1,000,000    1,000/250       0.01      0.05      10,000     50,000     60,000
  RAG        200,000    8,000/500       0.20      0.30      40,000     60,000    100,000
  batch       50,000    2,000/2,000     0.02      0.78       1,000     39,000     40,000
                                                            51,000    149,000    200,000

Shares 0.3 / 0.5 / 0.2 (by GPU-hours they would be 1/3, 4/9, 2/9):
  chat  72,000 USD ÷ 12,000,000 requests = 0.006 per request
        input  240,000 × 10,000/200,000 = 12,000 ÷ 1.2e10 tokens × 1e6 = 1.00 per M
        output 240,000 × 50,000/200,000 = 60,000 ÷ 3.0e9 × 1e6        = 20.00 per M
  RAG  120,000 ÷ 2,400,000 = 0.05 per request
        input  48,000 ÷ 1.92e10 × 1e6 = 2.50 per M; output 72,000 ÷ 1.2e9 × 1e6 = 60.00
        (the prompt is 40 % of its compute)
  batch 48,000 ÷ 600,000 = 0.08 per request
        input   1,200 ÷ 1.2e9 × 1e6 = 1.00 per M; output 46,800 ÷ 1.2e9 × 1e6 = 39.00
  option: input 61,200 ÷ 3.24e10 × 1e6 = 1.8889 per M; output 178,800 ÷ 5.4e9 × 1e6 = 33.111
Cloud on-demand at 2 USD/GPU-h: 9,000 × 12 × 2 = 216,000 USD, the same shares:
  chat 64,800 ÷ 1.2e7 = 0.0054 per request.
"""

import pytest

from planner.engine import tco as te
from planner.engine.errors import EngineInputError

# name, GPU-h a month, requests, input, output tokens a request, prefill s, decode s
WORKLOADS = (
    ("chat", 3_000.0, 1_000_000.0, 1_000, 250, 0.01, 0.05),
    ("rag", 4_000.0, 200_000.0, 8_000, 500, 0.20, 0.30),
    ("batch", 2_000.0, 50_000.0, 2_000, 2_000, 0.02, 0.78),
)


def _inputs(known: bool = True) -> te.TcoInputs:
    hw = te.OwnedHardware(
        server_count=2, gpus_per_server=8, server_price_usd=120_000.0, server_power_kw=10.0,
        network_usd=0.0, spares_fraction=0.0, maintenance_fraction_per_year=0.0,
        lifetime_months=12,
    )  # fmt: skip
    site = {"kind": "owned", "facility_usd_per_kw_month": 0.0, "pue": 1.0}
    return te.TcoInputs(
        workloads=tuple(
            te.WorkloadDemand(
                name,
                gpu_hours_per_month=gpu_h,
                requests_per_month=requests,
                input_tokens_per_month=requests * tokens_in,
                output_tokens_per_month=requests * tokens_out,
                prefill_accelerator_s_per_request=prefill if known else None,
                decode_accelerator_s_per_request=decode if known else None,
                key=f"w-{name}",
            )
            for name, gpu_h, requests, tokens_in, tokens_out, prefill, decode in WORKLOADS
        ),
        cloud=te.CloudPricing(on_demand_usd_per_gpu_h=2.0),
        hardware=hw,
        sites=(
            te.SiteCost("site-a", "A", power_usd_per_kwh=0.0, servers=1, **site),
            te.SiteCost("site-b", "B", power_usd_per_kwh=0.0, servers=1, **site),
        ),
        horizon_months=12,
        cost_of_capital=0.0,
    )


def test_chat_rag_and_batch_each_get_their_own_cost_per_request():
    owned = te.run_tco(_inputs()).by_key("owned")
    assert float(owned.amortised_monthly_usd.sum()) == pytest.approx(240_000.0)
    chat, rag, batch = owned.workloads
    assert [w.key for w in owned.workloads] == ["w-chat", "w-rag", "w-batch"]
    assert [w.share for w in owned.workloads] == pytest.approx([0.3, 0.5, 0.2])
    assert chat.amortised_usd == pytest.approx(72_000.0)
    assert chat.cost_per_request_usd == pytest.approx(0.006)
    assert rag.cost_per_request_usd == pytest.approx(0.05)
    assert batch.cost_per_request_usd == pytest.approx(0.08)
    assert chat.input_usd_per_million_tokens == pytest.approx(1.0)
    assert chat.output_usd_per_million_tokens == pytest.approx(20.0)
    assert rag.input_usd_per_million_tokens == pytest.approx(2.5)
    assert rag.output_usd_per_million_tokens == pytest.approx(60.0)
    assert batch.input_usd_per_million_tokens == pytest.approx(1.0)
    assert batch.output_usd_per_million_tokens == pytest.approx(39.0)
    # the option's own input and output prices are the same split over all tokens
    assert owned.input_usd_per_million_tokens == pytest.approx(61_200 / 3.24e10 * 1e6)
    assert owned.output_usd_per_million_tokens == pytest.approx(178_800 / 5.4e9 * 1e6)


def test_every_option_splits_its_own_cost_by_the_same_shares():
    cloud = te.run_tco(_inputs()).by_key("cloud_on_demand")
    assert float(cloud.amortised_monthly_usd.sum()) == pytest.approx(216_000.0)
    assert cloud.workloads[0].cost_per_request_usd == pytest.approx(0.0054)
    assert sum(w.amortised_usd for w in cloud.workloads) == pytest.approx(216_000.0)


def test_without_accelerator_seconds_the_split_follows_gpu_hours_and_tokens_are_not_priced():
    owned = te.run_tco(_inputs(known=False)).by_key("owned")
    chat, rag, batch = owned.workloads
    # 3,000 / 9,000 of 240,000 = 80,000 ÷ 1.2e7 requests
    assert chat.cost_per_request_usd == pytest.approx(80_000 / 1.2e7)
    assert rag.cost_per_request_usd == pytest.approx(240_000 * 4 / 9 / 2.4e6)
    assert chat.input_usd_per_million_tokens is None
    assert owned.input_usd_per_million_tokens is None


def test_accelerator_seconds_must_be_non_negative():
    with pytest.raises(EngineInputError, match="prefill_accelerator_s_per_request"):
        te.WorkloadDemand("x", 1.0, prefill_accelerator_s_per_request=-1.0)
