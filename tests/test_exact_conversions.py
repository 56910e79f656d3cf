"""A decimal made a DOUBLE on the Polars arm converts as DuckDB's does (arms/polars_doubles.py):
through the decimal's text on the CPU engine where it reads no row of the split table; refused
over the split table's rows (the text costs too much there) and on an arm without the rewrite
(the GPU engine's)."""

from __future__ import annotations

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.arms.cudf import CudfStandIn
from dau_scheduler.arms.polars import PolarsArm
from dau_scheduler.compare import compare_tables

# A dimension of DECIMAL(18, 4) values whose digits at the arm's scale pass 2**53 (Polars' own
# cast rounds about one in eight of them a last bit off DuckDB's), and a fact table, split.
_TABLES = (
    "CREATE TABLE d AS SELECT i AS k, ((i * 7919 % 100003 - 50000) * 1234567.0123 + i * 0.0001)"
    "::DECIMAL(18, 4) AS c, (i % 97) * 0.5 AS x FROM range(2000) r(i);"
    "CREATE TABLE f AS SELECT i, i % 2000 AS k, i % 13 AS n FROM range(40000) r(i)"
)
_QUERIES = [
    "SELECT d.c::DOUBLE AS v, count(*) AS n FROM f JOIN d USING (k) GROUP BY v",
    "SELECT count(*) FROM f JOIN d USING (k) WHERE d.c > d.x * 1e12",
    "SELECT count(*) FROM f JOIN d USING (k) WHERE d.c / 7 > 1e9",
    "SELECT count(DISTINCT coalesce(d.c, d.x)) FROM f JOIN d USING (k)",
]
_OVER_SPLIT_ROWS = (
    "SELECT (d.c * f.n)::DOUBLE AS v, count(*) AS n FROM f JOIN d USING (k) GROUP BY v"
)


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute(_TABLES)
    return connection


def _answer(con: duckdb.DuckDBPyConnection, arm: PolarsArm, sql: str) -> str | None:
    with Session(con, device=arm) as session:
        result = session.sql(sql, device_share=0.5)
        assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=False) is None
        return result.refusal


@pytest.mark.parametrize("sql", _QUERIES)
def test_a_decimal_made_a_double_splits_and_equals_duckdb(
    con: duckdb.DuckDBPyConnection, sql: str
) -> None:
    assert _answer(con, PolarsArm(), sql) is None


def test_over_the_split_rows_or_without_the_rewrite_it_is_refused(
    con: duckdb.DuckDBPyConnection,
) -> None:
    refused = "decimal made a floating-point value"
    assert refused in (_answer(con, PolarsArm(), _OVER_SPLIT_ROWS) or "")
    arm = PolarsArm()
    arm.exact_conversions = False  # (as the GPU engine's arm)
    assert refused in (_answer(con, arm, _QUERIES[0]) or "")


# DECIMAL(18, 4) values the data bounds under 2**53 / 10**12 (about 9,007) even times f.n
# (under 13): their digits at the arm's scale fit a double, so Polars' own cast is rounded
# once, as DuckDB's is (DECIMAL(18, 4) by its type alone does not).
_SMALL = (
    "CREATE TABLE s AS SELECT i AS k, ((i * 7919 % 800 - 400) * 1.2345 + i * 0.0001)"
    "::DECIMAL(18, 4) AS c FROM range(2000) r(i)"
)
_BOUNDED = [
    "SELECT s.c::DOUBLE AS v, count(*) AS n FROM f JOIN s USING (k) GROUP BY v",
    "SELECT (s.c * 1.000)::DOUBLE AS v, count(*) AS n FROM f JOIN s USING (k) GROUP BY v",
    # over the split table's rows too: no text to read, Polars' own cast
    "SELECT (s.c - f.n)::DOUBLE AS v, count(*) AS n FROM f JOIN s USING (k) GROUP BY v",
    "SELECT count(*) FROM f JOIN s USING (k) WHERE s.c * f.n > 1e3 * 0.37",
]


@pytest.mark.parametrize("sql", _BOUNDED)
@pytest.mark.parametrize("arm", [PolarsArm, CudfStandIn])
def test_a_decimal_the_data_bounds_converts_with_polars_own_cast(
    con: duckdb.DuckDBPyConnection, sql: str, arm: type[PolarsArm] | object
) -> None:
    con.execute(_SMALL)
    assert callable(arm)
    # Over a connection the cudf arm reads its bounds from it (the CPU engine's needs none for
    # its overflow checks, and converts through text where it reads no split row).
    refusal = _answer(con, arm(), sql)
    assert refusal is None or (arm is PolarsArm and "decimal made a floating" in refusal)
    # Over Arrow tables, bounds read once from the held frames: both split.
    tables = {name: con.table(name).to_arrow_table() for name in ("f", "s")}
    with Session(tables, device=arm()) as session:
        result = session.sql(sql, device_share=0.5)
        assert result.refusal is None and result.execution is not None
        assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=False) is None


def test_past_the_bound_the_gpu_limited_arm_refuses(con: duckdb.DuckDBPyConnection) -> None:
    """``d.c`` reaches 6e10: its digits at the arm's scale pass 2**53."""
    assert "decimal made a floating-point value" in (_answer(con, CudfStandIn(), _QUERIES[0]) or "")
