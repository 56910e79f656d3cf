"""MIN and MAX of floating-point values on the Polars arm rank NaN as DuckDB does
(arms/polars_floats.py): written with a count of the NaNs on the CPU engine, refused on an arm
whose engine compares floats as IEEE does (the GPU engine's)."""

from __future__ import annotations

import duckdb
import pytest
import sqlglot

from dau_scheduler import Session
from dau_scheduler.arms.cudf import CudfStandIn
from dau_scheduler.arms.polars import PolarsArm
from dau_scheduler.arms.polars_floats import nan_ranked_extrema
from dau_scheduler.compare import compare_tables

# Per group: numbers and NaN, NaN only, NULL only, numbers and infinities, -0.0 and 0.0.
_TABLE = (
    "CREATE TABLE t AS SELECT i, i % 5 AS k, CASE i % 5 WHEN 0 THEN CASE WHEN i % 3 = 0 THEN "
    "'nan'::DOUBLE ELSE i / 7 END WHEN 1 THEN 'nan'::DOUBLE WHEN 2 THEN NULL WHEN 3 THEN CASE "
    "WHEN i % 4 = 0 THEN '-inf'::DOUBLE ELSE i / 3 END ELSE CASE WHEN i % 2 = 0 THEN -0.0 ELSE "
    "0.0 END END AS x, (CASE WHEN i % 6 = 0 THEN 'nan' ELSE (i % 11)::VARCHAR END)::FLOAT AS f "
    "FROM range(3000) r(i)"
)
_QUERIES = [
    "SELECT k, max(x), min(x), max(f), min(f) FROM t GROUP BY k",
    "SELECT max(x), min(x), max(f), min(f) FROM t WHERE k <> 1",
    "SELECT max(x), min(x) FROM t WHERE k = 1",
    "SELECT k, max(x * 2) - min(x) FROM t GROUP BY k HAVING max(x) >= 0",
]


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute(_TABLE)
    return connection


def _refusal(con: duckdb.DuckDBPyConnection, arm: PolarsArm, sql: str) -> str | None:
    with Session(con, device=arm) as session:
        result = session.sql(sql, device_share=0.5)
        assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=False) is None
        return result.refusal


@pytest.mark.parametrize("sql", _QUERIES)
def test_float_extrema_split_on_the_cpu_engine_and_equal_duckdb(
    con: duckdb.DuckDBPyConnection, sql: str
) -> None:
    assert _refusal(con, PolarsArm(), sql) is None


def test_on_an_ieee_engine_they_stay_refused(con: duckdb.DuckDBPyConnection) -> None:
    refusal = _refusal(con, CudfStandIn(translate=False), _QUERIES[0]) or ""
    assert "extremum of floating-point values" in refusal


def test_the_rewrite_counts_nans_and_folds_the_rest_without_them() -> None:
    tree = sqlglot.parse_one("SELECT max(x), min(x), max(n), max(x) OVER () FROM t")
    max_x, min_x, max_n, window = tree.expressions
    for node, kind in (
        (max_x.this, "DOUBLE"),
        (min_x.this, "DOUBLE"),
        (window.this.this, "DOUBLE"),
    ):
        node.type = exp_type(kind)
    max_n.this.type = exp_type("BIGINT")
    written = nan_ranked_extrema(tree).sql(dialect="duckdb")
    assert (
        written.count("CAST('nan' AS DOUBLE)") == 3 + 4
    )  # MAX: its test, value, fold; MIN: two counts
    assert "MAX(CASE WHEN (x) = CAST('nan' AS DOUBLE) THEN NULL ELSE x END)" in written
    assert "MIN(CASE WHEN (x) = CAST('nan' AS DOUBLE) THEN NULL ELSE x END)" in written
    assert "MAX(n)" in written and "MAX(x) OVER ()" in written  # an integer, a window: as they are


def exp_type(name: str) -> sqlglot.exp.DataType:
    return sqlglot.exp.DataType.build(name)
