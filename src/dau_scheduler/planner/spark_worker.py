"""What runs in Spark's Python workers for the Spark backend (``planner.spark_backend``): each
worker's DuckDB, the split table's ranges it reads from Parquet and keeps, and the
``mapInArrow`` functions that run a query's partial over a task's rows and return it with one
row of task statistics. Pickled to the workers by reference: they import this module."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from dau_scheduler.arms.base import cast_partial, fresh_buffers
from dau_scheduler.arms.duckdb import quote
from dau_scheduler.planner.wire import (
    RowsUnreadable,
    from_ipc,
    hold_rows,
    hold_whole,
    read_or_say,
)
from dau_scheduler.tables import ParquetSource

#: The column numbering an in-memory split table's rows on Spark.
ROW = "__dau_row"

#: The column of a partial's rows on the wire that carries a worker's error (null on every
#: other row). A DuckDB error is deterministic: raised, Spark would run the task three more
#: times before failing the query; returned as a row, the driver reads it at once.
ERROR = "__dau_error"

#: Per handle, in each Python worker: its DuckDB and the whole tables read into it.
_RESIDENT: dict[str, tuple[Any, set[str]]] = {}


def _worker_db(handle: str) -> tuple[Any, set[str]]:
    import duckdb

    found = _RESIDENT.get(handle)
    if found is None:
        con = duckdb.connect()
        con.execute("SET preserve_insertion_order = true")
        con.execute("SET enable_progress_bar = false")  # none in the executors' logs
        con.execute("SET threads = 1")  # one Spark slot, one thread
        found = _RESIDENT[handle] = (con, set())
    return found


def _hold_range(
    con: Any, held: set[str], table: str, files: tuple[str, ...], a: int, b: int
) -> str:
    """On a worker: rows ``[a, b)`` of the split table's Parquet ``files`` read into ``con``
    once, as a table of their own; its name."""
    name = f"__dau_range_{table}_{a}_{b}"
    if name not in held:
        read_or_say(hold_rows, con, name, ParquetSource(tuple(Path(f) for f in files)), a, b)
        held.add(name)
    return name


def _drop_ranges(con: Any, held: set[str], table: str) -> None:
    """On a worker: the ranges of ``table`` dropped once the whole table is held."""
    prefix = f"__dau_range_{table}_"
    for name in [n for n in held if n.startswith(prefix)]:
        con.execute(f"DROP TABLE IF EXISTS {quote(name)}")
        held.discard(name)


#: The most bytes of partial one task hands back to Spark's JVM (as Arrow). Past it the task
#: returns a :class:`PartialTooLarge` error instead: a local Spark's executors share the
#: driver's heap, and a partial of 50M rows (a cross product the query filters only above a
#: UNION, DuckDB's test_filter_pushdown_large.test) exhausted it, which killed the JVM and with
#: it every later query of the Session.
MOST_TASK_BYTES = 128 * 2**20


class PartialTooLarge(RuntimeError):
    """A task's partial is more bytes than it may hand back (:data:`MOST_TASK_BYTES`)."""


@dataclass(frozen=True)
class Task:
    """What every task of one query's partial needs in its Python worker (pickled to it)."""

    handle: str
    whole: dict[str, tuple[Any, ...]]
    partial_sql: str
    placeholder: str
    schema: pa.Schema
    delay: float
    most_bytes: int = MOST_TASK_BYTES

    def db(self) -> tuple[Any, set[str]]:
        """This worker's DuckDB with the whole tables the query reads, and what it holds."""
        con, held = _worker_db(self.handle)
        read_or_say(hold_whole, con, self.whole, held)
        return con, held

    def partial(
        self, con: Any, rows_sql: str, began: float, rows: int, register: pa.Table | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The partial over ``rows_sql`` (``register``: Arrow rows it names), then one row of
        task statistics."""
        cursor = con.cursor()
        try:
            for name, spec in self.whole.items():
                if spec[0] == "broadcast":
                    cursor.register(name, from_ipc(spec[1].value))
            if register is not None:
                cursor.register(rows_sql, register)
            sql = re.sub(rf"\b{self.placeholder}\b", lambda _m: rows_sql, self.partial_sql)
            partial = cast_partial(self._bounded(cursor.sql(sql)), self.schema, "spark")
        finally:
            cursor.close()
        meta = pa.table(
            {
                "__dau_worker": [os.getpid()],
                "__dau_rows": [rows],
                "__dau_seconds": [time.perf_counter() - began],
            }
        )
        yield from _with_meta(partial, meta).to_batches()

    def _bounded(self, relation: Any) -> pa.Table:
        """The relation's rows as Arrow, read batch by batch; :class:`PartialTooLarge` as soon
        as they pass ``most_bytes``."""
        reader = relation.fetch_arrow_reader(batch_size=1 << 16)
        batches: list[pa.RecordBatch] = []
        held = 0
        for batch in reader:
            held += batch.nbytes
            if held > self.most_bytes:
                raise PartialTooLarge(
                    f"the partial of one task passed {self.most_bytes} bytes "
                    f"({len(batches) * (1 << 16) + batch.num_rows} rows read so far)"
                )
            batches.append(batch)
        return pa.Table.from_batches(batches, schema=reader.schema)


def range_partial_fn(task: Task, split: tuple[str, tuple[str, ...], int, int]) -> Any:
    """mapInArrow function over range descriptors ``(start, stop)``: for each, the partial over
    the rows it shares with the query's range ``split = (table, files, start, stop)``, from the
    range's rows held in this worker's DuckDB (read from Parquet at its first query here), or
    from the whole table when a query that reads it whole has put it there."""
    table, files, start, stop = split

    @_saying(task.schema)
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        slept = False
        for batch in batches:
            for a, b in zip(
                batch.column("start").to_pylist(), batch.column("stop").to_pylist(), strict=True
            ):
                lo, hi = max(a, start), min(b, stop)
                if hi <= lo:
                    continue
                if task.delay > 0 and not slept:
                    time.sleep(task.delay)
                    slept = True
                began = time.perf_counter()
                con, held = task.db()
                if table in held:  # the whole table is here (a query read it whole): no copy
                    _drop_ranges(con, held, table)
                    name, first = table, 0
                else:
                    name, first = _hold_range(con, held, table, files, a, b), a
                rows = (
                    f"(SELECT * FROM {quote(name)} "
                    f"WHERE rowid >= {lo - first} AND rowid < {hi - first})"
                )
                yield from task.partial(con, rows, began, hi - lo)

    return run


def partial_fn(task: Task, types: pa.Schema) -> Any:
    """mapInArrow function: the partial over this partition's rows (those of the query's
    range: Spark filters them on ``__dau_row`` before they reach the worker), cast back to
    the table's own ``types`` (Spark holds a TIMESTAMP_MS as microseconds, a fixed-size array
    as a list: DuckDB's ``typeof`` and casts would see other types)."""

    @_saying(task.schema)
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        got = list(batches)
        if not got:
            return
        rows = pa.Table.from_batches(got)  # Spark kept only the rows in range
        if not rows.num_rows:
            return
        if task.delay > 0:
            time.sleep(task.delay)
        began = time.perf_counter()
        con, _ = task.db()
        if rows.num_columns == 1:
            # The query reads no column of the table (count(*)): only the row numbers crossed,
            # and DuckDB cannot register a table of no columns, so they stay.
            shard = rows
        else:
            shard = rows.drop_columns([ROW])
            own = pa.schema([types.field(name) for name in shard.column_names])
            shard = fresh_buffers(shard, own).cast(own)
        yield from task.partial(con, "__dau_shard", began, rows.num_rows, shard)

    return run


#: A mapInArrow function: a task's batches in, its partial's batches out.
Run = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def _saying(schema: pa.Schema) -> Callable[[Run], Run]:
    """A mapInArrow function that returns its DuckDB error (or its reader's) as one row of
    :data:`ERROR` instead of raising it, so Spark does not retry what fails alike each time."""

    def wrap(run: Run) -> Run:
        def said(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            import duckdb

            try:
                yield from run(batches)
            except (duckdb.Error, RowsUnreadable, PartialTooLarge) as exc:
                text = (
                    f"duckdb.{type(exc).__name__}: {exc}"
                    if isinstance(exc, duckdb.Error)
                    else f"{type(exc).__name__}: {exc}"
                )
                error = pa.table({ERROR: [text]})
                yield from _with_meta(schema.empty_table(), error).to_batches()

        return said

    return wrap


def _with_meta(partial: pa.Table, meta: pa.Table) -> pa.Table:
    """The partial's rows, then one row of task statistics (or of a worker's error), in one
    table: statistics columns null on partial rows, partial columns null on the statistics
    row; every wire column the row does not carry is null."""
    n = partial.num_rows
    columns = {}
    for field in partial.schema:
        columns[field.name] = pa.concat_arrays(
            [partial.column(field.name).combine_chunks(), pa.nulls(1, field.type)]
        )
    for field in META:
        own = meta.column(field.name).combine_chunks() if field.name in meta.column_names else None
        columns[field.name] = pa.concat_arrays(
            [pa.nulls(n, field.type), own if own is not None else pa.nulls(1, field.type)]
        )
    return pa.table(columns)


#: The columns after a partial's on the wire: task statistics, then a worker's error.
META = pa.schema(
    [
        pa.field("__dau_worker", pa.int64()),
        pa.field("__dau_rows", pa.int64()),
        pa.field("__dau_seconds", pa.float64()),
        pa.field(ERROR, pa.string()),
    ]
)


__all__ = [
    "ERROR",
    "META",
    "MOST_TASK_BYTES",
    "ROW",
    "PartialTooLarge",
    "Task",
    "partial_fn",
    "range_partial_fn",
]
