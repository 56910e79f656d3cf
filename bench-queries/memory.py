"""Memory benchmark: peak RSS of a query under a memory budget, in a fresh process per run.

    python bench-queries/memory.py budget --scale 1 --budget 256 --queries q01,q03,q06,q18
    python bench-queries/memory.py budget --scale 10 --budget 2048 --queries q01,q06
    python bench-queries/memory.py resident --scale 1      # Session footprint per device

budget: each query runs twice per device, each time in a fresh process: under ``mem_budget_mb``
(one-shot ``run_sql``, device share 0.5: the strategy cloud_plan picks) and ``in_memory`` (a
resident Session, as before budgets existed). The figure is the process's peak RSS above its RSS
after imports (``ru_maxrss`` minus RSS once dau_scheduler, DuckDB, Polars and pyarrow are
imported), against the budget (target <= 1.5x). Every answer is checked against DuckDB's own
answer over the same Parquet files, computed in this (parent) process.

resident: a resident Session over the whole data set per device, RSS above imports against the
tables' Arrow bytes (target <= 2x with a device arm).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(args: argparse.Namespace) -> None:
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    import duckdb  # noqa: F401 - imported before the baseline, as the query needs it
    import polars  # noqa: F401
    import pyarrow as pa
    import pyarrow.feather as feather

    from dau_scheduler import Session, run_sql, tpch

    base = _rss()
    t0 = time.perf_counter()
    device = None if args.device == "none" else args.device
    out: dict[str, Any] = {}
    if args.mode == "resident":
        with Session(args.data, device=device):
            import gc

            gc.collect()
            pa.default_memory_pool().release_unused()
            out["rss_above"] = _rss() - base
    else:
        sql = tpch.queries()[args.query]
        if args.mode == "budget":
            result = run_sql(
                sql, args.data, device=device, device_share=0.5, mem_budget_mb=args.budget
            )
        else:
            with Session(args.data, device=device) as session:
                result = session.sql(sql, device_share=0.5)
        feather.write_feather(result.table, args.result)
        plan = result.strategy
        out["strategy"] = plan.strategy if plan else "in_memory (resident)"
        out["chunks"] = plan.chunks if plan else 1
        out["fallback"] = result.fallback
    out["seconds"] = time.perf_counter() - t0
    out["peak_above"] = _peak() - base
    print(json.dumps(out))


def _run_child(args: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def budget(args: argparse.Namespace) -> dict[str, Any]:
    import duckdb
    import pyarrow.feather as feather

    from dau_scheduler import tpch
    from dau_scheduler.compare import compare_tables

    con = duckdb.connect()
    for table in tpch.TABLES:
        path = f"{args.data}/{table}.parquet"
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{path}')")
    rows = []
    for name in args.queries.split(","):
        expected = con.sql(tpch.queries()[name]).to_arrow_table()
        for device in args.devices.split(","):
            for mode in ("budget", "in_memory") if args.in_memory else ("budget",):
                with tempfile.NamedTemporaryFile(suffix=".arrow") as handle:
                    got = _run_child(
                        [
                            "--mode",
                            mode,
                            "--query",
                            name,
                            "--device",
                            device,
                            "--data",
                            str(args.data),
                            "--budget",
                            str(args.budget),
                            "--result",
                            handle.name,
                        ]
                    )
                    diff = compare_tables(feather.read_table(handle.name), expected)
                got.update(query=name, device=device, mode=mode, exact=diff is None, diff=diff)
                got["vs_budget"] = got["peak_above"] / (args.budget * (1 << 20))
                rows.append(got)
                print(
                    f"{name} {device:7s} {mode:9s} {got['strategy']:22s} chunks {got['chunks']:3d} "
                    f"peak above imports {got['peak_above'] / 2**20:7.0f} MiB "
                    f"({got['vs_budget']:.2f}x budget) {got['seconds']:.2f}s "
                    f"{'exact' if diff is None else 'WRONG ' + diff}",
                    flush=True,
                )
    return {"budget_mb": args.budget, "rows": rows}


def resident(args: argparse.Namespace) -> dict[str, Any]:
    import pyarrow.parquet as pq

    arrow = sum(pq.read_table(p).nbytes for p in sorted(Path(args.data).glob("*.parquet")))
    rows = []
    for device in args.devices.split(","):
        got = _run_child(["--mode", "resident", "--device", device, "--data", str(args.data)])
        got.update(device=device, arrow_bytes=arrow, ratio=got["rss_above"] / arrow)
        rows.append(got)
        print(
            f"resident {device:7s}: RSS above imports {got['rss_above'] / 2**30:.2f} GiB, "
            f"Arrow bytes {arrow / 2**30:.2f} GiB: {got['ratio']:.2f}x",
            flush=True,
        )
    return {"rows": rows}


def main() -> None:
    if "--child" in sys.argv:
        parser = argparse.ArgumentParser()
        parser.add_argument("--child", action="store_true")
        for name in ("--mode", "--query", "--device", "--data", "--result"):
            parser.add_argument(name)
        parser.add_argument("--budget", type=float)
        child(parser.parse_args())
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["budget", "resident"])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--budget", type=float, default=256)
    parser.add_argument("--queries", default="q01,q03,q06,q18")
    parser.add_argument("--devices", default="duckdb,polars")
    parser.add_argument("--no-in-memory", dest="in_memory", action="store_false")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from dau_scheduler import tpch

    args.data = tpch.cached(args.scale)
    figures = budget(args) if args.what == "budget" else resident(args)
    figures["command"] = " ".join(sys.argv)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str))


if __name__ == "__main__":
    main()
