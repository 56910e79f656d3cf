"""The Polars arm refuses a join on one key that neither side holds once per row: Polars joins in
the order written, and TPC-DS Q72 (catalog_sales to inventory on the item) outgrew 24 GB at SF 1."""

from __future__ import annotations

import duckdb

from dau_scheduler import Session
from dau_scheduler.arms.polars_sql import single_key_joins
from dau_scheduler.compare import compare_tables


def test_many_to_many_is_refused_and_key_joins_are_not() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE f AS SELECT i, i % 50 AS k, i % 7 AS g FROM range(5000) r(i)")
    con.execute("CREATE TABLE m AS SELECT i % 50 AS k, i AS v FROM range(400) r(i)")
    con.execute("CREATE TABLE d AS SELECT i AS k, i * 2 AS w FROM range(50) r(i)")
    with Session(con, device="polars") as session:
        many = "SELECT count(*), sum(v) FROM f JOIN m ON f.k = m.k"
        keyed = "SELECT g, sum(w) FROM f JOIN d ON f.k = d.k GROUP BY g ORDER BY g"
        refused = session.sql(many, device_share=0.5)
        assert refused.refusal is not None and "many rows to many" in refused.refusal
        assert compare_tables(refused.table, con.sql(many).to_arrow_table()) is None
        split = session.sql(keyed, device_share=0.5)
        assert split.refusal is None and split.execution is not None
        assert compare_tables(split.table, con.sql(keyed).to_arrow_table()) is None
    with Session(con, device="duckdb") as session:  # DuckDB reorders its joins: split there
        assert session.sql(many, device_share=0.5).refusal is None


def test_single_key_joins_lists_base_tables_on_one_key() -> None:
    text = (
        'SELECT 1 FROM __dau_split__ AS "a" INNER JOIN "b" AS "b" ON "a"."k" = "b"."k" '
        'INNER JOIN "c" AS "c" ON "c"."x" = "a"."x" AND "c"."y" = "a"."y"'
    )
    assert single_key_joins(text, "t") == [("t", "k", "b", "k")]
