"""One-shot benchmark: ``run_sql`` over TPC-H Parquet in a fresh process, against a plain DuckDB
query over the same files in a fresh process (what a user would otherwise run).

    python bench-queries/oneshot.py --scale 1 --queries q01,q06,q03 --runs 3

Each run is a whole process (interpreter start, imports, the query, exit), timed from outside;
the two variants alternate, and each reports its minimum. Answers are compared once.

The package's modules are byte-compiled first, as ``pip install`` does for an installed wheel:
an editable checkout under ``PYTHONDONTWRITEBYTECODE=1`` (as on the development machines)
would otherwise compile its ~45 modules from source in every process (~0.1 s), which no
installed copy pays. ``--no-compile`` measures that case too.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

PLAIN = """
import sys, duckdb
import pyarrow.feather as feather
con = duckdb.connect()
for t in {tables!r}:
    con.execute(f"CREATE VIEW {{t}} AS SELECT * FROM read_parquet('{data}/{{t}}.parquet')")
table = con.sql(open({query!r}).read()).to_arrow_table()
if len(sys.argv) > 1:
    feather.write_feather(table, sys.argv[1])
"""
DAU = """
import sys
import pyarrow.feather as feather
from dau_scheduler import run_sql
table = run_sql(open({query!r}).read(), {data!r}).table
if len(sys.argv) > 1:
    feather.write_feather(table, sys.argv[1])
"""


def _time(code: str, *extra: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *extra], check=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--queries", default="q01,q06,q03")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--no-compile", action="store_true", help="leave the package's modules uncompiled"
    )
    args = parser.parse_args()
    import compileall
    import tempfile

    import pyarrow.feather as feather

    from dau_scheduler import tpch
    from dau_scheduler.compare import compare_tables

    data = str(tpch.cached(args.scale))
    package = Path(tpch.__file__).resolve().parent
    if not args.no_compile:
        compileall.compile_dir(package, quiet=1)
    folder = Path(tpch.__file__).resolve().parents[2] / "sql" / "tpch"
    rows = []
    for name in args.queries.split(","):
        query = str(folder / f"{name}.sql")
        plain = PLAIN.format(tables=list(tpch.TABLES), data=data, query=query)
        dau = DAU.format(data=data, query=query)
        with tempfile.TemporaryDirectory() as tmp:
            _time(plain, f"{tmp}/a.arrow")
            _time(dau, f"{tmp}/b.arrow")
            diff = compare_tables(
                feather.read_table(f"{tmp}/b.arrow"), feather.read_table(f"{tmp}/a.arrow")
            )
        times: dict[str, list[float]] = {"duckdb": [], "dau": []}
        for _ in range(args.runs):
            times["duckdb"].append(_time(plain))
            times["dau"].append(_time(dau))
        best = {k: min(v) for k, v in times.items()}
        row = {"query": name, **best, "ratio": best["dau"] / best["duckdb"], "exact": diff is None}
        rows.append(row)
        print(
            f"{name}: run_sql {best['dau']:.3f}s, DuckDB {best['duckdb']:.3f}s: "
            f"{row['ratio']:.2f}x {'exact' if diff is None else 'WRONG ' + str(diff)}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps({"command": " ".join(sys.argv), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
