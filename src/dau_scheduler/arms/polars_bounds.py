"""What the Polars arm's data says of a value's size (``polars_decimals.DataBounds``), and the
check that a user's connection's rows still keep to what the arm's SQL was written for.

A held table's facts are read once (``TableFacts._magnitude``, ``_rows``). A user's connection's
rows are read as each query runs, so on the CPU engine, whose strict casts check overflow
anyway, they have no bounds. The GPU engine's casts do not check (``polars_gpu``): there a
column's largest magnitude (a DATE column's days since 1970; and a table's rows, for a SUM's
bound) is read from the connection
as the partial is translated, the SQL leaves out the checks that bound makes needless, and each
run first reads the rows it is given: a value or a row count past its bound (the table changed
since) is an arm failure, and the host answers the whole query (``check_live_bounds``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

import duckdb
from sqlglot import exp

from dau_scheduler.errors import SqlError
from dau_scheduler.lazy import LazyModule
from dau_scheduler.rewrite.planner import PLACEHOLDER, CompiledSplit

if TYPE_CHECKING:
    import polars as pl

    from dau_scheduler.arms.polars import PolarsArm
else:
    pl = LazyModule("polars")


class DataBoundsOf:
    """``polars_decimals.DataBounds`` of ``arm``'s data, the placeholder read as the split
    table; what it read of a connection's rows is :attr:`assumed`."""

    def __init__(self, arm: PolarsArm, split: str) -> None:
        self._arm, self._split = arm, split
        #: (frame name as the SQL reads it, column) -> the bound read from the connection (a
        #: column of None: the most rows the frame may hold; a bound of None: a float column
        #: that held no NaN, which the GPU engine compares as DuckDB does).
        self.assumed: dict[tuple[str, str | None], Decimal | None] = {}

    def _name(self, table: str) -> str:
        return self._split if table == PLACEHOLDER else table

    def magnitude(self, table: str, column: str) -> Decimal | None:
        name = self._name(table)
        source = self._arm._live.get(name)
        if source is None:
            return self._arm._magnitude(name, column)
        if self._arm.checked_casts:
            return None
        found = _read_magnitude(source, column, self._arm.types.get(name, {}).get(column))
        if found is not None:
            self.assumed[(table, column)] = found
        return found

    def nan_free(self, table: str, column: str) -> bool:
        """Whether a float column holds no NaN: a held table's fact (``_nan_free``), read once;
        a user's connection's, read from it now on the GPU engine, whose comparisons are IEEE's
        (``polars_gpu.refuse_nan_comparisons``), and checked again on each run's rows."""
        name = self._name(table)
        source = self._arm._live.get(name)
        if source is None:
            return self._arm._nan_free(name, column)
        if self._arm.nan_ordered:
            return False
        if not _read_nan_free(source, column, self._arm.types.get(name, {}).get(column)):
            return False
        self.assumed[(table, column)] = None
        return True

    def rows(self, table: str) -> int | None:
        name = self._name(table)
        source = self._arm._live.get(name)
        if source is not None and not self._arm.checked_casts:
            found = _read_rows(source)
            if found is not None:
                self.assumed[(table, None)] = Decimal(found)
            return found
        if source is not None or name not in self._arm.frames:
            return None
        return self._arm._rows(name)

    def remember(self, compiled: CompiledSplit, key: str) -> None:
        """Keep :attr:`assumed` beside the arm's SQL (``CompiledSplit.arm_bounds[key]``) for
        :func:`check_live_bounds`."""
        if self.assumed:
            ordered = sorted(self.assumed.items(), key=lambda item: (item[0][0], item[0][1] or ""))
            compiled.arm_bounds[key] = [(t, c, b) for (t, c), b in ordered]


def _quoted(column: str) -> str:
    """``column`` as a quoted SQL name (DuckDB's and Polars' alike)."""
    return '"' + column.replace('"', '""') + '"'


def _read_magnitude(source: Any, column: str, kind: str | None) -> Decimal | None:
    """The largest magnitude of a connection's numeric column now (of a DATE column's days
    since 1970, as a held one's: ``TableFacts._magnitude``), or None (a DATE column holding
    ``infinity`` too)."""
    if kind is None:
        return None
    data_type = exp.DataType.build(kind, dialect="duckdb")
    if not data_type.is_type(*exp.DataType.INTEGER_TYPES, exp.DType.DECIMAL, exp.DType.DATE):
        return None
    quoted = _quoted(column)
    value, infinite = quoted, "0"
    if data_type.is_type(exp.DType.DATE):
        value = f"date_diff('day', DATE '1970-01-01', {quoted})"  # (NULL for an infinity)
        infinite = f"count({quoted}) - count({value})"
    sql = f"SELECT min({value}), max({value}), {infinite} FROM {source.ref}"
    try:
        least, most, infinities = source.con.cursor().execute(sql).fetchone() or (None, None, 0)
    except duckdb.Error:
        return None
    return None if infinities else _magnitude(least, most)


def _read_nan_free(source: Any, column: str, kind: str | None) -> bool:
    """Whether a connection's DOUBLE or FLOAT column holds no NaN now."""
    if kind not in ("DOUBLE", "FLOAT"):
        return False
    quoted = _quoted(column)
    sql = f"SELECT count(*) FILTER (WHERE isnan({quoted})) FROM {source.ref}"
    try:
        found = source.con.cursor().execute(sql).fetchone()
    except duckdb.Error:
        return False
    return bool(found) and found[0] == 0


def _magnitude(least: Any, most: Any) -> Decimal:
    """The largest magnitude between a column's least and greatest values (0 for none)."""
    if least is None or most is None:
        return Decimal(0)
    return max(abs(Decimal(least)), abs(Decimal(most)))


def _read_rows(source: Any) -> int | None:
    """How many rows a connection's table holds now, or None."""
    try:
        found = source.con.cursor().execute(f"SELECT count(*) FROM {source.ref}").fetchone()
    except duckdb.Error:
        return None
    return int(found[0]) if found else None


def check_live_bounds(compiled: CompiledSplit, key: str, context: Any, arm: str) -> None:
    """Raise where the rows a partial is given (``context``'s frames) hold a value past a bound
    its SQL assumed of a connection's table: the table changed since it was translated. One
    pass over each frame reads its rows and every bounded column's least and greatest value."""
    by_frame: dict[str, list[tuple[str | None, Decimal | None]]] = {}
    for frame, column, bound in compiled.arm_bounds.get(key, []):
        by_frame.setdefault(frame, []).append((column, bound))
    for frame, bounds in by_frame.items():
        reads = ["COUNT(*)"]
        schema = context.execute(f'SELECT * FROM "{frame}"').collect_schema()
        for column, bound in bounds:
            if column is not None:
                quoted = _quoted(column)
                if bound is None:  # NaNs, counted on the CPU engine (NaN equal to NaN there)
                    width = "REAL" if schema.get(column) == pl.Float32 else "DOUBLE"
                    nan = f"CAST('nan' AS {width})"
                    reads += [f"SUM(CASE WHEN {quoted} = {nan} THEN 1 ELSE 0 END)", "0"]
                    continue
                if schema.get(column) == pl.Date:  # (its days since 1970)
                    quoted = f"CAST({quoted} AS BIGINT)"
                reads += [f"MIN({quoted})", f"MAX({quoted})"]
        outputs = ", ".join(f"{read} AS v{k}" for k, read in enumerate(reads))
        row = context.execute(f'SELECT {outputs} FROM "{frame}"').collect().row(0)
        values = iter(row[1:])
        for column, bound in bounds:
            if column is None:  # a row count
                if row[0] > bound:
                    raise SqlError(
                        f"{arm} arm: {frame} holds {row[0]} rows now, past the {bound} its SQL "
                        "was written for (the table changed)"
                    )
                continue
            if bound is None:
                nans, _ = next(values), next(values)
                if nans:
                    raise SqlError(
                        f"{arm} arm: {frame}.{column} holds NaN now, which its SQL was written "
                        "to compare without (the table changed)"
                    )
                continue
            found = _magnitude(next(values), next(values))
            if found > bound:
                raise SqlError(
                    f"{arm} arm: {frame}.{column} holds {found} now, past the {bound} its SQL "
                    "was written for (the table changed)"
                )


__all__ = ["DataBoundsOf", "check_live_bounds"]
