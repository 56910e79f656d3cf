"""Float sums near the double's limit (``rewrite/overflow.py``): a split sums its arms' values in
another order than DuckDB, which near 1.8e308 decides between -inf and NaN, so a group whose
finite magnitudes may add to 1e150 or more is answered unsplit, by name; every other sum still
splits, and only a float sum's partial carries the magnitudes. Real DuckDB and Polars
(``tests/slt/float_sums_near_overflow.test`` holds the shapes)."""

from __future__ import annotations

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables
from dau_scheduler.rewrite.overflow import NEAR_MESSAGE

#: Group 0 adds to -inf in table order; the two halves' sums, +inf and -inf, fold to NaN.
_TABLE = (
    "CREATE TABLE o AS SELECT i, i % 2 AS k, CASE WHEN i = 0 THEN 1e308 WHEN i = 2 THEN "
    "'-inf'::DOUBLE WHEN i IN (602, 604) THEN 1e308 ELSE (i % 37)::DOUBLE / 8 END AS v, "
    "(i % 53)::DECIMAL(9, 2) AS m, i % 7 AS n FROM range(1200) r(i)"
)


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(_TABLE)
    return con


@pytest.mark.parametrize("device", ["duckdb", "polars"])
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT k, sum(v) FROM o GROUP BY k ORDER BY k",  # the fast fold's check
        "SELECT k, avg(v) FROM o GROUP BY k HAVING count(*) > 3 ORDER BY k",  # the final query's
        "SELECT k, sum(DISTINCT v) FROM o GROUP BY k ORDER BY k",  # the final query's own sum
        "SELECT k, regr_avgy(v, i) FROM o GROUP BY k ORDER BY k",
    ],
)
def test_a_sum_near_the_limit_is_answered_unsplit_by_name(
    con: duckdb.DuckDBPyConnection, device: str, sql: str
) -> None:
    with Session(con, device=device) as session:
        result = session.sql(sql, device_share=0.5)
    assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=True) is None
    assert NEAR_MESSAGE in (result.fallback or ""), result.fallback


def test_only_a_float_sum_carries_its_magnitudes(con: duckdb.DuckDBPyConnection) -> None:
    with Session(con, device="polars") as session:
        # An integer's or decimal's sum, and a double's of values their types bound below
        # 1e131 (n::DOUBLE, m::DOUBLE * 2), carry nothing; a DOUBLE column's sum carries its
        # greatest finite magnitude.
        sql = (
            "SELECT k, sum(m), avg(n), sum(n::DOUBLE), avg(m::DOUBLE * 2), sum(v) FROM o GROUP BY k"
        )
        plan = session.explain(sql)
        assert plan.partial_sql is not None
        assert plan.partial_sql.upper().count("ISFINITE") == 1  # sum(v)'s alone
        for sql in (
            "SELECT k, sum(v) FROM o WHERE k = 1 GROUP BY k",
            "SELECT k, sum(v) FILTER (WHERE i > 10), avg(v) FROM o WHERE k = 1 GROUP BY k",
            "SELECT sum(v) FROM o WHERE i >= 2 AND i < 600",  # -inf among them: -inf in any order
        ):
            result = session.sql(sql, device_share=0.5)
            assert result.refusal is None and result.fallback is None, sql
            assert result.execution is not None and result.execution.device_rows > 0
            want = con.sql(sql).to_arrow_table()
            assert compare_tables(result.table, want, ordered=False) is None, sql
