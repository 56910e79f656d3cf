"""Co-processing benchmark: do the postures turn two arms into speed? Side by side in one process.

    python bench-queries/coprocessing.py --scale 1 --device polars-separate \
        --host-threads 1 --device-threads 1          # the CPU stand-in: each arm on its own core
    python bench-queries/coprocessing.py --data DIR --device cudf   # the real pair, on a GPU host
    python bench-queries/coprocessing.py --benchmark tpcds --queries q05,q36 --scale 1 ...
    python bench-queries/coprocessing.py --connection ...   # over a user's DuckDB connection
    python bench-queries/coprocessing.py --inline ...       # TPC-H reading its files inline
    python bench-queries/coprocessing.py --inline --parts 8 ...  # lineitem, orders by a glob
    python bench-queries/coprocessing.py --inline --hive ...     # ... as PARTITION_BY folders
    python bench-queries/coprocessing.py --queries q10 --query-file bench-queries/sql/x.sql ...

For each query (profiles of both arms measured first, not timed): host alone (share 0), device
alone (share 1), fixed shares 0.1 ... 0.9, adaptive, collaborative, and both arms running all the
rows at once (what the machine gives two arms that run together); every variant's minimum over
``--runs`` interleaved runs of ``Session.sql``'s wall. T* = 1 / (1/host + 1/device) is the ideal
split of two independent arms. Every variant's answer is checked against DuckDB's unsplit answer.

``--processes 3`` runs the whole benchmark in three fresh processes one after another and
reports each variant's median of the three minima and each ratio's median of the three
processes' ratios (the figures docs/benchmarks.md records).

``--device-threads`` sets ``POLARS_MAX_THREADS`` before Polars is imported, so it must be given
here (a fresh process), not set afterwards. ``polars-separate`` is the Polars CPU arm declared as
its own hardware: the posture path a GPU takes; ``duckdb-separate`` is DuckDB's own device arm
declared so (two equal engines, each on its own core at ``--host-threads 1``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

QUERIES = "q01,q03,q05,q06,q08,q09,q10,q12,q14,q19"
FIXED = tuple(round(0.1 * i, 1) for i in range(11))


def _session(
    data: Path,
    device: str,
    host_threads: int | None,
    cache: Path,
    connection: bool = False,
    empty: bool = False,
) -> Any:
    """A Session over the folder, or (``connection``) over a DuckDB connection holding its
    tables, as a user's connection would (the device reads its rows from it as each query
    runs: decision 023), or (``empty``) over a connection holding none, whose queries read the
    files inline (decision 028)."""
    from dau_scheduler import Session
    from dau_scheduler.arms import PolarsArm

    arm: Any = device
    if device == "polars-separate":
        arm = PolarsArm(own_cores=True)
    if device == "duckdb-separate":
        arm = "duckdb"
    if not connection and not empty:
        return _separate(Session(data, device=arm, threads=host_threads, cache=cache), device)
    import duckdb

    from dau_scheduler.tables import discover

    con = duckdb.connect()
    if host_threads is not None:
        con.execute(f"SET threads = {int(host_threads)}")
    for name, path in ({} if empty else discover(data)).items():
        files = f"{path}/*.parquet" if path.is_dir() else str(path)
        con.execute(f"CREATE TABLE {name} AS FROM read_parquet('{files}')")
    return _separate(Session(con, device=arm, cache=cache), device)


def _separate(session: Any, device: str) -> Any:
    """``duckdb-separate``: the Session's DuckDB device declared as hardware of its own, two
    equal engines (each query's calling thread runs it: at one DuckDB thread, each arm on a
    core of its own), so a split's gain is the model's to find, not the engines' difference."""
    if device == "duckdb-separate":
        session.device.shares_host_cores = False
    return session


def _both_at_once(session: Any, compiled: Any, n: int) -> float:
    """Wall of the host and the device arm each running the partial over all ``n`` rows at once."""
    errors: list[BaseException] = []

    def run(arm: Any) -> None:
        try:
            arm.run_partial(compiled, 0, n)
        except BaseException as exc:  # noqa: BLE001 - reported below, never swallowed
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(a,)) for a in (session.host, session.device)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - t0


def bench_query(session: Any, name: str, sql: str, runs: int) -> dict[str, Any]:
    from dau_scheduler.answering import written_out
    from dau_scheduler.compare import compare_tables

    expected = session.host.cursor().sql(sql).to_arrow_table()
    # (a PIVOT's values and inline reads written as Session.sql does before it plans)
    planned = written_out(session, sql)
    refusal = session.explain(sql).refusal
    if refusal is None:
        refusal = session.refusals.device(session.compile(planned))
    if refusal is not None:
        return {"query": name, "refused": refusal}
    measured = {arm: session.profile(sql, arm=arm) for arm in ("host", "device")}
    compiled = session.compile(planned)
    n = session.row_counts[compiled.plan.split_table or ""]
    variants: dict[str, dict[str, Any]] = {f"share {s:.1f}": {"device_share": s} for s in FIXED}
    variants["adaptive"] = {"posture": "adaptive"}
    variants["collaborative"] = {"posture": "collaborative"}
    times: dict[str, list[float]] = {v: [] for v in [*variants, "both at once"]}
    shares: dict[str, float] = {}
    wrong: list[str] = []
    for v, kwargs in variants.items():  # warm-up, and the exactness check of every variant
        result = session.sql(sql, **kwargs)
        diff = compare_tables(result.table, expected)
        if diff is not None:
            wrong.append(f"{v}: {diff}")
    for round_ in range(runs):
        # The variants in a different order each round (seeded): a run right after the device
        # alone (share 1.0) is slower (Polars' allocator still returning that run's memory), and
        # a fixed order always handed that slot to adaptive.
        names = list(variants)
        random.Random(round_).shuffle(names)
        for v in names:
            kwargs = variants[v]
            t0 = time.perf_counter()
            result = session.sql(sql, **kwargs)
            times[v].append(time.perf_counter() - t0)
            if result.execution is not None:
                shares[v] = result.execution.device_share
        times["both at once"].append(_both_at_once(session, compiled, n))
    best = {v: min(ts) for v, ts in times.items()}
    row = derive(name, n, best, shares, wrong)
    # Each arm's medians on its side of the cut (decision 031), as (fraction, ms): the device's
    # first rows, the host's last.
    row["ranges_ms"] = {
        arm: [(round((b - a) / p.rows, 3), round(seconds * 1e3, 1)) for a, b, seconds in p.ranges]
        for arm, p in measured.items()
    }
    return row


def derive(
    name: str, n: int, best: dict[str, float], shares: dict[str, float], wrong: list[str]
) -> dict[str, Any]:
    """A query's row of figures from each variant's time (``best``) and the postures' shares."""
    host, device = best["share 0.0"], best["share 1.0"]
    fixed = {v: best[v] for v in best if v.startswith("share")}
    best_fixed = min(fixed, key=lambda v: fixed[v])
    better_single = min(host, device)
    return {
        "query": name,
        "rows": n,
        "seconds": best,
        "host": host,
        "device": device,
        "t_star": 1.0 / (1.0 / host + 1.0 / device),
        "best_fixed": best_fixed,
        "best_fixed_seconds": fixed[best_fixed],
        "adaptive_share": shares.get("adaptive"),
        "collaborative_share": shares.get("collaborative"),
        "adaptive_vs_best_fixed": best["adaptive"] / fixed[best_fixed],
        "collaborative_vs_best_fixed": best["collaborative"] / fixed[best_fixed],
        "adaptive_vs_better_single": best["adaptive"] / better_single,
        "collaborative_vs_better_single": best["collaborative"] / better_single,
        "speedup_best_fixed": better_single / fixed[best_fixed],
        "adaptive_speedup": better_single / best["adaptive"],
        "collaborative_speedup": better_single / best["collaborative"],
        "arms_within_2x": max(host, device) <= 2 * min(host, device),
        "wrong": wrong,
    }


#: The figures of a row that are ratios of two variants timed side by side in one process.
RATIOS = (
    "adaptive_vs_best_fixed",
    "collaborative_vs_best_fixed",
    "adaptive_vs_better_single",
    "collaborative_vs_better_single",
    "speedup_best_fixed",
    "adaptive_speedup",
    "collaborative_speedup",
)


def combine(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each query's figures from several processes. Times are the median of the processes'
    minima; each ratio is the median of the ratios each process measured side by side (a minimum
    of a few runs on a shared machine still moves ~10% between processes, mostly all variants
    together). Shares are the processes' medians too."""
    rows = []
    for per_query in zip(*runs, strict=True):
        first = per_query[0]
        if "refused" in first:
            rows.append(first)
            continue
        seconds = {
            v: statistics.median(r["seconds"][v] for r in per_query) for v in first["seconds"]
        }
        shares = {}
        for posture in ("adaptive", "collaborative"):
            got = [r[f"{posture}_share"] for r in per_query if r[f"{posture}_share"] is not None]
            if got:
                shares[posture] = statistics.median(got)
        wrong = [w for r in per_query for w in r["wrong"]]
        row = derive(first["query"], first["rows"], seconds, shares, wrong)
        row.update({key: statistics.median(r[key] for r in per_query) for key in RATIOS})
        row["processes"] = [r["seconds"] for r in per_query]
        row["ranges_ms"] = [r.get("ranges_ms") for r in per_query]
        rows.append(row)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ran = [r for r in rows if "refused" not in r]
    out: dict[str, Any] = {"queries": len(rows), "refused": len(rows) - len(ran)}
    if not ran:
        return out
    for key in ("adaptive_vs_best_fixed", "collaborative_vs_best_fixed"):
        values = [r[key] for r in ran]
        out[key] = {"median": statistics.median(values), "worst": max(values)}
    for key in ("adaptive_vs_better_single", "collaborative_vs_better_single"):
        out[key + "_worst"] = max(r[key] for r in ran)
    close = [r for r in ran if r["arms_within_2x"]]
    if close:
        out["within_2x"] = {
            "queries": [r["query"] for r in close],
            "adaptive_speedup_median": statistics.median(r["adaptive_speedup"] for r in close),
            "collaborative_speedup_median": statistics.median(
                r["collaborative_speedup"] for r in close
            ),
            "best_fixed_speedup_median": statistics.median(r["speedup_best_fixed"] for r in close),
        }
    out["wrong_answers"] = sum(len(r["wrong"]) for r in ran)
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def print_table(rows: list[dict[str, Any]]) -> None:
    print(
        "| query | host ms | device ms | T* ms | both at once ms | best fixed (share) ms "
        "| adaptive ms (share) | collaborative ms (share) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "refused" in r:
            print(f"| {r['query']} | refused: {r['refused'][:80]} |")
            continue
        s = r["seconds"]
        a, c = r["adaptive_share"], r["collaborative_share"]
        print(
            f"| {r['query']} | {_ms(r['host'])} | {_ms(r['device'])} | {_ms(r['t_star'])} "
            f"| {_ms(s['both at once'])} | {_ms(r['best_fixed_seconds'])} ({r['best_fixed'][6:]}) "
            f"| {_ms(s['adaptive'])} ({'-' if a is None else f'{a:.2f}'}) "
            f"| {_ms(s['collaborative'])} ({'-' if c is None else f'{c:.2f}'}) |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="TPC-H folder (default: cached --scale)")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--device", default="polars-separate")
    parser.add_argument("--host-threads", type=int, default=None)
    parser.add_argument("--device-threads", type=int, default=None)
    parser.add_argument("--queries", default=None, help=f"default: {QUERIES} (TPC-H)")
    parser.add_argument(
        "--benchmark", choices=("tpch", "tpcds"), default="tpch", help="whose queries and data"
    )
    parser.add_argument(
        "--query-file",
        type=Path,
        action="append",
        default=[],
        help="also this query over the benchmark's data, named by the file's stem (repeatable)",
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--connection",
        action="store_true",
        help="the tables in a DuckDB connection the Session is given, not the folder",
    )
    parser.add_argument(
        "--inline",
        action="store_true",
        help="the TPC-H queries read the folder's files inline (FROM 'x.parquet') on an empty "
        "DuckDB connection the Session is given (decision 028)",
    )
    parser.add_argument(
        "--parts",
        type=int,
        default=0,
        help="with --inline: lineitem and orders cut into this many files each, read by a glob "
        "('parts-N/lineitem/*.parquet')",
    )
    parser.add_argument(
        "--hive",
        action="store_true",
        help="with --inline: lineitem and orders written by COPY ... PARTITION_BY (their flags "
        "and statuses as key=value folders), read by a glob ('hive/lineitem/**/*.parquet') "
        "with DuckDB's hive columns (decision 030)",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="run the whole benchmark in this many fresh processes, one after another, and "
        "report each variant's median of their minima",
    )
    args = parser.parse_args(argv)
    if args.processes > 1:
        return _over_processes(args, argv if argv is not None else sys.argv[1:])
    if args.device_threads is not None:
        if "polars" in sys.modules:
            raise SystemExit("--device-threads must be set before Polars is imported")
        os.environ["DAU_DEVICE_THREADS"] = str(args.device_threads)
    from dau_scheduler import tpcds, tpch

    benchmark = tpcds if args.benchmark == "tpcds" else tpch
    if args.queries is None and args.benchmark == "tpcds":
        raise SystemExit("--benchmark tpcds needs --queries (a comma-separated list: q05,q36)")
    data = args.data or benchmark.cached(args.scale)
    cache = Path(tempfile.mkdtemp(prefix="dau-bench-coproc-"))
    names = [q for q in (args.queries if args.queries is not None else QUERIES).split(",") if q]
    queries = {name: benchmark.queries()[name] for name in names}
    queries |= {path.stem: path.read_text() for path in args.query_file}
    if args.inline:
        if args.benchmark != "tpch" or args.connection:
            raise SystemExit("--inline reads TPC-H's files on a connection of its own")
        globs = (
            tpch.partitioned(data, data / "hive")
            if args.hive
            else _parts(data, args.parts)
            if args.parts
            else None
        )
        queries = {name: tpch.read_inline(sql, data, globs=globs) for name, sql in queries.items()}
    rows = []
    with _session(
        data, args.device, args.host_threads, cache, args.connection, empty=args.inline
    ) as session:
        for name, sql in queries.items():
            rows.append(bench_query(session, name, sql, args.runs))
            # Each query's figures as it ends: a run cut short by a time limit still says them.
            print(f"{name}: {_brief(rows[-1])}", file=sys.stderr, flush=True)
    return report(rows, args, " ".join(sys.argv))


def _parts(data: Path, parts: int) -> dict[str, str]:
    """lineitem and orders of ``data`` cut into ``parts`` files each, in row order, under
    ``data/parts-N/<table>/`` (made once), as the globs that read them."""
    import duckdb

    globs = {}
    for table in ("lineitem", "orders"):
        folder = data / f"parts-{parts}" / table
        if not folder.is_dir():
            staging = folder.with_name(f".{table}-staging")
            staging.mkdir(parents=True, exist_ok=True)
            con = duckdb.connect()
            source = f"read_parquet('{data / f'{table}.parquet'}', file_row_number = true)"
            rows = con.execute(f"SELECT count(*) FROM {source}").fetchall()[0][0]
            step = -(-rows // parts)
            for k in range(parts):
                con.execute(
                    f"COPY (SELECT * EXCLUDE (file_row_number) FROM {source} WHERE "
                    f"file_row_number >= {k * step} AND file_row_number < {(k + 1) * step} "
                    f"ORDER BY file_row_number) TO '{staging / f'{table}-{k:03d}.parquet'}'"
                )
            con.close()
            staging.rename(folder)
        globs[table] = f"{folder}/*.parquet"
    return globs


def _brief(row: dict[str, Any]) -> str:
    if "refused" in row:
        return f"refused: {row['refused']}"
    s = row["seconds"]
    return (
        f"host {_ms(row['host'])}, device {_ms(row['device'])}, T* {_ms(row['t_star'])}, "
        f"best fixed {_ms(row['best_fixed_seconds'])} ({row['best_fixed']}), adaptive "
        f"{_ms(s['adaptive'])}, collaborative {_ms(s['collaborative'])}, "
        f"wrong {len(row.get('wrong', []))}"
    )


def report(rows: list[dict[str, Any]], args: argparse.Namespace, command: str) -> int:
    print_table(rows)
    result = {
        "command": command,
        "data": str(args.data or f"{args.benchmark} sf{args.scale:g}"),
        "connection": bool(getattr(args, "connection", False)),
        "inline": bool(getattr(args, "inline", False)),
        "parts": getattr(args, "parts", 0),
        "hive": bool(getattr(args, "hive", False)),
        "device": args.device,
        "runs": args.runs,
        "processes": args.processes,
        "rows": rows,
        "summary": summary(rows),
    }
    print(json.dumps(result["summary"], indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1, default=str))
    return 1 if result["summary"].get("wrong_answers") else 0


def _over_processes(args: argparse.Namespace, argv: list[str]) -> int:
    """Run this benchmark ``args.processes`` times, each in a fresh process (the thread settings
    are fixed at a process's start), and report the combined figures."""
    import subprocess

    runs = []
    with tempfile.TemporaryDirectory(prefix="dau-bench-coproc-runs-") as tmp:
        for k in range(args.processes):
            out = Path(tmp) / f"run{k}.json"
            # argparse keeps an option's last value: these override the caller's.
            cmd = [sys.executable, __file__, *argv, "--processes", "1", "--json", str(out)]
            print(f"process {k + 1} of {args.processes}", file=sys.stderr, flush=True)
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)
            if done.returncode != 0:
                raise SystemExit(f"process {k + 1} failed (exit {done.returncode})")
            runs.append(json.loads(out.read_text())["rows"])
    command = " ".join([Path(sys.argv[0]).as_posix(), *argv])
    return report(combine(runs), args, command)


if __name__ == "__main__":
    sys.exit(main())
