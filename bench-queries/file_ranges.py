"""What DuckDB's range of a table's rows costs when the table is several Parquet files.

The host arm reads its rows of a split table held in Parquet files by row number
(``ParquetSource.range_sql``, decision 024). lineitem at SF 1 is cut into eight files in row
order (``coprocessing.py --parts 8``'s copy, made once) and each range below, as a fraction of
the rows, is read under TPC-H Q6's filter and sums, at one thread, by DuckDB (the host's range,
``ParquetSource.range_sql``) and by Polars (the device's: a slice of one scan of the files):
over the eight files against the same rows of the single lineitem.parquet, side by side in one
process, as ratios. A range that starts or ends inside a file is where the form matters.

    python bench-queries/file_ranges.py --scale 1
"""

from __future__ import annotations

import argparse
import datetime
import os
from pathlib import Path

import duckdb
from coprocessing import _parts  # (this folder's: each script runs from it)
from file_watch import median

from dau_scheduler import tpch
from dau_scheduler.parquet_source import ParquetSource

RANGES = [(0.0, 1.0), (0.5, 1.0), (0.48, 1.0), (0.3, 1.0), (0.0, 0.3), (0.3, 0.6), (0.1, 0.2)]
Q6 = (
    "SELECT sum(l_extendedprice * l_discount) FROM ({rows}) WHERE l_shipdate >= DATE "
    "'1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 "
    "AND l_quantity < 24"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    os.environ["POLARS_MAX_THREADS"] = "1"
    import polars as pl

    def polars_q6(scan: pl.LazyFrame) -> pl.LazyFrame:
        return scan.filter(
            pl.col("l_shipdate").is_between(
                datetime.date(1994, 1, 1), datetime.date(1995, 1, 1), closed="left"
            )
            & pl.col("l_discount").is_between(0.05, 0.07)
            & (pl.col("l_quantity") < 24)
        ).select((pl.col("l_extendedprice") * pl.col("l_discount")).sum())

    data = tpch.cached(args.scale)
    parts = sorted(Path(_parts(data, 8)["lineitem"]).parent.glob("*.parquet"))
    over = {"parts": ParquetSource(parts), "single": ParquetSource([data / "lineitem.parquet"])}
    n = over["single"].num_rows
    con = duckdb.connect()
    con.execute("SET threads = 1")
    print(f"lineitem at SF {args.scale:g}: {len(parts)} files of {n:,} rows in all")
    print("| range (fraction of the rows) | DuckDB: 8 files / single file | Polars: the same |")
    print("| --- | --- | --- |")
    for lo, hi in RANGES:
        seconds = {}
        answers = set()
        for name, source in over.items():
            sql = Q6.format(rows=source.range_sql(round(lo * n), round(hi * n)))
            answers.add(con.sql(sql).fetchall()[0][0])
            seconds[name] = median(lambda s=sql: con.sql(s).fetchall(), args.runs)
        assert len(answers) == 1, (lo, hi, answers)
        slices = {}
        for name, source in over.items():
            start, stop = round(lo * n), round(hi * n)
            frame = pl.scan_parquet([str(f) for f in source.files]).slice(start, stop - start)
            slices[name] = median(lambda f=frame: polars_q6(f).collect(), args.runs)
        duck, polars = seconds["parts"] / seconds["single"], slices["parts"] / slices["single"]
        print(f"| {lo:.2f} to {hi:.2f} | {duck:.3f} | {polars:.3f} |")


if __name__ == "__main__":
    main()
