"""estimate(): the CLI/API contract, checked against published runs (no database)."""

from pathlib import Path

import pytest

from planner.engine.calibration import load_calibration
from planner.engine.estimate import EstimateError, EstimateRequest, estimate
from planner.engine.specs import load_accelerators_csv, load_models_csv

DATA = Path(__file__).resolve().parents[2] / "catalog" / "data"
MODELS = load_models_csv(DATA / "models.csv")
ACCELERATORS = load_accelerators_csv(DATA / "accelerators.csv")
CAL = load_calibration()
TOLERANCE_PCT = 35.0  # the accuracy target's per-row bound


def run(**kwargs):
    request = EstimateRequest(**kwargs)
    return estimate(request, MODELS[request.model], ACCELERATORS[request.accelerator], CAL)


@pytest.mark.parametrize(
    ("kwargs", "measured"),
    [
        # TensorRT-LLM v0.17 perf-overview: Llama-3.1-8B FP8, 1×H100, ISL/OSL 128/128.
        (
            dict(
                model="llama-3.1-8b",
                accelerator="h100-sxm",
                accelerators=1,
                precision="fp8",
                input_tokens=128,
                output_tokens=128,
                tensor_parallel=1,
            ),
            28836.77,
        ),
        # Same table: Llama-3.1-70B FP8, TP4 on H200, 500/2000.
        (
            dict(
                model="llama-3.1-70b",
                accelerator="h200-sxm",
                accelerators=4,
                precision="fp8",
                input_tokens=500,
                output_tokens=2000,
                tensor_parallel=4,
            ),
            12452.79,
        ),
        # Same table: Mixtral-8x7B FP16 on A100, TP4, 1000/1000.
        (
            dict(
                model="mixtral-8x7b",
                accelerator="a100-80gb-sxm",
                accelerators=4,
                precision="bf16",
                input_tokens=1000,
                output_tokens=1000,
                tensor_parallel=4,
            ),
            7122.84,
        ),
    ],
)
def test_offline_estimates_against_published_runs(kwargs, measured):
    result = run(serving_stack="trtllm", **kwargs)
    error = abs(result.output_tokens_per_s - measured) / measured * 100
    assert error <= TOLERANCE_PCT
    assert result.expected_error_pct < TOLERANCE_PCT
    assert result.provenance.startswith("calibrated on")


def test_hand_checked_memory_fields():
    result = run(
        model="llama-3.1-70b",
        accelerator="h100-sxm",
        accelerators=8,
        precision="bf16",
        input_tokens=1000,
        output_tokens=200,
        tensor_parallel=8,
    )
    # 70.55e9 params × 2 bytes; 2 × 80 × 8 × 128 × 2 bytes per token.
    assert result.weights_gb == pytest.approx(141.1, abs=0.05)
    assert result.kv_cache_bytes_per_token == 327_680
    assert (result.replicas, result.accelerators_used) == (1, 8)


def test_engine_chooses_tp_and_reports_a_percentile_under_target():
    result = run(
        model="llama-3.1-70b",
        accelerator="h100-sxm",
        accelerators=8,
        precision="fp8",
        input_tokens=1000,
        output_tokens=300,
        scenario="server",
        ttft_ms=1000,
        tpot_ms=50,
        percentile=95,
    )
    assert result.tensor_parallel in (1, 2, 4, 8)
    assert result.latency_statistic == "p95"
    assert result.tpot_ms <= 50 + 1e-6 and result.ttft_ms <= 1000 + 1e-6
    assert result.replicas * result.tensor_parallel == 8
    offline = run(
        model="llama-3.1-70b",
        accelerator="h100-sxm",
        accelerators=8,
        precision="fp8",
        input_tokens=1000,
        output_tokens=300,
    )
    assert result.output_tokens_per_s < offline.output_tokens_per_s


def test_request_rate_yields_what_is_offered():
    result = run(
        model="llama-3.1-8b",
        accelerator="h100-sxm",
        accelerators=2,
        precision="fp8",
        input_tokens=500,
        output_tokens=200,
        scenario="server",
        request_rate=10.0,
    )
    assert result.requests_per_s == 10.0
    assert result.output_tokens_per_s == pytest.approx(2000.0)
    assert result.latency_statistic == "mean" and 0 < result.utilisation < 1
    assert not result.saturated and result.queue_growth_requests_per_s == 0.0


def test_a_rate_beyond_capacity_answers_with_the_saturation_point_and_queue_growth():
    common = dict(
        model="llama-3.1-8b",
        accelerator="h100-sxm",
        accelerators=1,
        precision="fp8",
        input_tokens=500,
        output_tokens=200,
    )
    offline = run(**common)
    over = run(**common, scenario="server", request_rate=1e6)
    # The replica runs at its offline maximum; the queue grows by the rest of the offered rate.
    assert over.saturated
    assert over.saturation_requests_per_s == pytest.approx(offline.requests_per_s)
    assert over.requests_per_s == pytest.approx(offline.requests_per_s)
    assert over.queue_growth_requests_per_s == pytest.approx(1e6 - offline.requests_per_s)
    assert over.output_tokens_per_s == pytest.approx(offline.output_tokens_per_s)
    # Its TTFT is that of the requests it admits at a full batch: finite, above the TTFT at
    # half the capacity, and the same whatever the excess (the backlog is the queue growth).
    half = run(**common, scenario="server", request_rate=offline.requests_per_s / 2)
    twice = run(**common, scenario="server", request_rate=2 * offline.requests_per_s)
    assert half.ttft_ms < over.ttft_ms < float("inf")
    assert twice.saturated and twice.ttft_ms == pytest.approx(over.ttft_ms)
    assert twice.tpot_ms == pytest.approx(over.tpot_ms)


def test_closed_loop_concurrency_obeys_littles_law():
    common = dict(
        model="llama-3.1-8b",
        accelerator="h100-sxm",
        accelerators=2,
        precision="fp8",
        input_tokens=1000,
        output_tokens=200,
        tensor_parallel=1,
        scenario="server",
    )
    light = run(**common, concurrency=16)
    # 8 in flight per replica, all admitted: per-user tokens/s is 1000 / TPOT, and each of
    # the 16 requests cycles once per TTFT + 200 × TPOT (Little's law).
    assert light.batch_per_replica == 8 and light.queued_per_replica == 0.0
    assert light.per_user_output_tokens_per_s == pytest.approx(1000.0 / light.tpot_ms)
    cycle_s = (light.ttft_ms + 200 * light.tpot_ms) / 1e3
    assert light.requests_per_s == pytest.approx(16 / cycle_s)
    assert light.output_tokens_per_s == pytest.approx(light.requests_per_s * 200)
    # Far past the KV capacity the extra requests queue: throughput stays at the cap and the
    # wait lands in TTFT, still N = X · (TTFT + out · TPOT).
    heavy = run(**common, concurrency=20_000)
    assert heavy.queued_per_replica == pytest.approx(10_000 - heavy.batch_per_replica)
    cycle_s = (heavy.ttft_ms + 200 * heavy.tpot_ms) / 1e3
    assert heavy.requests_per_s == pytest.approx(20_000 / cycle_s)
    assert heavy.output_tokens_per_s == pytest.approx(
        run(**{**common, "scenario": "offline"}).output_tokens_per_s, rel=1e-6
    )
    assert heavy.tpot_ms > light.tpot_ms and heavy.ttft_ms > light.ttft_ms
    with pytest.raises(EstimateError, match="concurrency fixes the requests in flight"):
        run(**common, concurrency=4, tpot_ms=50.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            dict(
                model="llama-3.1-405b",
                accelerator="l4",
                accelerators=1,
                precision="bf16",
                input_tokens=100,
                output_tokens=100,
            ),
            "does not run on",
        ),
        (
            dict(
                model="llama-2-70b",
                accelerator="h100-sxm",
                accelerators=8,
                precision="fp8",
                input_tokens=4000,
                output_tokens=500,
            ),
            "context",
        ),
        (
            dict(
                model="llama-3.1-70b",
                accelerator="h100-sxm",
                accelerators=6,
                precision="fp8",
                input_tokens=100,
                output_tokens=100,
                tensor_parallel=4,
            ),
            "do not divide",
        ),
        (
            dict(
                model="llama-3.1-70b",
                accelerator="h100-sxm",
                accelerators=8,
                precision="fp8",
                input_tokens=100,
                output_tokens=100,
                scenario="server",
            ),
            "needs a TTFT",
        ),
    ],
)
def test_impossible_inputs_raise_one_clear_error(kwargs, message):
    with pytest.raises(EstimateError, match=message):
        run(**kwargs)


def test_kv_cache_dtype_is_an_input_and_reported_with_per_gpu_bytes():
    common = dict(
        model="llama-3.1-70b",
        accelerator="h100-sxm",
        accelerators=2,
        precision="fp8",
        input_tokens=1000,
        output_tokens=1000,
        tensor_parallel=2,
    )
    auto = run(**common)
    fp8 = run(**common, kv_cache_dtype="fp8")
    # auto = the model's dtype (BF16): 80 layers × 2 × 4 heads per rank × 128 × 2 bytes.
    assert auto.kv_cache_dtype == "bf16" and fp8.kv_cache_dtype == "fp8"
    assert auto.kv_cache_bytes_per_token_per_gpu == 2 * 80 * 4 * 128 * 2 == 163_840
    assert fp8.kv_cache_bytes_per_token_per_gpu == 81_920
    assert auto.kv_replication == 1 and "no replication" in auto.kv_note
    # 31.07 GiB of KV budget per GPU (test_memory); FP8 KV holds about twice the sequences.
    assert auto.kv_cache_gib_per_gpu == pytest.approx(31.07, abs=0.01)
    assert fp8.max_concurrent_sequences in range(
        2 * auto.max_concurrent_sequences - 1, 2 * auto.max_concurrent_sequences + 2
    )
    with pytest.raises(EstimateError, match="kv_cache_dtype must be one of"):
        run(**common, kv_cache_dtype="int2")


def test_tp_replication_of_kv_is_named_as_such():
    # Llama-3.1-8B has 8 KV heads: at TP 8 each rank holds one; MLA stores the latent on every
    # rank: DeepSeek-R1 FP8 at TP 8 keeps 61 × (512 + 64) × 1 byte (fp8 KV) on each GPU.
    r1 = run(
        model="deepseek-r1",
        accelerator="h200-sxm",
        accelerators=8,
        precision="fp8",
        input_tokens=1000,
        output_tokens=1000,
        tensor_parallel=8,
        kv_cache_dtype="fp8",
    )
    assert r1.kv_cache_bytes_per_token_per_gpu == 61 * 576
    assert r1.kv_replication == 8 and "TP replication" in r1.kv_note


def test_gpt_oss_120b_mxfp4_runs_weight_only_on_one_h100():
    # MXFP4 experts (0.53125 bytes per weight) on Hopper, which has no FP4 tensor cores: the
    # matmuls run at the BF16 peak (W4A16). 116.8e9 weights -> 59.4 GiB; the KV budget left is
    # 0.9 × 80 − 59.4 − 8 (MoE activation peak) − 1.15 GiB = 3.5 GiB per GPU.
    result = run(
        model="gpt-oss-120b",
        accelerator="h100-sxm",
        accelerators=1,
        precision="fp4",
        input_tokens=1000,
        output_tokens=1000,
    )
    assert result.tensor_parallel == 1 and result.output_tokens_per_s > 0
    assert result.kv_cache_gib_per_gpu == pytest.approx(3.48, abs=0.02)


@pytest.mark.parametrize(
    ("concurrency", "ttft_ms", "tpot_ms", "tokens_per_s", "tolerance"),
    [
        # NVIDIA NIM benchmark page, Llama-3.3-70B FP8 TP2 on 2 × H100, 5000 in / 500 out
        # (anchors_sizing.md §1.12). Not a reference run of the fit: a held-out check of the
        # step time at batch 1 (bandwidth, all-reduce latency, fixed costs) and at batch 50.
        (1, 407.0, 18.6, 52.0, 0.15),
        (50, None, 59.7, 814.0, 0.15),
    ],
)
def test_nim_anchor_is_met_without_being_fitted(
    concurrency, ttft_ms, tpot_ms, tokens_per_s, tolerance
):
    result = run(
        model="llama-3.3-70b", accelerator="h100-sxm", accelerators=2, precision="fp8",
        input_tokens=5000, output_tokens=500, tensor_parallel=2, scenario="server",
        concurrency=concurrency, kv_cache_dtype="fp8", serving_stack="trtllm",
    )  # fmt: skip
    assert result.tpot_ms == pytest.approx(tpot_ms, rel=tolerance)
    assert result.output_tokens_per_s == pytest.approx(tokens_per_s, rel=tolerance)
    if ttft_ms is not None:
        assert result.ttft_ms == pytest.approx(ttft_ms, rel=tolerance)
