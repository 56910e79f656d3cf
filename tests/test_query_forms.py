"""Two forms of a query the split reads as DuckDB does: a block that reads a CTE of the query
around it, and ``COLUMNS(...)`` among a SELECT's outputs (rewrite/columns_expansion.py).
tests/slt/columns_expressions.test replays the COLUMNS forms against DuckDB."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables
from dau_scheduler.errors import SplitError


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i, i % 7 AS k, i * 0.5 AS x, 'a' || (i % 3) AS s "
        "FROM range(2000) r(i)"
    )
    con.execute("CREATE TABLE u AS SELECT i AS k, i * 2 AS j, 'u' || i AS s FROM range(5) r(i)")
    yield con
    con.close()


CTE = "WITH d AS (SELECT k, j FROM u WHERE j > 2) "


@pytest.mark.parametrize("device", ["duckdb", "polars"])
@pytest.mark.parametrize(
    "sql",
    [
        # The block is nested: its partial reads the CTE (before the fortieth session the
        # partial did not bind, and the query split on u, the small table, or not at all).
        CTE + "SELECT * FROM (SELECT t.k, sum(x) AS sx FROM t JOIN d ON t.k = d.k GROUP BY t.k) q "
        "WHERE sx > 0 ORDER BY 1",
        CTE + ", e AS (SELECT * FROM d WHERE k > 1) SELECT * FROM (SELECT t.k, count(*) FROM t "
        "WHERE t.k IN (SELECT k FROM e) GROUP BY t.k) ORDER BY 1",
        # The block is the query: its final query reads the CTE (it failed to run before, and
        # the host answered the query again after both arms had run).
        CTE + "SELECT t.k, sum(x) AS sx FROM t GROUP BY t.k HAVING sum(x) > (SELECT max(j) "
        "FROM d) ORDER BY 1",
        CTE + "SELECT t.k, sum(x) AS sx, (SELECT max(j) FROM d) AS m FROM t GROUP BY t.k "
        "ORDER BY 1",
    ],
)
def test_a_block_reading_a_cte_splits_the_largest_table(
    con: duckdb.DuckDBPyConnection, sql: str, device: str
) -> None:
    with Session(con, device=device) as session:
        result = session.sql(sql, device_share=0.5, split_table="t")
    assert result.refusal is None and result.fallback is None, result.refusal or result.fallback
    assert result.execution is not None and result.execution.device_rows > 0
    assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=True) is None


@pytest.mark.parametrize("device", ["duckdb", "polars"])
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT max(COLUMNS(*)) FROM t",
        "SELECT k, sum(COLUMNS('i|x')) FROM t GROUP BY k ORDER BY k",
        "SELECT min(COLUMNS(* EXCLUDE (s))) AS m FROM t WHERE k > 2",
        "SELECT COLUMNS(lambda c: c IN ('i', 'x')) * 2 FROM t WHERE k = 3 ORDER BY i",
        "SELECT k, max(COLUMNS(u.*)) FROM t JOIN u USING (k) GROUP BY k ORDER BY 1",
    ],
)
def test_columns_outputs_are_written_out_and_split(
    con: duckdb.DuckDBPyConnection, sql: str, device: str
) -> None:
    expected = con.sql(sql).to_arrow_table()
    with Session(con, device=device) as session:
        assert "COLUMNS" not in (session.explain(sql).partial_sql or "").upper()
        result = session.sql(sql, device_share=0.5)
    assert result.refusal is None and result.fallback is None, result.refusal or result.fallback
    assert result.table.column_names == expected.column_names
    assert compare_tables(result.table, expected, ordered="ORDER BY" in sql) is None


@pytest.mark.parametrize(
    "sql",
    [
        # t.k and u.k: a bare k would read either table's column.
        "SELECT max(COLUMNS(*)) FROM t JOIN u ON t.k = u.k",
        # A REPLACE makes an output that is not the column it is named after.
        "SELECT max(COLUMNS(* EXCLUDE (s) REPLACE (x * 2 AS x))) FROM t",
        "SELECT max(COLUMNS(* RENAME (x AS y))) FROM t",
    ],
)
def test_columns_forms_left_as_written_are_refused_and_answered(
    con: duckdb.DuckDBPyConnection, sql: str
) -> None:
    with Session(con, device="polars") as session:
        result = session.sql(sql, device_share=0.5)
    assert result.refusal is not None and "expands to several columns" in result.refusal
    assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=False) is None


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1 IN (1, 2) AS v, count(*) FROM t WHERE i > 3 GROUP BY v",
        "SELECT -1 NOT IN (-1, -1) AND NOT -1 IS NOT NULL AS v, count(*) FROM t GROUP BY v",
        "SELECT [1, 2] AS v, count(*) FROM t GROUP BY v",
    ],
)
def test_constant_keys_polars_does_not_fold_are_refused(
    con: duckdb.DuckDBPyConnection, sql: str
) -> None:
    """Polars' in-memory engine (the GPU engine's executor) counted 1 row for 1,000 under such a
    key; its streaming engine panics. The polars-only constant keys still split."""
    with Session(con, device="polars") as session:
        result = session.sql(sql, device_share=0.5)
        assert result.refusal is not None and "Polars does not fold" in result.refusal
        assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
        kept = session.sql("SELECT 7 AS v, count(*) FROM t GROUP BY v", device_share=0.5)
        assert kept.refusal is None


def test_a_block_the_device_refuses_gives_way_to_the_next(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """The planner's first candidate (t's block) holds a correlated subquery in an aggregate,
    which the Polars arm refuses; the query is answered split on the next candidate, u's
    derived table, which the arm runs. ``explain``, ``plan`` and ``profile`` describe that
    candidate too (they showed the first, and ``collaborative`` demanded profiles of it)."""
    sql = (
        "SELECT t.k % 3 AS g, count(*) FILTER (WHERE EXISTS (SELECT 1 FROM u AS w WHERE w.k = "
        "t.k AND w.j > 2)), sum(q.s) FROM t JOIN (SELECT k, sum(j) AS s FROM u GROUP BY k) AS q "
        "ON t.k = q.k GROUP BY g ORDER BY g"
    )
    expected = con.sql(sql).to_arrow_table()
    with Session(con, device="polars") as session:
        assert session.explain(sql).split_table == "u"
        result = session.sql(sql, device_share=0.5)
        assert result.refusal is None and result.fallback is None, result.refusal
        assert result.plan.split_table == "u"
        assert compare_tables(result.table, expected) is None
        for arm in ("host", "device"):
            assert session.profile(sql, arm=arm).rows == session.row_counts["u"]
        collaborative = session.sql(sql, posture="collaborative")
        assert collaborative.plan.split_table == "u" and collaborative.refusal is None
        assert compare_tables(collaborative.table, expected) is None
        assert not session.plan(sql).rationale.startswith("refused")
    with Session(con, device="duckdb") as session:  # its arm runs t's block
        assert session.sql(sql, device_share=0.5).plan.split_table == "t"


def test_a_query_the_device_refuses_is_refused_by_explain_plan_profile_and_every_posture(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """No candidate the Polars arm runs: ``explain`` and ``plan`` say the refusal ``sql``
    answers with, ``profile`` measures nothing, and ``collaborative`` without profiles answers
    unsplit (it demanded a profile that ``profile`` then refused to measure)."""
    sql = (
        "SELECT k, count(*) FILTER (WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.k AND u.j > 4)) "
        "AS c FROM t GROUP BY k ORDER BY k"
    )
    expected = con.sql(sql).to_arrow_table()
    with Session(con, device="polars") as session:
        why = session.sql(sql, device_share=0.5).refusal
        assert why is not None and "correlated subquery inside an aggregate" in why
        assert session.explain(sql).refusal == why
        assert session.plan(sql).rationale == f"refused, runs unsplit: {why}"
        for arm in ("host", "device"):
            with pytest.raises(SplitError, match="nothing to profile"):
                session.profile(sql, arm=arm)
        answered = session.sql(sql, posture="collaborative")
        assert answered.refusal == why and answered.execution is None
        assert compare_tables(answered.table, expected) is None
    with Session(con, device="duckdb") as session:  # its arm splits it
        assert session.explain(sql).refusal is None
