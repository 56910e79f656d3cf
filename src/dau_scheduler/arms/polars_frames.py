"""How the Polars arm holds a table's columns: their SQL types as the translation reads them
(held, and as stored), their names as sqlglot reads DuckDB's identifiers, and decimals widened to
``polars_sql.DECIMAL_SCALE`` digits so products of decimal columns stay exact in Polars."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, TypeVar

from dau_scheduler.lazy import LazyModule

if TYPE_CHECKING:
    import polars as pl

    from dau_scheduler.arms import polars_sql as _sql
else:
    pl = LazyModule("polars")
    _sql = LazyModule("dau_scheduler.arms.polars_sql")


@cache
def _sql_types() -> dict[type[pl.DataType], str]:
    return {
        pl.Int8: "TINYINT",
        pl.Int16: "SMALLINT",
        pl.Int32: "INT",
        pl.Int64: "BIGINT",
        pl.Int128: "INT128",
        pl.UInt8: "UTINYINT",
        pl.UInt16: "USMALLINT",
        pl.UInt32: "UINT",
        pl.UInt64: "UBIGINT",
        pl.Float32: "FLOAT",
        pl.Float64: "DOUBLE",
        pl.Boolean: "BOOLEAN",
        pl.String: "VARCHAR",
        pl.Date: "DATE",
        pl.Time: "TIME",
        pl.Binary: "BLOB",
    }


def sql_type_of(dtype: pl.DataType) -> str | None:
    """The SQL type the translation reads a Polars column of ``dtype`` as (None: none)."""
    if isinstance(dtype, pl.Decimal):
        return f"DECIMAL({dtype.precision or 38}, {dtype.scale or 0})"
    if isinstance(dtype, pl.Datetime):
        # The unit is part of the type: a cast to a coarser one rounds in DuckDB.
        units = {"ns": "TIMESTAMP_NS", "ms": "TIMESTAMP_MS"}
        return "TIMESTAMPTZ" if dtype.time_zone else units.get(dtype.time_unit, "TIMESTAMP")
    return _sql_types().get(type(dtype))


def sql_types_of(frame: pl.LazyFrame) -> dict[str, str]:
    """The SQL type of each column of ``frame`` the translation knows a type for."""
    return {
        column: sql_type
        for column, dtype in frame.collect_schema().items()
        if (sql_type := sql_type_of(dtype)) is not None
    }


_Frame = TypeVar("_Frame", "pl.DataFrame", "pl.LazyFrame")


ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def lowercase_names(frame: pl.LazyFrame) -> pl.LazyFrame:
    """``frame`` with its columns named as the partial's SQL names them: sqlglot reads DuckDB's
    identifiers without case (A-Z lowered, the rest kept) and Polars' SQL is case-sensitive, so
    a column ``"CamelCase"`` was "no column named 'camelcase'". Kept where two names would meet
    (a Parquet file's ``column`` and ``COLUMN``, which DuckDB reads as two other names)."""
    names = frame.collect_schema().names()
    lowered = [n.translate(ASCII_LOWER) for n in names]
    if lowered == names or len(set(lowered)) < len(names):
        return frame
    return frame.rename(dict(zip(names, lowered, strict=True)))


def widened_scale(scale: int) -> int:
    """The fractional digits the arm holds a decimal of ``scale`` at: ``DECIMAL_SCALE``, or its
    own if more (:func:`widen_decimals`)."""
    return max(_sql.DECIMAL_SCALE, scale)


def widen_decimals(frame: _Frame) -> _Frame:
    """``frame`` with each decimal column at ``DECIMAL_SCALE`` digits (or its own, if more)."""
    schema = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    casts = [
        pl.col(name).cast(pl.Decimal(38, widened_scale(dtype.scale or 0)))
        for name, dtype in schema.items()
        if isinstance(dtype, pl.Decimal)
    ]
    return frame.with_columns(casts) if casts else frame


__all__ = [
    "ASCII_LOWER",
    "lowercase_names",
    "sql_type_of",
    "sql_types_of",
    "widen_decimals",
    "widened_scale",
]
