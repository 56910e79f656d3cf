"""What reading hive-partitioned files costs a split (decision 030).

lineitem is written by ``COPY ... PARTITION_BY (l_returnflag, l_linestatus)`` (four folders;
``tpch.partitioned``) and read back by a glob, its keys as DuckDB's hive columns. In one
process, side by side, each as a ratio:
- ``take / Q1 on DuckDB``: taking the glob as a table (its files' metadata, DuckDB's types and
  the hive values, one ``GROUP BY`` of no columns: ``tables.with_partitions``), once per
  Session and again only when a file changes, against DuckDB's own Q1 over the glob;
- for Q1 and Q6 at device share 0.0 (the host), 0.5 and 1.0 (the device alone), polars
  device: the split over the hive glob against the same split over lineitem.parquet (the
  columns' values the same; the hive copy's row order is the partitions').

    python bench-queries/hive_reads.py --scale 1
"""

from __future__ import annotations

import argparse
import warnings

import duckdb
from file_watch import median  # (this folder's: each script runs from it)

from dau_scheduler import Session, tpch
from dau_scheduler.tables import ParquetViewSource, files_of, with_partitions


def _take(con: duckdb.DuckDBPyConnection, glob: str) -> None:
    files = files_of(con, glob)
    assert files is not None
    taken = with_partitions(con, [glob], ParquetViewSource(files, pattern=glob))
    assert taken is not None and taken[0].hive is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    data = tpch.cached(args.scale)
    glob = tpch.partitioned(data, data / "hive")["lineitem"]
    single = str(data / "lineitem.parquet")
    con = duckdb.connect()
    q01, q06 = tpch.queries()["q01"], tpch.queries()["q06"]
    on_glob = tpch.read_inline(q01, data, globs={"lineitem": glob})
    take = median(lambda: _take(con, glob), args.runs)
    duck = median(lambda: con.sql(on_glob).to_arrow_table(), args.runs)
    files = files_of(con, glob) or ()
    print(f"lineitem at SF {args.scale:g}: {len(files)} files under key=value folders")
    print(f"| take / Q1 on DuckDB | {take / duck:.3f} | take {take * 1e3:.1f} ms |")
    print("| query | device share | split over the hive glob / over the single file |")
    print("| --- | --- | --- |")
    with Session(con, device="polars") as session:
        for name, sql in (("q01", q01), ("q06", q06)):
            spelled = {
                path: tpch.read_inline(sql, data, globs={"lineitem": path})
                for path in (glob, single)
            }
            for share in (0.0, 0.5, 1.0):
                seconds = {}
                for path, text in spelled.items():
                    session.sql(text, device_share=share)  # (taken, planned, warmed)
                    seconds[path] = median(
                        lambda t=text, s=share: session.sql(t, device_share=s), args.runs
                    )
                print(f"| {name} | {share:.1f} | {seconds[glob] / seconds[single]:.3f} |")


if __name__ == "__main__":
    main()
