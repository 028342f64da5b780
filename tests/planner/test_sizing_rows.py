"""The sizing table's rows (``{% candidate_rows %}``): each figure formatted by the page's
filters, every text escaped as the template's autoescape does, the badges and buttons by row."""

from django.template import Context, Template

from planner.engine.shown import ShownIn
from planner.engine.sweep import SweepCandidate
from planner.models import Workload

ROWS = Template("{% load sizing_table %}{% candidate_rows %}")

FEASIBLE = SweepCandidate(
    "h100-sxm", 'H100 <SXM> "80 GB"', "fp8", 2, 8, True, None,
    batch_per_replica=61, output_tokens_per_s_per_replica=12345.5, ttft_ms=1234.5,
    tpot_ms=12.25, replicas=3, accelerators=6, servers=1, usd_per_million_output_tokens=1.005,
    expected_error_pct=14.5, provenance="calibrated <vLLM> & co", calibrated_architecture=False,
)  # fmt: skip
INFEASIBLE = SweepCandidate(
    "mi300x", "MI300X", "fp8", 1, 8, False, "weights need 140 GB > 128 GB & more"
)


def rows(candidates, **context) -> str:
    page = {
        "candidates": [(key, c, c.accelerator_name.split(" (")[0]) for key, c in candidates],
        "workload": Workload(),
        "usd_shown": ShownIn("EUR", 0.9),
        "detail_url_prefix": "/plans/1/workloads/2/candidates/",
        "cloud_only": set(),
        "can_edit": True,
        **context,
    }
    return ROWS.render(Context(page))


def test_a_feasible_row_shows_its_figures_in_the_plan_currency_and_escapes_its_texts():
    html = rows([("h100-sxm|fp8|2", FEASIBLE)], best_key="h100-sxm|fp8|2")

    assert '<tr class="" data-key="h100-sxm|fp8|2">' in html
    assert 'href="/plans/1/workloads/2/candidates/h100-sxm%7Cfp8%7C2/"' in html
    assert "H100 &lt;SXM&gt; &quot;80 GB&quot;</a>" in html
    assert '<span class="badge badge-succeeded">cheapest</span>' in html
    assert "<td>FP8</td>" in html
    cells = [
        "61",  # batch, a whole count
        "1,235",  # TTFT ms, grouped, half up
        "12.3",  # TPOT ms to one decimal, half up as floatformat
        "12,346",  # output tok/s per replica
        "3", "6", "1",  # replicas, accelerators, servers
        "0.90",  # 1.005 USD per M tokens × 0.9 EUR/USD
    ]  # fmt: skip
    for cell in cells:
        assert f'<td class="num">{cell}</td>' in html
    assert 'title="calibrated &lt;vLLM&gt; &amp; co">±15 % <span class="badge"' in html
    assert "uncalibrated for this architecture" in html
    assert 'value="h100-sxm|fp8|2">Choose</button>' in html


def test_an_infeasible_row_gives_its_reason_across_the_figures():
    html = rows([("mi300x|fp8|1", INFEASIBLE)])

    assert '<tr class="infeasible" data-key="mi300x|fp8|1">' in html
    assert '<td colspan="10" class="reason">weights need 140 GB &gt; 128 GB &amp; more</td>' in html
    assert "Choose" not in html


def test_the_chosen_row_is_marked_and_offers_re_choose_only_when_its_fleet_changed():
    chosen = {"chosen_key": "h100-sxm|fp8|2", "selected_key": "h100-sxm|fp8|2"}

    same = rows([("h100-sxm|fp8|2", FEASIBLE)], **chosen, rechoose=False)
    changed = rows([("h100-sxm|fp8|2", FEASIBLE)], **chosen, rechoose=True)
    viewer = rows([("h100-sxm|fp8|2", FEASIBLE)], **chosen, rechoose=True, can_edit=False)

    assert '<tr class=" chosen selected"' in same
    assert '<span class="badge">chosen</span>' in same
    assert "<button" not in same
    assert 'data-testid="rechoose"' in changed
    assert "<button" not in viewer


def test_no_candidate_gives_the_empty_tables_advice():
    html = rows([])

    assert '<td colspan="13" class="empty">No configuration in the catalog meets' in html
    assert "<tr" in html and html.count("<tr") == 1
