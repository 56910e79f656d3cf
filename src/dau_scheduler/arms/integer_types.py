"""DuckDB's result type of integer ``+``, ``-`` and ``*``, for arms that compute it elsewhere.

An arm that must raise where DuckDB raises on an integer overflow computes the operation wide
and casts the value back to the type DuckDB gives the result (``polars_arithmetic``). That type
is DuckDB's, not sqlglot's: sqlglot types ``ti + 1`` over a TINYINT as an INTEGER where DuckDB
keeps a TINYINT (an integer literal takes the type of the other side where it fits), so the
Polars arm answered ``ti + 1 = 128`` where DuckDB raises an overflow; and it types ``ti + u``
over a TINYINT and a UTINYINT as a TINYINT where DuckDB widens to a BIGINT (a failure the host
then answers). The table of types is measured on a private in-memory DuckDB once per process;
literals follow DuckDB's rule (checked against DuckDB by tests/test_error_parity.py).
"""

from __future__ import annotations

import functools

from sqlglot import exp

#: sqlglot's integer types by DuckDB's name, and the range of each.
_TYPES: dict[str, tuple[exp.DType, int, int]] = {
    "TINYINT": (exp.DType.TINYINT, -(2**7), 2**7 - 1),
    "SMALLINT": (exp.DType.SMALLINT, -(2**15), 2**15 - 1),
    "INTEGER": (exp.DType.INT, -(2**31), 2**31 - 1),
    "BIGINT": (exp.DType.BIGINT, -(2**63), 2**63 - 1),
    "HUGEINT": (exp.DType.INT128, -(2**127), 2**127 - 1),
    "UTINYINT": (exp.DType.UTINYINT, 0, 2**8 - 1),
    "USMALLINT": (exp.DType.USMALLINT, 0, 2**16 - 1),
    "UINTEGER": (exp.DType.UINT, 0, 2**32 - 1),
    "UBIGINT": (exp.DType.UBIGINT, 0, 2**64 - 1),
}
_NAMES = {sqlglot_type: name for name, (sqlglot_type, _, _) in _TYPES.items()}
_OPERATORS: dict[type[exp.Expr], str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}


@functools.cache
def _measured() -> dict[tuple[str, str, str], str]:
    """(operator, left type, right type) -> DuckDB's result type, for every pair of types."""
    import duckdb

    keys = [(o, a, b) for o in _OPERATORS.values() for a in _TYPES for b in _TYPES]
    columns = ", ".join(f"NULL::{name} AS {name.lower()}" for name in _TYPES)
    calls = ", ".join(f"typeof({a.lower()} {o} {b.lower()})" for o, a, b in keys)
    con = duckdb.connect()
    try:
        row = con.execute(f"SELECT {calls} FROM (SELECT {columns})").fetchall()[0]
    finally:
        con.close()
    return dict(zip(keys, (str(name) for name in row), strict=True))


def integer_range(data_type: exp.DataType) -> tuple[int, int] | None:
    """The least and greatest value of an integer type (DuckDB's), or None for another type."""
    for sqlglot_type, low, high in _TYPES.values():
        if data_type.is_type(sqlglot_type):
            return low, high
    return None


def is_integer(data_type: exp.DataType | None) -> bool:
    """An integer type, or BOOLEAN (which DuckDB's arithmetic reads as one)."""
    return data_type is not None and (
        data_type.is_type(*exp.DataType.INTEGER_TYPES) or data_type.is_type("BOOLEAN")
    )


def literal_value(node: exp.Expr | None, parens: bool = True) -> int | None:
    """The value of an integer literal, a negative one too (DuckDB folds ``-1`` and, with
    ``parens``, ``(1)`` into one), else None."""
    if node is None:
        return None
    if parens:
        node = node.unnest()
    if isinstance(node, exp.Neg):
        inner = literal_value(node.this, parens)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and node.is_int:
        return int(node.this)
    return None


def _literal_type(value: int, other: str) -> str:
    """DuckDB's type of an integer literal beside a value of type ``other``: that type where
    the value fits it, else the narrowest of INTEGER, BIGINT and HUGEINT that holds the number
    as written before its minus sign (``-2147483648`` is a BIGINT), BIGINT's least aside."""
    _, low, high = _TYPES[other]
    return other if low <= value <= high else literal_type_alone(value)


def literal_type_alone(value: int) -> str:
    """DuckDB's type of an integer literal of its own (or beside a decimal)."""
    if abs(value) <= _TYPES["INTEGER"][2]:
        return "INTEGER"
    return "BIGINT" if _TYPES["BIGINT"][1] <= value <= _TYPES["BIGINT"][2] else "HUGEINT"


def result_type(
    op: exp.Expr, left: exp.DataType | None, right: exp.DataType | None
) -> exp.DataType | None:
    """DuckDB's type of the integer ``op`` (Add, Sub or Mul) over operands of types ``left``
    and ``right`` (a literal operand's own type is not read), or None where it is not one this
    knows (a type outside the table, another operator)."""
    operator = _OPERATORS.get(type(op))
    if operator is None:
        return None
    values = (literal_value(op.args["this"]), literal_value(op.args["expression"]))
    if values[0] is not None and values[1] is not None:  # DuckDB folds it, in these types
        alone = literal_type_alone(values[0]), literal_type_alone(values[1])
        found = _measured().get((operator, *alone))
        return exp.DataType.build(_TYPES[found][0]) if found in _TYPES else None
    names = [
        None if value is not None or given is None else _NAMES.get(given.this)
        for value, given in zip(values, (left, right), strict=True)
    ]
    if values[0] is not None and names[1] is not None:
        names[0] = _literal_type(values[0], names[1])
    if values[1] is not None and names[0] is not None:
        names[1] = _literal_type(values[1], names[0])
    if names[0] is None or names[1] is None:
        return None
    found = _measured().get((operator, names[0], names[1]))
    return exp.DataType.build(_TYPES[found][0]) if found in _TYPES else None


__all__ = ["is_integer", "literal_type_alone", "literal_value", "result_type"]
