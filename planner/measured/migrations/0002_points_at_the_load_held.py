"""Stored points re-read at the load they held, not their setting; LLMPerf's TPOT without
its first token.

Points stored before held loads were read carry the tool's setting as their load (basis
"set"). Where the point has what Little's law needs (completed requests/s and the mean
request time), its load becomes requests/s × mean request time, never above the setting,
and the setting is kept beside it; otherwise it stays as stored. The arithmetic is the one
of ``planner.engine.load_test.held_load``, written out so the migration does not change
when the engine does. LLMPerf points stored before took its inter-token latency (which
includes the first token) as TPOT; with the mean TTFT and output length stored they are
converted as ``planner.engine.load_test.llmperf_tpot_ms`` does.
"""

from django.db import migrations


def _held(point: dict) -> dict:
    if "nominal_concurrency" in point or point.get("concurrency_basis") != "set":
        return point
    setting = point["concurrency"]
    upgraded = {**point, "nominal_concurrency": setting, "notes": []}
    e2e_ms = point.get("e2e_mean_ms")
    if e2e_ms is None or not point.get("requests_per_s"):
        return upgraded
    held = point["requests_per_s"] * e2e_ms / 1000.0
    return {**upgraded, "concurrency": min(held, setting), "concurrency_basis": "littles_law"}


def _llmperf_tpot(point: dict) -> dict:
    n, ttft = point.get("output_tokens_mean"), point.get("ttft_mean_ms")
    if point.get("notes") or n is None or ttft is None or n <= 1:
        return point

    def from_itl(value):
        return None if value is None else max(n * value - ttft, 0.0) / (n - 1)

    e2e = point.get("e2e_mean_ms")
    mean = from_itl(point["tpot_mean_ms"]) if e2e is None else max(e2e - ttft, 0.0) / (n - 1)
    return {
        **point,
        "tpot_mean_ms": mean,
        "tpot_p95_ms": from_itl(point.get("tpot_p95_ms")),
        "tpot_p99_ms": from_itl(point.get("tpot_p99_ms")),
        "notes": ["TPOT from LLMPerf's inter-token latency, which includes the first token "
                  "(converted when stored points were upgraded)"],
    }  # fmt: skip


def forwards(apps, schema_editor):
    LoadTestSweep = apps.get_model("measured", "LoadTestSweep")
    for sweep in LoadTestSweep.objects.all().iterator():
        points = [_held(p) for p in sweep.points]
        if sweep.tool == "llmperf":
            points = [_llmperf_tpot(p) for p in points]
        if points != sweep.points:
            sweep.points = sorted(points, key=lambda p: p["concurrency"])
            sweep.save(update_fields=["points"])


class Migration(migrations.Migration):
    dependencies = [("measured", "0001_load_tests_and_traffic_logs")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
