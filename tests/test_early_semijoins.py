"""The Polars arm applies a semi or anti join on one table's column (an IN or NOT IN of an
uncorrelated subquery, written as an EXISTS over a CTE) to that table before the block's joins
(``arms/polars_early_semijoins.py``): TPC-H Q18's device arm 3x faster on SF 1 (sixty-second
session). ``tests/slt/early_semijoins.test`` checks the answers against DuckDB; this file what
is written and what is left as it was."""

from __future__ import annotations

from pathlib import Path

import sqlglot
from sqlglot import exp

from dau_scheduler import Session
from dau_scheduler.arms.polars_early_semijoins import semijoins_first
from dau_scheduler.compare import compare_tables
from dau_scheduler.tpch import queries

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


def test_tpch_q18_splits_exactly_with_its_semi_join_on_orders(tpch_dir: Path) -> None:
    with Session(tpch_dir, device="polars") as session:
        sql = queries()["q18"]
        compiled = session.compile(sql, None)
        assert session.device is not None
        text = session.device.sql_for(compiled)  # type: ignore[attr-defined]
        assert 'JOIN (SELECT * FROM "orders" AS "orders" WHERE EXISTS' in text
        result = session.sql(sql, device_share=0.5)
        assert result.execution is not None and result.execution.device_rows > 0
        expected = session.host.cursor().sql(sql).to_arrow_table()
        assert compare_tables(result.table, expected) is None
