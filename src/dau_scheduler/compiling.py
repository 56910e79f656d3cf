"""Compiling a query over a Session's tables: bind it in DuckDB, plan the split, check the final.

``Session.compile`` caches what :func:`compile_query` returns per query text and split table.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
import sqlglot
from sqlglot import exp

from dau_scheduler.arms.duckdb import DuckDBArm
from dau_scheduler.errors import SqlError
from dau_scheduler.guards import VOLATILE, one_query
from dau_scheduler.lazy import empty_table
from dau_scheduler.rewrite import overflow
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.planner import CompiledSplit, SplitPlan, compile_split

if TYPE_CHECKING:
    from dau_scheduler.session import Session


def bind(session: Session, sql: str) -> tuple[list[str], list[str], pa.Schema | None]:
    """Names and DuckDB types of ``sql``'s output, and its Arrow schema: from a LIMIT 0 run, not
    when the query calls a volatile function (a sequence would advance) or DuckDB rejects it
    wrapped (``ORDER BY 'literal'`` binds alone, not as a subquery): then None."""
    cursor = session.host.cursor()
    try:
        relation = cursor.sql(sql)
        columns, types = list(relation.columns), [str(t) for t in relation.types]
    except duckdb.Error as exc:
        raise SqlError(str(exc).strip()) from exc
    schema = None
    if not VOLATILE.search(sql):
        with contextlib.suppress(duckdb.Error):
            schema = relation.limit(0).to_arrow_table().schema
    return columns, types, schema


def compile_query(
    session: Session, sql: str, split_table: str | None, *, vetted: bool = False
) -> CompiledSplit:
    """The split of ``sql`` over ``session``'s tables, validated first (one statement, a known
    split table, a query DuckDB binds); its final query checked over empty partials.
    ``vetted``: a candidate the device arm refuses gives way to the next (``_device_vet``)."""
    one_query(sql, session.host.parser())
    if split_table is not None and split_table.lower() not in session.row_counts:
        raise SqlError(
            f"split_table {split_table!r} is not a table of this session; "
            f"tables: {', '.join(sorted(session.row_counts))}"
        )
    columns, types, output_schema = bind(session, sql)
    try:
        aggregates = session.functions.kinds(sql).aggregates
    except duckdb.Error as exc:  # an attached database a failed checkpoint left unreadable
        why = str(exc).strip().splitlines()[0]
        reason = f"the catalog's functions could not be read ({why}); answered unsplit"
        return CompiledSplit(sql, SplitPlan(refusal=reason), tuple(columns), tuple(types))
    for _ in range(2):
        compiled = compile_split(
            sql,
            row_counts=session.row_counts,
            schema=session.schema,
            aggregate_names=aggregates,
            binder=lambda text: bind(session, text),
            columns=columns,
            types=types,
            output_schema=output_schema,
            split_table=split_table,
            place=session.tables_place,
            views=session.views,
            vet=_device_vet(session) if vetted else None,
            magnitudes=lambda text: magnitudes_below(session, text),
        )
        if compiled.inlined_sql is None:
            break
        # A view's body may call a macro the catalog read before did not list.
        fresh = session.functions.kinds(compiled.inlined_sql).aggregates
        if fresh == aggregates:
            break
        aggregates = fresh
    compiled = _checked_final(session, compiled)
    if split_table is not None and compiled.plan.refusal and compiled.partial is None:
        read = {
            t.name.lower()
            for t in sqlglot.parse_one(compiled.read_sql, read=DIALECT).find_all(exp.Table)
        }
        if split_table.lower() not in read:
            raise SqlError(f"split_table {split_table!r} is not read by this query")
    return compiled


def magnitudes_below(session: Session, sql: str) -> tuple[bool, ...]:
    """For each value of ``sql`` (an ``overflow.stats_probe`` query), whether DuckDB's
    statistics of it, as the data stand now, bound it below ``overflow.NEAR_MAGNITUDE``;
    empty where the probe fails or reads no row (then nothing is bounded)."""
    if VOLATILE.search(sql):
        return ()
    try:
        rows = session.host.cursor().sql(sql).fetchall()
    except duckdb.Error:
        return ()
    if not rows:
        return ()
    return tuple(overflow.stats_bound(stats) < overflow.NEAR_MAGNITUDE for stats in rows[0])


def plan_holds(session: Session, compiled: CompiledSplit) -> bool:
    """Whether a cached plan still fits the data: the float sums it left without a magnitude
    partial are still bounded by their statistics, and those it guarded still are not (a
    user's connection may have changed its rows since: decision 023)."""
    if compiled.magnitude_sql is None:
        return True
    now = magnitudes_below(session, compiled.magnitude_sql)
    if len(now) != len(compiled.magnitudes_below):
        now = (False,) * len(compiled.magnitudes_below)
    return now == compiled.magnitudes_below


def _device_vet(session: Session) -> Callable[[CompiledSplit], str | None] | None:
    """The device arm's refusal of a compiled candidate (cached per partial), so that the
    planner moves on to the next: a smaller table, or a block inside the one refused (queries
    hold blocks the Polars arm runs beside ones it cannot). None for no device or DuckDB's.
    Asked only once the first candidate's device refused it where it would get rows
    (``answering``): the question loads the arm's tables."""
    if session.device is None or isinstance(session.device, DuckDBArm):
        return None
    return session.refusals.device


def _checked_final(session: Session, compiled: CompiledSplit) -> CompiledSplit:
    """The compiled split, refused when its final query does not run over empty partials (a
    rewrite DuckDB cannot parse or bind is a refusal, never a failure mid-query)."""
    if compiled.final is None or compiled.partial_schema is None:
        return compiled
    try:
        session.host.run_over_partials(
            compiled.final.sql(dialect=DIALECT), empty_table(compiled.partial_schema)
        )
    except (duckdb.Error, pa.ArrowException) as exc:  # Arrow: no empty sparse union
        why = str(exc).strip().splitlines()[0]
        plan = compiled.plan.model_copy(
            update={"refusal": f"the final query of this split does not run: {why}"}
        )
        return dataclasses.replace(compiled, plan=plan, partial=None, final=None, fast=None)
    return compiled


__all__ = ["bind", "compile_query", "magnitudes_below", "plan_holds"]
