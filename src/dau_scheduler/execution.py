"""Running a decided split over resident tables, and folding partials into the answer.

The Session decides (``decision.decide``) and dispatches; this module runs what was decided: a
fixed cut (``execute_split``), meet-in-the-middle morsels (``execute_adaptive``), or the host
alone when the cut gives the device no rows. Under a memory budget ``strategies.run`` takes the
place of the first two. ``merge_rule`` is how every path folds its partials.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from dau_scheduler import live, strategies
from dau_scheduler.adaptive import execute_adaptive
from dau_scheduler.arms.base import Arm, cast_partial
from dau_scheduler.arms.duckdb import DuckDBArm
from dau_scheduler.arms.polars import PolarsArm
from dau_scheduler.decision import ADAPTIVE_LARGEST, Decision
from dau_scheduler.errors import ArmError, ClusterError, FoldError, SplitError
from dau_scheduler.lazy import empty_table
from dau_scheduler.merge import MergeRule, fold_error
from dau_scheduler.rewrite.aggregates import SQL_MERGEABLE
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rows import RowRange, RowSource
from dau_scheduler.split import SplitExecution, execute_split
from dau_scheduler.tables import ConnectionSource, ParquetSource

if TYPE_CHECKING:
    from dau_scheduler.arms.cluster import ClusterArm
    from dau_scheduler.rewrite.planner import CompiledSplit
    from dau_scheduler.session import Session


def _unmatched_rows(
    session: Session, compiled: CompiledSplit, early: bool
) -> Callable[[], pa.Table] | None:
    """A function giving the complement's partial rows (``rewrite.complement``: an outer join's
    unmatched rows, the host's to add once), or None where the query has none. ``early``: the
    host starts it now, in a thread, beside the arms (a fold waits for it); otherwise it runs
    in the fold, as the profiles measure a fold."""
    if compiled.complement is None:
        return None
    sql = compiled.complement.sql(dialect=DIALECT)

    def run() -> pa.Table:
        try:
            return session.host.cursor().sql(sql).to_arrow_table()
        except duckdb.Error as exc:
            raise fold_error(exc) from exc

    if not early:
        return run
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dau-unmatched")
    started = pool.submit(run)
    pool.shutdown(wait=False)
    return started.result


def merge_rule(session: Session, compiled: CompiledSplit, *, early: bool = False) -> MergeRule:
    """How partials of ``compiled`` fold: cast to the host's partial schema (with the rows the
    host adds for an outer join, ``_unmatched_rows``), then the fast fold (where it ``fits`` the
    partials' rows: see ``rewrite.fold``) or the final query in DuckDB, with DuckDB's own
    output names."""
    schema = compiled.partial_schema
    final_sql = compiled.final.sql(dialect=DIALECT) if compiled.final is not None else ""
    # The fast fold orders as DuckDB does by default; other NULL or sort orders set on the
    # connection are left to the final query, which runs on it.
    fast = compiled.fast if session.fast_fold and session.host.orders_by_default() else None
    output_schema = compiled.schema
    names = list(compiled.columns)
    # A lazy Session (one-shot, or under a memory budget) leaves Acero's group-by out: its first
    # use loads pyarrow.dataset and pandas (~0.25 s, ~40 MB), more than the milliseconds it saves
    # over the final query in DuckDB; folds in Python and scalar folds stay.
    acero = not session.lazy
    unmatched = _unmatched_rows(session, compiled, early)
    raise_check = compiled.raise_check_sql

    def combine(partials: Sequence[pa.Table]) -> pa.Table:
        assert schema is not None
        if unmatched is not None:
            partials = [*partials, unmatched()]
        tables = [cast_partial(p, schema, "host") for p in partials]
        merged = pa.concat_tables(tables) if tables else empty_table(schema)
        if raise_check is not None:
            _check_no_group_raises(session, raise_check, merged)
        result = None
        if fast is not None and output_schema is not None and fast.fits(merged.num_rows):
            result = fast.run(merged, output_schema, acero=acero)
        if result is None:
            try:
                result = session.host.run_over_partials(final_sql, merged)
            except duckdb.Error as exc:
                raise fold_error(exc) from exc
        # DuckDB's own output names, duplicates included (the final query's are unique).
        return result if result.column_names == names else result.rename_columns(names)

    return MergeRule(terminal="sql", combine=combine, mergeable=SQL_MERGEABLE)


def _check_no_group_raises(session: Session, check_sql: str, partials: pa.Table) -> None:
    """Raise a FoldError where DuckDB's finalize raises for a group of ``partials`` that the
    final query's filters may drop before its own guard reads it (``raise_check_sql``)."""
    try:
        raises = session.host.run_over_partials(check_sql, partials).num_rows > 0
    except duckdb.Error as exc:
        raise fold_error(exc) from exc
    if raises:
        raise FoldError(
            "a group's skewness or kurtosis is not finite or ill-conditioned, and a filter of "
            "the query may drop that group: DuckDB raises out of range for it before filtering "
            "(or answers), which only the unsplit query tells"
        )


def raise_unless_unsplit_stands(exc: FoldError | ArmError, strict: bool) -> None:
    """Raise unless the unsplit answer may stand in for a split that failed with ``exc``.

    It may where the device arm failed, where the final query refused the partials (a
    :class:`FoldError`), or where the host's partial met a DuckDB error the unsplit query may
    never meet (it computes an output the query above it prunes: an overflow in an unused SUM),
    or where pyarrow could not read a chunk's rows (the ``reader``: the split stops), or where a
    cluster cannot carry a worker's partial back (``transfer``: too many bytes). Under
    ``strict`` those are a :class:`SplitError`. A cluster's own error is raised as it is, and
    any other host failure as the ArmError: never a short answer.
    """
    if isinstance(exc, FoldError):
        if strict:
            raise SplitError(f"the split did not fold and strict=True: {exc}") from exc
        return
    if isinstance(exc.__cause__, ClusterError):
        raise exc.__cause__ from None  # the cluster's own named error
    if exc.arm == "reader":  # a chunk's rows could not be read: the split stopped there
        if strict:
            raise SplitError(f"the split's rows could not be read and strict=True: {exc}") from exc
        return
    if exc.arm == "transfer":  # a partial too large to carry back: the split stopped there
        if strict:
            raise SplitError(f"a partial could not be carried back and strict=True: {exc}") from exc
        return
    computed = exc.arm == "host" and isinstance(exc.__cause__, duckdb.Error)
    if strict and exc.arm == "device":
        raise SplitError(f"device arm failed and strict=True: {exc}") from exc
    if (exc.arm != "device" and not computed) or strict:
        raise exc


def _arm_call(arm: Arm, compiled: CompiledSplit) -> Any:
    def call(query: Any, rows: RowSource) -> pa.Table:
        return arm.run_partial(compiled, rows.start, rows.stop)

    return call


def dispatch(
    session: Session,
    compiled: CompiledSplit,
    decision: Decision,
    memory: strategies.MemoryPlan | None,
) -> SplitExecution:
    """Run the split where the Session's rows are: over a cluster's workers; read from their
    sources as ``memory`` plans it (one chunk of every row without a budget) on a lazy Session,
    where a copying device over a user's connection first gets the other tables as they are
    now (decision 023); else over the arms' resident rows."""
    if session.cluster is not None:
        return on_cluster(session, session.cluster, compiled, decision)
    if session.lazy:
        rows = session.row_counts[compiled.plan.split_table or ""]
        name, chunk_rows = (
            ("in_memory", max(1, rows)) if memory is None else (memory.strategy, memory.chunk_rows)
        )
        with live.fresh_copies(session, compiled):
            if memory is None and reads_in_place(session, compiled):
                return run(session, compiled, decision)
            return strategies.run(session, compiled, decision, name, chunk_rows)
    return run(session, compiled, decision)


def reads_in_place(session: Session, compiled: CompiledSplit) -> bool:
    """Whether each arm reads its own rows of the split table where they are, by row number,
    rather than through Arrow chunks (decision 024): a user's connection's table by rowid range
    (the host where it is, the Polars device from the connection as it runs, the columns the
    query reads), Parquet files by DuckDB's ``file_row_number`` and a Polars scan's slice."""
    table = compiled.plan.split_table or ""
    source = session.source_of(table)
    device = session.device
    if isinstance(source, ConnectionSource):
        if device is None or isinstance(device, DuckDBArm):
            # Both arms DuckDB: each reads its rowid range where it is, as on a Session that
            # is not lazy (one is lazy once it reads Parquet files: Q6 took 3.1x as long
            # through Arrow chunks after a file read inline, forty-ninth session).
            return True
        if not isinstance(device, PolarsArm):
            return False
        strategies.columns_read(session, compiled, table)  # what the device reads of it
        return True
    if not isinstance(source, ParquetSource) or source.range_sql(0, 0) is None:
        return False
    if isinstance(device, PolarsArm):
        return device.scans_as_arrow(table)
    return device is None or isinstance(device, DuckDBArm)


def run(
    session: Session,
    compiled: CompiledSplit,
    decision: Decision,
    *,
    host: Any = None,
) -> SplitExecution:
    """Run ``compiled`` over the split table's resident rows as ``decision`` says; ``host`` is
    the arm in the host's place (default: the Session's DuckDB).

    Raises ArmError naming the arm that failed; nothing is merged then.
    """
    n = session.row_counts[compiled.plan.split_table or ""]
    rule = merge_rule(session, compiled, early=True)
    host = _arm_call(host if host is not None else session.host, compiled)
    device = _arm_call(session.device, compiled) if session.device is not None else host
    if decision.adaptive:
        return execute_adaptive(
            compiled,
            RowRange(0, n),
            rule,
            device=device,
            host=host,
            device_morsel=decision.device_morsel,
            host_morsel=decision.host_morsel,
            growth=2.0,
            max_morsel=max(1, math.ceil(n / ADAPTIVE_LARGEST)),
            aggregates=compiled.plan.aggregates,
        )
    return execute_split(
        compiled,
        RowRange(0, n),
        decision.split,
        rule,
        device=device,
        host=host,
        aggregates=compiled.plan.aggregates,
    )


def on_cluster(
    session: Session, cluster: ClusterArm, compiled: CompiledSplit, decision: Decision
) -> SplitExecution:
    """``run`` with the cluster in the host's place; the execution names each worker's rows."""
    mine = cluster.for_query()
    done = run(session, compiled, decision, host=mine)
    return done.model_copy(
        update={"workers": mine.workers(), "worker_fold_seconds": mine.fold_seconds}
    )


def host_only(session: Session, compiled: CompiledSplit, decision: Decision) -> SplitExecution:
    """A split that gives the device no rows is the unsplit query on the host: run that.

    Partial plus final would compute the same answer with two statements' fixed costs.
    """
    n = session.row_counts[compiled.plan.split_table or ""]
    t0 = time.perf_counter()
    table = session.host.cursor().sql(compiled.sql).to_arrow_table()
    seconds = time.perf_counter() - t0
    return SplitExecution(
        posture=decision.split.posture,
        device_share=decision.split.device_share,
        terminal="sql",
        device_rows=0,
        host_rows=n,
        device_seconds=0.0,
        host_seconds=seconds,
        wall_seconds=seconds,
        overlap_seconds=0.0,
        materialize_seconds=0.0,
        merge_seconds=0.0,
        result=table,
        spans=(("host", 0.0, seconds, n),),
        unsplit=True,
    )


__all__ = [
    "host_only",
    "merge_rule",
    "on_cluster",
    "raise_unless_unsplit_stands",
    "run",
]
