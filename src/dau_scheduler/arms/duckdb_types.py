"""sqlglot's type annotation with DuckDB's own types for mixed numeric values.

sqlglot ranks numeric types by a precedence list that holds neither the unsigned integers nor
HUGEINT, and it keeps a parameterized type (a DECIMAL(p, s)) over any other. So it types
``ut * y`` over a UTINYINT and a DOUBLE as a UTINYINT, ``d + x`` over a DECIMAL(4, 1) and a
DOUBLE as that decimal, and ``coalesce(d, x)`` likewise, where DuckDB computes a DOUBLE. The
Polars arm decides on those types: an integer SUM is widened through DECIMAL(38, 0) (which
rounded every double: ``sum(ut * y)`` answered -395,250 for -395,625), and an extremum of a
decimal is let through where one of floats is refused (``max(d + x)`` skipped the NaN DuckDB
ranks top). :func:`annotate` runs sqlglot's annotator, but each arithmetic operator, COALESCE,
GREATEST, LEAST, NULLIF, CASE and IF over numeric values (signed integers alone aside: those
stay sqlglot's, and ``integer_types`` gives DuckDB's where it matters; but not beside an integer
literal, which takes the other values' type: ``coalesce(ti, 0)`` is a TINYINT, where sqlglot
says INTEGER) takes DuckDB's kind of type
(single or double precision, decimal, integer): ``typeof`` of the same node over typed NULLs,
asked once per distinct form on a private in-memory DuckDB. A decimal sqlglot types a decimal
keeps sqlglot's width and scale (they describe the arm's values, held at its own scale); an
integer takes DuckDB's type. An integer literal is kept as written (DuckDB types it by its
value and the other side); any other literal is read as sqlglot types it (a DOUBLE), which errs
towards floating point, where the arm refuses more. Not followed: a decimal beside a HUGEINT or
UBIGINT, which DuckDB computes as a DOUBLE where it would need more than 38 digits (the arm
refuses that arithmetic, ``polars_functions.wide_integer_divergence``).
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.optimizer.annotate_types import TypeAnnotator
from sqlglot.schema import ensure_schema

from dau_scheduler.arms.integer_types import literal_value
from dau_scheduler.rewrite.one_type import ONE_TYPE, given_one_type

#: The types DuckDB's binder ranks among numbers (what a typed NULL of each is written as).
_NUMERIC = frozenset(
    {
        *(exp.DataType.INTEGER_TYPES - {exp.DType.BIT}),
        exp.DType.FLOAT,
        exp.DType.DOUBLE,
        exp.DType.DECIMAL,
    }
)
#: Pairs of these sqlglot ranks as DuckDB does (integer_types covers their results).
_SIGNED = frozenset({exp.DType.TINYINT, exp.DType.SMALLINT, exp.DType.INT, exp.DType.BIGINT})

#: The arithmetic whose type is DuckDB's, with the arguments holding its values (and the
#: forms of ``rewrite.one_type``).
_ARITHMETIC: dict[type[exp.Expr], tuple[str, ...]] = {
    exp.Add: ("this", "expression"),
    exp.Sub: ("this", "expression"),
    exp.Mul: ("this", "expression"),
    exp.Div: ("this", "expression"),
    exp.Mod: ("this", "expression"),
    exp.IntDiv: ("this", "expression"),
}
_TYPED = (*ONE_TYPE, *_ARITHMETIC)

_lock = threading.Lock()
_connection: Any = None


@functools.lru_cache(maxsize=4096)
def typeof(sql: str) -> str | None:
    """DuckDB's type of the expression ``sql`` (None where DuckDB cannot bind it)."""
    import duckdb

    global _connection
    with _lock:
        if _connection is None:
            _connection = duckdb.connect()
        try:
            row = _connection.execute(f"SELECT typeof({sql})").fetchone()
        except duckdb.Error:
            return None
    return None if row is None else str(row[0])


def _numeric(node: exp.Expr | None) -> exp.DataType | None:
    kind = node.type if isinstance(node, exp.Expr) else None
    return kind if kind is not None and kind.this in _NUMERIC else None


def _stand_in(node: exp.Expr, kind: exp.DataType) -> exp.Expr:
    """What the probe reads in ``node``'s place: an integer literal as written, else a NULL of
    the type ``node`` was given."""
    bare = node.unnest()
    if isinstance(bare, exp.Literal) and bare.is_int:
        return bare.copy()
    if isinstance(bare, exp.Neg) and isinstance(bare.this, exp.Literal) and bare.this.is_int:
        return bare.copy()
    return exp.Cast(this=exp.null(), to=kind.copy())


def values(node: exp.Expr) -> list[exp.Expr]:
    """The values of an arithmetic operator, COALESCE, GREATEST, LEAST, NULLIF, CASE (its
    branches) or IF (both results): what DuckDB's binder gives a common type."""
    if isinstance(node, ONE_TYPE):
        return given_one_type(node)
    found = [node.args.get(key) for key in _ARITHMETIC.get(type(node), ())]
    return [v for v in found if isinstance(v, exp.Expr)]


def binder_type(node: exp.Expr) -> exp.DataType | None:
    """DuckDB's type of ``node`` (one of the kinds above) from its values' types, or None where
    this leaves sqlglot's: a value of another or unknown type, only signed integers, a form
    DuckDB cannot bind."""
    if not isinstance(node, _TYPED):
        return None
    given = values(node)
    kinds = [_numeric(v) for v in given]
    if not given or any(k is None for k in kinds):
        return None
    typed = [k for k in kinds if k is not None]
    literal = any(literal_value(v) is not None for v in given)
    if all(k.this in _SIGNED for k in typed) and not literal:
        return None
    probe = node.copy()
    for value, data_type in zip(values(probe), typed, strict=True):  # (in the same order)
        value.replace(_stand_in(value, data_type))
    if isinstance(probe, exp.Case):
        for branch in probe.args.get("ifs") or []:
            branch.set("this", exp.Cast(this=exp.null(), to=exp.DataType.build("BOOLEAN")))
        if probe.this is not None:
            probe.set("this", exp.Cast(this=exp.null(), to=exp.DataType.build("INTEGER")))
            for branch in probe.args.get("ifs") or []:
                branch.set("this", exp.Cast(this=exp.null(), to=exp.DataType.build("INTEGER")))
    elif isinstance(probe, exp.If):
        probe.set("this", exp.Cast(this=exp.null(), to=exp.DataType.build("BOOLEAN")))
    found = typeof(probe.sql(dialect="duckdb"))
    if found is None:
        return None
    try:
        return exp.DataType.build(found, dialect="duckdb")
    except (ParseError, ValueError):  # a type sqlglot cannot read back
        return None


def kind(data_type: exp.DataType | None) -> str | None:
    """What the arms decide on: single or double precision, a decimal or an integer."""
    if data_type is None:
        return None
    if data_type.is_type(exp.DType.FLOAT):
        return "single"
    if data_type.is_type(exp.DType.DOUBLE):
        return "double"
    if data_type.is_type(exp.DType.DECIMAL):
        return "decimal"
    return "integer" if data_type.this in _NUMERIC else None


class _DuckDBAnnotator(TypeAnnotator):
    """sqlglot's annotator, whose mixed numeric results are of DuckDB's kind
    (:func:`binder_type`), integers of DuckDB's type (a BIGINT times a HUGEINT is a HUGEINT).
    Where sqlglot's decimal is a decimal for DuckDB too it is kept: it describes the arm's own
    values (decimals held at the arm's scale), which the checks after it read."""

    def _set_type(
        self, expression: exp.Expr, target_type: exp.DataType | exp.DType | None
    ) -> exp.Expr:
        super()._set_type(expression, target_type)
        if isinstance(expression, _TYPED):
            found = binder_type(expression)
            if found is not None and (
                kind(found) != kind(expression.type) or kind(found) == "integer"
            ):
                super()._set_type(expression, found)
        return expression


def annotate(tree: exp.Expr, schema: dict[str, object]) -> exp.Expr:
    """``tree`` annotated as sqlglot's ``annotate_types`` does (DuckDB dialect), with DuckDB's
    types for mixed numeric values."""
    return _DuckDBAnnotator(schema=ensure_schema(schema, dialect="duckdb")).annotate(tree)


__all__ = ["annotate", "binder_type", "kind", "typeof", "values"]
