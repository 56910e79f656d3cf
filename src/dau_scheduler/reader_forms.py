"""What pyarrow reads otherwise than DuckDB's own scan of the same Parquet file.

Rows are read by pyarrow where the memory must stay bounded (a chunk under a budget, a row
group at a time) and, for the Polars arm, where Polars' own reader cannot read a file. DuckDB's
scan is the answer, and pyarrow reads a few columns as other types: a TIMESTAMP(MILLIS) column
is a TIMESTAMP to DuckDB's scan but a TIMESTAMP_MS over pyarrow's column (``typeof`` and
type-dependent functions answered otherwise), an INTERVAL 12 raw bytes (a BLOB: a crash), an
INT96 timestamp nanoseconds where DuckDB reads microseconds; and DuckDB renames duplicate or
empty column names (``COLUMN`` beside ``column`` is ``COLUMN_1``), which pyarrow keeps, so a
chunk read for ``COLUMN_1`` held no such column (count 0 for 3). :func:`compare_readers` works
it out once per table from empty tables: per column, the cast that makes pyarrow's column read
as DuckDB's (only a timestamp widened to a finer unit), or none, and what concerns the whole
table.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

_UNITS = ("s", "ms", "us", "ns")


def widens(got: pa.DataType, want: pa.DataType) -> bool:
    """Whether casting ``got`` to ``want`` keeps every value: a timestamp to a finer unit of
    the same zone. Nothing else is cast: an INT96 timestamp is nanoseconds to pyarrow and
    microseconds to DuckDB, which a cast would have to round as DuckDB does."""
    return (
        pa.types.is_timestamp(got)
        and pa.types.is_timestamp(want)
        and got.tz == want.tz
        and _UNITS.index(want.unit) >= _UNITS.index(got.unit)
    )


@dataclass(frozen=True)
class ReaderForms:
    """pyarrow's reading of one file against DuckDB's: ``file``, its name; ``columns``, by
    lower-case name, those read as another type: (DuckDB's type, its type over pyarrow's
    column, the Arrow type pyarrow's column is cast to, or None where no cast makes it
    DuckDB's); ``whole``, why no column of the table can stand for DuckDB's ('' if any can)."""

    file: str
    columns: dict[str, tuple[str, str, pa.DataType | None]] = field(default_factory=dict)
    whole: str = ""

    def raw_columns(self) -> dict[str, str]:
        """The columns no cast makes DuckDB's, with what each is to DuckDB and to pyarrow."""
        return {
            k: f"{own}, which pyarrow reads as {via}"
            for k, (own, via, to) in self.columns.items()
            if to is None
        }

    def read_otherwise(self, columns: Collection[str]) -> str | None:
        """Why rows of ``columns`` read by pyarrow cannot stand for DuckDB's scan, or None."""
        where = f"{self.file}, whose rows this path reads with pyarrow"
        if self.whole:
            return f"{self.whole} ({where})"
        for name in columns:
            form = self.columns.get(name.lower())
            if form is not None and form[2] is None:
                return (
                    f"pyarrow reads column {name} as {form[1]} where DuckDB reads {form[0]} "
                    f"({where})"
                )
        return None

    def conform(self, table: pa.Table) -> pa.Table:
        """``table`` (read by pyarrow) with each column that has a cast cast to it."""
        for index, name in enumerate(table.column_names):
            form = self.columns.get(name.lower())
            if form is not None and form[2] is not None:
                table = table.set_column(
                    index, table.field(index).with_type(form[2]), table.column(index).cast(form[2])
                )
        return table


def compare_readers(path: Path) -> ReaderForms:
    """pyarrow's reading of ``path`` against DuckDB's scan of it, from empty tables."""
    try:
        return _compare(path)
    except (duckdb.Error, pa.ArrowException, OSError) as exc:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return ReaderForms(path.name, whole=f"pyarrow's reading could not be compared: {why}")


def _compare(path: Path) -> ReaderForms:
    arrow = pq.ParquetFile(path, pre_buffer=False).schema_arrow  # extension types kept
    con = duckdb.connect()
    try:
        listed = str(path).replace("'", "''")
        own = con.sql(f"SELECT * FROM read_parquet('{listed}', hive_partitioning = false)")
        if list(own.columns) != arrow.names:
            return ReaderForms(
                path.name,
                whole=(
                    f"DuckDB's scan names its columns {own.columns[:4]}, pyarrow {arrow.names[:4]}"
                ),
            )
        con.register("__dau_pyarrow", pa.Table.from_batches([], schema=arrow))
        via = con.sql("SELECT * FROM __dau_pyarrow")
        own_types = dict(zip(own.columns, map(str, own.types), strict=True))
        own_arrow = own.limit(0).to_arrow_table().schema
        columns: dict[str, tuple[str, str, pa.DataType | None]] = {}
        for name, kind in zip(via.columns, map(str, via.types), strict=True):
            if own_types[name] != kind:
                columns[name.lower()] = (
                    own_types[name],
                    kind,
                    _cast_to(con, arrow.field(name), own_arrow.field(name), own_types[name]),
                )
        return ReaderForms(path.name, columns)
    finally:
        con.close()


def _cast_to(
    con: duckdb.DuckDBPyConnection, got: pa.Field, want: pa.Field, own: str
) -> pa.DataType | None:
    """``want``'s type where casting ``got`` to it widens a timestamp and DuckDB then reads it
    as ``own``; None otherwise."""
    if not widens(got.type, want.type):
        return None
    try:
        empty = pa.Table.from_batches([], schema=pa.schema([got]))
        con.register("__dau_cast", empty.cast(pa.schema([want])))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    return want.type if str(con.sql("SELECT * FROM __dau_cast").types[0]) == own else None


__all__ = ["ReaderForms", "compare_readers", "widens"]
