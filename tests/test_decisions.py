"""A float fold from the arms' partials that the final query decides on (rewrite/decisions.py):
the block is not split there, and the planner splits another where one can be split.
tests/slt/folds_that_decide.test holds the answers against DuckDB."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from dau_scheduler import Session


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE g AS SELECT i % 7 AS k, 0.1 * (i % 3)::DOUBLE AS x, (i % 3)::INTEGER AS n, "
        "(i % 3)::DECIMAL(10, 1) AS d FROM range(3000) r(i)"
    )
    con.execute(
        "CREATE TABLE o AS SELECT i % 9 AS k, 0.1 * (i % 4)::DOUBLE AS y FROM range(2000) r(i)"
    )
    with Session(con, device="duckdb") as s:
        yield s
    con.close()


@pytest.mark.parametrize(
    ("sql", "table"),
    [
        # The subquery's block (g, the larger) would fold the average: o is split instead.
        ("SELECT count(*) FROM o WHERE o.y >= (SELECT avg(g.x) FROM g)", "o"),
        ("SELECT * FROM (SELECT k, avg(x) AS a FROM g GROUP BY k) t JOIN o ON o.y > t.a", "o"),
        # A CTE of g's rows averaged by the final query over the arms' rows.
        (
            "WITH h AS (SELECT k, x * 2 AS x FROM g) SELECT count(*) FROM o "
            "WHERE o.y >= (SELECT avg(h.x) FROM h WHERE h.k = o.k)",
            "o",
        ),
        # Outputs, a last ORDER BY key, an exact sum, an integer mean's ties: g splits.
        ("SELECT k, avg(x), stddev(x) FROM g GROUP BY k", "g"),
        ("SELECT * FROM (SELECT k, avg(x) AS a FROM g GROUP BY k) t ORDER BY k, a LIMIT 2", "g"),
        ("SELECT k FROM g GROUP BY k HAVING sum(d) > 100", "g"),
        ("SELECT k, avg(n) AS a FROM g GROUP BY k ORDER BY a, k LIMIT 3", "g"),
        ("SELECT k, max(x) FROM g GROUP BY k HAVING max(x) > 0.1", "g"),
        ("SELECT k, CASE WHEN k > 1 THEN avg(x) ELSE 0 END FROM g GROUP BY k", "g"),
        ("SELECT k, sum(avg(x)) OVER () FROM g GROUP BY k", "g"),
    ],
)
def test_the_block_split_is_one_whose_folds_decide_nothing(
    session: Session, sql: str, table: str
) -> None:
    plan = session.explain(sql)
    assert plan.refusal is None and plan.split_table == table


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        ("SELECT k FROM g GROUP BY k HAVING avg(x) >= 0.1", "a comparison in HAVING"),
        ("SELECT k FROM g GROUP BY k HAVING avg(d) >= 0.1", "a comparison in HAVING"),
        ("SELECT k, avg(x) AS a FROM g GROUP BY k ORDER BY a, k", "breaks its ties"),
        ("SELECT k, avg(d) AS a FROM g GROUP BY k ORDER BY 2, 1 LIMIT 3", "breaks its ties"),
        ("SELECT k, CASE WHEN sum(x) > 10 THEN 1 END FROM g GROUP BY k", "a CASE condition"),
        ("SELECT k, round(var_samp(x), 2) FROM g GROUP BY k", "Round"),
        ("SELECT k, sum(x)::INTEGER FROM g GROUP BY k", "a cast to INT"),
        (
            "WITH s AS (SELECT k, sum(x) AS t FROM g GROUP BY k UNION ALL SELECT 9, 0.0) "
            "SELECT count(*) FROM s WHERE t > 100",
            "a comparison in WHERE",
        ),
        (
            "SELECT k, a FROM (SELECT k, avg(x) AS a FROM g GROUP BY k) q UNION SELECT 1, 0.5",
            "a UNION",
        ),
    ],
)
def test_a_fold_decided_on_is_refused_by_name(session: Session, sql: str, what: str) -> None:
    plan = session.explain(sql, split_table="g")
    assert plan.refusal is not None and what in plan.refusal, plan.refusal
    assert "folded from the arms' partials" in plan.refusal
