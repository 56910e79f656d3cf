"""Connection benchmark: what a Session over a user's DuckDB connection costs (decision 023).

Over TPC-H, Q1, Q6 and Q3 at device share 0.3, side by side in one process, medians of N
alternating runs as ratios to plain DuckDB on the same connection, every answer checked:
- ``tables, duckdb``: the connection's tables, the DuckDB device (both arms read them where
  they are, by rowid range);
- ``tables, polars``: the same tables, the Polars device, which reads the rows each query
  reads when it runs (the tables may have changed since the last query);
- ``tables, duckdb, after a file``: as ``tables, duckdb``, by a Session that has first read a
  Parquet file inline (which makes it lazy, decision 028: its connection tables then went
  through Arrow chunks, 3.5x as long for Q6, until the forty-ninth session);
- ``parquet views, polars``: the connection's ``CREATE VIEW t AS FROM 't.parquet'`` views,
  split as the files;
- ``folder, polars``: a Session over the same Parquet folder, the device's copy resident (what
  the connection paths are measured against);
- ``tables, gpu-limited``: the connection's tables, the cudf arm's translation on the CPU
  (``arms.cudf.CudfStandIn``), which reads each bounded column's least and greatest value from
  the connection as it writes a query and checks the rows each run is given against them:
  what those reads cost beside ``tables, polars``.

    python bench-queries/connection.py --scale 1 --runs 3

Writes bench-queries/results/connection_sf<scale>.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import warnings
from pathlib import Path

import duckdb
from alternate import alternate

from dau_scheduler import Session, tpch
from dau_scheduler.arms.cudf import CudfStandIn
from dau_scheduler.compare import compare_tables

RESULTS = Path(__file__).parent / "results"
QUERIES = ["q01", "q06", "q03"]
TABLES = ["lineitem", "orders", "customer"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--share", type=float, default=0.3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    folder = tpch.cached(args.scale)
    tables = duckdb.connect()
    views = duckdb.connect()
    for name in TABLES:
        tables.execute(f"CREATE TABLE {name} AS FROM read_parquet('{folder / name}.parquet')")
        views.execute(f"CREATE VIEW {name} AS FROM read_parquet('{folder / name}.parquet')")
    after_file = Session(tables, device="duckdb")
    after_file.sql(f"SELECT count(*) FROM '{folder / 'region.parquet'}'", device_share=0.5)
    assert after_file.lazy
    cases = {
        "tables, duckdb": (tables, Session(tables, device="duckdb")),
        "tables, duckdb, after a file": (tables, after_file),
        "tables, polars": (tables, Session(tables, device="polars")),
        "parquet views, polars": (views, Session(views, device="polars")),
        "folder, polars": (views, Session(folder, device="polars")),
        "tables, gpu-limited": (tables, Session(tables, device=CudfStandIn())),
    }
    queries = tpch.queries()
    rows = []
    for case, (con, session) in cases.items():
        for name in QUERIES:
            sql = queries[name]
            expected = con.sql(sql).to_arrow_table()
            plain, split, results = alternate(
                args.runs,
                lambda con=con, sql=sql: con.sql(sql).to_arrow_table(),
                lambda s=session, sql=sql: s.sql(
                    sql, posture="collaborative", device_share=args.share
                ),
            )
            for result in results:
                diff = compare_tables(result.table, expected, ordered=True)
                if diff is not None or result.execution is None:
                    raise SystemExit(f"{case} {name}: {diff or result.refusal or result.fallback}")
            rows.append(
                {
                    "case": case,
                    "query": name,
                    "duckdb_s": statistics.median(plain),
                    "split_s": statistics.median(split),
                    "ratio": statistics.median(split) / statistics.median(plain),
                }
            )
        session.close()
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"connection_sf{args.scale:g}.json"
    out.write_text(json.dumps({"scale": args.scale, "share": args.share, "rows": rows}, indent=1))
    print("| case | query | DuckDB s | split s | split / DuckDB |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print(
            f"| {row['case']} | {row['query']} | {row['duckdb_s']:.3f} | {row['split_s']:.3f} "
            f"| {row['ratio']:.2f} |"
        )


if __name__ == "__main__":
    main()
