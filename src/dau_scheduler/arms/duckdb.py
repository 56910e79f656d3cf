"""The DuckDB arm: native tables in one in-memory database; an arm's rows are a rowid range."""

from __future__ import annotations

import contextlib
import itertools
import re
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from dau_scheduler import callers
from dau_scheduler.errors import SqlError
from dau_scheduler.guards import default_collation, default_order, ordered_by_default
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.planner import PARTIALS, PLACEHOLDER, CompiledSplit
from dau_scheduler.tables import ArrowSource, ParquetSource, ParquetViewSource, Source

_TOKEN = re.compile(rf"\b{PLACEHOLDER}\b")
_ROWS = itertools.count()
# Final and refold queries read the partials through a local variable of this exact name.
if PARTIALS != "__dau_partials":  # pragma: no cover
    raise ImportError("the final query's partials table must be named __dau_partials")


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


#: Connection-local settings that ``duckdb_settings()`` does not list (DuckDB 2.0), synced too:
#: ``regex_match_operator_semantics`` decides whether ``~`` parses as a full or partial match
#: (DuckDB's test/sql/function/string/regex_operators.test); ``debug_force_no_cross_product``
#: makes a query that needs a cross product raise: a split answered where DuckDB raises, and
#: its own queries may need one where the user's does not (``refusals.connection_state``;
#: test/optimizer/joins/required_cross_product_activation.test, once its loop ran).
HIDDEN_LOCAL_SETTINGS = ("regex_match_operator_semantics", "debug_force_no_cross_product")
#: Settings that change what an expression computes, at DuckDB's defaults. An arm that is not
#: DuckDB follows the defaults only: under ``integer_division = true`` Polars' ``/`` of two
#: integers gave another sum, and under ``ieee_floating_point_ops = false`` its ``sqrt(-1)``
#: gave NaN where DuckDB raises.
SEMANTIC_DEFAULTS = {"integer_division": "false", "ieee_floating_point_ops": "true"}
#: Settings that change the Arrow every partial crosses in, at DuckDB's defaults: under
#: ``arrow_lossless_conversion = true`` a HUGEINT partial came out as an opaque extension type
#: the fold has no kernel for (a crash where DuckDB answered), whatever the device.
ARROW_DEFAULTS = {"arrow_lossless_conversion": "false"}
#: Settings under which DuckDB answers with whichever row its scan meets first, at DuckDB's
#: defaults: under ``scalar_subquery_error_on_multiple_rows = false`` a scalar subquery of many
#: rows is its ``first`` row, which over the arms' partials (several Arrow batches, scanned by
#: several threads) was another row 3 times in 60 (DuckDB's test_scalar_subquery.test; DuckDB
#: itself gives varied rows over a table of many row groups).
FIRST_ROW_DEFAULTS = {"scalar_subquery_error_on_multiple_rows": "true"}
#: Settings under which DuckDB may read a Parquet file's rows from its own cache rather than
#: the file, at DuckDB's defaults: under ``NO_VALIDATION`` (or ``VALIDATE_REMOTE`` for a local
#: file) a file rewritten since DuckDB cached it is read as it was, where the arms read it as
#: it is (DuckDB's external_file_cache_validate.test: 10 for 100).
FILE_CACHE_DEFAULTS = {"validate_external_file_cache": "validate_all"}


def relational_rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    """``sql``'s rows read on a user's connection through DuckDB's relational API, which leaves
    the result of the user's last ``execute()`` as it was; a SqlError naming it where that
    result is unfinished (``execute()`` would have dropped its unread rows: the user's next
    ``fetchone()`` gave None, its ``fetchall()`` no rows). The statement takes two transaction
    ids (its bind, then its run), where ``execute()`` takes one."""
    try:
        return con.sql(sql).fetchall()
    except duckdb.ResourceInUseException as exc:
        raise SqlError(
            "the connection holds an unfinished result of execute(): fetch it to its end, "
            "call complete() or abort() on the connection, or give the Session a cursor() "
            "(a statement run on the connection now would drop its unread rows)"
        ) from exc


class DuckDBArm:
    """Runs partial queries on DuckDB native tables.

    A second arm can share the first one's database (``DuckDBArm(share=host)``): both read the
    same resident tables through their own cursors, so a host/host split costs no second copy.
    ``connection=`` runs on a user's connection as it is (its tables, settings, macros): nothing
    is loaded into it, its settings are left alone, and closing the arm does not close it.
    """

    def __init__(
        self,
        *,
        share: DuckDBArm | None = None,
        threads: int | None = None,
        name: str = "duckdb",
        connection: duckdb.DuckDBPyConnection | None = None,
    ) -> None:
        self.name = name
        #: A DuckDB device runs on the host's own cores: the arms' rates do not add.
        self.shares_host_cores = True
        self.resident = True
        self._shared = share is not None or connection is not None
        self.owned = share is None and connection is None
        #: The temporary folder DuckDB spills to under a memory limit, removed by close().
        self._spill: str | None = None
        self._ordered: bool | None = None
        self._order_seen: bool | None = None
        self._collation: str | None = None
        self._txid: str | None = None
        #: The transaction id the database's next statement takes if nothing but this Session
        #: runs before it (:meth:`settle`; None when not known).
        self._mark: int | None = None
        #: Whether another statement ran on the database between :meth:`settle` and the
        #: :meth:`sync_settings` after it (:meth:`ran_since`).
        self._moved = True
        #: The transaction id the last :meth:`sync_settings` read.
        self._synced_txid: str | None = None
        self._logging = ""
        self._temporary: frozenset[str] = frozenset()
        self._place: str | None = None
        self._settings: int | None = None
        #: What :meth:`sync_settings` last read (every setting, and the local ones).
        self._synced: tuple[Any, ...] | None = None
        self._regex = "partial"
        self._no_cross = False
        self._semantics: tuple[str, ...] = ()
        self._arrow: tuple[str, ...] = ()
        self._first_row: tuple[str, ...] = ()
        self._file_cache: tuple[str, ...] = ()
        self._shared_from = share
        #: Tables attached as their Parquet files: split rows are read from the files by row
        #: number (a view has no rowid).
        self._parquet: dict[str, ParquetSource] = {}
        #: The sources :meth:`attach` made queryable on a database this arm owns, by name.
        self._attached: dict[str, object] = {}
        self._lock = threading.Lock()
        #: SET statements every cursor runs first (see ``sync_settings``).
        self._local: list[str] = share._local if share is not None else []
        if share is not None:
            self.con: duckdb.DuckDBPyConnection = share.con
        else:
            self.con = connection if connection is not None else duckdb.connect(":memory:")
        if self.owned:
            # Two arms run at once: their progress bars would write over each other (cursors
            # inherit the setting). A user's connection keeps its own.
            self.con.execute("SET enable_progress_bar = false")
        if threads is not None and self.owned:
            self.con.execute(f"SET threads = {int(threads)}")

    def orders_by_default(self) -> bool:
        """Whether this arm's connection orders as DuckDB does by default (ASC, NULLS LAST).
        Asked once on a database this arm owns (nothing else sets it); every time on a user's
        connection, whose settings may change between queries."""
        if self.owned and self._ordered is not None:
            return self._ordered
        seen, self._order_seen = self._order_seen, None  # read by sync_settings, if it ran
        self._ordered = seen if seen is not None else default_order(self.cursor())
        return self._ordered

    def collation(self) -> str:
        """This arm's connection's ``default_collation`` ('' when none): asked once on a
        database this arm owns; on a user's connection, read by :meth:`sync_settings` with
        the settings before each query."""
        if self._collation is not None and (self.owned or self._shared_from is None):
            return self._collation
        self._collation = default_collation(self.cursor())
        return self._collation

    def close(self) -> None:
        """Close the database this arm opened (a user's or a shared one stays open)."""
        if self.owned:
            self.con.close()
        if self._spill is not None:
            shutil.rmtree(self._spill, ignore_errors=True)
            self._spill = None

    def load(self, tables: dict[str, pa.Table]) -> None:
        if self._shared:
            return
        self.con.execute("SET preserve_insertion_order = true")
        for name, table in tables.items():
            self.con.register("__dau_load", table)
            try:
                self.con.execute(f"CREATE TABLE {quote(name)} AS SELECT * FROM __dau_load")
            finally:
                self.con.unregister("__dau_load")

    def load_parquet(self, name: str, files: Sequence[Path]) -> bool:
        """Copy a table in from its Parquet files, read by DuckDB itself (no Arrow copy)."""
        if self._shared:
            return True
        self.con.execute("SET preserve_insertion_order = true")
        self.con.execute(f"CREATE TABLE {quote(name)} AS SELECT * FROM {read_parquet_sql(files)}")
        return True

    def attach(self, sources: dict[str, Source]) -> None:
        """Make every source queryable: Parquet as a view DuckDB scans on demand (nothing
        loaded), Arrow copied in as ``load`` does. Split rows then come to the partial as Arrow
        (:meth:`run_partial_rows`), since views have no ``rowid``."""
        self._parquet = {n: s for n, s in sources.items() if isinstance(s, ParquetSource)}
        if self._shared:
            return
        self.con.execute("SET preserve_insertion_order = true")
        for name, source in sources.items():
            if self._attached.get(name) is source:
                continue  # (attached again with a file a query read inline: decision 028)
            if isinstance(source, ParquetViewSource):
                # A file a query read inline, named by its path: DuckDB reads the path itself
                # (a view of that name would hide the name DuckDB gives its rows).
                continue
            if isinstance(source, ParquetSource):
                self.con.execute(
                    f"CREATE OR REPLACE VIEW {quote(name)} AS SELECT * FROM "
                    f"{read_parquet_sql(source.files)}"
                )
            elif isinstance(source, ArrowSource):
                # A registered Arrow view is seen by this connection alone, not by the cursors
                # the arms run on: tables given in memory are copied in, as ``load`` does.
                self.load({name: source.table})
            else:  # pragma: no cover - resolve_sources makes only these two
                raise SqlError(f"table {name!r}: unknown source {type(source).__name__}")
            self._attached[name] = source

    def limit_memory(self, megabytes: float) -> None:
        """DuckDB's own memory limit; past it, DuckDB spills to a temporary folder of its own
        rather than failing. A shared arm leaves it to the arm that owns the database, and a
        user's connection keeps its own settings."""
        if not self.owned:
            return
        import tempfile

        if self._spill is None:
            self._spill = tempfile.mkdtemp(prefix="dau-spill-")
        self.con.execute(f"SET temp_directory = '{self._spill}'")
        self.con.execute(f"SET memory_limit = '{max(1, int(megabytes))}MB'")

    def sync_settings(self) -> None:
        """On a user's connection: note the connection-local settings it changed (``SET`` of a
        LOCAL option, such as ``scalar_subquery_error_on_multiple_rows``), which a cursor does
        not inherit, so every cursor of this arm gets them too. Global ones are shared anyway."""
        if self.owned or self._shared_from is not None:
            return
        hidden = "".join(
            f" UNION ALL SELECT '{name}', current_setting('{name}')::VARCHAR, TRUE"
            for name in HIDDEN_LOCAL_SETTINGS
        )
        # Every setting, not only the local ones: their digest tells when one changed.
        every = "SELECT name, value, scope = 'LOCAL' FROM duckdb_settings()" + hidden
        # The same statement also reads what collation() and in_transaction() ask next.
        state = (
            " UNION ALL SELECT '__dau_collation', current_setting('default_collation')::VARCHAR,"
            " NULL UNION ALL SELECT '__dau_txid', txid_current()::VARCHAR, NULL"
            " UNION ALL SELECT '__dau_logging', CASE WHEN current_setting('enable_logging')"
            " THEN 'enable_logging' WHEN current_setting('log_query_path') <> ''"
            " THEN 'log_query_path' ELSE '' END, NULL"
            " UNION ALL SELECT '__dau_place', current_database() || '.' || current_schema(), NULL"
            " UNION ALL SELECT '__dau_temporary', (SELECT string_agg(lower(name), chr(1)) FROM"
            " (SELECT table_name AS name FROM duckdb_tables() WHERE database_name = 'temp'"
            " UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = 'temp')), NULL"
        )
        # (The temporary catalog alone: DuckDB reads no other database's catalog for it, so
        # a database DuckDB invalidated (a failed CHECKPOINT) aborts no transaction the user
        # holds open here; the system catalog's views, temporary too, hide no table.)
        with self._lock:
            try:
                # The first statement of each query on the connection: an unfinished result of
                # the user's is named before anything runs (relational_rows).
                rows = relational_rows(self.con, every + state)
            except duckdb.Error:  # an aborted transaction: in_transaction sends the query there
                self._mark, self._moved = None, True
                return
        settings = sorted((str(n), str(v)) for n, v, local in rows if local is not None)
        self._settings = hash(tuple(settings))
        mine = {n: v for n, v, local in rows if local or local is None}
        self._collation = str(mine.pop("__dau_collation") or "")
        self._txid = mine.pop("__dau_txid")
        self._synced_txid = self._txid
        expected, self._mark = self._mark, None
        if expected is None or str(expected) != str(self._txid):
            self._moved = True
        every_value = dict(settings)
        self._order_seen = ordered_by_default(
            every_value.get("default_order"), every_value.get("default_null_order")
        )
        self._logging = str(mine.pop("__dau_logging") or "")
        self._place = str(mine.pop("__dau_place") or "")
        self._temporary = frozenset(str(mine.pop("__dau_temporary") or "").split(chr(1))) - {""}
        self._regex = str(mine.get("regex_match_operator_semantics") or "partial").lower()
        self._no_cross = str(mine.get("debug_force_no_cross_product")).lower() == "true"
        self._semantics, self._arrow, self._first_row, self._file_cache = (
            tuple(
                f"{name} = {every_value[name]}"
                for name, default in defaults.items()
                if str(every_value.get(name, default)).lower() != default
            )
            for defaults in (
                SEMANTIC_DEFAULTS,
                ARROW_DEFAULTS,
                FIRST_ROW_DEFAULTS,
                FILE_CACHE_DEFAULTS,
            )
        )
        if self._synced == (settings, mine):
            return  # every setting as the last time: the same ones to copy
        self._synced = (settings, mine)
        local = "SELECT name, value FROM duckdb_settings() WHERE scope = 'LOCAL'" + hidden.replace(
            "::VARCHAR, TRUE", "::VARCHAR"
        )
        fresh = dict(self.con.cursor().execute(local).fetchall())
        self._local[:] = [
            f"SET {name} = '{str(value).replace(chr(39), chr(39) * 2)}'"
            for name, value in mine.items()
            if value is not None and fresh.get(name) != value
        ]

    def settle(self) -> None:
        """At the end of a query on a user's connection: note the transaction id the
        database's next statement takes if nothing but this Session runs before it. Every
        statement on the database takes the next one, whichever connection or cursor runs it
        (``CREATE [TEMP] MACRO``, ``SET``, an INSERT, a Python function registered), so the
        next :meth:`sync_settings` tells whether another ran in between (:meth:`ran_since`).
        Not where the connection logs every statement (this one would be logged too); and
        nothing is noted inside a transaction of the user's, or while another connection to
        the database is open (a cursor of the user's), as either may commit a change later
        and a commit takes no id: the next query reads the catalog again."""
        if self.owned or self._shared_from is not None:
            return
        if self._logging:
            self._mark = None
            return
        with self._lock:
            try:
                # (On the relational API, as the settings read: an unfinished result the user
                # left on the connection is kept, the query having been refused for it.)
                now, connections = self.con.sql(
                    "SELECT txid_current(), (SELECT count FROM duckdb_connection_count())"
                ).fetchall()[0]
            except duckdb.Error:
                self._mark = None
                return
        # A commit takes no id of its own: inside a transaction of the user's (the id the
        # settings read took: a query answered on the connection), or beside another
        # connection, which may hold one open now, nothing can be told of what comes next.
        alone = str(now) != self._synced_txid and connections == 1
        # The settings read of the next query binds, then runs (relational_rows): it reads the
        # second id after the one this read ran in, if nothing else ran.
        self._mark = int(now) + 2 if alone else None

    def ran_since(self) -> bool:
        """Whether a statement other than this Session's may have run on the database since
        its last :meth:`settle` (seen by :meth:`sync_settings`; always true before the first,
        and on a database this arm owns never asked), and forget it: a second call says no
        until the next sync sees another."""
        moved, self._moved = self._moved, False
        return moved

    def connection_rows(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        """``sql``'s rows read on the connection itself, one call at a time: what only a user's
        connection sees (its temporary macros) is seen. Inside a transaction of the user's
        (``explain`` asked there, or one already aborted: :meth:`in_transaction`) on a cursor
        instead, as on a database this arm owns: a read that fails there would abort it."""
        if self.owned or self._shared_from is not None or self.in_transaction():
            return self.cursor().execute(sql, params).fetchall()
        with self._lock:
            return self.con.execute(sql, params).fetchall()

    def forbids_cross_products(self) -> bool:
        """Whether the user's connection sets ``debug_force_no_cross_product`` (at
        :meth:`sync_settings`): a split's partial and final queries may need a cross product
        the user's query does not."""
        return self._no_cross

    def settings(self) -> int | None:
        """A digest of every setting of the user's connection at :meth:`sync_settings` (None
        before it ran, or on a database this arm owns): a plan's types depend on them."""
        return self._settings

    def temporary(self) -> frozenset[str]:
        """Lower-case names of the user's connection's temporary tables and views (seen by
        :meth:`sync_settings`). DuckDB looks a name up there first, even written ``main.t``
        (the temporary catalog's schema is ``main`` too), and only the connection sees them."""
        return self._temporary

    def semantics_changed(self) -> tuple[str, ...]:
        """The :data:`SEMANTIC_DEFAULTS` the user's connection sets otherwise, as ``name =
        value`` (seen by :meth:`sync_settings`; none on a database this arm owns)."""
        return self._semantics

    def arrow_changed(self) -> tuple[str, ...]:
        """The :data:`ARROW_DEFAULTS` the user's connection sets otherwise, as ``name =
        value`` (seen by :meth:`sync_settings`; none on a database this arm owns)."""
        return self._arrow

    def first_row_changed(self) -> tuple[str, ...]:
        """The :data:`FIRST_ROW_DEFAULTS` the user's connection sets otherwise, as ``name =
        value`` (seen by :meth:`sync_settings`; none on a database this arm owns)."""
        return self._first_row

    def file_cache_changed(self) -> tuple[str, ...]:
        """The :data:`FILE_CACHE_DEFAULTS` the user's connection sets otherwise, as ``name =
        value`` (seen by :meth:`sync_settings`; none on a database this arm owns)."""
        return self._file_cache

    def regex_semantics(self) -> str:
        """How this arm's cursors read ``~``: 'partial' (DuckDB's default) unless the user's
        connection set ``regex_match_operator_semantics`` (seen by :meth:`sync_settings`)."""
        return self._regex

    def logging(self) -> str:
        """The setting by which the user's connection logs every statement DuckDB runs
        (``enable_logging``, ``log_query_path``; seen by :meth:`sync_settings`), or ''. The
        split's own statements would be logged beside the user's, and a query that reads the
        log (DuckDB's test/sql/logging) would count them. Never on a database this arm owns."""
        return self._logging

    def place(self) -> str | None:
        """``database.schema`` the user's connection stood in at :meth:`sync_settings` (None
        before it ran, or on a database this arm owns)."""
        return self._place

    def in_transaction(self) -> bool:
        """Whether the user's connection is inside an explicit transaction (BEGIN without
        COMMIT yet): its uncommitted changes are invisible to every cursor, so a query must
        be answered on the connection itself. Two statements share a transaction id only
        inside one (DuckDB's test/sql/types/struct/struct_updates.test read the pre-BEGIN
        rows). Never on a database this arm owns."""
        if self.owned or self._shared_from is not None:
            return False
        first, self._txid = self._txid, None  # read by sync_settings just before, if it ran
        with self._lock:
            try:
                if first is None:
                    first = self.con.execute("SELECT txid_current()::VARCHAR").fetchall()[0][0]
                second = self.con.execute("SELECT txid_current()::VARCHAR").fetchall()[0][0]
            except duckdb.Error:  # an aborted transaction: the connection names its error
                return True
        return bool(first == second)

    def run_on_connection(self, sql: str, params: Any = None) -> pa.Table:
        """``sql`` (with its ``params``) on the user's connection itself (not a cursor), one
        call at a time: for queries that read what only that connection sees (temporary tables
        and views)."""
        with self._lock:  # (the caller's Python objects seen, as DuckDB sees them: callers)
            return callers.run_seen(self.con, sql, params)

    def parser(self) -> duckdb.DuckDBPyConnection:
        """A cursor of this arm's database for reading statements (``extract_statements``):
        none of the connection's local settings applied, as a parse needs none."""
        return self.con.cursor()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        cursor = self.con.cursor()
        for statement in self._local:
            with contextlib.suppress(duckdb.Error):  # a setting a cursor may not take
                cursor.execute(statement)
        return cursor

    def refusal(self, compiled: CompiledSplit) -> str | None:
        return None

    def sql_for(self, compiled: CompiledSplit) -> str:
        text = compiled.arm_sql.get("duckdb")
        if text is None:
            if compiled.partial is None:
                raise SqlError("this query has no partial to run")
            text = compiled.partial.sql(dialect=DIALECT)
            compiled.arm_sql["duckdb"] = text
        return text

    def run_partial(self, compiled: CompiledSplit, start: int, stop: int) -> pa.Table:
        return self.run_partial_on(self.cursor(), compiled, start, stop)

    def run_partial_on(
        self, cursor: duckdb.DuckDBPyConnection, compiled: CompiledSplit, start: int, stop: int
    ) -> pa.Table:
        """The partial over rows ``[start, stop)`` on a given cursor (e.g. one profiling): a
        rowid range of a table, or the files' rows of a table attached as Parquet files."""
        name = compiled.plan.split_table or ""
        files = (self._shared_from or self)._parquet.get(name)
        scan = files.range_sql(int(start), int(stop)) if files is not None else None
        if scan is not None:
            rows = f"({scan})"
        else:
            rows = (
                f"(SELECT * FROM {quote(name)} WHERE rowid >= {int(start)} AND rowid < {int(stop)})"
            )
        sql = _TOKEN.sub(lambda _m: rows, self.sql_for(compiled))
        return cursor.sql(sql).to_arrow_table()

    def run_over_partials(self, sql: str, partials: pa.Table) -> pa.Table:
        """Run a final or refold query over ``partials``, which it reads as ``__dau_partials``."""
        return _over_partials(self.cursor(), sql, partials)

    def run_partial_rows(self, compiled: CompiledSplit, rows: pa.Table) -> pa.Table:
        """The partial over ``rows``, the split table's rows given as Arrow (a chunk)."""
        cursor = self.cursor()
        name = f"__dau_rows{next(_ROWS)}"
        cursor.register(name, rows)
        try:
            sql = _TOKEN.sub(lambda _m: name, self.sql_for(compiled))
            return cursor.sql(sql).to_arrow_table()
        finally:
            cursor.unregister(name)
            cursor.close()


def _over_partials(cursor: duckdb.DuckDBPyConnection, sql: str, partials: pa.Table) -> pa.Table:
    """DuckDB finds the partials by this function's local name (a replacement scan costs ~1 ms
    less per query than register/unregister). Module level: a class body would mangle it."""
    __dau_partials = partials
    return cursor.sql(sql).to_arrow_table()


def read_parquet_sql(files: Sequence[str | Path]) -> str:
    """DuckDB's scan of Parquet ``files``, in order, as SQL text."""
    listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    # A `key=value` folder is no partition of ours: each file's own columns, as the other
    # readers (Polars, pyarrow) read them.
    return f"read_parquet([{listed}], hive_partitioning = false)"


__all__ = ["DuckDBArm", "quote", "read_parquet_sql"]
