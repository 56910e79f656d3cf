from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dau_scheduler import (
    ADDITIVE,
    AGGREGATE_REFUSALS,
    BOUNDARY_STATS,
    DEFERRED_MEAN,
    MergeRule,
    SplitError,
    check_split,
    merge_keyed_groups,
    merge_ordered_groups,
    merge_sorted_runs,
    merge_top_k,
    merge_totals,
)

values = st.one_of(st.none(), st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False))
rows_st = st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 5)), values), max_size=40)


def cut_points(n: int) -> list[int]:
    return sorted({0, min(1, n), n // 4, n // 2, max(n - 1, 0), n})


def split_at(rows: list[Any], cut: int) -> list[list[Any]]:
    return [rows[:cut], rows[cut:]]


def sql_sum(vals: list[Any]) -> Any:
    present = [v for v in vals if v is not None]
    return sum(present) if present else None


def group_totals(rows: list[tuple[Any, Any]]) -> list[tuple[Any, Any, int]]:
    out: dict[Any, tuple[Any, int]] = {}
    for k, v in rows:
        s, c = out.get(k, (None, 0))
        if v is not None:
            s = v if s is None else s + v
            c += 1
        out[k] = (s, c)
    return [(k, *out[k]) for k in sorted(out, key=lambda k: (k is None, k))]


def fold(a: tuple[Any, Any, int], b: tuple[Any, Any, int]) -> tuple[Any, Any, int]:
    s = a[1] if b[1] is None else b[1] if a[1] is None else a[1] + b[1]
    return (a[0], s, a[2] + b[2])


def close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return bool(abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b)))


def same_groups(a: list[tuple[Any, Any, int]], b: list[tuple[Any, Any, int]]) -> bool:
    return len(a) == len(b) and all(
        x[0] == y[0] and close(x[1], y[1]) and x[2] == y[2] for x, y in zip(a, b, strict=True)
    )


@given(rows_st)
def test_keyed_groups_equal_unsplit(rows: list[tuple[Any, Any]]) -> None:
    for cut in cut_points(len(rows)):
        partials = [group_totals(part) for part in split_at(rows, cut)]
        merged = merge_keyed_groups(partials, key=lambda r: r[0], fold=fold)
        assert same_groups(merged, group_totals(rows))


@given(rows_st)
def test_ordered_groups_equal_unsplit_on_sorted_rows(rows: list[tuple[Any, Any]]) -> None:
    rows = sorted(rows, key=lambda r: (r[0] is None, r[0]))
    for cut in cut_points(len(rows)):
        partials = [group_totals(part) for part in split_at(rows, cut)]
        merged = merge_ordered_groups(partials, key=lambda r: r[0], fold=fold)
        assert same_groups(merged, group_totals(rows))


def test_ordered_groups_refuse_unsorted_rows() -> None:
    with pytest.raises(SplitError, match="not strictly ascending"):
        merge_ordered_groups([[(1, 1, 1), (0, 1, 1)], []], key=lambda r: r[0], fold=fold)
    with pytest.raises(SplitError, match="not sorted on the group key across"):
        merge_ordered_groups([[(5, 1, 1)], [(2, 1, 1)]], key=lambda r: r[0], fold=fold)
    with pytest.raises(SplitError, match="not strictly ascending"):
        merge_ordered_groups([[(1, 1, 1), (1, 2, 1)]], key=lambda r: r[0], fold=fold)


@given(st.lists(st.tuples(st.integers(0, 4), st.integers()), max_size=30), st.booleans())
def test_sorted_runs_are_stable_with_earlier_arm_first(
    rows: list[tuple[int, int]], descending: bool
) -> None:
    tagged = [(k, i) for i, (k, _) in enumerate(rows)]
    for cut in cut_points(len(tagged)):
        partials = [
            sorted(p, key=lambda r: r[0], reverse=descending) for p in split_at(tagged, cut)
        ]
        merged = merge_sorted_runs(partials, key=lambda r: r[0], descending=descending)
        assert merged == sorted(tagged, key=lambda r: r[0], reverse=descending)


@given(st.lists(st.integers(0, 6), max_size=30), st.integers(0, 10), st.booleans())
def test_top_k_equals_unsplit_top_k(keys: list[int], k: int, descending: bool) -> None:
    tagged = [(key, i) for i, key in enumerate(keys)]
    whole = sorted(tagged, key=lambda r: r[0], reverse=descending)[:k]
    for cut in cut_points(len(tagged)):
        partials = [
            sorted(p, key=lambda r: r[0], reverse=descending)[:k] for p in split_at(tagged, cut)
        ]
        assert merge_top_k(partials, limit=k, key=lambda r: r[0], descending=descending) == whole


@given(st.lists(st.tuples(values, st.one_of(st.none(), st.integers(0, 9))), max_size=30))
def test_totals_rederive_ratios(rows: list[tuple[Any, Any]]) -> None:
    def totals(part: list[tuple[Any, Any]]) -> dict[str, Any]:
        return {"num": sql_sum([r[0] for r in part]), "den": sql_sum([r[1] for r in part])}

    def ratio(t: dict[str, Any]) -> Any:
        return None if t["num"] is None or not t["den"] else t["num"] / t["den"]

    for cut in cut_points(len(rows)):
        merged = merge_totals(
            [totals(p) for p in split_at(rows, cut)], ["num", "den"], finalize=ratio
        )
        assert (
            close(merged, ratio(totals(rows)))
            if merged is not None
            else ratio(totals(rows)) is None
        )


def test_totals_of_nulls_are_null_and_missing_names_are_named() -> None:
    assert merge_totals([{"a": None}, {"a": None}], ["a"]) == {"a": None}
    assert merge_totals([], ["a"]) == {"a": None}
    with pytest.raises(SplitError, match="'b'"):
        merge_totals([{"a": 1}], ["b"])


def rule(**kw: Any) -> MergeRule:
    return MergeRule(terminal="totals", combine=lambda ps: sum(ps), mergeable=ADDITIVE, **kw)


def test_merge_rule_combines_in_arm_order_and_honours_failure() -> None:
    seen: list[Any] = []
    r = MergeRule(terminal="list", combine=lambda ps: seen.extend(ps) or list(ps))
    assert r.merge(["device", "host"]) == ["device", "host"]
    failed = rule(failed=lambda p: p < 0)
    assert failed.merge([3, -1]) == -1
    assert failed.merge([3, 4]) == 7


def test_refusal_never_reaches_combine() -> None:
    def boom(_: Any) -> Any:
        raise AssertionError("combine reached")

    r = MergeRule(terminal="window", combine=boom, refusal="window functions see every row")
    with pytest.raises(SplitError, match="window functions"):
        r.merge([1, 2])
    with pytest.raises(SplitError, match="window functions"):
        check_split(r)


def test_check_split_is_default_deny_and_names_output_and_kind() -> None:
    r = rule()
    check_split(r, [("total", "sum"), ("n", "count_star")])
    with pytest.raises(SplitError, match=r"'med'.*'median'.*every value"):
        check_split(r, [("total", "sum"), ("med", "median")])
    with pytest.raises(SplitError, match=r"'u'.*'count_distinct'"):
        check_split(r, [("u", "count_distinct")])
    with pytest.raises(SplitError, match=r"'x'.*'my_udaf'.*not proven"):
        check_split(r, [("x", "my_udaf")])
    with pytest.raises(SplitError, match=r"'y'.*'bit_xor_distinct'.*DISTINCT"):
        check_split(r, [("y", "bit_xor_distinct")])


def test_constants_use_duckdb_names_and_every_refusal_has_a_reason() -> None:
    assert {"sum", "count", "count_star"} == ADDITIVE
    assert {"min", "max"} <= BOUNDARY_STATS
    assert "avg" in DEFERRED_MEAN
    assert all(k == k.lower() and reason for k, reason in AGGREGATE_REFUSALS.items())
    assert not (ADDITIVE | BOUNDARY_STATS | DEFERRED_MEAN) & AGGREGATE_REFUSALS.keys()


def test_merge_totals_adds_decimals_past_28_digits() -> None:
    """Python's default decimal context keeps 28 digits; a DECIMAL(38, 2) total has up to 38."""
    wide = Decimal("1" * 30 + ".25")
    merged = merge_totals([{"s": wide}, {"s": Decimal("0.01")}, {"s": None}], ["s"])
    assert merged == {"s": Decimal("1" * 30 + ".26")}
