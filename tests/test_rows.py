from __future__ import annotations

import sys

import pytest

from dau_scheduler import RowBatch, RowRange, RowSource, SplitError, as_row_source


def test_row_range_costs_two_integers_whatever_it_names() -> None:
    small, huge = RowRange(0, 10), RowRange(0, 10**15)
    assert sys.getsizeof(small) == sys.getsizeof(huge)
    assert not hasattr(huge, "__dict__")
    assert len(huge) == 10**15


def test_slice_is_relative_in_absolute_out() -> None:
    r = RowRange(100, 200).slice(10, 20)
    assert (r.start, r.stop) == (110, 120)
    assert r.slice(5, 10) == RowRange(115, 120)


def test_row_batch_wraps_and_slices_without_copying() -> None:
    rows = list(range(50))
    batch = RowBatch(rows, start=1000)
    assert batch.rows is rows
    part = batch.slice(10, 20)
    assert (part.start, part.stop) == (1010, 1020)
    assert list(part) == list(range(10, 20))
    rows[15] = -1  # a view, not a copy
    assert list(part)[5] == -1
    assert list(part.slice(2, 4)) == [12, 13]


def test_as_row_source_passes_wraps_and_drains() -> None:
    r = RowRange(0, 3)
    assert as_row_source(r) is r
    rows = [1, 2, 3]
    wrapped = as_row_source(rows)
    assert isinstance(wrapped, RowBatch) and wrapped.rows is rows
    drained = as_row_source(iter(rows))
    assert list(drained) == rows and list(drained) == rows  # readable twice


@pytest.mark.parametrize("bounds", [(-1, 3), (5, 2), (0, 11)])
def test_bad_slices_name_the_range(bounds: tuple[int, int]) -> None:
    with pytest.raises(SplitError, match="row range"):
        RowRange(0, 10).slice(*bounds)


def test_range_has_no_values() -> None:
    with pytest.raises(SplitError, match="offset only"):
        RowRange(0, 2).values()
    assert isinstance(RowRange(0, 1), RowSource)
