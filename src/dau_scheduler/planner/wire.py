"""What the cluster backends (dask, Spark) share between the driver and their workers: partials
as Arrow IPC, the record of one shard's task, and the whole tables a worker keeps resident."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.ipc

from dau_scheduler.arms.duckdb import quote, read_parquet_sql
from dau_scheduler.tables import ParquetSource


class RowsUnreadable(RuntimeError):
    """On a worker: its DuckDB could not read the rows a task needs (an encrypted or corrupt
    column, a type its scan does not read, a file it cannot open). No partial ran; the driver
    answers unsplit, as where a chunk's rows cannot be read."""


def read_or_say(action: Any, *args: Any) -> Any:
    """``action(*args)``, a DuckDB error while it reads rows raised as :class:`RowsUnreadable`."""
    import duckdb

    try:
        return action(*args)
    except duckdb.Error as exc:
        raise RowsUnreadable(f"{type(exc).__name__}: {exc}") from None


@dataclass(frozen=True)
class WorkerRun:
    """One shard's task: the worker that ran it, its rows and seconds."""

    worker: str
    start: int
    stop: int
    seconds: float


@dataclass(frozen=True)
class ClusterPartial:
    """One run of a partial over a cluster: the partial, each shard's task, and the seconds the
    workers' tree fold took after the last shard ended. Returned, not kept on the backend, so
    queries from several threads each get their own."""

    table: pa.Table
    runs: tuple[WorkerRun, ...] = ()
    fold_seconds: float = 0.0


def to_ipc(table: pa.Table) -> bytes:
    """A partial as Arrow IPC bytes: what crosses between processes. Arrow tables pickled by
    dask arrive with buffers at any offset, which pyarrow's compute warns about."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue())


def from_ipc(data: bytes) -> pa.Table:
    """A partial from :func:`to_ipc`, its buffers aligned as each type wants them."""
    options = pa.ipc.IpcReadOptions(ensure_alignment=pa.ipc.Alignment.DataTypeSpecific)
    with pa.ipc.open_stream(pa.py_buffer(data), options=options) as reader:
        return reader.read_all()


def whole_specs(
    specs: dict[str, tuple[Any, ...]], sql: str, split_table: str, memo: dict[str, dict[str, int]]
) -> dict[str, tuple[Any, ...]]:
    """The tables of ``specs`` a worker must hold whole for the query ``sql``: every table it
    reads, and the split table too when it is read more than once (a subquery over all of it).
    ``memo`` keeps each query's table reads (parsing the SQL costs ~1 ms)."""
    from dau_scheduler.planner.placement import _reads

    reads = memo.get(sql)
    if reads is None:
        reads = memo[sql] = _reads(sql)
    return {
        n: spec for n, spec in specs.items() if n in reads and (n != split_table or reads[n] > 1)
    }


def hold_whole(con: Any, whole: dict[str, tuple[Any, ...]], held: set[str]) -> None:
    """On a worker: each Parquet table of ``whole`` (``("parquet", files)``) read into ``con``
    once, as a table of its name; ``held`` names those already there."""
    for name, spec in whole.items():
        if spec[0] == "parquet" and name not in held:
            con.execute(f"CREATE TABLE {quote(name)} AS SELECT * FROM {read_parquet_sql(spec[1])}")
            held.add(name)


def hold_rows(con: Any, name: str, source: ParquetSource, start: int, stop: int) -> None:
    """On a worker: rows ``[start, stop)`` of ``source`` read into ``con`` as table ``name``
    by DuckDB's own scan, as the host reads them (pyarrow reads some types otherwise: a
    TIMESTAMP(MILLIS) as TIMESTAMP_MS, an INTERVAL as raw bytes); by pyarrow, conformed,
    only where a column named ``file_row_number`` keeps DuckDB from
    numbering the rows."""
    scan = source.range_sql(start, stop)
    if scan is not None:
        con.execute(f"CREATE TABLE {quote(name)} AS {scan}")
        return
    cursor = con.cursor()
    try:
        cursor.register("__dau_read", source.rows(None, start, stop))
        cursor.execute(f"CREATE TABLE {quote(name)} AS SELECT * FROM __dau_read")
    finally:
        cursor.close()


__all__ = [
    "ClusterPartial",
    "RowsUnreadable",
    "WorkerRun",
    "from_ipc",
    "hold_rows",
    "hold_whole",
    "read_or_say",
    "to_ipc",
    "whole_specs",
]
