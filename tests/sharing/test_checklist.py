"""The pre-purchase checklist evaluated from snapshot dicts (no database, no Django)."""

from planner.sharing import checklist


def _workload(**overrides):
    w = {
        "name": "Chat",
        "percentile": 95,
        "ttft_ms": 1000,
        "tpot_ms": 50,
        "e2e_s": None,
        "peak_concurrency": 100,
        "peak_requests_per_s": None,
        "chosen": {"accelerator_name": "H100", "tensor_parallel": 2, "accelerators": 8},
        "memory": {
            "weights_gb_per_gpu": 35.0,
            "kv_budget_gb_per_gpu": 30.0,
            "capacity_gb_per_gpu": 80.0,
            "max_concurrent_sequences": 120,
            "kv_cache_bytes_per_token": 327680.0,
        },
        "autoscaling": {
            "primary_signal": "vllm:kv_cache_usage_perc",
            "secondary_signal": "vllm:num_requests_waiting",
            "scale_up_kv_usage": 0.7,
            "scale_up_queue_depth": 2,
            "min_replicas": 2,
            "max_replicas": 4,
        },
    }
    w.update(overrides)
    return w


def _snapshot(**overrides):
    s = {
        "plan": {"target_go_live": "2027-06-01"},
        "workloads": [_workload()],
        "sites": {
            "available": True,
            "sites": [
                {
                    "name": "AMS",
                    "power_ready_date": "2027-02-01",
                    "checks": [
                        {"title": "A/B feeds", "status": "pass"},
                        {"title": "Cooling", "status": "warn"},
                    ],
                }
            ],
        },
        "tco": {
            "available": True,
            "stale": False,
            "cheapest": "owned",
            "options": [{"key": "owned", "label": "Owned", "cost_per_request_usd": "0.00031"}],
        },
        "bom": {
            "available": True,
            "spares_mode": "percent",
            "spares_mode_label": "A percentage of each line",
            "spares_pct": "5",
            "lines": [{"service": "support", "quantity": 1, "description": "Support contract"}],
            "shipments": [{"key": "US Dist (FCA)", "supplier": "US Dist", "cross_border": True}],
        },
        "timeline": {"go_live": "2027-05-10"},
        "purchase_orders": {
            "available": True,
            "orders": [
                {
                    "reference": "PO-1",
                    "supplier": "US Dist",
                    "cross_border": True,
                    "logistics_owner": "Mila Jansen",
                },
            ],
        },  # fmt: skip
        "sign_offs": {},
    }
    s.update(overrides)
    return s


def _by_key(snapshot):
    return {item.key: item for item in checklist.evaluate(snapshot)}


def test_a_complete_plan_leaves_only_the_hand_checks():
    items = _by_key(_snapshot())
    assert [i.key for i in checklist.evaluate(_snapshot())] == list(checklist.ITEM_KEYS)
    for key in ("latency_concurrency", "memory_footprint", "cost_per_request",
                "power_cooling_space", "logistics_owner"):  # fmt: skip
        assert items[key].status == checklist.DONE, (key, items[key].evidence)
    # Recommended by sizing, but "tested under load" and monitoring need a person.
    assert items["autoscaling"].status == checklist.SIGN_OFF
    assert items["monitoring_spares_support"].status == checklist.SIGN_OFF
    assert "TTFT 1000 ms and TPOT 50 ms at p95; peak 100 concurrent" in items[
        "latency_concurrency"].evidence[0]  # fmt: skip
    assert "KV cache 30.0 GB of 80 GB" in items["memory_footprint"].evidence[0]


def test_sign_offs_complete_the_hand_checks():
    signed = {"name": "Ana", "date": "2026-07-01", "note": "load test LT-1"}
    items = _by_key(_snapshot(sign_offs={"autoscaling": signed,
                                         "monitoring_spares_support": signed}))  # fmt: skip
    assert items["autoscaling"].status == checklist.DONE
    assert items["autoscaling"].sign_off == signed
    assert items["monitoring_spares_support"].status == checklist.DONE


def test_a_sign_off_never_hides_what_the_plan_shows_missing():
    snapshot = _snapshot(workloads=[_workload(autoscaling=None)])
    snapshot["sign_offs"] = {"autoscaling": {"name": "Ana", "date": "2026-07-01", "note": ""}}
    assert _by_key(snapshot)["autoscaling"].status == checklist.MISSING


def test_missing_latency_target_or_peak_is_named():
    items = _by_key(_snapshot(workloads=[_workload(ttft_ms=None, tpot_ms=None,
                                                   peak_concurrency=None)]))  # fmt: skip
    item = items["latency_concurrency"]
    assert item.status == checklist.MISSING
    assert "no a latency target and a peak load" not in item.evidence[0]
    assert "latency target" in item.evidence[0] and "peak load" in item.evidence[0]


def test_unsized_workload_has_no_memory_footprint():
    items = _by_key(_snapshot(workloads=[_workload(chosen=None, memory=None)]))
    assert items["memory_footprint"].status == checklist.MISSING


def test_power_needs_a_date_and_no_failed_check():
    snapshot = _snapshot()
    snapshot["sites"]["sites"][0]["power_ready_date"] = None
    assert _by_key(snapshot)["power_cooling_space"].status == checklist.MISSING
    snapshot = _snapshot()
    snapshot["sites"]["sites"][0]["checks"][0]["status"] = "fail"
    assert _by_key(snapshot)["power_cooling_space"].status == checklist.MISSING
    snapshot = _snapshot()
    snapshot["sites"]["sites"][0]["power_ready_date"] = "2027-08-01"  # after go-live
    assert _by_key(snapshot)["power_cooling_space"].status == checklist.MISSING
    assert _by_key(_snapshot(sites={"available": False}))["power_cooling_space"].status == (
        checklist.MISSING
    )


def test_cross_border_order_without_owner_is_missing():
    snapshot = _snapshot()
    snapshot["purchase_orders"]["orders"][0]["logistics_owner"] = "  "
    item = _by_key(snapshot)["logistics_owner"]
    assert item.status == checklist.MISSING
    assert "no logistics owner" in item.evidence[0]


def test_cross_border_shipment_not_ordered_yet_needs_a_sign_off():
    snapshot = _snapshot(purchase_orders={"available": True, "orders": []})
    item = _by_key(snapshot)["logistics_owner"]
    assert item.status == checklist.SIGN_OFF
    assert "US Dist (FCA)" in item.evidence[-1]


def test_cost_per_request_needs_a_tco_result():
    assert _by_key(_snapshot(tco={"available": False, "reason": "No run."}))[
        "cost_per_request"].status == checklist.MISSING  # fmt: skip
    stale = _snapshot()
    stale["tco"]["stale"] = True
    assert _by_key(stale)["cost_per_request"].status == checklist.SIGN_OFF


def test_no_support_contract_or_no_spares_is_missing():
    snapshot = _snapshot()
    snapshot["bom"]["lines"] = []
    assert _by_key(snapshot)["monitoring_spares_support"].status == checklist.MISSING
    snapshot = _snapshot()
    snapshot["bom"]["spares_mode"] = "none"
    assert _by_key(snapshot)["monitoring_spares_support"].status == checklist.MISSING


def test_an_empty_snapshot_evaluates_without_error():
    items = checklist.evaluate({})
    assert len(items) == len(checklist.RULES)
    assert checklist.summary(items)["done"] == 0
    assert all(item.as_dict()["status_label"] for item in items)
