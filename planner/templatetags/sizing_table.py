"""The sizing table's rows, ``{% candidate_rows %}``: the one place their markup is written.

The table has up to a hundred rows of a dozen cells and is rendered again on every htmx
autosave of the workload form; written as template tags, each row cost Django's template
engine about a hundred node renders and variable lookups, a third of the recompute's CPU.
Here each row is one f-string: the same cells, in the same order, with the same text. Each
figure is formatted by the same filter function the templates use (``fixed``, ``grouped``,
``quantity``, ``from_usd``, ``stack_name``) and every value is escaped as the template's
autoescape does (``conditional_escape``), so the page reads exactly as before.
"""

import html
from urllib.parse import quote

from django import template
from django.conf import settings
from django.template.loader import get_template
from django.utils.formats import localize
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from planner.measured.templatetags.measured import measured_badge
from planner.templatetags.planner_labels import stack_name
from planner.templatetags.planner_numbers import fixed, grouped, quantity
from planner.templatetags.planner_units import from_usd

register = template.Library()

# The text of an empty table (no candidate shown).
NO_ROWS = (
    '\n    <tr><td colspan="13" class="empty">No configuration in the catalog meets these '
    "targets. Show infeasible ones to see why, relax the targets, or try another precision."
    "</td></tr>\n    "
)
NO_PRICE = '<span class="muted" title="no cloud price in the catalog">—</span>'
CLOUD_ONLY = (
    ' <span class="badge" title="Offered only as a cloud service: nothing to buy or rack">'
    "cloud only</span>"
)
UNCALIBRATED = (
    ' <span class="badge" title="No reference run has this model\'s architecture: the band is '
    'the 90th-percentile held-out error">uncalibrated for this architecture</span>'
)
BADGE_TEMPLATE = "measured/_badge.html"  # measured_badge's inclusion template
COMPARE_ONLY = (
    '<span class="muted" title="Set the workload\'s serving stack to choose it">compare only</span>'
)


def _text(value) -> str:
    """``{{ value }}``: localised (numbers) and escaped, as a template variable is shown.

    The two common cases without Django's lazy wrappers: a plain string (``escape`` is
    ``html.escape``) and a whole number, which ``localize`` writes as ``str`` unless the
    site groups thousands."""
    kind = type(value)
    if kind is str:
        return html.escape(value)
    if kind is int and not settings.USE_THOUSAND_SEPARATOR:
        return str(value)
    return conditional_escape(localize(value))


def _or_dash(value) -> str:
    """``{{ value|default:"—" }}``."""
    return _text(value) if value else "—"


def _badge(workload, key: str, c, table: dict) -> str:
    """``{% measured_badge workload key c %}``; the badge of no measurement (the template's
    text without one) is rendered once per table."""
    badge = measured_badge(workload, key, c)
    return get_template(BADGE_TEMPLATE).render(badge) if badge else table["no_badge"]


def _name_cell(key: str, c, name: str, table: dict) -> str:
    url = f"{table['detail_url_prefix']}{_text(quote(key, safe='/'))}/"
    cell = (
        f'<a href="{url}" hx-get="{url}" hx-target="#detail" hx-swap="outerHTML" '
        f'title="{_text(c.accelerator_name)}: why (memory, bottleneck, curve)">{_text(name)}</a>'
    )
    if c.disaggregated:
        pools = (
            f"{_text(c.prefill_replicas)}P:{_text(c.decode_replicas)}D"
            if c.prefill_replicas is not None
            else "disaggregated"
        )
        cell += (
            f' <span class="badge" data-testid="disaggregated" title="{_text(c.label)}: separate'
            f" prefill and decode replicas; TTFT includes the {_text(fixed(c.kv_transfer_ms, 1))}"
            f' ms KV transfer over {_text(c.kv_transfer_path)}">{pools}</span>'
        )
    if key == table["best_key"]:
        cell += ' <span class="badge badge-succeeded">cheapest</span>'
    if key == table["chosen_key"]:
        cell += ' <span class="badge">chosen</span>'
    if c.accelerator_slug in table["cloud_only"]:
        cell += CLOUD_ONLY
    return f"{cell} {_badge(table['workload'], key, c, table)}"


def _layout_cells(c, stacks: bool) -> str:
    stack = ""
    if stacks:
        compared = ' <span class="muted">(comparison)</span>' if c.compared else ""
        stack = (
            f'<td data-testid="row-stack">{_text(stack_name(c.serving_stack))}, '
            f"{_text(c.kv_cache_dtype.upper())} KV{compared}</td>"
        )
    if c.disaggregated:
        tp = f"{_text(c.prefill_tensor_parallel)}/{_text(c.tensor_parallel)}"
    else:
        tp = _text(c.tensor_parallel)
        if c.parallel_label:
            tp += f' <span class="muted" data-testid="layout">{_text(c.parallel_label)}</span>'
    return f'{stack}<td>{_text(c.precision.upper())}</td><td class="num">{tp}</td>'


def _choose_cell(key: str, c, table: dict) -> str:
    if c.compared:
        return COMPARE_ONLY
    if table["can_edit"] and key != table["chosen_key"]:
        return (
            f'<button type="submit" class="small" form="choose-form" name="candidate" '
            f'value="{_text(key)}">Choose</button>'
        )
    if table["can_edit"] and table["rechoose"]:
        return (
            f'<button type="submit" class="small" form="choose-form" name="candidate" '
            f'value="{_text(key)}" data-testid="rechoose" title="Store this row\'s fleet, '
            f'planned for the current inputs">Re-choose</button>'
        )
    return ""


def _figure_cells(key: str, c, table: dict) -> str:
    if not c.feasible:
        return f'\n      <td colspan="10" class="reason">{_text(c.infeasible_reason)}</td>\n      '
    if c.usd_per_million_output_tokens is not None:
        cost = _text(fixed(from_usd(c.usd_per_million_output_tokens, table["usd_shown"]), 2))
    else:
        cost = NO_PRICE
    uncalibrated = UNCALIBRATED if c.calibrated_architecture is False else ""
    return (
        f'\n      <td class="num">{_text(quantity(c.batch_per_replica, "#"))}</td>'
        f'\n      <td class="num">{_text(grouped(c.ttft_ms, 0))}</td>'
        f'\n      <td class="num">{_text(fixed(c.tpot_ms, 1))}</td>'
        f'\n      <td class="num">{_text(grouped(c.output_tokens_per_s_per_replica, 0))}</td>'
        f'\n      <td class="num">{_or_dash(c.replicas)}</td>'
        f'\n      <td class="num">{_or_dash(c.accelerators)}</td>'
        f'\n      <td class="num">{_or_dash(c.servers)}</td>'
        f'\n      <td class="num">{cost}</td>'
        f'\n      <td class="num" title="{_text(c.provenance)}">'
        f"±{_text(fixed(c.expected_error_pct, 0))} %{uncalibrated}</td>"
        f"\n      <td>{_choose_cell(key, c, table)}</td>\n      "
    )


def _row(key: str, c, name: str, table: dict) -> str:
    classes = "" if c.feasible else "infeasible"
    if key == table["chosen_key"]:
        classes += " chosen"
    if key == table["selected_key"]:
        classes += " selected"
    return (
        f'\n    <tr class="{classes}" data-key="{_text(key)}">'
        f"\n      <td>{_name_cell(key, c, name, table)}</td>"
        f"\n      {_layout_cells(c, bool(table['stacks']))}"
        f"\n      {_figure_cells(key, c, table)}\n    </tr>\n    "
    )


@register.simple_tag(takes_context=True)
def candidate_rows(context) -> SafeString:
    """The ``<tr>`` of each ``(key, candidate, name)`` in ``candidates``, or the empty table's
    row. Reads from the page's context: ``candidates``, ``stacks``, ``best_key``,
    ``chosen_key``, ``selected_key``, ``cloud_only``, ``workload``, ``can_edit``,
    ``rechoose``, ``usd_shown`` and ``detail_url_prefix`` (see
    ``planner.views.workloads._sizing_context``)."""
    names = ("stacks", "best_key", "chosen_key", "selected_key", "cloud_only", "workload",
             "can_edit", "rechoose", "usd_shown", "detail_url_prefix")  # fmt: skip
    table = {name: context.get(name) for name in names}
    table["cloud_only"] = table["cloud_only"] or ()
    table["detail_url_prefix"] = _text(table["detail_url_prefix"] or "")
    table["no_badge"] = get_template(BADGE_TEMPLATE).render({})
    rows = [_row(key, c, name, table) for key, c, name in context.get("candidates") or ()]
    return mark_safe("".join(rows) if rows else NO_ROWS)  # noqa: S308  (escaped above)
