"""Memory strategies, executed: how the split table's rows reach the arms within a budget.

``cloud_plan`` over the query's split table (its rows, and the Arrow width of the columns the
query reads) picks the strategy; see ``pool.cloud`` for the thresholds.

- ``in_memory``: the rows the query reads come to the arms in one piece (a Session over
  resident tables does not come here at all: it runs on its resident rows).
- ``chunked``: the split table is read ``recommended_chunk_rows`` rows at a time (one Parquet row
  group at a time); each chunk is split between the arms as a whole query would be, each
  chunk's partial is kept, and the final query folds them all once.
- ``streamed``: the same chunks, but each chunk's partial is folded at once into one running
  partial (``CompiledSplit.refold_sql``: the final query's re-aggregation, kept in partial form),
  so only one chunk and the running partial are ever held.

Each is exact for the same reason a split is: a chunk is a row range, and the partials of any
cut of the rows fold to the unsplit answer.

The budget is shared out: a chunk is at most ``CHUNK_FRACTION`` of it (``pool.cloud``), DuckDB's
own memory limit is ``HOST_FRACTION`` of it (DuckDB spills past it), and the device arm is told
``DEVICE_FRACTION`` (the Polars CPU arm then runs its streaming engine); the rest holds the
partials and what the allocators keep.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from dau_scheduler.adaptive import execute_adaptive
from dau_scheduler.arms.base import cast_partial
from dau_scheduler.errors import ArmError, SqlError
from dau_scheduler.lazy import empty_table
from dau_scheduler.merge import MergeRule, fold_error
from dau_scheduler.pool.cloud import CHUNK_FRACTION, MIB, cloud_plan
from dau_scheduler.rewrite.aggregates import SQL_MERGEABLE
from dau_scheduler.rewrite.columns import query_columns
from dau_scheduler.rows import RowRange, RowSource
from dau_scheduler.split import SplitExecution, execute_split

if TYPE_CHECKING:
    from dau_scheduler.decision import Decision
    from dau_scheduler.rewrite.planner import CompiledSplit
    from dau_scheduler.session import Session


HOST_FRACTION = 0.5
DEVICE_FRACTION = 0.25
#: What the device's bytes are multiplied by before they must fit its part of the budget (the
#: placement's ``safety_factor``).
SAFETY = 1.25


class MemoryPlan(BaseModel):
    """The memory plan a query ran with: the strategy, and ``cloud_plan``'s figures for it."""

    model_config = ConfigDict(frozen=True)

    strategy: str
    mem_budget_mb: float
    split_table: str
    rows: int
    row_bytes: float
    chunk_rows: int
    chunks: int
    plan: dict[str, Any]


@dataclass(frozen=True)
class Strategy:
    """How chunks' partials are kept: all until the end, or folded online into one."""

    name: str
    online: bool


STRATEGIES: dict[str, Strategy] = {
    "in_memory": Strategy("in_memory", online=False),
    "chunked": Strategy("chunked", online=False),
    "streamed": Strategy("streamed", online=True),
}


def strategy(name: str) -> Strategy:
    found = STRATEGIES.get(name)
    if found is None:
        raise SqlError(f"unknown strategy {name!r}; strategies: {', '.join(STRATEGIES)}")
    return found


def columns_read(session: Session, compiled: CompiledSplit, table: str) -> list[str]:
    """``table``'s columns the query reads, by their names in the table (at least one: an
    Arrow table needs a column to carry its row count)."""
    if not compiled.columns_read:
        compiled.columns_read.update(query_columns(compiled.read_sql, session.schema))
        compiled.columns_read.setdefault("", set())  # worked out (a query may read no column)
    names = list(session.schema[table])
    used = compiled.columns_read.get(table, set())
    return [n for n in names if n.lower() in used] or names[:1]


def read_columns(session: Session, compiled: CompiledSplit) -> list[str]:
    """The split table's columns the query reads (:func:`columns_read`)."""
    return columns_read(session, compiled, compiled.plan.split_table or "")


def memory_plan(
    session: Session,
    compiled: CompiledSplit,
    budget_mb: float,
    forced: str | None = None,
    max_chunk_rows: int | None = None,
) -> MemoryPlan:
    """``cloud_plan`` over the split table's rows and the width of the columns read; ``forced``
    names a strategy to use instead of the one it picks (chunks still sized to the budget, and
    at most ``max_chunk_rows`` rows where given)."""
    table = compiled.plan.split_table or ""
    rows = session.row_counts[table]
    columns = read_columns(session, compiled)
    widths = session.column_nbytes[table]
    row_bytes = max(1.0, sum(widths.get(c.lower(), 0) for c in columns) / max(1, rows))
    plan = cloud_plan(rows, len(columns), budget_mb, row_bytes=row_bytes)
    name = plan["strategy"] if forced is None else strategy(forced).name
    chunk_rows = max(1, plan["recommended_chunk_rows"])
    if name != "in_memory" and plan["strategy"] == "in_memory":
        chunk_rows = max(1, math.floor(CHUNK_FRACTION * budget_mb * MIB / row_bytes))
    elif name == "in_memory":
        chunk_rows = max(1, rows)
    if max_chunk_rows is not None and name != "in_memory":
        chunk_rows = min(chunk_rows, max_chunk_rows)
    return MemoryPlan(
        strategy=name,
        mem_budget_mb=budget_mb,
        split_table=table,
        rows=rows,
        row_bytes=row_bytes,
        chunk_rows=chunk_rows,
        chunks=math.ceil(rows / chunk_rows),
        plan=plan,
    )


def _device_room(session: Session) -> float | None:
    """Bytes of the budget the device arm may hold its working set in, or None where no
    budget bounds it (no budget, or an arm DuckDB's memory limit bounds)."""
    expansion = getattr(session.device, "host_bytes_per_input_byte", None)
    if expansion is None or session.mem_budget_mb is None:
        return None
    return float(DEVICE_FRACTION * session.mem_budget_mb * MIB / (expansion * SAFETY))


def device_excluded(session: Session, compiled: CompiledSplit) -> bool:
    """Whether the budget leaves the device arm no rows of ``compiled`` whatever the share (the
    tables it reads whole do not fit its room: :func:`fit_device`). Its refusal is then not
    asked: the Polars arm's checks read join keys, and at TPC-H SF 1 Q18's added 180 MB of
    peak memory under a 256 MB budget for an arm that would run nothing."""
    from dau_scheduler.planner.placement import _model_bytes

    room = _device_room(session)
    return room is not None and _model_bytes(session, compiled) >= room


def fit_device(
    session: Session, compiled: CompiledSplit, decision: Decision, memory: MemoryPlan
) -> Decision:
    """``decision`` with the device's share of each chunk cut to what fits its part of the budget.

    An arm DuckDB's memory limit does not bound (the Polars CPU arm: ``host_bytes_per_input_byte``)
    holds about that many bytes per Arrow byte of what it reads: the tables it reads whole (the
    placement's model bytes) and its rows of the chunk. That, times ``SAFETY``, must fit
    ``DEVICE_FRACTION`` of the budget, as ``planner.plan`` places rows on a device with memory:
    the share is cut until it does, and a device that cannot hold the model bytes gets no rows.
    The budget wins over a given ``device_share``; the split's rationale says so.
    """
    expansion = getattr(session.device, "host_bytes_per_input_byte", None)
    if expansion is None or (decision.split.device_share <= 0 and not decision.adaptive):
        return decision
    room = DEVICE_FRACTION * memory.mem_budget_mb * MIB / (expansion * SAFETY)
    chunk = min(memory.chunk_rows, memory.rows) * memory.row_bytes
    where = f"under the {memory.mem_budget_mb:g} MB budget"
    return _cut_share(
        session, compiled, decision, room, chunk, where, f"{chunk / MIB:.0f} MB chunks"
    )


#: Without a budget, the part of the memory this process may still take (``machine``'s
#: ``memory_available``: a container's limit counts) that the Polars CPU arm's working set may
#: fill; the host arm, DuckDB, runs beside it within its own memory_limit and spills past it.
AVAILABLE_FRACTION = 0.5


def fit_available(session: Session, compiled: CompiledSplit, decision: Decision) -> Decision:
    """``decision`` with the device's share cut to what fits ``AVAILABLE_FRACTION`` of the memory
    this process may still take, for an arm no byte limit bounds (:func:`fit_device`'s rule,
    without a budget). The Polars arm aborts the process where an allocation fails (Rust), and
    the kernel kills it past a container's limit: in a 1000 MB control group, TPC-H SF 1 Q21 at
    device share 0.9 was killed on the streaming engine, where DuckDB alone holds 252 MB
    (``bench-queries/container_memory.py``; decision 026). Nothing is cut where the query's
    columns fit the room whole (the common case: no further reading)."""
    from dau_scheduler import machine

    expansion = getattr(session.device, "host_bytes_per_input_byte", None)
    if expansion is None or (decision.split.device_share <= 0 and not decision.adaptive):
        return decision
    available = machine.memory_available()
    if available is None:
        return decision
    room = AVAILABLE_FRACTION * available / (expansion * SAFETY)
    from dau_scheduler.planner.placement import _bytes

    table = compiled.plan.split_table or ""
    split_columns = columns_read(session, compiled, table)  # (works every table's columns out)
    rows = _bytes(session, table, {c.lower() for c in split_columns})
    read = [(t, c) for t, c in compiled.columns_read.items() if t in session.row_counts]
    if 2 * sum(_bytes(session, name, columns) for name, columns in read) <= room:
        return decision
    where = f"with {available / MIB:,.0f} MB of memory available"
    return _cut_share(
        session, compiled, decision, room, rows, where, f"{rows / MIB:.0f} MB of rows"
    )


def _cut_share(
    session: Session,
    compiled: CompiledSplit,
    decision: Decision,
    room: float,
    rows_bytes: float,
    where: str,
    rows_text: str,
) -> Decision:
    """``decision`` with the device share cut so that the tables the device reads whole and its
    share of ``rows_bytes`` fit ``room`` (bytes of input); the rationale says why."""
    from dataclasses import replace

    from dau_scheduler.planner.placement import _model_bytes

    expansion = getattr(session.device, "host_bytes_per_input_byte", None) or 1.0
    model = _model_bytes(session, compiled)
    wanted = 1.0 if decision.adaptive else decision.split.device_share
    share = min(wanted, max(0.0, (room - model) / rows_bytes)) if rows_bytes > 0 else wanted
    if share >= wanted:
        return decision
    name = session.device.name if session.device is not None else "device"
    why = (
        f"{decision.split.rationale}; {where} the {name} arm (no byte limit, ~{expansion:g}x "
        f"its input) has {room / MIB:.0f} MB for {model / MIB:.0f} MB of "
        f"tables it reads whole and {rows_text}: "
    )
    if share <= 0:
        why += "it gets no rows"
        split = decision.split.model_copy(update={"device_share": 0.0, "rationale": why})
    else:
        why += f"device share cut to {share:.2f}"
        split = decision.split.model_copy(update={"device_share": share, "rationale": why})
    return replace(decision, split=split, adaptive=False)


def _chunks(session: Session, compiled: CompiledSplit, rows: int) -> Iterator[pa.Table]:
    """The split table's rows the query reads, ``rows`` at a time. A file pyarrow cannot read
    (out of specification, encrypted) is an :class:`ArmError` of the ``reader``: the split
    stops, the partials of the chunks before are dropped, and the unsplit answer (DuckDB's, or
    its own error) stands."""
    table = compiled.plan.split_table or ""
    source = session.source(table)
    try:
        yield from source.batches(read_columns(session, compiled), rows)
    except (OSError, pa.ArrowException) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ArmError("reader", f"pyarrow cannot read the rows of {table}: {first}") from exc


def prefix_runner(
    session: Session, compiled: CompiledSplit, rows: int
) -> Callable[[Any], pa.Table]:
    """``arm -> the arm's partial over the split table's first rows rows``: a rowid range on
    resident tables; on a lazy Session those rows, read from the source once."""
    if not session.lazy:
        return lambda arm: arm.run_partial(compiled, 0, rows)
    chunk = next(_chunks(session, compiled, max(1, rows)), None)
    if chunk is None:
        raise SqlError(f"table {compiled.plan.split_table} has no rows to run over")
    chunk = chunk.slice(0, rows)
    return lambda arm: arm.run_partial_rows(compiled, chunk)


def _arm_over(arm: Any, compiled: CompiledSplit, chunk: pa.Table) -> Callable[..., pa.Table]:
    def call(query: Any, rows: RowSource) -> pa.Table:
        return arm.run_partial_rows(compiled, chunk.slice(rows.start, rows.stop - rows.start))

    return call


def run(
    session: Session, compiled: CompiledSplit, decision: Decision, name: str, chunk_rows: int
) -> SplitExecution:
    """Run ``compiled`` over the split table's rows ``chunk_rows`` at a time with strategy
    ``name``; each chunk split between the arms as ``decision`` says. Raises ArmError naming
    the arm that failed; nothing short is ever returned."""
    how = strategy(name)
    schema = compiled.partial_schema
    if schema is None:  # pragma: no cover - refused queries never come here
        raise SqlError("this query has no partial to run")
    began = time.perf_counter()

    def gather(partials: Sequence[pa.Table]) -> pa.Table:
        cast = [cast_partial(p, schema, "chunk") for p in partials]
        return pa.concat_tables(cast) if cast else empty_table(schema)

    per_chunk = MergeRule(terminal="sql", combine=gather, mergeable=SQL_MERGEABLE)
    device = session.device if session.device is not None else session.host
    kept: list[pa.Table] = []
    running: pa.Table | None = None
    totals = {"device_rows": 0, "host_rows": 0, "device_seconds": 0.0, "host_seconds": 0.0}
    overlap = 0.0
    spans: list[tuple[str, float, float, int]] = []
    for chunk in _chunks(session, compiled, chunk_rows):
        offset = time.perf_counter() - began
        rows = RowRange(0, chunk.num_rows)
        on_device = _arm_over(device, compiled, chunk)
        on_host = _arm_over(session.host, compiled, chunk)
        if decision.adaptive:
            done = execute_adaptive(
                compiled,
                rows,
                per_chunk,
                device=on_device,
                host=on_host,
                device_morsel=min(decision.device_morsel, chunk.num_rows) or 1,
                host_morsel=min(decision.host_morsel, chunk.num_rows) or 1,
                growth=2.0,
                max_morsel=max(1, math.ceil(chunk.num_rows / 4)),
                aggregates=compiled.plan.aggregates,
            )
        else:
            done = execute_split(
                compiled,
                rows,
                decision.split,
                per_chunk,
                device=on_device,
                host=on_host,
                aggregates=compiled.plan.aggregates,
            )
        for key in totals:
            totals[key] += getattr(done, key)
        # The chunk's own fold only gathers its partials: its arms' spans are what ran.
        spans += [(t, a + offset, b + offset, r) for t, a, b, r in done.spans if t != "fold"]
        overlap += done.overlap_seconds
        if how.online:
            both = done.result if running is None else pa.concat_tables([running, done.result])
            t_fold = time.perf_counter()
            running = _refold(session, compiled, both)
            spans.append(("fold", t_fold - began, time.perf_counter() - began, 0))
        else:
            kept.append(done.result)
    t0 = time.perf_counter()
    partials = [running] if running is not None else kept
    result = session.merge_rule(compiled).combine(partials)
    merge = time.perf_counter() - t0
    spans.append(("fold", t0 - began, t0 - began + merge, 0))
    n = totals["device_rows"] + totals["host_rows"]
    return SplitExecution(
        posture=decision.split.posture,
        device_share=totals["device_rows"] / n if n else 0.0,
        terminal="sql",
        device_rows=int(totals["device_rows"]),
        host_rows=int(totals["host_rows"]),
        device_seconds=totals["device_seconds"],
        host_seconds=totals["host_seconds"],
        wall_seconds=time.perf_counter() - began,
        overlap_seconds=overlap,
        materialize_seconds=0.0,
        merge_seconds=merge,
        result=result,
        spans=tuple(spans),
    )


def _refold(session: Session, compiled: CompiledSplit, partials: pa.Table) -> pa.Table:
    """Partials folded into one partial of the same schema (concatenated for row blocks)."""
    if compiled.refold_sql is None or compiled.partial_schema is None:
        return partials
    try:
        folded = session.host.run_over_partials(compiled.refold_sql, partials)
    except duckdb.Error as exc:
        raise fold_error(exc) from exc
    return cast_partial(folded, compiled.partial_schema, "refold")


__all__ = [
    "DEVICE_FRACTION",
    "SAFETY",
    "fit_available",
    "fit_device",
    "prefix_runner",
    "HOST_FRACTION",
    "STRATEGIES",
    "MemoryPlan",
    "Strategy",
    "memory_plan",
    "read_columns",
    "run",
    "strategy",
]
