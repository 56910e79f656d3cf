"""What a file read inline costs the queries over a connection's own tables after it (decision
028), side by side in one process: TPC-H Q6 and Q1 over lineitem as a table of a DuckDB
connection, split on the duckdb device at share 0.3, by a Session that has read no file and by
one that has read a file inline (which makes it lazy: decision 023); plain DuckDB on the same
connection as the reference; medians of N alternating runs, every answer checked.

    python bench-queries/connection_after_file.py --scale 1 --runs 9

Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import duckdb

from dau_scheduler import Session, tpch
from dau_scheduler.compare import compare_tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    folder = tpch.cached(args.scale)
    con = duckdb.connect()
    con.execute(f"CREATE TABLE lineitem AS FROM '{folder / 'lineitem.parquet'}'")
    plain = Session(con, device="duckdb")
    after = Session(con, device="duckdb")
    after.sql(f"SELECT count(*) FROM '{folder / 'orders.parquet'}'", device_share=0.3)
    assert after.lazy and not plain.lazy
    print("| query | plain DuckDB ms | Session, no file read ms | Session after a file read ms |")
    print("| --- | --- | --- | --- |")
    for name in ("q06", "q01"):
        sql = tpch.queries()[name]
        expected = con.sql(sql).to_arrow_table()
        runs: dict[str, Any] = {
            "duckdb": lambda q: con.sql(q).to_arrow_table(),
            "plain": lambda q: plain.sql(q, device_share=0.3).table,
            "after": lambda q: after.sql(q, device_share=0.3).table,
        }
        times: dict[str, list[float]] = {key: [] for key in runs}
        for _ in range(args.runs):
            for key, run in runs.items():
                start = time.perf_counter()
                table = run(sql)
                times[key].append(time.perf_counter() - start)
                assert compare_tables(table, expected, ordered=True) is None, (key, name)
        ms = {k: 1000 * statistics.median(v) for k, v in times.items()}
        print(f"| {name} | {ms['duckdb']:.0f} | {ms['plain']:.0f} | {ms['after']:.0f} |")


if __name__ == "__main__":
    main()
