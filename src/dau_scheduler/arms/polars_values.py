"""What the Polars arm cannot hold as DuckDB means it, found from the data rather than the
query: Arrow types Polars' import panics on, values of a date, time or timestamp column
that Polars reads otherwise (DuckDB's infinities, a TIME of 24:00:00), and decimals too large
for the scale the arm widens decimals to. Such columns are left
out of Polars (``PolarsArm.unloaded``); a query reading one is refused, or fails on the arm
where the rows are read only as it runs (the host then answers). The expression kinds Polars
computes otherwise are :mod:`dau_scheduler.arms.polars_checks`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from dau_scheduler import temporal
from dau_scheduler.arms.polars_frames import widened_scale
from dau_scheduler.lazy import LazyModule

if TYPE_CHECKING:
    import pyarrow.compute as pc
else:
    pc = LazyModule("pyarrow.compute")


def panics_on_import(kind: pa.DataType) -> bool:
    """Arrow types Polars' import panics on, also inside lists, structs and maps. The panic is
    caught, but Rust prints it (with a backtrace under ``RUST_BACKTRACE``) to stderr first, on
    every Session over a table with an INTERVAL column; such columns are left out unread."""
    return pa.types.is_interval(kind) or any(
        panics_on_import(kind.field(i).type) for i in range(kind.num_fields)
    )


#: Days from 1970-01-01 to the first and the last date of Polars' calendar (chrono's),
#: -262143-01-01 and 262142-12-31: past them Polars reads a date's or a timestamp's parts as
#: NULL where DuckDB's dates go on to year 5881580 (``sum(year(d))`` over years 5000000 read
#: 24960887 for DuckDB's 49960887: thirty-first session, probes/temporal.py).
_CALENDAR_DAYS = (-96_465_292, 95_026_236)
#: The largest magnitude of a TIMESTAMP's microseconds since 1970 the arm holds: a column past
#: Polars' calendar is left out of Polars (:func:`beyond_polars`), on every read.
CALENDAR_MICROSECONDS = max(-_CALENDAR_DAYS[0], _CALENDAR_DAYS[1] + 1) * 86_400_000_000


def polars_bounds(kind: pa.DataType) -> tuple[int, int, str] | None:
    """For a date, time or timestamp type, the least and greatest integers of its storage that
    Polars reads as DuckDB means them, and what lies beyond them; None for other types.

    DuckDB's ``infinity`` and ``-infinity`` dates and timestamps are the largest and the
    smallest-but-one integers, which DuckDB keeps apart (their parts are NULL, a cast keeps them
    infinite) and Polars reads as plain far dates (``dayofweek``, ``ts::DATE`` and ``d < ts``
    gave other answers); years past Polars' calendar (:data:`_CALENDAR_DAYS`) it reads as NULL
    parts. DuckDB's ``TIME '24:00:00'`` is a whole day, which Polars' time of day
    does not hold (``max(tm)`` and ``hour(tm)`` differed).
    """
    if pa.types.is_date(kind) or pa.types.is_timestamp(kind):
        top = 2**31 - 1 if kind.bit_width == 32 else 2**63 - 1
        if pa.types.is_date(kind):
            per_day = 1 if pa.types.is_date32(kind) else 86_400_000  # date64: milliseconds
        else:
            per_day = temporal.day(kind)
        first, last = _CALENDAR_DAYS
        low, high = max(-top + 1, first * per_day), min(top - 1, (last + 1) * per_day - 1)
        return low, high, "DuckDB's infinity or a year outside -262143 to 262142"
    if pa.types.is_time(kind):
        return 0, temporal.day(kind) - 1, "24:00:00"
    return None


def decimal_digits(kind: pa.DataType) -> int | None:
    """For a decimal type whose values may not fit once the Polars arm widens it (to
    ``DECIMAL(38, polars_sql.DECIMAL_SCALE)``, or its own scale if finer), the integer digits
    the widened type keeps; None for other types. A DECIMAL(38, 0) of 10**27 made the widening
    cast fail as the partial ran, and the host re-ran the whole query (thirty-second session)."""
    if not pa.types.is_decimal(kind):
        return None
    digits = 38 - widened_scale(kind.scale)
    return digits if kind.precision - kind.scale > digits else None


def _beyond(kind: pa.DataType, least: object, greatest: object) -> str | None:
    """What values from ``least`` to ``greatest`` of a column of ``kind`` hold that Polars reads
    otherwise than DuckDB, or None: integers of a temporal type's storage, or decimals."""
    digits = decimal_digits(kind)
    if digits is not None:
        assert isinstance(least, Decimal) and isinstance(greatest, Decimal)
        if max(abs(least), abs(greatest)) >= Decimal(10) ** digits:
            return f"a value past the {digits} integer digits the Polars arm widens it to"
        return None
    bounds = polars_bounds(kind)
    if bounds is None:
        return None
    low, high, what = bounds
    assert isinstance(least, int) and isinstance(greatest, int)
    return what if least < low or greatest > high else None


def beyond_polars(column: pa.ChunkedArray) -> str | None:
    """What in a date, time, timestamp or decimal column Polars reads otherwise than DuckDB, or
    None."""
    kind = column.type
    if (polars_bounds(kind) is None and decimal_digits(kind) is None) or (
        column.null_count == len(column)
    ):
        return None
    values = column if pa.types.is_decimal(kind) else temporal.integers(column)
    for chunk in values.chunks:  # a temporal column viewed as integers, nothing copied
        ends = pc.min_max(chunk)
        if ends["min"].is_valid and (
            beyond := _beyond(kind, ends["min"].as_py(), ends["max"].as_py())
        ):
            return beyond
    return None


def parquet_beyond_polars(files: Sequence[Path]) -> dict[str, str]:
    """The date, time, timestamp and decimal columns of Parquet files holding what Polars reads
    otherwise than DuckDB (see :func:`polars_bounds` and :func:`decimal_digits`), by name, with
    why: from each row group's statistics, or the column itself where a row group has none
    (Polars reads such files itself, not through :meth:`PolarsArm._import`)."""
    dated = {
        f.name: f.type
        for f in pq.read_schema(files[0])
        if polars_bounds(f.type) is not None or decimal_digits(f.type) is not None
    }
    found: dict[str, str] = {}
    for path in files if dated else ():
        meta = pq.ParquetFile(path).metadata
        for group in (meta.row_group(g) for g in range(meta.num_row_groups)):
            for chunk in (group.column(j) for j in range(group.num_columns)):
                name, stats = chunk.path_in_schema, chunk.statistics
                if name not in dated or name in found:
                    continue
                kind = dated[name]
                ends = _statistics(stats, pa.types.is_decimal(kind))
                if ends is not None:
                    beyond = _beyond(kind, *ends)
                else:
                    beyond = beyond_polars(pq.read_table(path, columns=[name]).column(name))
                if beyond is not None:
                    found[name] = f"{dated[name]} holding {beyond}"
    return found


def _statistics(stats: object, decimal: bool) -> tuple[object, object] | None:
    """A row group's least and greatest value of a column from its statistics: decimals as
    ``Decimal``, temporal values as their storage's integers; None where it has none."""
    if stats is None or not getattr(stats, "has_min_max", False):
        return None
    least, greatest = (
        (getattr(stats, "min", None), getattr(stats, "max", None))
        if decimal
        else (getattr(stats, "min_raw", None), getattr(stats, "max_raw", None))
    )
    kind = Decimal if decimal else int
    if isinstance(least, kind) and isinstance(greatest, kind):
        return least, greatest
    return None


__all__ = [
    "beyond_polars",
    "decimal_digits",
    "panics_on_import",
    "parquet_beyond_polars",
    "polars_bounds",
]
