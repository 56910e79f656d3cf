"""What the ``dau`` command prints: an answer as a table, CSV or JSON (values Python cannot
hold written as DuckDB's text of them), and the split report."""

from __future__ import annotations

import json
import sys

import pyarrow as pa
from rich.console import Console
from rich.table import Table

from dau_scheduler import temporal
from dau_scheduler.sql_result import SqlResult

out = Console()


def displayable(table: pa.Table) -> pa.Table:
    """``table`` with each column Python cannot hold (DuckDB's ``infinity`` dates and
    timestamps, years past 9999, a TIME of 24:00:00) as DuckDB's own text of it: ``to_pylist``
    raised, and pyarrow's CSV writer wrote ``<value out of range: 2147483647>``."""
    import duckdb

    for index, column in enumerate(table.columns):
        if python_holds(column):
            continue
        with duckdb.connect() as con:
            con.register("shown", pa.table({"c": column}))
            text = con.sql("SELECT CAST(c AS VARCHAR) AS c FROM shown").to_arrow_table()
            table = table.set_column(index, table.field(index).name, text.column(0))
    return table


def python_holds(column: pa.ChunkedArray) -> bool:
    """Whether Python's values of ``column`` are its values: pyarrow raises on a date past
    9999 or in a time zone pytz does not know (ICU's ``ECT``: a KeyError), and reads DuckDB's
    TIME '24:00:00' as 00:00:00 without a word."""
    if pa.types.is_time(column.type) and len(column) > column.null_count:
        import pyarrow.compute as pc

        return bool(pc.max(temporal.integers(column)).as_py() < temporal.day(column.type))
    try:
        column.to_pylist()
    except (OverflowError, ValueError, LookupError, pa.ArrowException):
        return False
    return True


def print_table(table: pa.Table, fmt: str) -> None:
    table = displayable(table)
    if fmt == "csv":
        import pyarrow.csv as pacsv

        sink = pa.BufferOutputStream()
        pacsv.write_csv(table, sink)
        sys.stdout.write(sink.getvalue().to_pybytes().decode())
    elif fmt == "json":
        sys.stdout.write(json.dumps(table.to_pylist(), default=str, indent=1) + "\n")
    else:
        view = Table(*table.schema.names, show_lines=False)
        for row in table.to_pylist()[:200]:
            view.add_row(*("NULL" if v is None else str(v) for v in row.values()))
        out.print(view)
        if table.num_rows > 200:
            out.print(f"... {table.num_rows - 200} more rows")


def split_report(result: SqlResult) -> Table:
    """The split report: the split table, the decision and why, rows and seconds per arm,
    overlap, merge, refusal."""
    report = Table("", "", title="split report", show_header=False)
    plan, ex = result.plan, result.execution
    report.add_row("split table", str(plan.split_table) if plan.split_table else "none")
    if result.split is not None:
        report.add_row("decision", result.split.rationale)
    if ex is not None:
        report.add_row("posture", ex.posture)
        report.add_row("device share", f"{ex.device_share:.4f}")
        report.add_row("device rows / s", f"{ex.device_rows} / {ex.device_seconds:.4f}")
        report.add_row("host rows / s", f"{ex.host_rows} / {ex.host_seconds:.4f}")
        report.add_row("overlap s", f"{ex.overlap_seconds:.4f}")
        report.add_row("merge s", f"{ex.merge_seconds:.4f}")
        report.add_row("wall s", f"{ex.wall_seconds:.4f}")
        for worker, rows, seconds in ex.workers:
            report.add_row(f"worker {worker}", f"{rows} rows / {seconds:.4f} s")
        if ex.workers:
            report.add_row("worker fold s", f"{ex.worker_fold_seconds:.4f}")
    if result.strategy is not None:
        memory = result.strategy
        report.add_row(
            "strategy", f"{memory.strategy} ({memory.chunks} chunks of {memory.chunk_rows} rows)"
        )
    if result.refusal:
        report.add_row("refusal", result.refusal)
    if result.fallback:
        report.add_row("fallback", result.fallback)
    return report


__all__ = ["displayable", "out", "print_table", "python_holds", "split_report"]
