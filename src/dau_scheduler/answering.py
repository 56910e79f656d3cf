"""From a query to its :class:`SqlResult`: refuse, decide, run, and fall back to the host.

``Session.sql`` is :func:`answer`. The order is the contract: the connection's state and an
unplanned host-alone decision first (no plan is made), then the compiled plan's refusals, a
query whose last split did not fold, the posture's decision, the memory plan, and the run; a
device or fold failure that DuckDB's own answer can stand in for is answered unsplit, saying why.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

import duckdb
import pyarrow as pa

from dau_scheduler import callers, checks, deciding, execution, inline_files, live, parameters
from dau_scheduler.errors import ArmError, FoldError, PostureError, SplitError, SqlError
from dau_scheduler.function_catalog import shadowing_refusal
from dau_scheduler.guards import one_query
from dau_scheduler.refusals import connection_state
from dau_scheduler.rewrite.pivots import values_written_in
from dau_scheduler.rewrite.planner import CompiledSplit, SplitPlan
from dau_scheduler.split import device_cut
from dau_scheduler.sql_result import SqlResult
from dau_scheduler.strategies import fit_available, fit_device, memory_plan

if TYPE_CHECKING:
    from dau_scheduler.session import Session

P = ParamSpec("P")
R = TypeVar("R")


def settles(answering: Callable[P, R]) -> Callable[P, R]:
    """``answering`` (its first argument the Session) with the user's connection's transaction
    id noted after it, however it ends (``DuckDBArm.settle``), so the next query tells whether
    anything else ran in between."""

    @functools.wraps(answering)
    def noted(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return answering(*args, **kwargs)
        finally:
            cast("Session", args[0]).host.settle()

    return noted


def sync(session: Session) -> None:
    """Before a query: the user's connection's settings read (``DuckDBArm.sync_settings``), and
    where another statement ran on its database since the Session's last query, its function
    catalog read again at the next look (a macro created since may shadow one of DuckDB's own
    functions: docs/exactness.md, fifty-ninth session)."""
    session.host.sync_settings()
    if session.host.ran_since():
        session.functions.forget()


def shadowed(session: Session, sql: str) -> str | None:
    """Why a query is answered by DuckDB alone, as written, before anything reads or rewrites
    it: the connection holds a macro named as one of DuckDB's own functions, which DuckDB
    calls for that name (a temporary one on the connection alone, not on a cursor); a table
    macro ``read_parquet`` is what a file's path would be read as by the rewrite (1,000 rows
    of the file for the macro's one). None where none is."""
    if session.host.owned:
        return None
    try:
        kinds = session.functions.kinds(sql)
    except duckdb.Error as exc:  # an attached database invalidated, a memory_limit of a few MB
        first = str(exc).strip().splitlines()[0]
        return f"the connection's function catalog could not be read ({first})"
    return shadowing_refusal(kinds)


@settles
def answer(
    session: Session,
    sql: str,
    *,
    posture: str,
    device_share: float | None,
    split_table: str | None,
    strict: bool,
    profile: str,
    params: Any = None,
    synced: bool = False,
) -> SqlResult:
    """``sql`` answered over ``session``'s tables: split where the plan and the posture allow,
    else unsplit with the reason (see ``Session.sql`` for the arguments and errors).
    ``synced``: the connection's settings were read for this query already."""
    checks.query(sql, split_table, strict)
    checks.options(posture, profile)
    checks.share(device_share)
    parameters.check(params)
    if params is not None:
        return _bound(
            session, sql, params, posture, device_share, split_table, strict=strict, profile=profile
        )
    if not synced:
        sync(session)
    why = connection_state(session.host, session.place, session.row_counts)
    why = why or shadowed(session, sql)
    if why is not None:
        return refused_unplanned(session, sql, why, strict=strict)
    sql = written_out(session, sql)
    if not strict and split_table is None:
        alone = deciding.unplanned_host_split(
            session, sql, posture, device_share, auto=profile == "auto"
        )
        if alone is not None:
            one_query(sql, session.host.parser())
            with contextlib.suppress(duckdb.Error):  # (the planned path names the error)
                table = session.host.cursor().sql(sql).to_arrow_table()
                return SqlResult(table, None, SplitPlan(), split=alone)
    try:
        compiled = session.compile(sql, split_table)
    except SqlError as exc:
        # What a cursor cannot bind, the user's connection may (its temporary tables and
        # views), or DuckDB where the caller's Python objects are seen: answered unsplit.
        found = _elsewhere(session, sql, str(exc))
        if found is None:
            raise
        return found
    except duckdb.OutOfMemoryException:
        # Planning reads DuckDB's catalog and binds the query; under a memory_limit of a few
        # MB (DuckDB's test/sql/storage/temp_directory: 3 MB) DuckDB still answers a query the
        # planner cannot plan.
        why = "planning the split ran out of DuckDB's memory_limit"
        return refused_unplanned(session, sql, why, strict=strict)
    try:
        return _answer_compiled(
            session,
            compiled,
            posture,
            device_share,
            strict=strict,
            auto=profile == "auto",
            split_table=split_table,
        )
    except duckdb.OutOfMemoryException:
        # Sizing the split reads a sample of the columns' rows as Arrow (``column_nbytes``):
        # under a memory_limit of 4 MB that failed where DuckDB answers the query alone
        # (DuckDB's duckdb_eviction_queues.test). (The arms' own failures fall back inside.)
        why = "sizing the split ran out of DuckDB's memory_limit"
        return refused_unplanned(session, sql, why, strict=strict)


def _answer_compiled(
    session: Session,
    compiled: CompiledSplit,
    posture: str,
    device_share: float | None,
    *,
    strict: bool,
    auto: bool,
    split_table: str | None = None,
    vetted: bool = False,
) -> SqlResult:
    """A compiled query answered: refused by name, or decided and run (falling back unsplit).
    Where the device arm refuses its partial, the query's next candidate block the arm can run
    (``Session.compile(vetted=True)``) is answered instead, once (``vetted``)."""
    plan = compiled.plan
    changed = live.refresh(session, plan.split_table)
    if changed is not None:
        return refused_unplanned(session, compiled.sql, changed, strict=strict)
    refusal = session.refusals.query(compiled)
    if refusal is None:
        unfolded = session.unfolded.get((compiled.read_sql, plan.split_table))
        if unfolded is not None:
            refusal = f"this query's last split did not fold, so it is answered unsplit: {unfolded}"
    decision = None
    if refusal is None:
        # Decided first where that measures nothing: a device the posture gives no rows is not
        # asked whether it could run the partial (the Polars arm reads its tables' files and
        # imports Polars to answer; a one-shot query paid 0.2 s for a host-alone answer).
        if not auto:
            try:
                decision = deciding.decide_for(session, compiled, posture, device_share, auto=False)
            except PostureError:
                # Profiles missing for a partial the device arm refuses: the refusal (or the
                # next candidate's own missing profile) is the answer, not a demand for a
                # profile that ``Session.profile`` would refuse to measure.
                if session.refusals.device_arm(compiled) is None:
                    raise
        rows = session.row_counts[plan.split_table or ""]
        if (
            decision is None
            or decision.adaptive
            or device_cut(decision.split.device_share, rows) > 0
        ):
            refusal = session.refusals.device_arm(compiled)
            if refusal is not None and not vetted:
                other = next_candidate(session, compiled, split_table)
                if other is not None:
                    return _answer_compiled(
                        session,
                        other,
                        posture,
                        device_share,
                        strict=strict,
                        auto=auto,
                        split_table=split_table,
                        vetted=True,
                    )
    if refusal is not None:
        if strict:
            raise SplitError(f"query refused for splitting: {refusal}")
        if refusal != plan.refusal:
            plan = plan.model_copy(update={"refusal": refusal})
        return SqlResult(unsplit(session, compiled.sql), None, plan, refusal=refusal)

    if decision is None:
        try:
            decision = deciding.decide_for(session, compiled, posture, device_share, auto=auto)
        except ArmError as exc:  # the device arm failed as its profile was measured
            execution.raise_unless_unsplit_stands(exc, strict)
            return SqlResult(
                unsplit(session, compiled.sql),
                None,
                plan,
                fallback=f"{exc} while its profile was measured; the host ran the query unsplit",
            )
    memory = None
    if session.mem_budget_mb is not None:
        memory = memory_plan(
            session,
            compiled,
            session.mem_budget_mb,
            session.forced_strategy,
            session.chunk_rows,
        )
        decision = fit_device(session, compiled, decision, memory)
    else:
        decision = fit_available(session, compiled, decision)
        rows = session.row_counts[plan.split_table or ""]
        if (
            session.cluster is None
            and not decision.adaptive
            and device_cut(decision.split.device_share, rows) == 0
        ):
            done = execution.host_only(session, compiled, decision)
            return SqlResult(
                done.result, done, plan, split=decision.split, profiled=decision.measured
            )
    try:
        done = execution.dispatch(session, compiled, decision, memory)
    except (FoldError, ArmError) as exc:
        if isinstance(exc, FoldError):  # the rows decide it: the same rows fold no better
            session.unfolded[(compiled.read_sql, plan.split_table)] = str(exc)
        execution.raise_unless_unsplit_stands(exc, strict)
        return SqlResult(
            unsplit(session, compiled.sql),  # DuckDB's own error, if it fails too
            None,
            plan,
            fallback=f"{exc}; the host re-ran the whole query unsplit",
            split=decision.split,
            profiled=decision.measured,
            strategy=memory,
        )
    return SqlResult(
        done.result,
        done,
        plan,
        split=decision.split,
        profiled=decision.measured,
        strategy=memory,
    )


def next_candidate(
    session: Session, compiled: CompiledSplit, split_table: str | None
) -> CompiledSplit | None:
    """Where the device arm refuses ``compiled``'s partial: the query planned again with each
    candidate block put to the arm (``Session.compile(vetted=True)``), if that gives another
    split; else None."""
    other = session.compile(compiled.sql, split_table, vetted=True)
    if other.plan.refusal is None and other.plan.partial_sql != compiled.plan.partial_sql:
        return other
    return None


def runs_with(
    session: Session, compiled: CompiledSplit, split_table: str | None, *, vetted: bool = False
) -> tuple[CompiledSplit, str | None]:
    """The candidate ``Session.sql`` runs where the device arm gets rows, and why it is
    refused (None: it splits): what ``explain``, ``plan`` and ``profile`` describe, so that
    they never show (or measure) a split the device arm refuses and the answer never runs."""
    refusal = session.refusals.query(compiled)
    if refusal is None and session.device is not None:
        refusal = session.refusals.device_arm(compiled)
        if refusal is not None and not vetted:
            other = next_candidate(session, compiled, split_table)
            if other is not None:
                return runs_with(session, other, split_table, vetted=True)
    return compiled, refusal


def refused_unplanned(session: Session, sql: str, why: str, *, strict: bool) -> SqlResult:
    """``sql`` answered by DuckDB alone (:func:`unsplit`) before it is planned, refused because
    ``why``; ``strict`` raises SplitError instead, DuckDB's own error SqlError."""
    if strict:
        raise SplitError(f"query refused for splitting: {why}")
    one_query(sql, session.host.parser())
    try:
        found = unsplit(session, sql)
    except duckdb.Error as exc:
        raise SqlError(str(exc).strip()) from exc
    return SqlResult(found, None, SplitPlan(refusal=why), refusal=why)


#: Why a query with parameters a cursor cannot bind is answered on the user's connection.
UNBOUND_HERE = (
    "the query binds only on the given connection ({}): answered there with its parameters"
)


def _bound(
    session: Session,
    sql: str,
    params: Any,
    posture: str,
    device_share: float | None,
    split_table: str | None,
    *,
    strict: bool,
    profile: str,
) -> SqlResult:
    """``sql`` with its ``params`` written in (``parameters.bind``) answered as any query, its
    columns named as DuckDB names them for ``sql`` with the parameters (``$1``, ``$name``);
    else answered unsplit with them."""
    bound, unread = written_in(session, sql, params)
    if unread is not None:
        return _with_parameters(session, sql, params, unread, strict=strict)
    try:
        names = session.host.cursor().sql(sql, params=params).columns
    except duckdb.Error as exc:
        if not session.on_user_connection:
            raise SqlError(str(exc).strip()) from exc
        # (what a cursor cannot bind, the user's connection may: its temporary objects, a
        # lambda syntax it set; answered there, as a query without parameters is)
        why = UNBOUND_HERE.format(str(exc).strip().splitlines()[0])
        return _with_parameters(session, sql, params, why, strict=strict)
    found = answer(
        session,
        bound,
        posture=posture,
        device_share=device_share,
        split_table=split_table,
        strict=strict,
        profile=profile,
        synced=True,
    )
    if len(names) != found.table.num_columns:
        raise SqlError(f"the query with its parameters gives {len(names)} columns")
    return dataclasses.replace(found, table=found.table.rename_columns(names))


def written_in(session: Session, sql: str, params: Any) -> tuple[str, str | None]:
    """For ``explain``, ``plan`` and ``profile``: ``sql`` with ``params`` written in
    (``parameters.bind``) and None, or ``sql`` and why they could not be (it would run
    unsplit with them)."""
    parameters.check(params)
    sync(session)
    if params is None:
        return written_out(session, sql), None
    bound, unread = parameters.bind(sql, params, session.host.cursor())
    return (sql, unread) if bound is None else (bound, None)


def written_out(session: Session, sql: str) -> str:
    """``sql`` as it splits: a MULTI pivot's values written in (:func:`pivot_values`), and a
    ``read_parquet`` of one local file written as its quoted path (``inline_files.as_paths``),
    the table a Session takes it as. DuckDB reads either as it reads ``sql``."""
    host = session.host
    return inline_files.as_paths(pivot_values(session, sql), host.cursor(), host.temporary())


def pivot_values(session: Session, sql: str) -> str:
    """``sql``, a PIVOT whose ON items list no values (DuckDB's MULTI statement), with the
    values DuckDB would find written in (``pivots.values_written_in``), so it can split;
    any other query as it is."""
    try:
        statements = session.host.parser().extract_statements(sql)
    except (duckdb.Error, TypeError):  # (not text: named where the query is checked)
        return sql
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.MULTI:
        return sql
    return values_written_in(sql, session.host.cursor())


def _with_parameters(
    session: Session, sql: str, params: Any, why: str, *, strict: bool
) -> SqlResult:
    """``sql`` answered by DuckDB alone with its ``params`` (``parameters.bind`` could not write
    them in); DuckDB's own error (parameters that do not match) is a SqlError."""
    if strict:
        raise SplitError(f"query refused for splitting: {why}")
    one_query(sql, session.host.parser())
    try:
        if session.on_user_connection:
            found = session.host.run_on_connection(sql, params)
        else:
            found = session.host.cursor().sql(sql, params=params).to_arrow_table()
    except duckdb.Error as exc:
        raise SqlError(str(exc).strip()) from exc
    return SqlResult(found, None, SplitPlan(refusal=why), refusal=why)


def unsplit(session: Session, sql: str) -> pa.Table:
    """DuckDB's own answer: on the given connection itself when there is one (a cursor does
    not see its temporary objects, prepared statements, variables or hidden settings)."""
    if session.on_user_connection:
        return session.host.run_on_connection(sql)
    return callers.run_seen(session.host.cursor(), sql)


def _elsewhere(session: Session, sql: str, error: str) -> SqlResult | None:
    """``sql``, which the Session's cursors could not bind (``error``), answered by DuckDB
    alone where what it reads is seen: the given connection itself (its temporary objects),
    the calling code's Python objects (``callers``); None where neither holds it. DuckDB's
    own error where it reads a caller's object and fails."""
    name = callers.object_read(error)
    if not session.on_user_connection and name is None:
        return None
    try:
        one_query(sql, session.host.parser())
        found = unsplit(session, sql)
    except (duckdb.Error, SqlError) as exc:
        if name is not None:
            raise SqlError(str(exc).strip()) from exc
        return None
    why = (
        "the query reads what only the given connection sees (temporary objects)"
        if name is None
        else callers.refusal(name)
    )
    return SqlResult(found, None, SplitPlan(refusal=why), refusal=why)


__all__ = ["answer", "next_candidate", "refused_unplanned", "runs_with", "unsplit"]
