"""Critical path: CPM passes, delivery timeline, power readiness and slips, checked by hand.

Durations are calendar days; a task finishing on day D lets its successor start on day D.
"""

from dataclasses import replace
from datetime import date

import pytest

from planner.engine.critical_path import (
    LANE_TRANSIT_DAYS,
    CriticalPathError,
    Task,
    TimelineItem,
    assess_slips,
    gantt_rows,
    plan_timeline,
    schedule,
)

START = date(2026, 1, 1)


def test_parallel_paths_longer_one_wins():
    # A 10 d and B 20 d in parallel, then C 5 d.
    # A: Jan 1 → Jan 11; B: Jan 1 → Jan 21; C starts at max(EF) = Jan 21 → Jan 26.
    # Backward: C LS = Jan 21; A LF = Jan 21, LS = Jan 11 → slack 10; B slack 0.
    tasks = [
        Task("a", "A", 10),
        Task("b", "B", 20),
        Task("c", "C", 5, ("a", "b")),
    ]
    result = schedule(tasks, START)
    assert result.go_live == date(2026, 1, 26)
    assert result.critical_path == ("b", "c")
    assert result.get("a").slack_days == 10
    assert result.get("a").latest_start == date(2026, 1, 11)
    assert result.get("b").critical and result.get("c").critical


def _items():
    return [
        # Servers from Taiwan by air: 60 d lead + 6 d transit (ASIA→EUROPE air) + 3 d customs.
        TimelineItem("servers", "GPU servers", 60, "TW", "DE", "air"),
        # Switches from China by sea: 30 d lead + 35 d transit + 3 d customs.
        TimelineItem("switches", "Switches", 30, "CN", "DE", "sea"),
    ]


def _timeline(power_ready: date):
    return plan_timeline(
        date(2026, 1, 5),
        _items(),
        installation_days=5,
        burn_in_days=7,
        power_ready_date=power_ready,
    )


def test_timeline_hand_calculation():
    # Order Jan 5. Servers: lead → Mar 6 (Jan 5 + 60 d), transit → Mar 12, customs → Mar 15.
    # Switches: lead → Feb 4, sea → Mar 11, customs → Mar 14 (slack 1 day).
    # Power ready Mar 1 (slack 14). Install Mar 15 → Mar 20; burn-in → Mar 27 = go-live.
    result = schedule(_timeline(date(2026, 3, 1)), date(2026, 1, 5))
    assert LANE_TRANSIT_DAYS[("ASIA", "EUROPE", "air")].days == 6
    assert LANE_TRANSIT_DAYS[("ASIA", "EUROPE", "sea")].days == 35
    assert result.get("servers:customs").earliest_finish == date(2026, 3, 15)
    assert result.get("switches:customs").earliest_finish == date(2026, 3, 14)
    assert result.get("switches:lead_time").slack_days == 1
    assert result.get("power_ready").slack_days == 14
    assert result.go_live == date(2026, 3, 27)
    assert result.critical_path == (
        "servers:lead_time",
        "servers:transit",
        "servers:customs",
        "install",
        "burn_in",
        "go_live",
    )


def test_power_readiness_on_the_critical_path():
    # Power ready Apr 1 (after every delivery, Mar 15) → install Apr 1 → Apr 6 → burn-in Apr 13.
    result = schedule(_timeline(date(2026, 4, 1)), date(2026, 1, 5))
    assert result.go_live == date(2026, 4, 13)
    assert result.critical_path == ("power_ready", "install", "burn_in", "go_live")
    # Servers now wait 17 days (Mar 15 → Apr 1).
    assert result.get("servers:customs").slack_days == 17


def _with_actual(tasks, key, **actuals):
    return [replace(t, **actuals) if t.key == key else t for t in tasks]


def test_slip_that_moves_go_live():
    # Servers' lead time finishes Mar 10 instead of Mar 6 (4 days late, no slack):
    # transit → Mar 16, customs → Mar 19, install → Mar 24, burn-in → Mar 31.
    tasks = _with_actual(
        _timeline(date(2026, 3, 1)),
        "servers:lead_time",
        actual_start=date(2026, 1, 5),
        actual_finish=date(2026, 3, 10),
    )
    report = assess_slips(tasks, date(2026, 1, 5))
    assert report.baseline_go_live == date(2026, 3, 27)
    assert report.new_go_live == date(2026, 3, 31)
    assert report.delay_days == 4
    assert [s.key for s in report.responsible] == ["servers:lead_time"]
    assert report.responsible[0].slip_days == 4
    assert report.responsible[0].go_live_delay_days == 4
    assert report.absorbed == ()


def test_slip_absorbed_by_slack():
    # Switches' sea transit lands Mar 12 instead of Mar 11: 1 day late, slack was 1 day.
    tasks = _with_actual(
        _timeline(date(2026, 3, 1)), "switches:transit", actual_finish=date(2026, 3, 12)
    )
    report = assess_slips(tasks, date(2026, 1, 5))
    assert report.new_go_live == report.baseline_go_live == date(2026, 3, 27)
    assert report.responsible == ()
    assert [(s.key, s.slip_days, s.baseline_slack_days, s.go_live_delay_days)
            for s in report.absorbed] == [("switches:transit", 1, 1, 0)]  # fmt: skip


def test_early_actual_is_not_a_slip():
    tasks = _with_actual(
        _timeline(date(2026, 3, 1)), "switches:lead_time", actual_finish=date(2026, 2, 1)
    )
    report = assess_slips(tasks, date(2026, 1, 5))
    assert report.responsible == () and report.absorbed == ()


def test_gantt_rows():
    rows = gantt_rows(schedule(_timeline(date(2026, 3, 1)), date(2026, 1, 5)))
    by_key = {r.key: r for r in rows}
    assert by_key["install"].start == date(2026, 3, 15)
    assert by_key["install"].finish == date(2026, 3, 20)
    assert by_key["install"].critical
    assert not by_key["switches:transit"].critical
    assert by_key["go_live"].start == by_key["go_live"].finish == date(2026, 3, 27)
    assert rows[-1].key == "go_live"


def test_domestic_item_and_transit_override():
    items = [
        TimelineItem("racks", "Racks", 14, "DE", "DE", transit_days=2),
        TimelineItem("optics", "Optics", 20, "TW", "IN", transit_days=9),
    ]
    tasks = plan_timeline(
        date(2026, 1, 1),
        items,
        installation_days=1,
        burn_in_days=1,
        power_ready_date=date(2026, 1, 1),
        customs_clearance_days={"IN": 5},
    )
    by_key = {t.key: t for t in tasks}
    assert by_key["racks:transit"].duration_days == 2
    assert by_key["racks:customs"].duration_days == 0  # domestic: no customs
    assert by_key["optics:customs"].duration_days == 5
    # Optics 20 + 9 + 5 = 34 d → Feb 4; install → Feb 5; burn-in → Feb 6.
    assert schedule(tasks, date(2026, 1, 1)).go_live == date(2026, 2, 6)


def test_lane_without_default_needs_transit_days():
    with pytest.raises(CriticalPathError, match="No sea transit default from TW to IN"):
        plan_timeline(
            date(2026, 1, 1),
            [TimelineItem("x", "X", 1, "TW", "IN", "sea")],
            installation_days=1,
            burn_in_days=1,
            power_ready_date=date(2026, 1, 1),
        )


def test_graph_errors():
    with pytest.raises(CriticalPathError, match="cycle"):
        schedule([Task("a", "A", 1, ("b",)), Task("b", "B", 1, ("a",))], START)
    with pytest.raises(CriticalPathError, match="unknown task 'z'"):
        schedule([Task("a", "A", 1, ("z",))], START)
    with pytest.raises(CriticalPathError, match="negative duration"):
        schedule([Task("a", "A", -1)], START)
    with pytest.raises(CriticalPathError, match="used twice"):
        schedule([Task("a", "A", 1), Task("a", "A", 1)], START)


def test_each_site_has_its_own_shipments_power_date_and_installation():
    from planner.engine.critical_path import SiteReadiness, site_task_key

    # Order Jan 5. Frankfurt: servers from TW by air, lead 60 → Mar 6, transit 6 → Mar 12,
    # customs 3 → Mar 15; power ready Feb 1 → install Mar 15 → Mar 20, burn-in → Mar 27.
    # Ashburn: a US-made rack, domestic, lead 20 → Jan 25 (no transit, no customs); power
    # ready Apr 1 (its upgrade) → install Apr 1 → Apr 6, burn-in → Apr 13.
    # Go-live = the last site ready = Apr 13, on Ashburn's power date.
    items = [
        TimelineItem("srv", "Servers for Frankfurt", 60, "TW", "DE", site="site-1"),
        TimelineItem("rack", "Racks for Ashburn", 20, "US", "US", site="site-2"),
    ]
    sites = (
        SiteReadiness("site-1", "Frankfurt", date(2026, 2, 1)),
        SiteReadiness("site-2", "Ashburn", date(2026, 4, 1)),
    )
    tasks = plan_timeline(
        date(2026, 1, 5), items, installation_days=5, burn_in_days=7,
        power_ready_date=date(2026, 4, 1), sites=sites,
    )  # fmt: skip
    result = schedule(tasks, date(2026, 1, 5))
    fra_ready = result.get(site_task_key("burn_in", "site-1")).earliest_finish
    iad_ready = result.get(site_task_key("burn_in", "site-2")).earliest_finish
    assert fra_ready == date(2026, 3, 27)
    assert iad_ready == date(2026, 4, 13)
    assert result.go_live == date(2026, 4, 13)
    assert result.critical_path == (
        "power_ready:site-2", "install:site-2", "burn_in:site-2", "go_live",
    )  # fmt: skip
    # Frankfurt's servers do not wait for Ashburn's power: they only feed Frankfurt.
    assert "srv:customs" in result.get("install:site-1").task.depends_on
    assert "srv:customs" not in result.get("install:site-2").task.depends_on


def test_items_for_an_unknown_site_are_refused():
    from planner.engine.critical_path import SiteReadiness

    items = [TimelineItem("x", "X", 10, "US", "US", site="site-9")]
    sites = (
        SiteReadiness("site-1", "Frankfurt", date(2026, 2, 1)),
        SiteReadiness("site-2", "Ashburn", date(2026, 2, 1)),
    )
    with pytest.raises(CriticalPathError, match="site-9"):
        plan_timeline(
            date(2026, 1, 5), items, installation_days=1, burn_in_days=1,
            power_ready_date=date(2026, 2, 1), sites=sites,
        )  # fmt: skip
