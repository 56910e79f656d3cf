"""The device arm alone beside DuckDB alone, per TPC-H or TPC-DS query, in one process.

    python bench-queries/device_alone.py --scale 1 --queries q21,q04 --runs 3 [--device polars]
        [--benchmark tpch|tpcds]

A Session over the cached TPC-H (or TPC-DS) folder runs each query at ``device_share=1.0`` once
to warm, then ``--runs`` times; the device arm's seconds (``SplitExecution.device_seconds``,
minimum) are printed beside one run of the query on the Session's own DuckDB. To compare two
trees, run it with ``PYTHONPATH`` at each one's ``src``, alternating (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import time

import dau_scheduler as dau
from dau_scheduler import tpcds, tpch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--queries", default="q02,q04,q17,q20,q21,q22")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--device", default="polars")
    parser.add_argument("--benchmark", choices=["tpch", "tpcds"], default="tpch")
    args = parser.parse_args()
    kit = tpcds if args.benchmark == "tpcds" else tpch
    queries = kit.queries()
    found = []
    with dau.Session(kit.cached(args.scale), device=args.device) as session:
        for name in args.queries.split(","):
            sql = queries[name]
            session.sql(sql, device_share=1.0)
            seconds = []
            for _ in range(args.runs):
                result = session.sql(sql, device_share=1.0)
                ex = result.execution
                seconds.append(ex.device_seconds if ex is not None else float("nan"))
            start = time.perf_counter()
            session.host.cursor().sql(sql).fetchall()
            host = time.perf_counter() - start
            found.append(f"{name} device {min(seconds):.3f}s host {host:.3f}s")
    print(" | ".join(found), flush=True)


if __name__ == "__main__":
    main()
