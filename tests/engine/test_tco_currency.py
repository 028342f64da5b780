"""The TCO's notes and sensitivity inputs are written in the plan's currency.

The engine computes in USD; a plan in EUR shows every amount in EUR at the run's dated rate,
including the sentences under each option and the tornado's driver values. Hand calculation
(rate 0.9 EUR per USD):
  pooled owned option: site A NPV 1,876 USD = 1,688 EUR, site B 2,752 USD = 2,477 EUR
  (tests/engine/test_tco_pooled.py derives the USD figures).
"""

import numpy as np
import pytest

from planner.engine import tco as te
from tests.engine.test_tco_defaults import _providers_case
from tests.engine.test_tco_pooled import _inputs

EUR = te.ShownIn("EUR", 0.9)


def test_pooled_option_note_gives_each_site_s_npv_in_the_plan_currency():
    owned = te.run_tco(_inputs(), shown=EUR).by_key("owned")
    note = owned.notes[0]
    assert "A 1 servers, NPV 1,688 EUR" in note and "B 1 servers, NPV 2,477 EUR" in note
    assert "USD" not in note
    assert owned.npv_usd == pytest.approx(4628.0)  # the figures themselves stay USD
    assert "NPV 1,876 USD" in te.run_tco(_inputs()).by_key("owned").notes[0]  # default USD


def test_commitment_notes_price_and_owed_amount_in_the_plan_currency():
    # Provider A commits 1 year at 48 USD/instance-h: 43.200 EUR/instance-h at 0.9.
    result = te.run_tco(_providers_case(), shown=EUR)
    notes = " ".join(result.by_key("cloud_committed_1yr:a").notes)
    assert "at 43.200 EUR/instance-h" in notes
    for option in result.options:
        assert not any("USD" in n for n in option.notes), (option.key, option.notes)


def test_owed_commitment_after_the_horizon_in_the_plan_currency():
    # 1 GPU all day for 12 months at 10 USD/GPU-h, a 3-year term at 90 % off: committing the
    # GPU costs 730 h × 1 USD × 36 months = 26,280 USD < 87,600 on demand, so it is
    # committed; 24 months (17,520 USD) are owed after the horizon = 15,768 EUR at 0.9.
    _, owed, notes = te._committed_lines(np.ones((12, 24)), np.full(12, 10.0), 0.9, 36, shown=EUR)
    assert owed == pytest.approx(17_520.0)
    assert "at 0.900 EUR/GPU-h" in notes[0]
    assert notes[-1] == "15,768 EUR of commitment is still owed after the horizon."


def test_site_check_reason_gives_the_energy_cost_in_the_plan_currency():
    from datetime import date

    from planner.engine import facility as fe
    from tests.engine.test_facility_mixed import DGX, SITE

    # 2 DGX at 14.3 kW = 28.6 kW IT × PUE 1.5 (default) = 42.9 kW × 730 h × 0.08 USD/kWh
    # = 2,505 USD a month = 2,255 EUR at 0.9; the price 0.08 USD/kWh = 0.072 EUR/kWh.
    report = fe.check_site(SITE, [DGX], date(2027, 6, 1), shown=EUR)
    reason = report.by_key("facility_power").reason
    assert f"about {42.9 * 730 * 0.08 * 0.9:,.0f} EUR a month at 0.072 EUR/kWh" in reason
    assert "USD" not in reason
    assert report.energy_usd_per_month == pytest.approx(42.9 * 730 * 0.08)  # figure stays USD
