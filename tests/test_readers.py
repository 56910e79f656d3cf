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
