"""The SQL front end: a Session holds the tables resident in both arms and runs split SQL.

``Session.sql`` compiles the query once (cached per text and split table), then either runs the
split (partials on both arms at once, folded by the final query in DuckDB) or, when the query is
refused or the device arm fails, the unsplit query on the host, saying why.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import duckdb

from dau_scheduler import (
    answering,
    callers,
    checks,
    deciding,
    execution,
    inline_files,
    live,
    profiling,
    strategies,
)
from dau_scheduler.arms.base import Arm
from dau_scheduler.arms.cluster import ClusterArm
from dau_scheduler.arms.devices import DEVICES, DUCKDB, device_arm
from dau_scheduler.arms.duckdb import DuckDBArm, quote, relational_rows
from dau_scheduler.checks import MIN_BUDGET_MB
from dau_scheduler.compiling import compile_query, plan_holds
from dau_scheduler.errors import SplitError, SqlError
from dau_scheduler.function_catalog import FunctionCatalog
from dau_scheduler.guards import ColumnWidths, load_resident
from dau_scheduler.merge import MergeRule
from dau_scheduler.paths import profile_cache_root
from dau_scheduler.posture import WorkSplit
from dau_scheduler.profile import ProfileCache, QueryProfile
from dau_scheduler.refusals import Refusals
from dau_scheduler.rewrite.planner import CompiledSplit, SplitPlan
from dau_scheduler.rewrite.views import View, unchanged
from dau_scheduler.sql_result import SqlResult
from dau_scheduler.tables import (
    ArrowSource,
    ConnectionSource,
    ParquetSource,
    ParquetViewSource,
    Source,
    connection_place,
    connection_views,
    resolve_sources,
    table_columns,
)


class Session:
    """Tables loaded once and kept resident by both arms; split SQL over them.

    Args:
        tables: a data folder, a mapping ``name -> path | pyarrow.Table | polars.DataFrame``, or a
            DuckDB connection whose tables are used. On a connection or a lazy Session a query
            may also read a local Parquet file inline (``FROM 'x.parquet'``), split as a table
            named by its path (``inline_files``, decision 028).
        device: ``"auto"``, ``"cudf"``, ``"polars"``, ``"duckdb"``, ``None`` (host only), or an
            :class:`~dau_scheduler.arms.Arm`.
        threads: DuckDB threads for the host arm (default: DuckDB's own).
        fast_fold: fold simple partials in pyarrow rather than DuckDB (see ``rewrite.fold``).
        cache: where measured profiles live; default ``$DAU_CACHE_DIR`` or the user's cache
            folder (``.../dau-scheduler/profiles``).
        mem_budget_mb: a memory budget: nothing is loaded; each query's split table is read
            from its source chunk by chunk as ``cloud_plan`` decides (``in_memory``, ``chunked``
            or ``streamed``, reported as ``SqlResult.strategy``), and DuckDB's memory limit is
            the budget.
        strategy: force ``in_memory``, ``chunked`` or ``streamed`` under the budget instead of
            the one ``cloud_plan`` picks.
        chunk_rows: with ``chunked`` or ``streamed``, at most this many rows a chunk (default:
            what the budget allows). Smaller chunks hold less and fold more often.
        lazy: read the tables from their sources when a query runs instead of loading them
            (implied by ``mem_budget_mb``; ``run_sql`` uses it: one query need not load every
            table; and by a connection with a device other than DuckDB, whose rows may change
            between queries). Profiles are measured on resident tables only.
        cluster: run the host's share over a dask.distributed cluster (a ``Client``, a
            scheduler address ``"tcp://host:port"``, or ``"local"`` / ``"local:N"``: a
            LocalCluster of N worker processes this Session starts and closes) or on Spark (a
            ``SparkSession``, or ``"spark:local[N]"``, started and stopped here). The workers
            hold the tables (Parquet read by the workers themselves; Arrow scattered once), the
            split table's rows are placed over them, and their partials fold in a tree there;
            this process binds, plans and folds the last partial. ``execution.workers`` reports
            each worker's rows and seconds. See docs/scale-out.md.
    """

    def __init__(
        self,
        tables: Any,
        device: str | Arm | None = "auto",
        *,
        threads: int | None = None,
        fast_fold: bool = True,
        cache: ProfileCache | str | Path | None = None,
        mem_budget_mb: float | None = None,
        strategy: str | None = None,
        chunk_rows: int | None = None,
        lazy: bool | None = None,
        cluster: Any = None,
    ) -> None:
        checks.budget(mem_budget_mb)
        checks.chunk_rows(chunk_rows, mem_budget_mb)
        if threads is not None:
            checks.count("threads", threads, 1, SqlError)
        if cluster is not None and mem_budget_mb is not None:
            raise SqlError("cluster= and mem_budget_mb= together are not supported: pick one")
        if strategy is not None:
            strategies.strategy(strategy)
            if mem_budget_mb is None:
                raise SqlError(f"strategy={strategy!r} needs a memory budget (mem_budget_mb)")
        self.forced_strategy = strategy
        self.chunk_rows = chunk_rows
        arm = device_arm(device)
        self.fast_fold = fast_fold
        self.mem_budget_mb = mem_budget_mb
        self.lazy = mem_budget_mb is not None if lazy is None else bool(lazy)
        if isinstance(tables, duckdb.DuckDBPyConnection):
            relational_rows(tables, "SELECT 1")  # an unfinished result of the user's, named
        sources = resolve_sources(tables)  # bad tables are named before a cluster starts
        connection = None
        if cluster is not None:
            from dau_scheduler.planner import clusters

            connection = clusters.connect(cluster)  # a bad one fails before any loading
            self.lazy = True  # this process reads the tables only to bind and plan
        self.cache = (
            cache
            if isinstance(cache, ProfileCache)
            else ProfileCache(cache if cache is not None else profile_cache_root())
        )
        given = tables if isinstance(tables, duckdb.DuckDBPyConnection) else None
        self.host = DuckDBArm(threads=threads, connection=given)
        if arm == DUCKDB:
            # With a cluster the host only binds and plans (over views): the device DuckDB
            # holds its own copy of the rows it cuts.
            arm = (
                DuckDBArm(name="duckdb")
                if cluster is not None
                else DuckDBArm(share=self.host, name="duckdb")
            )
        assert not isinstance(arm, str)
        if callable(lean := getattr(arm, "use_host", None)):
            lean(self.host.cursor)  # subqueries it cannot compute as DuckDB does (polars_hoist)
        self.device: Arm | None = arm
        self._given = given
        #: ``database.schema`` a given connection stood in when its tables were listed.
        place = connection_place(given) if given is not None else None
        self.place = ".".join(place) if place is not None else None
        #: (database, schema) the Session's tables live in, for qualified references.
        self.tables_place = place or ("memory", "main")
        #: What the connection's catalog held when its tables were read (``live.follow``).
        if given is not None:
            self.host.sync_settings()
        self.shape = live.shape(self) if given is not None else frozenset()
        #: Parquet files queries read inline, taken as tables (``inline_files.adopt``).
        self.inline_files: dict[str, inline_files.Taken] = {}
        #: Those not taken after their metadata was read: the files' stamps then, and why.
        self.inline_left: dict[str, tuple[tuple[Any, ...], str]] = {}
        self._take(sources)
        self.cluster: ClusterArm | None = None
        if connection is not None:
            self.host.attach(sources)
            if self.device is not None:  # the device keeps its rows resident here
                load_resident(sources, [self.device], self.device)
            try:
                self.cluster = ClusterArm(connection.open(sources), self.host)
            except BaseException:
                connection.close()
                raise
        elif self.lazy:
            self._attach(sources)
        else:
            # A user's connection is read where it is: both arms are DuckDB here (a device that
            # copies reads it lazily, above).
            arms = [arm for arm in (self.host, self.device) if arm is not None]
            load_resident(sources if given is None else {}, arms, self.device)
            kept = (ParquetSource, ConnectionSource)
            sources = {n: s for n, s in sources.items() if isinstance(s, kept)}
        self._sources = sources
        self._read_schema()
        #: The catalog's aggregates (macros that aggregate too) and volatile macros.
        # (a user's connection read itself: its temporary macros are not its cursors')
        self.functions = FunctionCatalog(self.host.connection_rows, fresh=not self.host.owned)
        self._forget()
        self._lock = threading.Lock()
        self._adopting = threading.Lock()
        #: Held by a query while it runs under the memory budget: the budget is the Session's,
        #: so queries from several threads take turns rather than each assume all of it.
        self.budget_lock = threading.Lock() if mem_budget_mb is not None else None
        #: Held while a copying device holds one query's rows of a user's connection
        #: (``live.fresh_copies``).
        self.fresh_lock = threading.Lock()
        self._closed = False

    def _take(self, sources: dict[str, Source]) -> None:
        """What the Session knows of its tables' rows: their counts, gaps and widths."""
        #: The connection's views split as the Parquet files they read (decision 023).
        self.parquet_views = {
            name: source
            for name, source in sources.items()
            if isinstance(source, ParquetViewSource)
        }
        if self._given is not None and (live.copies_rows(self.device) or self.parquet_views):
            # A device that holds copies cannot tell when the connection's rows change: it
            # reads what each query reads when the query runs (decision 023). A view has no
            # rowid to cut by: its files are read in chunks, for both arms.
            self.lazy = True
        #: Rows of every table, and the Arrow bytes of every column by lower-case name. (A
        #: connection's table counts its rowid span: rows deleted leave gaps in it.)
        spans = {n: s.span() for n, s in sources.items() if isinstance(s, ConnectionSource)}
        self.row_counts = {
            name: spans[name][0] if name in spans else source.num_rows
            for name, source in sources.items()
        }
        self.gapped = {name for name, (span, count) in spans.items() if span != count}
        self.column_nbytes: Mapping[str, Mapping[str, int]] = ColumnWidths(sources)

    def _read_schema(self) -> None:
        #: table -> column -> DuckDB type, as the host holds them.
        self.schema = table_columns(self.host.cursor(), self.tables_place, self.row_counts)
        for name, taken in self.inline_files.items():
            if name in self.schema and not self.schema[name]:
                self.schema[name] = dict(taken.columns)

    def _forget(self) -> None:
        """Drop every plan and refusal worked out over the tables as they were."""
        self._plans: dict[tuple[str, str | None, bool], CompiledSplit] = {}
        self._plan_keys: dict[tuple[str, str | None], str] = {}
        #: Queries whose split ran and did not fold (ill-conditioned moments): the reason, by
        #: (query as read, split table). They are answered unsplit from then on, not run twice.
        self.unfolded: dict[tuple[str, str | None], str] = {}
        self.refusals = Refusals(self)

    def retake(self, sources: dict[str, Source], shape: frozenset[tuple[Any, ...]]) -> None:
        """A user's connection whose catalog changed (``live.follow``): its tables read again,
        as at opening, and everything planned over them forgotten."""
        self._take(sources)
        if self.lazy:
            self._attach(sources)
        self._sources = sources
        self._read_schema()
        self._forget()
        self.shape = shape

    def _attach(self, sources: dict[str, Source]) -> None:
        for arm in (self.host, self.device):
            if arm is not None and not callable(getattr(arm, "attach", None)):
                raise SqlError(
                    f"the {arm.name} arm cannot read tables lazily (no attach); open the "
                    "Session without mem_budget_mb or lazy"
                )
        self.host.attach(sources)
        if self.device is not None:
            self.device.attach(sources)  # type: ignore[attr-defined]
        if self.mem_budget_mb is not None:
            self.host.limit_memory(self.mem_budget_mb * strategies.HOST_FRACTION)
            limit = getattr(self.device, "limit_memory", None)
            if callable(limit):
                limit(self.mem_budget_mb * strategies.DEVICE_FRACTION)

    def sources(self) -> dict[str, Source]:
        """The sources of the tables the Session reads from where they are (a copy)."""
        return dict(self._sources)

    def source_of(self, name: str | None) -> Source | None:
        """Table ``name``'s source as given (None for one given in memory, or no table)."""
        return self._sources.get(name or "")

    def source(self, name: str) -> Source:
        """Where table ``name``'s rows come from: its Parquet files, else its Arrow rows (read
        back from the host's copy when the Session was given them in memory)."""
        found = self._sources.get(name)
        if found is None:
            if name not in self.row_counts:
                raise SqlError(f"no table {name!r}; tables: {', '.join(sorted(self.row_counts))}")
            found = ArrowSource(self.host.cursor().table(quote(name)).to_arrow_table())
        return found

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close what this Session opened; a DuckDB connection it was given stays open."""
        if not self._closed:
            if self.cluster is not None:
                self.cluster.close()
            self.host.close()
            self._closed = True

    # -- compiling ---------------------------------------------------------------------------

    def compile(
        self, sql: str, split_table: str | None = None, *, vetted: bool = False
    ) -> CompiledSplit:
        """The compiled split for ``sql`` (cached), validating the query first; ``vetted``: the
        first candidate block the device arm can run (``compiling.compile_query``)."""
        if self._closed:
            raise SqlError("this Session is closed")
        checks.query(sql, split_table)
        live.follow(self)  # a user's connection may have changed its tables since
        with self._adopting:
            inline = inline_files.adopt(self, sql)  # files the query reads inline: tables
        key = (sql, split_table.lower() if split_table else None, vetted)
        with self._lock:
            cached = self._plans.get(key)
        if (
            cached is not None
            and unchanged(cached.views, self.views)
            and plan_holds(self, cached)  # (float sums the data's statistics bounded)
        ):
            return cached
        compiled = compile_query(self, sql, split_table, vetted=vetted)
        if inline is not None and compiled.plan.refusal and compiled.plan.split_table is None:
            why = f"{inline} ({compiled.plan.refusal})"  # (the file's reason, then the plan's)
            compiled = dataclasses.replace(
                compiled, plan=compiled.plan.model_copy(update={"refusal": why})
            )
        with self._lock:
            self._plans[key] = compiled
        return compiled

    def views(self, names: Collection[str]) -> dict[str, View]:
        """The persistent views among ``names`` where this Session's tables live."""
        return connection_views(self.host.cursor(), self.tables_place, names)

    @property
    def on_user_connection(self) -> bool:
        """Whether the host arm runs on the DuckDB connection the user gave (its tables are then
        read in place, as they stand there)."""
        return not self.host.owned and isinstance(self._given, duckdb.DuckDBPyConnection)

    @property
    def connection(self) -> duckdb.DuckDBPyConnection | None:
        """The DuckDB connection the user gave as ``tables``, or None."""
        return self._given

    def plan_key(self, compiled: CompiledSplit) -> str:
        """The profile key of a compiled query (see ``profiling.plan_key``), computed once."""
        key = (compiled.read_sql, compiled.plan.split_table)
        if key not in self._plan_keys:
            self._plan_keys[key] = profiling.plan_key(compiled, self.schema)
        return self._plan_keys[key]

    @answering.settles
    def explain(
        self,
        sql: str,
        split_table: str | None = None,
        *,
        params: Sequence[Any] | Mapping[str, Any] | None = None,
    ) -> SplitPlan:
        """The split plan ``sql`` (with ``params`` written in, as ``sql`` takes them) runs
        with where the device arm gets rows, or why it is refused: nothing is executed (the
        device arm is asked whether it can run a partial)."""
        sql, unread = answering.written_in(self, sql, params)
        if unread is not None:
            return SplitPlan(refusal=unread)
        # (the caller's frame: 1 is answering.settles' wrapper)
        compiled = self._compiled(sql, split_table, sys._getframe(2))
        if isinstance(compiled, str):
            return SplitPlan(refusal=compiled)
        compiled, refusal = answering.runs_with(self, compiled, split_table)
        if refusal is None or refusal == compiled.plan.refusal:
            return compiled.plan
        return compiled.plan.model_copy(update={"refusal": refusal})

    def _compiled(
        self, sql: str, split_table: str | None, frame: FrameType | None
    ) -> CompiledSplit | str:
        """:meth:`compile`, or why DuckDB alone reads the query: it names a Python object of
        the code at ``frame`` (``callers``), which the Session's cursors cannot bind."""
        with callers.kept(frame):
            try:
                return self.compile(sql, split_table)
            except SqlError as exc:
                why = callers.unbound(str(exc))
                if why is None:
                    raise
                return why

    # -- running -----------------------------------------------------------------------------

    def merge_rule(self, compiled: CompiledSplit) -> MergeRule:
        """How partials of ``compiled`` fold (``execution.merge_rule``)."""
        return execution.merge_rule(self, compiled)

    def sql(
        self,
        sql: str,
        *,
        posture: str = "adaptive",
        device_share: float | None = None,
        split_table: str | None = None,
        strict: bool = False,
        profile: str = "cached",
        params: Sequence[Any] | Mapping[str, Any] | None = None,
    ) -> SqlResult:
        """Run ``sql`` split between the arms; the answer is DuckDB's unsplit answer.

        ``params`` are the values of the query's parameters (a list for ``?`` and ``$1``, a
        dict for ``$name``), as DuckDB's ``execute(sql, params)`` takes them; they are written
        into the query as the constants DuckDB binds them as (``parameters``), or the query is
        answered unsplit with them, by name.

        ``profile="auto"`` lets ``collaborative`` (and ``adaptive``) measure a missing profile
        once and store it; with ``"cached"`` a missing one is a :class:`PostureError` naming the
        command that measures it. A stale profile is always re-measured, never trusted.

        Raises:
            SqlError: bad SQL, unknown table/column/posture, a bad share (before anything runs).
            SplitError: ``strict=True`` and the query is refused or the device arm fails.
            PostureError: ``collaborative`` without the measurements it needs.
        """
        turn = self.budget_lock if self.budget_lock is not None else contextlib.nullcontext()
        with turn, callers.kept(sys._getframe(1)):  # (DuckDB reads its caller's objects)
            return answering.answer(
                self,
                sql,
                posture=posture,
                device_share=device_share,
                split_table=split_table,
                strict=strict,
                profile=profile,
                params=params,
            )

    # -- profiles and postures -----------------------------------------------------------------

    @answering.settles
    def profile(
        self,
        sql: str,
        *,
        arm: str = "host",
        split_table: str | None = None,
        params: Sequence[Any] | Mapping[str, Any] | None = None,
    ) -> QueryProfile:
        """Measure one arm over ranges of the split table (the device its first rows, the host
        its last: the side of a cut each takes), store the profile, return it."""
        if arm not in ("host", "device"):
            raise SqlError(f"unknown arm {arm!r}; expected 'host' or 'device'")
        sql, unread = answering.written_in(self, sql, params)
        if unread is not None:
            raise SplitError(f"query refused for splitting, nothing to profile: {unread}")
        found = self.compile(sql, split_table)
        compiled, refusal = answering.runs_with(self, found, split_table)
        if refusal is not None:
            raise SplitError(f"query refused for splitting, nothing to profile: {refusal}")
        measured = profiling.measure(self, compiled, arm=arm)
        self.cache.put(measured)
        return measured

    @answering.settles
    def plan(
        self,
        sql: str,
        *,
        posture: str = "collaborative",
        profile: str = "cached",
        split_table: str | None = None,
        params: Sequence[Any] | Mapping[str, Any] | None = None,
    ) -> WorkSplit:
        """The work split ``sql`` would run with and why; only profiles are measured (``auto``)."""
        checks.options(posture, profile)
        sql, unread = answering.written_in(self, sql, params)
        if unread is not None:
            return _unsplit(unread)
        found = self._compiled(sql, split_table, sys._getframe(2))  # (as in explain)
        if isinstance(found, str):
            return _unsplit(found)
        compiled, refusal = answering.runs_with(self, found, split_table)
        if refusal is not None:
            return _unsplit(refusal)
        decided = deciding.decide_for(self, compiled, posture, None, auto=profile == "auto")
        return decided.split


def _unsplit(why: str) -> WorkSplit:
    """The work split of a query refused for splitting because ``why``: the host alone."""
    return WorkSplit(posture="cpu", device_share=0.0, rationale=f"refused, runs unsplit: {why}")


def run_sql(
    sql: str,
    tables: Any,
    *,
    device: str | Arm | None = "auto",
    mem_budget_mb: float | None = None,
    strategy: str | None = None,
    cluster: Any = None,
    **kwargs: Any,
) -> SqlResult:
    """A one-shot Session: run ``sql`` split over ``tables`` and close. Tables are read from
    their sources as the query needs them, not loaded whole (``Session(lazy=True)``); with
    ``cluster``, the host's share runs on that dask cluster (``Session(cluster=...)``)."""
    with (
        callers.kept(sys._getframe(1)),
        Session(
            tables,
            device=device,
            mem_budget_mb=mem_budget_mb,
            strategy=strategy,
            lazy=True,
            cluster=cluster,
        ) as session,
    ):
        return session.sql(sql, **kwargs)


__all__ = ["DEVICES", "MIN_BUDGET_MB", "Session", "SqlResult", "run_sql"]
