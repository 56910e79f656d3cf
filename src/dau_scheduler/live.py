"""A user's connection as it is now: its tables may change between two of a Session's queries
(INSERT, UPDATE, DELETE, a table replaced), and DuckDB cannot say whether they did (decision
023). Before a query is planned, the catalog and settings are compared with what the Session
read (tables and views created, dropped, altered, redefined, a SET: the tables read again);
before a split, the split table is counted again; a device that holds copies keeps no rows
of them (such a Session is lazy): it reads its own rowid range of the split table when the
query runs, and is given the other tables' columns the query reads as they are now."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import duckdb
from sqlglot import exp

from dau_scheduler.arms.duckdb import DuckDBArm
from dau_scheduler.guards import arrow_for_device, load_resident
from dau_scheduler.strategies import columns_read
from dau_scheduler.tables import ConnectionSource, ParquetSource, resolve_sources

if TYPE_CHECKING:
    from dau_scheduler.rewrite.planner import CompiledSplit
    from dau_scheduler.session import Session


def copies_rows(device: object) -> bool:
    """Whether ``device`` computes over copies of the connection's rows (every arm but DuckDB,
    which reads them through its own cursor)."""
    return not isinstance(device, (DuckDBArm, type(None)))


def shape(session: Session) -> frozenset[tuple[Any, ...]]:
    """What the connection's catalog holds where the Session's tables live: every column of
    every table and view (its position and type) and every view's definition (one statement);
    and the digest of every setting the host read with them before the query
    (``DuckDBArm.settings``), which a plan's types depend on (``SET TimeZone`` retypes a
    TIMESTAMPTZ's Arrow column: DuckDB's test_icu_strftime.test, one Session kept across the
    file)."""
    rows = (
        session.host.cursor()
        .execute(
            "SELECT table_name, column_index, column_name, data_type, NULL FROM duckdb_columns()"
            " WHERE database_name = $1 AND schema_name = $2 AND NOT internal UNION ALL SELECT "
            "view_name, NULL, NULL, NULL, sql FROM duckdb_views() WHERE NOT internal AND NOT "
            "temporary AND database_name = $1 AND schema_name = $2",
            list(session.tables_place),
        )
        .fetchall()
    )
    return frozenset([*(tuple(row) for row in rows), ("settings", session.host.settings())])


def follow(session: Session) -> None:
    """Before a query is planned on a user's connection: where a table or view was created,
    dropped, altered or redefined, or a setting changed, since the Session read them, read the
    tables again (and forget what was planned over them). Rows changed in place leave the
    catalog as it was; they are :func:`refresh`'s and :func:`fresh_copies`'s. A Parquet file a
    view or a lazy Session's table reads that was rewritten since is read again too
    (:func:`rewritten`)."""
    if session.cluster is not None:
        return
    if session.on_user_connection:
        now = shape(session)
        if now != session.shape or rewritten(session):
            session.retake(resolve_sources(session.connection), now)
    elif session.lazy and (changed := rewritten(session)):
        again = {name: type(source)(source.files) for name, source in changed.items()}
        session.retake(session.sources() | again, session.shape)


def rewritten(session: Session) -> dict[str, ParquetSource]:
    """The Parquet sources the Session's tables read as they are now (the connection's views,
    a lazy Session's folders), by name, whose files changed since their metadata was read
    (``ParquetSource.changed``): DuckDB reads each file as it is when the query runs, so counts
    and row groups read before would cut its rows wrong; a view's glob is matched again. A
    file a query read inline is ``inline_files.adopt``'s to take again."""
    return {
        name: source
        for name, source in session.sources().items()
        if isinstance(source, ParquetSource)
        and name not in session.inline_files
        and source.stale(session.host.cursor)
    }


def refresh(session: Session, table: str | None) -> str | None:
    """Before ``table`` is split: read a connection table's rowid span and gaps again (one
    statement), so rows appended since are split too and gaps a DELETE left are seen. Returns
    why the query must be answered unsplit instead, or None."""
    source = session.source_of(table)
    if isinstance(source, ConnectionSource):
        name = source.name.lower()
        try:
            span, count = source.span()
        except duckdb.Error:
            return f"table {source.name} is no longer a table of the connection"
        session.row_counts[name] = span
        if span != count:
            session.gapped.add(name)
        else:
            session.gapped.discard(name)
    return None


@contextmanager
def fresh_copies(session: Session, compiled: CompiledSplit) -> Iterator[None]:
    """While a split runs: give a copying device the connection's tables the partial reads
    besides its split rows (read by rowid range, or in chunks under a budget), as they are
    now, only the columns the query reads; the split table too where the partial reads it
    again whole (a self-join read the copy from the Session's opening: DuckDB's
    test_join_is_not_distinct.test, one Session kept across the file). The device lets them
    go after."""
    device = session.device
    if not session.on_user_connection or not copies_rows(device) or compiled.partial is None:
        yield
        return
    # The partial reads the split rows as its placeholder, and the split table by its name
    # only where it reads it again whole (a self-join); names of CTEs are no sources.
    # (A Polars arm names what its own SQL reads: not what the host computes for it.)
    reads = getattr(device, "tables_read", None)
    read = reads(compiled) if callable(reads) else None
    if read is None:
        read = {table.name.lower() for table in compiled.partial.find_all(exp.Table)}
    named = sorted(read)
    live = {
        name: source
        for name in named
        if isinstance(source := session.source_of(name), ConnectionSource)
    }
    take = getattr(device, "fresh", None)
    if not callable(take):  # an arm that holds whole tables only
        load_resident(live, [device], device)
        yield
        return
    # The device holds one query's fresh rows at a time: queries from several threads take
    # turns here (another's rows lack the columns this one reads; its end lets them go).
    with session.fresh_lock:
        take(
            {
                name: arrow_for_device(name, source, device, columns_read(session, compiled, name))
                for name, source in live.items()
            }
        )
        try:
            yield
        finally:
            take({})


__all__ = ["copies_rows", "fresh_copies", "follow", "refresh", "rewritten", "shape"]
