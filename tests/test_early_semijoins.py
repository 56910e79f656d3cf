"""The Polars arm applies a semi or anti join on one table's column (an IN or NOT IN of an
uncorrelated subquery, written as an EXISTS over a CTE) to that table before the block's joins
(``arms/polars_early_semijoins.py``): TPC-H Q18's device arm 3x faster on SF 1 (sixty-second
session). ``tests/slt/early_semijoins.test`` checks the answers against DuckDB; this file what
is written and what is left as it was (a subquery correlated with the column a set tests
shares the set: TPC-H Q20's device arm 6-7x faster)."""

from __future__ import annotations

from pathlib import Path

import sqlglot
from sqlglot import exp

from dau_scheduler.arms.polars_early_semijoins import semijoins_first
from polars_rewrites import tpch_written_and_exact

_SET = "EXISTS (SELECT 1 FROM __dau_in0 WHERE {} = __dau_in0.__dau_in)"


def _written(sql: str) -> exp.Expr:
    return semijoins_first(sqlglot.parse_one(sql, read="duckdb"))


def test_a_tables_semi_join_moves_into_a_derived_table_of_its_name() -> None:
    tree = _written(
        "SELECT l.k, c.n FROM __dau_split__ AS l JOIN o ON o.k = l.k JOIN c ON c.k = o.c "
        f"WHERE {_SET.format('o.k')} AND NOT {_SET.format('o.c')} AND l.v > 2"
    )
    derived = tree.args["joins"][0].this
    assert isinstance(derived, exp.Subquery) and derived.alias == "o"
    inner = derived.this
    assert inner.expressions[0].is_star and inner.args["from_"].this.name == "o"
    assert inner.args["where"].sql().count("EXISTS") == 2
    assert tree.args["where"].this.sql() == "l.v > 2"


def test_blocks_and_terms_left_as_written() -> None:
    left = [
        # the split table's own semi join (its rows are cut by the other tables' joins first)
        f"SELECT l.k FROM __dau_split__ AS l JOIN o ON o.k = l.k WHERE {_SET.format('l.k')}",
        # an outer join
        f"SELECT l.k FROM __dau_split__ AS l LEFT JOIN o ON o.k = l.k WHERE {_SET.format('o.k')}",
        # one table alone: Polars applies it to the table as written
        f"SELECT o.k FROM o WHERE {_SET.format('o.k')}",
        # a semi join under an OR, or beside a column of another table
        f"SELECT l.k FROM __dau_split__ AS l JOIN o ON o.k = l.k WHERE {_SET.format('o.k')} "
        "OR l.v = 1",
        "SELECT l.k FROM __dau_split__ AS l JOIN o ON o.k = l.k WHERE EXISTS (SELECT 1 FROM "
        "__dau_in0 WHERE o.k = __dau_in0.__dau_in AND l.v = 2)",
        # a correlated subquery over a table (not one of the IN sets)
        "SELECT l.k FROM __dau_split__ AS l JOIN o ON o.k = l.k WHERE EXISTS (SELECT 1 FROM w "
        "WHERE w.k = o.k)",
        # a derived table (its columns may have been renamed: left to its own query)
        "SELECT l.k FROM __dau_split__ AS l JOIN (SELECT k FROM o) AS o ON o.k = l.k "
        f"WHERE {_SET.format('o.k')}",
    ]
    for sql in left:
        assert _written(sql).sql() == sqlglot.parse_one(sql, read="duckdb").sql(), sql


def test_a_correlated_subquery_reads_its_table_with_the_sets_rows_alone() -> None:
    tree = _written(
        f"SELECT ps.k FROM __dau_split__ AS ps WHERE {_SET.format('ps.p')} AND ps.q > (SELECT "
        "sum(l.q) FROM l WHERE l.p = ps.p AND l.s = ps.s) AND NOT EXISTS (SELECT 1 FROM m "
        "WHERE ps.p = m.p)"
    )
    queries_ = [s for s in tree.find_all(exp.Select) if s.args.get("from_")]
    restricted = [s for s in queries_ if s.expressions[0].is_star]
    assert sorted(s.args["from_"].this.name for s in restricted) == ["l", "m"]
    assert all(s.parent.alias in ("l", "m") for s in restricted)
    for sql in [
        # the set under an OR, or an anti join's
        f"SELECT ps.k FROM __dau_split__ AS ps WHERE ({_SET.format('ps.p')} OR ps.k = 1) AND "
        "ps.q > (SELECT sum(l.q) FROM l WHERE l.p = ps.p)",
        f"SELECT ps.k FROM __dau_split__ AS ps WHERE NOT {_SET.format('ps.p')} AND "
        "ps.q > (SELECT sum(l.q) FROM l WHERE l.p = ps.p)",
        # a subquery of rows (not one row of aggregates), or holding a query of its own
        f"SELECT ps.k FROM __dau_split__ AS ps WHERE {_SET.format('ps.p')} AND "
        "ps.q > (SELECT l.q FROM l WHERE l.p = ps.p LIMIT 1)",
        f"SELECT ps.k FROM __dau_split__ AS ps WHERE {_SET.format('ps.p')} AND "
        "ps.q > (SELECT sum(l.q) FROM l WHERE l.p = ps.p AND l.s IN (SELECT s FROM m))",
        # the subquery's table read elsewhere in the query
        f"SELECT ps.k, (SELECT count(*) FROM l) AS n FROM __dau_split__ AS ps WHERE "
        f"{_SET.format('ps.p')} AND ps.q > (SELECT sum(l.q) FROM l WHERE l.p = ps.p)",
        # a subquery equating another column
        f"SELECT ps.k FROM __dau_split__ AS ps WHERE {_SET.format('ps.p')} AND "
        "ps.q > (SELECT sum(l.q) FROM l WHERE l.s = ps.s)",
    ]:
        assert _written(sql).sql() == sqlglot.parse_one(sql, read="duckdb").sql(), sql


def test_tpch_q18_and_q20_split_exactly_with_their_semi_joins_first(tpch_dir: Path) -> None:
    written = {
        "q18": 'JOIN (SELECT * FROM "orders" AS "orders" WHERE EXISTS',
        "q20": 'FROM (SELECT * FROM "lineitem" AS "lineitem" WHERE EXISTS',
    }
    tpch_written_and_exact(
        tpch_dir, {name: lambda text, _, f=form: f in text for name, form in written.items()}
    )
