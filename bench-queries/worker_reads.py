"""A cluster worker's read of its range of a Parquet split table: DuckDB's own scan (by
``file_row_number``, what ``planner.wire.hold_rows`` runs since 2026-12-02) against pyarrow's
row groups copied into DuckDB (what it ran before), side by side, alternating, one thread.

    python bench-queries/worker_reads.py --scale 0.1 --runs 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import duckdb

from dau_scheduler import tpch
from dau_scheduler.tables import ParquetSource


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    source = ParquetSource((tpch.cached(args.scale) / "lineitem.parquet",))
    n = source.num_rows
    start, stop = n // 4, n // 4 + n // 2  # half the table, off its ends

    def timed(load: str) -> float:
        con = duckdb.connect()
        con.execute("SET threads = 1")
        began = time.perf_counter()
        if load == "duckdb":
            con.execute(f"CREATE TABLE x AS {source.range_sql(start, stop)}")
        else:
            con.register("r", source.rows(None, start, stop))
            con.execute("CREATE TABLE x AS SELECT * FROM r")
        took = time.perf_counter() - began
        con.close()
        return took

    scan, arrow = [], []
    for _ in range(args.runs):
        scan.append(timed("duckdb"))
        arrow.append(timed("pyarrow"))
    print(
        f"SF {args.scale:g}, {stop - start} rows of lineitem: DuckDB's scan min {min(scan):.3f} s "
        f"(median {statistics.median(scan):.3f}), pyarrow and a copy min {min(arrow):.3f} s "
        f"(median {statistics.median(arrow):.3f}); ratio {min(scan) / min(arrow):.2f}"
    )


if __name__ == "__main__":
    main()
