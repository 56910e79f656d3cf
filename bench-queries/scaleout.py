"""Scale-out benchmark: the 22 TPC-H queries on a dask LocalCluster against a local Session,
side by side in one run, and the tree fold's share of the wall as the partials multiply.

    python bench-queries/scaleout.py queries --scale 1 --runs 3
    python bench-queries/scaleout.py fold --scale 1 --runs 3 --shards 2,8,32,128
    python bench-queries/scaleout.py spark --scale 1 --runs 3

queries: ``Session(data, device=None, cluster="local:2")`` (two worker processes, one thread
each; the workers read the Parquet files and keep their shards resident) against
``Session(data, device=None, threads=2)`` (the tables resident in this process), each query's
minimum of ``--runs`` after a warm-up, alternating; every answer checked against the local one.
Reports each query's ratio and the median (target <= 1.5x: the price of process boundaries on a
2-core machine, where the cluster can add no cores).

spark: the same as queries, on ``cluster="spark:local[2]"`` (Spark's Python workers run DuckDB
over the cached row ranges); no target on one 2-core machine: the figure is Spark's per-query
cost.

fold: Q1, Q10, Q18 with the split table cut into N shards over the two workers; the shards'
partials fold in a tree on the workers (``refold_sql``, ``FAN_IN`` at a time). Reports the
fold's seconds (from the last shard's partial to the folded one on the client) as a share of
the query's wall (target <= 10% at 128).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any


def _best(run: Any, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return best


def queries(args: argparse.Namespace) -> dict[str, Any]:
    from dau_scheduler import Session, tpch
    from dau_scheduler.compare import compare_tables

    data = tpch.cached(args.scale)
    rows = []
    where = "spark:local[2]" if args.what == "spark" else "local:2"
    with (
        Session(data, device=None, threads=2) as local,
        Session(data, device=None, cluster=where) as cluster,
    ):
        for name, sql in tpch.queries().items():
            want = local.sql(sql).table
            got = cluster.sql(sql)  # warm-up: the workers read their shards
            exact = compare_tables(got.table, want) is None
            t_local = t_cluster = float("inf")
            for _ in range(args.runs):
                t_local = min(t_local, _best(lambda sql=sql: local.sql(sql), 1))
                t_cluster = min(t_cluster, _best(lambda sql=sql: cluster.sql(sql), 1))
            row = {
                "query": name,
                "local_s": t_local,
                "cluster_s": t_cluster,
                "ratio": t_cluster / t_local,
                "exact": exact,
            }
            rows.append(row)
            print(
                f"{name}: local {t_local * 1000:.0f} ms, cluster {t_cluster * 1000:.0f} ms, "
                f"{row['ratio']:.2f}x {'exact' if exact else 'WRONG'}",
                flush=True,
            )
    ratios = [r["ratio"] for r in rows]
    summary = {"median_ratio": statistics.median(ratios), "worst_ratio": max(ratios)}
    print(json.dumps(summary))
    return {"rows": rows, "summary": summary}


def fold(args: argparse.Namespace) -> dict[str, Any]:
    from dau_scheduler import Session, tpch
    from dau_scheduler.compare import compare_tables

    data = tpch.cached(args.scale)
    rows = []
    with (
        Session(data, device=None, threads=2) as local,
        Session(data, device=None, cluster="local:2") as cluster,
    ):
        assert cluster.cluster is not None
        tables = cluster.cluster.tables
        for name in args.queries.split(","):
            sql = tpch.queries()[name]
            want = local.sql(sql).table
            for shards in (int(s) for s in args.shards.split(",")):
                tables.num_shards = shards
                cluster.sql(sql)  # warm-up: the workers read these shards
                best: tuple[float, float] | None = None
                exact = True
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    result = cluster.sql(sql)
                    wall = time.perf_counter() - t0
                    exact &= compare_tables(result.table, want) is None
                    folded = cluster.cluster.fold_seconds
                    if best is None or wall < best[0]:
                        best = (wall, folded)
                assert best is not None
                wall, folded = best
                row = {
                    "query": name,
                    "shards": shards,
                    "wall_s": wall,
                    "fold_s": folded,
                    "fold_share": folded / wall,
                    "exact": exact,
                }
                rows.append(row)
                print(
                    f"{name} x{shards}: wall {wall * 1000:.0f} ms, tree fold "
                    f"{folded * 1000:.0f} ms ({row['fold_share']:.1%}) "
                    f"{'exact' if exact else 'WRONG'}",
                    flush=True,
                )
        tables.num_shards = None
    return {"rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["queries", "fold", "spark"])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", default="q01,q10,q18")
    parser.add_argument("--shards", default="2,8,32,128")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    out = fold(args) if args.what == "fold" else queries(args)
    if args.json:
        args.json.write_text(json.dumps({"command": " ".join(sys.argv), **out}, indent=1))


if __name__ == "__main__":
    main()
