"""Files under ``key=value`` folders (``COPY ... PARTITION_BY``) read as DuckDB reads them: the
files' own columns followed by one hive column per key, each a per-file constant of DuckDB's
type (``hive.py``), on every path that reads the rows (a view of the connection, an inline
glob, each device, a memory budget's chunks); what DuckDB reads otherwise stays DuckDB's."""

from __future__ import annotations

import warnings
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from conftest import device
from dau_scheduler import Session
from dau_scheduler.compare import compare_tables
from dau_scheduler.tables import ParquetViewSource, files_of, with_partitions

#: Keys of three DuckDB types (BIGINT, VARCHAR with NULLs and zero-padded digits, DATE).
ROWS = (
    "SELECT range AS i, range % 3 AS k, CASE WHEN range % 5 = 0 THEN NULL ELSE "
    "lpad((range % 2)::VARCHAR, 2, '0') END AS s, DATE '2020-01-01' + (range % 2)::INT AS d, "
    "range * 0.25 AS f FROM range({})"
)


def _partitioned(folder: Path, rows: int = 20_000) -> str:
    duckdb.sql(f"COPY ({ROWS.format(rows)}) TO '{folder}' (FORMAT parquet, PARTITION_BY (k, s, d))")
    return f"{folder}/**/*.parquet"


QUERIES = (
    "SELECT count(*), sum(i), sum(k), min(d), max(s), count(s) FROM {t}",
    "SELECT k, s, d, count(*), sum(f) FROM {t} GROUP BY ALL ORDER BY ALL",
    "SELECT d, count(*) FROM {t} WHERE k = 1 AND i > 500 GROUP BY d ORDER BY d",
    "SELECT s, count(*) FROM {t} GROUP BY s ORDER BY s NULLS FIRST",
    "SELECT * FROM {t} ORDER BY i LIMIT 5",
)


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_hive_columns_split_as_duckdb_reads_them(tmp_path: Path, name: str) -> None:
    glob = _partitioned(tmp_path / "h")
    con = duckdb.connect()
    con.execute(f"CREATE VIEW v AS FROM '{glob}'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Session(con, device=device(name)) as session:
            assert set(session.parquet_views) == {"v"}
            spellings = (
                "v",
                f"'{glob}'",
                f"read_parquet('{glob}')",
                f"read_parquet('{glob}', hive_partitioning = true)",  # (what DuckDB does)
            )
            for table in spellings:
                for query in QUERIES:
                    sql = query.format(t=table)
                    result = session.sql(sql, posture="collaborative", device_share=0.5)
                    expected = con.sql(sql).to_arrow_table()
                    assert compare_tables(result.table, expected, ordered=True) is None, sql
                    assert result.execution is not None, (sql, result.refusal)
            # Said otherwise than DuckDB would read it: the files' own columns, DuckDB's alone.
            sql = f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning = false)"
            result = session.sql(sql, posture="collaborative", device_share=0.5)
            assert result.table.column(0).to_pylist() == [20_000] and result.execution is None


def test_a_memory_budget_reads_hive_columns_chunk_by_chunk(tmp_path: Path) -> None:
    glob = _partitioned(tmp_path / "h")
    con = duckdb.connect()
    con.execute(f"CREATE VIEW v AS FROM '{glob}'")
    with Session(con, device="polars", mem_budget_mb=64, strategy="chunked") as session:
        session.chunk_rows = 3_000
        for sql in (
            "SELECT k, d, count(*), sum(i) FROM v GROUP BY ALL ORDER BY ALL",
            "SELECT s, count(*) FROM v GROUP BY s ORDER BY s",
        ):
            result = session.sql(sql, posture="collaborative", device_share=0.5)
            assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None, sql
            assert result.strategy is not None and result.strategy.chunks > 1


def test_rows_of_hive_columns_alone_are_duckdbs_rows(tmp_path: Path) -> None:
    """A read of the hive columns alone reads no file (rows counted from the metadata), across
    files and in batches, as DuckDB's scan gives them."""
    glob = _partitioned(tmp_path / "h")
    con = duckdb.connect()
    files = files_of(con, glob)
    assert files is not None
    taken = with_partitions(con, [glob], ParquetViewSource(files, pattern=glob))
    assert taken is not None
    source, columns = taken
    assert list(columns) == ["i", "f", "d", "k", "s"]  # (DuckDB's key order, not the folders')
    assert source.hive is not None and source.hive.types == {
        "d": "DATE",
        "k": "BIGINT",
        "s": "VARCHAR",
    }
    expected = con.sql(f"FROM '{glob}'").to_arrow_table()
    assert source.arrow().equals(expected)
    for names, start, stop in (
        (["k"], 10, 15_000),
        (["s", "i"], 6_000, 6_700),
        (["d", "k"], 19_990, 20_010),
    ):
        stop_ = min(stop, expected.num_rows)
        assert source.rows(names, start, stop).equals(
            expected.select(names).slice(start, stop_ - start)
        )
    for names in (["k", "d"], ["i", "s"]):
        batches = list(source.batches(names, 7_000))
        assert len(batches) == 3 and pa.concat_tables(batches).equals(expected.select(names))
    assert (
        con.sql(source.range_sql(100, 12_000)).to_arrow_table().equals(expected.slice(100, 11_900))
    )


def test_what_duckdb_reads_otherwise_stays_duckdbs(tmp_path: Path) -> None:
    """Files under other keys file by file, and a key of a file column's name (DuckDB reads
    the folder's value for it), are not taken; a key above the glob's folder is a column."""
    rows = "SELECT range AS i, 1 AS a FROM range({})"
    for path, count in (
        ("mix/k=1/p.parquet", 50),
        ("mix/j=1/p.parquet", 60),
        ("col/a=5/p.parquet", 70),
        ("up/z=7/data/p1.parquet", 80),
        ("up/z=7/data/p2.parquet", 0),
    ):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        duckdb.sql(f"COPY ({rows.format(count)}) TO '{tmp_path / path}' (FORMAT parquet)")
    con = duckdb.connect()
    with Session(con, device="polars") as session:
        for folder, split in (("mix/*", False), ("col/*", False), ("up/z=7/data", True)):
            sql = (
                f"SELECT * EXCLUDE (i), count(*), sum(i) FROM '{tmp_path}/{folder}/*.parquet' "
                "GROUP BY ALL ORDER BY ALL"
            )
            try:
                expected = con.sql(sql).to_arrow_table()
            except duckdb.Error:  # (DuckDB's own refusal of files under other keys)
                with pytest.raises(duckdb.Error):
                    session.sql(sql)
                continue
            result = session.sql(sql, posture="collaborative", device_share=0.5)
            assert compare_tables(result.table, expected, ordered=True) is None, sql
            assert (result.execution is not None) == split, (sql, result.refusal)
            if not split:
                assert result.refusal is not None and "key=value" in result.refusal
        # The option said otherwise than DuckDB's default stays as written: a file's own
        # column of a folder's key, same type, read from the file (100), not the folder (500).
        (tmp_path / "own" / "a=5").mkdir(parents=True)
        own = tmp_path / "own" / "a=5" / "y.parquet"
        duckdb.sql(f"COPY (SELECT 1::BIGINT AS a, range AS i FROM range(100)) TO '{own}'")
        for said in ("false", "true"):
            glob = f"{tmp_path}/own/*/*.parquet"
            sql = f"SELECT sum(a) FROM read_parquet('{glob}', hive_partitioning = {said})"
            result = session.sql(sql, posture="collaborative", device_share=0.5)
            assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None, sql
            assert result.table.column(0).to_pylist() == [100 if said == "false" else 500]


def test_the_polars_frame_reads_duckdbs_values_or_gives_them_file_by_file(tmp_path: Path) -> None:
    """Polars reads the folders itself where it reads DuckDB's values (checked on a row of
    each file); where it would read others, each file's values are given as literals."""
    import polars as pl

    from dau_scheduler.hive import polars_frame

    glob = _partitioned(tmp_path / "h", 3_000)
    con = duckdb.connect()
    files = files_of(con, glob)
    assert files is not None
    taken = with_partitions(con, [glob], ParquetViewSource(files, pattern=glob))
    assert taken is not None and taken[0].hive is not None
    source, values = taken[0], taken[0].hive.values
    expected = con.sql(f"FROM '{glob}'").to_arrow_table()
    native = polars_frame(source.files, source.file_rows(), values, [])
    assert "UNION" not in native.explain().upper()  # (one scan: slices reach the files)
    assert native.collect().to_arrow().cast(expected.schema).equals(expected)
    # Values Polars would not read from these folders: given file by file instead.
    other = values.set_column(1, "k", pa.array([7] * values.num_rows, pa.int64()))
    given = polars_frame(source.files, source.file_rows(), other, ["f"]).collect()
    assert given["k"].unique().to_list() == [7]
    assert given.columns == ["i", "d", "k", "s"] and given.height == expected.num_rows
    assert isinstance(given, pl.DataFrame)
