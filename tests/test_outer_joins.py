"""The rewrite step that reads an outer join a later filter makes inner as the join it is
(``rewrite.outer_joins``), and the splits it opens, against DuckDB on both devices."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlglot

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.outer_joins import simplify_outer_joins


def _joins(sql: str) -> list[str]:
    tree = simplify_outer_joins(sqlglot.parse_one(sql, read=DIALECT), {})
    return [
        " ".join(p for p in ((j.side or ""), (j.kind or "")) if p) or "INNER"
        for j in tree.find_all(sqlglot.exp.Join)
    ]


@pytest.mark.parametrize(
    ("sql", "joins"),
    [
        # a filter NULL where t's columns are removes u's unmatched rows
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k WHERE t.n > 0", ["LEFT"]),
        ("SELECT 1 FROM t FULL OUTER JOIN u ON t.k = u.k WHERE t.n > 0", ["LEFT OUTER"]),
        ("SELECT 1 FROM t RIGHT JOIN u ON t.k = u.k WHERE t.i % 2 = 0", ["INNER"]),
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k WHERE u.s IS NOT NULL", ["RIGHT"]),
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k WHERE t.n > 0 AND u.s LIKE 'a%'", ["INNER"]),
        ("SELECT 1 FROM u LEFT JOIN t ON t.k = u.k WHERE NOT (t.n > 0)", ["INNER"]),
        (
            "SELECT 1 FROM t RIGHT JOIN u ON t.k = u.k WHERE CAST(t.n AS TEXT) IN ('1', '2')",
            ["INNER"],
        ),
        # so does a later inner join on t's columns; a later LEFT join does not
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k JOIN v ON t.n = v.n", ["LEFT", "INNER"]),
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k LEFT JOIN v ON t.n = v.n", ["FULL", "LEFT"]),
        # filters that hold over NULLs leave the join as written
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k WHERE t.n IS NULL", ["FULL"]),
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k WHERE coalesce(t.n, 0) > 0", ["FULL"]),
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k WHERE t.n > 0 OR u.n > 0", ["FULL"]),
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k WHERE t.s || 'x' = 'ax'", ["FULL"]),
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k WHERE t.n IN (SELECT n FROM v)", ["FULL"]),
        ("SELECT 1 FROM t FULL JOIN u ON t.k = u.k WHERE t.n IS NOT DISTINCT FROM 1", ["FULL"]),
        # after a comma the join's left side is the tables since the comma
        ("SELECT 1 FROM a, e RIGHT JOIN d ON e.x = d.k WHERE a.k < 10", ["INNER", "RIGHT"]),
        ("SELECT 1 FROM a, e RIGHT JOIN d ON e.x = d.k WHERE e.y < 10", ["INNER", "INNER"]),
        # USING, NATURAL and ASOF blocks are left alone
        ("SELECT 1 FROM t FULL JOIN u USING (k) WHERE t.n > 0", ["FULL"]),
        ("SELECT 1 FROM t ASOF LEFT JOIN u ON t.k >= u.k WHERE u.n > 0", ["LEFT"]),
    ],
)
def test_outer_joins_a_filter_empties(sql: str, joins: list[str]) -> None:
    assert _joins(sql) == joins


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, "
        "(i % 7 - 3)::INTEGER AS n, ['a', 'b', NULL][i % 3 + 1] AS s FROM range(4000) r(i)"
    )
    con.execute(
        "CREATE TABLE u AS SELECT i AS j, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 13 END AS k, "
        "(i % 5 - 2)::INTEGER AS n, ['a', 'z', NULL][i % 3 + 1] AS s FROM range(40) r(i)"
    )
    return con


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_splits_an_outer_join_a_filter_makes_inner(
    con: duckdb.DuckDBPyConnection, device: str
) -> None:
    """Each query was refused before (t in a block with a RIGHT or FULL join); each splits now,
    both arms reading t's rows, and answers as DuckDB does unsplit."""
    with Session(con, device=device) as session:
        for sql in [
            "SELECT t.s, count(*), count(u.j) FROM t FULL JOIN u ON t.k = u.k WHERE t.n > 0 "
            "GROUP BY t.s",
            "SELECT u.s, count(*), sum(t.i) FROM t RIGHT JOIN u ON t.k = u.k WHERE t.i % 2 = 0 "
            "GROUP BY u.s",
            "SELECT count(*), sum(t.i), count(u.j) FROM u RIGHT JOIN t ON t.k = u.k",
        ]:
            result = session.sql(sql, device_share=0.5)
            expected = con.sql(sql).to_arrow_table()
            assert compare_tables(result.table, expected, ordered=False) is None, sql
            assert result.refusal is None and result.fallback is None, (sql, result.refusal)
            assert result.execution is not None and result.execution.device_rows > 0


@pytest.mark.parametrize("device", ["duckdb", "polars"])
@pytest.mark.parametrize("way", ["resident", "chunked", "lazy"])
def test_unmatched_rows_are_added_once(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, device: str, way: str
) -> None:
    """t on the nullable side of a LEFT join, or before a RIGHT or FULL one: the arms join
    inner and the host adds the rows no row of t meets, once per fold, however the arms' rows
    were cut (resident, in chunks under a budget, read from Parquet files)."""
    data: Any = con
    options: dict[str, Any] = {}
    if way == "lazy":
        for name in ("t", "u"):
            con.execute(f"COPY {name} TO '{tmp_path}/{name}.parquet'")
        data, options = tmp_path, {"lazy": True}
    elif way == "chunked":
        options = {"mem_budget_mb": 64, "strategy": "chunked", "chunk_rows": 1000}
    with Session(data, device=device, **options) as session:
        for sql in [
            "SELECT u.s, count(*), count(t.i), sum(t.i) FROM u LEFT JOIN t ON t.k = u.k "
            "GROUP BY u.s",
            "SELECT count(*), sum(t.i), count(u.j) FROM t RIGHT JOIN u ON t.k = u.k",
            "SELECT t.s, u.s, count(*), sum(t.i), count(u.j) FROM t FULL JOIN u ON t.k = u.k "
            "GROUP BY ALL",
            # the arms' RIGHT join: Polars filters u first (``filter_right_join_source``)
            "SELECT u.s, count(*), count(t.i), sum(u.j) FROM u FULL JOIN t ON t.k = u.k "
            "AND u.s = 'a' GROUP BY ALL",
        ]:
            plan = session.explain(sql)
            assert plan.split_table == "t" and plan.complement_sql is not None, plan
            assert "NOT EXISTS" in plan.complement_sql
            result = session.sql(sql, device_share=0.5)
            expected = con.sql(sql).to_arrow_table()
            assert compare_tables(result.table, expected, ordered=False) is None, (way, sql)
            assert result.refusal is None and result.fallback is None, (sql, result.fallback)
            assert result.execution is not None and result.execution.device_rows > 0


def test_a_join_the_complement_does_not_handle_stays_refused(
    con: duckdb.DuckDBPyConnection,
) -> None:
    with Session(con, device="duckdb") as session:
        for sql, why in [
            (
                "SELECT count(*) FROM u LEFT JOIN t ON t.k = u.k FULL JOIN u AS w ON w.j = u.j",
                "two outer joins",
            ),
            ("SELECT count(*) FROM u AS w, u LEFT JOIN t ON t.k = u.k", "a comma in FROM"),
            (
                "SELECT count(*) FROM u LEFT JOIN t ON t.k = u.k AND t.n IN (SELECT n FROM u)",
                "a subquery in its ON",
            ),
        ]:
            plan = session.explain(sql, split_table="t")
            assert plan.refusal is not None and why in plan.refusal, plan
