"""What watching a Session's Parquet files costs (docs/exactness.md, fiftieth session).

Before each query a Session stats every Parquet file a view or a lazy table reads, and matches
a view's glob again (``live.rewritten``). This times that check against TPC-H Q6 split at share
0.5 on the polars device, in one process, and prints each as a ratio of Q6's median:
- ``lazy folder``: a lazy Session over the TPC-H folder (8 tables, one file each);
- ``view``: a Session over a connection holding one view over lineitem.parquet;
- ``view over a glob``: the same view written as a glob of that folder's lineitem file (one
  DuckDB ``glob()`` more per query).

    python bench-queries/file_watch.py --scale 1
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import duckdb

from dau_scheduler import Session, live, tpch


def median(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--checks", type=int, default=2000)
    args = parser.parse_args()
    data = tpch.cached(args.scale)
    q06 = tpch.queries()["q06"]
    con = duckdb.connect()
    con.execute(f"CREATE VIEW lineitem AS FROM '{data}/lineitem.parquet'")
    globbed = duckdb.connect()
    globbed.execute(f"CREATE VIEW lineitem AS FROM '{data}/lineitem*.parquet'")
    print("| Session | check / Q6 split | check (median) |")
    print("| --- | --- | --- |")
    for label, tables, lazy in (
        ("lazy folder", data, True),
        ("view", con, False),
        ("view over a glob", globbed, False),
    ):
        with Session(tables, device="polars", lazy=lazy) as session:
            assert live.rewritten(session) == {}
            query = median(lambda s=session: s.sql(q06, device_share=0.5), 5)
            check = median(lambda s=session: live.rewritten(s), args.checks)
            print(f"| {label} | {check / query:.5f} | {check * 1e6:.1f} us |")


if __name__ == "__main__":
    main()
