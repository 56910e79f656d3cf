"""Calibration benchmark: do throughputs calibrated on a 1% sample predict each arm's time on
the whole split table?

    python bench-queries/calibration.py --scale 1 --runs 5 --repeats 31
    python bench-queries/calibration.py --data DIR --device cudf    # on a GPU host (gpu/check.py)

For each query, ``calibrate_resources`` measures the host (DuckDB) and the device arm on the
first 1% and 4% of the split table, ``--repeats`` pairs each (fixed seconds and marginal rows
per second from the median of the pairs' differences); the prediction
``fixed + rows / throughput`` for all rows is compared with each arm's partial over all rows
(fastest of ``--runs``). Reports |predicted - measured| / measured per arm and its median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

QUERIES = "q01,q03,q05,q06,q08,q09,q10,q12,q14,q19"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--data", type=Path, help="TPC-H folder (default: cached --scale)")
    parser.add_argument("--device", default="polars", choices=("polars", "cudf"))
    parser.add_argument("--queries", default=QUERIES)
    parser.add_argument("--runs", type=int, default=5, help="runs of each arm over all rows")
    parser.add_argument(
        "--repeats", type=int, default=31, help="calibration pairs (1%% and 4%%) per arm"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    from dau_scheduler import Session, tpch
    from dau_scheduler.planner import CalibrationCatalog, DeviceSpec, Resources, calibrate_resources

    rows = []
    device = args.device
    data = args.data if args.data is not None else tpch.cached(args.scale)
    with Session(data, device=device) as session:
        arms = {"host": session.host, device: session.device}
        kind = "gpu" if device == "cudf" else "cpu"
        res = Resources((DeviceSpec("host"), DeviceSpec(device, kind=kind, engine=device)))
        for name in args.queries.split(","):
            sql = tpch.queries()[name]
            compiled = session.compile(sql)
            n = session.row_counts[compiled.plan.split_table or ""]
            catalog = CalibrationCatalog()
            calibrate_resources(session, sql, res, repeats=args.repeats, catalog=catalog)
            record = catalog.latest()
            assert record is not None
            row: dict[str, object] = {"query": name, "rows": n}
            for arm_name, arm in arms.items():
                best = float("inf")
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    arm.run_partial(compiled, 0, n)
                    best = min(best, time.perf_counter() - t0)
                predicted = record.predict(arm_name, n)
                row[arm_name] = {
                    "predicted": predicted,
                    "measured": best,
                    "error": abs(predicted - best) / best,
                }
            rows.append(row)
            print(
                f"{name}: host predicted {row['host']['predicted']:.3f}s measured "  # type: ignore[index]
                f"{row['host']['measured']:.3f}s ({row['host']['error']:.1%}); {device} "  # type: ignore[index]
                f"{row[device]['predicted']:.3f}s vs {row[device]['measured']:.3f}s "  # type: ignore[index]
                f"({row[device]['error']:.1%})",  # type: ignore[index]
                flush=True,
            )
    summary = {
        arm_name: {
            "median_error": statistics.median(r[arm_name]["error"] for r in rows),  # type: ignore[index]
            "worst_error": max(r[arm_name]["error"] for r in rows),  # type: ignore[index]
        }
        for arm_name in arms
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(
            json.dumps({"command": " ".join(sys.argv), "rows": rows, "summary": summary}, indent=1)
        )


if __name__ == "__main__":
    main()
