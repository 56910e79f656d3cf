"""Float sums near the double's limit (``rewrite/overflow.py``): a split sums its arms' values in
another order than DuckDB, which near 1.8e308 decides between -inf and NaN, so a group whose
finite magnitudes may add to 1e150 or more is answered unsplit, by name; every other sum still
splits, and only a float sum's partial carries the magnitudes. Real DuckDB and Polars
(``tests/slt/float_sums_near_overflow.test`` holds the shapes)."""

from __future__ import annotations

import math
from decimal import Decimal

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables
from dau_scheduler.rewrite.overflow import NEAR_MESSAGE, stats_bound

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


def test_statistics_bound_a_double_column_and_the_plan_follows_the_data() -> None:
    """A DOUBLE column's type bounds nothing, but DuckDB's statistics of it (its min and max,
    through casts and arithmetic) may: its sums then carry no magnitude partial. The plan is
    cached only while the statistics say the same: a value near the limit inserted on the
    user's connection brings the partial back, and the group is answered unsplit by name."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE d AS SELECT i % 3 AS k, (i % 101)::DOUBLE / 4 AS v, i % 7 AS n "
        "FROM range(3000) r(i)"
    )
    sql = "SELECT k, sum(v), avg(v * n), sum(abs(v) - 2) FROM d GROUP BY k ORDER BY k"
    with Session(con, device="polars") as session:
        plan = session.explain(sql)
        assert plan.partial_sql is not None and "ISFINITE" not in plan.partial_sql.upper()
        result = session.sql(sql, device_share=0.5)
        assert result.execution is not None and result.execution.device_rows > 0
        assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=True) is None

        con.execute("INSERT INTO d VALUES (1, 1e308, 1), (1, 1e308, 1), (1, '-inf', 1)")
        plan = session.explain(sql)
        assert plan.partial_sql is not None
        assert plan.partial_sql.upper().count("ISFINITE") == 3
        result = session.sql(sql, device_share=0.5)
        assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=True) is None
        assert NEAR_MESSAGE in (result.fallback or ""), result.fallback


@pytest.mark.parametrize(
    ("stats", "bound"),
    [
        ({"min": -5.0, "max": 2.5, "has_null": False}, 5.0),
        ({"min": Decimal("-1.50"), "max": Decimal("10.25")}, 10.25),
        ("[Min: -3, Max: 7][Has Null: false, Has No Null: true]", 7.0),  # DuckDB 1's text
        ({"min": 1.0, "max": math.inf}, math.inf),
        ({"min": 1.0, "max": math.nan}, math.inf),  # DuckDB ranks NaN above every number
        ({"has_null": True, "has_no_null": True}, math.inf),  # not known
        ({"min": "2020-01-01", "max": "2021-01-01"}, math.inf),
        (None, math.inf),
    ],
)
def test_a_statistics_bound_is_read_only_where_min_and_max_are_finite_numbers(
    stats: object, bound: float
) -> None:
    assert stats_bound(stats) == bound


@pytest.mark.parametrize(
    ("source", "probed"),
    [
        ("FROM d", True),
        ("FROM (SELECT k, v * 2 AS v FROM d) AS s", True),
        ("FROM d JOIN e ON d.k = e.k", False),  # a join builds its hash table first
        ("FROM (SELECT * FROM d WHERE k > 0) AS s", False),  # a filter may scan every row
        ("FROM d, e WHERE d.k = e.k", False),
    ],
)
def test_the_statistics_probe_reads_only_a_first_row_that_costs_nothing(
    source: str, probed: bool
) -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE d AS SELECT i % 3 AS k, i::DOUBLE AS v FROM range(100) r(i)")
    con.execute("CREATE TABLE e AS SELECT i AS k FROM range(3) r(i)")
    # (the block's own filter is left out of the probe: a bound of more rows bounds them)
    sql = "SELECT sum(v) FROM d WHERE v > 1" if source == "FROM d" else f"SELECT sum(v) {source}"
    with Session(con, device="polars") as session:
        compiled = session.compile(sql)
    assert compiled.plan.refusal is None, compiled.plan.refusal
    assert (compiled.magnitude_sql is not None) is probed, compiled.magnitude_sql
    assert ("ISFINITE" in (compiled.plan.partial_sql or "").upper()) is not probed


def test_a_macro_named_stats_is_not_read_as_duckdbs_statistics() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE d AS SELECT i % 3 AS k, i::DOUBLE AS v FROM range(100) r(i)")
    con.execute("INSERT INTO d VALUES (0, 1e308)")
    con.execute("CREATE MACRO stats(x) AS {'min': 0.0, 'max': 1.0}")
    with Session(con, device="polars") as session:
        compiled = session.compile("SELECT k, sum(v) FROM d GROUP BY k")
    assert compiled.magnitudes_below == (False,)
    assert "ISFINITE" in (compiled.plan.partial_sql or "").upper()
