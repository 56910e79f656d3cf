"""Views on the user's connection are split as their definitions (decision 022), on every CPU
device, and a Session follows a view redefined under it. tests/slt/views.test holds the query
forms; this file holds what a sqllogictest file cannot show (a Session kept across statements,
the plan, TPC-H's own Q15 view)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from conftest import device
from dau_scheduler import Session, tpch
from dau_scheduler.compare import compare_tables
from dau_scheduler.rewrite.views import MAX_DEPTH

CPU_DEVICES = ["duckdb", "polars", "polars-separate"]


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i, i % 5 AS k, i * 0.5 AS x FROM range(3000) r(i)")
    con.execute("CREATE VIEW v AS SELECT k, i, x FROM t WHERE i < 2500")
    yield con
    con.close()


def _answer(session: Session, con: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    result = session.sql(sql, device_share=0.5)
    expected = con.sql(sql).to_arrow_table()
    assert compare_tables(result.table, expected, ordered=False) is None, sql
    return result.refusal


@pytest.mark.parametrize("name", CPU_DEVICES)
def test_a_query_over_a_view_splits_its_table(con: duckdb.DuckDBPyConnection, name: str) -> None:
    with Session(con, device=device(name)) as session:
        sql = "SELECT k, sum(i), avg(x), count(*) FROM v GROUP BY k"
        assert _answer(session, con, sql) is None
        result = session.sql(sql, device_share=0.5)
        assert result.plan.split_table == "t"
        assert result.execution is not None and result.execution.device_rows > 0


@pytest.mark.parametrize("name", CPU_DEVICES)
def test_a_redefined_view_is_read_again(con: duckdb.DuckDBPyConnection, name: str) -> None:
    sql = "SELECT k, sum(i) FROM v GROUP BY k"
    with Session(con, device=device(name)) as session:
        assert _answer(session, con, sql) is None
        con.execute("CREATE OR REPLACE VIEW v AS SELECT k, i * 10 AS i, x FROM t")
        assert _answer(session, con, sql) is None
        con.execute("DROP VIEW v")
        con.execute("CREATE VIEW v AS SELECT k, -i AS i FROM t WHERE k = 2")
        assert _answer(session, con, sql) is None


def test_a_view_of_views_is_inlined_to_its_tables(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE VIEW v2 (kk, ii) AS SELECT k, i FROM v WHERE k > 0")
    con.execute("CREATE VIEW v3 AS SELECT kk, sum(ii) AS s FROM v2 GROUP BY kk")
    with Session(con, device="duckdb") as session:
        assert _answer(session, con, "SELECT sum(s), max(kk) FROM v3") is None


def test_views_nested_past_the_depth_limit_are_answered_unsplit(
    con: duckdb.DuckDBPyConnection,
) -> None:
    con.execute("CREATE VIEW n0 AS SELECT i FROM t")
    for level in range(1, MAX_DEPTH + 2):
        con.execute(f"CREATE VIEW n{level} AS SELECT i FROM n{level - 1}")
    with Session(con, device="duckdb") as session:
        assert _answer(session, con, f"SELECT sum(i) FROM n{MAX_DEPTH - 1}") is None
        refusal = _answer(session, con, f"SELECT sum(i) FROM n{MAX_DEPTH + 1}")
        assert refusal is not None and "nested" in refusal


def test_what_a_view_calls_is_guarded_as_the_query_is(con: duckdb.DuckDBPyConnection) -> None:
    """The guards read the query over the view's definition: a non-deterministic function or
    a type Arrow cannot carry inside the view refuses the split as it would in the query."""
    con.execute("CREATE VIEW noisy AS SELECT i, random() AS r FROM t")
    con.execute("CREATE TABLE big AS SELECT i % 3 AS k, i::HUGEINT << 80 AS h FROM range(50) r(i)")
    con.execute("CREATE VIEW huge AS SELECT k, h FROM big")
    with Session(con, device="polars") as session:
        noisy = session.sql("SELECT count(*), sum(i) FROM noisy WHERE r >= 0")
        assert noisy.refusal is not None
        assert noisy.table.to_pylist() == [{"count_star()": 3000, "sum(i)": 4498500}]
        refusal = _answer(session, con, "SELECT k, max(h) FROM huge GROUP BY k")
        assert refusal is not None and "HUGEINT" in refusal


def test_a_cte_does_not_reach_into_a_view(con: duckdb.DuckDBPyConnection) -> None:
    """In DuckDB a view reads the table ``t`` even where the query defines a CTE ``t``: the
    view is then left as it is (refused), not inlined under the CTE."""
    sql = "WITH t AS (SELECT 100 AS i, 1 AS k, 1.0 AS x) SELECT sum(i) FROM v"
    with Session(con, device="duckdb") as session:
        refusal = _answer(session, con, sql)
        assert refusal is not None and "view v reads t, which the query defines as a CTE" in refusal
        assert _answer(session, con, "WITH v AS (SELECT 7 AS i) SELECT sum(i) FROM v") is not None


def test_a_view_in_another_schema_is_not_read_as_ours(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE SCHEMA s")
    con.execute("CREATE VIEW s.v AS SELECT i + 1 AS i FROM t")
    with Session(con, device="duckdb") as session:
        assert _answer(session, con, "SELECT sum(i) FROM s.v") is not None
        assert _answer(session, con, "SELECT sum(i) FROM v") is None


@pytest.mark.parametrize("name", CPU_DEVICES)
def test_tpch_q15_over_its_revenue_view(tpch_dir: Path, name: str) -> None:
    """TPC-H's own Q15 defines ``revenue0`` as a view; over it the split equals DuckDB's answer
    and the TPC-H reference answer."""
    query = tpch.queries()["q15"]
    body = query[query.index("as (") + 4 : query.index(")\nselect")]
    outer = query[query.index(")\nselect") + 2 :]
    con = duckdb.connect()
    try:
        for table in ("lineitem", "supplier"):
            con.execute(f"CREATE TABLE {table} AS FROM read_parquet('{tpch_dir / table}*')")
        con.execute(f"CREATE VIEW revenue0 AS {body}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with Session(con, device=device(name)) as session:
                result = session.sql(outer, device_share=0.5)
        assert result.refusal is None
        assert result.plan.split_table == "lineitem"
        assert compare_tables(result.table, con.sql(outer).to_arrow_table(), ordered=True) is None
        assert tpch.compare_reference(result.table, "q15", 0.01) is None
    finally:
        con.close()


def test_a_view_the_split_cannot_read_through_is_read_whole(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """A view over rowid cannot be read as its definition (the split renumbers the rows); the
    query reads it whole on every arm, as DuckDB's test/sql/join/empty_joins.test does, and
    follows it when it is redefined with other types."""
    con.execute("CREATE TABLE u AS SELECT i AS j, i % 3 AS k FROM range(50) r(i)")
    con.execute("CREATE VIEW late AS SELECT * FROM u WHERE rowid >= 40")
    sql = "SELECT t.k, count(*), max(late.j) FROM t JOIN late ON t.k = late.k GROUP BY t.k"
    with Session(con, device="duckdb") as session:
        assert _answer(session, con, sql) is None
        assert session.sql(sql, device_share=0.5).plan.split_table == "t"
        con.execute("CREATE OR REPLACE VIEW late AS SELECT j * 0.5 AS j, k FROM u WHERE rowid < 9")
        assert _answer(session, con, sql) is None
