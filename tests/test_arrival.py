"""A query whose answer depends on the order rows arrive in is refused by name before any arm
runs (rewrite/arrival.py), and the forms whose order both DuckDB and the split keep still
split; tests/slt/arrival_order.test compares their answers with DuckDB's on both devices."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from dau_scheduler import Session

GROUPS = "(SELECT k, sum(x) AS s FROM t GROUP BY k)"

REFUSED = [
    (f"SELECT string_agg(k::VARCHAR, ',') FROM {GROUPS}", "aggregate string_agg()"),
    (f"SELECT list(k) FROM {GROUPS}", "aggregate array_agg()"),
    (f"SELECT arg_min(k, s % 2) FROM {GROUPS}", "aggregate arg_min()"),
    (f"SELECT min_by(k, s % 2) FROM {GROUPS}", "aggregate arg_min()"),
    (f"SELECT arbitrary(k) FROM {GROUPS}", "aggregate arbitrary()"),
    (f"SELECT k, row_number() OVER () FROM {GROUPS}", "window function row_number()"),
    (f"SELECT k, lag(s) OVER (ORDER BY s % 2) FROM {GROUPS}", "keys that may tie"),
    (f"SELECT k, sum(s) OVER (ORDER BY k % 3 ROWS 1 PRECEDING) FROM {GROUPS}", "may tie"),
    (f"SELECT DISTINCT ON (k % 2) k, s FROM {GROUPS}", "DISTINCT ON"),
    ("SELECT k, sum(x) FROM t GROUP BY k LIMIT 3", "LIMIT 3"),
    ("SELECT t.k FROM t JOIN d ON t.k = d.k LIMIT 5", "LIMIT 5"),
]

SPLIT = [
    f"SELECT string_agg(k::VARCHAR, ',' ORDER BY k) FROM {GROUPS}",
    "SELECT string_agg(k::VARCHAR, ',') FROM (SELECT k, sum(x) AS s FROM t GROUP BY k ORDER BY s)",
    f"SELECT k, row_number() OVER (ORDER BY s, k) FROM {GROUPS}",
    "SELECT k, lag(sum(x)) OVER (ORDER BY k) FROM t GROUP BY k",  # one row per key: no ties
    f"SELECT DISTINCT ON (k % 2) k, s FROM {GROUPS} ORDER BY k % 2, s",
    "SELECT x FROM t WHERE x > 10 LIMIT 5 OFFSET 2",
    "SELECT sum(x) FROM t LIMIT 100",  # one row
    "SELECT count(*) FROM (SELECT DISTINCT k FROM t LIMIT 3)",  # only counted
    "SELECT k, sum(x) FROM t GROUP BY k ORDER BY k LIMIT 3",
]


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i, i % 7 AS k, (i * 7919) % 5000 AS x FROM range(3000) r(i)"
    )
    con.execute("CREATE TABLE d AS SELECT i AS k FROM range(7) r(i)")
    with Session(con, device="duckdb") as s:
        yield s
    con.close()


@pytest.mark.parametrize(("sql", "named"), REFUSED)
def test_order_dependent_answers_are_refused_by_name(
    session: Session, sql: str, named: str
) -> None:
    plan = session.explain(sql)
    assert plan.refusal is not None and named in plan.refusal, plan.refusal
    assert "order" in plan.refusal.lower()


@pytest.mark.parametrize("sql", SPLIT)
def test_orders_both_keep_still_split(session: Session, sql: str) -> None:
    assert session.explain(sql).refusal is None
