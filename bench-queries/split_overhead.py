"""TPC-H benchmark: plain DuckDB vs Session.sql at share 0, share 0.5 (duckdb and polars devices)
and adaptive, side by side in one process; medians of N runs, reported as ratios to plain DuckDB.

    python bench-queries/split_overhead.py --scale 1 --runs 5
    python bench-queries/split_overhead.py --benchmark tpcds --scale 1 --queries q44,q70,q95

Writes bench-queries/results/split_overhead_sf<scale>.json (``tpcds_sf...`` for TPC-DS) and
prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dau_scheduler import Session, tpcds, tpch
from dau_scheduler.compare import compare_tables

RESULTS = Path(__file__).parent / "results"


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--queries", default="", help="comma-separated names, e.g. q01,q06")
    parser.add_argument("--devices", default="duckdb,polars")
    parser.add_argument("--benchmark", choices=["tpch", "tpcds"], default="tpch")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)

    suite = tpcds if args.benchmark == "tpcds" else tpch
    data = suite.cached(args.scale)
    names = [q for q in args.queries.split(",") if q] or sorted(suite.queries())
    queries = {name: suite.queries()[name] for name in names}
    # A fresh profile cache: "adaptive" here is the profile-less posture (probing morsels).
    cache = Path(tempfile.mkdtemp(prefix="dau-bench-overhead-"))
    sessions = {
        device: Session(data, device=device, cache=cache) for device in args.devices.split(",")
    }
    base = sessions[next(iter(sessions))]
    variants: dict[str, Callable[[str], Any]] = {
        "duckdb": lambda q: base.host.cursor().sql(q).to_arrow_table(),
        "share0": lambda q: base.sql(q, device_share=0.0),
    }
    for device, session in sessions.items():
        variants[f"{device}@0.5"] = lambda q, s=session: s.sql(q, device_share=0.5)
    last = sessions[list(sessions)[-1]]
    variants["adaptive"] = lambda q: last.sql(q)

    rows: dict[str, dict[str, Any]] = {}
    for name, sql in queries.items():
        expected = variants["duckdb"](sql)
        for variant in variants:  # warm-up: compiles and caches every plan once
            variants[variant](sql)
        times: dict[str, list[float]] = {v: [] for v in variants}
        merge_share: list[float] = []
        shares: list[float] = []
        for _ in range(args.runs):
            for variant, fn in variants.items():  # interleaved: one run of each per round
                seconds, value = timed(lambda fn=fn, sql=sql: fn(sql))
                times[variant].append(seconds)
                if variant != "duckdb":
                    diff = compare_tables(value.table, expected)
                    if diff is not None:
                        raise SystemExit(f"{name} {variant}: wrong answer: {diff}")
                    ex = value.execution
                    if ex is not None and variant.endswith("@0.5"):
                        merge_share.append(ex.merge_seconds / ex.wall_seconds)
                    if ex is not None and variant == "adaptive":
                        shares.append(ex.device_share)
        med = {v: statistics.median(t) for v, t in times.items()}
        rows[name] = {
            "duckdb_s": med["duckdb"],
            **{f"{v}_ratio": med[v] / med["duckdb"] for v in variants if v != "duckdb"},
            "merge_share": statistics.median(merge_share) if merge_share else None,
            "adaptive_share": statistics.median(shares) if shares else None,
            "refusal": last.explain(sql).refusal,
        }
        print(
            name,
            {
                k: (round(v, 3) if isinstance(v, float) else v)
                for k, v in rows[name].items()
                if k != "refusal"
            },
            flush=True,
        )

    RESULTS.mkdir(exist_ok=True)
    prefix = "" if args.benchmark == "tpch" else f"{args.benchmark}_"
    out = RESULTS / f"split_overhead_{prefix}sf{args.scale:g}.json"
    out.write_text(json.dumps({"scale": args.scale, "runs": args.runs, "rows": rows}, indent=1))
    ratio_cols = [k for k in next(iter(rows.values())) if k.endswith("_ratio")]
    print(
        "\n| query | duckdb s | "
        + " | ".join(c[:-6] for c in ratio_cols)
        + " | merge/wall | adaptive share |"
    )
    print("|---" * (len(ratio_cols) + 4) + "|")
    for name, row in rows.items():
        merge = f"{row['merge_share']:.3%}" if row["merge_share"] is not None else "-"
        share = f"{row['adaptive_share']:.2f}" if row["adaptive_share"] is not None else "-"
        print(
            f"| {name} | {row['duckdb_s']:.3f} | "
            + " | ".join(f"{row[c]:.2f}" for c in ratio_cols)
            + f" | {merge} | {share} |"
        )
    for col in ratio_cols:
        print(f"median {col}: {statistics.median(r[col] for r in rows.values()):.3f}")
    merges = [r["merge_share"] for r in rows.values() if r["merge_share"] is not None]
    if merges:
        print(f"median merge/wall: {statistics.median(merges):.3%}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
