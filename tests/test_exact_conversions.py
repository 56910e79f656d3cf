"""A decimal made a DOUBLE on the Polars arm converts as DuckDB's does (arms/polars_doubles.py):
through the decimal's text on the CPU engine, refused where the arm may not (the GPU engine)."""

from __future__ import annotations

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.arms.polars import PolarsArm
from dau_scheduler.compare import compare_tables

# DECIMAL(18, 4) values whose digits at the arm's scale pass 2**53: Polars' own cast rounds
# about one in eight of them a last bit off DuckDB's.
_TABLE = (
    "CREATE TABLE t AS SELECT i, ((i * 7919 % 100003 - 50000) * 1234567.0123 + i * 0.0001)"
    "::DECIMAL(18, 4) AS c, (i % 97) * 0.5 AS x FROM range(20000) r(i)"
)
_QUERIES = [
    "SELECT c::DOUBLE AS v, count(*) AS n FROM t GROUP BY v",
    "SELECT count(*) FROM t WHERE c > x * 1e12",
    "SELECT count(*) FROM t WHERE c / 7 > 1e9",
    "SELECT count(DISTINCT coalesce(c, x)) FROM t",
]


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute(_TABLE)
    return connection


@pytest.mark.parametrize("sql", _QUERIES)
def test_a_decimal_made_a_double_splits_and_equals_duckdb(
    con: duckdb.DuckDBPyConnection, sql: str
) -> None:
    with Session(con, device=PolarsArm()) as session:
        result = session.sql(sql, device_share=0.5)
        assert result.refusal is None, result.refusal
        assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=False) is None


def test_an_arm_without_exact_conversions_refuses_them(con: duckdb.DuckDBPyConnection) -> None:
    arm = PolarsArm()
    arm.exact_conversions = False  # (as the GPU engine's arm)
    with Session(con, device=arm) as session:
        result = session.sql(_QUERIES[0], device_share=0.5)
        assert "decimal made a floating-point value" in (result.refusal or "")
        assert (
            compare_tables(result.table, con.sql(_QUERIES[0]).to_arrow_table(), ordered=False)
            is None
        )
