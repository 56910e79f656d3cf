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
    sql = "SELECT * FROM (SELECT k, count(*) AS c FROM a GROUP BY k LIMIT 3) t WHERE k > 6"
    assert "> 6" not in _where(session, sql)
