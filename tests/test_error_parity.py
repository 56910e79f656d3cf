"""Errors: overflow on the Polars arm raises where DuckDB raises (arms/integer_types.py,
arms/polars_arithmetic.py, arms/polars_decimals.py). Polars wraps integer arithmetic around; the
arm computes it in a wide decimal and casts back to the type DuckDB gives the result, strictly.
That type was sqlglot's, which is wider where a literal fits the other side (``ti + 1`` over a
TINYINT), and the Polars SQL dialect wrote a cast to TINYINT as SMALLINT; ``-x`` and ``abs(x)``
were not checked at all. A decimal product DuckDB keeps in 18 digits (``d * 1000000000`` over a
DECIMAL(10, 2)) was computed in 38, and ``1e308::FLOAT`` was infinity. Each of those answered a
number where DuckDB raises an overflow."""

from __future__ import annotations

import random
from collections.abc import Iterator

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from conftest import DEVICES, bound_types
from dau_scheduler import Session
from dau_scheduler.arms import integer_types, polars_decimals

_LITERALS = [
    "0", "1", "-1", "(1)", "-(1)", "127", "128", "-128", "-129", "255", "256", "32767", "32768",
    "-32768", "65536", "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551616",
]  # fmt: skip


def test_result_types_are_duckdbs() -> None:
    types = integer_types._TYPES
    con = duckdb.connect()
    con.execute("CREATE TABLE x AS SELECT " + ", ".join(f"NULL::{t} AS {t}" for t in types))
    cases: list[tuple[str, str | None, str | None]] = []
    for op in ("+", "-", "*"):
        for a in types:
            cases += [(f"{a} {op} {b}", a, b) for b in types]
            cases += [(f"{a} {op} {v}", a, None) for v in _LITERALS]
            cases += [(f"{v} {op} {a}", None, a) for v in _LITERALS]
        cases += [(f"{v} {op} {w}", None, None) for v in _LITERALS[:8] for w in _LITERALS[:8]]
    expressions = ", ".join(f"typeof({sql})" for sql, _, _ in cases)
    found = con.execute(f"SELECT {expressions} FROM x").fetchall()[0]
    for (sql, a, b), duckdb_type in zip(cases, found, strict=True):
        left = exp.DataType.build(types[a][0]) if a else None
        right = exp.DataType.build(types[b][0]) if b else None
        predicted = integer_types.result_type(sqlglot.parse_one(sql, read="duckdb"), left, right)
        assert predicted == exp.DataType.build(types[duckdb_type][0]), (sql, duckdb_type)


#: The tables ``t`` (the extremes sit in its first rows; the rest is harmless) and ``h`` (rows of
#: ``t`` nowhere near a type's limit).
OVERFLOW_TABLES = (
    "CREATE TABLE t AS SELECT i, "
    "CASE WHEN i = 0 THEN 127 WHEN i = 1 THEN -128 ELSE i % 50 END::TINYINT AS ti, "
    "CASE WHEN i = 0 THEN 32767 WHEN i = 1 THEN -32768 ELSE i END::SMALLINT AS s, "
    "CASE WHEN i = 1 THEN -9223372036854775808 ELSE i END::BIGINT AS b, "
    "(i % 7)::UTINYINT AS u, "
    "CASE WHEN i = 0 THEN 99999999 ELSE i % 100 END::DECIMAL(10, 2) AS d, "
    "CASE WHEN i = 0 THEN 1e308 ELSE i END::DOUBLE AS x FROM range(3000) r(i)",
    "CREATE TABLE h AS SELECT * FROM t WHERE i > 1 AND u = 0",
)


def overflow_tables() -> duckdb.DuckDBPyConnection:
    """A connection holding :data:`OVERFLOW_TABLES`."""
    connection = duckdb.connect()
    for sql in OVERFLOW_TABLES:
        connection.execute(sql)
    return connection


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = overflow_tables()
    yield connection
    connection.close()


RAISING = [
    "SELECT sum(ti + 1) FROM {t}",
    "SELECT max(1 - ti) FROM {t}",
    "SELECT max(ti * 2) FROM {t}",
    "SELECT sum((ti + 1) * 1) FROM {t}",
    "SELECT sum(s - 1) FROM {t}",
    "SELECT max(s + 1000) FROM {t}",
    "SELECT sum(-ti) FROM {t}",
    "SELECT max(abs(b)) FROM {t}",
    "SELECT max(-u) FROM {t}",
    "SELECT sum(d * 1000000000) FROM {t}",
    "SELECT sum(d * (1000 * 1000000)) FROM {t}",  # two literals, folded by DuckDB
    "SELECT max(d * d) FROM {t}",
    "SELECT sum(d * d * 1.5) FROM {t}",
    "SELECT count(*) FROM {t} WHERE d * 1000000000 > 0",
    "SELECT sum(x::FLOAT) FROM {t}",  # refused on the Polars arm: DOUBLE to FLOAT
    # An integer literal beside a column takes the column's type in DuckDB (coalesce(ti, 0) is
    # a TINYINT), where sqlglot typed it INTEGER: the Polars arm checked at INTEGER and
    # answered 126 where DuckDB raises (thirty-fifth session; duckdb_types.binder_type).
    "SELECT max(nullif(ti, 5) - 1) FROM {t}",
    "SELECT max(ifnull(ti, 0) - 1) FROM {t}",
    "SELECT max(nullif(s, 5) - 1) FROM {t}",
    "SELECT sum(CASE WHEN i > 0 THEN ti ELSE 0 END - 1) FROM {t}",
]


@pytest.mark.parametrize("device", [d for d in DEVICES if d not in ("duckdb", "polars-separate")])
@pytest.mark.parametrize("sql", RAISING)
def test_the_polars_arm_raises_where_duckdb_does(
    con: duckdb.DuckDBPyConnection, sql: str, device: str
) -> None:
    with pytest.raises((duckdb.OutOfRangeException, duckdb.ConversionException)):
        con.execute(sql.format(t="t")).fetchall()
    with Session(con, device=device) as session:
        # The device arm holds every row at share 1.0: its own answer or its own error (cudf
        # runs the same Polars plan on the GPU, which must raise as Polars does).
        for share in (1.0, 0.5):
            with pytest.raises((duckdb.OutOfRangeException, duckdb.ConversionException)):
                session.sql(sql.format(t="t"), device_share=share)
        # Over rows where nothing overflows it splits (but a refused cast) and agrees.
        plain = sql.format(t="h")
        result = session.sql(plain, device_share=0.5)
        # (The cudf arm refuses what DuckDB checks unless the data bounds it; h's rows are
        # nowhere near a limit: tests/test_gpu_limits.py.)
        splits = "FLOAT" not in sql
        assert not splits or (result.execution is not None and result.execution.device_rows > 0)
        assert result.table.to_pylist()[0] == dict(
            zip(result.table.column_names, con.execute(plain).fetchall()[0], strict=True)
        )


@pytest.mark.parametrize(
    "sql",
    # DuckDB moves the constant across the comparison and never computes the sum or negative.
    [
        "SELECT count(*) FROM t WHERE ti + 1 > 0",
        "SELECT count(*) FROM t WHERE ti + 1 = 0",
        "SELECT count(*) FROM t WHERE -s > 0",
    ],
)
def test_what_duckdb_answers_is_answered(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    with Session(con, device="polars") as session:
        for share in (1.0, 0.5):
            result = session.sql(sql, device_share=share)
            assert [tuple(r.values()) for r in result.table.to_pylist()] == con.execute(
                sql
            ).fetchall()


_COLUMNS = {
    "a": "DECIMAL(15, 2)",
    "b": "DECIMAL(4, 1)",
    "w": "DECIMAL(38, 10)",
    "z": "DECIMAL(18, 0)",
    "e": "DECIMAL(9, 4)",
    "i": "INTEGER",
    "ti": "TINYINT",
    "bi": "BIGINT",
}
_LEAVES = [*_COLUMNS, "1", "2", "-1", "3000000000", "1.5", "0.001", "1.50", "100.0"]


def _expression(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(_LEAVES)
    shape = rng.randrange(6)
    if shape == 4:
        return f"-({_expression(rng, depth - 1)})"
    if shape == 5:
        width = rng.choice([5, 10, 18, 20, 38])
        return f"CAST({_expression(rng, depth - 1)} AS DECIMAL({width}, {rng.randrange(5)}))"
    op = "*" if shape < 2 else "+-"[shape - 2]
    return f"({_expression(rng, depth - 1)} {op} {_expression(rng, depth - 1)})"


def test_decimal_types_are_duckdbs() -> None:
    known = 0
    for sql, found in bound_types(_COLUMNS, lambda rng: _expression(rng, 4), 7, 600):
        tree = sqlglot.parse_one(sql, read="duckdb")
        for column in tree.find_all(exp.Column):
            column.meta["dau_stored_type"] = _COLUMNS[column.name]
        typed = polars_decimals.duckdb_type(tree)
        if typed is None:
            continue  # not one it tells: left unchecked
        known += 1
        expected = exp.DataType.build(found, dialect="duckdb")
        if typed[2] is not None:
            assert expected == typed[2], (sql, found)
        else:
            assert expected.is_type(exp.DType.DECIMAL), (sql, found)
            assert (typed[0], typed[1]) == tuple(int(p.name) for p in expected.expressions), (
                sql,
                found,
                typed,
            )
    assert known > 300


def test_a_pad_past_a_million_characters_is_refused_on_polars(
    con: duckdb.DuckDBPyConnection,
) -> None:
    # Polars has no memory limit: 2e9 characters a row ended the process, where DuckDB raises
    # an out-of-memory error of its own.
    with Session(con, device="polars") as session:
        wide = session.compile(
            "SELECT count(*) FROM t WHERE lpad(i::VARCHAR, 2000000000, 'x') > ''"
        )
        assert "more than 1,000,000" in (session.refusals.device(wide) or "")
        narrow = session.compile("SELECT count(*) FROM t WHERE lpad(i::VARCHAR, 20, 'x') > ''")
        assert session.refusals.device(narrow) is None
