"""What reading a connection table's rowid span costs before each split (decision 023), side
by side in one process over TPC-H lineitem on a DuckDB connection: the span read now
(``ConnectionSource.span``: ``max(rowid) + 1`` and ``count(*)``), the metadata read of sessions
12 to 42 (``count(*)`` beside ``estimated_size``, which a CHECKPOINT that drops a row group
of deleted rows makes wrong), and Q6 and Q1 run plain on the same connection; medians of N
alternating runs.

    python bench-queries/rowid_span.py --scale 1 --runs 15

Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import duckdb

from dau_scheduler import tpch
from dau_scheduler.tables import resolve_sources

_METADATA = (
    "SELECT count(*), (SELECT max(estimated_size) FROM duckdb_tables() WHERE database_name = "
    "'memory' AND schema_name = 'main' AND table_name = 'lineitem') FROM memory.main.lineitem"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    folder = tpch.cached(args.scale)
    con = duckdb.connect()
    con.execute(f"CREATE TABLE lineitem AS FROM '{folder / 'lineitem.parquet'}'")
    source = resolve_sources(con)["lineitem"]
    queries = tpch.queries()
    work: dict[str, Callable[[], Any]] = {
        "span read now (max(rowid))": source.span,
        "metadata read (sessions 12-42)": lambda: con.cursor().execute(_METADATA).fetchone(),
        "Q6 plain": lambda: con.execute(queries["q06"]).fetchall(),
        "Q1 plain": lambda: con.execute(queries["q01"]).fetchall(),
    }
    times: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(args.runs):
        for name, run in work.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    print(f"| read (SF {args.scale:g}, {args.runs} runs) | median ms |")
    print("| --- | --- |")
    for name, seconds in times.items():
        print(f"| {name} | {statistics.median(seconds) * 1000:.2f} |")


if __name__ == "__main__":
    main()
