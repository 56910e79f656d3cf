"""``python -m dau_scheduler.parquet_check`` over Parquet files written here with the shapes
DuckDB's own parquet-testing files hold (dictionaries, nested and map columns, wide decimals,
zoned nanosecond timestamps, a column named rowid, a hive-looking folder): each file read inline
by the queries on a connection, as a lazy folder and as a resident folder, on both CPU devices,
is split exactly or refused by name."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import device
from dau_scheduler.parquet_check import check_file, main

N = 300


def _files(root: Path) -> list[Path]:
    keys = [i % 11 for i in range(N)]
    tables = {
        "dictionary": pa.table(
            {
                "s": pa.array(
                    [None if i % 13 == 0 else f"v{i % 5}" for i in range(N)]
                ).dictionary_encode(),
                "k": keys,
            }
        ),
        "nested": pa.table(
            {
                "l": [[i, i % 3] for i in range(N)],
                "st": [{"a": i, "b": str(i % 4)} for i in range(N)],
                "m": pa.array([[("x", i)] for i in range(N)], pa.map_(pa.string(), pa.int64())),
                "k": keys,
            }
        ),
        "numbers": pa.table(
            {
                "d": pa.array(
                    [Decimal(f"{i}.0123456789") for i in range(N)], pa.decimal128(38, 10)
                ),
                "f": [float(i) / 7 if i % 17 else float("nan") for i in range(N)],
                "u": pa.array([i % 200 for i in range(N)], pa.uint8()),
            }
        ),
        "times": pa.table(
            {
                "ts": pa.array(
                    [dt.datetime(2020, 1, 1) + dt.timedelta(seconds=i) for i in range(N)],
                    pa.timestamp("ns", tz="UTC"),
                ),
                "day": pa.array([dt.date(2021, 1, 1 + i % 28) for i in range(N)]),
            }
        ),
        "rowid": pa.table({"rowid": [i - 50 for i in range(N)], "v": keys}),
    }
    paths = []
    for name, table in tables.items():
        pq.write_table(table, root / f"{name}.parquet", row_group_size=64)
        paths.append(root / f"{name}.parquet")
    (root / "a=5").mkdir()
    pq.write_table(pa.table({"a": [1] * N, "b": keys}), root / "a=5" / "hive.parquet")
    return [*paths, root / "a=5" / "hive.parquet"]


@pytest.mark.parametrize("name", ["polars", "duckdb"])
def test_odd_parquet_files_split_exactly_or_are_refused(tmp_path: Path, name: str) -> None:
    # (A connection's view, the fourth way, reads as the inline read does once the Session has
    # it: tests/test_parquet_views.py splits TPC-H over views.)
    ways = ("inline", "lazy", "resident")
    records = [r for p in _files(tmp_path) for r in check_file(p, device(name), 0.5, ways)]
    bad = [r for r in records if r["outcome"] in ("wrong", "crashed")]
    assert not bad, bad[:3]
    assert sum(r["outcome"] == "split" for r in records) > len(records) // 3


def test_the_command_names_its_outcomes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pq.write_table(pa.table({"x": list(range(50))}), tmp_path / "x.parquet")
    assert main([str(tmp_path), "--device", "duckdb", "--ways", "view,lazy"]) == 0
    assert "1 files, 10 queries: 10 split" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--ways", "sideways"])
