"""The stored shape of a TCO run's results, and how results stored in an older shape are read.

The engine computes in USD; :func:`planner.facility.services.tco_results_serialise` converts
every amount once into the plan's currency and stores it with ``currency`` beside it. Amounts
are therefore named ``…_amount`` (``npv_amount``, ``cost_per_request_amount``,
``input_amount_per_million_tokens``), never ``…_usd``: a EUR plan's NPV is not a USD figure.

Runs stored before that rename carry the same amounts under ``…_usd`` keys (in the plan's
currency too, or in USD when the run has no ``currency`` at all: those ran before amounts were
converted). :func:`upgrade_tco_results` renames them on read, so every reader (the TCO page,
placement, the snapshot, the API) sees one shape; the stored JSON is not rewritten.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AMOUNT_KEYS_BEFORE", "upgrade_tco_results", "upgrade_tco_section"]

# Old key → new key, for every amount of an option, a workload's row, a site's share, a
# tornado bar and the Monte Carlo bands (the same key means the same thing at every level).
AMOUNT_KEYS_BEFORE: dict[str, str] = {
    "lines_usd": "lines_amount",
    "monthly_usd": "monthly_amount",
    "cumulative_usd": "cumulative_amount",
    "terminal_value_usd": "terminal_value_amount",
    "net_cost_usd": "net_cost_amount",
    "npv_usd": "npv_amount",
    "cost_per_million_output_tokens_usd": "cost_per_million_output_tokens_amount",
    "cost_per_request_usd": "cost_per_request_amount",
    "input_usd_per_million_tokens": "input_amount_per_million_tokens",
    "output_usd_per_million_tokens": "output_amount_per_million_tokens",
    "low_value_usd": "low_value_amount",
    "high_value_usd": "high_value_amount",
    "base_value_usd": "base_value_amount",
    "span_usd": "span_amount",
    **{
        f"{side}_{band}_usd": f"{side}_{band}_amount"
        for side in ("owned", "cloud")
        for band in ("p10", "p50", "p90")
    },
}


def _renamed(row: Any) -> Any:
    """``row`` with its old amount keys under their new names (a new key already there wins)."""
    if not isinstance(row, dict) or not any(k in AMOUNT_KEYS_BEFORE for k in row):
        return row
    out: dict[str, Any] = {}
    for key, value in row.items():
        new = AMOUNT_KEYS_BEFORE.get(key)
        if new is None:
            out[key] = value
        elif new not in row:
            out[new] = value
    return out


def upgrade_tco_section(section: dict[str, Any]) -> dict[str, Any]:
    """A dict holding ``options``, ``tornado`` and ``monte_carlo`` (a run's results, or the
    TCO section of a revision snapshot) with every amount under its current name.

    Idempotent: a dict already in the current shape comes back equal to itself.
    """
    out = dict(section)
    if isinstance(out.get("options"), list):
        options = []
        for option in out["options"]:
            option = _renamed(option)
            if isinstance(option, dict):
                option = dict(option)
                for part in ("workloads", "sites"):
                    if isinstance(option.get(part), list):
                        option[part] = [_renamed(row) for row in option[part]]
            options.append(option)
        out["options"] = options
    if isinstance(out.get("tornado"), list):
        out["tornado"] = [_renamed(bar) for bar in out["tornado"]]
    if isinstance(out.get("monte_carlo"), dict):
        out["monte_carlo"] = _renamed(out["monte_carlo"])
    return out


def upgrade_tco_results(results: dict[str, Any] | None) -> dict[str, Any] | None:
    """A run's stored results in the current shape (``None`` and non-dicts as they are).

    Results stored before amounts were converted have no ``currency``: they are USD, and say
    so after the upgrade.
    """
    if not isinstance(results, dict):
        return results
    out = upgrade_tco_section(results)
    if out.get("options") is not None and not out.get("currency"):
        out["currency"] = "USD"
    return out
