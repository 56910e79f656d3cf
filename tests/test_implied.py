"""The Polars arm adds, beside an OR across a block's tables, the condition on one table each
that the OR implies (``arms/polars_implied.py``): Polars applies it to the table before the
joins, as DuckDB's optimizer does (TPC-DS Q13 and Q48's device arm 4-5x faster on SF 1; sixty-
second session). ``tests/slt/implied_conditions.test`` and ``probes/implied_conditions.py``
check the answers against DuckDB; this file what is written and what is left as it was."""

from __future__ import annotations

from pathlib import Path

import sqlglot
from sqlglot import exp

from dau_scheduler.arms.polars_implied import imply_table_conditions
from dau_scheduler.rewrite.block_parts import conjuncts
from polars_rewrites import tpch_written_and_exact


def _added(sql: str) -> list[str]:
    """The conditions the rewrite adds to the outer block's WHERE, as text."""
    before = conjuncts(sqlglot.parse_one(sql, read="duckdb").args["where"].this)
    tree = imply_table_conditions(sqlglot.parse_one(sql, read="duckdb"))
    after = conjuncts(tree.args["where"].this)
    return [term.sql() for term in after[len(before) :]]


def test_each_table_every_branch_constrains_gains_the_or_of_its_terms() -> None:
    added = _added(
        "SELECT count(*) FROM t JOIN u ON t.k = u.k JOIN v ON u.n = v.n "
        "WHERE (t.a = 1 AND u.b = 'x' AND t.c IS NULL) OR (t.a = 2 AND u.b IN ('y', NULL)) "
        "OR (t.a BETWEEN 5 AND 1 + 6 AND v.m > 0 AND u.b <> 'z')"
    )
    assert added == [
        "(t.a = 1 AND t.c IS NULL) OR (t.a = 2) OR (t.a BETWEEN 5 AND 1 + 6)",
        "(u.b = 'x') OR (u.b IN ('y', NULL)) OR (u.b <> 'z')",
    ]  # (v is constrained in one branch only)


def test_nested_terms_on_one_table_are_taken_whole() -> None:
    added = _added(
        "SELECT count(*) FROM t, u WHERE t.k = u.k AND ((NOT (t.a = 1 OR t.a IS NULL) AND "
        "u.b = 1) OR (t.a IS NOT DISTINCT FROM 2 AND u.b = 2))"
    )
    assert added == [
        "(NOT (t.a = 1 OR t.a IS NULL)) OR (t.a IS NOT DISTINCT FROM 2)",
        "(u.b = 1) OR (u.b = 2)",
    ]


def test_terms_that_could_fail_or_read_two_tables_are_not_taken() -> None:
    # A function of a column, a cast of it, a column compared with a column, a subquery: the
    # derived condition is evaluated on rows the joins would drop, and must not fail there.
    assert _added(
        "SELECT count(*) FROM t JOIN u ON t.k = u.k WHERE (abs(t.a) = 1 AND u.b = 1) "
        "OR (CAST(t.s AS INT) = 2 AND u.b = 2)"
    ) == ["(u.b = 1) OR (u.b = 2)"]
    assert _added(
        "SELECT count(*) FROM t JOIN u ON t.k = u.k WHERE (t.a < u.a AND u.b = 1) "
        "OR (t.a IN (SELECT w.a FROM w) AND u.b = 2)"
    ) == ["(u.b = 1) OR (u.b = 2)"]


def test_blocks_and_conditions_left_as_written() -> None:
    left = [
        # an outer join: a condition on the null-extended side is left to the OR itself
        "SELECT count(*) FROM t LEFT JOIN u ON t.k = u.k WHERE (t.a = 1 AND u.b = 1) OR "
        "(t.a = 2 AND u.b = 2)",
        # USING and NATURAL joins read their columns unqualified
        "SELECT count(*) FROM t JOIN u USING (k) WHERE (t.a = 1 AND u.b = 1) OR "
        "(t.a = 2 AND u.b = 2)",
        # one table: the OR is applied to it as written
        "SELECT count(*) FROM t WHERE (t.a = 1 AND t.b = 1) OR (t.a = 2 AND t.b = 2)",
        "SELECT count(*) FROM t JOIN u ON t.k = u.k WHERE (t.a = 1 AND t.b = 1) OR t.a = 2",
        # a branch constraining no one table
        "SELECT count(*) FROM t JOIN u ON t.k = u.k WHERE (t.a = 1 AND u.b = 1) OR t.c < u.c",
        # an unqualified column (whose table is not known here)
        "SELECT count(*) FROM t JOIN u ON t.k = u.k WHERE (a = 1 AND u.b = 1) OR "
        "(a = 2 AND t.c > 0)",
        # a VALUES list among the sources
        "SELECT count(*) FROM t, (VALUES (1), (2)) AS r(i) WHERE (t.a = 1 AND r.i = 1) OR "
        "(t.a = 2 AND r.i = 2)",
    ]
    for sql in left:
        tree = imply_table_conditions(sqlglot.parse_one(sql, read="duckdb"))
        assert tree.sql() == sqlglot.parse_one(sql, read="duckdb").sql(), sql
    inner = imply_table_conditions(
        sqlglot.parse_one(
            "SELECT count(*) FROM w WHERE w.k IN (SELECT t.k FROM t JOIN u ON t.k = u.k "
            "WHERE (t.a = 1 AND u.b = 1 AND w.c = 1) OR (t.a = 2 AND u.b = 2))",
            read="duckdb",
        )
    )
    block = inner.args["where"].find(exp.Select)
    assert "(t.a = 1) OR (t.a = 2)" in block.args["where"].sql()


def test_tpch_queries_with_ors_across_tables_split_exactly(tpch_dir: Path) -> None:
    """Q7 (two nations, each read twice) and Q19 (three brands' terms on ``part`` and
    ``lineitem``) are written on the Polars arm and split to DuckDB's answer."""
    tpch_written_and_exact(
        tpch_dir,
        dict.fromkeys(("q07", "q19"), lambda text, sql: text.count(" OR ") > sql.count(" OR ")),
    )
