"""Arrow's dates, times, timestamps and durations as the integers they are stored as.

DuckDB's ``infinity`` dates and timestamps, years before 1 or after 9999 and a TIME of
24:00:00 have no Python ``datetime`` (pyarrow raises, or reads 24:00:00 as 00:00:00 without a
word), but their integers order and compare as the values do. The fold, the comparator, the CLI
and the Polars arm's far-value check read them so.
"""

from __future__ import annotations

import pyarrow as pa

#: A time type's units per second, by its unit.
_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


def is_stored_as_integer(kind: pa.DataType) -> bool:
    """Whether ``kind`` is a date, time, timestamp or duration (an interval is not one)."""
    return pa.types.is_temporal(kind) and not pa.types.is_interval(kind)


def integers(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """``column`` (see :func:`is_stored_as_integer`) viewed as its integers, nothing copied."""
    storage = pa.int32() if column.type.bit_width == 32 else pa.int64()
    return pa.chunked_array([chunk.view(storage) for chunk in column.chunks], storage)


def day(kind: pa.DataType) -> int:
    """How many of a time type's units make a whole day (DuckDB's TIME '24:00:00')."""
    return 86_400 * _PER_SECOND[str(kind.unit)]


__all__ = ["day", "integers", "is_stored_as_integer"]
