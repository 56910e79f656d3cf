"""Filters above the split block reach the partial's rows (rewrite/pushdown.py), and only those
that select whole groups or rows by values the rows hold."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from dau_scheduler import Session


@pytest.fixture
def session() -> Iterator[Session]:
    con = duckdb.connect()
    con.execute("CREATE TABLE a AS SELECT i, i % 10 AS k, i % 4 AS n FROM range(2000) r(i)")
    with Session(con, device="duckdb") as s:
        yield s
    con.close()


def _where(session: Session, sql: str) -> str:
    plan = session.explain(sql)
    assert plan.refusal is None, plan.refusal
    partial = " ".join(plan.partial_sql.split())
    return partial.split(" WHERE ", 1)[1].split(" GROUP BY ")[0] if " WHERE " in partial else ""


def test_having_on_keys_reaches_the_rows(session: Session) -> None:
    where = _where(session, "SELECT k, n, count(*) FROM a GROUP BY k, n HAVING k = n AND k < 3")
    assert where == '"a"."k" = "a"."n" AND "a"."k" < 3'


def test_an_aggregate_condition_stays_above(session: Session) -> None:
    where = _where(session, "SELECT k, sum(i) FROM a GROUP BY k HAVING sum(i) > 100 AND k > 5")
    assert where == '"a"."k" > 5'


def test_not_under_grouping_sets(session: Session) -> None:
    assert _where(session, "SELECT k, count(*) FROM a GROUP BY ROLLUP (k) HAVING k IS NULL") == ""


def test_an_enclosing_where_over_keys(session: Session) -> None:
    sql = "SELECT * FROM (SELECT k, count(*) AS c FROM a GROUP BY k) t WHERE k > 6 AND c > 1"
    where = _where(session, sql)
    assert where == '"a"."k" > 6'


def test_not_through_a_limit(session: Session) -> None:
    sql = (
        "SELECT * FROM (SELECT k, count(*) AS c FROM a GROUP BY k ORDER BY c LIMIT 3) t WHERE k > 6"
    )
    assert "> 6" not in _where(session, sql)


@pytest.fixture
def partitions() -> Iterator[tuple[Session, duckdb.DuckDBPyConnection]]:
    con = duckdb.connect()
    con.execute("CREATE TABLE s23 AS SELECT i AS d, i % 7 AS v FROM range(3000) r(i)")
    con.execute("CREATE TABLE s24 AS SELECT i + 3000 AS d, i % 5 AS v FROM range(1000) r(i)")
    with Session(con, device="duckdb") as s:
        yield s, con
    con.close()


@pytest.mark.parametrize(
    ("sql", "where"),
    [
        # A partitioned view: each arm passed all of s23's rows back before.
        (
            "SELECT sum(v) FROM (SELECT d, v FROM s23 UNION ALL SELECT d, v FROM s24) s "
            "WHERE d > 2900",
            '"s23"."d" > 2900',
        ),
        # The derived table's names are the first branch's, matched by position.
        (
            "SELECT count(*) FROM (SELECT d, v FROM s24 UNION SELECT d AS e, v FROM s23) s "
            "WHERE d > 2900",
            '"s23"."d" > 2900',
        ),
        (
            "SELECT count(*) FROM (SELECT d, v FROM s24 EXCEPT SELECT d, v FROM s23) s "
            "WHERE d < 10",
            '"s23"."d" < 10',
        ),
        (
            "SELECT count(*) FROM (SELECT d AS x, d AS y, v FROM s23 UNION ALL "
            "SELECT d, d + 1, v FROM s24) s WHERE y > 2900",
            '"s23"."d" > 2900',
        ),
        # The block's output is BIGINT under a VARCHAR union: '0950' is 950 as an integer only.
        (
            "SELECT count(*) FROM (SELECT d, v FROM s23 UNION ALL SELECT d::VARCHAR, v FROM s24) s "
            "WHERE d = '0950' OR d = '950'",
            "",
        ),
        # BY NAME lines the branches up by name: `v` is s23's second output, not its first.
        (
            "SELECT count(*), sum(d) FROM (SELECT v, d FROM s24 UNION ALL BY NAME "
            "SELECT d, v FROM s23) s WHERE v > 3",
            "",
        ),
        # A LIMIT over the set operation depends on the rows a filter would remove (it kept
        # 10 rows for 4 while the pushdown went through it).
        (
            "SELECT count(*), sum(d) FROM (SELECT d, v FROM s23 UNION ALL SELECT d, v FROM s24 "
            "ORDER BY d LIMIT 10) s WHERE d > 5",
            "",
        ),
        # A condition not on rows alone stays above.
        (
            "SELECT count(*) FROM (SELECT d, v FROM s23 UNION ALL SELECT d, v FROM s24) s "
            "WHERE d > (SELECT max(v) FROM s24)",
            "",
        ),
    ],
)
def test_an_enclosing_where_over_a_set_operation(
    partitions: tuple[Session, duckdb.DuckDBPyConnection], sql: str, where: str
) -> None:
    session, con = partitions
    assert _where(session, sql) == where
    for share in (0.3, 0.7):
        result = session.sql(sql, device_share=share)
        assert result.table.to_pylist() == con.sql(sql).to_arrow_table().to_pylist()
