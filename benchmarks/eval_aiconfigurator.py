"""Compare NVIDIA's aiconfigurator-core with the planner's own estimates on the shared runs.

Not part of the app: nothing imports this file. It needs ``aiconfigurator-core`` (Apache-2.0,
PyPI), now a project dependency (the sizing page's second opinion, planner/peer/), so the
project's venv can run every stage; a separate venv still works::

    python3 -m venv /tmp/aicvenv
    /tmp/aicvenv/bin/pip install aiconfigurator-core==0.12.0

Run from the repository root (three stages exchange JSON files in ``--work``)::

    .venv/bin/python benchmarks/eval_aiconfigurator.py planner   # planner side (project venv)
    /tmp/aicvenv/bin/python benchmarks/eval_aiconfigurator.py aic  # aiconfigurator side
    .venv/bin/python benchmarks/eval_aiconfigurator.py report    # the comparison table

The planner side goes through the path ``manage.py calibrate`` scores with: the reference runs
of ``catalog/data/benchmarks_public.csv`` prepared by ``planner.engine.calibration``, scored
in-sample with the shipped calibration, and (time split) refitted on the runs published before
``DEFAULT_TIME_CUTOFF`` to predict the later ones. The aiconfigurator side reads those runs'
inputs (accelerator, count, model, precision, scenario, lengths, limits) and asks its
aggregated (continuous-batching) sweep for the best output tokens/s, under the run's TTFT/TPOT
limits where it has them (aiconfigurator compares them with its mean latencies), and its TTFT
and TPOT at the concurrency the run measured. Nothing is downloaded: every model is read from
a local folder (the configs aiconfigurator packages; Llama 2 70B, which it lacks, from
``catalog/data/models.csv``) and its Hugging Face fetchers are replaced by one that raises
(it would otherwise try to fetch Mixtral's config, which it packages but does not list).
The planner stage takes a few minutes (one refit), the aiconfigurator stage about two.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "catalog" / "data"
DEFAULT_WORK = Path(tempfile.gettempdir()) / "eval_aiconfigurator"

# Catalog accelerator slug -> aiconfigurator system: the app's adapter's table (plain Python,
# importable from the aiconfigurator venv too).
sys.path.insert(0, str(ROOT))
from planner.peer.aiconfigurator import SYSTEMS as AIC_SYSTEMS  # noqa: E402

# Catalog model slug -> config file aiconfigurator ships in ``aiconfigurator_core/model_configs``
# (None: written from models.csv). Each is copied into a local folder so that aiconfigurator
# reads it as a local checkpoint and never reaches for Hugging Face.
AIC_MODELS = {
    "llama-3.1-8b": "meta-llama--Meta-Llama-3.1-8B_config.json",
    "llama-3.1-70b": "meta-llama--Meta-Llama-3.1-70B_config.json",
    "llama-3.1-405b": "meta-llama--Meta-Llama-3.1-405B_config.json",
    "mixtral-8x7b": "mistralai--Mixtral-8x7B-v0.1_config.json",
    "mixtral-8x22b": "mistralai--Mixtral-8x22B-v0.1_config.json",
    "llama-2-70b": None,
}
# Precision the planner runs a reference run at -> (gemm, moe, kv cache, fmha) quant modes.
AIC_QUANT = {
    "bf16": ("bfloat16", "bfloat16", "bfloat16", "bfloat16"),
    "fp8": ("fp8", "fp8", "fp8", "fp8"),
    "fp4": ("nvfp4", "nvfp4", "fp8", "fp8"),
}
FP8_SYSTEMS = {"h100_sxm", "h200_sxm", "b200_sxm", "b300_sxm", "gb200", "l40s"}
FP4_SYSTEMS = {"b200_sxm", "b300_sxm", "gb200", "rtx_pro_6000_server"}
THROUGHPUT_SCENARIOS = {"offline", "max_throughput"}
LIMIT_SCENARIOS = {"server", "interactive"}
# aiconfigurator's agg sweep tries batches up to this (its own list stops at 1024).
MAX_BATCH = 1024


# --- planner side (project venv) -------------------------------------------------------------


def planner_stage(work: Path, workers: int) -> None:
    """Score every reference run with the planner: in-sample, held out by time (fitted on the
    runs before the cut-off) and held out by family (each family fitted without its runs),
    the folds ``calibrate`` validates with."""
    from concurrent.futures import ProcessPoolExecutor

    sys.path.insert(0, str(ROOT))
    from planner.engine import calibration as cal

    shipped = cal.load_calibration()
    cases, accelerators, _ = cal._reference_cases(DATA, shipped)
    rows, latency = cal._scored(cases, shipped)
    before, after = cal.time_split(cases, cal.DEFAULT_TIME_CUTOFF, lambda c: c.run.published_on)
    family_folds = cal.leave_one_out(cases, lambda c: c.group.split("/")[0])
    folds = [(before, after)] + [(train, held) for _, train, held in family_folds]
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        jobs = [pool.submit(cal._refit_rows, train, held, shipped) for train, held in folds]
        (held_rows, held_latency), *family_results = [job.result() for job in jobs]
    held = {r.ref_id: r for r in held_rows}
    held_lat = {r.ref_id: r for r in held_latency}
    family_held = {r.ref_id: r for fold_rows, _ in family_results for r in fold_rows}
    family_lat = {r.ref_id: r for _, fold_lat in family_results for r in fold_lat}
    in_lat = {r.ref_id: r for r in latency}
    after_ids = {c.run.ref_id for c in after}
    out = []
    for case, row in zip(cases, rows, strict=True):
        run = case.run
        lat = in_lat.get(run.ref_id)
        held_row, held_l = held.get(run.ref_id), held_lat.get(run.ref_id)
        family_row, family_l = family_held.get(run.ref_id), family_lat.get(run.ref_id)
        out.append(
            {
                "ref_id": run.ref_id,
                "accelerator_slug": run.accelerator_slug,
                "family": accelerators[run.accelerator_slug].family,
                "accelerators": run.accelerators,
                "model_slug": run.model_slug,
                "precision": run.precision,
                "scenario": run.scenario,
                "source_round": run.source_round,
                "serving_stack": run.serving_stack,
                "after_cutoff": run.ref_id in after_ids,
                "input_tokens": run.input_tokens,
                "output_tokens": run.output_tokens,
                "tensor_parallel": run.tensor_parallel,
                "ttft_p99_limit_ms": run.ttft_p99_limit_ms,
                "tpot_p99_limit_ms": run.tpot_p99_limit_ms,
                "measured_tokens_per_s": run.output_tokens_per_s,
                "planner_tokens_per_s": row.predicted_tokens_per_s,
                "planner_tp": row.tensor_parallel,
                "planner_heldout_tokens_per_s": (
                    held_row.predicted_tokens_per_s if held_row else None
                ),
                "planner_family_heldout_tokens_per_s": (
                    family_row.predicted_tokens_per_s if family_row else None
                ),
                "latency": None
                if lat is None
                else {
                    "tp": lat.tensor_parallel,
                    "concurrency": lat.concurrency,
                    "measured_tpot_ms": lat.measured_tpot_ms,
                    "measured_ttft_ms": lat.measured_ttft_ms,
                    "planner_tpot_ms": lat.predicted_tpot_ms,
                    "planner_ttft_ms": lat.predicted_ttft_ms,
                    "planner_heldout_tpot_ms": held_l.predicted_tpot_ms if held_l else None,
                    "planner_heldout_ttft_ms": held_l.predicted_ttft_ms if held_l else None,
                    "planner_family_heldout_tpot_ms": (
                        family_l.predicted_tpot_ms if family_l else None
                    ),
                    "planner_family_heldout_ttft_ms": (
                        family_l.predicted_ttft_ms if family_l else None
                    ),
                },
            }
        )
    work.mkdir(parents=True, exist_ok=True)
    (work / "planner.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"{len(out)} runs scored by the planner ({len(after_ids)} after the cut-off)")


# --- aiconfigurator side (its own venv) ------------------------------------------------------


def _packaged_config_dir(work: Path, slug: str, filename: str) -> str:
    """A local checkpoint folder holding the config aiconfigurator ships for ``slug``."""
    import aiconfigurator_core

    source = Path(aiconfigurator_core.__file__).parent / "model_configs" / filename
    folder = work / "configs" / slug
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return str(folder)


def _no_download(*args, **kwargs):
    raise RuntimeError("eval_aiconfigurator: a Hugging Face download was attempted (offline run)")


def _llama2_config_dir(work: Path) -> str:
    """A Hugging Face style config.json for Llama 2 70B from the catalog's models.csv (the
    architecture fields copied from its config.json), so nothing is fetched."""
    with open(DATA / "models.csv", newline="", encoding="utf-8") as handle:
        spec = next(r for r in csv.DictReader(handle) if r["slug"] == "llama-2-70b")
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": int(spec["hidden_size"]),
        "intermediate_size": int(spec["intermediate_size"]),
        "num_hidden_layers": int(spec["num_hidden_layers"]),
        "num_attention_heads": int(spec["num_attention_heads"]),
        "num_key_value_heads": int(spec["num_key_value_heads"]),
        "head_dim": int(float(spec["head_dim"])),
        "vocab_size": int(spec["vocab_size"]),
        "max_position_embeddings": int(spec["max_position_embeddings"]),
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "float16",
    }
    folder = work / "configs" / "llama-2-70b"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    return str(folder)


def coverage(run: dict) -> str | None:
    """Why aiconfigurator cannot estimate a run, or None when it covers it."""
    system = AIC_SYSTEMS.get(run["accelerator_slug"])
    if system is None:
        return f"no measured data for {run['accelerator_slug']}"
    if run["model_slug"] not in AIC_MODELS:
        return f"no model config for {run['model_slug']}"
    precision = run["precision"]
    if precision not in AIC_QUANT:
        return f"precision {precision} not mapped"
    if precision == "fp8" and system not in FP8_SYSTEMS:
        return f"no FP8 kernels on {system}"
    if precision == "fp4" and system not in FP4_SYSTEMS:
        return f"no FP4 kernels on {system}"
    if run["scenario"] not in THROUGHPUT_SCENARIOS | LIMIT_SCENARIOS:
        return f"scenario {run['scenario']}"
    return None


class AicEstimator:
    """aiconfigurator-core's agg sweep for one reference run's inputs (results cached)."""

    def __init__(self, work: Path) -> None:
        from aiconfigurator_core.sdk import common, config, utils
        from aiconfigurator_core.sdk.backends.factory import get_backend
        from aiconfigurator_core.sdk.models import get_model
        from aiconfigurator_core.sdk.perf_database import get_database, get_version_slots

        self.common, self.config = common, config
        self.get_backend, self.get_model = get_backend, get_model
        self.get_database, self.get_version_slots = get_database, get_version_slots
        # Every model is read from a local folder; any attempt to fetch a config fails loudly.
        utils._download_hf_config = _no_download
        utils._download_hf_json = _no_download
        self.model_paths = {
            slug: _packaged_config_dir(work, slug, name) if name else _llama2_config_dir(work)
            for slug, name in AIC_MODELS.items()
        }
        self._databases: dict = {}
        self._models: dict = {}
        self._results: dict = {}

    def version(self, system: str, backend: str) -> str:
        slots = self.get_version_slots(system, backend) or {}
        return slots["current"]

    def database(self, system: str, backend: str):
        key = (system, backend)
        if key not in self._databases:
            self._databases[key] = self.get_database(system, backend, self.version(system, backend))
        return self._databases[key]

    def model(self, slug: str, precision: str, tp: int, backend: str, fmha: str):
        key = (slug, precision, tp, backend, fmha)
        if key not in self._models:
            gemm, moe, kv, _ = AIC_QUANT[precision]
            c = self.common
            model_config = self.config.ModelConfig(
                tp_size=tp,
                moe_tp_size=tp,
                moe_ep_size=1,
                gemm_quant_mode=c.GEMMQuantMode[gemm],
                moe_quant_mode=c.MoEQuantMode[moe],
                kvcache_quant_mode=c.KVCacheQuantMode[kv],
                fmha_quant_mode=c.FMHAQuantMode[fmha],
            )
            self._models[key] = self.get_model(self.model_paths[slug], model_config, backend)
        return self._models[key]

    @staticmethod
    def backend_name(run: dict) -> str:
        # The planner's stack of the run: TensorRT-LLM submissions and tables, vLLM otherwise.
        return "trtllm" if run["serving_stack"] == "trtllm" else "vllm"

    def tp_degrees(self, run: dict) -> list[int]:
        if run["tensor_parallel"]:
            return [int(run["tensor_parallel"])]
        return [
            tp for tp in (1, 2, 4, 8) if tp <= run["accelerators"] and run["accelerators"] % tp == 0
        ]

    def fmha_modes(self, run: dict) -> list[str]:
        """FP8 context attention where the system has its table, else BF16 (L40S lacks it)."""
        primary = AIC_QUANT[run["precision"]][3]
        return [primary] if primary == "bfloat16" else [primary, "bfloat16"]

    def with_fmha(self, run: dict, call):
        """``call(fmha)`` with the first attention precision aiconfigurator has data for."""
        modes = self.fmha_modes(run)
        for i, fmha in enumerate(modes):
            try:
                return call(fmha)
            except Exception as exc:
                if type(exc).__name__ != "PerfDataNotAvailableError" or i == len(modes) - 1:
                    raise
        return None

    def best(self, run: dict, tp: int, fmha: str) -> dict | None:
        """Best agg point of one replica at ``tp`` (None when nothing fits or meets limits)."""
        system, backend = AIC_SYSTEMS[run["accelerator_slug"]], self.backend_name(run)
        limited = run["scenario"] in LIMIT_SCENARIOS
        ttft = run["ttft_p99_limit_ms"] if limited else 1e12
        tpot = run["tpot_p99_limit_ms"] if limited else 1e12
        isl, osl = round(run["input_tokens"]), max(2, round(run["output_tokens"]))
        key = (system, backend, run["model_slug"], run["precision"], tp, fmha, isl, osl, ttft, tpot)
        if key not in self._results:
            db = self.database(system, backend)
            model = self.model(run["model_slug"], run["precision"], tp, backend, fmha)
            runtime = self.config.RuntimeConfig(
                batch_size=1, isl=isl, osl=osl, ttft=ttft, tpot=tpot
            )
            summary = self.get_backend(backend).find_best_agg_result_under_constraints(
                model, db, runtime, max_batch_size=MAX_BATCH, top_k=1
            )
            df = summary.get_summary_df()
            self._results[key] = (
                None
                if df is None or df.empty
                else {k: float(df.iloc[0][k]) for k in ("tokens/s", "ttft", "tpot", "bs")}
            )
        return self._results[key]

    def throughput(self, run: dict) -> tuple[float | None, int | None]:
        """System output tokens/s at the best TP degree, as a submitter would pick it."""
        best: tuple[float | None, int | None] = (None, None)
        for tp in self.tp_degrees(run):
            point = self.with_fmha(run, lambda fmha, tp=tp: self.best(run, tp, fmha))
            if point is None:
                continue
            total = point["tokens/s"] * (run["accelerators"] // tp)
            if best[0] is None or total > best[0]:
                best = (total, tp)
        return best

    def latency(self, run: dict) -> tuple[float, float] | None:
        """(TPOT ms, TTFT ms) of one replica at the concurrency the run measured (the
        planner's TP degree and Little's-law concurrency B), in aiconfigurator's balanced agg
        step: each mixed step admits the prompts that arrive per step in steady state,
        ceil(B / output) of them (its balance score 1), the rest of the batch decoding."""
        return self.with_fmha(run, lambda fmha: self._latency(run, fmha))

    def _latency(self, run: dict, fmha: str) -> tuple[float, float] | None:
        lat = run["latency"]
        system, backend = AIC_SYSTEMS[run["accelerator_slug"]], self.backend_name(run)
        batch = max(1, round(lat["concurrency"]))
        isl, osl = round(run["input_tokens"]), max(2, round(run["output_tokens"]))
        db = self.database(system, backend)
        model = self.model(run["model_slug"], run["precision"], lat["tp"], backend, fmha)
        runtime = self.config.RuntimeConfig(batch_size=batch, isl=isl, osl=osl)
        ctx_tokens = isl * max(1, -(-batch // osl))  # ceil(batch / osl) in integers
        summary = self.get_backend(backend).run_agg(model, db, runtime, ctx_tokens=ctx_tokens)
        if summary.check_oom() or summary.check_kv_cache_oom():
            return None
        result = summary.get_result_dict()
        return (float(result["tpot"]), float(result["ttft"])) if result else None


def aic_stage(work: Path) -> None:
    """aiconfigurator's estimate of every covered run (reads planner.json, writes aic.json)."""
    import logging
    import time
    from importlib.metadata import version

    logging.disable(logging.WARNING)
    runs = json.loads((work / "planner.json").read_text(encoding="utf-8"))
    estimator = AicEstimator(work)
    out = []
    started = time.monotonic()
    for i, run in enumerate(runs, 1):
        reason = coverage(run)
        entry: dict = {"ref_id": run["ref_id"], "not_covered": reason}
        if reason is None:
            try:
                entry["aic_tokens_per_s"], entry["aic_tp"] = estimator.throughput(run)
                if run["latency"]:
                    lat = estimator.latency(run)
                    entry["aic_tpot_ms"], entry["aic_ttft_ms"] = lat if lat else (None, None)
            except Exception as exc:  # noqa: BLE001 - a run aiconfigurator rejects is reported
                entry["not_covered"] = f"aiconfigurator error: {type(exc).__name__}: {exc}"[:200]
        out.append(entry)
        print(
            f"[{i}/{len(runs)} {time.monotonic() - started:5.0f}s] {run['ref_id'][:70]}", flush=True
        )
    meta = {"aiconfigurator_core": version("aiconfigurator-core"), "runs": out}
    (work / "aic.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")


# --- report ---------------------------------------------------------------------------------


def _err(predicted: float | None, measured: float) -> float | None:
    if predicted is None or not predicted or not measured:
        return None
    return abs(predicted - measured) / measured * 100.0


def _stats(errors: list[float], count: bool = False) -> str:
    """``median / p90`` of absolute % errors (nearest-rank p90), with ``n:`` when asked."""
    if not errors:
        return "-"
    errors = sorted(errors)
    p90 = errors[min(len(errors) - 1, -(-9 * len(errors) // 10) - 1)]  # rank ceil(0.9 n)
    text = f"{statistics.median(errors):5.1f} /{p90:6.1f}"
    return f"{len(errors):>3}: {text}" if count else text


def report_stage(work: Path) -> None:
    """Print covered runs, median / p90 absolute % error of each tool by metric, family and
    time split."""
    runs = json.loads((work / "planner.json").read_text(encoding="utf-8"))
    aic = json.loads((work / "aic.json").read_text(encoding="utf-8"))
    by_id = {r["ref_id"]: r for r in aic["runs"]}
    # One line per (metric, run): (metric, run, planner, planner time-held-out, aic, planner
    # family-held-out) absolute % errors.
    items = []
    for run in runs:
        a = by_id[run["ref_id"]]
        if a["not_covered"]:
            continue
        metric = "max throughput" if run["scenario"] in THROUGHPUT_SCENARIOS else "under p99 limits"
        measured = run["measured_tokens_per_s"]
        items.append(
            (
                metric,
                run,
                _err(run["planner_tokens_per_s"], measured),
                _err(run["planner_heldout_tokens_per_s"], measured),
                _err(a.get("aic_tokens_per_s"), measured),
                _err(run.get("planner_family_heldout_tokens_per_s"), measured),
            )
        )
        lat = run["latency"]
        if lat:
            for name in ("tpot", "ttft"):
                m = lat[f"measured_{name}_ms"]
                items.append(
                    (
                        f"latency {name.upper()}",
                        run,
                        _err(lat[f"planner_{name}_ms"], m),
                        _err(lat[f"planner_heldout_{name}_ms"], m),
                        _err(a.get(f"aic_{name}_ms"), m),
                        _err(lat.get(f"planner_family_heldout_{name}_ms"), m),
                    )
                )
    not_covered: dict[str, int] = {}
    for entry in aic["runs"]:
        if entry["not_covered"]:
            reason = entry["not_covered"].split(":")[0]
            not_covered[reason] = not_covered.get(reason, 0) + 1

    def groups():
        metrics = ["max throughput", "under p99 limits", "latency TPOT", "latency TTFT"]
        for metric in metrics:
            yield metric, "all", lambda i, m=metric: i[0] == m
        for metric in metrics:
            for family in sorted({i[1]["family"] for i in items}):
                yield (
                    metric,
                    f"family {family}",
                    lambda i, m=metric, f=family: i[0] == m and i[1]["family"] == f,
                )
            for after, label in ((False, "before cut-off"), (True, "after cut-off")):
                yield (
                    metric,
                    label,
                    lambda i, m=metric, a=after: i[0] == m and i[1]["after_cutoff"] == a,
                )

    print(f"aiconfigurator-core {aic['aiconfigurator_core']}; {len(runs)} planner runs, "
          f"{sum(1 for e in aic['runs'] if not e['not_covered'])} covered by aiconfigurator")  # fmt: skip
    for reason, count in sorted(not_covered.items(), key=lambda kv: -kv[1]):
        print(f"  not covered: {count:4d} {reason}")
    print(
        "\nabsolute % error, median / p90, on the runs aiconfigurator covers and both answer;"
        "\nplanner held out = the time split's refit (runs before the cut-off), so it exists"
        "\nfor runs after the cut-off only (count before the colon); family held out = each"
        "\nfamily predicted by a refit without its runs; aiconfigurator is fitted on none"
    )
    print(f"{'metric':<18} {'split':<16} {'runs':>4} {'unans':>5}  {'planner in-sample':>17}"
          f" {'planner time held out':>21} {'family held out':>15} {'aiconfigurator':>15}")  # fmt: skip
    for metric, label, keep in groups():
        chosen = [i for i in items if keep(i)]
        if not chosen:
            continue
        answered = [i for i in chosen if i[4] is not None and i[2] is not None]
        held = [i[3] for i in answered if i[3] is not None]
        family = [i[5] for i in answered if i[5] is not None]
        print(
            f"{metric:<18} {label:<16} {len(answered):>4} {len(chosen) - len(answered):>5}  "
            f"{_stats([i[2] for i in answered]):>17} {_stats(held, count=True):>21} "
            f"{_stats(family):>15} {_stats([i[4] for i in answered]):>15}"
        )
    print("\nafter cut-off, per run (signed % error: planner held out, aiconfigurator)")
    for metric, run, *_ in items:
        if not run["after_cutoff"] or not metric.startswith(("max", "under")):
            continue
        a = by_id[run["ref_id"]]
        measured = run["measured_tokens_per_s"]
        held = run["planner_heldout_tokens_per_s"]
        aic_value = a.get("aic_tokens_per_s")
        signed = [
            f"{(v - measured) / measured * 100:+7.1f}" if v else f"{'-':>7}"
            for v in (held, aic_value)
        ]
        print(f"  {run['ref_id'][:64]:<64} {run['accelerator_slug']:<8} {' '.join(signed)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stage", choices=("planner", "aic", "report"))
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="exchange folder")
    parser.add_argument("--workers", type=int, default=2, help="planner refit processes")
    args = parser.parse_args()
    if args.stage == "planner":
        planner_stage(args.work, args.workers)
    else:
        {"aic": aic_stage, "report": report_stage}[args.stage](args.work)


if __name__ == "__main__":
    main()
