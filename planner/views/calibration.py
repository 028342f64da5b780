"""The calibration page: every reference run, the estimate, the error, and a chart."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from planner.calibration_report import calibration_report
from planner.charts import calibration_figure
from planner.permissions import member_required


@member_required
def calibration_page(request: HttpRequest) -> HttpResponse:
    report = calibration_report()
    rows = report.rows
    accelerator = request.GET.get("accelerator", "")
    scenario = request.GET.get("scenario", "")
    if accelerator:
        rows = [r for r in rows if r["accelerator_slug"] == accelerator]
    if scenario:
        rows = [r for r in rows if r["scenario"] == scenario]
    context = {
        "report": report,
        "rows": rows,
        "accelerators": sorted({r["accelerator_slug"] for r in report.rows}),
        "scenarios": sorted({r["scenario"] for r in report.rows}),
        "accelerator": accelerator,
        "scenario": scenario,
        "figure_json": calibration_figure(rows),
        "by_accelerator": sorted(report.in_sample.get("by_accelerator", {}).items()),
        "by_scenario": sorted(report.in_sample.get("by_scenario", {}).items()),
        "validation_rows": report.validation_rows(),
        "latency_rows": report.latency_rows(),
    }
    return render(request, "planner/calibration.html", context)
