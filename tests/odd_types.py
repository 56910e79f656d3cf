"""A table whose columns are read otherwise by the readers and engines beside DuckDB (pyarrow,
Polars, Spark), as DuckDB's own table and as a Parquet file DuckDB wrote, with queries over
each column: every split of them must equal DuckDB's answer over the same data, or be refused.

What each column caught: ``tms`` (TIMESTAMP_MS) is a TIMESTAMP to DuckDB's Parquet scan and a
TIMESTAMP_MS over pyarrow's reading (``typeof`` differed under a budget and on dask); ``iv``
(INTERVAL) is 12 raw bytes to pyarrow (a crash under a budget and on dask) and panicked Polars'
Parquet reader; ``tm``, ``tns`` crashed Spark, ``tms``, ``arr`` came back from it as other
types, and every in-memory table holding one of them failed every query over Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from dau_scheduler.compare import compare_tables

COLUMNS = {
    "tms": "('2020-01-01'::TIMESTAMP + to_milliseconds(i * 1234567))::TIMESTAMP_MS",
    "tss": "('2020-01-01'::TIMESTAMP + to_seconds(i))::TIMESTAMP_S",
    "tns": "('2020-01-01'::TIMESTAMP + to_microseconds(i))::TIMESTAMP_NS",
    "tm": "CASE i % 6 WHEN 0 THEN '24:00:00'::TIME ELSE '01:00:00'::TIME + to_seconds(i) END",
    "iv": "to_days(i % 9)",
    "arr": "[i, i + 1]::BIGINT[2]",
    "u": "('00000000-0000-0000-0000-' || lpad((i % 50)::VARCHAR, 12, '0'))::UUID",
    "ub": "(i % 7)::UTINYINT",
}

QUERIES = [
    q
    for c in COLUMNS
    for q in (
        f"SELECT g, min({c}), max({c}), count(DISTINCT {c}) FROM t GROUP BY g",
        f"SELECT g, max(typeof({c})) FROM t GROUP BY g",
        f"SELECT count(*) FROM t WHERE {c} IS NOT NULL",
    )
]


def make(folder: Path, rows: int = 3000) -> tuple[pa.Table, Path, duckdb.DuckDBPyConnection]:
    """The table in memory, a folder holding it as ``t.parquet`` (row groups of 500), and a
    connection whose view ``t`` reads that file (the oracle for the folder)."""
    con = duckdb.connect()
    listed = ", ".join(f"{v} AS {k}" for k, v in COLUMNS.items())
    con.execute(f"CREATE TABLE t AS SELECT i % 4 AS g, i AS x, {listed} FROM range({rows}) r(i)")
    folder.mkdir(parents=True, exist_ok=True)
    con.execute(f"COPY t TO '{folder / 't.parquet'}' (ROW_GROUP_SIZE 500)")
    table = con.sql("FROM t").to_arrow_table()
    oracle = duckdb.connect()
    oracle.execute(f"CREATE VIEW t AS FROM read_parquet('{folder / 't.parquet'}')")
    return table, folder, oracle


def problems(session: Any, oracle: Any, share: float | None = 0.5) -> list[str]:
    """The queries whose split is not DuckDB's answer over the same data (refusals pass)."""
    found = []
    for sql in QUERIES:
        want = oracle.sql(sql).to_arrow_table()
        try:
            got = session.sql(sql, device_share=share).table
        except Exception as exc:  # noqa: BLE001 - a crash is a finding, named
            found.append(f"{sql}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        diff = compare_tables(got, want, ordered=False)
        if diff is not None:
            found.append(f"{sql}: {diff}")
    return found


def write_unreadable_text(folder: Path) -> None:
    """``folder/t.parquet``: ``i`` 1, 2, 3 and ``s`` with a value that is not UTF-8 (as DuckDB's
    invalid_utf8_*.parquet): DuckDB answers ``count(*)`` and ``sum(i)`` over it and fails on a
    scan of ``s``, which a cluster worker's read of every column makes."""
    import pyarrow.parquet as pq

    bad = pa.array([b"ok", b"TREL\xc3", b"x"], pa.binary()).view(pa.string())
    pq.write_table(pa.table({"i": [1, 2, 3], "s": bad}), folder / "t.parquet")
