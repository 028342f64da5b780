"""A TCO run's amounts are in the plan's currency and named ``…_amount``; runs stored with the
earlier ``…_usd`` keys (holding the same plan-currency amounts) are renamed as they are read,
so the TCO page, placement, the API and a new revision read them like a new run."""

import json
import re
from decimal import Decimal

import pytest
from django.db import connection
from django.urls import reverse

from planner.facility import services
from planner.facility.models import TcoRun, TcoStatus
from planner.facility.tco_results import upgrade_tco_results

# A run as stored before the rename (a EUR plan): every amount under a `_usd` key.
OLD_RUN = {
    "currency": "EUR",
    "fx": {"from": "USD", "to": "EUR", "rate": "0.920000", "date": "2026-08-03"},
    "months": [1, 2],
    "cheapest": "owned",
    "options": [
        {
            "key": "owned",
            "label": "Owned",
            "kind": "owned",
            "lines_usd": {"capex": ["1000.00", "0.00"], "power": ["10.00", "10.00"]},
            "monthly_usd": ["1010.00", "10.00"],
            "cumulative_usd": ["1010.00", "1020.00"],
            "terminal_value_usd": "500.00",
            "net_cost_usd": "520.00",
            "npv_usd": "518.40",
            "cost_per_million_output_tokens_usd": "2.10",
            "cost_per_request_usd": "0.000420",
            "input_usd_per_million_tokens": "0.4100",
            "output_usd_per_million_tokens": "1.6600",
            "workloads": [
                {
                    "key": "7",
                    "name": "Chat",
                    "share": 1.0,
                    "cost_per_request_usd": "0.000420",
                    "cost_per_million_output_tokens_usd": "2.10",
                    "input_usd_per_million_tokens": "0.4100",
                    "output_usd_per_million_tokens": "1.6600",
                }
            ],
            "sites": [
                {
                    "key": "site-1",
                    "label": "Frankfurt",
                    "servers": 2,
                    "lines_usd": {"capex": "1000.00"},
                    "net_cost_usd": "520.00",
                    "npv_usd": "518.40",
                }
            ],
        }
    ],
    "tornado": [
        {
            "driver": "utilisation",
            "unit": "fraction",
            "low_value_usd": "10.00",
            "high_value_usd": "30.00",
            "base_value_usd": "20.00",
            "span_usd": "20.00",
        }
    ],
    "monte_carlo": {
        "site_key": "site-1",
        "owned_p10_usd": ["1.00"],
        "owned_p50_usd": ["2.00"],
        "owned_p90_usd": ["3.00"],
        "cloud_p10_usd": ["4.00"],
        "cloud_p50_usd": ["5.00"],
        "cloud_p90_usd": ["6.00"],
    },
}


def test_an_old_run_reads_with_every_amount_renamed_and_its_currency_kept():
    new = upgrade_tco_results(OLD_RUN)
    owned = new["options"][0]
    assert new["currency"] == "EUR" and new["fx"] == OLD_RUN["fx"]
    assert owned["npv_amount"] == "518.40" and owned["net_cost_amount"] == "520.00"
    assert owned["terminal_value_amount"] == "500.00"
    assert owned["lines_amount"] == {"capex": ["1000.00", "0.00"], "power": ["10.00", "10.00"]}
    assert owned["monthly_amount"] == ["1010.00", "10.00"]
    assert owned["cumulative_amount"] == ["1010.00", "1020.00"]
    assert owned["cost_per_request_amount"] == "0.000420"
    assert owned["cost_per_million_output_tokens_amount"] == "2.10"
    assert (
        owned["input_amount_per_million_tokens"],
        owned["output_amount_per_million_tokens"],
    ) == (
        "0.4100",
        "1.6600",
    )
    chat = owned["workloads"][0]
    assert (chat["key"], chat["share"], chat["cost_per_request_amount"]) == ("7", 1.0, "0.000420")
    assert chat["input_amount_per_million_tokens"] == "0.4100"
    site = owned["sites"][0]
    assert site == {
        "key": "site-1",
        "label": "Frankfurt",
        "servers": 2,
        "lines_amount": {"capex": "1000.00"},
        "net_cost_amount": "520.00",
        "npv_amount": "518.40",
    }
    assert new["tornado"][0] == {
        "driver": "utilisation",
        "unit": "fraction",
        "low_value_amount": "10.00",
        "high_value_amount": "30.00",
        "base_value_amount": "20.00",
        "span_amount": "20.00",
    }
    assert new["monte_carlo"]["owned_p50_amount"] == ["2.00"]
    assert new["monte_carlo"]["cloud_p90_amount"] == ["6.00"]
    # Nothing is left under a USD name, and reading twice changes nothing.
    assert not re.search(r'"\w*_usd\w*":', json.dumps(new))
    assert upgrade_tco_results(new) == new
    assert OLD_RUN["options"][0]["npv_usd"] == "518.40"  # the stored dict is not modified


def test_a_run_from_before_amounts_were_converted_says_it_is_usd():
    old = {"options": [{"key": "owned", "label": "Owned", "npv_usd": "100.00"}]}
    assert upgrade_tco_results(old) == {
        "options": [{"key": "owned", "label": "Owned", "npv_amount": "100.00"}],
        "currency": "USD",
    }
    assert upgrade_tco_results(None) is None


def _stored_with_usd_keys(run: TcoRun) -> dict:
    """The run's results as they were stored before the rename: every ``…_amount`` key back
    under its ``…_usd`` name, written by pattern (not from the upgrade's own table)."""
    text = json.dumps(run.results)
    text = re.sub(r'"(\w+?)_amount_per_million_tokens"', r'"\1_usd_per_million_tokens"', text)
    text = re.sub(r'"(\w+?)_amount"', r'"\1_usd"', text)
    return json.loads(text)


@pytest.mark.django_db
def test_a_run_stored_with_usd_keys_reads_everywhere_as_a_new_one(client, demo):
    from tests.api.conftest import _token, bearer

    plan, user, organisation = demo
    run = TcoRun.objects.filter(plan=plan, status=TcoStatus.SUCCEEDED).latest("pk")
    current = run.results
    assert plan.currency == current["currency"] == "EUR"
    placement_before = services.placement_evaluate(plan=plan)
    TcoRun.objects.filter(pk=run.pk).update(results=_stored_with_usd_keys(run))
    with connection.cursor() as cursor:  # the row really holds the old keys
        cursor.execute("SELECT results FROM facility_tcorun WHERE id = %s", [run.pk])
        raw = cursor.fetchone()[0]
    raw = json.loads(raw) if isinstance(raw, str) else raw
    assert "npv_usd" in raw["options"][0] and "npv_amount" not in raw["options"][0]

    # Read: the same results as the run wrote, under the current names.
    assert TcoRun.objects.get(pk=run.pk).results == current
    assert TcoRun.objects.filter(pk=run.pk).values_list("results", flat=True)[0] == current

    # The TCO page shows each option's NPV from the old row.
    client.force_login(user)
    page = client.get(reverse("facility:tco", args=[plan.pk])).content.decode()
    for option in current["options"]:
        row = re.search(rf'<tr data-option="{re.escape(option["key"])}">(.*?)</tr>', page, re.S)
        npv = re.findall(r'<td class="num">([^<]*)</td>', row.group(1))[0]
        assert Decimal(npv.replace(",", "")) == Decimal(option["npv_amount"]).quantize(Decimal(1))

    # The API gives the current names and the currency.
    api = client.get(
        f"/api/v1/plans/{plan.pk}/tco-runs/{run.pk}", headers=bearer(_token(organisation, user))
    ).json()
    assert api["currency"] == api["results"]["currency"] == "EUR"
    assert [o["npv_amount"] for o in api["results"]["options"]] == [
        o["npv_amount"] for o in current["options"]
    ]

    # Placement scores the same costs, named in the run's currency.
    placement = services.placement_evaluate(plan=plan)
    assert placement.cost_currency == "EUR"
    assert placement.result == placement_before.result
    why = [
        c.explanation for o in placement.result.options for c in o.criteria if c.criterion == "cost"
    ]
    assert any(" EUR per million tokens" in w for w in why)
    assert not any("USD" in w for w in why)
