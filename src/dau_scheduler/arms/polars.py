"""The Polars arm: the partial query through Polars' SQL front end, on the CPU engine or, as the
``cudf`` arm, on the GPU engine (cudf-polars) with ``raise_on_fail=True``.

The partial is first translated to SQL Polars computes exactly as DuckDB does
(``arms/polars_sql.py``); what it cannot translate is refused by name. Every partial is then cast
to the host's partial schema with a safe cast, so a value Polars did not compute exactly raises
rather than merging as a wrong answer.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dau_scheduler.arms import polars_hoist
from dau_scheduler.arms.base import cast_partial
from dau_scheduler.arms.polars_bounds import DataBoundsOf, check_live_bounds
from dau_scheduler.arms.polars_facts import TableFacts
from dau_scheduler.arms.polars_frames import (
    ASCII_LOWER,
    lowercase_names,
    sql_types_of,
    widen_decimals,
)
from dau_scheduler.arms.polars_gpu import UNTRANSLATED, collect, gpu_available, gpu_engine
from dau_scheduler.arms.polars_values import (
    beyond_polars,
    panics_on_import,
    parquet_beyond_polars,
)
from dau_scheduler.errors import SqlError
from dau_scheduler.guards import arrow_for_device
from dau_scheduler.hive import polars_frame
from dau_scheduler.lazy import LazyModule, empty_table
from dau_scheduler.rewrite.planner import PLACEHOLDER, CompiledSplit
from dau_scheduler.tables import ConnectionSource, ParquetSource, ParquetViewSource, Source

if TYPE_CHECKING:
    import polars as pl

    from dau_scheduler.arms import polars_joins
    from dau_scheduler.arms import polars_sql as _sql
else:
    pl = LazyModule("polars")  # imported when a query first reaches this arm
    # The translation (and sqlglot's Postgres dialect under it, ~45 ms) likewise.
    _sql = LazyModule("dau_scheduler.arms.polars_sql")
    polars_joins = LazyModule("dau_scheduler.arms.polars_joins")


def _import_errors() -> tuple[type[BaseException], ...]:
    """What importing an Arrow column Polars does not support raises (an empty one panics)."""
    return (
        pl.exceptions.PolarsError,
        pl.exceptions.PanicException,
        pa.ArrowException,
        TypeError,
        ValueError,
    )


#: Numbers the arms made in this process (``PolarsArm._sql_key``).
_ARM_NUMBERS = itertools.count()


class PolarsArm(TableFacts):
    """Runs partial queries with Polars; ``engine="gpu"`` makes it the ``cudf`` arm."""

    def __init__(
        self,
        *,
        engine: str = "cpu",
        name: str | None = None,
        own_cores: bool = False,
        gpu_executor: str = "in-memory",
    ) -> None:
        if engine not in {"cpu", "gpu"}:
            raise SqlError(f"unknown Polars engine {engine!r}; expected 'cpu' or 'gpu'")
        self.engine = engine
        self.name = name or ("cudf" if engine == "gpu" else "polars")
        #: This arm's key in ``CompiledSplit.arm_sql``: its SQL names the subqueries its own
        #: ``host_values`` computes, so two arms of one name (a Session's and one made for a
        #: calibration or a resident handle) each translate a query for themselves.
        self._sql_key = f"{self.name}#{next(_ARM_NUMBERS)}"
        #: The CPU engine runs on the host's cores (the arms' rates do not add), unless the
        #: machine's cores were partitioned between the arms (``own_cores``: see docs/cores.md);
        #: the GPU does not.
        self.shares_host_cores = engine == "cpu" and not own_cores
        #: Frames live in host memory: on the GPU every collect moves its input over the link.
        self.resident = engine == "cpu"
        #: A decimal made a float is converted through its text, as DuckDB rounds it
        #: (``polars_doubles``); on the GPU engine, whose reading of text the GPU kit has not
        #: yet measured, such a conversion is refused.
        self.exact_conversions = engine == "cpu"
        #: Integer arithmetic and narrowed decimal products DuckDB checks for overflow are
        #: computed wide and cast back strictly; the GPU engine's casts do not check, so there
        #: they are refused (``polars_gpu``). So are ``ln``, ``exp`` and ``pow``, which the GPU
        #: computes otherwise than DuckDB in the last bit (``exact_math``).
        self.checked_casts = engine == "cpu"
        self.exact_math = engine == "cpu"
        #: NaN equals NaN and ranks above every number in the engine's comparisons, as in
        #: DuckDB (Polars' CPU engine); the GPU engine's are IEEE's (``polars_floats``).
        self.nan_ordered = engine == "cpu"
        #: Polars has no byte limit: host bytes it holds per Arrow byte of what it reads while
        #: a partial runs (its streaming engine, measured on TPC-H SF 1 under a budget: Q3 1.9,
        #: Q18 1.7; Q1, which computes expressions over every row, more: at 2.0 its peak reached
        #: 1.50-1.57x a 256 MB budget, at 2.5 1.43-1.47x; see ``strategies.fit_device``). The
        #: GPU engine holds its working set in device memory.
        self.host_bytes_per_input_byte: float | None = 2.5 if engine == "cpu" else None
        self.frames: dict[str, pl.LazyFrame] = {}
        #: table -> column -> SQL type of the frames held; columns Polars could not import.
        self.types: dict[str, dict[str, str]] = {}
        #: The same as the data has them (before decimals are widened to DECIMAL_SCALE).
        self.stored_types: dict[str, dict[str, str]] = {}
        self.unloaded: dict[tuple[str, str], str] = {}
        #: table -> why no frame of it could be made (a query that reads it is refused).
        self.unreadable: dict[str, str] = {}
        #: Whether ``refusal`` also runs the partial on an empty slice of the split table. The GPU
        #: engine finds what it does not support only when it runs (``raise_on_fail``); planning
        #: is enough on the CPU. It costs one run over the other tables, once per query.
        self.probe_runs = engine == "gpu"
        #: The CPU engine is Polars' streaming one (bounded morsels, not whole intermediate
        #: frames): at TPC-H SF 1 over all of ``lineitem`` its peak is 0.25-0.84x the in-memory
        #: engine's (Q1 491 against 1993 MiB, Q18 1020 against 3317 MiB), its time 0.93x
        #: (geometric mean of the 22; Q1 0.39x, Q12 1.65x) (docs/benchmarks.md, seventeenth
        #: session; decision 026). ``"in-memory"`` is Polars' other CPU engine
        #: (``bench-queries/polars_engines.py`` compares the two).
        self.collect_engine: Any = "streaming"
        self._attached: dict[str, Source] = {}
        #: A user's connection's tables (decision 023, revised): their frames hold no rows,
        #: only columns and types; each query is given the rows it reads (:meth:`fresh`).
        self._live: dict[str, ConnectionSource] = {}
        #: Tables held as scans of their Parquet files, read with Arrow's types.
        self._scans_as_arrow: set[str] = set()
        self._fresh: dict[str, pl.LazyFrame] = {}
        self._attaching = threading.Lock()
        # The data's facts (``TableFacts``); a table held again forgets its columns' facts.
        self._unique, self._ascii, self._years, self._heights = {}, {}, {}, {}
        self._counts, self._magnitudes, self._nans = {}, {}, {}
        #: Subqueries the host computes for this arm (``polars_hoist``), once it has a host.
        self.host_values = polars_hoist.HostValues()
        if engine == "gpu":
            self.collect_engine = gpu_engine(gpu_executor)

    def use_host(self, cursor: Callable[[], duckdb.DuckDBPyConnection]) -> None:
        """Let the host compute the subqueries Polars cannot compute as DuckDB does (a float
        fold compared with rows: ``polars_hoist``; a CTE, derived table or IN list over whole
        tables the arm cannot run: ``polars_host_tables``), on cursors of its connection."""
        self.host_values.use(cursor)

    def load(self, tables: dict[str, pa.Table]) -> None:
        """Hold every table as a Polars frame (beside those already held). A column Polars
        cannot import (an Arrow interval, say) is left out and named in :attr:`unloaded`; a
        query that reads it is refused."""
        for name, table in tables.items():
            self._hold(name, self._import(name, table).lazy())

    def load_parquet(self, name: str, files: Sequence[Path]) -> bool:
        """Hold a table read from its Parquet files by Polars itself (no Arrow copy), when
        Polars reads them with the types it gives the same table through Arrow; False (load it
        through Arrow) otherwise."""
        if self._without_raw(name, ParquetSource(tuple(files))):
            return True
        try:
            frame = pl.read_parquet([str(f) for f in files])
        except _import_errors():
            return False
        if not self._as_arrow(frame.lazy(), files):
            return False
        self._hold(name, self._without_beyond(name, frame.lazy(), files))
        return True

    def _without_raw(self, name: str, source: ParquetSource) -> bool:
        """Where pyarrow reads a column of ``source`` as raw bytes (a Parquet INTERVAL, whose
        schema Polars' own reader panics on), hold the table through pyarrow without it, named
        in :attr:`unloaded`; so too where a file's row total is not its row groups' (Polars'
        reader reads the total). False where neither is so: Polars may read the files."""
        raw = source.reader_forms().raw_columns()
        if not raw and source.totals_agree:
            return False
        names = source.arrow_schema_names()
        for column in names:
            if column.lower() in raw:
                self.unloaded[(name, column)] = raw[column.lower()]
        kept = [c for c in names if c.lower() not in raw]
        self._hold(name, self._import(name, source.arrow(kept)).lazy())
        return True

    def _without_beyond(
        self, name: str, frame: pl.LazyFrame, files: Sequence[Path]
    ) -> pl.LazyFrame:
        """``frame`` (Polars' own reading of ``files``) less the columns holding what Polars
        reads otherwise than DuckDB, named in :attr:`unloaded` as :meth:`_import` names them."""
        found = parquet_beyond_polars(files)
        self.unloaded.update({(name, column): why for column, why in found.items()})
        return frame.drop(list(found)) if found else frame

    @staticmethod
    def _as_arrow(frame: pl.LazyFrame, files: Sequence[Path]) -> bool:
        """Whether Polars reads ``files`` as ``frame`` with the types it gives them through
        Arrow (as the host and a chunk see them)."""
        try:
            through_arrow = pl.from_arrow(empty_table(pq.read_schema(files[0])))
            return (
                isinstance(through_arrow, pl.DataFrame)
                and frame.collect_schema() == through_arrow.schema
            )
        except _import_errors():
            return False

    def scans_as_arrow(self, name: str) -> bool:
        """Whether table ``name`` is held as a scan of its Parquet files that reads them with
        the types Arrow gives them: a row range of it is then read by the scan itself."""
        self._ready([name])
        return name in self._scans_as_arrow

    def attach(self, sources: dict[str, Source]) -> None:
        """Every source as a lazy frame: Parquet scanned when a query runs (only the columns
        and rows it needs), Arrow imported as :meth:`load` does. A table's frame is made when
        the first query that reads it reaches this arm (a query the host runs alone never
        imports Polars; a one-shot query over one of eight tables reads one file's schema)."""
        self.frames, self.types, self.unloaded, self._unique = {}, {}, {}, {}
        self.stored_types, self._ascii, self._years, self._counts = {}, {}, {}, {}
        self._nans = {}
        self.unreadable, self._heights, self._magnitudes = {}, {}, {}
        self._attached = dict(sources)
        self._live, self._fresh, self._scans_as_arrow = {}, {}, set()
        self.host_values.forget()

    def _ready(self, names: Iterable[str] | None = None) -> None:
        """Make the frames of the sources :meth:`attach` was given, once each: of ``names``
        (those a query reads), or of all of them."""
        with self._attaching:
            unreadable: tuple[type[BaseException], ...] = (*_import_errors(), OSError, SqlError)
            wanted = list(self._attached) if names is None else names
            for name in [n for n in wanted if n in self._attached]:
                source = self._attached.pop(name)
                try:
                    self._make_frame(name, source)
                except unreadable as exc:
                    # A file Polars' reader finds out of specification (DuckDB's
                    # parquet-testing dict-page-offset-zero.parquet), and pyarrow's too.
                    self.unreadable[name] = _first_line(exc)

    @staticmethod
    def _tables_read(compiled: CompiledSplit) -> list[str]:
        """The tables the partial reads, in the order it names them first, the split table for
        its placeholder."""
        if compiled.partial is None:
            return []
        split = compiled.plan.split_table or ""
        names = (
            split if table.name == PLACEHOLDER else table.name.lower()
            for table in compiled.partial.find_all(exp.Table)
        )
        return list(dict.fromkeys(names))

    def _make_frame(self, name: str, source: Source) -> None:
        if isinstance(source, ParquetSource):
            if self._without_raw(name, source):
                return
            scan = pl.scan_parquet([str(f) for f in source.files])
            try:
                scan.collect_schema()
            except _import_errors():  # Polars cannot read the files: pyarrow's reading
                self._hold(name, self._import(name, source.arrow()).lazy())
                return
            if self._as_arrow(scan, source.files):
                self._scans_as_arrow.add(name)
            scan = self._without_beyond(name, scan, source.files)
            hive = source.hive if isinstance(source, ParquetViewSource) else None
            if hive is not None:  # (DuckDB's hive columns: per-file constants, hive.py)
                kept = set(scan.collect_schema().names())
                dropped = [c for c in pq.read_schema(source.files[0]).names if c not in kept]
                scan = polars_frame(source.files, source.file_rows(), hive.values, dropped)
            self._hold(name, scan)
        elif isinstance(source, ConnectionSource):
            empty = arrow_for_device(name, source, self, limit=0)
            self._hold(name, self._import(name, empty).lazy())
            self._live[name] = source
        else:
            self._hold(name, self._import(name, source.arrow()).lazy())

    def _import(self, name: str, table: pa.Table) -> pl.DataFrame:
        for column in table.column_names:
            kind = table.schema.field(column).type
            if panics_on_import(kind):
                self.unloaded[(name, column)] = str(kind)
            elif (beyond := beyond_polars(table.column(column))) is not None:
                self.unloaded[(name, column)] = f"{kind} holding {beyond}"
            else:
                continue
            table = table.drop_columns([column])
        try:
            frame = pl.from_arrow(table)
        except _import_errors():
            kept = []
            for column in table.column_names:
                try:
                    pl.from_arrow(table.select([column]).slice(0, 1))
                    kept.append(column)
                except _import_errors():
                    self.unloaded[(name, column)] = str(table.schema.field(column).type)
            frame = pl.from_arrow(table.select(kept))
        if not isinstance(frame, pl.DataFrame):
            raise SqlError(f"table {name!r} did not load as a Polars DataFrame")
        return frame.rechunk()

    def _hold(self, name: str, frame: pl.LazyFrame) -> None:
        frame = lowercase_names(frame)
        self.stored_types[name] = sql_types_of(frame)
        frame = widen_decimals(frame)
        self.frames[name] = frame
        self._heights.pop(name, None)
        self.host_values.forget()
        for facts in (
            self._ascii,
            self._years,
            self._nans,
            self._unique,
            self._counts,
            self._magnitudes,
        ):
            for key in [key for key in facts if key[0] == name]:
                del facts[key]
        self.types[name] = sql_types_of(frame)

    def fresh(self, tables: dict[str, pa.Table]) -> None:
        """Hold ``tables``, rows of a user's connection's tables as they are now (the columns
        one query reads), over the frames of those tables until the next call (``{}`` lets
        them go): the partials read them, the planning keeps every column's frame."""
        self._ready(tables)
        self._fresh = {name: self._lazy(name, table) for name, table in tables.items()}
        self.host_values.forget()  # a query's start or end: the connection may have changed

    def _lazy(self, name: str, rows: pa.Table) -> pl.LazyFrame:
        # Decimals widened in the plan: only the columns a partial reads, on its engine.
        kept = [c for c in rows.column_names if (name, c) not in self.unloaded]
        return widen_decimals(lowercase_names(self._import(name, rows.select(kept)).lazy()))

    def _context(
        self,
        compiled: CompiledSplit,
        start: int,
        stop: int,
        rows: pa.Table | None = None,
        *,
        held: bool = False,
    ) -> pl.SQLContext[Any]:
        """The frames a partial runs over: the split table's rows ``[start, stop)`` (or
        ``rows``) as its placeholder, beside the tables held. A user's connection's table is
        read as it is now where no :meth:`fresh` rows stand for it (its frame holds none), and
        split rows there are a rowid range, as the host numbers them; ``held`` keeps to the
        frames held (planning, and the GPU's probe on no rows)."""
        self._ready(self._tables_read(compiled))
        split = compiled.plan.split_table or ""
        # Held frames alone while planning: rows given by fresh() belong to the query running.
        frames = dict(self.frames) if held else {**self.frames, **self._fresh}
        if not held and self._live and compiled.partial is not None:
            read = self.tables_read(compiled)
            for name in sorted(read & self._live.keys() - self._fresh.keys()):
                frames[name] = self._lazy(name, arrow_for_device(name, self._live[name], self))
        if rows is not None:
            frames[PLACEHOLDER] = self._lazy(split, rows)
        elif split in self._live and not held:
            columns = self.frames[split].collect_schema().names()
            if compiled.columns_read:  # worked out (strategies.columns_read): only those
                used = compiled.columns_read.get(split, set())
                columns = [c for c in columns if c.lower() in used] or columns[:1]
            frames[PLACEHOLDER] = self._lazy(
                split, self._live[split].rowid_range(columns, start, stop)
            )
        else:
            frames[PLACEHOLDER] = frames[split].slice(start, stop - start)
        frames |= self.host_values.frames(self.sql_for(compiled), held=held)
        return pl.SQLContext(frames=frames)

    def polars_plan(self, compiled: CompiledSplit) -> str:
        """Polars' optimized plan of the partial over the frames held (what the GPU engine is
        given to translate; ``list.contains`` there is a node it has no handler for)."""
        frame = self._context(compiled, 0, 0, held=True).execute(self.sql_for(compiled))
        return str(frame.lazy().explain())

    def sql_for(self, compiled: CompiledSplit) -> str:
        text = compiled.arm_sql.get(self._sql_key)
        if text is None:
            self._ready(self._tables_read(compiled))
            partial, types, stored = self.host_values.rewrite(
                compiled,
                self.types,
                self.stored_types,
                lambda query: self._runs_alone(compiled, query),
            )
            bounds = DataBoundsOf(self, compiled.plan.split_table or "")
            text = self._translate(compiled, partial, types, stored, bounds)
            bounds.remember(compiled, self._sql_key)
            compiled.arm_sql[self._sql_key] = text
        return text

    def _translate(
        self,
        compiled: CompiledSplit,
        partial: exp.Expr | None,
        types: dict[str, dict[str, str]],
        stored: dict[str, dict[str, str]],
        bounds: DataBoundsOf | None = None,
    ) -> str:
        split = compiled.plan.split_table or ""
        bounds = bounds if bounds is not None else DataBoundsOf(self, split)
        return _sql.polars_sql(
            compiled,
            types,
            stored,
            lambda t, c: self._ascii_only(split if t == PLACEHOLDER else t, c),
            lambda t, c: self._plain_years(split if t == PLACEHOLDER else t, c),
            partial,
            nan_free=bounds.nan_free,
            bounds=bounds,
            exact_conversions=self.exact_conversions,
            checked_casts=self.checked_casts,
            exact_math=self.exact_math,
            nan_ordered=self.nan_ordered,
        )

    def tables_read(self, compiled: CompiledSplit) -> set[str]:
        """The names of the tables this arm's SQL for ``compiled`` reads: not those read only
        by what the host computes for it (``live.fresh_copies`` copies no rows of those)."""
        assert compiled.partial is not None
        try:
            found = polars_joins.tables_in(self.sql_for(compiled))
        except (SqlError, SqlglotError):  # not translated: the partial's tables
            found = None
        if found is None:
            return {table.name.lower() for table in compiled.partial.find_all(exp.Table)}
        return found

    def _runs_alone(self, compiled: CompiledSplit, query: exp.Query) -> bool:
        """Whether this arm runs ``query``, a subquery of the partial over whole tables, by
        itself (else the host may compute it: ``polars_host_tables``): it translates, Polars
        plans it (the GPU engine runs it, as :meth:`probe` runs the partial), and its joins
        pass :meth:`_joins_refusal`."""
        try:
            text = self._translate(compiled, query, self.types, self.stored_types)
            frame = pl.SQLContext(frames=dict(self.frames)).execute(text)
            frame.collect_schema()
            if self.probe_runs:
                collect(frame.lazy(), self.collect_engine)
        except (Exception, pl.exceptions.PanicException):  # noqa: BLE001 - any is a "no"
            return False
        return self._joins_refusal(text, compiled.plan.split_table or "") is None

    def refusal(self, compiled: CompiledSplit) -> str | None:
        """Why Polars cannot run this partial (it fails to plan, or needs more decimal digits,
        or its per-arm top-k orders values Polars does not order as DuckDB does)."""
        self._ready(self._tables_read(compiled))
        order = compiled.partial.args.get("order") if compiled.partial is not None else None
        if order is not None and compiled.partial_schema is not None:
            for ordered in order.expressions:
                name = ordered.this.name if isinstance(ordered.this, exp.Column) else ""
                index = compiled.partial_schema.get_field_index(name) if name else -1
                kind = compiled.partial_schema.field(index).type if index >= 0 else None
                if kind is None or pa.types.is_nested(kind) or pa.types.is_dictionary(kind):
                    return (
                        f"{self.name} arm: its top-k orders by {ordered.this.sql()}, which "
                        "Polars does not order as DuckDB does"
                    )
        for column, type_name in zip(compiled.partial_columns, compiled.partial_types, strict=True):
            match = _sql.DECIMAL_TYPE.search(type_name)
            if match and int(match.group(2)) > _sql.DECIMAL_SCALE:
                return (
                    f"{self.name} arm: partial column {column} is {type_name}, finer than the "
                    f"{_sql.DECIMAL_SCALE} decimal digits the Polars arm computes exactly"
                )
        unloaded = self._unloaded_read(compiled)
        if unloaded is not None:
            return unloaded
        if compiled.partial is not None:
            for name in self._tables_read(compiled):
                if name in self.unreadable:
                    return f"{self.name} arm cannot read table {name}: {self.unreadable[name]}"
                if name in self.frames and not self.types.get(name):
                    return (
                        f"{self.name} arm: no column of table {name} has a type its SQL "
                        "translation knows (lists, structs and maps have none there)"
                    )
        try:
            text = self.sql_for(compiled)
            frame = self._context(compiled, 0, 0, held=True).execute(text)
            frame.collect_schema()
            # Polars' optimizer too (under a millisecond): it panics on some plans it resolves
            # (a correlated inequality beside a CROSS JOIN: "matches!(options.args.how,
            # JoinType::Cross)"), which would otherwise fail the arm as it runs.
            frame.lazy().explain()
        except (
            SqlglotError,
            pl.exceptions.PolarsError,
            pl.exceptions.PanicException,  # a Rust panic, no Exception (INTERVAL '1.5 days')
            SqlError,
        ) as exc:
            return f"{self.name} arm cannot run this query's partial: {_first_line(exc)}"
        joins = self._joins_refusal(text, compiled.plan.split_table or "")
        if joins is not None:
            return joins
        if self.probe_runs:
            try:
                self.probe(compiled)
            # (A Rust panic is no Exception: Polars' streaming engine asserted on an empty
            # slice of arrival_order.test's window query on the CPU.)
            except (Exception, pl.exceptions.PanicException) as exc:  # noqa: BLE001 - a "no"
                text = _first_line(exc)
                if UNTRANSLATED in text:  # (the stand-in's translator: Polars wraps its error)
                    return f"{self.name} arm: {text[text.index(UNTRANSLATED) :]}"
                return f"{self.name} arm failed on an empty slice of this partial: {text}"
        return None

    def probe(self, compiled: CompiledSplit) -> pa.Table:
        """The partial over no rows of the split table and the frames this arm holds (a
        connection's tables none): what the GPU engine cannot run fails here."""
        return self._collect(compiled, self._context(compiled, 0, 0, held=True))

    def run_partial(self, compiled: CompiledSplit, start: int, stop: int) -> pa.Table:
        return self._collect(compiled, self._context(compiled, start, stop))

    def run_partial_rows(self, compiled: CompiledSplit, rows: pa.Table) -> pa.Table:
        """The partial over ``rows``, the split table's rows given as Arrow (a chunk)."""
        return self._collect(compiled, self._context(compiled, 0, 0, rows))

    def _unloaded_read(self, compiled: CompiledSplit) -> str | None:
        """Why the partial cannot run here: it reads a column left out of Polars, or None."""
        if not self.unloaded or compiled.partial is None:
            return None
        read = {c.name.translate(ASCII_LOWER) for c in compiled.partial.find_all(exp.Column)}
        tables = set(self._tables_read(compiled))  # (not another table's column of the name)
        missing = sorted(
            f"{t}.{c} ({kind})"
            for (t, c), kind in list(self.unloaded.items())
            if t.lower() in tables and c.translate(ASCII_LOWER) in read
        )
        if not missing:
            return None
        return f"{self.name} arm could not load column {', '.join(missing)} into Polars"

    def _collect(self, compiled: CompiledSplit, context: pl.SQLContext[Any]) -> pa.Table:
        # Rows read as the partial runs (a user's connection's) may hold what planning's did
        # not: an arm failure, the host then answers unsplit.
        unloaded = self._unloaded_read(compiled)
        if unloaded is not None:
            raise SqlError(unloaded)
        frame = context.execute(self.sql_for(compiled))
        check_live_bounds(compiled, self._sql_key, context, self.name)
        result = collect(frame.lazy(), self.collect_engine)
        # Arrow has no 128-bit integer (Polars exports one as '_pli128', which pyarrow cannot
        # read); DuckDB gives a HUGEINT to Arrow as a DECIMAL(38, 0), and so does this.
        wide = [n for n, t in result.schema.items() if t in (pl.Int128, pl.UInt128)]
        if wide:
            result = result.with_columns(pl.col(wide).cast(pl.Decimal(38, 0)))
        return cast_partial(result.to_arrow(), compiled.partial_schema, self.name)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


__all__ = ["PolarsArm", "gpu_available"]
