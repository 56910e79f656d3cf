"""Profile benchmarks, side by side in one process.

    python bench-queries/profiles.py prediction   # SF 0.3 host profile predicts SF 1 host time
    python bench-queries/profiles.py wall         # ... predicts Session.sql's wall at share 0
    python bench-queries/profiles.py regret       # collaborative/adaptive vs the best fixed share

prediction: for each query, a host profile measured on SF 0.3 (the host partial over row prefixes
of the split table, the Session.profile measurement and fit), rescaled to SF 1's table sizes
(QueryProfile.rescaled), predicts the host arm's time over all rows at SF 1, measured the same way
(DuckDB's latency); the SF 0.3 and SF 1 runs alternate, medians of 5. Reports
|predicted - measured| / measured, and the same without rescaling (other tables' reads held at
their SF 0.3 cost) for comparison.

regret: on SF 1 with a device (default polars), the wall time of collaborative and adaptive (from
profiles measured beforehand, not timed) over the best of the fixed shares {0, .25, .5, .75, 1},
all measured interleaved in the same run (medians of 3).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from dau_scheduler import Session, tpch
from dau_scheduler.compare import compare_tables
from dau_scheduler.profile import QueryProfile
from dau_scheduler.profiling import FRACTIONS, _host_run, fit_host

QUERIES = "q01,q03,q05,q06,q09,q10,q12,q14,q18,q19"
RESULTS = Path(__file__).parent / "results"
SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)


def prediction(queries: list[str], runs_per_size: int) -> dict[str, Any]:
    """Profile on SF 0.3, predict SF 1. The SF 0.3 prefix runs and the SF 1 runs alternate, so
    slow drift in this shared machine's speed lands on both sides of the comparison."""
    cache = Path(tempfile.mkdtemp(prefix="dau-bench-profiles-"))
    small = Session(tpch.cached(0.3), device=None, cache=cache)
    large = Session(tpch.cached(1.0), device=None, cache=cache)
    rows: dict[str, Any] = {}
    for name in queries:
        sql = tpch.queries()[name]
        compiled_small, compiled = small.compile(sql), large.compile(sql)
        key_small, key = small.plan_key(compiled_small), large.plan_key(compiled)
        n_small = small.row_counts[compiled_small.plan.split_table or ""]
        n = large.row_counts[compiled.plan.split_table or ""]
        sizes = sorted({max(1, round(f * n_small)) for f in FRACTIONS})
        _host_run(large, compiled, n, key)  # warm-up
        runs: list[QueryProfile] = []
        target: list[float] = []
        for _ in range(runs_per_size):
            runs += [_host_run(small, compiled_small, size, key_small) for size in sizes]
            target.append(_host_run(large, compiled, n, key).estimate(n))
        profile = fit_host(runs)
        measured = statistics.median(target)
        predicted = profile.rescaled(large.row_counts).estimate(n)
        split_only = profile.estimate(n)  # the other tables' reads held at their SF 0.3 cost
        rows[name] = {
            "predicted_s": predicted,
            "measured_s": measured,
            "error": abs(predicted - measured) / measured,
            "split_only_error": abs(split_only - measured) / measured,
            "fixed_s": profile.fixed_seconds,
            "table_s": sum(profile.table_seconds.values()),
            "per_row_us": profile.per_row_seconds * 1e6,
        }
        print(name, {k: round(v, 4) for k, v in rows[name].items()}, flush=True)
    errors = [r["error"] for r in rows.values()]
    split_only = [r["split_only_error"] for r in rows.values()]
    summary = {
        "median_error": statistics.median(errors),
        "worst_error": max(errors),
        "split_only_median_error": statistics.median(split_only),
        "split_only_worst_error": max(split_only),
    }
    print(
        f"without table growth: median error {summary['split_only_median_error']:.1%}, "
        f"worst {summary['split_only_worst_error']:.1%}"
    )
    print(f"median error {summary['median_error']:.1%}, worst {summary['worst_error']:.1%}")
    return {"rows": rows, **summary}


def wall(queries: list[str], runs: int) -> dict[str, Any]:
    """Prediction as a user meets it: ``Session.profile(sql, arm="host")`` on SF 0.3, rescaled to
    SF 1's tables, against the wall time of ``Session.sql(sql, device_share=0)`` on SF 1 (the
    whole query as it runs, minimum of ``runs``)."""
    cache = Path(tempfile.mkdtemp(prefix="dau-bench-wall-"))
    small = Session(tpch.cached(0.3), device=None, cache=cache)
    large = Session(tpch.cached(1.0), device="polars", cache=cache)
    rows: dict[str, Any] = {}
    for name in queries:
        sql = tpch.queries()[name]
        profile = small.profile(sql, arm="host")
        compiled = large.compile(sql)
        n = large.row_counts[compiled.plan.split_table or ""]
        predicted = profile.rescaled(large.row_counts).estimate(n)
        large.sql(sql, device_share=0.0)  # warm-up
        best = float("inf")
        for _ in range(runs):
            t0 = time.perf_counter()
            large.sql(sql, device_share=0.0)
            best = min(best, time.perf_counter() - t0)
        rows[name] = {
            "predicted_s": predicted,
            "measured_s": best,
            "error": abs(predicted - best) / best,
            "signed": (predicted - best) / best,
        }
        print(name, {k: round(v, 4) for k, v in rows[name].items()}, flush=True)
    errors = [r["error"] for r in rows.values()]
    summary = {"median_error": statistics.median(errors), "worst_error": max(errors)}
    print(f"median error {summary['median_error']:.1%}, worst {summary['worst_error']:.1%}")
    return {"rows": rows, **summary}


def regret(queries: list[str], runs: int, device: str) -> dict[str, Any]:
    cache = Path(tempfile.mkdtemp(prefix="dau-bench-profiles-"))
    session = Session(tpch.cached(1.0), device=device, cache=cache)
    rows: dict[str, Any] = {}
    for name in queries:
        sql = tpch.queries()[name]
        expected = session.host.cursor().sql(sql).to_arrow_table()
        if session.sql(sql).refusal:
            print(name, "refused:", session.sql(sql).refusal)
            continue
        session.plan(sql, posture="collaborative", profile="auto")  # profiles, not timed
        variants: dict[str, dict[str, Any]] = {f"share {s}": {"device_share": s} for s in SHARES}
        variants["collaborative"] = {"posture": "collaborative"}
        variants["adaptive"] = {"posture": "adaptive"}
        times: dict[str, list[float]] = {v: [] for v in variants}
        chosen: dict[str, float] = {}
        for round_ in range(runs):
            # A different order each round (seeded): the run right after the device alone is
            # slower, and a fixed order always gave that slot to collaborative.
            order = list(variants.items())
            random.Random(round_).shuffle(order)
            for variant, kwargs in order:
                t0 = time.perf_counter()
                result = session.sql(sql, **kwargs)
                times[variant].append(time.perf_counter() - t0)
                diff = compare_tables(result.table, expected)
                if diff is not None:
                    raise SystemExit(f"{name} {variant}: wrong answer: {diff}")
                if result.execution is not None:
                    chosen[variant] = result.execution.device_share
        med = {v: statistics.median(t) for v, t in times.items()}
        best = min(med[f"share {s}"] for s in SHARES)
        rows[name] = {
            "best_fixed_s": best,
            "best_fixed": min(SHARES, key=lambda s: med[f"share {s}"]),
            "collaborative_regret": med["collaborative"] / best,
            "adaptive_regret": med["adaptive"] / best,
            "collaborative_share": chosen.get("collaborative"),
            "adaptive_share": chosen.get("adaptive"),
            **{f"{v}_s": m for v, m in med.items()},
        }
        print(
            name,
            {
                k: (round(v, 3) if isinstance(v, float) else v)
                for k, v in rows[name].items()
                if not k.endswith("_s")
            },
            flush=True,
        )
    summary = {}
    for posture in ("collaborative", "adaptive"):
        values = [r[f"{posture}_regret"] for r in rows.values()]
        summary[posture] = {"median": statistics.median(values), "worst": max(values)}
        print(
            f"{posture}: median regret {summary[posture]['median']:.3f}, "
            f"worst {summary[posture]['worst']:.3f}"
        )
    return {"device": device, "rows": rows, "summary": summary}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench", choices=["prediction", "wall", "regret"])
    parser.add_argument("--queries", default=QUERIES)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--device", default="polars")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    queries = [q for q in args.queries.split(",") if q]
    if args.bench == "prediction":
        out = prediction(queries, args.runs)
        target = RESULTS / "prediction.json"
    elif args.bench == "wall":
        out = wall(queries, args.runs)
        target = RESULTS / "wall.json"
    else:
        out = regret(queries, args.runs, args.device)
        target = RESULTS / f"regret_{args.device}.json"
    RESULTS.mkdir(exist_ok=True)
    target.write_text(json.dumps(out, indent=1))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
