"""Stored TCO results: the tornado's money drivers in the plan's currency (no database)."""

import pytest

from planner.engine import tco as te
from planner.facility.services import tco_results_serialise
from tests.engine.test_tco_pooled import _inputs

FX = {"currency": "EUR", "rate": "0.900000", "rate_date": "2026-06-01"}


def test_tornado_money_drivers_are_stored_in_the_plan_currency():
    inputs = _inputs()
    bars = (
        te.TornadoBar("hardware_price", 800.0, 1200.0, 1.0, 2.0, 1.5, 1.0, "USD per server"),
        te.TornadoBar("power_price", 0.12, 0.18, 1.0, 2.0, 1.5, 1.0, "USD/kWh"),
        te.TornadoBar("cloud_price", 1.0, 1.5, 1.0, 2.0, 1.5, 1.0, "USD/GPU-h"),
        te.TornadoBar("utilisation", 0.48, 0.72, 1.0, 2.0, 1.5, 1.0, "fraction"),
    )
    stored = tco_results_serialise(
        te.run_tco(inputs), bars, te.monte_carlo(inputs, paths=20, seed=1), fx=FX
    )
    rows = {r["driver"]: r for r in stored["tornado"]}
    # 800 and 1,200 USD per server at 0.9 EUR per USD = 720 and 1,080 EUR per server.
    assert rows["hardware_price"]["unit"] == "EUR per server"
    assert (rows["hardware_price"]["low_input"], rows["hardware_price"]["high_input"]) == (
        pytest.approx(720.0),
        pytest.approx(1080.0),
    )
    assert rows["power_price"]["unit"] == "EUR/kWh"
    assert rows["power_price"]["low_input"] == pytest.approx(0.108)
    assert rows["cloud_price"]["unit"] == "EUR/GPU-h"
    assert rows["cloud_price"]["high_input"] == pytest.approx(1.35)
    assert rows["utilisation"] == {**rows["utilisation"], "unit": "fraction", "low_input": 0.48}
    assert stored["tornado"][0]["base_value_amount"] == "1.35"  # the metric converted as before
