"""A sqllogictest runner that uses DuckDB as the oracle for split queries.

    python -m dau_scheduler.slt PATH... [--device duckdb|polars|polars-separate|...]
                                        [--share 0.5 | --posture P] [--engine NAME]
                                        [--no-settings] [--json FILE] [--verbose]
                                        [--lazy | --mem-budget MB [--strategy S]
                                         [--chunks K]] [--cluster SPEC | --arrow]

Every ``.test`` file under the paths (with ``--slow``, every ``.test_slow`` one too) is replayed
into a fresh DuckDB connection: its statements run as written; each query DuckDB answers is also
run through ``Session(con)`` at device share ``--share`` and compared with DuckDB's own answer
(names, Arrow types, rows; doubles within 1e-9 relative; as multisets unless the query has a
top-level ORDER BY). Each query is reported as:

- ``equal``: split, and the same answer;
- ``refused``: not split (refused by name, or the device arm refused), answered unsplit, the same;
- ``wrong``: a different answer (the worst outcome);
- ``crashed``: an error where DuckDB answered (a defect too);
- ``answered``: an answer where DuckDB raises (its error is its answer: a defect too);
- ``raised``: DuckDB raises on the query (a ``statement error`` too), and so does the Session;
- ``skipped``: not a plain SELECT, a volatile call, or DuckDB's result not Arrow's;
- ``unstable``: answered by DuckDB's own plan (refused and answered unsplit, or a posture that
  gave the device no rows: ``SplitExecution.unsplit``), and DuckDB's own answers differ
  between runs (a rerun differs from the first, or gives the Session's); or split, and one of
  DuckDB's own answers in more runs is the split's (a DISTINCT ON over ties that DuckDB's
  final query computes over a view of several files);
- ``cancelled``: split, its floats beyond the tolerance from DuckDB's but no further from the
  compensated sums than DuckDB's own (a sum that cancels: ``slt_order.summed_apart``).

A file's text is made as DuckDB's runner makes it (``slt_text``: loops unrolled, ``{TEST_DIR}``
a scratch folder of its own, ``load`` and ``restart`` of a database file there); files that
loop past ``slt_text.MAX_LINES`` lines, load a database read-write elsewhere or one that does
not open, ``reconnect``, or ``require`` what this DuckDB lacks (an extension it has not
loaded, a build option, a memory size) are left out whole;
``--no-settings`` leaves out their SET/PRAGMA statements. The file's own expected results are not
read: DuckDB's answer on the same connection is the oracle.

``--lazy`` and ``--mem-budget`` run the Session's lazy and memory-budget paths instead of the
resident one; ``--strategy streamed --chunks 6`` cuts a split table into chunks of a sixth of the
file's largest table, so the chunks' partials are folded again and again
(``CompiledSplit.refold_sql``).

``--cluster local:N`` (or a dask scheduler's address, or ``spark:local[N]``) runs the host's
share on that cluster, and ``--arrow`` on none: each Session is given Arrow copies of the file's
tables, and the oracle is DuckDB over the same copies (``slt_copies``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from dau_scheduler.function_catalog import called_names, function_kinds, rows_of
from dau_scheduler.guards import VOLATILE, is_query
from dau_scheduler.rewrite.volatility import NONDETERMINISTIC
from dau_scheduler.slt_order import (
    among_duckdbs,
    only_ties,
    ordered,
    spelled_apart,
    summed_apart,
    unstable,
)
from dau_scheduler.slt_text import Record, keywords, loaded_extensions, parse

#: A statement that may create a macro (the file's volatile macros are read again after it).
_MACRO = re.compile(r"\b(macro|function)\b", re.IGNORECASE)
#: A sample draws other rows each run unless seeded (the files seed it with a directive).
_SAMPLE = re.compile(r"\b(using\s+sample|tablesample)\b", re.IGNORECASE)
OUTCOMES = (
    "equal",
    "refused",
    "wrong",
    "crashed",
    "answered",
    "raised",
    "skipped",
    "unstable",
    "cancelled",
)
#: The outcomes that are defects.
DEFECTS = ("wrong", "crashed", "answered")
#: The runner's own options, beside the Session's (``lazy``, ``mem_budget_mb``, ``strategy``).
_RUNNER_OPTIONS = frozenset(
    {"chunks", "order", "keep", "engine", "posture", "cluster", "arrow", "show_refused"}
)
_SETTING = re.compile(r"^\s*(SET|RESET|PRAGMA)\b", re.IGNORECASE)


@dataclass
class FileReport:
    path: str
    outcomes: Counter[str] = field(default_factory=Counter)
    details: list[dict[str, Any]] = field(default_factory=list)
    left_out: str | None = None
    #: refusal reason (names and numbers kept out) -> how many queries it refused
    refusals: Counter[str] = field(default_factory=Counter)


def run_file(
    path: Path,
    device: Any,
    share: float,
    settings: bool,
    options: dict[str, Any] | None = None,
) -> FileReport:
    """Replay one test file; a Session over the connection is reused until a statement runs
    (across statements too with ``keep``: the connection then changes under it). ``options``
    are the Session's own (``lazy``, ``mem_budget_mb``, ``strategy``), and ``chunks``: under a
    budget, chunks of a K-th of the file's largest table; ``order``: ``flow`` (see
    ``--order``)."""
    report = FileReport(str(path))
    records, why = parse(
        path.read_text(errors="replace"),
        loaded_extensions(),
        (options or {}).get("engine", "duckdb"),
    )
    if why is not None:
        report.left_out = why
        return report
    scratch = tempfile.mkdtemp(prefix="dau-slt-")  # the file's {TEST_DIR}
    for record in records:
        record.sql = keywords(record.sql, scratch, str(path))
        if record.kind == "load" and not _writes_inside(record, scratch):
            shutil.rmtree(scratch, ignore_errors=True)
            report.left_out = "loads a database outside its test folder read-write"
            return report
    con = duckdb.connect(":memory:")
    session: Any = None
    # With a cluster (or --arrow): Arrow copies of the tables, and an oracle over them.
    arrow = (options or {}).get("cluster") is not None or bool((options or {}).get("arrow"))
    copies: Any = None
    volatile: frozenset[str] = frozenset()  # the file's macros that call nextval, random, ...
    database = (":memory:", False)  # what ``load`` opened, which ``restart`` opens again
    try:
        for record in records:
            if record.kind in ("load", "restart"):
                for held in (session, copies):
                    if held is not None:
                        held.close()
                session = copies = None
                con.close()
                database = _database(record) if record.kind == "load" else database
                try:
                    con = duckdb.connect(database[0], read_only=database[1])
                except duckdb.Error as exc:  # (a file of an older storage, or one not here)
                    con = duckdb.connect(":memory:")
                    report.left_out = f"its database does not open: {str(exc).splitlines()[0]}"
                    break
                continue
            if record.kind == "statement":
                if session is not None and not (options or {}).get("keep"):
                    session.close()
                    session = None
                if copies is not None:
                    copies.close()
                    copies = None
                if not settings and _SETTING.match(record.sql):
                    continue
                # Expected errors, and statements this build rejects, alike: a SELECT among
                # them is asked of the Session too, which must raise as DuckDB did.
                try:
                    # Run to its end: a statement's unfinished result (a SELECT run as a
                    # statement) holds the connection, and the next query on it is refused.
                    con.execute(record.sql).complete()
                except duckdb.Error:
                    if not _is_query(record.sql) or _moved_on(record.sql, con, volatile):
                        continue
                    expected = None
                else:
                    if _MACRO.search(record.sql):
                        volatile = function_kinds(rows_of(con.cursor()), NONDETERMINISTIC).volatile
                    continue
            elif not _is_query(record.sql) or _moved_on(record.sql, con, volatile):
                report.outcomes["skipped"] += 1
                continue
            else:
                try:
                    expected = con.sql(record.sql).to_arrow_table()
                except duckdb.Error:
                    expected = None  # DuckDB's error is its answer: the Session must raise too
                except (AttributeError, ValueError):
                    report.outcomes["skipped"] += 1
                    continue
            if arrow:
                from dau_scheduler.slt_copies import ArrowCopies

                copies = copies or ArrowCopies(con)
                raised = expected is None
                expected = None if raised else copies.answer(record.sql)
                if (raised and not copies.raises(record.sql)) or (not raised and expected is None):
                    report.outcomes["skipped"] += 1
                    continue
            session, outcome, note = _one(
                con if copies is None else copies.tables,
                con if copies is None else copies.oracle,
                session,
                record,
                expected,
                device,
                share,
                options or {},
            )
            report.outcomes[outcome] += 1
            if outcome == "refused" and note:
                report.refusals[reason_kind(note)] += 1
            shown = (options or {}).get("show_refused")
            if outcome in DEFECTS or (outcome == "refused" and shown and shown in (note or "")):
                report.details.append(
                    {"line": record.line, "outcome": outcome, "sql": record.sql, "why": note}
                )
    finally:
        if session is not None:
            session.close()
        if copies is not None:
            copies.close()
        con.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return report


def _writes_inside(load: Record, scratch: str) -> bool:
    """Whether a ``load`` is read-only or names a file in the test's own folder: DuckDB's
    runner deletes what a read-write load names first."""
    words = load.sql.split()
    if not words or words[1:2] == ["readonly"]:
        return True
    return Path(words[0]).resolve().is_relative_to(Path(scratch).resolve())


def _database(load: Record) -> tuple[str, bool]:
    """The database a ``load`` opens (a new file for a read-write one) and whether read-only."""
    words = load.sql.split()
    if not words:
        return ":memory:", False
    if words[1:2] == ["readonly"]:
        return words[0], True
    for stale in (Path(words[0]), Path(words[0] + ".wal")):
        stale.unlink(missing_ok=True)
    return words[0], False


def _moved_on(sql: str, con: duckdb.DuckDBPyConnection, volatile: frozenset[str]) -> bool:
    """A sequence, random value or sample (in a macro too): DuckDB's own run already moved it
    on. Under logging, DuckDB's own run wrote to the log a second run reads (test/sql/logging)."""
    return bool(
        VOLATILE.search(sql) or _SAMPLE.search(sql) or called_names(sql) & volatile or _logging(con)
    )


def _logging(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether DuckDB logs the connection's statements (``enable_logging``, ``log_query_path``)."""
    try:  # fetched to the end: DuckDB 2.0 holds the connection for an unfinished result
        rows = con.execute(
            "SELECT current_setting('enable_logging') OR current_setting('log_query_path') <> ''"
        ).fetchall()
    except duckdb.Error:  # an aborted transaction: the query's own run names the error
        return False
    return bool(rows and rows[0][0])


def _is_query(sql: str) -> bool:
    """A SELECT (or a PIVOT query DuckDB expands), not DML with RETURNING (``WITH ... INSERT``
    is a query record in the files, and a Session rightly rejects it)."""
    if not sql.lstrip().lower().startswith(("select", "with", "from", "(", "pivot", "unpivot")):
        return False
    try:
        kind = duckdb.extract_statements(sql)[0].type
    except (duckdb.Error, IndexError):
        return True  # DuckDB's own run names the error: skipped there
    return is_query(sql, kind)


def _one(
    con: duckdb.DuckDBPyConnection | dict[str, Any],
    oracle: duckdb.DuckDBPyConnection,
    session: Any,
    record: Record,
    expected: Any,
    device: Any,
    share: float,
    options: dict[str, Any],
) -> tuple[Any, str, str | None]:
    """``(session, outcome, why)`` for one query over ``con`` (the Session's source: the
    connection, or Arrow copies of its tables); the session is built here when None.
    ``expected`` None: ``oracle`` (DuckDB over the same rows) raised on it, and so must the
    Session."""
    from dau_scheduler.arms.devices import checker_device
    from dau_scheduler.compare import compare_tables
    from dau_scheduler.session import Session

    try:
        if session is None:
            chunks = options.get("chunks")
            session = Session(
                con,
                device=checker_device(device),
                cluster=options.get("cluster"),
                **{k: v for k, v in options.items() if k not in _RUNNER_OPTIONS},
            )
            if chunks:  # the file's largest table in about that many chunks, so chunks fold
                most = max(session.row_counts.values(), default=1)
                session.chunk_rows = max(1, -(-most // chunks))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            posture = options.get("posture")
            how: dict[str, Any] = {"posture": posture} if posture else {"device_share": share}
            if posture == "collaborative":  # both arms' profiles, measured as each query comes
                how["profile"] = "auto"
            result = session.sql(record.sql, **how)
    except Exception as exc:  # noqa: BLE001 - every failure where DuckDB answered is reported
        if expected is None:
            return session, "raised", None
        lines = str(exc).strip().splitlines()
        return session, "crashed", f"{type(exc).__name__}: {lines[0] if lines else ''}"
    if expected is None:
        split = "split" if result.execution is not None else "unsplit"
        return session, "answered", f"{result.table.num_rows} rows ({split}) where DuckDB raises"
    in_order = record.sort in (None, "nosort") and ordered(
        record.sql, flow=options.get("order") == "flow"
    )
    diff = compare_tables(result.table, expected, ordered=in_order)
    if diff is not None and in_order and only_ties(record.sql, result.table, expected):
        diff = None  # rows whose ORDER BY keys tie, in another order: DuckDB's is not defined
    outcome = "equal" if diff is None else "wrong"
    if diff is None and result.execution is None:
        outcome = "refused"
    own_plan = result.execution is None or result.execution.unsplit  # (DuckDB's plan ran)
    if (
        diff is not None
        and own_plan
        and (
            spelled_apart(result.table, expected, in_order)
            or unstable(oracle, record.sql, expected, in_order=in_order)
            # DuckDB's own plan gave this answer; a rerun that gives it again says so where the
            # reruns above all agreed with the first (a mode of tied DISTINCT values, once).
            or among_duckdbs(oracle, record.sql, result.table, in_order)
        )
    ):
        return session, "unstable", f"answered unsplit; DuckDB's own answers differ: {diff}"
    ran_split = result.execution is not None
    if (
        diff is not None
        and ran_split
        and summed_apart(oracle, record.sql, result.table, expected, in_order)
    ):
        return session, "cancelled", f"a sum that cancels, added in another order: {diff}"
    if diff is not None and ran_split and among_duckdbs(oracle, record.sql, result.table, in_order):
        why = f"split; DuckDB's own answers differ and one of them is the split's: {diff}"
        return session, "unstable", why
    return session, outcome, diff or result.refusal or result.fallback


#: Quoted names and numbers, but not the aggregate kind a refusal names.
_NAMES = re.compile(r"""(?<!aggregate )'[^'\s]*'|"[^"]*"|`[^`]*`|\b\d+(\.\d+)?\b""")


def reason_kind(refusal: str) -> str:
    """A refusal with its names, quoted SQL and numbers blanked: the kind of reason, so that
    ``--reasons`` can count which ones cost the most splits."""
    return _NAMES.sub("_", refusal.splitlines()[0])[:120]


def test_files(paths: list[Path], slow: bool = False) -> Iterator[Path]:
    """The ``.test`` files under the paths (and ``.test_slow`` ones with ``slow``); a file named
    on its own is run whatever its suffix says of its speed."""
    suffixes = (".test", ".test_slow") if slow else (".test",)
    for path in paths:
        if path.is_dir():
            found = (p for s in suffixes for p in path.rglob("*" + s))
            yield from sorted(p for p in found if p.is_file())
        elif path.suffix in (".test", ".test_slow"):
            yield path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument(
        "--device",
        default="duckdb",
        help="duckdb, polars, cudf, none, polars-separate (the Polars arm on hardware of "
        "its own, so postures treat it as the GPU: adaptive takes morsels from both ends), or "
        "gpu-limited (the Polars arm on the CPU, translating as the cudf arm does)",
    )
    parser.add_argument("--share", type=float, default=0.5)
    parser.add_argument(
        "--posture",
        choices=("cpu", "offload", "collaborative", "adaptive"),
        help="let this posture choose the split instead of --share (collaborative measures "
        "both arms' profiles for each query as it comes)",
    )
    parser.add_argument("--no-settings", dest="settings", action="store_false")
    parser.add_argument("--lazy", action="store_true", help="Session(lazy=True)")
    parser.add_argument("--mem-budget", type=float, metavar="MB", help="Session(mem_budget_mb=)")
    parser.add_argument("--strategy", choices=("in_memory", "chunked", "streamed"))
    parser.add_argument(
        "--chunks", type=int, metavar="K", help="cut each file's largest table into K chunks"
    )
    parser.add_argument(
        "--order",
        choices=("top", "flow"),
        default="top",
        help="compare rows in order under a top-level ORDER BY (top), or also where the order "
        "flows from an ordered block or a table's insertion order (flow)",
    )
    parser.add_argument(
        "--keep-session",
        action="store_true",
        help="keep one Session per file across statements (the connection changes under it)",
    )
    parser.add_argument(
        "--slow", action="store_true", help="also run the folders' .test_slow files"
    )
    parser.add_argument(
        "--engine",
        default="duckdb",
        help="read the files' skipif/onlyif lines as this engine's run would (SQLite's files "
        "halt for other engines before their DISTINCT and IN evidence: --engine sqlite); "
        "DuckDB stays the oracle",
    )
    parser.add_argument(
        "--cluster",
        metavar="SPEC",
        help="run the host's share on a cluster (local:N or a dask scheduler's address, or "
        "spark:local[N]) over Arrow copies of each file's tables, against DuckDB over the "
        "same copies",
    )
    parser.add_argument(
        "--arrow",
        action="store_true",
        help="give each Session Arrow copies of the file's tables (as --cluster does), "
        "against DuckDB over the same copies",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument("--verbose", action="store_true", help="print every wrong and crash")
    parser.add_argument(
        "--reasons", type=int, default=0, metavar="N", help="print the N commonest refusals"
    )
    parser.add_argument(
        "--show-refused",
        metavar="TEXT",
        help="with --verbose, also print the refused queries whose reason holds TEXT",
    )
    args = parser.parse_args(argv)
    if args.chunks is not None and args.mem_budget is None:
        parser.error("--chunks needs --mem-budget (chunks are cut under a memory budget)")
    if (args.cluster or args.arrow) and (args.mem_budget is not None or args.keep_session):
        parser.error("--cluster and --arrow take neither --mem-budget nor --keep-session")
    device = None if args.device == "none" else args.device
    options: dict[str, Any] = {}
    if args.lazy:
        options["lazy"] = True
    if args.mem_budget is not None:
        options.update(mem_budget_mb=args.mem_budget, strategy=args.strategy)
        options["chunks"] = args.chunks
    if args.order == "flow":
        options["order"] = "flow"
    if args.keep_session:
        options["keep"] = True
    if args.engine != "duckdb":
        options["engine"] = args.engine
    if args.posture:
        options["posture"] = args.posture
    if args.arrow:
        options["arrow"] = True
    if args.show_refused:
        options["show_refused"] = args.show_refused
    totals: Counter[str] = Counter()
    reports = []
    left_out = 0
    with contextlib.ExitStack() as stack:
        if args.cluster:  # one cluster for the whole run, each file's Session a client of it
            from dau_scheduler.planner import clusters

            connection = clusters.connect(args.cluster)
            stack.callback(connection.close)
            # what a Session takes: the dask Client, or the SparkSession
            options["cluster"] = getattr(connection, "client", None) or connection.spark
        for path in test_files(args.paths, args.slow):
            report = run_file(path, device, args.share, args.settings, options)
            reports.append(report)
            if report.left_out:
                left_out += 1
                continue
            totals.update(report.outcomes)
            if sum(report.outcomes[o] for o in DEFECTS) or args.verbose:
                print(f"{path}: {dict(report.outcomes)}", flush=True)
            if args.verbose:
                for detail in report.details:
                    print(f"  line {detail['line']} {detail['outcome']}: {detail['why']}")
                    print("    " + detail["sql"].replace("\n", "\n    "))
    files = len(reports) - left_out
    reasons: Counter[str] = Counter()
    for report in reports:
        reasons.update(report.refusals)
    for reason, count in reasons.most_common(args.reasons):
        print(f"{count:6d}  {reason}")
    print(
        f"{files} files run ({left_out} left out): "
        + ", ".join(f"{totals[o]} {o}" for o in OUTCOMES)
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "totals": dict(totals),
                    "files": [
                        {
                            "path": r.path,
                            "left_out": r.left_out,
                            "outcomes": dict(r.outcomes),
                            "details": r.details,
                            "refusals": dict(r.refusals),
                        }
                        for r in reports
                    ],
                },
                indent=1,
                default=str,
            )
        )
    return 1 if any(totals[o] for o in DEFECTS) else 0


if __name__ == "__main__":
    sys.exit(main())
