"""TPC-H: data through tpchgen-cli (no network), the 22 queries with validation parameters, and
the reference answers DuckDB's repository ships for them.

The reference answers (``sql/tpch/answers/sf<scale>/qNN.csv``, DuckDB's dbgen answers at SF 0.01,
0.1 and 1) are a check no one here wrote: :func:`compare_reference` holds an answer to them, and
``python -m dau_scheduler.tpch`` runs every query split on a device against both DuckDB's
unsplit answer and the reference. tpchgen-cli writes dbgen's numbers, keys, names and dates, but
draws addresses and comments from its own text, so those columns (:data:`GENERATED_TEXT`) and
Q13, which counts orders by their comment, are not checked against the reference.

The helpers below (packaged query folders, a generator beside the interpreter, the scale check,
the cache) serve :mod:`dau_scheduler.tpcds` too.
"""

from __future__ import annotations

import csv
import fcntl
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa

from dau_scheduler.errors import SqlError
from dau_scheduler.paths import data_root

TABLES: tuple[str, ...] = (
    "customer",
    "lineitem",
    "nation",
    "orders",
    "part",
    "partsupp",
    "region",
    "supplier",
)


def query_folder(benchmark: str) -> Path:
    """The folder of ``benchmark``'s queries (``sql/<benchmark>`` in a checkout, packaged in a
    wheel)."""
    packaged = resources.files("dau_scheduler") / "_sql" / benchmark
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "sql" / benchmark
    if checkout.is_dir():
        return checkout
    raise SqlError(f"the {benchmark} queries are missing from this installation")


#: Columns tpchgen-cli fills from its own text generator, not dbgen's: left out of the check.
GENERATED_TEXT: frozenset[str] = frozenset({"s_address", "s_comment", "c_address", "c_comment"})
#: Queries whose every row depends on generated text (Q13 counts orders by ``o_comment``).
TEXT_DEPENDENT: frozenset[str] = frozenset({"q13"})
#: Scales with reference answers.
ANSWER_SCALES: tuple[float, ...] = (0.01, 0.1, 1.0)


def queries() -> dict[str, str]:
    """The 22 queries by name (``q01`` .. ``q22``)."""
    folder = query_folder("tpch")
    return {p.stem: p.read_text() for p in sorted(folder.glob("q*.sql"))}


#: A table where a TPC-H query names it, with the alias it gives it if any (words that may
#: follow a table and are no alias left out).
_TABLE_AT = (
    r"(from|join|,)(\s+){name}\b"
    r"(\s+(?:as\s+)?(?!where\b|join\b|on\b|group\b|order\b)[a-z]\w*)?"
)


def read_inline(
    sql: str, folder: Path, spelling: str = "quoted", globs: Mapping[str, str] | None = None
) -> str:
    """TPC-H query ``sql`` reading each table's file in ``folder`` inline where it names the
    table (or the glob ``globs`` gives the table), spelled ``'path'`` (``quoted``) or
    ``read_parquet('path')``, with the table's name as its alias where the query gave none
    (decision 028)."""
    for name in TABLES:
        path = (globs or {}).get(name) or folder / f"{name}.parquet"
        read = f"'{path}'" if spelling == "quoted" else f"read_parquet('{path}')"

        def written(m: re.Match[str], read: str = read, name: str = name) -> str:
            return f"{m[1]}{m[2]}{read}{m[3] or f' AS {name}'}"

        sql = re.sub(_TABLE_AT.format(name=name), written, sql, flags=re.IGNORECASE)
    return sql


def generator(tool: str) -> str:
    """The path of the command ``tool``, beside this interpreter first, then on PATH."""
    beside = Path(sys.executable).parent / tool
    if beside.exists():
        return str(beside)
    found = shutil.which(tool)
    if found is None:
        raise SqlError(f"{tool} is not installed (pip install {tool})")
    return found


def check_scale(scale: float) -> float:
    """``scale`` as a float, or a named error when it is not a positive finite number."""
    if (
        isinstance(scale, bool)
        or not isinstance(scale, (int, float))
        or not math.isfinite(scale)
        or scale <= 0
    ):
        raise SqlError(f"scale must be a positive number, got {scale!r}")
    return float(scale)


def run_generator(command: list[str], out: Path, tables: Sequence[str]) -> Path:
    """Run a data generator writing ``<table>.parquet`` under ``out``; a failure or a missing
    table is a named error."""
    tool = Path(command[0]).name
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SqlError(f"{tool} failed ({done.returncode}): {done.stderr.strip()[:500]}")
    missing = [t for t in tables if not (out / f"{t}.parquet").exists()]
    if missing:
        raise SqlError(f"{tool} did not write {', '.join(missing)} under {out}")
    return out


def generate(scale: float, out: Path | str) -> Path:
    """Write TPC-H at ``scale`` as ``<table>.parquet`` files under ``out``; returns ``out``."""
    scale = check_scale(scale)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    command = [generator("tpchgen-cli"), "parquet", "-s", f"{scale:g}", f"--output-dir={out}"]
    return run_generator(command, out, TABLES)


def cache_folder(name: str, tables: Sequence[str], make: Callable[[Path], Path]) -> Path:
    """``data_root()/name``, made by ``make(folder)`` the first time (written beside it and
    renamed, so an interrupted run leaves no half folder).

    Processes that ask at once (pytest's workers on a fresh machine) take turns on a lock file
    beside the folder: the first makes it, the others find it whole. Without the lock two of
    them wrote into one ``.partial`` folder and one's rename failed under the other.
    """
    folder = data_root() / name

    def whole() -> bool:
        return all((folder / f"{t}.parquet").exists() for t in tables)

    if whole():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if whole():  # another process made it while this one waited
            return folder
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        make(partial)
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
    return folder


def cached(scale: float) -> Path:
    """TPC-H at ``scale`` in the cache folder, generated the first time it is asked for."""
    scale = check_scale(scale)
    return cache_folder(f"tpch-sf{scale:g}", TABLES, lambda out: generate(scale, out))


#: The keys :func:`partitioned` writes lineitem and orders under (few values, each a folder).
PARTITION_KEYS = {"lineitem": "l_returnflag, l_linestatus", "orders": "o_orderstatus"}


def partitioned(folder: Path, out: Path) -> dict[str, str]:
    """lineitem and orders of TPC-H ``folder`` written by ``COPY ... PARTITION_BY`` under
    ``out/<table>/`` (``PARTITION_KEYS`` as `key=value` folders; made once), as the globs that
    read them back with DuckDB's hive columns (decision 030)."""
    import duckdb

    globs = {}
    for table, keys in PARTITION_KEYS.items():
        written = out / table
        if not written.is_dir():
            out.mkdir(parents=True, exist_ok=True)
            staging = out / f".{table}-staging"
            duckdb.sql(
                f"COPY (FROM '{folder / f'{table}.parquet'}') TO '{staging}' "
                f"(FORMAT parquet, PARTITION_BY ({keys}), OVERWRITE_OR_IGNORE)"
            )
            staging.rename(written)
        globs[table] = f"{written}/**/*.parquet"
    return globs


def reference(name: str, scale: float) -> tuple[list[str], list[list[str]]]:
    """The reference answer to query ``name`` at ``scale``: its header and rows, as text; an
    empty field is NULL (Q17 at SF 0.01 averages no rows: its one row is an empty line)."""
    scale = check_scale(scale)
    if scale not in ANSWER_SCALES:
        known = ", ".join(f"{s:g}" for s in ANSWER_SCALES)
        raise SqlError(f"no TPC-H reference answers at scale {scale:g}; they exist at {known}")
    path = query_folder("tpch") / "answers" / f"sf{scale:g}" / f"{name}.csv"
    if not path.exists():
        raise SqlError(f"no TPC-H reference answer for {name!r} (expected q01 .. q22)")
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle, delimiter="|", quoting=csv.QUOTE_NONE))
    width = len(rows[0])
    return rows[0], [row or [""] * width for row in rows[1:]]


def compare_reference(table: pa.Table, name: str, scale: float) -> str | None:
    """None when ``table``, an answer to query ``name`` over TPC-H at ``scale``, holds the
    reference answer's values; otherwise what differs first.

    Columns are matched by position (the reference's header names Q18's sum ``sum``), each
    reference value read as the answer's Arrow type (a value that does not fit that type
    exactly, such as more decimal digits than the type's scale, is a difference), rows in order,
    floats within :data:`~dau_scheduler.compare.FLOAT_REL`. Columns in :data:`GENERATED_TEXT`
    are left out, and a query in :data:`TEXT_DEPENDENT` is not compared (None).
    """
    from dau_scheduler.compare import compare_tables

    if name in TEXT_DEPENDENT:
        return None
    header, rows = reference(name, scale)
    if len(header) != table.num_columns:
        return f"{len(header)} columns in the reference, {table.num_columns} in the answer"
    if len(rows) != table.num_rows:
        return f"row count {table.num_rows} != {len(rows)} in the reference"
    kept = [i for i, n in enumerate(table.schema.names) if n.lower() not in GENERATED_TEXT]
    columns = []
    for i in kept:
        field = table.schema.field(i)
        text = pa.array([row[i] or None for row in rows], pa.string())
        try:
            columns.append(text.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            return f"column {field.name!r}: the reference's values are not {field.type}: {exc}"
    names = [table.schema.field(i).name for i in kept]
    expected = pa.Table.from_arrays(columns, names=names)
    return compare_tables(table.select(kept), expected)


def check_queries(
    data: Path | str,
    device: str,
    named: Mapping[str, str],
    shares: Sequence[float | None],
    reference: Callable[[pa.Table, str], str | None] | None = None,
    **session_options: Any,
) -> dict[str, list[str]]:
    """Every query of ``named`` at every share (None: the default posture) on ``device``, in a
    Session over ``data`` with ``session_options``, against DuckDB's unsplit answer there and,
    where ``reference(table, name)`` is given, against that: query labels by outcome
    (``split``, ``refused``, ``fallback``, ``wrong`` (not DuckDB's unsplit answer),
    ``off_reference``, ``crashed``, and ``data`` for a query whose unsplit answer is itself off
    the reference). The TPC-H and TPC-DS checks are this over their queries."""
    import warnings

    from dau_scheduler.compare import compare_tables
    from dau_scheduler.session import Session

    kinds = ("split", "refused", "fallback", "wrong", "off_reference", "crashed", "data")
    outcomes: dict[str, list[str]] = {k: [] for k in kinds}

    def off(table: pa.Table, name: str) -> str | None:
        return None if reference is None else reference(table, name)

    from dau_scheduler.arms.devices import checker_device

    arm = checker_device(device)
    with Session(data, device=arm, **session_options) as session, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name, sql in named.items():
            expected = session.host.cursor().sql(sql).to_arrow_table()
            unsplit_off = off(expected, name)
            if unsplit_off is not None:
                outcomes["data"].append(f"{name}: {unsplit_off}")
            for share in shares:
                label = f"{name}@{'posture' if share is None else f'{share:g}'}"
                try:
                    result = session.sql(sql, device_share=share)
                except Exception as exc:  # noqa: BLE001 - reported, where DuckDB answered
                    outcomes["crashed"].append(f"{label}: {type(exc).__name__}: {exc}")
                    continue
                diff = compare_tables(result.table, expected)
                split_off = off(result.table, name)
                if diff is not None:
                    outcomes["wrong"].append(f"{label}: {diff}")
                elif split_off is not None:
                    outcomes["off_reference"].append(f"{label}: {split_off}")
                elif result.fallback is not None:
                    outcomes["fallback"].append(f"{label}: {result.fallback}")
                elif result.refusal is not None:
                    outcomes["refused"].append(f"{label}: {result.refusal}")
                else:
                    outcomes["split"].append(label)
    return outcomes


def check(
    data: Path | str,
    scale: float,
    device: str,
    shares: Sequence[float | None],
    **session_options: Any,
) -> dict[str, list[str]]:
    """The 22 queries (:func:`check_queries`) against DuckDB's unsplit answers over ``data``
    and the reference answers at ``scale`` (:func:`compare_reference`)."""
    scale = check_scale(scale)
    return check_queries(
        data,
        device,
        queries(),
        shares,
        lambda table, name: compare_reference(table, name, scale),
        **session_options,
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m dau_scheduler.tpch --scale 0.1 --device polars --shares 0.5,0.1,posture``."""
    import argparse

    parser = argparse.ArgumentParser(
        description="The 22 TPC-H queries split on a device, against DuckDB's unsplit answers "
        "and DuckDB's reference answers (exit 1 on a wrong or crashed query)."
    )
    parser.add_argument("--scale", type=float, default=0.01, help="0.01, 0.1 or 1")
    parser.add_argument("--data", help="a folder of TPC-H Parquet files (default: generated)")
    parser.add_argument(
        "--device", default="polars", help="a Session device, polars-separate or gpu-limited"
    )
    parser.add_argument(
        "--shares", default="0.5,0.1,posture", help="device shares; 'posture': the default one"
    )
    parser.add_argument("--mem-budget", type=float, help="MB: run under a memory budget")
    parser.add_argument("--strategy", choices=("in_memory", "chunked", "streamed"))
    parser.add_argument("--lazy", action="store_true", help="read the Parquet files lazily")
    parser.add_argument("--cluster", help="'local:N': the host's share on a dask LocalCluster")
    parser.add_argument("--verbose", action="store_true", help="list every refusal and fallback")
    args = parser.parse_args(argv)
    if args.scale not in ANSWER_SCALES:
        parser.error(f"--scale: reference answers exist at {', '.join(map(str, ANSWER_SCALES))}")
    data = Path(args.data) if args.data else cached(args.scale)
    shares = [None if s == "posture" else float(s) for s in args.shares.split(",")]
    options: dict[str, Any] = {"lazy": True} if args.lazy else {}
    if args.mem_budget is not None:
        options.update(mem_budget_mb=args.mem_budget, strategy=args.strategy)
    if args.cluster:
        options["cluster"] = args.cluster
    outcomes = check(data, args.scale, args.device, shares, **options)
    shown = ("wrong", "off_reference", "crashed", "data")
    for kind in (*shown, *(("fallback", "refused") if args.verbose else ())):
        for line in outcomes[kind]:
            print(f"{kind}: {line[:400]}")
    print(", ".join(f"{len(v)} {k}" for k, v in outcomes.items()))
    failed = outcomes["wrong"] or outcomes["off_reference"] or outcomes["crashed"]
    return 1 if failed or outcomes["data"] else 0


__all__ = [
    "ANSWER_SCALES",
    "GENERATED_TEXT",
    "PARTITION_KEYS",
    "TABLES",
    "TEXT_DEPENDENT",
    "cached",
    "partitioned",
    "check",
    "check_queries",
    "compare_reference",
    "generate",
    "main",
    "queries",
    "read_inline",
    "reference",
]

if __name__ == "__main__":
    raise SystemExit(main())
