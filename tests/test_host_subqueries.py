"""Subqueries the host computes for the Polars arm (arms/polars_hoist.py): a float fold compared
with rows is DuckDB's value, computed once per query; the forms it cannot look up stay refused.
tests/slt/host_computed_subqueries.test runs the forms against DuckDB over odd values."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest
import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types

from dau_scheduler import Session, tpch
from dau_scheduler.arms.polars import PolarsArm
from dau_scheduler.arms.polars_hoist import HOST_TABLE, HostQuery, hoist
from dau_scheduler.compare import compare_tables
from host_checks import splits_through_changes

TYPES = {
    "o": {"id": "BIGINT", "k": "BIGINT", "k32": "INT", "y": "DOUBLE"},
    "g": {"k": "BIGINT", "x": "DOUBLE", "s": "VARCHAR"},
    "__dau_split__": {"id": "BIGINT", "k": "BIGINT", "k32": "INT", "y": "DOUBLE"},
}


def _hoisted(sql: str) -> tuple[str, tuple[HostQuery, ...]]:
    tree = annotate_types(sqlglot.parse_one(sql, read="duckdb"), schema=TYPES, dialect="duckdb")
    out, queries = hoist(tree, lambda name: name in {"o", "g"}, lambda query: True)
    return out.sql(dialect="duckdb"), queries


def test_an_uncorrelated_average_is_one_host_value() -> None:
    text, queries = _hoisted(
        "SELECT count(*) FROM __dau_split__ AS o WHERE o.y >= (SELECT avg(g.x) FROM g AS g)"
    )
    assert len(queries) == 1 and queries[0].key_types == ()
    assert queries[0].sql.replace('"', "") == "SELECT AVG(g.x) AS v FROM g AS g"
    assert f"(SELECT FIRST({queries[0].name}.v) FROM {queries[0].name})" in text


def test_a_correlated_average_is_grouped_by_its_keys_and_looked_up() -> None:
    text, queries = _hoisted(
        "SELECT count(*) FROM __dau_split__ AS o WHERE o.y > (SELECT 0.2 * avg(g.x) FROM g AS g "
        "WHERE g.k = o.k AND g.x > 0 AND o.id = g.k)"
    )
    (query,) = queries
    assert query.sql.replace('"', "") == (
        "SELECT g.k AS k0, g.k AS k1, 0.2 * AVG(g.x) AS v FROM g AS g WHERE g.x > 0 "
        "GROUP BY g.k, g.k"
    )
    assert f"{query.name}.k0 = o.k AND {query.name}.k1 = o.id" in text
    assert query.name.startswith(HOST_TABLE)


@pytest.mark.parametrize(
    "subquery",
    [
        # Not NULL over no rows: the lookup would give NULL where DuckDB gives 0.5.
        "SELECT COALESCE(avg(g.x), 0.5) FROM g AS g WHERE g.k = o.k",
        "SELECT avg(g.x) + count(*) FROM g AS g WHERE g.k = o.k",
        # Correlated otherwise than by an equality, or in the value.
        "SELECT avg(g.x) FROM g AS g WHERE g.k < o.k",
        "SELECT avg(g.x + o.y) FROM g AS g",
        # Keys of two types (INTEGER against BIGINT), an unqualified column.
        "SELECT avg(g.x) FROM g AS g WHERE g.k = o.k32",
        "SELECT avg(x) FROM g AS g WHERE g.k = o.k",
        # No float fold: Polars computes it as DuckDB does.
        "SELECT max(g.x) FROM g AS g WHERE g.k = o.k",
        # A subquery inside, a GROUP BY, the split rows.
        "SELECT avg(g.x) FROM g AS g WHERE g.k IN (SELECT o2.k FROM o AS o2)",
        "SELECT avg(g.x) FROM g AS g GROUP BY g.k LIMIT 1",
        "SELECT avg(p.y) FROM __dau_split__ AS p",
    ],
)
def test_forms_the_lookup_cannot_answer_stay_in_place(subquery: str) -> None:
    _, queries = _hoisted(f"SELECT count(*) FROM __dau_split__ AS o WHERE o.y > ({subquery})")
    assert queries == ()


def test_a_cte_named_like_a_table_is_not_the_table() -> None:
    _, queries = _hoisted(
        "WITH g AS (SELECT k, x * 2 AS x FROM g) SELECT count(*) FROM __dau_split__ AS o "
        "WHERE o.y > (SELECT avg(g.x) FROM g AS g WHERE g.k = o.k)"
    )
    assert queries == ()


def test_a_subquery_over_a_cte_of_whole_tables_writes_the_cte_before_it() -> None:
    """TPC-DS Q30's form: a correlated average over a CTE that reads whole tables."""
    cte = "WITH c AS (SELECT g.k AS k, g.x AS x FROM g AS g WHERE g.x > 0) "
    text, queries = _hoisted(
        cte + "SELECT count(*) FROM __dau_split__ AS o "
        "WHERE o.y > (SELECT avg(c.x) FROM c AS c WHERE c.k = o.k)"
    )
    (query,) = queries
    assert query.sql.replace('"', "").startswith(
        "WITH c AS (SELECT g.k AS k, g.x AS x FROM g AS g WHERE g.x > 0) SELECT c.k AS k0"
    )
    assert f"{query.name}.k0 = o.k" in text
    over_split_rows = (
        "WITH c AS (SELECT p.k AS k, p.y AS x FROM __dau_split__ AS p) SELECT count(*) FROM "
        "__dau_split__ AS o WHERE o.y > (SELECT avg(c.x) FROM c AS c WHERE c.k = o.k)"
    )
    assert _hoisted(over_split_rows)[1] == ()


def test_what_the_host_declines_stays_in_place() -> None:
    tree = annotate_types(
        sqlglot.parse_one(
            "SELECT count(*) FROM __dau_split__ AS o WHERE o.y > (SELECT avg(g.x) FROM g AS g)"
        ),
        schema=TYPES,
    )
    out, queries = hoist(tree, lambda name: True, lambda query: False)
    assert queries == () and out.find(exp.Avg) is not None


@pytest.fixture
def connection() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE g AS SELECT i % 7 AS k, 0.1 * (i % 3)::DOUBLE AS x FROM range(3000) r(i)"
    )
    con.execute(
        "CREATE TABLE o AS SELECT i % 9 AS k, 0.1 * (i % 4)::DOUBLE AS y FROM range(6000) r(i)"
    )
    yield con
    con.close()


def test_the_polars_arm_splits_with_the_hosts_values_and_follows_changed_rows(
    connection: duckdb.DuckDBPyConnection,
) -> None:
    sql = "SELECT count(*) FROM o WHERE o.y > (SELECT avg(g.x) FROM g WHERE g.k = o.k)"
    changes = ("UPDATE g SET x = x + 0.2 WHERE k = 3", "DELETE FROM g WHERE k = 5")
    with Session(connection, device=PolarsArm()) as session:
        splits_through_changes(session, connection, sql, changes)
        assert HOST_TABLE in session.device.sql_for(session.compile(sql))  # type: ignore[union-attr]


def test_tpch_q17_and_q22_split_on_polars_with_one_host_value_each(tpch_dir: object) -> None:
    with Session(tpch_dir, device="polars") as session:
        arm = session.device
        assert isinstance(arm, PolarsArm)
        for name in ("q17", "q22"):
            sql = tpch.queries()[name]
            expected = session.host.cursor().sql(sql).to_arrow_table()
            for share in (0.3, 0.8):
                result = session.sql(sql, device_share=share, strict=True)
                assert compare_tables(result.table, expected) is None, (name, share)
        # Each computed once, at the first run, and kept while the tables are as they were.
        assert len(arm.host_values._values) == 2
