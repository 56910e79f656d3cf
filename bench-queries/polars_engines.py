"""Polars' two CPU engines as the Polars arm's: time and peak memory of each TPC-H partial.

    python bench-queries/polars_engines.py --scale 1 --runs 3            # time, side by side
    python bench-queries/polars_engines.py --scale 1 --memory --queries q01,q03,q06,q18

time: a resident Session on the ``polars`` device; each query at device share 1.0 (the arm runs
every row), ``collect_engine`` set to ``in-memory`` and ``streaming`` in turn, alternating, the
fastest of ``--runs`` each; the ratio is streaming over in-memory. Every answer is checked
against the host's. memory: each (query, engine) in a fresh process over the Parquet files
(``Session(lazy=True)``): the peak RSS above the RSS once the Session is open (VmHWM reset).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

ENGINES = ("in-memory", "streaming")


def _data(scale: float, data: str | None) -> Path:
    from dau_scheduler import tpch

    return Path(data) if data else tpch.cached(scale)


def _one(data: Path, name: str, engine: str) -> None:
    """In a fresh process: the peak RSS (MiB) one query adds on one engine, printed as JSON."""
    from dau_scheduler import Session, tpch

    with Session(data, device="polars", lazy=True) as session:
        session.device.collect_engine = engine  # type: ignore[union-attr]
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        start = _status("VmRSS")
        result = session.sql(tpch.queries()[name], device_share=1.0)
        assert result.refusal is None and result.fallback is None, (result.refusal, result.fallback)
        print(json.dumps({"peak_mib": (_status("VmHWM") - start) / 1024}))


def _status(field: str) -> int:
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field + ":"))


def _times(data: Path, names: list[str], runs: int) -> list[dict[str, object]]:
    from dau_scheduler import Session, tpch
    from dau_scheduler.compare import compare_tables

    rows = []
    with Session(data, device="polars") as session:
        for name in names:
            sql = tpch.queries()[name]
            expected = session.sql(sql, device_share=0.0).table
            best = {engine: math.inf for engine in ENGINES}
            for _ in range(runs):
                for engine in ENGINES:
                    session.device.collect_engine = engine  # type: ignore[union-attr]
                    began = time.perf_counter()
                    result = session.sql(sql, device_share=1.0)
                    best[engine] = min(best[engine], time.perf_counter() - began)
                    assert result.refusal is None and result.fallback is None, name
                    assert compare_tables(result.table, expected) is None, (name, engine)
            ratio = best["streaming"] / best["in-memory"]
            rows.append(
                {
                    "query": name,
                    **{e: round(best[e] * 1000, 1) for e in ENGINES},
                    "ratio": round(ratio, 2),
                }
            )
            print(
                f"{name}: in-memory {best['in-memory'] * 1000:.0f} ms, streaming "
                f"{best['streaming'] * 1000:.0f} ms, ratio {ratio:.2f}",
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--data")
    parser.add_argument("--queries", default=",".join(f"q{i:02d}" for i in range(1, 23)))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--memory", action="store_true", help="peak RSS per engine instead")
    parser.add_argument("--one", nargs=2, metavar=("QUERY", "ENGINE"), help=argparse.SUPPRESS)
    parser.add_argument("--json")
    args = parser.parse_args()
    data = _data(args.scale, args.data)
    names = args.queries.split(",")
    if args.one:
        _one(data, *args.one)
        return
    if not args.memory:
        rows = _times(data, names, args.runs)
        logs = [math.log(float(r["ratio"])) for r in rows]  # type: ignore[arg-type]
        summary = {"geometric_mean_ratio": round(math.exp(sum(logs) / len(logs)), 3)}
    else:
        rows = []
        for name in names:
            peaks = {}
            for engine in ENGINES:
                out = subprocess.run(
                    [sys.executable, __file__, "--data", str(data), "--one", name, engine],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                peaks[engine] = round(json.loads(out.stdout.strip().splitlines()[-1])["peak_mib"])
            rows.append(
                {
                    "query": name,
                    **peaks,
                    "ratio": round(peaks["streaming"] / max(1, peaks["in-memory"]), 2),
                }
            )
            print(
                f"{name}: peak above the open Session, in-memory {peaks['in-memory']} MiB, "
                f"streaming {peaks['streaming']} MiB",
                flush=True,
            )
        summary = {}
    print(json.dumps(summary))
    if args.json:
        Path(args.json).write_text(json.dumps({"command": sys.argv, "rows": rows, **summary}))


if __name__ == "__main__":
    main()
