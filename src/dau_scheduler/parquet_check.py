"""Parquet files as an oracle: generic queries over each file split four ways, against DuckDB.

Every ``.parquet`` file under the given folders (DuckDB's own ``data/parquet-testing`` holds 171
odd ones: dictionaries, nested and map columns, decimals past 38 digits, timestamps in
nanoseconds, hive folders, files other readers find out of specification) is read four ways:
as a view of a user's connection (``CREATE VIEW t AS FROM read_parquet('file')``, split as its
file), read inline by the queries on a connection (``FROM 'file' AS t`` and ``FROM
read_parquet('file') AS t`` in turn: decision 028), as a lazy Session over a folder holding it
as ``t.parquet`` (each arm reads its rows from the file), and as a resident Session over that
folder. Each way answers a count, and per column (the first twelve) a count and distinct count,
a min and max, a sum and avg of numbers, and a GROUP BY of the first column, at the given
device share; DuckDB over the same file is the oracle (``compare.compare_tables``, schemas
included): the connection's, or the folder Session's own host (which has loaded the rows of a
resident one).

    python -m dau_scheduler.parquet_check DIR... --device polars --share 0.5 [--json F]
        [--ways view,inline,lazy,resident,chunked,streamed,dask,spark]

The ways ``chunked`` and ``streamed`` (under a memory budget) read the split table's rows with
pyarrow, where a few types read otherwise; ``dask`` (a LocalCluster's workers) and ``spark``
(a ``local[2]`` Spark's Python workers) read their ranges on the workers.

An outcome is ``split``, ``refused`` (by name), ``fallback`` (an arm failed; the host answered
unsplit), ``error`` (a named error of this package, raised before any engine ran), ``wrong`` or
``crashed`` (anything else raised); exit 1 on a wrong or crashed query.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb

from dau_scheduler.compare import compare_tables, report_outcomes
from dau_scheduler.errors import DauError

WAYS = ("view", "inline", "lazy", "resident")
#: Ways that read the split table's rows elsewhere: chunks under a memory budget (three
#: chunks a file, so chunks fold), a dask LocalCluster's workers and a local Spark's (not in
#: the default ways: they start a cluster).
MORE_WAYS = ("chunked", "streamed", "dask", "spark")
_CLIENT: dict[str, Any] = {}


def _client(way: str) -> Any:
    """One cluster of two workers on 127.0.0.1 for every file (a dask LocalCluster, or a
    ``local[2]`` Spark), closed at exit."""
    if way not in _CLIENT:
        import atexit

        from dau_scheduler.planner import dask_backend, spark_backend

        if way == "dask":
            dask_connection = dask_backend.connect("local:2")
            atexit.register(dask_connection.close)
            _CLIENT[way] = dask_connection.client
        else:
            spark_connection = spark_backend.connect("spark:local[2]")
            atexit.register(spark_connection.close)
            _CLIENT[way] = spark_connection.spark
    return _CLIENT[way]


_NUMBER = ("INT", "DECIMAL", "DOUBLE", "FLOAT", "HUGEINT")


def queries(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The generic queries over view ``t`` of ``con``."""
    columns = con.execute("SELECT column_name, column_type FROM (DESCRIBE t)").fetchall()
    out = ["SELECT count(*) FROM t"]
    for name, kind in columns[:12]:
        c = '"' + str(name).replace('"', '""') + '"'
        out.append(f"SELECT count({c}), count(DISTINCT {c}) FROM t")
        out.append(f"SELECT min({c}), max({c}) FROM t")
        nested = any(k in str(kind) for k in ("[", "STRUCT", "MAP", "UNION"))
        if any(k in str(kind) for k in _NUMBER) and not nested:
            out.append(f"SELECT sum({c}), avg({c}) FROM t")
    if columns:
        c = '"' + str(columns[0][0]).replace('"', '""') + '"'
        out.append(f"SELECT {c}, count(*) FROM t GROUP BY {c} ORDER BY ALL LIMIT 20")
    return out


def files_under(paths: Sequence[Path]) -> Iterator[Path]:
    for path in paths:
        yield from ([path] if path.is_file() else sorted(path.rglob("*.parquet")))


def check_file(
    path: Path, device: str, share: float, ways: Sequence[str] = WAYS
) -> list[dict[str, Any]]:
    """Every way and query over ``path``: one record per query with its outcome."""
    records: list[dict[str, Any]] = []
    for way in ways:
        folder = Path(tempfile.mkdtemp(prefix="dau-parquet-check-"))
        con = duckdb.connect()
        try:
            records += [
                {"file": str(path), "way": way, **r}
                for r in _way(path, way, folder, con, device, share)
            ]
        finally:
            con.close()
            shutil.rmtree(folder)
    return records


def folder_session(folder: Path, device: str, way: str) -> Any:
    """A Session over the Parquet folder ``folder`` (its table ``t``) read the way named:
    ``lazy`` or ``resident``; ``chunked`` or ``streamed`` under a 64 MB budget, in three chunks
    (so the partials fold again); or over a cluster of two workers (``dask``, ``spark``)."""
    from dau_scheduler.session import Session

    if way in ("chunked", "streamed"):
        session = Session(folder, device=device, mem_budget_mb=64, strategy=way)
        session.chunk_rows = max(1, -(-session.row_counts["t"] // 3))
        return session
    if way in ("dask", "spark"):
        return Session(folder, device=device, cluster=_client(way))
    return Session(folder, device=device, lazy=way == "lazy")


def _way(
    path: Path, way: str, folder: Path, con: duckdb.DuckDBPyConnection, device: str, share: float
) -> list[dict[str, Any]]:
    from dau_scheduler.session import Session

    try:
        if way == "view":
            con.execute(f"CREATE VIEW t AS FROM read_parquet('{path}')")
        else:
            shutil.copy(path, folder / "t.parquet")
            con.execute(f"CREATE VIEW t AS FROM read_parquet('{folder / 't.parquet'}')")
        asked = queries(con)
        if way == "inline":  # the file read where the table stands, both spellings
            con.execute("DROP VIEW t")
            file = str(folder / "t.parquet")
            asked = [
                sql.replace(" FROM t", f" FROM {spelling} AS t")
                for sql, spelling in zip(
                    asked, itertools.cycle((f"'{file}'", f"read_parquet('{file}')")), strict=False
                )
            ]
    except duckdb.Error:
        return [{"outcome": "unreadable"}]
    try:
        session = (
            Session(con, device=device)
            if way in ("view", "inline")
            else folder_session(folder, device, way)
        )
    except DauError as exc:
        return [{"outcome": "error", "why": str(exc)}]
    # The oracle: DuckDB on the user's connection, or the folder Session's own host (a
    # resident one has loaded the rows: DuckDB answers max(f) over a Parquet scan from the
    # file's statistics, which skip NaN, and over the loaded rows NaN).
    oracle = con if way in ("view", "inline", *MORE_WAYS) else session.host.cursor()
    with session:
        return [{"sql": sql, **_one(session, oracle, sql, share)} for sql in asked]


def _one(session: Any, con: duckdb.DuckDBPyConnection, sql: str, share: float) -> dict[str, Any]:
    try:
        expected = con.sql(sql).to_arrow_table()
    except duckdb.Error:
        return {"outcome": "unanswered"}  # DuckDB itself cannot answer it: nothing to compare
    try:
        result = session.sql(sql, posture="collaborative", device_share=share)
    except DauError as exc:
        return {"outcome": "error", "why": str(exc)[:300]}
    except Exception as exc:  # noqa: BLE001 - a crash is an outcome here, reported by name
        return {"outcome": "crashed", "why": f"{type(exc).__name__}: {str(exc)[:300]}"}
    diff = compare_tables(result.table, expected, ordered="ORDER BY" in sql)
    if diff is None and result.table.schema != expected.schema:
        diff = f"schema {result.table.schema} against {expected.schema}"
    if diff is not None:
        return {"outcome": "wrong", "why": diff[:300]}
    if result.execution is not None:
        return {"outcome": "split"}
    if result.fallback is not None:
        return {"outcome": "fallback", "why": result.fallback[:300]}
    return {"outcome": "refused", "why": (result.refusal or "")[:300]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--device", default="polars")
    parser.add_argument("--share", type=float, default=0.5)
    parser.add_argument("--ways", default=",".join(WAYS))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    ways = [w for w in args.ways.split(",") if w]
    unknown = sorted(set(ways) - set(WAYS) - set(MORE_WAYS))
    if unknown:
        parser.error(f"unknown way {unknown[0]!r}; ways: {', '.join(WAYS + MORE_WAYS)}")
    records = [
        record
        for path in files_under(args.paths)
        for record in check_file(path, args.device, args.share, ways)
    ]
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    files = len({r["file"] for r in records})
    return report_outcomes(
        records,
        f"{files} files, {len(records)} queries: ",
        lambda r: f"{r['file']} [{r['way']}] {r.get('sql')}",
    )


if __name__ == "__main__":
    raise SystemExit(main())
