"""Moment aggregates benchmark: what the variance and covariance folds cost beside a sum's.

Over TPC-H ``lineitem``, grouped three ways (4 groups, 10K suppliers, 200K parts), plain DuckDB
and ``Session.sql`` at share 0.5 on the ``duckdb`` device, side by side in one process, for a
sum/avg pair, a variance pair, a covariance pair and a skewness/kurtosis pair; medians of N runs
as ratios to plain DuckDB, every split answer checked against DuckDB's. Also the planning time
of each query.

    python bench-queries/moments.py --scale 1 --runs 5

Writes bench-queries/results/moments_sf<scale>.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from pathlib import Path

from alternate import alternate

from dau_scheduler import Session, tpch
from dau_scheduler.compare import compare_tables

RESULTS = Path(__file__).parent / "results"

AGGREGATES = {
    "sum": "sum(l_extendedprice) AS a, avg(l_discount) AS b",
    "variance": "var_samp(l_extendedprice) AS a, stddev(l_discount) AS b",
    # Correlated pairs: an uncorrelated pair (price, discount) has |corr| below ~4e-6 in 2 of
    # the 10K supplier groups, which the co-moment guard answers unsplit (decision 021).
    "covariance": "corr(l_extendedprice, l_quantity) AS a, "
    "regr_slope(l_extendedprice, l_quantity) AS b",
    # Power sums (rewrite/power_moments.py): over 200K groups of ~30 rows some group's excess
    # kurtosis is near 0, past the guard: that query is answered unsplit. (A skewness of
    # l_quantity is not compared here: a symmetric group's is rounding noise that DuckDB's own
    # runs disagree on, 7e-18 against 4.6e-17, split or not.)
    "power sums": "kurtosis(l_extendedprice) AS a, kurtosis_pop(l_quantity) AS b",
}
GROUPINGS = {
    "4 groups": "l_returnflag, l_linestatus",
    "10K groups": "l_suppkey",
    "200K groups": "l_partkey",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)

    rows = []
    with Session(tpch.cached(args.scale), device="duckdb") as session:
        cursor = session.host.cursor()
        for grouping, keys in GROUPINGS.items():
            for kind, aggregates in AGGREGATES.items():
                sql = f"SELECT {keys}, {aggregates} FROM lineitem GROUP BY {keys}"
                t0 = time.perf_counter()
                session.compile(sql)
                planning = time.perf_counter() - t0
                expected = cursor.sql(sql).to_arrow_table()
                plain, split, results = alternate(
                    args.runs,
                    lambda sql=sql: cursor.sql(sql).to_arrow_table(),
                    lambda sql=sql: session.sql(sql, device_share=0.5),
                )
                unsplit = 0
                for result in results:
                    # Only power sums over many small groups may meet the guard (then the first
                    # run falls back and later runs are answered unsplit, remembered).
                    unsplit += result.execution is None
                    assert result.execution is not None or kind == "power sums", (
                        sql,
                        result.refusal,
                        result.fallback,
                    )
                    assert compare_tables(result.table, expected, ordered=False) is None, sql
                rows.append(
                    {
                        "grouping": grouping,
                        "aggregates": kind,
                        "split_over_duckdb": statistics.median(split) / statistics.median(plain),
                        "planning_s": planning,
                        "unsplit_runs": unsplit,
                    }
                )
        unfolded = _unfolded(session, cursor, args.runs)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"moments_sf{args.scale:g}.json"
    out.write_text(
        json.dumps(
            {"scale": args.scale, "runs": args.runs, "rows": rows, "unfolded": unfolded}, indent=2
        )
    )
    print("| grouping | aggregates | split / DuckDB | planning (s) | runs answered unsplit |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print(
            f"| {row['grouping']} | {row['aggregates']} | {row['split_over_duckdb']:.2f}x "
            f"| {row['planning_s']:.3f} | {row['unsplit_runs']} |"
        )
    print(
        f"\nA split that does not fold ({UNFOLDED_GROUPS}): first run "
        f"{unfolded['first_over_duckdb']:.2f}x DuckDB, later runs "
        f"{unfolded['later_over_duckdb']:.2f}x (answered unsplit, remembered)"
    )


#: An uncorrelated pair per supplier: the co-moment guard fails in 2 of the 10K groups.
UNFOLDED_GROUPS = "regr_slope(price, discount), 10K supplier groups"
UNFOLDED = (
    "SELECT l_suppkey, regr_slope(l_extendedprice, l_discount) AS s FROM lineitem "
    "GROUP BY l_suppkey"
)


def _unfolded(session: Session, cursor: object, runs: int) -> dict[str, float]:
    """The first run of a query whose split does not fold (the arms run, then the host runs it
    unsplit) and the later ones (answered unsplit at once), each against plain DuckDB."""
    expected = cursor.sql(UNFOLDED).to_arrow_table()  # type: ignore[attr-defined]
    plain, later, first = [], [], 0.0
    for run in range(runs + 1):
        t0 = time.perf_counter()
        cursor.sql(UNFOLDED).to_arrow_table()  # type: ignore[attr-defined]
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        result = session.sql(UNFOLDED, device_share=0.5)
        seconds = time.perf_counter() - t0
        assert result.execution is None, "the pair was meant not to fold"
        assert compare_tables(result.table, expected, ordered=False) is None
        if run == 0:
            first = seconds
        else:
            later.append(seconds)
    base = statistics.median(plain)
    return {"first_over_duckdb": first / base, "later_over_duckdb": statistics.median(later) / base}


if __name__ == "__main__":
    main()
