"""The Polars arm applies a block's plain conditions before its correlated subqueries
(``arms/polars_prefilter.py``): Polars joins a decorrelated subquery to every row of the block's
FROM, numbered before any filter, so TPC-H Q21's subqueries over ``lineitem`` met 6M rows where
the block keeps a few thousand (its device arm 15x faster on SF 1 written so; sixty-first
session). ``tests/slt/prefiltered_subqueries.test`` checks the answers against DuckDB; this file
what is written and what is left as it was."""

from __future__ import annotations

from pathlib import Path

import sqlglot
from sqlglot import exp

from dau_scheduler.arms.polars_prefilter import ALIAS, prefilter
from polars_rewrites import tpch_written_and_exact


def _written(sql: str) -> exp.Expr:
    return prefilter(sqlglot.parse_one(sql, read="duckdb"))


def test_plain_conditions_move_into_a_derived_table_and_the_references_follow() -> None:
    tree = _written(
        "SELECT t.k AS g, count(*) AS c FROM t JOIN u ON t.k = u.k WHERE t.v > 3 AND u.s = 'a' "
        "AND EXISTS (SELECT 1 FROM w WHERE w.k = t.k AND w.j <> u.j) GROUP BY t.k"
    )
    derived = tree.args["from_"].this
    assert isinstance(derived, exp.Subquery) and derived.alias == f"{ALIAS}0"
    inner = derived.this
    assert inner.args["where"].this.sql() == "t.v > 3 AND u.s = 'a'"
    assert len(inner.args["joins"]) == 1 and not tree.args.get("joins")
    # The correlated references and the block's own read the derived table's columns.
    subquery = tree.args["where"].find(exp.Select)
    outer = {c.table for c in subquery.find_all(exp.Column) if c.table != "w"}
    assert outer == {f"{ALIAS}0"}
    assert all(c.table == f"{ALIAS}0" for c in tree.args["group"].find_all(exp.Column))
    # Each (table, column) read once: t.k (the output, GROUP BY, the subquery) and u.j.
    assert len(inner.expressions) == 2


def test_bare_column_outputs_keep_their_names() -> None:
    tree = _written(
        "SELECT t.k, t.v FROM t WHERE t.v > 3 AND EXISTS (SELECT 1 FROM w WHERE w.k = t.k)"
    )
    assert [e.alias_or_name for e in tree.expressions] == ["k", "v"]


def test_blocks_left_as_written() -> None:
    left = [
        # no plain condition beside the subquery
        "SELECT t.k FROM t WHERE EXISTS (SELECT 1 FROM w WHERE w.k = t.k)",
        # an uncorrelated subquery only
        "SELECT t.k FROM t WHERE t.v > 3 AND t.k IN (SELECT w.k FROM w)",
        # a star among the outputs
        "SELECT * FROM t WHERE t.v > 3 AND EXISTS (SELECT 1 FROM w WHERE w.k = t.k)",
        # an unaliased expression among the outputs (Polars names it after its text)
        "SELECT t.k + 1 FROM t WHERE t.v > 3 AND EXISTS (SELECT 1 FROM w WHERE w.k = t.k)",
    ]
    for sql in left:
        assert _written(sql).sql() == sqlglot.parse_one(sql, read="duckdb").sql(), sql
    # A subquery correlated with the query around it is left as written (its own subquery
    # over u stays after its conditions); the outer block is written.
    nested = _written(
        "SELECT t.k AS k FROM t WHERE t.v > 3 AND EXISTS (SELECT 1 FROM w WHERE w.k = t.k "
        "AND w.j > 2 AND EXISTS (SELECT 1 FROM u WHERE u.k = w.k))"
    )
    assert nested.args["from_"].this.alias == f"{ALIAS}0"
    middle = nested.args["where"].find(exp.Select)
    assert middle.args["from_"].this.name == "w"
    assert middle.args["where"].this.sql().startswith(f'w.k = "{ALIAS}0"."{ALIAS}0_')


def test_tpch_subquery_queries_split_exactly_with_the_plain_conditions_first(
    tpch_dir: Path,
) -> None:
    """Q2, Q4, Q17, Q21 and Q22 hold a correlated subquery beside plain conditions; on the
    Polars arm each is written with them first and splits to DuckDB's answer. (Q20's block
    holds two correlated subqueries and nothing else.)"""
    tpch_written_and_exact(
        tpch_dir,
        dict.fromkeys(("q02", "q04", "q17", "q21", "q22"), lambda text, _: f'"{ALIAS}0"' in text),
    )
