"""Integer overflow on the Polars arm raises where DuckDB raises (arms/integer_types.py,
arms/polars_arithmetic.py). Polars wraps integer arithmetic around; the arm computes it in a
wide decimal and casts back to the type DuckDB gives the result, strictly. That type was
sqlglot's, which is wider where a literal fits the other side (``ti + 1`` over a TINYINT), and
the Polars SQL dialect wrote a cast to TINYINT as SMALLINT; ``-x`` and ``abs(x)`` were not
checked at all. Each of those answered a number where DuckDB raises an overflow."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from dau_scheduler import Session
from dau_scheduler.arms import integer_types

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
    expressions = ", ".join(f"typeof({sql})" for sql, _, _ in cases)
    found = con.execute(f"SELECT {expressions} FROM x").fetchall()[0]
    for (sql, a, b), duckdb_type in zip(cases, found, strict=True):
        left = exp.DataType.build(types[a][0]) if a else None
        right = exp.DataType.build(types[b][0]) if b else None
        predicted = integer_types.result_type(sqlglot.parse_one(sql, read="duckdb"), left, right)
        assert predicted == exp.DataType.build(types[duckdb_type][0]), (sql, duckdb_type)


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    # The extremes sit in the first rows; the rest is harmless.
    connection.execute(
        "CREATE TABLE t AS SELECT i, "
        "CASE WHEN i = 0 THEN 127 WHEN i = 1 THEN -128 ELSE i % 50 END::TINYINT AS ti, "
        "CASE WHEN i = 0 THEN 32767 WHEN i = 1 THEN -32768 ELSE i END::SMALLINT AS s, "
        "CASE WHEN i = 1 THEN -9223372036854775808 ELSE i END::BIGINT AS b, "
        "(i % 7)::UTINYINT AS u FROM range(3000) r(i)"
    )
    connection.execute("CREATE TABLE h AS SELECT * FROM t WHERE i > 1 AND u = 0")
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
]


@pytest.mark.parametrize("sql", RAISING)
def test_the_polars_arm_raises_where_duckdb_does(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    with pytest.raises(duckdb.OutOfRangeException):
        con.execute(sql.format(t="t")).fetchall()
    with Session(con, device="polars") as session:
        # The device arm holds every row at share 1.0: its own answer or its own error.
        for share in (1.0, 0.5):
            with pytest.raises(duckdb.OutOfRangeException):
                session.sql(sql.format(t="t"), device_share=share)
        # Over rows where nothing overflows it splits and agrees.
        plain = sql.format(t="h")
        result = session.sql(plain, device_share=0.5)
        assert result.execution is not None and result.execution.device_rows > 0
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
