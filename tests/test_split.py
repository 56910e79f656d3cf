from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dau_scheduler import (
    ADDITIVE,
    ArmError,
    MergeRule,
    RowRange,
    RowSource,
    SplitError,
    WorkSplit,
    execute_adaptive,
    execute_split,
    merge_totals,
    plan_split,
)

TOTALS = MergeRule(
    terminal="totals",
    # COUNT over no rows is 0 even when no arm ran, as in SQL; SUM stays NULL.
    combine=lambda ps: {**(t := merge_totals(ps, ["s", "n"])), "n": t["n"] or 0},
    mergeable=ADDITIVE,
)


def summing_arm(data: list[int], calls: list[tuple[int, int]] | None = None) -> Any:
    def arm(query: Any, rows: RowSource) -> dict[str, Any]:
        if calls is not None:
            calls.append((rows.start, rows.stop))
        part = data[rows.start : rows.stop]
        return {"s": sum(part) if part else None, "n": len(part)}

    return arm


def share(s: float) -> WorkSplit:
    return WorkSplit(posture="collaborative", device_share=s, rationale="test")


@given(st.lists(st.integers(-100, 100), max_size=60), st.data())
def test_any_share_gives_the_unsplit_totals(data: list[int], pick: st.DataObject) -> None:
    n = len(data)
    s = pick.draw(
        st.sampled_from([0.0, 1.0, 0.25, 0.5, (1 / n) if n else 0.0, ((n - 1) / n) if n else 1.0])
    )
    ex = execute_split(
        "q", RowRange(0, n), share(s), TOTALS, device=summing_arm(data), host=summing_arm(data)
    )
    assert ex.result == {"s": sum(data) if data else None, "n": n}
    assert ex.device_rows + ex.host_rows == n


def test_device_takes_the_leading_rows_and_empty_arms_are_not_launched() -> None:
    data = list(range(10))
    dev: list[tuple[int, int]] = []
    host: list[tuple[int, int]] = []
    execute_split(
        "q",
        RowRange(0, 10),
        share(0.3),
        TOTALS,
        device=summing_arm(data, dev),
        host=summing_arm(data, host),
    )
    assert dev == [(0, 3)] and host == [(3, 10)]
    dev.clear(), host.clear()
    ex = execute_split(
        "q",
        RowRange(0, 10),
        plan_split("cpu"),
        TOTALS,
        device=summing_arm(data, dev),
        host=summing_arm(data, host),
    )
    assert dev == [] and host == [(0, 10)] and ex.device_seconds == 0.0
    dev.clear(), host.clear()
    execute_split(
        "q",
        RowRange(0, 10),
        plan_split("offload"),
        TOTALS,
        device=summing_arm(data, dev),
        host=summing_arm(data, host),
    )
    assert dev == [(0, 10)] and host == []


def test_one_row_share_is_one_row_despite_float_rounding() -> None:
    data = list(range(49))
    dev: list[tuple[int, int]] = []
    execute_split(
        "q",
        RowRange(0, 49),
        share(1 / 49),
        TOTALS,
        device=summing_arm(data, dev),
        host=summing_arm(data),
    )
    assert dev == [(0, 1)]


def test_row_granularity_snaps_the_boundary() -> None:
    data = list(range(100))
    arm = summing_arm(data)
    arm.row_granularity = 32
    ex = execute_split(
        "q", RowRange(0, 100), share(0.45), TOTALS, device=arm, host=summing_arm(data)
    )
    assert ex.device_rows == 32 and ex.device_granularity == 32
    assert ex.result["s"] == sum(data)


def test_arms_run_at_the_same_time() -> None:
    barrier = threading.Barrier(2, timeout=10)

    def arm(query: Any, rows: RowSource) -> dict[str, Any]:
        barrier.wait()  # only returns if both arms are in flight together
        time.sleep(0.05)
        return {"s": len(rows), "n": len(rows)}

    ex = execute_split("q", RowRange(0, 10), share(0.5), TOTALS, device=arm, host=arm)
    assert ex.overlap_seconds > 0.04
    assert ex.wall_seconds < ex.device_seconds + ex.host_seconds


def test_aggregates_are_checked_before_anything_runs() -> None:
    calls: list[tuple[int, int]] = []
    with pytest.raises(SplitError, match=r"'mid'.*'median'"):
        execute_split(
            "q",
            RowRange(0, 4),
            share(0.5),
            TOTALS,
            device=summing_arm([1] * 4, calls),
            host=summing_arm([1] * 4, calls),
            aggregates=[("mid", "median")],
        )
    assert calls == []


@pytest.mark.parametrize("failing", ["device", "host"])
def test_an_arm_that_raises_makes_the_split_raise(failing: str) -> None:
    data = [1, 2, 3, 4]

    def broken(query: Any, rows: RowSource) -> Any:
        raise RuntimeError("engine died")

    arms = {"device": summing_arm(data), "host": summing_arm(data)}
    arms[failing] = broken
    with pytest.raises(ArmError, match=f"{failing} arm failed.*engine died") as info:
        execute_split("q", RowRange(0, 4), share(0.5), TOTALS, **arms)
    assert info.value.arm == failing


def test_iterables_are_materialized_once_and_charged() -> None:
    def arm(query: Any, rows: RowSource) -> dict[str, Any]:
        vals = list(rows.values())
        return {"s": sum(vals) if vals else None, "n": len(vals)}

    ex = execute_split("q", iter(range(10)), share(0.5), TOTALS, device=arm, host=arm)
    assert ex.result == {"s": 45, "n": 10}
    assert ex.materialize_seconds >= 0.0


def test_build_rows_reach_both_arms_whole() -> None:
    seen: list[int] = []

    def arm(query: Any, rows: RowSource, build: RowSource) -> dict[str, Any]:
        seen.append(len(build))
        return {"s": len(rows), "n": len(rows)}

    execute_split(
        "q", RowRange(0, 6), share(0.5), TOTALS, device=arm, host=arm, build_rows=[1, 2, 3]
    )
    assert seen == [3, 3]


@given(st.lists(st.integers(-5, 5), max_size=80), st.integers(1, 9), st.integers(1, 9))
def test_adaptive_meets_in_the_middle_and_merges_everything(
    data: list[int], dm: int, hm: int
) -> None:
    dev: list[tuple[int, int]] = []
    host: list[tuple[int, int]] = []
    ex = execute_adaptive(
        "q",
        RowRange(0, len(data)),
        TOTALS,
        device=summing_arm(data, dev),
        host=summing_arm(data, host),
        device_morsel=dm,
        host_morsel=hm,
    )
    assert ex.result == {"s": sum(data) if data else None, "n": len(data)}
    covered = sorted(dev + host)
    assert sum(b - a for a, b in covered) == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(covered))
    assert all(d[1] <= h[0] for d in dev for h in host)  # device rows lead
    assert ex.device_rows == sum(b - a for a, b in dev)


def test_adaptive_arm_failure_mid_run_is_an_error_not_a_short_answer() -> None:
    data = list(range(100))
    calls = {"n": 0}

    def flaky(query: Any, rows: RowSource) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("lost the device")
        return summing_arm(data)(query, rows)

    def slow_host(query: Any, rows: RowSource) -> dict[str, Any]:
        time.sleep(0.02)
        return summing_arm(data)(query, rows)

    with pytest.raises(ArmError, match="device arm failed"):
        execute_adaptive(
            "q",
            RowRange(0, 100),
            TOTALS,
            device=flaky,
            host=slow_host,
            device_morsel=5,
            host_morsel=5,
        )


@given(st.lists(st.integers(-5, 5), max_size=80), st.integers(1, 9), st.integers(1, 9))
def test_exclusive_adaptive_still_covers_every_row(data: list[int], dm: int, hm: int) -> None:
    def slow_device(query: Any, rows: RowSource) -> dict[str, Any]:
        time.sleep(0.001)
        return summing_arm(data)(query, rows)

    ex = execute_adaptive(
        "q",
        RowRange(0, len(data)),
        TOTALS,
        device=slow_device,
        host=summing_arm(data),
        device_morsel=dm,
        host_morsel=hm,
        growth=2.0,
        exclusive=True,
    )
    assert ex.result == {"s": sum(data) if data else None, "n": len(data)}
