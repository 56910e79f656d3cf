"""Every device reads the types other readers read otherwise (``odd_types``) as DuckDB does: in
memory, and from Parquet lazily (each arm's own reader: Polars' scan, on a GPU cuDF's) and
resident. The cudf case runs in the GPU kit (docs/gpu.md): cuDF's Parquet reader is one more
reader beside pyarrow's and Polars'."""

from __future__ import annotations

import warnings
from pathlib import Path

import duckdb
import pytest

from conftest import DEVICES, device
from dau_scheduler import Session
from odd_types import make, problems


@pytest.mark.parametrize("name", DEVICES)
def test_every_device_reads_odd_types_as_duckdb(tmp_path: Path, name: str) -> None:
    table, folder, oracle = make(tmp_path / "odd")
    in_memory = duckdb.connect()
    in_memory.register("t", table)
    ways = [({"t": table}, in_memory, {}), (folder, oracle, {"lazy": True}), (folder, oracle, {})]
    for data, expected, options in ways:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with Session(data, device=device(name), **options) as s:
                for share in (0.3, 0.8):
                    assert problems(s, expected, share) == [], (options, share)


@pytest.mark.parametrize("name", DEVICES)
def test_a_file_whose_row_total_is_not_its_row_groups(tmp_path: Path, name: str) -> None:
    """DuckDB's arrow/repeated_no_annotation.parquet says 0 rows over a row group of 6:
    counted by the file's total, a cluster ran no rows (count 0 for 6); Polars' reader reads
    the total, so once counted right its half read nothing (3 for 6). Rows are counted by row
    group, and Polars is not asked to read such a file (pyarrow reads it for the device)."""
    import shutil

    fixture = Path(__file__).parent / "fixtures" / "parquet" / "repeated_no_annotation.parquet"
    shutil.copy(fixture, tmp_path / "t.parquet")
    oracle = duckdb.connect()
    oracle.execute(f"CREATE VIEW t AS FROM read_parquet('{tmp_path / 't.parquet'}')")
    sql = "SELECT count(*), count(id), sum(id) FROM t"
    for options in ({"lazy": True}, {}):
        with Session(tmp_path, device=device(name), **options) as s:
            assert s.row_counts["t"] == 6
            result = s.sql(sql, device_share=0.5)
            assert result.table.to_pylist() == oracle.sql(sql).to_arrow_table().to_pylist()
