"""cudf-polars' two executors side by side on the cudf arm, in one process (needs a CUDA GPU):

    python bench-queries/gpu_executors.py --data DIR --queries q01,q06 --runs 3 --json F

For each query: DuckDB alone (the host at share 0) and the cudf arm alone (share 1) with the
in-memory executor and with the streaming one (cudf-polars' default), each the minimum of
``--runs`` interleaved runs after one untimed warm-up run; every answer is checked against
DuckDB's unsplit answer. The first GPU kit run (2026-12-04) measured the streaming executor at
1.8 s for TPC-H Q1 at SF 1 where DuckDB took 35 ms: this says how much of that is the executor.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

EXECUTORS = ("in-memory", "streaming")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="TPC-H folder")
    parser.add_argument("--queries", default="q01,q06,q03")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from dau_scheduler import Session, tpch
    from dau_scheduler.arms import PolarsArm
    from dau_scheduler.compare import compare_tables

    sessions = {
        executor: Session(
            args.data, device=PolarsArm(engine="gpu", name="cudf", gpu_executor=executor)
        )
        for executor in EXECUTORS
    }
    rows: list[dict[str, Any]] = []
    wrong = 0
    for name in [q for q in args.queries.split(",") if q]:
        sql = tpch.queries()[name]
        expected = sessions["in-memory"].sql(sql, device_share=0.0).table
        variants: dict[str, tuple[Any, float]] = {"duckdb": (sessions["in-memory"], 0.0)}
        variants |= {f"cudf {e}": (sessions[e], 1.0) for e in EXECUTORS}
        times: dict[str, list[float]] = {v: [] for v in variants}
        notes: dict[str, str] = {}
        for round_ in range(args.runs + 1):
            for variant, (session, share) in variants.items():
                t0 = time.perf_counter()
                result = session.sql(sql, device_share=share)
                seconds = time.perf_counter() - t0
                if round_ == 0:  # the warm-up: the answer checked, not timed
                    diff = compare_tables(result.table, expected)
                    wrong += diff is not None
                    note = diff or result.refusal or result.fallback
                    if note:
                        notes[variant] = str(note)[:300]
                else:
                    times[variant].append(seconds)
        best = {v: min(ts) for v, ts in times.items()}
        row = {"query": name, "seconds": best, "notes": notes}
        rows.append(row)
        print(
            f"{name}: "
            + ", ".join(f"{v} {s * 1000:.0f} ms" for v, s in best.items())
            + (f"; notes {notes}" if notes else ""),
            flush=True,
        )
    for session in sessions.values():
        session.close()
    if args.json:
        args.json.write_text(json.dumps({"command": " ".join(sys.argv), "rows": rows}, indent=1))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
