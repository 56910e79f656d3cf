"""What the Polars arm reads once from the data of the tables it holds, to decide what it may
run: whether a join key repeats (a join of many rows to many, or without a key, is refused),
whether a text column is all ASCII and a date column's years all 1 to 9999 (marks that let
``upper``/``strftime`` through), and row counts. ``TableFacts`` is a base of ``PolarsArm``; the
facts of a table held again are forgotten there (``PolarsArm._hold``)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import TYPE_CHECKING

from sqlglot import exp

from dau_scheduler.guards import arrow_for_device
from dau_scheduler.lazy import LazyModule

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from dau_scheduler.arms import polars_joins
    from dau_scheduler.tables import ConnectionSource
else:
    pl = LazyModule("polars")
    polars_joins = LazyModule("dau_scheduler.arms.polars_joins")

#: The most pairs a join without an equality key may make on this arm: Polars holds them at
#: once (DuckDB's benchmark range_join_big_result: 2.5e9 index pairs, and Rust aborted the
#: process when an allocation failed). 1e8 pairs of row indices are under 1 GB.
UNKEYED_PAIRS = 100_000_000

#: Rows read first when asking whether a join key repeats (``PolarsArm._is_unique``).
UNIQUE_PREFIX = 65_536

#: The most rows a join of many rows to many may make on this arm (for each key value, its rows
#: on one side times those on the other, summed), and such a join is the query's only one:
#: Polars joins in the order written and holds the result at once (TPC-DS Q72 joins
#: catalog_sales to inventory on the item: 2.3e7 rows at SF 0.01 and past 24 GB at SF 1).
MANY_PAIRS = 10_000_000


class TableFacts:
    """The data facts of the tables a Polars arm holds (the module docstring), read once each."""

    name: str
    frames: dict[str, pl.LazyFrame]
    types: dict[str, dict[str, str]]
    _live: dict[str, ConnectionSource]
    #: (table, column) -> whether no two rows hold the same value (see ``_many_to_many``).
    _unique: dict[tuple[str, str], bool]
    #: (table, column) -> whether its text is all ASCII (see ``_ascii_only``).
    _ascii: dict[tuple[str, str], bool]
    #: (table, column) -> whether its years are all 1 to 9999 (see ``_plain_years``).
    _years: dict[tuple[str, str], bool]
    #: (table, column) -> whether a float column holds no NaN (see ``_nan_free``).
    _nans: dict[tuple[str, str], bool]
    #: (table, column) -> the largest magnitude of its values (see ``_magnitude``).
    _magnitudes: dict[tuple[str, str], Decimal | None]
    #: Row counts read by :meth:`_rows`, per table.
    _heights: dict[str, int]
    #: (table, column) -> rows per non-NULL value (``len``), or None where not readable.
    _counts: dict[tuple[str, str], pl.DataFrame | None]

    def _lazy(self, name: str, rows: pa.Table) -> pl.LazyFrame:
        raise NotImplementedError

    def _is_unique(self, table: str, column: str) -> bool:
        """Whether ``table.column`` holds no value twice (NULLs count), read once per arm.

        The first ``UNIQUE_PREFIX`` rows first: a value they repeat is repeated in the column,
        and reading only them keeps a repeating key of a large table cheap (lineitem's
        l_orderkey at TPC-H SF 1 took 124 MB of peak memory read whole, under a 256 MB
        budget). A column they do not repeat is read whole, by the streaming engine."""
        key = (table, column)
        if key not in self._unique:
            try:
                unique = True
                for part in self._column_parts(table, column):
                    counted = part.select(pl.col(column).n_unique(), pl.len())
                    distinct, rows = counted.collect(engine="streaming").row(0)
                    unique = distinct == rows
                    if not unique or rows < UNIQUE_PREFIX:
                        break
            except pl.exceptions.PolarsError:
                # A column Polars cannot read whole (a decimal past its scale: DuckDB's
                # test_decimal_2411.test): not known to repeat; running the partial will tell.
                unique = True
            self._unique[key] = unique
        return self._unique[key]

    def _ascii_only(self, table: str, column: str) -> bool:
        """Whether ``table.column`` holds only ASCII text (no value longer in bytes than in
        characters), read once per arm; False for a user's connection's table (its rows are
        read as each query runs) and for a column this arm does not hold as text."""
        text = pl.col(column)
        wide = text.str.len_bytes() != text.str.len_chars()
        return self._holds_none(self._ascii, table, column, ("VARCHAR",), wide)

    def _plain_years(self, table: str, column: str) -> bool:
        """Whether ``table.column``, a date or plain timestamp, holds only years 1 to 9999 (or
        NULL), read once per arm; False for a user's connection's table and any other column."""
        year = pl.col(column).dt.year()
        return self._holds_none(
            self._years, table, column, ("DATE", "TIMESTAMP"), (year < 1) | (year > 9999)
        )

    def _nan_free(self, table: str, column: str) -> bool:
        """Whether ``table.column``, a DOUBLE or FLOAT, holds no NaN (NULLs and infinities
        aside), read once per arm; False for a user's connection's table and any other column.
        The GPU engine compares floats as IEEE does (``polars_gpu.refuse_nan_comparisons``)."""
        return self._holds_none(
            self._nans, table, column, ("DOUBLE", "FLOAT"), pl.col(column).is_nan()
        )

    def _holds_none(
        self,
        facts: dict[tuple[str, str], bool],
        table: str,
        column: str,
        kinds: tuple[str, ...],
        odd: pl.Expr,
    ) -> bool:
        """Whether no row of ``table.column`` (held as one of ``kinds``) is ``odd``, read once
        per arm into ``facts``; False for a user's connection's table (its rows are read as
        each query runs), a column of another type, or one Polars cannot read so."""
        key = (table, column)
        if key not in facts:
            frame = self.frames.get(table)
            if frame is None or table in self._live:
                return False
            if self.types.get(table, {}).get(column) not in kinds:
                return False
            try:
                found = frame.select(odd.any()).collect(engine="streaming").item()
            except pl.exceptions.PolarsError:
                found = True
            facts[key] = found is False
        return facts[key]

    def _magnitude(self, table: str, column: str) -> Decimal | None:
        """The largest magnitude of ``table.column``'s values, an integer or a decimal column
        (a DATE column's: of its days since 1970, which the arm's date arithmetic adds to),
        read once per arm (0 where it holds none); None for a user's connection's table and
        any other column (``polars_decimals.bound``)."""
        key = (table, column)
        if key not in self._magnitudes:
            frame = self.frames.get(table)
            kind = self.types.get(table, {}).get(column)
            if frame is None or table in self._live or kind is None:
                return None
            found: Decimal | None = None
            data_type = exp.DataType.build(kind, dialect="duckdb")
            if data_type.is_type(*exp.DataType.INTEGER_TYPES, exp.DType.DECIMAL, exp.DType.DATE):
                value = pl.col(column)
                if data_type.is_type(exp.DType.DATE):
                    value = value.cast(pl.Int64)
                try:
                    least, most = (
                        frame.select(value.min().alias("a"), value.max().alias("b"))
                        .collect()
                        .row(0)
                    )
                except pl.exceptions.PolarsError:
                    least = most = None
                else:
                    found = (
                        Decimal(0)
                        if least is None
                        else max(abs(Decimal(least)), abs(Decimal(most)))
                    )
            self._magnitudes[key] = found
        return self._magnitudes[key]

    def _rows(self, table: str) -> int:
        """``table``'s row count (a user's connection's as it is now), read once per arm; 1 for
        a name this arm does not hold (a CTE's, say: not known to be large)."""
        if table not in self._heights:
            live = self._live.get(table)
            if live is not None:
                self._heights[table] = live.num_rows
            elif table in self.frames:
                self._heights[table] = int(self.frames[table].select(pl.len()).collect().item())
            else:
                return 1
        return self._heights[table]

    def _column_parts(self, table: str, column: str) -> Iterator[pl.LazyFrame]:
        """``table``'s first ``UNIQUE_PREFIX`` rows, then all of them; a user's connection's
        table (its frame holds no rows) read as it is now, the one column only."""
        live = self._live.get(table)
        if live is None or column not in self.frames[table].collect_schema().names():
            # (a name the table lacks fails in Polars: not known to repeat)
            yield self.frames[table].head(UNIQUE_PREFIX)
            yield self.frames[table]
            return
        for limit in (UNIQUE_PREFIX, None):
            yield self._lazy(table, arrow_for_device(table, live, self, [column], limit=limit))

    def _joins_refusal(self, text: str, split_table: str) -> str | None:
        """Why the joins of the Polars SQL ``text`` cannot run here: one matches many rows to
        many, or one without an equality key may pair more than ``UNKEYED_PAIRS`` rows."""
        many = self._many_to_many(text, split_table)
        if many is not None:
            return many
        for join, pairs in polars_joins.unkeyed_joins(text, split_table, self._rows):
            if pairs > UNKEYED_PAIRS:
                return (
                    f"{self.name} arm: the join of {join} has no equality key and may pair "
                    f"{pairs:,} rows, which Polars holds at once (DuckDB streams them)"
                )
        return None

    def _many_to_many(self, text: str, split_table: str) -> str | None:
        """A join on one key that neither side holds once per row, where it may make more than
        ``MANY_PAIRS`` rows or is not the query's only one. Polars joins in the order the query
        is written and has no join reordering: TPC-H's joins are a key against a unique key,
        but TPC-DS Q72 joins catalog_sales to inventory on the item alone, and at SF 1 the
        Polars arm grew past 24 GB where DuckDB, reordering, filters first. (The rows a join
        makes are counted from the two tables whole: filters before it only make fewer; a
        second such join would start from the first's rows, which are not counted.)"""
        many = []
        for left, lcol, right, rcol in polars_joins.single_key_joins(text, split_table):
            if left not in self.frames or right not in self.frames:
                continue
            if not self._is_unique(right, rcol) and not self._is_unique(left, lcol):
                many.append((left, lcol, right, rcol, self._pairs(left, lcol, right, rcol)))
        for left, lcol, right, rcol, pairs in many:
            if pairs is None or pairs > MANY_PAIRS or len(many) > 1:
                made = "" if pairs is None else f" (making {pairs:,} rows)"
                return (
                    f"{self.name} arm: the join {left}.{lcol} = {right}.{rcol} matches many rows "
                    f"to many{made}, which Polars runs in the order written (its rows can outgrow "
                    "memory)" + (", beside another such join" if len(many) > 1 else "")
                )
        return None

    def _pairs(self, left: str, lcol: str, right: str, rcol: str) -> int | None:
        """The rows the join ``left.lcol = right.rcol`` makes over the two tables whole: for
        each value, its rows on one side times those on the other; None where not known."""
        counts = self._key_counts(left, lcol), self._key_counts(right, rcol)
        if counts[0] is None or counts[1] is None:
            return None
        try:
            a = counts[0].rename({"len": "a"})
            b = (
                counts[1]
                .rename({rcol: lcol, "len": "b"})
                .with_columns(pl.col(lcol).cast(a.schema[lcol]))
            )
            joined = a.join(b, on=lcol)
            total = joined.select((pl.col("a").cast(pl.Int64) * pl.col("b")).sum()).item()
        except pl.exceptions.PolarsError:
            return None
        return int(total or 0)

    def _key_counts(self, table: str, column: str) -> pl.DataFrame | None:
        """Rows per non-NULL value of ``table.column`` (NULLs match no key), read once per arm
        by the streaming engine; None where Polars cannot read them so."""
        key = (table, column)
        if key not in self._counts:
            live = self._live.get(table)
            try:
                whole = self.frames[table]
                if live is not None:  # (a user's connection's table, as it is now)
                    rows = arrow_for_device(table, live, self, [column])
                    whole = self._lazy(table, rows)
                self._counts[key] = (
                    whole.select(pl.col(column))
                    .drop_nulls()
                    .group_by(column)
                    .len()
                    .collect(engine="streaming")
                )
            except pl.exceptions.PolarsError:
                self._counts[key] = None
        return self._counts[key]


__all__ = ["MANY_PAIRS", "UNIQUE_PREFIX", "UNKEYED_PAIRS", "TableFacts"]
