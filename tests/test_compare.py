"""compare_tables: Arrow's own equality answers the common case; whatever it cannot decide (NaN,
floats within the tolerance, nested columns that do not sort) is compared row by row."""

from __future__ import annotations

import pyarrow as pa

from dau_scheduler.compare import compare_tables

NAN = float("nan")


def test_rows_in_another_order_are_equal_unordered_only() -> None:
    a = pa.table({"x": [1, 2, None], "s": ["a", "b", None]})
    b = pa.table({"x": [None, 2, 1], "s": [None, "b", "a"]})
    assert compare_tables(a, b, ordered=False) is None
    assert compare_tables(a, b) is not None


def test_nan_zero_signs_and_the_tolerance_are_decided_row_by_row() -> None:
    a = pa.table({"x": [1.0, NAN, None, -0.0]})
    assert compare_tables(a, pa.table({"x": [NAN, 1.0, 0.0, None]}), ordered=False) is None
    assert compare_tables(a, pa.table({"x": [1.0 + 1e-12, NAN, None, 0.0]})) is None
    diff = compare_tables(a, pa.table({"x": [2.0, NAN, None, 0.0]}), ordered=False)
    assert diff is not None and "1.0 != 2.0" in diff


def test_nested_columns_that_arrow_does_not_sort_still_compare() -> None:
    a = pa.table({"l": [[1, 2], [3]], "k": [1, 2]})
    b = pa.table({"l": [[3], [1, 2]], "k": [2, 1]})
    assert compare_tables(a, b, ordered=False) is None
    assert compare_tables(a, b) is not None


def test_types_and_names_are_checked_before_values() -> None:
    a = pa.table({"x": pa.array([1], pa.int32())})
    diff = compare_tables(a, pa.table({"x": pa.array([1], pa.int64())}))
    assert diff is not None and "type" in diff
    diff = compare_tables(a, pa.table({"y": pa.array([1], pa.int32())}))
    assert diff is not None and "names" in diff
