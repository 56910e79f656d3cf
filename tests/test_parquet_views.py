"""A view of the user's connection that reads Parquet files whole (``CREATE VIEW t AS FROM
'x.parquet'``) is split as those files (decision 023), on every CPU device: the 22 TPC-H
queries over such views equal DuckDB's answers. A view that reads them otherwise stays a view,
and one redefined after the Session read its files is read again."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from conftest import device
from dau_scheduler import Session, tpch
from dau_scheduler.compare import compare_tables
from dau_scheduler.tables import files_of, parquet_view_files

TABLES = ["lineitem", "orders", "customer", "nation", "region", "part", "partsupp", "supplier"]


@pytest.fixture
def con(tpch_dir: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    for name in TABLES:
        path = tpch_dir / f"{name}.parquet"
        if name == "nation":  # the other spelling DuckDB takes for the same view
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM '{path}'")
        else:
            con.execute(f"CREATE VIEW {name} AS FROM read_parquet('{path}')")
    yield con
    con.close()


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_tpch_over_parquet_views_splits_exactly(con: duckdb.DuckDBPyConnection, name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Session(con, device=device(name)) as session:
            assert session.row_counts["lineitem"] > 0 and session.lazy
            for query, sql in tpch.queries().items():
                expected = con.sql(sql).to_arrow_table()
                result = session.sql(sql, posture="collaborative", device_share=0.4)
                assert compare_tables(result.table, expected, ordered=True) is None, query
                # (Q17 and Q22 compare rows with an AVG in a subquery: the host computes it.)
                assert result.execution is not None, (query, result.refusal)
                assert result.fallback is None, (query, result.fallback)


def test_a_redefined_view_is_read_again(con: duckdb.DuckDBPyConnection, tpch_dir: Path) -> None:
    sql = "SELECT count(*), sum(o_totalprice) FROM orders"
    with Session(con, device="polars") as session:
        assert session.sql(sql, posture="collaborative", device_share=0.5).execution is not None
        con.execute(f"CREATE OR REPLACE VIEW orders AS FROM '{tpch_dir / 'lineitem.parquet'}'")
        with pytest.raises(duckdb.Error):
            con.sql(sql).fetchall()  # the new orders has no o_totalprice
        count = "SELECT count(*), sum(l_quantity) FROM orders"
        result = session.sql(count, posture="collaborative", device_share=0.5)
        assert compare_tables(result.table, con.sql(count).to_arrow_table()) is None
        rows = con.sql("SELECT count(*) FROM orders").fetchall()[0][0]
        assert result.execution is not None and session.row_counts["orders"] == rows


def test_only_whole_plain_reads_of_local_files_are_split_as_files(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    duckdb.sql(f"COPY (SELECT i, i % 3 AS k FROM range(100) r(i)) TO '{path}'")
    others = [
        f"CREATE VIEW v AS SELECT * FROM read_parquet('{path}', filename = true);",
        f"CREATE VIEW v AS SELECT i FROM read_parquet('{path}');",
        f"CREATE VIEW v AS SELECT * FROM read_parquet('{path}') WHERE i > 3;",
        f"CREATE VIEW v AS SELECT * EXCLUDE (k) FROM read_parquet('{path}');",
        f"CREATE VIEW v AS SELECT * FROM read_parquet('{path}') LIMIT 5;",
    ]
    for sql in others:
        assert parquet_view_files(sql) is None, sql
    assert files_of(duckdb.connect(), "s3://bucket/t.parquet") is None
    assert files_of(duckdb.connect(), f"{tmp_path}/missing.parquet") is None
    con = duckdb.connect()
    con.execute(f"CREATE VIEW kept AS SELECT * FROM read_parquet('{path}') WHERE i > 3")
    views = {
        "whole": f"FROM '{path}'",
        "called": f"SELECT * FROM read_parquet('{path}')",
        "twice": f"SELECT * FROM read_parquet(list_value('{path}', '{path}'))",
        "globbed": f"FROM '{tmp_path}/*.parquet'",
        "mixed": f"FROM read_parquet(['{tmp_path}/*.parquet', '{path}'])",
    }
    for name, body in views.items():
        con.execute(f"CREATE VIEW {name} AS {body}")
    with Session(con, device="polars") as session:
        split = {"whole", "called", "twice", "globbed"}
        assert split <= set(session.row_counts)
        assert not {"kept", "mixed"} & set(session.row_counts)
        for name in [*views, "kept"]:
            sql = f"SELECT k, sum(i) FROM {name} GROUP BY k"
            expected = con.sql(sql).to_arrow_table()
            result = session.sql(sql, posture="collaborative", device_share=0.5)
            assert compare_tables(result.table, expected, ordered=False) is None, sql
            assert (result.execution is not None) == (name in split), name
    con.close()


def test_a_key_value_folder_is_no_partition_of_a_split(tmp_path: Path) -> None:
    """DuckDB reads a file under ``a=5/`` as a hive partition: 5 stands for the file's own
    column ``a``, which Polars and pyarrow read from the file. A view of such a file is left a
    view (500 for 300 on the Polars device before); a Session over a folder of such files reads
    every file's own columns on both arms (``hive_partitioning = false``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "a=5"
    folder.mkdir()
    table = pa.table({"a": pa.array([1] * 100, pa.int32()), "b": list(range(100))})
    pq.write_table(table, folder / "t.parquet", row_group_size=30)
    query = "SELECT sum(a), count(*), sum(b) FROM t"
    con = duckdb.connect()
    con.execute(f"CREATE VIEW t AS FROM read_parquet('{folder / 't.parquet'}')")
    for name in ("polars", "duckdb"):
        with Session(con, device=device(name)) as session:
            assert session.parquet_views == {}
            result = session.sql(query, device_share=0.5)
            assert compare_tables(result.table, con.sql(query).to_arrow_table()) is None
        for lazy in (False, True):
            with Session(folder, device=device(name), lazy=lazy) as session:
                result = session.sql(query, device_share=0.5)
                assert result.execution is not None
                assert result.table.column(0).to_pylist() == [100]
    con.close()


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_files_of_one_table_with_other_types_are_answered_by_duckdb(
    tmp_path: Path, name: str
) -> None:
    """DuckDB reads every file of a table as the first one's types; a split read each chunk
    as its own file's (``typeof(x)`` grouped: two rows for DuckDB's one). Such a table, a
    folder's parts or a view's files, is answered unsplit, by name."""
    (tmp_path / "t").mkdir()
    for part, kind in (("a", "INTEGER"), ("b", "BIGINT")):
        rows = f"SELECT range::{kind} AS x, range % 3 AS g FROM range(300)"
        duckdb.sql(f"COPY ({rows}) TO '{tmp_path}/t/{part}.parquet'")
    files = f"['{tmp_path}/t/a.parquet', '{tmp_path}/t/b.parquet']"
    con = duckdb.connect()
    con.execute(f"CREATE VIEW t AS FROM read_parquet({files})")
    sessions = [
        Session(con, device=device(name)),
        Session(tmp_path, device=device(name), lazy=True),
    ]
    for session in sessions:
        with session:
            for sql in ("SELECT typeof(x), count(*) FROM t GROUP BY 1", "SELECT sum(x) FROM t"):
                result = session.sql(sql, posture="collaborative", device_share=0.5)
                assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None, sql
                assert result.refusal is not None and "Parquet files differ" in result.refusal


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_a_file_rewritten_under_a_view_or_a_lazy_folder_is_read_again(
    tmp_path: Path, name: str
) -> None:
    """DuckDB reads a view's files, and a lazy Session's, as they are when a query runs; a
    Session that kept the counts it read before cut a file rewritten since wrongly (a view's
    file rewritten by COPY: 1,000 rows for DuckDB's 100,000; the Polars device panicked)."""
    path = tmp_path / "t.parquet"
    con = duckdb.connect()
    sql = "SELECT count(*), sum(x), max(g) FROM t"
    for session_over in ("view", "folder"):
        con.execute(f"COPY (SELECT range AS x, range % 3 AS g FROM range(1000)) TO '{path}'")
        con.execute(f"CREATE OR REPLACE VIEW t AS FROM '{path}'")
        over = con if session_over == "view" else tmp_path
        with Session(over, device=device(name), lazy=session_over == "folder") as session:
            for rows in (1000, 100_000, 10):
                duckdb.sql(
                    f"COPY (SELECT range AS x, range % 7 AS g FROM range({rows})) TO '{path}'"
                )
                result = session.sql(sql, posture="collaborative", device_share=0.5)
                assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None, rows
                assert result.execution is not None and result.fallback is None, rows
                assert session.row_counts["t"] == rows
    con.close()


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_a_view_over_a_glob_reads_the_files_it_matches_now(tmp_path: Path, name: str) -> None:
    """A view's glob is matched again before each query: a file added or removed since the
    Session listed them is read as DuckDB reads it (the view's text is unchanged)."""
    for part, rows in (("b", 300), ("a", 1000)):
        duckdb.sql(
            f"COPY (SELECT range AS x, '{part}' AS f FROM range({rows})) TO "
            f"'{tmp_path}/{part}.parquet'"
        )
    con = duckdb.connect()
    con.execute(f"CREATE VIEW t AS FROM '{tmp_path}/*.parquet'")
    sql = "SELECT f, count(*), sum(x) FROM t GROUP BY f ORDER BY f"
    with Session(con, device=device(name)) as session:
        for change in ("", "add", "remove"):
            if change == "add":
                duckdb.sql(
                    f"COPY (SELECT range AS x, 'c' AS f FROM range(70)) TO '{tmp_path}/c.parquet'"
                )
            elif change == "remove":
                (tmp_path / "a.parquet").unlink()
            result = session.sql(sql, posture="collaborative", device_share=0.5)
            assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None, change
            assert result.execution is not None and result.fallback is None, change
        assert session.row_counts["t"] == 370
    con.close()
