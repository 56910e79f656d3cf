"""Memory benchmark: peak RSS of a query under a memory budget, in a fresh process per run.

    python bench-queries/memory.py budget --scale 1 --budget 256 --queries q01,q03,q06,q18
    python bench-queries/memory.py budget --scale 10 --budget 2048 --queries q01,q06
    python bench-queries/memory.py resident --scale 1      # Session footprint per device
    python bench-queries/memory.py rows --scale 1          # queries answering many rows

budget: each query runs twice per device, each time in a fresh process: under ``mem_budget_mb``
(one-shot ``run_sql``, device share 0.5: the strategy cloud_plan picks) and ``in_memory`` (a
resident Session, as before budgets existed). The figure is the process's peak RSS above its RSS
after imports (``ru_maxrss`` minus RSS once dau_scheduler, DuckDB, Polars and pyarrow are
imported), against the budget (target <= 1.5x). Every answer is checked against DuckDB's own
answer over the same Parquet files, computed in this (parent) process.

resident: a resident Session over the whole data set per device, RSS above imports against the
tables' Arrow bytes (target <= 2x with a device arm).

rows: queries whose answer is many rows (a filter over lineitem, unsorted, sorted, and with a
LIMIT), each in a fresh process per device and share: a resident Session, then the query; the
peak RSS above the RSS once the Session holds its tables, and the query's seconds, split at
share 0.5 beside the host alone (share 0) of the same device. Answers checked as for budget.
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

#: Queries answering many rows (3.5M, 3.5M sorted, 1M of them) for ``rows``.
ROW_QUERIES = {
    "filter": "SELECT l_orderkey, l_partkey, l_quantity, l_extendedprice, l_shipdate, l_comment "
    "FROM lineitem WHERE l_quantity < 30",
    "sorted": "SELECT l_orderkey, l_quantity, l_comment FROM lineitem WHERE l_quantity < 30 "
    "ORDER BY l_comment, l_orderkey, l_quantity",
    "limit": "SELECT l_orderkey, l_linenumber, l_comment FROM lineitem WHERE l_discount > 0.02 "
    "LIMIT 1000000",
}


def _rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak() -> None:
    """Start the peak over from now (Linux: VmHWM is reset; ``ru_maxrss`` is not)."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def _peak_since_reset() -> int:
    with open("/proc/self/status") as handle:
        line = next(line for line in handle if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


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
    elif args.mode == "rows":
        with Session(args.data, device=device) as session:
            base = _rss()
            _reset_peak()  # loading the tables peaked higher than the query may
            t0 = time.perf_counter()
            result = session.sql(ROW_QUERIES[args.query], device_share=args.share)
            out["query_seconds"] = time.perf_counter() - t0
            out["peak_above"] = _peak_since_reset() - base
            out["split"] = result.execution is not None and result.execution.device_rows > 0
            feather.write_feather(result.table, args.result)
        print(json.dumps(out))
        return
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


def rows(args: argparse.Namespace) -> dict[str, Any]:
    import duckdb
    import pyarrow.feather as feather

    from dau_scheduler.compare import compare_tables

    con = duckdb.connect()
    con.execute(f"CREATE VIEW lineitem AS FROM read_parquet('{args.data}/lineitem.parquet')")
    figures = []
    for name, sql in ROW_QUERIES.items():
        expected = con.sql(sql).to_arrow_table()
        for device in args.devices.split(","):
            got: dict[str, dict[str, Any]] = {}
            for share in (0.0, 0.5):
                with tempfile.NamedTemporaryFile(suffix=".arrow") as handle:
                    run = _run_child(
                        [
                            "--mode",
                            "rows",
                            "--query",
                            name,
                            "--device",
                            device,
                            "--share",
                            str(share),
                            "--data",
                            str(args.data),
                            "--result",
                            handle.name,
                        ]
                    )
                    # As multisets but under ORDER BY: the LIMIT's rows are the same rows as
                    # DuckDB's (the first that pass, in the files' order), in any order.
                    answer = feather.read_table(handle.name)
                    diff = compare_tables(answer, expected, ordered="ORDER BY" in sql)
                run.update(exact=diff is None, diff=diff)
                got[str(share)] = run
            host, split = got["0.0"], got["0.5"]
            row = {
                "query": name,
                "device": device,
                "host": host,
                "split": split,
                "peak_ratio": split["peak_above"] / max(1, host["peak_above"]),
                "time_ratio": split["query_seconds"] / host["query_seconds"],
            }
            figures.append(row)
            print(
                f"{name:7s} {device:7s} peak above the Session: host "
                f"{host['peak_above'] / 2**20:6.0f}"
                f" MiB, split {split['peak_above'] / 2**20:6.0f} MiB ({row['peak_ratio']:.2f}x); "
                f"seconds host {host['query_seconds']:.3f}, split {split['query_seconds']:.3f} "
                f"({row['time_ratio']:.2f}x); split ran: {split['split']}; "
                f"{'exact' if host['exact'] and split['exact'] else 'WRONG'}",
                flush=True,
            )
    return {"rows": figures}


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
        parser.add_argument("--share", type=float, default=0.5)
        child(parser.parse_args())
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["budget", "resident", "rows"])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--budget", type=float, default=256)
    parser.add_argument("--queries", default="q01,q03,q06,q18")
    parser.add_argument("--devices", default="duckdb,polars")
    parser.add_argument("--no-in-memory", dest="in_memory", action="store_false")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from dau_scheduler import tpch

    args.data = tpch.cached(args.scale)
    figures = {"budget": budget, "resident": resident, "rows": rows}[args.what](args)
    figures["command"] = " ".join(sys.argv)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str))


if __name__ == "__main__":
    main()
