"""Compile time: ``Session.compile`` of the 22 TPC-H and 99 TPC-DS queries (SF 0.01 files,
generated and cached on first use), in a fresh process a run, against another checkout's
code side by side.

    python bench-queries/compile_time.py --runs 4 --against /tmp/old/src

Each run is one process that opens a Session over each benchmark's files (not timed) and
compiles every query once (timed; a query the planner refuses counts as compiled), then
writes the Polars arm's SQL of each one compiled with a partial (``*_arm``, timed apart: the
arm's checks and rewrites; per query of the benchmark). With
``--against``, a run of that ``src`` folder (first on ``PYTHONPATH``) alternates with each
run of this checkout's, and the ratio of their medians is printed: this machine's speed
drifts within an hour, so only runs taken side by side compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

RUN = """
import json, time, warnings
warnings.simplefilter("ignore")
from dau_scheduler import Session, tpcds, tpch
out = {}
for name, module in (("tpch", tpch), ("tpcds", tpcds)):
    folder = module.cached(0.01)
    files = {p.stem: str(p) for p in folder.glob("*.parquet")}
    with Session(files, device="polars") as session:
        queries = list(module.queries().values())
        t0 = time.perf_counter()
        compiled = []
        for query in queries:
            try:
                compiled.append(session.compile(query))
            except Exception:  # noqa: BLE001 (a refusal or an error: compiled either way)
                pass
        out[name] = (time.perf_counter() - t0) * 1000 / len(queries)
        # The Polars arm's SQL of each split one (its checks and rewrites), not cached.
        t0 = time.perf_counter()
        for one in compiled:
            if one.partial is None:
                continue
            one.arm_sql.clear()
            try:
                session.device.sql_for(one)
            except Exception:  # noqa: BLE001 (refused by the arm: written as far as it goes)
                pass
        out[name + "_arm"] = (time.perf_counter() - t0) * 1000 / len(queries)
print(json.dumps(out))
"""


def _run(src: Path | None) -> dict[str, float]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    done = subprocess.run(
        [sys.executable, "-c", RUN], check=True, capture_output=True, text=True, env=env
    )
    found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--against", type=Path, help="another checkout's src folder")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    here: list[dict[str, float]] = []
    there: list[dict[str, float]] = []
    for _ in range(args.runs):
        if args.against is not None:
            there.append(_run(args.against))
        here.append(_run(None))
    result: dict[str, dict[str, float]] = {}
    for name in ("tpch", "tpcds", "tpch_arm", "tpcds_arm"):
        row = {"ms_per_query": statistics.median(r[name] for r in here)}
        if there:
            row["against_ms_per_query"] = statistics.median(r[name] for r in there)
            row["ratio"] = row["ms_per_query"] / row["against_ms_per_query"]
        result[name] = row
        shown = ", ".join(f"{k} {v:.3f}" for k, v in row.items())
        print(f"{name}: {shown}")
    if args.json is not None:
        args.json.write_text(json.dumps({"runs": args.runs, "result": result}, indent=2))


if __name__ == "__main__":
    main()
