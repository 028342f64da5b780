"""The figure a document leads with is the chosen placement's option, not the cheapest."""

from planner.pdf.context import headline_option, quoted_option

TCO = {
    "available": True,
    "cheapest": "cloud_committed_3yr:aws",
    "options": [
        {
            "key": "cloud_on_demand:aws",
            "label": "cloud_on_demand:aws",
            "kind": "cloud_on_demand",
            "npv_amount": "900.00",
        },
        {
            "key": "cloud_committed_3yr:aws",
            "label": "cloud_committed_3yr:aws",
            "kind": "cloud_committed",
            "npv_amount": "400.00",
        },
        {
            "key": "cloud_on_demand:lambda",
            "label": "cloud_on_demand:lambda",
            "kind": "cloud_on_demand",
            "npv_amount": "500.00",
        },
        {"key": "site-7", "label": "site-7", "kind": "colocation", "npv_amount": "2000.00"},
        {"key": "site-8", "label": "site-8", "kind": "owned", "npv_amount": "2500.00"},
        {"key": "hybrid", "label": "hybrid", "kind": "hybrid", "npv_amount": "900.00"},
    ],
}


def _key(placement):
    option = headline_option(TCO, placement)
    return option.key if option else None


def test_a_chosen_site_leads_with_its_own_figures():
    # Amsterdam colocation chosen: its 2,000, not the 3-year cloud commitment's 400.
    assert _key({"chosen_kind": "colocation", "chosen_key": "site-7"}) == "site-7"
    assert _key({"chosen_kind": "hybrid", "chosen_key": "hybrid"}) == "hybrid"


def test_a_chosen_cloud_leads_with_the_cheapest_cloud_option():
    assert _key({"chosen_kind": "public_cloud", "chosen_key": "public_cloud"}) == (
        "cloud_committed_3yr:aws"
    )


def test_a_choice_without_a_tco_option_has_no_figure():
    assert _key({"chosen_kind": "edge", "chosen_key": "edge"}) is None


def test_an_undecided_plan_has_no_headline_option_and_the_quote_prices_the_owned_one():
    # Never the cheapest (the 3-year commitment here): nothing is chosen, so nothing heads.
    assert _key({}) is None
    assert headline_option({"available": False}, {}) is None
    pooled = {"available": True, "cheapest": "hybrid", "options": [
        {"key": "hybrid", "label": "hybrid", "kind": "hybrid", "npv_amount": "500.00"},
        {"key": "owned", "label": "owned", "kind": "colocation", "npv_amount": "2000.00"},
    ]}  # fmt: skip
    assert quoted_option(pooled).key == "owned"
    assert quoted_option({"available": False}) is None


def test_a_chosen_site_never_leads_with_a_hybrid_based_there():
    tco = {"available": True, "options": [
        {"key": "hybrid", "label": "hybrid", "kind": "hybrid", "npv_amount": "500.00",
         "sites": [{"key": "site-8"}]},
        {"key": "owned", "label": "owned", "kind": "colocation", "npv_amount": "2000.00",
         "sites": [{"key": "site-7"}, {"key": "site-8"}]},
    ]}  # fmt: skip
    assert headline_option(tco, {"chosen_kind": "colocation", "chosen_key": "site-8"}).key == (
        "owned"
    )


def test_a_chosen_site_of_the_pooled_deployment_leads_with_the_one_owned_option():
    pooled = {
        "available": True,
        "cheapest": "cloud_on_demand:aws",
        "options": [
            {"key": "cloud_on_demand:aws", "label": "cloud_on_demand:aws", "kind": "cloud_on_demand", "npv_amount": "900.00"},
            {"key": "owned", "label": "owned", "kind": "colocation", "npv_amount": "2000.00",
             "sites": [{"key": "site-7"}, {"key": "site-8"}]},
        ],
    }  # fmt: skip
    chosen = headline_option(pooled, {"chosen_kind": "colocation", "chosen_key": "site-8"})
    assert chosen.key == "owned"
    chosen = headline_option(pooled, {"chosen_kind": "owned_dc", "chosen_key": "owned_dc"})
    assert chosen.key == "owned"


def test_each_workload_heads_with_its_own_cost_and_older_runs_keep_their_one_figure():
    from planner.pdf.context import workload_costs
    from planner.sharing import schema

    workloads = [schema.WorkloadSnap(id=3, name="Chat"), schema.WorkloadSnap(id=4, name="Batch")]
    option = schema.TcoOption(
        key="owned", label="Owned", cost_per_request_amount=0.001,
        workloads=[
            {"key": "4", "name": "Batch", "cost_per_request_amount": 0.0003},
            {"key": "3", "name": "Chat", "cost_per_request_amount": 0.0012,
             "input_amount_per_million_tokens": 0.49, "output_amount_per_million_tokens": 1.66},
        ],
    )  # fmt: skip
    rows = workload_costs(option, workloads)
    assert [(r["name"], r["cost_per_request_amount"]) for r in rows] == [
        ("Chat", 0.0012),
        ("Batch", 0.0003),
    ]  # in the plan's order, each its own
    assert rows[0]["input_amount_per_million_tokens"] == 0.49
    # A revision published before workloads had their own figures reads as it was.
    old = schema.TcoOption.model_validate({"key": "owned", "label": "Owned",
                                           "cost_per_request_amount": "0.001"})  # fmt: skip
    assert old.workloads == [] and workload_costs(old, workloads) == ()
