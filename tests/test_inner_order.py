"""A derived table, CTE or view with ORDER BY and no LIMIT orders the rows around it: DuckDB's
LIMIT over it takes its first rows, and a plain SELECT over it returns them in that order. The
split keeps that order (the ordered block is the split block, its ORDER BY in the final query),
on every CPU device, compared row by row. The keys here never tie, so DuckDB's order is its only
one (checked: the same at 1 and 4 threads)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import duckdb
import pytest

from conftest import device
from dau_scheduler import Session
from dau_scheduler.compare import compare_tables

QUERIES = [
    "SELECT * FROM v",
    "SELECT * FROM v LIMIT 7",
    "SELECT * FROM v LIMIT 7 OFFSET 3",
    "SELECT x FROM v WHERE z > 100 LIMIT 9",
    "WITH c AS (SELECT * FROM t ORDER BY x DESC) SELECT * FROM c LIMIT 4",
    "SELECT * FROM (SELECT * FROM (SELECT * FROM t ORDER BY x) a) b LIMIT 6",
    "SELECT s FROM (SELECT s, x FROM t ORDER BY x) LIMIT 5",
    "SELECT z FROM (SELECT z, x FROM t ORDER BY 1 DESC NULLS LAST, x) LIMIT 5",
    "SELECT x, z FROM vz LIMIT 8",
    "SELECT * FROM vz OFFSET 4990",
    "SELECT x + 1 AS y FROM v WHERE k = 2 LIMIT 10",
    "SELECT * FROM (SELECT x, k FROM t ORDER BY k, x) LIMIT 20",
    "SELECT * FROM (SELECT x, k FROM t WHERE k > 2 ORDER BY x DESC) s WHERE s.x < 3000 LIMIT 5",
    "SELECT * FROM (SELECT k, sum(z) AS sz FROM t GROUP BY k ORDER BY sz DESC) LIMIT 3",
    "SELECT string_agg(s, ',') FROM (SELECT s FROM t ORDER BY x LIMIT 20)",
    "SELECT * FROM (SELECT x FROM t ORDER BY x) UNION ALL SELECT * FROM (SELECT x FROM t ORDER BY x"
    " DESC) LIMIT 5",
    # Order-blind aggregates still split over the rows below the ORDER BY.
    "SELECT k, sum(z) FROM v GROUP BY k ORDER BY k",
    "SELECT count(*), sum(x) FROM v",
]


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT (i * 7919) % 5000 AS x, i % 7 AS k, CASE WHEN i % 11 = 0 THEN"
        " NULL ELSE (i * 31) % 977 END AS z, 'n' || (i % 13) AS s FROM range(5000) r(i)"
    )
    con.execute("CREATE VIEW v AS SELECT * FROM t ORDER BY x")
    con.execute("CREATE VIEW vz AS SELECT x, z FROM t ORDER BY z NULLS FIRST, x")
    yield con
    con.close()


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_rows_keep_the_order_of_the_block_they_come_from(
    con: duckdb.DuckDBPyConnection, name: str
) -> None:
    split = 0
    with Session(con, device=device(name)) as session:
        for sql in QUERIES:
            expected = con.sql(sql).to_arrow_table()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = session.sql(sql, posture="collaborative", device_share=0.4)
            assert compare_tables(result.table, expected, ordered=True) is None, sql
            split += result.execution is not None
    assert split == len(QUERIES)


def test_an_aggregate_over_an_ordered_block_is_still_the_split_block(
    con: duckdb.DuckDBPyConnection,
) -> None:
    with Session(con, device="duckdb") as session:
        plan = session.compile("SELECT k, sum(z) FROM v GROUP BY k")
        assert plan.splittable and "sum" in plan.partial.sql().lower()
        rows = session.compile("SELECT * FROM v LIMIT 7")
        assert rows.splittable and "ORDER BY" in rows.final.sql()
