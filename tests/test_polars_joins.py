"""The Polars arm refuses a join on one key that neither side holds once per row where it may make
too many rows: Polars joins in the order written, and TPC-DS Q72 (catalog_sales to inventory on
the item) outgrew 24 GB at SF 1.
It refuses a join without an equality key that may pair too many rows: Polars holds them at once
(DuckDB's benchmark range_join_big_result made 2.5e9 pairs and Rust aborted the process)."""

from __future__ import annotations

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.arms import polars_facts
from dau_scheduler.arms.polars_joins import single_key_joins, unkeyed_joins
from dau_scheduler.compare import compare_tables


def test_many_to_many_past_its_rows_is_refused_and_key_joins_are_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A join of many rows to many splits where it makes at most ``MANY_PAIRS`` rows over the
    tables whole and is the query's only one (thirty-first session; refused outright before)."""
    monkeypatch.setattr(polars_facts, "MANY_PAIRS", 30_000)
    con = duckdb.connect()
    con.execute("CREATE TABLE f AS SELECT i, i % 50 AS k, i % 7 AS g FROM range(5000) r(i)")
    con.execute("CREATE TABLE m AS SELECT i % 50 AS k, i AS v FROM range(400) r(i)")  # 8 a key
    con.execute("CREATE TABLE s AS SELECT i % 50 AS k, i AS v FROM range(100) r(i)")  # 2 a key
    con.execute("CREATE TABLE d AS SELECT i AS k, i * 2 AS w FROM range(50) r(i)")
    with Session(con, device="polars") as session:
        many = "SELECT count(*), sum(v) FROM f JOIN m ON f.k = m.k"  # 40,000 rows
        fewer = "SELECT g, count(*), sum(v) FROM f JOIN s ON f.k = s.k GROUP BY g ORDER BY g"
        both = "SELECT count(*) FROM f JOIN s ON f.k = s.k JOIN s AS t ON f.g = t.k"
        keyed = "SELECT g, sum(w) FROM f JOIN d ON f.k = d.k GROUP BY g ORDER BY g"
        for sql, why in [(many, "(making 40,000 rows)"), (both, "beside another such join")]:
            refused = session.sql(sql, device_share=0.5)
            assert refused.refusal is not None and "many rows to many" in refused.refusal
            assert why in refused.refusal, refused.refusal
            assert compare_tables(refused.table, con.sql(sql).to_arrow_table()) is None
        for sql in (fewer, keyed):
            split = session.sql(sql, device_share=0.5)
            assert split.refusal is None and split.execution is not None, split.refusal
            assert compare_tables(split.table, con.sql(sql).to_arrow_table()) is None
    with Session(con, device="duckdb") as session:  # DuckDB reorders its joins: split there
        assert session.sql(many, device_share=0.5).refusal is None


def test_single_key_joins_lists_base_tables_on_one_key() -> None:
    text = (
        'SELECT 1 FROM __dau_split__ AS "a" INNER JOIN "b" AS "b" ON "a"."k" = "b"."k" '
        'INNER JOIN "c" AS "c" ON "c"."x" = "a"."x" AND "c"."y" = "a"."y"'
    )
    assert single_key_joins(text, "t") == [("t", "k", "b", "k")]
    # A table only given a column of its own for a correlated subquery is still that table
    # (polars_correlation.name_shared_outer_columns); a filtered one is not listed.
    named = (
        'SELECT 1 FROM __dau_split__ AS "a" JOIN (SELECT *, "b"."n" AS "__dau_o0" FROM "b" AS '
        '"b") AS "b" ON "a"."k" = "b"."k"'
    )
    assert single_key_joins(named, "t") == [("t", "k", "b", "k")]
    filtered = named.replace('AS "b") AS', 'AS "b" WHERE "b"."n" > 0) AS')
    assert single_key_joins(filtered, "t") == []


def test_joins_without_a_key_that_may_pair_too_many_rows_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(polars_facts, "UNKEYED_PAIRS", 1000)  # 40 x 40 rows pass it, 20 x 20 not
    con = duckdb.connect()
    con.execute("CREATE TABLE a AS SELECT i, i % 7 AS j FROM range(40) r(i)")
    con.execute("CREATE TABLE b AS SELECT i, i % 5 AS j FROM range(20) r(i)")
    refused = [
        "SELECT count(*) FROM a x, a y WHERE x.j < y.j",  # an IEJoin in Polars
        "SELECT sum(x.i * y.j) FROM a x CROSS JOIN a y",
        "SELECT count(*) FROM a x, (SELECT i FROM a WHERE i > 3) y",
        # An inner join with no key is a cross join under WHERE (forty-second session).
        "SELECT count(*) FROM a x JOIN a y ON x.j < y.j",
        "SELECT count(*) FROM a x JOIN a y ON x.j = 1 OR y.i < x.i",
    ]
    split = [
        "SELECT count(*) FROM b x, b y WHERE x.j < y.j",  # 400 pairs at most
        "SELECT count(*), sum(y.i) FROM b x JOIN b y ON x.j BETWEEN y.j AND y.i",
        "SELECT count(*) FROM b x JOIN b y ON TRUE",
        "SELECT sum(x.i) FROM a x, (SELECT max(j) AS m FROM a) y WHERE x.i < y.m",  # one row
        "SELECT count(*) FROM a x, a y WHERE x.i = y.i",  # a key
    ]
    with Session(con, device="polars") as session:
        for sql in [*refused, *split]:
            result = session.sql(sql, device_share=0.5)
            assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None, sql
            if sql in refused:
                assert result.refusal is not None and "no equality key" in result.refusal, sql
            else:
                assert result.refusal is None and result.execution is not None, sql


def test_unkeyed_joins_bound_the_pairs_by_the_rows_before_them() -> None:
    rows = {"f": 1000, "d": 10, "e": 30}.__getitem__
    text = (
        'SELECT count(*) FROM __dau_split__ AS "f" JOIN "d" ON "f"."k" = "d"."k", "e" '
        'WHERE "f"."x" < "e"."x"'
    )
    assert unkeyed_joins(text, "f", rows) == [("d, f with e", 30_000)]
    scalar = 'SELECT count(*) FROM "f", (SELECT max(x) AS m FROM "e") AS s WHERE "f"."x" < s.m'
    assert unkeyed_joins(scalar, "f", rows) == []
    # The key every branch of an OR repeats is a key (TPC-H Q19); one some branches lack is not.
    branches = (
        'SELECT 1 FROM "f", "e" WHERE ("f"."k" = "e"."k" AND "e"."x" = 1) OR ("e"."k" = "f"."k")'
    )
    assert unkeyed_joins(branches, "f", rows) == []
    partly = 'SELECT 1 FROM "f", "e" WHERE ("f"."k" = "e"."k" AND "e"."x" = 1) OR "e"."x" = 2'
    assert unkeyed_joins(partly, "f", rows) == [("f with e", 30_000)]


def test_a_plan_polars_optimizer_panics_on_is_refused_before_it_runs() -> None:
    """Polars 1.44's predicate pushdown panics on this plan (correlated subqueries beside the
    CROSS JOIN the arm writes for a comma before an explicit join; probes/correlated_joins.py
    seed 3561): found at planning and refused by name, rather than failing the arm as it runs
    (the host then re-ran the whole query)."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, "
        "CASE WHEN i % 23 = 0 THEN NULL ELSE (i % 7 - 3)::INTEGER END AS n, "
        "['a','b',NULL,'ab'][i % 4 + 1] AS s FROM range(3000) r(i)"
    )
    con.execute(
        "CREATE TABLE u AS SELECT i AS j, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 13 END AS k, "
        "(i % 5 - 2)::INTEGER AS n FROM range(60) r(i)"
    )
    con.execute(
        "CREATE TABLE w AS SELECT i AS k, (i % 3)::INTEGER AS n, ['z','a'][i % 2 + 1] AS s "
        "FROM range(12) r(i)"
    )
    con.execute(
        "CREATE TABLE v AS SELECT i AS m, i % 4 AS n, ['a','z'][i % 2 + 1] AS s FROM range(8) r(i)"
    )
    con.execute("CREATE TABLE e AS SELECT * FROM v WHERE false")
    sql = (
        "SELECT t.s AS g, count(*), sum(t.n) FROM t, u JOIN w ON u.n = w.n WHERE t.k = u.k "
        "AND (SELECT max(e.m) FROM e WHERE e.n > t.n) > 3 "
        "AND w.s IN (SELECT v.s FROM v WHERE v.m > 3 AND v.s = w.s) GROUP BY g ORDER BY g"
    )
    with Session(con, device="polars") as session:
        result = session.sql(sql, device_share=0.5)
        assert result.fallback is None
        assert result.refusal is not None and "cannot run" in result.refusal, result.refusal
        assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
