"""python manage.py estimate: one JSON object, or one clear line on stderr and exit 1."""

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command


def run(*args: str) -> dict:
    out = StringIO()
    call_command("estimate", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


BASE = [
    "--model", "llama-3.1-70b", "--accelerator", "h100-sxm", "--accelerators", "8",
    "--precision", "fp8", "--input-tokens", "2000", "--output-tokens", "400",
]  # fmt: skip


def test_offline_maximum(catalog):
    data = run(*BASE)
    assert data["latency_statistic"] in ("mean", "unloaded", "offline")
    assert data["output_tokens_per_s"] > 0
    assert data["replicas"] * data["tensor_parallel"] == 8


def test_latency_target_caps_throughput_below_offline(catalog):
    offline = run(*BASE)
    bounded = run(*BASE, "--ttft-ms", "500", "--tpot-ms", "30", "--percentile", "99")
    assert bounded["output_tokens_per_s"] < offline["output_tokens_per_s"]
    assert bounded["tpot_ms"] <= 30 + 1e-6
    assert bounded["latency_statistic"] == "p99"


def test_request_rate_yields_that_load(catalog):
    data = run(*BASE, "--request-rate", "4")
    assert data["requests_per_s"] == pytest.approx(4, rel=1e-3)
    assert data["output_tokens_per_s"] == pytest.approx(4 * 400, rel=1e-3)


def test_concurrency_and_kv_cache_dtype(catalog):
    data = run(*BASE, "--concurrency", "64", "--kv-cache-dtype", "fp8")
    assert data["kv_cache_dtype"] == "fp8"
    assert data["per_user_output_tokens_per_s"] == pytest.approx(1000 / data["tpot_ms"], rel=1e-3)
    cycle_s = (data["ttft_ms"] + 400 * data["tpot_ms"]) / 1000
    assert data["requests_per_s"] == pytest.approx(64 / cycle_s, rel=1e-3)


def test_a_rate_beyond_capacity_is_an_answer_not_an_error(catalog):
    data = run(*BASE, "--request-rate", "100000")
    assert data["saturated"] is True
    # The saturation point's TTFT for the requests admitted: a finite figure.
    assert data["ttft_ms"] > 0
    assert data["queue_growth_requests_per_s"] == pytest.approx(
        100000 - data["saturation_requests_per_s"], rel=1e-6
    )
    assert "queue grows" in data["notes"][0]


def test_tensor_parallel_given_is_kept(catalog):
    assert run(*BASE, "--tensor-parallel", "4")["tensor_parallel"] == 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "nope"], "unknown model 'nope'"),
        (["--tensor-parallel", "3"], "tensor_parallel 3 is not valid"),
        (["--accelerators", "1", "--precision", "bf16"], "does not run on"),
    ],
)
def test_impossible_inputs_raise_one_clear_error(catalog, args, message):
    merged = dict(zip(BASE[::2], BASE[1::2], strict=True))
    merged.update(dict(zip(args[::2], args[1::2], strict=True)))
    flat = [item for pair in merged.items() for item in pair]
    with pytest.raises(CommandError, match=message):
        call_command("estimate", *flat, "--json", stdout=StringIO())


def test_exit_code_and_stderr_from_the_command_line(catalog, monkeypatch, capsys):
    """What a shell sees: the argv path manage.py takes (``execute_from_command_line``),
    run in this process; a fresh interpreter running manage.py is the packaged-data test's."""
    from django.core.management import execute_from_command_line

    # The command closes every connection when it ends; the test's transaction keeps its own.
    monkeypatch.setattr("django.core.management.base.connections.close_all", lambda: None)

    execute_from_command_line(["manage.py", "estimate", *BASE, "--json"])
    ok = capsys.readouterr()
    with pytest.raises(SystemExit) as bad_exit:
        execute_from_command_line(
            ["manage.py", "estimate", *BASE[:-2], "--output-tokens", "0", "--json"]
        )
    bad = capsys.readouterr()
    assert json.loads(ok.out)["output_tokens_per_s"] > 0
    assert bad_exit.value.code not in (0, None)
    assert len(bad.err.strip().splitlines()) == 1
    assert "output_tokens" in bad.err


def test_calibrate_report_prints_rows_and_summary():
    out = StringIO()
    call_command("calibrate", "--report-only", stdout=out)
    text = out.getvalue()
    assert "median abs error" in text and "By accelerator:" in text and "By scenario:" in text
    assert "mlperf-v4.0" in text


def test_models_no_server_holds_are_spread_over_servers(catalog):
    for model, precision in (("deepseek-r1", "fp8"), ("llama-3.1-405b", "bf16")):
        data = run(
            "--model", model, "--accelerator", "h100-sxm", "--accelerators", "16",
            "--precision", precision, "--input-tokens", "2000", "--output-tokens", "400",
        )  # fmt: skip
        assert data["servers_per_replica"] == 2 and data["accelerators_used"] == 16
        assert data["parallel_layout"] and data["output_tokens_per_s"] > 0


def test_pipeline_and_expert_parallel_flags(catalog):
    args = ["--model", "deepseek-r1", "--accelerator", "h100-sxm", "--accelerators", "32",
            "--precision", "fp8", "--input-tokens", "2000", "--output-tokens", "400"]  # fmt: skip
    pp = run(*args, "--pp", "2")
    assert pp["pipeline_parallel"] == 2 and pp["parallel_layout"] == "TP8 × PP2 (2 servers)"
    assert pp["replicas"] == 2
    ep = run(*args, "--ep", "16")
    assert ep["expert_parallel"] == 16 and ep["parallel_layout"].startswith("EP16")
    with pytest.raises(CommandError, match="no experts"):
        run(*BASE, "--ep", "8")


def test_serving_stack_and_variable_lengths_flags(catalog):
    vllm = run(*BASE, "--ttft-ms", "2000", "--tpot-ms", "100", "--kv-cache-dtype", "fp8")
    trtllm = run(
        *BASE, "--ttft-ms", "2000", "--tpot-ms", "100", "--kv-cache-dtype", "fp8",
        "--serving-stack", "trtllm",
    )  # fmt: skip
    # TensorRT-LLM budgets the KV cache from the memory left after the weights.
    assert trtllm["max_concurrent_sequences"] != vllm["max_concurrent_sequences"]
    fixed = run(*BASE, "--ttft-ms", "600", "--tpot-ms", "100")
    varied = run(*BASE, "--ttft-ms", "600", "--tpot-ms", "100", "--variable-lengths")
    # A long prompt at the p99 takes longer to prefill: less fits under the same TTFT target.
    assert varied["output_tokens_per_s"] <= fixed["output_tokens_per_s"]


def test_sglang_and_its_version_are_named_in_the_answer(catalog):
    out = StringIO()
    call_command(
        "estimate", *BASE, "--serving-stack", "sglang", "--serving-stack-version", "0.5.4",
        stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "Serving stack                            sglang" in text
    assert "sized for SGLang 0.5.4, BF16 KV cache" in text
    with pytest.raises(CommandError, match="TensorRT-LLM is sized on NVIDIA GPUs only"):
        run(*BASE[:2], "--accelerator", "mi300x", *BASE[4:], "--serving-stack", "trtllm")


def test_estimate_without_a_loaded_catalog_uses_the_packaged_data(tmp_path):
    """A fresh clone: the command answers from catalog/data and says so, instead of failing
    on a missing table."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'empty.sqlite3'}"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "manage.py", "estimate", *BASE, "--json"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["output_tokens_per_s"] > 0
    assert any("packaged reference data" in note for note in data["notes"])
