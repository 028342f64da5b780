"""A synthetic, deterministic plan snapshot for PDF benchmarks, tests and layout checks.

It has the shape of ``planner.sharing.snapshot.plan_snapshot`` with as many BOM lines as asked
(in EUR and USD), a 60-month TCO with four options, bands and a tornado, and a timeline —
so documents can be rendered and measured without a database. All names are fictional.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from planner.sharing import checklist

D = Decimal
EUR_PER_USD = D("0.92")


def _m(amount: Decimal, currency: str = "EUR") -> dict[str, str]:
    return {"amount": str(amount), "currency": currency}


def sample_bom(lines: int) -> dict:
    """``lines`` priced BOM lines and their exact totals (plan currency EUR)."""
    rows = []
    totals = dict.fromkeys(("goods", "freight", "insurance", "brokerage", "duty", "vat"), D(0))
    by_currency: dict[str, Decimal] = {"EUR": D(0), "USD": D(0)}
    recoverable = D(0)
    for i in range(1, lines + 1):
        ccy = "USD" if i % 3 == 0 else "EUR"
        unit = D(150 + (i * 937) % 9000) + D("0.45")
        qty = 1 + i % 7
        goods_original = unit * qty
        goods = goods_original * (EUR_PER_USD if ccy == "USD" else 1)
        freight = (goods * D("0.012")).quantize(D("0.0001"))
        insurance = (goods * D("0.0033")).quantize(D("0.0001"))
        brokerage = D("12.5")
        duty = (goods * D("0.021")).quantize(D("0.0001")) if i % 4 else D(0)
        vat = ((goods + freight + insurance + duty) * D("0.21")).quantize(D("0.0001"))
        net = goods + freight + insurance + brokerage + duty
        rows.append({
            "position": i, "description": f"Sample part {i:02d} ({'server' if i == 1 else 'part'})",
            "category": ("server", "network", "optics", "rack", "storage")[i % 5],
            "quantity": qty, "quantity_ordered": qty, "service": "", "hs_code": "8471.50",
            "reason": "", "supplier": ("Lowlands Distributie B.V.", "Prairie Supply Inc.")[i % 2],
            "supplier_country": ("NL", "US")[i % 2], "origin_country": ("TW", "US", "CN")[i % 3],
            "incoterm": ("DAP", "FCA")[i % 2], "lead_time_days": 14 + (i * 11) % 120,
            "offer_valid_until": "2026-12-31", "status": "ok", "problem": "",
            "unit_price": _m(unit, ccy), "goods_original": _m(goods_original, ccy),
            "goods": _m(goods), "freight": _m(freight), "insurance": _m(insurance),
            "brokerage": _m(brokerage), "duty": _m(duty), "vat": _m(vat),
            "vat_recoverable": True, "landed_net": _m(net), "landed_gross": _m(net + vat),
        })  # fmt: skip
        for key, value in (("goods", goods), ("freight", freight), ("insurance", insurance),
                           ("brokerage", brokerage), ("duty", duty), ("vat", vat)):  # fmt: skip
            totals[key] += value
        by_currency[ccy] += goods_original
        recoverable += vat
    net = sum(D(r["landed_net"]["amount"]) for r in rows)
    return {
        "available": True, "currency": "EUR", "as_of": "2026-08-03", "destination": "NL",
        "complete": True, "problems": [], "lines": rows,
        "shipments": [
            {"key": "Prairie Supply Inc. (FCA)", "supplier": "Prairie Supply Inc.",
             "incoterm": "FCA", "cross_border": True, "complete": True, "error": ""},
        ],
        "totals_by_currency": [{"currency": c, "amount": str(a)} for c, a in by_currency.items()],
        "totals": {**{k: _m(v) for k, v in totals.items()}, "vat_recoverable": _m(recoverable)},
        "total_net": _m(net), "total_gross": _m(net + recoverable),
        "offers_valid_until": "2026-12-31", "spares_mode": "percent",
        "spares_mode_label": "A percentage of each line", "spares_pct": "5.00",
        "shipping_mode": "air",
    }  # fmt: skip


def _tco(months: int) -> dict:
    def ramp(capex: float, monthly: float) -> list[str]:
        return [f"{capex + monthly * m:.2f}" for m in range(1, months + 1)]

    options = []
    for key, label, capex, monthly, per_request in (
        ("cloud_on_demand", "Cloud on-demand", 0, 21000, "0.00034"),
        ("cloud_3yr", "Cloud 3-year commitment", 0, 13800, "0.00020"),
        ("colo_ams", "Amsterdam colocation", 640000, 9100, "0.00031"),
        ("hybrid", "Hybrid (colocation base + cloud bursts)", 420000, 11800, "0.00027"),
    ):  # fmt: skip
        options.append({
            "key": key, "label": label, "kind": key.split("_")[0],
            "net_cost_amount": f"{capex + monthly * months:.2f}",
            "npv_amount": f"{(capex + monthly * months) * 0.86:.2f}",
            "break_even_month": 31 if capex else None, "cost_per_request_amount": per_request,
            "cost_per_million_output_tokens_amount": f"{float(per_request) * 2.8e3:.2f}",
            "cumulative_amount": ramp(capex, monthly), "monthly_amount": [f"{monthly:.2f}"] * months,
            "lines_amount": {"compute": [f"{monthly * 0.7:.2f}"] * months,
                          "power": [f"{monthly * 0.2:.2f}"] * months,
                          "facility": [f"{monthly * 0.1:.2f}"] * months},
            "owned_gpus": 16 if capex else 0, "mean_utilisation": 0.61, "notes": [],
            "terminal_value_amount": "0.00",
        })  # fmt: skip
    base = [640000 + 9100 * m for m in range(1, months + 1)]
    cloud = [13800 * m for m in range(1, months + 1)]
    return {
        "available": True, "run_id": 1, "finished_at": "2026-08-01T10:00:00+00:00",
        "stale": False, "currency": "USD", "months": list(range(1, months + 1)),
        "discount_rate": 0.08, "cheapest": "cloud_3yr", "options": options,
        "tornado": [
            {"driver": name, "unit": "", "low_input": 0, "high_input": 0,
             "low_value_amount": f"{1186000 - span:.2f}", "high_value_amount": f"{1186000 + span:.2f}",
             "base_value_amount": "1186000.00", "span_amount": f"{2 * span:.2f}"}
            for name, span in (("Server price", 128000), ("Utilisation", 91000),
                               ("Power price", 40000), ("Cloud price", 26000))
        ],
        "monte_carlo": {
            "site_key": "colo_ams", "paths": 10000, "seed": 0, "probability_owned_cheaper": 0.41,
            "owned_p10_amount": [f"{v * 0.93:.2f}" for v in base],
            "owned_p50_amount": [f"{v:.2f}" for v in base],
            "owned_p90_amount": [f"{v * 1.08:.2f}" for v in base],
            "cloud_p10_amount": [f"{v * 0.9:.2f}" for v in cloud],
            "cloud_p50_amount": [f"{v:.2f}" for v in cloud],
            "cloud_p90_amount": [f"{v * 1.12:.2f}" for v in cloud],
        },
        "basis": [],
    }  # fmt: skip


def _timeline(bom: dict) -> dict:
    start = date(2026, 8, 3)
    tasks = []
    for line in bom["lines"][:18]:
        finish = start + timedelta(days=line["lead_time_days"])
        tasks.append({"key": f"line-{line['position']}", "name": line["description"],
                      "kind": "lead_time", "start": start.isoformat(),
                      "finish": finish.isoformat(), "slack_days": 0,
                      "critical": line["position"] == 2})  # fmt: skip
    last = max(date.fromisoformat(t["finish"]) for t in tasks)
    for key, days in (("install", 10), ("burn_in", 7)):
        tasks.append({"key": key, "name": key.replace("_", "-").title(), "kind": key,
                      "start": last.isoformat(),
                      "finish": (last + timedelta(days=days)).isoformat(),
                      "slack_days": 0, "critical": True})  # fmt: skip
        last += timedelta(days=days)
    return {
        "available": True, "reason": "", "order_date": start.isoformat(),
        "power_ready": "2027-02-01", "power_ready_note": "facility", "target_go_live": "2027-06-01",
        "go_live": last.isoformat(), "baseline_go_live": last.isoformat(), "delay_days": 0,
        "late_against_target_days": None, "notes": [], "tasks": tasks,
        "critical_path": [t["key"] for t in tasks if t["critical"]], "slips": [],
    }  # fmt: skip


def sample_snapshot(*, bom_lines: int = 40, months: int = 60) -> dict:
    """A complete snapshot with ``bom_lines`` BOM lines and a ``months``-month TCO."""
    bom = sample_bom(bom_lines)
    workload = {
        "id": 1, "name": "Customer chat", "kind": "chat", "kind_label": "Chat assistant",
        "interactive": True, "model_slug": "llama-3.1-70b", "model_name": "Llama 3.1 70B",
        "precision": "fp8", "input_tokens_mean": 1200, "input_tokens_p95": 3000,
        "output_tokens_mean": 350, "output_tokens_p95": 900, "percentile": 95, "ttft_ms": 1000,
        "tpot_ms": 50, "e2e_s": None, "peak_concurrency": 400, "peak_requests_per_s": None,
        "headroom_pct": 20, "n_plus_one": True, "region_shares": {"eu-west": 100},
        "daily_profile": [0.2] * 8 + [1.0] * 10 + [0.4] * 6,
        "chosen": {"accelerator_slug": "h100-sxm", "accelerator_name": "H100 SXM",
                   "server_name": "NVIDIA DGX H100", "precision": "fp8", "tensor_parallel": 2,
                   "replicas": 6, "accelerators": 12, "servers": 2, "chosen_at": None,
                   "summary": {}},
        "memory": {"weights_gb_per_gpu": 35.3, "kv_budget_gb_per_gpu": 31.2,
                   "activation_gb_per_gpu": 2.1, "reserve_gb_per_gpu": 4.0,
                   "capacity_gb_per_gpu": 80.0, "kv_cache_bytes_per_token": 163840.0,
                   "max_concurrent_sequences": 96, "bottleneck": "latency"},
        "autoscaling": {"primary_signal": "vllm:kv_cache_usage_perc",
                        "secondary_signal": "vllm:num_requests_waiting",
                        "scale_up_kv_usage": 0.7, "scale_up_queue_depth": 2,
                        "scale_down_kv_usage": 0.45, "min_replicas": 3, "max_replicas": 6,
                        "rationale": []},
        "replicas_by_hour": [2] * 8 + [6] * 10 + [3] * 6,
    }  # fmt: skip
    checks = [
        {"key": k, "title": t, "status": s, "value": v, "limit": lim, "unit": u, "reason": r}
        for k, t, s, v, lim, u, r in (
            ("ab", "A/B feed redundancy", "pass", "15.1", "17.7", "kW", "One side carries it."),
            ("cooling", "kW per rack vs cooling", "warn", "15.1", "30.0", "kW", "Air is close."),
            ("power", "Power ready before go-live", "pass", "120", "28", "days", "Ready early."),
        )
    ]
    snapshot = {
        "schema_version": 1, "revision_number": 1, "generated_at": "2026-08-03T09:00:00+00:00",
        "organisation": {"name": "Sample Advisory", "slug": "sample"},
        "plan": {"id": 1, "name": "Sample inference build", "currency": "EUR",
                 "target_go_live": "2027-06-01", "notes": "",
                 "client": {"name": "Sample Retail B.V.", "country": "NL",
                            "contact_name": "Sam Client", "contact_email": "sam@example.com"}},
        "workloads": [workload],
        "sites": {"available": True, "sites": [{
            "id": 1, "name": "Amsterdam colocation", "kind": "colocation",
            "kind_label": "Colocation", "country": "NL", "racks_available": 6,
            "site_it_capacity_kw": "120.00", "cooling_method": "Rear-door heat exchanger",
            "pue": "1.35", "power_ready_date": "2027-02-01", "upgrades": [], "status": "warn",
            "checks": checks, "go_live": "2027-06-01", "it_load_kw": 30.2, "racks_needed": 2,
            "notes": [], "error": ""}]},
        "placement": {"available": True, "chosen_kind": "colocation",
                      "chosen_label": "Amsterdam colocation", "reason": "EU data residency.",
                      "decided_at": None},
        "tco": _tco(months),
        "bom": bom,
        "timeline": _timeline(bom),
        "purchase_orders": {"available": True, "orders": []},
        "sign_offs": {},
        "quote": {"number": "Q-SAMPLE-0001-R1", "date": "2026-08-03",
                  "valid_until": "2026-09-02", "terms": ["Sample terms apply."]},
    }  # fmt: skip
    snapshot["checklist"] = [item.as_dict() for item in checklist.evaluate(snapshot)]
    return snapshot
