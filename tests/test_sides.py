"""A cut priced on each arm's side of it: profiles that keep their measured ranges."""

from __future__ import annotations

from pathlib import Path

import pytest

from dau_scheduler import Session
from dau_scheduler.decision import MIN_PREDICTED_SPEEDUP, ArmFacts, Profiles, balance, decide
from dau_scheduler.profile import QueryProfile
from dau_scheduler.sides import DRIFT, NEAR, at, price, side_curve

ROWS = 1000
COUNTS = (250, 500, 750, 1000)


def _profile(side: str, seconds: dict[int, float], fixed: float, per_row: float) -> QueryProfile:
    """A profile of ``ROWS`` rows measured on one side at ``COUNTS`` rows (seconds by count)."""
    ranges = tuple(
        (0, count, seconds[count]) if side == "leading" else (ROWS - count, ROWS, seconds[count])
        for count in COUNTS
    )
    return QueryProfile(
        plan_key="q",
        host=side,
        rows=ROWS,
        fixed_seconds=fixed,
        per_row_seconds=per_row,
        ranges=ranges,
    )


def _even(side: str, fixed: float, per_row: float) -> QueryProfile:
    return _profile(side, {c: fixed + per_row * c for c in COUNTS}, fixed, per_row)


def test_rows_of_even_cost_meet_where_the_lines_meet() -> None:
    host, device = _even("trailing", 0.002, 1e-4), _even("leading", 0.004, 5e-5)
    priced = price(host, device, ROWS)
    assert priced is not None
    # The lines: 0.002 + (1 - s) * 0.1 = 0.004 + s * 0.05  ->  s = 0.098 / 0.15, moved a little
    # to the middle of the cuts within NEAR of it (the host's side falls faster than the
    # device's rises).
    assert priced.share == pytest.approx(0.098 / 0.15, abs=0.01)
    assert priced.wall == pytest.approx(0.004 + 0.05 * 0.098 / 0.15, rel=NEAR)
    assert (priced.host_alone, priced.device_alone) == pytest.approx((0.102, 0.054))
    line = balance(host.model_copy(update={"ranges": ()}), device, ROWS, False, "collaborative")
    curve = balance(host, device, ROWS, False, "collaborative")
    assert curve.device_share == pytest.approx(line.device_share, abs=0.01)
    assert "each measured on the side of the cut it takes" in curve.rationale


def test_work_in_the_last_rows_moves_the_cut_past_the_rows_that_cost_nothing() -> None:
    """A filter whose rows lie in the table's last quarter (a date column the files are sorted
    by): every arm's seconds grow only past 0.75. The line's cut gives the host that quarter
    whole; the sides put the cut inside it."""
    fixed = 0.002
    lead = {250: fixed, 500: fixed, 750: fixed, 1000: fixed + 0.05}
    trail = {250: fixed + 0.1, 500: fixed + 0.1, 750: fixed + 0.1, 1000: fixed + 0.1}
    device = _profile("leading", lead, fixed, 4e-5)
    host = _profile("trailing", trail, fixed, 9e-5)
    priced = price(host, device, ROWS)
    assert priced is not None
    # Past 0.75 the device's seconds rise by 0.05 over a quarter, the host's fall by 0.1.
    assert priced.share == pytest.approx(0.75 + 0.25 * 0.1 / 0.15, abs=0.01)
    assert priced.wall == pytest.approx(fixed + 0.1 * 0.05 / 0.15, rel=NEAR)
    split = balance(host, device, ROWS, False, "adaptive")
    assert split.posture == "adaptive" and split.device_share == pytest.approx(priced.share)
    assert split.predicted_speedup is not None and split.predicted_speedup > MIN_PREDICTED_SPEEDUP
    # The line's fit alone puts the cut where the device has nothing to do.
    line = balance(
        host.model_copy(update={"ranges": ()}),
        device.model_copy(update={"ranges": ()}),
        ROWS,
        False,
        "collaborative",
    )
    assert line.device_share < 0.75


def test_work_in_the_first_rows_keeps_the_device_to_them() -> None:
    fixed = 0.002
    lead = {250: fixed + 0.1, 500: fixed + 0.1, 750: fixed + 0.1, 1000: fixed + 0.1}
    trail = {250: fixed, 500: fixed, 750: fixed, 1000: fixed + 0.1}
    priced = price(
        _profile("trailing", trail, fixed, 1e-4), _profile("leading", lead, fixed, 1e-4), ROWS
    )
    assert priced is not None and priced.share == pytest.approx(0.125)
    assert priced.wall == pytest.approx(fixed + 0.05)


def test_a_stretch_of_rows_that_cost_nothing_puts_the_cut_in_its_middle() -> None:
    """Hive partitions a filter skips: the work lies in the first and the last quarter, the
    middle half costs nothing, and two equal arms are as fast cut anywhere in it. Its edges are
    where the measurements' noise decides; the middle is not."""
    fixed, work = 0.003, 0.04
    each = {250: fixed + work / 2, 500: fixed + work / 2, 750: fixed + work / 2, 1000: fixed + work}
    priced = price(
        _profile("trailing", each, fixed, 1e-5), _profile("leading", each, fixed, 1e-5), ROWS
    )
    assert priced is not None and priced.share == pytest.approx(0.5, abs=0.02)
    assert priced.wall == pytest.approx(fixed + work / 2)


def test_a_side_measured_below_a_smaller_range_is_noise_lifted_to_it() -> None:
    device = _profile("leading", {250: 0.03, 500: 0.02, 750: 0.05, 1000: 0.06}, 0.01, 5e-5)
    curve = side_curve(device, "leading", ROWS)
    assert curve == [(0.0, 0.01), (0.25, 0.03), (0.5, 0.03), (0.75, 0.05), (1.0, 0.06)]
    host = _profile("trailing", {250: 0.03, 500: 0.02, 750: 0.05, 1000: 0.06}, 0.01, 5e-5)
    curve = side_curve(host, "trailing", ROWS)
    assert curve == [(0.0, 0.06), (0.25, 0.05), (0.5, 0.03), (0.75, 0.03), (1.0, 0.01)]
    assert at(curve, 0.125) == pytest.approx(0.055)


def test_the_fixed_cost_at_the_empty_end_is_no_more_than_the_least_measured() -> None:
    """A line fitted through uneven rows can put its intercept above a measured range."""
    device = _profile("leading", {250: 0.004, 500: 0.004, 750: 0.004, 1000: 0.1}, 0.03, 1e-5)
    assert side_curve(device, "leading", ROWS)[0] == (0.0, 0.004)


def test_another_row_count_scales_what_lies_above_the_fixed_cost() -> None:
    device = _even("leading", 0.01, 1e-4)
    assert side_curve(device, "leading", 1200)[-1] == (1.0, pytest.approx(0.01 + 0.12))


def test_a_table_grown_past_the_drift_is_priced_by_the_lines() -> None:
    """Rows appended since the measurement all lie after the rows measured: where they lie is
    not known to the ranges, so the line prices the split, as for profiles without ranges."""
    host, device = _even("trailing", 0.002, 1e-4), _even("leading", 0.004, 5e-5)
    assert price(host, device, round(ROWS * DRIFT)) is not None
    assert price(host, device, round(ROWS * DRIFT) + 1) is None
    assert price(host, device, int(ROWS / DRIFT) - 1) is None
    grown = balance(host, device, 2 * ROWS, False, "collaborative")
    assert "each measured on the side" not in grown.rationale and 0 < grown.device_share < 1


def test_profiles_without_ranges_are_priced_by_their_lines() -> None:
    bare = QueryProfile(plan_key="q", host="h", rows=ROWS, fixed_seconds=0.0, per_row_seconds=1e-4)
    assert price(bare, _even("leading", 0.0, 1e-4), ROWS) is None
    # a device measured on leading ranges says nothing of the host's side
    assert price(_even("leading", 0.0, 1e-4), _even("leading", 0.0, 1e-4), ROWS) is None
    with pytest.raises(ValueError, match="side must be"):
        side_curve(bare, "middle", ROWS)


def test_a_range_outside_the_rows_is_refused() -> None:
    with pytest.raises(ValueError, match="a measured range must lie in"):
        QueryProfile(
            plan_key="q",
            host="h",
            rows=10,
            fixed_seconds=0.0,
            per_row_seconds=0.0,
            ranges=((5, 11, 0.1),),
        )


def test_a_cut_that_promises_little_runs_the_faster_arm_alone() -> None:
    host, device = _even("trailing", 0.002, 1e-4), _even("leading", 0.004, 1e-3)
    got = decide(
        rows=ROWS,
        device=ArmFacts("cudf", shares_host_cores=False),
        posture="collaborative",
        device_share=None,
        profiles=Profiles(required=lambda: (host, device, ()), optional=lambda: None),
    )
    assert got.split.device_share == 0.0
    assert "under the 1.25x a split must promise" in got.split.rationale


def test_a_session_measures_each_arm_on_its_own_side(tmp_path: Path) -> None:
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT range AS k, range % 7 AS v FROM range(4000)")
    with Session(con, device="polars", cache=tmp_path / "cache") as session:
        host = session.profile("SELECT v, sum(k) FROM t GROUP BY v", arm="host")
        device = session.profile("SELECT v, sum(k) FROM t GROUP BY v", arm="device")
    assert [(a, b) for a, b, _ in host.ranges] == [(n, 4000) for n in (3000, 2000, 1000, 0)]
    assert [(a, b) for a, b, _ in device.ranges] == [(0, 1000), (0, 2000), (0, 3000), (0, 4000)]
    assert all(seconds > 0 for _, _, seconds in host.ranges + device.ranges)


def test_a_device_faster_than_the_hosts_fixed_cost_runs_alone_and_says_why() -> None:
    host, device = _even("trailing", 0.05, 1e-4), _even("leading", 0.001, 1e-5)
    priced = price(host, device, ROWS)
    assert priced is not None and priced.share == 1.0
    split = balance(host, device, ROWS, False, "collaborative")
    assert split.device_share == 1.0 and "no cut beats one arm alone" in split.rationale
